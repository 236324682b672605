// The NCCL collectives provider: StableHLO collectives on CUDA device
// buffers, on its own CUDA streams (the core gives each provider its queues
// and synchronizes where work crosses providers). Communicators: the world
// from a unique id that rank 0 makes (comm_bootstrap_blob) and the core
// shares over MPI, or that travels through the TCP rendezvous
// (MASTER_ADDR:MASTER_PORT; a world of one needs none), replica groups by
// ncclCommSplit. A failed peer or a wait past the timeout aborts every
// communicator (ncclCommAbort) so no rank hangs. The overlapped
// all_gather+matmul and matmul+reduce_scatter are in overlap.cc.
//
// Gathers, scatters and all_to_all work along the outermost dimension that
// is not 1 (dimension 0 in practice); other layouts are refused at load.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "common/rendezvous.h"
#include "kernels.h"
#include "ops/op_plans.h"

namespace brt::nccl {

void CheckNccl(ncclResult_t rc, const std::string& what) {
  if (rc != ncclSuccess && rc != ncclInProgress)
    throw AbiError(BRT_ERROR_INTERNAL,
                   what + ": " + ncclGetErrorString(rc) + " (" + ncclGetLastError(nullptr) + ")");
}

void CheckCuda(cudaError_t rc, const std::string& what) {
  if (rc != cudaSuccess) throw AbiError(BRT_ERROR_INTERNAL, what + ": " + cudaGetErrorString(rc));
}

ncclDataType_t NcclType(int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return ncclFloat32;
    case BRT_DTYPE_F16:
      return ncclFloat16;
    case BRT_DTYPE_BF16:
      return ncclBfloat16;
    case BRT_DTYPE_F64:
      return ncclFloat64;
    case BRT_DTYPE_I8:
      return ncclInt8;
    case BRT_DTYPE_I32:
      return ncclInt32;
    case BRT_DTYPE_I64:
      return ncclInt64;
    case BRT_DTYPE_U8:
      return ncclUint8;
    case BRT_DTYPE_U32:
      return ncclUint32;
    case BRT_DTYPE_U64:
      return ncclUint64;
  }
  throw KernelError(std::string("NCCL takes no ") + DTypeName(dtype));
}

namespace {

// Every live communicator, so a failure aborts them all; and the timeout.
struct CommRegistry {
  std::mutex mu;
  std::set<Comm*> comms;
  double timeout_seconds = 300;
  std::string failure;
};
CommRegistry& Comms() {
  static CommRegistry r;
  return r;
}

// A reducer the plan has checked.
ncclRedOp_t NcclOp(const std::string& reducer) {
  return reducer == "add"   ? ncclSum
         : reducer == "mul" ? ncclProd
         : reducer == "max" ? ncclMax
                            : ncclMin;
}

// NCCL moves contiguous rank blocks: the dims before dimension `dim` (named
// by attribute `attr`) must all be 1 (`outer`, their product, from the op's
// plan).
void RequireContiguousBlocks(const OpInfo& op, int64_t outer, const char* attr, int64_t dim) {
  op.Require(outer == 1, std::string(attr) + " " + std::to_string(dim) +
                             " is not the outermost dimension that is not 1; the nccl provider "
                             "moves contiguous rank blocks only");
}

class AllReduce final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc&) override {
    red_ = NcclOp(PlanAllReduce(op));
    type_ = NcclType(op.in[0].dtype);
    count_ = static_cast<size_t>(op.in[0].numel);
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    CheckNccl(ncclAllReduce(b[0], b[1], count_, type_, red_, comm_->comm, s), "ncclAllReduce");
  }

 private:
  ncclDataType_t type_{};
  ncclRedOp_t red_{};
  size_t count_ = 0;
};

class AllGather final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    RequireContiguousBlocks(op, PlanAllGather(op, desc.comm_size).outer, "all_gather_dim",
                            Decode<AllGatherAttrs>(op).all_gather_dim);
    type_ = NcclType(op.in[0].dtype);
    count_ = static_cast<size_t>(op.in[0].numel);
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    CheckNccl(ncclAllGather(b[0], b[1], count_, type_, comm_->comm, s), "ncclAllGather");
  }

 private:
  ncclDataType_t type_{};
  size_t count_ = 0;
};

