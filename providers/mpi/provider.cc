// The MPI collectives provider: host buffers, OpenMPI underneath. A request
// context's collectives go to a work queue (a thread per context) in program
// order, so the host computes on while they move; the core waits for the
// queue only where an op touches their memory. Without a queue
// (BRT_MPI_ASYNC=0) they run on the calling thread like the CPU provider's
// kernels. Either way their MPI calls go to the engine's comm thread
// (engine.h). comm_create initializes MPI when
// nobody has (the process was launched by mpirun, or is a singleton), checks
// that MPI's world is the one brt was told about, and that every rank loaded
// the same program.
#include <unistd.h>

#include <cinttypes>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#include "kernels.h"

namespace brt::mpi {
namespace {

const std::vector<KernelDef>& Registry() {
  static const std::vector<KernelDef> defs = [] {
    std::vector<KernelDef> d;
    RegisterCollectives(d);
    RegisterOverlapped(d);
    return d;
  }();
  return defs;
}

struct Instance {
  const CollectiveKernel* kernel;
  const char* kind;
  Scratch scratch;
};

// A context's work queue: its collectives run on the queue's thread one
// after another, in the order they were queued (every rank's program
// order). The first failure is kept and reported by Synchronize; the
// collectives queued after it are dropped (their communicator is aborted).
class Queue {
 public:
  Queue() : thread_([this] { Loop(); }) {}
  ~Queue() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    work_cv_.notify_one();
    thread_.join();
  }
  void Push(Instance* inst, void* const* buffers) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.push_back({inst, buffers});
    }
    work_cv_.notify_one();
  }
  // Waits until everything queued has run; the first failure since the last
  // call, if any.
  int32_t Synchronize(BrtErrorBuffer* error) {
    std::unique_lock<std::mutex> lock(mu_);
    idle_cv_.wait(lock, [&] { return jobs_.empty() && !busy_; });
    const int32_t code = failed_;
    if (code != BRT_OK) ReportAbiError(error, code, message_);
    failed_ = BRT_OK;
    message_.clear();
    return code;
  }

 private:
  struct Job {
    Instance* inst;
    void* const* buffers;
  };
  void Loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      const Job job = jobs_.front();
      jobs_.pop_front();
      const bool skip = failed_ != BRT_OK;
      busy_ = true;
      lock.unlock();
      BrtErrorBuffer error{};
      const int32_t code =
          skip ? BRT_OK
               : AbiGuard(&error, [&] { job.inst->kernel->Run(job.buffers, job.inst->scratch); });
      lock.lock();
      if (code != BRT_OK && failed_ == BRT_OK) {
        failed_ = code;
        message_ = std::string("'") + job.inst->kind + "': " + error.message;
      }
      busy_ = false;
      if (jobs_.empty()) idle_cv_.notify_all();
    }
  }

  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<Job> jobs_;
  bool busy_ = false, stop_ = false;
  int32_t failed_ = BRT_OK;
  std::string message_;
  std::thread thread_;
};

int32_t CreateQueue(int32_t, void** queue, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] { *queue = new Queue(); });
}
void DestroyQueue(void* queue) { delete static_cast<Queue*>(queue); }
int32_t SynchronizeQueue(void* queue, BrtErrorBuffer* error) {
  return static_cast<Queue*>(queue)->Synchronize(error);
}

void ReleaseState(void* state) { delete static_cast<CollectiveKernel*>(state); }

int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto* k = static_cast<const CollectiveKernel*>(state);
    auto inst = std::make_unique<Instance>();
    inst->kernel = k;
    inst->kind = k->kind();
    const size_t bytes = k->ScratchBytes();
    inst->scratch.a.resize(bytes);
    inst->scratch.b.resize(bytes);
    *instance = inst.release();
  });
}

void ReleaseInstance(void* instance) { delete static_cast<Instance*>(instance); }

int32_t RunKernel(void* instance, void* const* buffers, void* queue, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto* inst = static_cast<Instance*>(instance);
    if (queue)
      static_cast<Queue*>(queue)->Push(inst, buffers);
    else
      inst->kernel->Run(buffers, inst->scratch);
  });
}

int32_t DeviceCount() { return 1; }

std::string MpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  return std::string(text, len);
}

// What each rank tells the others when it joins.
struct JoinRecord {
  uint64_t program_hash;
  int32_t pid;
  char host[64];
};

