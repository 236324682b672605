// all_gather+matmul and matmul+reduce_scatter with the communication
// overlapped with the GEMM, by decomposition: the rows are split into one
// chunk per rank and moved around a ring; the GEMM of chunk i runs on this
// thread while the comm thread moves chunk i+1. The results equal the
// unfused ops' (the reduce_scatter sums in ring order).
//
// BRT_MPI_TRACE=1 prints, per ring step, when its GEMM started and ended and
// when its transfer landed (microseconds from the op's start) on stderr.
#include <cstdio>
#include <cstdlib>
#include <oneapi/dnnl/dnnl.hpp>

#include "kernels.h"

namespace brt::mpi {
namespace {

bool Tracing() {
  static const bool on = std::getenv("BRT_MPI_TRACE") != nullptr;
  return on;
}

double Micros(Clock::time_point from) {
  return std::chrono::duration<double, std::micro>(Clock::now() - from).count();
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
  }
  void Run(const float* lhs, const float* rhs, float* out) const {
    using dnnl::memory;
    dnnl::stream stream(Engine());
    memory src(src_, Engine(), const_cast<float*>(lhs));
    memory wei(wei_, Engine(), const_cast<float*>(rhs));
    memory dst(dst_, Engine(), out);
    prim_.execute(stream, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    stream.wait();
  }

 private:
  static const dnnl::engine& Engine() {
    static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    return engine;
  }
  dnnl::memory::desc src_, wei_, dst_;
  dnnl::matmul prim_;
};

// lhs [rows..., K] x rhs [K, N] (or [N, K]): the shapes both fused ops take.
struct MatmulShape {
  int64_t rows = 1, k = 0, n = 0;
  bool rhs_transposed = false;
};

MatmulShape PlanMatmul(const OpInfo& op) {
  op.Require(op.in[0].dtype == BRT_DTYPE_F32 && op.in[1].dtype == BRT_DTYPE_F32 &&
                 op.out[0].dtype == BRT_DTYPE_F32,
             "takes f32 only");
  const int lrank = op.in[0].rank();
  op.Require(lrank >= 2 && op.in[1].rank() == 2, "lhs must have rank >= 2 and rhs rank 2");
  const auto lc = op.Ints("lhs_contracting_dimensions");
  const auto rc = op.Ints("rhs_contracting_dimensions");
  op.Require(lc.size() == 1 && lc[0] == lrank - 1 && rc.size() == 1 && (rc[0] == 0 || rc[0] == 1),
             "contracts other than the lhs's last dimension with one rhs dimension");
  MatmulShape s;
  s.rhs_transposed = rc[0] == 1;
  s.k = op.in[0].dims.back();
  s.n = op.in[1].dims[s.rhs_transposed ? 0 : 1];
  op.Require(op.in[1].dims[rc[0]] == s.k, "contraction sizes differ");
  for (int d = 0; d < lrank - 1; ++d) s.rows *= op.in[0].dims[d];
  return s;
}

class AllGatherMatmul final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    op.Require(op.Int("all_gather_dim") == 0, "gathers along a dimension other than 0");
    shape_ = PlanMatmul(op);
    std::vector<int64_t> expect(op.in[0].dims.begin(), op.in[0].dims.end() - 1);
    expect[0] *= desc.comm_size;
    expect.push_back(shape_.n);
    op.Require(op.out[0].dims == expect,
               "result shape " + FormatDims(op.out[0].dims) + " is not " + FormatDims(expect));
    gemm_.Prepare(shape_.rows, shape_.k, shape_.n, shape_.rhs_transposed);
  }
  size_t ScratchBytes() const override {
    return static_cast<size_t>(shape_.rows * shape_.k) * sizeof(float);
  }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const int n = c->size, r = c->rank;
    const float* rhs = static_cast<const float*>(buffers[1]);
    float* out = static_cast<float*>(buffers[2]);
    const float* cur = static_cast<const float*>(buffers[0]);
    float* next = reinterpret_cast<float*>(s.a.data());
    float* spare = reinterpret_cast<float*>(s.b.data());
    const int bytes = static_cast<int>(ScratchBytes());
    const auto start = Clock::now();
    for (int step = 0; step < n; ++step) {
      const int block = (r - step + n) % n;
      const bool more = step + 1 < n;
      if (more) {
        const void* send = cur;
        void* recv = next;
        s.transfer.comm = c;
        s.transfer.what = "all_gather_matmul ring step " + std::to_string(step);
        s.transfer.wire_bytes = static_cast<size_t>(bytes);
        s.transfer.post = [=](std::vector<MPI_Request>& req) {
          req.resize(2);
          MPI_Irecv(recv, bytes, MPI_BYTE, (r - 1 + n) % n, 1, c->comm, &req[0]);
          MPI_Isend(send, bytes, MPI_BYTE, (r + 1) % n, 1, c->comm, &req[1]);
        };
        Engine::Get().Start(s.transfer);
      }
      const double gemm_start = Micros(start);
      gemm_.Run(cur, rhs, out + block * shape_.rows * shape_.n);
      const double gemm_end = Micros(start);
      if (more) WaitTransfer(s.transfer);
      if (Tracing())
        std::fprintf(stderr,
                     "brt-trace rank=%d op=all_gather_matmul step=%d gemm_start_us=%.1f "
                     "gemm_end_us=%.1f landed_us=%.1f\n",
                     r, step, gemm_start, gemm_end, more ? Micros(start) : gemm_end);
      if (more) {
        cur = next;
        std::swap(next, spare);
      }
    }
  }

 private:
  MatmulShape shape_;
  ChunkGemm gemm_;
};

