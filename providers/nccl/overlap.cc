// all_gather+matmul and matmul+reduce_scatter on CUDA with the communication
// overlapped with the GEMM, by decomposition: one chunk of rows per rank
// moves around a ring (ncclSend/ncclRecv on the request's nccl stream)
// while the GEMM of the chunk that already landed runs on a second stream
// (cuBLASLt, RowGemm). Events order the two streams per chunk: the GEMM of
// chunk i waits for chunk i's arrival only, and the op's stream waits for
// the last GEMM, so what follows sees the finished result. Results equal
// the unfused ops' (the reduce_scatter sums in ring order).
#include <utility>

#include "kernels.h"
#include "ops/op_plans.h"
#include "row_gemm.h"

namespace brt::nccl {
namespace {

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;

DeviceMemory AllocateDevice(size_t bytes, const char* what) {
  void* p = nullptr;
  if (bytes) CheckCuda(cudaMalloc(&p, bytes), what);
  return DeviceMemory(p);
}

cudaEvent_t NewEvent() {
  cudaEvent_t e = nullptr;
  CheckCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
  return e;
}

// A request context's streams, events and memory for one overlapped op.
struct OverlapResources final : Resources {
  OverlapResources(size_t scratch_bytes, int chunks) {
    CheckCuda(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking), "cudaStreamCreate");
    for (int i = 0; i < chunks; ++i) landed.push_back(NewEvent()), computed.push_back(NewEvent());
    forked = NewEvent();
    joined = NewEvent();
    if (cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS)
      throw AbiError(BRT_ERROR_INTERNAL, "cublasLtCreate failed");
    workspace = AllocateDevice(RowGemm::kWorkspaceBytes, "the overlapped GEMM's workspace");
    scratch = AllocateDevice(scratch_bytes, "the overlapped op's chunk buffers");
  }
  ~OverlapResources() override {
    if (lt) cublasLtDestroy(lt);
    for (const auto* list : {&landed, &computed})
      for (cudaEvent_t e : *list) cudaEventDestroy(e);
    for (cudaEvent_t e : {forked, joined})
      if (e) cudaEventDestroy(e);
    if (compute) cudaStreamDestroy(compute);
  }
  // The GEMM stream starts after what the op's stream holds so far.
  void Fork(cudaStream_t stream) const {
    CheckCuda(cudaEventRecord(forked, stream), "cudaEventRecord");
    CheckCuda(cudaStreamWaitEvent(compute, forked, 0), "cudaStreamWaitEvent");
  }
  // The op's stream goes on after the last GEMM.
  void Join(cudaStream_t stream) const {
    CheckCuda(cudaEventRecord(joined, compute), "cudaEventRecord");
    CheckCuda(cudaStreamWaitEvent(stream, joined, 0), "cudaStreamWaitEvent");
  }
  char* chunk(size_t i, size_t bytes) const {
    return static_cast<char*>(scratch.get()) + i * bytes;
  }

  cudaStream_t compute = nullptr;
  cublasLtHandle_t lt = nullptr;
  // Per chunk: it landed (recorded on the op's stream); its GEMM finished
  // (recorded on the GEMM stream).
  std::vector<cudaEvent_t> landed, computed;
  cudaEvent_t forked = nullptr, joined = nullptr;
  DeviceMemory workspace, scratch;
};

// What both fused ops share: the plan, the chunk GEMM, the ring's peers.
class OverlappedMatmul : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    plan_ = PlanCollectiveMatmul(op, desc.comm_size);
    dtype_ = op.in[0].dtype;
    element_bytes_ = brt_dtype_size(dtype_);
    gemm_.Prepare(dtype_, plan_.block_rows, plan_.k, plan_.n, plan_.rhs_transposed);
  }

 protected:
  // Sends `send` to the next rank of the ring and receives `recv` from the
  // previous one.
  void RingStep(const void* send, void* recv, size_t elements, cudaStream_t stream) const {
    const int n = comm_->size, r = comm_->rank;
    const ncclDataType_t t = NcclType(dtype_);
    CheckNccl(ncclGroupStart(), "ncclGroupStart");
    CheckNccl(ncclSend(send, elements, t, (r + 1) % n, comm_->comm, stream), "ncclSend");
    CheckNccl(ncclRecv(recv, elements, t, (r - 1 + n) % n, comm_->comm, stream), "ncclRecv");
    CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  }
  CollectiveMatmulPlan plan_;
  int32_t dtype_ = 0;
  size_t element_bytes_ = 4;
  RowGemm gemm_;
};