class ReduceScatter final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const ReduceScatterPlan p = PlanReduceScatter(op, desc.comm_size);
    RequireContiguousBlocks(op, p.outer, "scatter_dimension",
                            Decode<ReduceScatterAttrs>(op).scatter_dimension);
    type_ = NcclType(op.in[0].dtype);
    red_ = NcclOp(p.reducer);
    count_ = static_cast<size_t>(op.out[0].numel);
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    CheckNccl(ncclReduceScatter(b[0], b[1], count_, type_, red_, comm_->comm, s),
              "ncclReduceScatter");
  }

 private:
  ncclDataType_t type_{};
  ncclRedOp_t red_{};
  size_t count_ = 0;
};

class AllToAll final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const AllToAllPlan p = PlanAllToAll(op, desc.comm_size);
    const AllToAllAttrs attrs = Decode<AllToAllAttrs>(op);
    RequireContiguousBlocks(op, p.split_outer, "split_dimension", attrs.split_dimension);
    RequireContiguousBlocks(op, p.concat_outer, "concat_dimension", attrs.concat_dimension);
    type_ = NcclType(op.in[0].dtype);
    chunk_bytes_ = p.piece_bytes;
    chunk_ = chunk_bytes_ / brt_dtype_size(op.in[0].dtype);
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    const char* in = static_cast<const char*>(b[0]);
    char* out = static_cast<char*>(b[1]);
    CheckNccl(ncclGroupStart(), "ncclGroupStart");
    for (int peer = 0; peer < comm_->size; ++peer) {
      CheckNccl(ncclSend(in + peer * chunk_bytes_, chunk_, type_, peer, comm_->comm, s),
                "ncclSend");
      CheckNccl(ncclRecv(out + peer * chunk_bytes_, chunk_, type_, peer, comm_->comm, s),
                "ncclRecv");
    }
    CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  }

 private:
  ncclDataType_t type_{};
  size_t chunk_ = 0, chunk_bytes_ = 0;
};

class CollectivePermute final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    const PermutePlan p = PlanCollectivePermute(op, desc.world_rank, desc.world_size);
    from_ = p.from;
    to_ = p.to;
    type_ = NcclType(op.in[0].dtype);
    count_ = static_cast<size_t>(op.in[0].numel);
    bytes_ = op.in[0].bytes();
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    if (from_ < 0) CheckCuda(cudaMemsetAsync(b[1], 0, bytes_, s), "cudaMemsetAsync");
    if (from_ < 0 && to_ < 0) return;
    CheckNccl(ncclGroupStart(), "ncclGroupStart");
    if (to_ >= 0) CheckNccl(ncclSend(b[0], count_, type_, to_, comm_->comm, s), "ncclSend");
    if (from_ >= 0) CheckNccl(ncclRecv(b[1], count_, type_, from_, comm_->comm, s), "ncclRecv");
    CheckNccl(ncclGroupEnd(), "ncclGroupEnd");
  }

 private:
  int from_ = -1, to_ = -1;
  ncclDataType_t type_{};
  size_t count_ = 0, bytes_ = 0;
};

// The rank as an i32, copied from this state (host memory: not capturable).
class PartitionId final : public Kernel {
 public:
  void Prepare(const OpInfo& op, const BrtOpDesc& desc) override {
    id_ = PlanPartitionId(op, desc.world_rank);
  }
  void Run(void* const* b, cudaStream_t s, Resources*) const override {
    CheckCuda(cudaMemcpyAsync(b[0], &id_, sizeof(id_), cudaMemcpyHostToDevice, s),
              "cudaMemcpyAsync");
  }

 private:
  int32_t id_ = 0;
};

const std::vector<KernelDef>& Registry() {
  static const std::vector<KernelDef> defs = [] {
    const std::vector<int32_t> types = {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16, BRT_DTYPE_F64,
                                        BRT_DTYPE_I8,  BRT_DTYPE_I32, BRT_DTYPE_I64,  BRT_DTYPE_U8,
                                        BRT_DTYPE_U32, BRT_DTYPE_U64};
    std::vector<KernelDef> d;
    d.emplace_back("all_reduce", types, &Make<AllReduce>);
    d.emplace_back("all_gather", types, &Make<AllGather>);
    d.emplace_back("reduce_scatter", types, &Make<ReduceScatter>);
    d.emplace_back("all_to_all", types, &Make<AllToAll>);
    d.emplace_back("collective_permute", types, &Make<CollectivePermute>);
    d.emplace_back("partition_id", std::vector<int32_t>{BRT_DTYPE_U32, BRT_DTYPE_I32},
                   &Make<PartitionId>,
                   /*key_is_operand=*/false, /*capturable=*/false);
    RegisterOverlapped(d);
    return d;
  }();
  return defs;
}