class MatmulReduceScatter final : public CollectiveKernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    op.Require(op.Int("scatter_dimension") == 0, "scatters along a dimension other than 0");
    shape_ = PlanMatmul(op);
    op.Require(op.in[0].dims[0] % desc.comm_size == 0,
               "dimension 0 does not split over " + std::to_string(desc.comm_size) + " ranks");
    std::vector<int64_t> expect(op.in[0].dims.begin(), op.in[0].dims.end() - 1);
    expect[0] /= desc.comm_size;
    expect.push_back(shape_.n);
    op.Require(op.out[0].dims == expect,
               "result shape " + FormatDims(op.out[0].dims) + " is not " + FormatDims(expect));
    block_rows_ = shape_.rows / desc.comm_size;
    gemm_.Prepare(block_rows_, shape_.k, shape_.n, shape_.rhs_transposed);
  }
  size_t ScratchBytes() const override {
    return static_cast<size_t>(block_rows_ * shape_.n) * sizeof(float);
  }
  void Run(void* const* buffers, Scratch& s) const override {
    const Comm* c = comm_;
    const int n = c->size, r = c->rank;
    const float* lhs = static_cast<const float*>(buffers[0]);
    const float* rhs = static_cast<const float*>(buffers[1]);
    float* out = static_cast<float*>(buffers[2]);
    const int64_t block_elems = block_rows_ * shape_.n;
    auto rows_of = [&](int block) { return lhs + block * block_rows_ * shape_.k; };
    if (n == 1) return gemm_.Run(lhs, rhs, out);
    float* acc = reinterpret_cast<float*>(s.a.data());
    float* recv = reinterpret_cast<float*>(s.b.data());
    float* part = reinterpret_cast<float*>(s.c.data());
    const int bytes = static_cast<int>(ScratchBytes());
    const auto start = Clock::now();
    auto post = [&](int step) {
      s.transfer.comm = c;
      s.transfer.what = "matmul_reduce_scatter ring step " + std::to_string(step);
      s.transfer.wire_bytes = static_cast<size_t>(bytes);
      const void* send = acc;
      void* into = recv;
      s.transfer.post = [=](std::vector<MPI_Request>& req) {
        req.resize(2);
        MPI_Irecv(into, bytes, MPI_BYTE, (r - 1 + n) % n, 2, c->comm, &req[0]);
        MPI_Isend(send, bytes, MPI_BYTE, (r + 1) % n, 2, c->comm, &req[1]);
      };
      Engine::Get().Start(s.transfer);
    };
    double gemm_start = Micros(start);
    gemm_.Run(rows_of((r - 1 + n) % n), rhs, acc);
    double gemm_end = Micros(start);
    post(0);
    for (int step = 1; step < n; ++step) {
      const int block = ((r - 1 - step) % n + n) % n;
      const double prev_start = gemm_start, prev_end = gemm_end;
      gemm_start = Micros(start);
      gemm_.Run(rows_of(block), rhs, part);
      gemm_end = Micros(start);
      WaitTransfer(s.transfer);
      if (Tracing())
        std::fprintf(stderr,
                     "brt-trace rank=%d op=matmul_reduce_scatter step=%d gemm_start_us=%.1f "
                     "gemm_end_us=%.1f landed_us=%.1f\n",
                     r, step - 1, prev_start, prev_end, Micros(start));
      float* dst = step + 1 == n ? out : acc;
      for (int64_t i = 0; i < block_elems; ++i) dst[i] = recv[i] + part[i];
      if (step + 1 < n) post(step);
    }
  }

 private:
  MatmulShape shape_;
  int64_t block_rows_ = 0;
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
