// StableHLO collectives over MPI: all_reduce, all_gather, reduce_scatter,
// all_to_all, collective_permute and partition_id. Each posts non-blocking
// MPI calls to the engine's comm thread and waits for them.
#include <cstring>

#include "kernels.h"
#include "ops/op_plans.h"
#include "ops/small_floats.h"

namespace brt::mpi {
namespace {

const std::vector<int32_t> kTypes = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64,
                                     BRT_DTYPE_I8,  BRT_DTYPE_I32, BRT_DTYPE_I64,  BRT_DTYPE_U8,
                                     BRT_DTYPE_U32, BRT_DTYPE_U64};

// 16-bit floats reduce in float, element by element.
template <typename T, typename F>
void Reduce16(void* in, void* inout, int* len, F f) {
  auto* a = static_cast<const T*>(in);
  auto* b = static_cast<T*>(inout);
  for (int i = 0; i < *len; ++i) b[i] = T(f(static_cast<float>(a[i]), static_cast<float>(b[i])));
}

template <typename T>
struct Ops16 {
  MPI_Op sum, prod, max, min;
  Ops16() {
    MPI_Op_create(
        [](void* a, void* b, int* n, MPI_Datatype*) {
          Reduce16<T>(a, b, n, [](float x, float y) { return x + y; });
        },
        1, &sum);
    MPI_Op_create(
        [](void* a, void* b, int* n, MPI_Datatype*) {
          Reduce16<T>(a, b, n, [](float x, float y) { return x * y; });
        },
        1, &prod);
    MPI_Op_create(
        [](void* a, void* b, int* n, MPI_Datatype*) {
          Reduce16<T>(a, b, n, [](float x, float y) { return x > y || x != x ? x : y; });
        },
        1, &max);
    MPI_Op_create(
        [](void* a, void* b, int* n, MPI_Datatype*) {
          Reduce16<T>(a, b, n, [](float x, float y) { return x < y || x != x ? x : y; });
        },
        1, &min);
  }
};

// Made on first use, which is on the comm thread (inside a post).
template <typename T>
const Ops16<T>& Ops16For() {
  static const Ops16<T> ops;
  return ops;
}

MPI_Datatype Type16() {
  static MPI_Datatype t = [] {
    MPI_Datatype d;
    MPI_Type_contiguous(2, MPI_BYTE, &d);
    MPI_Type_commit(&d);
    return d;
  }();
  return t;
}

class AllReduce final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc&) override {
    reducer_ = PlanAllReduce(op);
    dtype_ = op.in[0].dtype;
    count_ = op.in[0].numel;
    bytes_ = op.in[0].bytes();
  }
  void Run(void* const* buffers, Scratch& s) const override {
    const void* in = buffers[0];
    void* out = buffers[1];
    const Comm* c = comm_;
    const int64_t n = count_;
    const int32_t dtype = dtype_;
    const std::string reducer = reducer_;
    s.transfer.comm = c;
    s.transfer.what = "all_reduce";
    s.transfer.wire_bytes = c->size > 1 ? 2 * bytes_ * (c->size - 1) / c->size : 0;
    s.transfer.post = [=](std::vector<MPI_Request>& r) {
      r.emplace_back();
      MPI_Iallreduce(in == out ? MPI_IN_PLACE : in, out, static_cast<int>(n), MpiType(dtype),
                     MpiReduceOp(reducer, dtype), c->comm, &r.back());
    };
    RunTransfer(s.transfer);
  }

 private:
  std::string reducer_;
  int32_t dtype_ = 0;
  int64_t count_ = 0;
  size_t bytes_ = 0;
};