struct Instance {
  const Kernel* kernel;
  std::unique_ptr<Resources> own;
};

void ReleaseState(void* state) { delete static_cast<Kernel*>(state); }

int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto* k = static_cast<const Kernel*>(state);
    *instance = new Instance{k, k->NewResources()};
  });
}

void ReleaseInstance(void* instance) { delete static_cast<Instance*>(instance); }

int32_t RunKernel(void* instance, void* const* buffers, void* queue, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto* inst = static_cast<Instance*>(instance);
    // Concurrent request contexts share the communicator (kernels.h, Comm).
    const std::unique_lock<std::mutex> lock = inst->kernel->LockComm();
    inst->kernel->Run(buffers, static_cast<cudaStream_t>(queue), inst->own.get());
  });
}

int32_t DeviceCount() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

void AbortAll(const std::string& why) {
  CommRegistry& r = Comms();
  std::lock_guard<std::mutex> lock(r.mu);
  if (r.failure.empty()) r.failure = why;
  for (Comm* c : r.comms)
    if (c->comm) ncclCommAbort(c->comm), c->comm = nullptr;
}

int32_t CreateQueue(int32_t, void** queue, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    cudaStream_t s = nullptr;
    CheckCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    *queue = s;
  });
}

void DestroyQueue(void* queue) { cudaStreamDestroy(static_cast<cudaStream_t>(queue)); }

// Waits for the queue while watching the communicators: an asynchronous NCCL
// error (a peer gone) or a wait past the timeout aborts them all.
int32_t SynchronizeQueue(void* queue, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    CommRegistry& r = Comms();
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      const cudaError_t rc = cudaStreamQuery(static_cast<cudaStream_t>(queue));
      if (rc == cudaSuccess) return;
      if (rc != cudaErrorNotReady) CheckCuda(rc, "waiting for the collectives");
      {
        std::lock_guard<std::mutex> lock(r.mu);
        if (!r.failure.empty()) throw AbiError(BRT_ERROR_INTERNAL, r.failure);
        for (Comm* c : r.comms) {
          ncclResult_t async = ncclSuccess;
          if (c->comm && ncclCommGetAsyncError(c->comm, &async) == ncclSuccess &&
              async != ncclSuccess && async != ncclInProgress) {
            r.failure = std::string("NCCL: ") + ncclGetErrorString(async) +
                        " (a peer rank failed or is gone)";
            break;
          }
        }
      }
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > r.timeout_seconds)
        AbortAll("no progress for " + std::to_string(static_cast<int>(waited)) +
                 " s (BRT_COLLECTIVE_TIMEOUT; a lost rank?)");
      {
        std::lock_guard<std::mutex> lock(r.mu);
        if (!r.failure.empty()) {
          const std::string why = r.failure;
          for (Comm* c : r.comms)
            if (c->comm) ncclCommAbort(c->comm), c->comm = nullptr;
          throw AbiError(BRT_ERROR_INTERNAL, why);
        }
      }
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  });
}

// NCCL's kernels share the SMs with the GEMMs they overlap: the efficiency
// policy keeps their CTAs few; BRT_NCCL_MAX_CTAS caps them further.
ncclConfig_t CommConfig() {
  ncclConfig_t c = NCCL_CONFIG_INITIALIZER;
  c.CTAPolicy = NCCL_CTA_POLICY_EFFICIENCY;
  if (const char* cap = std::getenv("BRT_NCCL_MAX_CTAS")) c.maxCTAs = std::atoi(cap);
  return c;
}

