// Op plans (see op_plans.h) for the collectives, shared by the mpi and nccl
// providers: the result shapes a group of ranks implies are checked here, so
// no provider moves more bytes than a buffer holds.
#include "ops/op_plans.h"

#include "ops/op_attrs.h"

namespace brt::ops {
namespace {

// The product of dims[0, end).
int64_t Outer(const std::vector<int64_t>& dims, int64_t end) {
  int64_t p = 1;
  for (int64_t i = 0; i < end; ++i) p *= dims[i];
  return p;
}

std::string PlanReducer(const OpInfo& op, const std::string& reducer) {
  op.Require(reducer == "add" || reducer == "mul" || reducer == "max" || reducer == "min",
             "reducer '" + reducer + "' is not add, mul, max or min");
  return reducer;
}

}  // namespace

std::string PlanAllReduce(const OpInfo& op) {
  op.RequireSameDTypes();
  op.Require(op.in[0].dims == op.out[0].dims, "result shape differs from the operand's");
  return PlanReducer(op, Decode<AllReduceAttrs>(op).reducer);
}

AllGatherPlan PlanAllGather(const OpInfo& op, int64_t group_size) {
  op.RequireSameDTypes();
  const int64_t dim = Decode<AllGatherAttrs>(op).all_gather_dim;
  op.Require(dim >= 0 && dim < op.in[0].rank(), "all_gather_dim out of range");
  std::vector<int64_t> expect = op.in[0].dims;
  expect[dim] = op.Mul(expect[dim], group_size);
  op.Require(expect == op.out[0].dims, "result shape " + FormatDims(op.out[0].dims) +
                                           " is not the operand's " + FormatDims(op.in[0].dims) +
                                           " gathered over " + std::to_string(group_size) +
                                           " ranks");
  return {Outer(op.in[0].dims, dim), op.in[0].bytes()};
}

ReduceScatterPlan PlanReduceScatter(const OpInfo& op, int64_t group_size) {
  op.RequireSameDTypes();
  const ReduceScatterAttrs attrs = Decode<ReduceScatterAttrs>(op);
  const int64_t dim = attrs.scatter_dimension;
  op.Require(dim >= 0 && dim < op.in[0].rank(), "scatter_dimension out of range");
  op.Require(op.in[0].dims[dim] % group_size == 0,
             "scatter dimension " + std::to_string(op.in[0].dims[dim]) + " does not split over " +
                 std::to_string(group_size) + " ranks");
  std::vector<int64_t> expect = op.in[0].dims;
  expect[dim] /= group_size;
  op.Require(expect == op.out[0].dims, "result shape " + FormatDims(op.out[0].dims) +
                                           " is not the operand's scattered over " +
                                           std::to_string(group_size) + " ranks");
  return {PlanReducer(op, attrs.reducer), Outer(op.in[0].dims, dim)};
}

AllToAllPlan PlanAllToAll(const OpInfo& op, int64_t group_size) {
  op.RequireSameDTypes();
  const AllToAllAttrs attrs = Decode<AllToAllAttrs>(op);
  const int64_t split = attrs.split_dimension, concat = attrs.concat_dimension;
  const int64_t count = attrs.split_count;
  const int rank = op.in[0].rank();
  op.Require(split >= 0 && split < rank && concat >= 0 && concat < rank,
             "split_dimension or concat_dimension out of range");
  op.Require(count == group_size, "split_count " + std::to_string(count) +
                                      " is not the group size " + std::to_string(group_size));
  op.Require(op.in[0].dims[split] % count == 0, "split dimension does not split evenly");
  std::vector<int64_t> piece = op.in[0].dims;
  piece[split] /= count;
  std::vector<int64_t> expect = piece;
  expect[concat] *= count;
  op.Require(expect == op.out[0].dims,
             "result shape " + FormatDims(op.out[0].dims) + " is not " + FormatDims(expect));
  AllToAllPlan p;
  p.split_outer = Outer(op.in[0].dims, split);
  p.concat_outer = Outer(piece, concat);
  p.piece_bytes = static_cast<size_t>(Outer(piece, rank)) * brt_dtype_size(op.in[0].dtype);
  return p;
}

PermutePlan PlanCollectivePermute(const OpInfo& op, int64_t rank, int64_t world_size) {
  op.RequireSameDTypes();
  op.Require(op.in[0].dims == op.out[0].dims, "result shape differs from the operand's");
  const std::vector<int64_t> pairs = Decode<CollectivePermuteAttrs>(op).source_target_pairs;
  op.Require(pairs.size() % 2 == 0, "source_target_pairs has an odd number of entries");
  PermutePlan p;
  for (size_t i = 0; i < pairs.size(); i += 2) {
    op.Require(
        pairs[i] >= 0 && pairs[i] < world_size && pairs[i + 1] >= 0 && pairs[i + 1] < world_size,
        "source_target_pairs names a rank outside the world of " + std::to_string(world_size));
    if (pairs[i] == rank)
      op.Require(p.to < 0, "this rank is a source twice"), p.to = static_cast<int>(pairs[i + 1]);
    if (pairs[i + 1] == rank)
      op.Require(p.from < 0, "this rank is a target twice"), p.from = static_cast<int>(pairs[i]);
  }
  return p;
}

int32_t PlanPartitionId(const OpInfo& op, int64_t rank) {
  // StableHLO's is ui32; executables from before brt had u32 hold i32.
  op.Require((op.out[0].dtype == BRT_DTYPE_U32 || op.out[0].dtype == BRT_DTYPE_I32) &&
                 op.out[0].numel == 1,
             "the result must be one u32");
  return static_cast<int32_t>(rank);
}

}  // namespace brt::ops