class AllGatherMatmul final : public OverlappedMatmul {
 public:
  // Chunks that arrive: every rank's but this one's.
  std::unique_ptr<Resources> NewResources() const override {
    return std::make_unique<OverlapResources>((comm_->size - 1) * ChunkBytes(), comm_->size);
  }
  // Step s multiplies the chunk of rank r - s: this rank's own at step 0,
  // then the one that landed in step s - 1, while the ring forwards it.
  void Run(void* const* b, cudaStream_t stream, Resources* own) const override {
    const auto& res = *static_cast<OverlapResources*>(own);
    const int n = comm_->size, r = comm_->rank;
    const size_t out_block = plan_.block_rows * plan_.n * element_bytes_;
    res.Fork(stream);
    for (int step = 0; step < n; ++step) {
      const void* cur = step == 0 ? b[0] : res.chunk(step - 1, ChunkBytes());
      if (step + 1 < n) {
        RingStep(cur, res.chunk(step, ChunkBytes()), ChunkBytes() / element_bytes_, stream);
        CheckCuda(cudaEventRecord(res.landed[step], stream), "cudaEventRecord");
      }
      if (step > 0)
        CheckCuda(cudaStreamWaitEvent(res.compute, res.landed[step - 1], 0), "cudaStreamWaitEvent");
      const int block = (r - step + n) % n;
      gemm_.Run(res.lt, cur, b[1], static_cast<char*>(b[2]) + block * out_block,
                /*accumulate=*/false, res.workspace.get(), res.compute);
    }
    res.Join(stream);
  }

 private:
  size_t ChunkBytes() const { return plan_.block_rows * plan_.k * element_bytes_; }
};

class MatmulReduceScatter final : public OverlappedMatmul {
 public:
  // Two running sums alternate: one is sent while the next lands.
  std::unique_ptr<Resources> NewResources() const override {
    return std::make_unique<OverlapResources>(2 * SumBytes(), comm_->size);
  }
  // Step s adds this rank's product of block r - 1 - s to the running sum
  // of that block that arrived from rank r - 1 (the GEMM accumulates into
  // it) and sends it on to rank r + 1; after n - 1 steps block r is
  // complete, received straight into the result.
  void Run(void* const* b, cudaStream_t stream, Resources* own) const override {
    const auto& res = *static_cast<OverlapResources*>(own);
    const int n = comm_->size, r = comm_->rank;
    auto sum_of = [&](int step) {
      return step + 1 == n ? b[2] : static_cast<void*>(res.chunk(step % 2, SumBytes()));
    };
    const size_t lhs_block = plan_.block_rows * plan_.k * element_bytes_;
    res.Fork(stream);
    for (int step = 0; step < n; ++step) {
      const int block = ((r - 1 - step) % n + n) % n;
      if (step > 0)
        CheckCuda(cudaStreamWaitEvent(res.compute, res.landed[step - 1], 0), "cudaStreamWaitEvent");
      gemm_.Run(res.lt, static_cast<const char*>(b[0]) + block * lhs_block, b[1], sum_of(step),
                /*accumulate=*/step > 0, res.workspace.get(), res.compute);
      if (step + 1 == n) break;
      CheckCuda(cudaEventRecord(res.computed[step], res.compute), "cudaEventRecord");
      CheckCuda(cudaStreamWaitEvent(stream, res.computed[step], 0), "cudaStreamWaitEvent");
      RingStep(sum_of(step), sum_of(step + 1), SumBytes() / element_bytes_, stream);
      CheckCuda(cudaEventRecord(res.landed[step], stream), "cudaEventRecord");
    }
    res.Join(stream);
  }

 private:
  size_t SumBytes() const { return plan_.block_rows * plan_.n * element_bytes_; }
};

}  // namespace

void RegisterOverlapped(std::vector<KernelDef>& defs) {
  const std::vector<int32_t> types = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16};
  defs.emplace_back("brt.all_gather_matmul", types, &Make<AllGatherMatmul>);
  defs.emplace_back("brt.matmul_reduce_scatter", types, &Make<MatmulReduceScatter>);
}

}  // namespace brt::nccl