class AllGather final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const AllGatherPlan p = PlanAllGather(op, desc.comm_size);
    outer_ = p.outer;
    local_bytes_ = p.local_bytes;
  }
  size_t ScratchBytes() const override { return outer_ > 1 ? local_bytes_ * comm_->size : 0; }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const void* in = buffers[0];
    char* out = static_cast<char*>(buffers[1]);
    char* gathered = outer_ > 1 ? s.a.data() : out;
    const int bytes = static_cast<int>(local_bytes_);
    s.transfer.comm = c;
    s.transfer.what = "all_gather";
    s.transfer.wire_bytes = local_bytes_ * (c->size - 1);
    s.transfer.post = [=](std::vector<MPI_Request>& r) {
      r.emplace_back();
      MPI_Iallgather(in, bytes, MPI_BYTE, gathered, bytes, MPI_BYTE, c->comm, &r.back());
    };
    RunTransfer(s.transfer);
    if (outer_ > 1)
      UnpackBlocks(out, gathered, outer_, c->size, local_bytes_ / static_cast<size_t>(outer_));
  }

 private:
  int64_t outer_ = 1;
  size_t local_bytes_ = 0;
};

class ReduceScatter final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    ReduceScatterPlan p = PlanReduceScatter(op, desc.comm_size);
    reducer_ = std::move(p.reducer);
    dtype_ = op.in[0].dtype;
    outer_ = p.outer;
    out_count_ = op.out[0].numel;
    in_bytes_ = op.in[0].bytes();
  }
  size_t ScratchBytes() const override { return outer_ > 1 ? in_bytes_ : 0; }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const char* in = static_cast<const char*>(buffers[0]);
    void* out = buffers[1];
    if (outer_ > 1) {
      PackBlocks(s.a.data(), in, outer_, c->size, in_bytes_ / outer_ / c->size);
      in = s.a.data();
    }
    const int count = static_cast<int>(out_count_);
    const int32_t dtype = dtype_;
    const std::string reducer = reducer_;
    s.transfer.comm = c;
    s.transfer.what = "reduce_scatter";
    s.transfer.wire_bytes = in_bytes_ * (c->size - 1) / c->size;
    s.transfer.post = [=](std::vector<MPI_Request>& r) {
      r.emplace_back();
      MPI_Ireduce_scatter_block(in, out, count, MpiType(dtype), MpiReduceOp(reducer, dtype),
                                c->comm, &r.back());
    };
    RunTransfer(s.transfer);
  }

 private:
  std::string reducer_;
  int32_t dtype_ = 0;
  int64_t outer_ = 1, out_count_ = 0;
  size_t in_bytes_ = 0;
};

class AllToAll final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const AllToAllPlan p = PlanAllToAll(op, desc.comm_size);
    split_outer_ = p.split_outer;
    concat_outer_ = p.concat_outer;
    piece_bytes_ = p.piece_bytes;
  }
  size_t ScratchBytes() const override { return piece_bytes_ * comm_->size; }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const int n = c->size;
    PackBlocks(s.a.data(), static_cast<const char*>(buffers[0]), split_outer_, n,
               piece_bytes_ / split_outer_);
    const char* send = s.a.data();
    char* recv = s.b.data();
    const int bytes = static_cast<int>(piece_bytes_);
    s.transfer.comm = c;
    s.transfer.what = "all_to_all";
    s.transfer.wire_bytes = piece_bytes_ * (n - 1);
    s.transfer.post = [=](std::vector<MPI_Request>& r) {
      r.emplace_back();
      MPI_Ialltoall(send, bytes, MPI_BYTE, recv, bytes, MPI_BYTE, c->comm, &r.back());
    };
    RunTransfer(s.transfer);
    UnpackBlocks(static_cast<char*>(buffers[1]), recv, concat_outer_, n,
                 piece_bytes_ / concat_outer_);
  }

 private:
  int64_t split_outer_ = 1, concat_outer_ = 1;
  size_t piece_bytes_ = 0;
};