int32_t CommCreate(const BrtCommConfig* config, void** out, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    auto world = std::make_shared<World>();
    world->rank = config->rank;
    world->size = config->world_size;
    world->timeout_seconds = config->timeout_seconds > 0 ? config->timeout_seconds : 300;
    auto comm = std::make_unique<Comm>();
    comm->world = world;
    Engine& engine = Engine::Get();
    std::string failed = engine.Call([&]() -> std::string {
      int initialized = 0;
      MPI_Initialized(&initialized);
      if (!initialized) {
        int provided = 0;
        int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        if (rc != MPI_SUCCESS) return "MPI_Init_thread: " + MpiError(rc);
        Engine::Get().set_initialized_here();
      }
      int mpi_rank = 0, mpi_size = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
      MPI_Comm_size(MPI_COMM_WORLD, &mpi_size);
      if (mpi_rank != config->rank || mpi_size != config->world_size)
        return "brt was told rank " + std::to_string(config->rank) + " of " +
               std::to_string(config->world_size) + ", but MPI's world says rank " +
               std::to_string(mpi_rank) + " of " + std::to_string(mpi_size) +
               " (launch with mpirun -np " + std::to_string(config->world_size) + ")";
      MPI_Comm_dup(MPI_COMM_WORLD, &comm->comm);
      MPI_Comm_set_errhandler(comm->comm, MPI_ERRORS_RETURN);
      JoinRecord mine{config->program_hash, static_cast<int32_t>(getpid()), {}};
      gethostname(mine.host, sizeof(mine.host) - 1);
      std::vector<JoinRecord> all(mpi_size);
      int rc = MPI_Allgather(&mine, sizeof(JoinRecord), MPI_BYTE, all.data(), sizeof(JoinRecord),
                             MPI_BYTE, comm->comm);
      if (rc != MPI_SUCCESS) return "exchanging program hashes: " + MpiError(rc);
      for (int r = 0; r < mpi_size; ++r) {
        world->peers.push_back({all[r].pid, all[r].host});
        if (r == mpi_rank) ForgetLostRankNote(*world);
        if (all[r].program_hash != config->program_hash) {
          char text[256];
          std::snprintf(text, sizeof(text),
                        "the ranks loaded different programs: executable hash %016" PRIx64
                        " here on rank %d, %016" PRIx64
                        " on rank %d (every rank must load the "
                        "same .brtx)",
                        config->program_hash, mpi_rank, all[r].program_hash, r);
          return text;
        }
      }
      return "";
    });
    if (!failed.empty()) throw AbiError(BRT_ERROR_INVALID_ARGUMENT, failed);
    comm->rank = config->rank;
    comm->size = config->world_size;
    for (int r = 0; r < comm->size; ++r) comm->world_ranks.push_back(r);
    *out = comm.release();
  });
}

int32_t CommSplit(void* parent_handle, int32_t color, int32_t key, void** out,
                  BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    const Comm& parent = *static_cast<const Comm*>(parent_handle);
    auto comm = std::make_unique<Comm>();
    comm->world = parent.world;
    std::string failed = Engine::Get().Call([&]() -> std::string {
      int rc = MPI_Comm_split(parent.comm, color < 0 ? MPI_UNDEFINED : color, key, &comm->comm);
      if (rc != MPI_SUCCESS) return "MPI_Comm_split: " + MpiError(rc);
      if (comm->comm == MPI_COMM_NULL) return "";
      MPI_Comm_rank(comm->comm, &comm->rank);
      MPI_Comm_size(comm->comm, &comm->size);
      const int mine = parent.world->rank;
      comm->world_ranks.resize(comm->size);
      rc = MPI_Allgather(&mine, 1, MPI_INT, comm->world_ranks.data(), 1, MPI_INT, comm->comm);
      return rc == MPI_SUCCESS ? "" : "MPI_Allgather: " + MpiError(rc);
    });
    if (!failed.empty()) throw AbiError(BRT_ERROR_INTERNAL, failed);
    *out = comm->comm == MPI_COMM_NULL ? nullptr : comm.release();
  });
}

int32_t CommBroadcast(void* handle, void* buffer, size_t bytes, int32_t root,
                      BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    const Comm* c = static_cast<const Comm*>(handle);
    Transfer t;
    t.comm = c;
    t.what = "broadcast";
    t.post = [=](std::vector<MPI_Request>& r) {
      r.emplace_back();
      MPI_Ibcast(buffer, static_cast<int>(bytes), MPI_BYTE, root, c->comm, &r.back());
    };
    const std::string failed = Engine::Get().Run(t);
    if (!failed.empty()) throw AbiError(BRT_ERROR_INTERNAL, failed);
  });
}

void CommAbort(void* handle) {
  if (handle) Abort(*static_cast<Comm*>(handle), "aborted by the runtime");
}

void CommDestroy(void* handle) {
  auto* comm = static_cast<Comm*>(handle);
  if (!comm) return;
  // A communicator whose peers are gone cannot be freed collectively.
  if (!comm->world->aborted)
    Engine::Get().Call([comm] {
      MPI_Comm_free(&comm->comm);
      return std::string();
    });
  delete comm;
}

const KernelTable<KernelDef> kTable = {
    &Registry,
    {&PrepareCollective<KernelDef>, &ReleaseState, &CreateInstance, &ReleaseInstance, &RunKernel},
    BRT_DEVICE_CPU,
    "mpi"};

BrtProviderApi MakeApi() {
  BrtProviderApi a = ProviderApiHeader("mpi", BRT_DEVICE_CPU);
  a.collective_devices = BRT_DEVICE_BIT(BRT_DEVICE_CPU);
  a.device_count = &DeviceCount;
  a.allocate = &HostAllocate;
  a.deallocate = &HostDeallocate;
  a.copy = &HostCopy;
  SetKernelTable<kTable>(a);
  a.comm_create = &CommCreate;
  a.comm_split = &CommSplit;
  a.comm_abort = &CommAbort;
  a.comm_destroy = &CommDestroy;
  a.comm_broadcast = &CommBroadcast;
  const char* async = std::getenv("BRT_MPI_ASYNC");
  if (!async || std::strcmp(async, "0") != 0) {
    a.create_queue = &CreateQueue;
    a.destroy_queue = &DestroyQueue;
    a.synchronize_queue = &SynchronizeQueue;
  }
  return a;
}

}  // namespace
}  // namespace brt::mpi

BRT_DEFINE_PROVIDER_ENTRY_POINT(brt::mpi::MakeApi)
