// all_gather+matmul and matmul+reduce_scatter with the communication
// overlapped with the GEMM, by decomposition: the rows are split into one
// chunk per rank and moved around a ring; the GEMM of chunk i runs on this
// thread while the comm thread moves chunk i+1. The results equal the
// unfused ops' (the reduce_scatter sums in ring order).
//
// BRT_MPI_TRACE=1 prints on stderr when each piece's GEMM started and ended
// and when each piece sent landed (microseconds from the op's start).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels.h"
#include "ops/op_plans.h"

namespace brt::mpi {
namespace {

bool Tracing() {
  static const bool on = std::getenv("BRT_MPI_TRACE") != nullptr;
  return on;
}

// One f32 GEMM shape, run on different row blocks: [rows, K] x [K, N] ->
// [rows, N], all row-major except the rhs, which may be given as [N, K].
class ChunkGemm {
 public:
  void Prepare(int64_t rows, int64_t k, int64_t n, bool rhs_transposed) {
    using dnnl::memory;
    src_ = memory::desc({rows, k}, memory::data_type::f32, {k, 1});
    wei_ = memory::desc({k, n}, memory::data_type::f32,
                        rhs_transposed ? memory::dims{1, k} : memory::dims{n, 1});
    dst_ = memory::desc({rows, n}, memory::data_type::f32, {n, 1});
    prim_ = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), src_, wei_, dst_));
    dnnl::post_ops sum;
    sum.append_sum(1.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(sum);
    accumulate_ = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), src_, wei_, dst_, attr));
  }
  // out = lhs x rhs, or out += lhs x rhs when accumulating.
  void Run(const float* lhs, const float* rhs, float* out, bool accumulate = false) const {
    using dnnl::memory;
    dnnl::stream stream(Engine());
    memory src(src_, Engine(), const_cast<float*>(lhs));
    memory wei(wei_, Engine(), const_cast<float*>(rhs));
    memory dst(dst_, Engine(), out);
    (accumulate ? accumulate_ : prim_)
        .execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }

 private:
  static const dnnl::engine& Engine() {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
  }
  dnnl::memory::desc src_, wei_, dst_;
  dnnl::matmul prim_, accumulate_;
};

// The fused ops' plan, for f32 (oneDNN's f32 GEMM).
CollectiveMatmulPlan PlanF32(const OpInfo& op, int64_t group_size) {
  op.Require(op.in[0].dtype == BRT_DTYPE_F32, "takes f32 only");
  return PlanCollectiveMatmul(op, group_size);
}

// A chunk's rows are moved and multiplied in pieces, so the GEMM of one piece
// runs while the next lands: as many as divide the rows, up to kMaxPieces,
// of at least `min_rows` rows each (smaller GEMMs lose more than the
// pipeline gains: bench/results/2026-11-23-overlap-mpi-cpu.md).
constexpr int64_t kMinPieceRows = 64;
int Pieces(int64_t rows, int64_t min_rows) {
  for (int p = kMaxPieces; p > 1; p /= 2)
    if (rows % p == 0 && rows / p >= min_rows) return p;
  return 1;
}

// Sends `send` to the next rank of the ring and receives `recv` from the
// previous one.
void StartRingStep(Transfer& t, const Comm* c, const void* send, void* recv, size_t bytes, int tag,
                   const char* what) {
  const int n = c->size, r = c->rank, count = static_cast<int>(bytes);
  t.comm = c;
  t.what = what;
  t.wire_bytes = bytes;
  t.post = [=](std::vector<MPI_Request>& req) {
    req.resize(2);
    MPI_Irecv(recv, count, MPI_BYTE, (r - 1 + n) % n, tag, c->comm, &req[0]);
    MPI_Isend(send, count, MPI_BYTE, (r + 1) % n, tag, c->comm, &req[1]);
  };
  Engine::Get().Start(t);
}

// BRT_MPI_TRACE lines: a piece's GEMM, and when a piece sent in a step landed.
void TraceGemm(const char* op, int rank, int step, int piece, Clock::time_point start,
               Clock::time_point gemm_start) {
  if (!Tracing()) return;
  auto us = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - start).count();
  };
  std::fprintf(stderr,
               "brt-trace rank=%d op=%s event=gemm step=%d piece=%d start_us=%.1f end_us=%.1f\n",
               rank, op, step, piece, us(gemm_start), us(Clock::now()));
}

void TraceLanded(const char* op, int rank, int step, int piece, Clock::time_point start,
                 const Transfer& t) {
  if (!Tracing()) return;
  std::fprintf(stderr, "brt-trace rank=%d op=%s event=landed step=%d piece=%d at_us=%.1f\n", rank,
               op, step, piece,
               std::chrono::duration<double, std::micro>(t.completed - start).count());
}