int32_t CommCreate(const BrtCommConfig* config, void** out, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    ncclUniqueId id{};
    const bool shared = BRT_STRUCT_HAS(BrtCommConfig, config, bootstrap_size) &&
                        config->bootstrap && config->bootstrap_size == sizeof(id);
    if (shared) {
      std::memcpy(&id, config->bootstrap, sizeof(id));
    } else if (config->rank == 0) {
      CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    }
    if (config->world_size > 1 && !shared) {
      if (!config->rendezvous)
        throw AbiError(BRT_ERROR_INVALID_ARGUMENT,
                       "the nccl provider needs NCCL's unique id shared for " +
                           std::to_string(config->world_size) +
                           " ranks: launch with mpirun (brt shares it over MPI) or set "
                           "MASTER_ADDR and MASTER_PORT (or SessionOptions rendezvous)");
      std::vector<uint8_t> blob(reinterpret_cast<uint8_t*>(&id),
                                reinterpret_cast<uint8_t*>(&id) + sizeof(id));
      RendezvousResult r = Rendezvous(config->rendezvous, config->rank, config->world_size,
                                      config->program_hash, blob, config->timeout_seconds);
      if (!r.error.empty()) throw AbiError(BRT_ERROR_INVALID_ARGUMENT, r.error);
      if (r.blob.size() != sizeof(id))
        throw AbiError(BRT_ERROR_INTERNAL, "the rendezvous sent a malformed NCCL unique id");
      std::memcpy(&id, r.blob.data(), sizeof(id));
    }
    auto comm = std::make_unique<Comm>();
    ncclConfig_t nccl_config = CommConfig();
    CheckNccl(
        ncclCommInitRankConfig(&comm->comm, config->world_size, id, config->rank, &nccl_config),
        "ncclCommInitRankConfig");
    comm->rank = config->rank;
    comm->size = config->world_size;
    CommRegistry& reg = Comms();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.timeout_seconds = config->timeout_seconds > 0 ? config->timeout_seconds : 300;
    reg.comms.insert(comm.get());
    *out = comm.release();
  });
}

int32_t CommSplit(void* parent, int32_t color, int32_t key, void** out, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto comm = std::make_unique<Comm>();
    auto* from = static_cast<Comm*>(parent);
    {
      const std::lock_guard<std::mutex> lock(from->use);
      CheckNccl(ncclCommSplit(from->comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &comm->comm,
                              nullptr),
                "ncclCommSplit");
    }
    *out = nullptr;
    if (!comm->comm) return;
    CheckNccl(ncclCommUserRank(comm->comm, &comm->rank), "ncclCommUserRank");
    CheckNccl(ncclCommCount(comm->comm, &comm->size), "ncclCommCount");
    CommRegistry& reg = Comms();
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.comms.insert(comm.get());
    *out = comm.release();
  });
}

int32_t CommBootstrapBlob(void* buffer, size_t* size, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    ncclUniqueId id{};
    if (*size < sizeof(id)) throw AbiError(BRT_ERROR_INVALID_ARGUMENT, "buffer too small");
    CheckNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::memcpy(buffer, &id, sizeof(id));
    *size = sizeof(id);
  });
}

void CommAbort(void*) { AbortAll("aborted by the runtime"); }

void CommDestroy(void* handle) {
  auto* comm = static_cast<Comm*>(handle);
  if (!comm) return;
  CommRegistry& reg = Comms();
  {
    std::lock_guard<std::mutex> lock(reg.mu);
    reg.comms.erase(comm);
  }
  if (comm->comm) ncclCommDestroy(comm->comm);
  delete comm;
}

const KernelTable<KernelDef> kTable = {
    &Registry,
    {&PrepareCollective<KernelDef>, &ReleaseState, &CreateInstance, &ReleaseInstance, &RunKernel},
    BRT_DEVICE_CUDA,
    "nccl"};

// Memory, copies and graphs stay with the cuda provider (loaded first: the
// core takes a device's memory from the first provider of its kind).
BrtProviderApi MakeApi() {
  BrtProviderApi a = ProviderApiHeader("nccl", BRT_DEVICE_CUDA);
  a.collective_devices = BRT_DEVICE_BIT(BRT_DEVICE_CUDA);
  a.device_count = &DeviceCount;
  BRT_SET_ENTRIES(a, BRT_QUEUE_ENTRIES);
  SetKernelTable<kTable>(a);
  a.comm_create = &CommCreate;
  a.comm_split = &CommSplit;
  a.comm_abort = &CommAbort;
  a.comm_destroy = &CommDestroy;
  a.comm_bootstrap_blob = &CommBootstrapBlob;
  return a;
}

}  // namespace
}  // namespace brt::nccl

BRT_DEFINE_PROVIDER_ENTRY_POINT(brt::nccl::MakeApi)