class CollectivePermute final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const PermutePlan p = PlanCollectivePermute(op, desc.world_rank, desc.world_size);
    from_ = p.from;
    to_ = p.to;
    bytes_ = op.in[0].bytes();
  }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const void* in = buffers[0];
    void* out = buffers[1];
    // A rank no one sends to gets zeros (StableHLO).
    if (from_ < 0) std::memset(out, 0, bytes_);
    if (from_ < 0 && to_ < 0) return;
    const int from = from_, to = to_, bytes = static_cast<int>(bytes_);
    s.transfer.comm = c;
    s.transfer.what = "collective_permute";
    s.transfer.wire_bytes = to_ >= 0 ? bytes_ : 0;
    s.transfer.post = [=](std::vector<MPI_Request>& r) {
      if (from >= 0) {
        r.emplace_back();
        MPI_Irecv(out, bytes, MPI_BYTE, from, 0, c->comm, &r.back());
      }
      if (to >= 0) {
        r.emplace_back();
        MPI_Isend(in, bytes, MPI_BYTE, to, 0, c->comm, &r.back());
      }
    };
    RunTransfer(s.transfer);
  }

 private:
  int from_ = -1, to_ = -1;
  size_t bytes_ = 0;
};

class PartitionId final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    id_ = PlanPartitionId(op, desc.world_rank);
  }
  void Run(void* const* buffers, Scratch&) const override {
    std::memcpy(buffers[0], &id_, sizeof(id_));
  }

 private:
  int32_t id_ = 0;
};

}  // namespace

MPI_Datatype MpiType(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return MPI_FLOAT;
    case BRT_DTYPE_F64:
      return MPI_DOUBLE;
    case BRT_DTYPE_F16:
    case BRT_DTYPE_BF16:
      return Type16();
    case BRT_DTYPE_I8:
      return MPI_INT8_T;
    case BRT_DTYPE_I32:
      return MPI_INT32_T;
    case BRT_DTYPE_I64:
      return MPI_INT64_T;
    case BRT_DTYPE_U8:
      return MPI_UINT8_T;
    case BRT_DTYPE_U32:
      return MPI_UINT32_T;
    case BRT_DTYPE_U64:
      return MPI_UINT64_T;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op MpiReduceOp(const std::string& reducer, int32_t dtype) {
  if (dtype == BRT_DTYPE_F16 || dtype == BRT_DTYPE_BF16) {
    auto pick = [&](const auto& ops) {
      return reducer == "add"   ? ops.sum
             : reducer == "mul" ? ops.prod
             : reducer == "max" ? ops.max
                                : ops.min;
    };
    return dtype == BRT_DTYPE_F16 ? pick(Ops16For<Half>()) : pick(Ops16For<BFloat16>());
  }
  return reducer == "add"   ? MPI_SUM
         : reducer == "mul" ? MPI_PROD
         : reducer == "max" ? MPI_MAX
                            : MPI_MIN;
}

void PackBlocks(char* dst, const char* src, int64_t outer, int64_t blocks, size_t chunk) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b)
      std::memcpy(dst + (b * outer + o) * chunk, src + (o * blocks + b) * chunk, chunk);
}

void UnpackBlocks(char* dst, const char* src, int64_t outer, int64_t blocks, size_t chunk) {
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t b = 0; b < blocks; ++b)
      std::memcpy(dst + (o * blocks + b) * chunk, src + (b * outer + o) * chunk, chunk);
}

void CollectiveKernel::RunTransfer(Transfer& t) {
  Engine::Get().Start(t);
  WaitTransfer(t);
}

void CollectiveKernel::WaitTransfer(Transfer& t) {
  std::string error = Engine::Get().Wait(t);
  if (!error.empty()) throw KernelError(error);
}

void RegisterCollectives(std::vector<KernelDef>& defs) {
  defs.emplace_back("all_reduce", kTypes, &Make<AllReduce>);
  defs.emplace_back("all_gather", kTypes, &Make<AllGather>);
  defs.emplace_back("reduce_scatter", kTypes, &Make<ReduceScatter>);
  defs.emplace_back("all_to_all", kTypes, &Make<AllToAll>);
  defs.emplace_back("collective_permute", kTypes, &Make<CollectivePermute>);
  defs.emplace_back("partition_id", std::vector<int32_t>{BRT_DTYPE_U32, BRT_DTYPE_I32},
                    &Make<PartitionId>);
}

}  // namespace brt::mpi