class AllGatherMatmul final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    shape_ = PlanF32(op, desc.comm_size);
    pieces_ = Pieces(shape_.rows, kMinPieceRows);
    gemm_.Prepare(shape_.rows / pieces_, shape_.k, shape_.n, shape_.rhs_transposed);
  }
  size_t ScratchBytes() const override {
    return static_cast<size_t>(shape_.rows * shape_.k) * sizeof(float);
  }
  // Step s multiplies the chunk of rank r - s, which arrived during step
  // s - 1, piece by piece; each piece goes on to rank r + 1 as soon as it
  // has landed, while the GEMM works on it.
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const int n = c->size, r = c->rank;
    const float* rhs = static_cast<const float*>(buffers[1]);
    float* out = static_cast<float*>(buffers[2]);
    const float* cur = static_cast<const float*>(buffers[0]);
    float* next = reinterpret_cast<float*>(s.a.data());
    float* spare = reinterpret_cast<float*>(s.b.data());
    const int64_t piece_rows = shape_.rows / pieces_;
    const int64_t piece_elems = piece_rows * shape_.k;
    const auto start = Clock::now();
    for (int step = 0; step < n; ++step) {
      const int block = (r - step + n) % n;
      Transfer* now = s.pieces[step % 2];
      Transfer* before = s.pieces[(step + 1) % 2];
      for (int p = 0; p < pieces_; ++p) {
        if (step > 0) {
          WaitTransfer(before[p]);  // piece p of `cur` has landed
          TraceLanded("all_gather_matmul", r, step - 1, p, start, before[p]);
        }
        if (step + 1 < n)
          StartRingStep(now[p], c, cur + p * piece_elems, next + p * piece_elems,
                        piece_elems * sizeof(float), 16 + p, "all_gather_matmul ring step");
        const auto gemm_start = Clock::now();
        gemm_.Run(cur + p * piece_elems, rhs,
                  out + (block * shape_.rows + p * piece_rows) * shape_.n);
        TraceGemm("all_gather_matmul", r, step, p, start, gemm_start);
      }
      cur = next;
      std::swap(next, spare);
    }
  }

 private:
  CollectiveMatmulPlan shape_;
  int pieces_ = 1;
  ChunkGemm gemm_;
};

class MatmulReduceScatter final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    shape_ = PlanF32(op, desc.comm_size);
    block_rows_ = shape_.block_rows;
    pieces_ = Pieces(block_rows_, kMinPieceRows);
    gemm_.Prepare(block_rows_ / pieces_, shape_.k, shape_.n, shape_.rhs_transposed);
  }
  size_t ScratchBytes() const override {
    return static_cast<size_t>(block_rows_ * shape_.n) * sizeof(float);
  }
  // Step s adds this rank's product of block r - 1 - s to the running sum of
  // that block that arrived from rank r - 1 (the GEMM accumulates into it,
  // piece by piece as pieces land) and passes it on to rank r + 1; after
  // n - 1 steps block r is complete, received straight into the output.
  // Two block buffers alternate: one is sent while the next sum lands in
  // the other.
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const int n = c->size, r = c->rank;
    const float* lhs = static_cast<const float*>(buffers[0]);
    const float* rhs = static_cast<const float*>(buffers[1]);
    float* out = static_cast<float*>(buffers[2]);
    const int64_t piece_rows = block_rows_ / pieces_;
    const int64_t piece_elems = piece_rows * shape_.n;
    float* sums[2] = {reinterpret_cast<float*>(s.a.data()), reinterpret_cast<float*>(s.b.data())};
    // Where step s's running sum lives (it is received there during s - 1).
    auto sum_of = [&](int step) { return step + 1 == n ? out : sums[step % 2]; };
    const auto start = Clock::now();
    for (int step = 0; step < n; ++step) {
      const int block = ((r - 1 - step) % n + n) % n;
      Transfer* now = s.pieces[step % 2];
      Transfer* before = s.pieces[(step + 1) % 2];
      for (int p = 0; p < pieces_; ++p) {
        const float* rows = lhs + (block * block_rows_ + p * piece_rows) * shape_.k;
        float* sum = sum_of(step) + p * piece_elems;
        if (step > 0) {
          WaitTransfer(before[p]);  // the running sum's piece p has landed
          TraceLanded("matmul_reduce_scatter", r, step - 1, p, start, before[p]);
        }
        const auto gemm_start = Clock::now();
        gemm_.Run(rows, rhs, sum, /*accumulate=*/step > 0);
        TraceGemm("matmul_reduce_scatter", r, step, p, start, gemm_start);
        if (step + 1 < n)
          StartRingStep(now[p], c, sum, sum_of(step + 1) + p * piece_elems,
                        piece_elems * sizeof(float), 48 + p, "matmul_reduce_scatter ring step");
      }
    }
  }

 private:
  CollectiveMatmulPlan shape_;
  int64_t block_rows_ = 0;
  int pieces_ = 1;
  ChunkGemm gemm_;
};

}  // namespace

void RegisterOverlapped(std::vector<KernelDef>& defs) {
  defs.emplace_back("brt.all_gather_matmul", std::vector<int32_t>{BRT_DTYPE_F32},
                    &Make<AllGatherMatmul>);
  defs.emplace_back("brt.matmul_reduce_scatter", std::vector<int32_t>{BRT_DTYPE_F32},
                    &Make<MatmulReduceScatter>);
}

}  // namespace brt::mpi
