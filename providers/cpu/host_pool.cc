// The Session's host pool (provider_abi.h: create_host_pool): a oneTBB task
// arena of the Session's intra-op threads. A request runs its ops inside
// it, so brt's parallel loops (parallel.h) and oneDNN's primitives share its
// threads. Arenas draw their workers from oneTBB's one pool per process.
//
// Two things keep the workers at work on a machine busy with other jobs,
// where each CPU runs something else too (bench/load_bench.py; measured in
// bench/results/2026-11-27-load-bench-cpu.md):
// - Linux wakes a worker on the CPU of the thread that woke it when no CPU
//   is idle, and keeps it there: the request's thread and the worker share
//   one CPU. A worker found on the CPU of the thread running a request moves
//   to another of its allowed CPUs (its CPU set is restored at once; the
//   scheduler keeps it where it moved).
// - A oneTBB worker out of tasks pauses for about a microsecond, then yields
//   its CPU before it sleeps. On a CPU another job wants, a yield hands that
//   job the CPU for its time slice, milliseconds, and the next request's
//   tasks, spawned microseconds later, find no worker. So when an op ends
//   (between a request's ops too: a worker that yielded there left the next
//   op, and the rest of the request, at one core's speed), with spinning
//   on, up to threads - 1 workers wait in a task of brt's own that spins
//   without yielding until an op starts, in any Session, or the Session's
//   linger time passes.
// Either alone leaves a request at one core's speed there. Both are opt-in
// (SessionOptions::linger_microseconds, passed as BrtHostPoolConfig's
// linger_us; with spinning on and several threads): beside a lower-priority
// job they keep a request at its quiet speed, but beside a job of equal weight
// (another session or cgroup, where nice does not rank) the process gets
// its share of the CPUs whatever it does, and a request at two cores' speed
// is paid back in time slices in its p99 (4-8 ms against 0.2-0.3 for the
// small models of bench/load_bench.py).
#include "host_pool.h"

#include <dlfcn.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>

#include "kernel.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

using oneapi::tbb::task_arena;

// Bumped as each op of a lingering pool starts: lingering workers go back
// to oneTBB's tasks.
std::atomic<uint64_t> op_epoch{0};

// What a pool's linger tasks read; they may outlive the pool in its queue.
struct Shared {
  std::atomic<int> lingering{0};     // linger tasks queued or spinning
  std::atomic<int> request_cpu{-1};  // where the pool's last request started
  std::atomic<int> running_ops{0};   // ops of the pool's requests under way
};

// Moves the calling thread off `cpu` when it runs there.
void LeaveCpu(int cpu) {
  if (cpu < 0 || sched_getcpu() != cpu) return;
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  cpu_set_t others = allowed;
  CPU_CLR(cpu, &others);
  if (CPU_COUNT(&others) == 0 || sched_setaffinity(0, sizeof others, &others) != 0) return;
  sched_setaffinity(0, sizeof allowed, &allowed);
}

// A worker joining the arena leaves the request's CPU.
class SpreadWorkers final : public oneapi::tbb::task_scheduler_observer {
 public:
  SpreadWorkers(task_arena& arena, std::shared_ptr<Shared> shared)
      : task_scheduler_observer(arena), shared_(std::move(shared)) {
    observe(true);
  }
  ~SpreadWorkers() override { observe(false); }

  void on_scheduler_entry(bool is_worker) override {
    if (is_worker) LeaveCpu(shared_->request_cpu.load(std::memory_order_relaxed));
  }

 private:
  std::shared_ptr<Shared> shared_;
};

struct HostPool {
  task_arena arena;
  int threads = 1;
  std::chrono::microseconds linger{0};  // 0: workers do not linger
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  std::unique_ptr<SpreadWorkers> spread;  // destroyed before the arena

  bool Lingers() const { return linger.count() > 0; }
};

// The pool whose request the calling thread runs, if any.
thread_local HostPool* request_pool = nullptr;

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Spins while no op of the pool is under way and none has started anywhere
// since the task started (a task that starts during an op, queued at an
// earlier op's end, ends at once and leaves the worker to that op's tasks).
void Linger(Shared& shared, std::chrono::microseconds linger) {
  // A request's own thread, waiting inside its op, has its tasks to run.
  if (!request_pool) {
    LeaveCpu(shared.request_cpu.load(std::memory_order_relaxed));
    const uint64_t epoch = op_epoch.load(std::memory_order_acquire);
    const auto deadline = std::chrono::steady_clock::now() + linger;
    for (unsigned i = 1; op_epoch.load(std::memory_order_acquire) == epoch &&
                         shared.running_ops.load(std::memory_order_relaxed) == 0;
         ++i) {
      CpuRelax();
      if (i % 64 == 0 && std::chrono::steady_clock::now() > deadline) break;
    }
  }
  shared.lingering.fetch_sub(1, std::memory_order_relaxed);
}

// Up to threads - 1 linger tasks, queued from inside the arena as an op
// ends (not under TSan, whose requests run outside the arena).
[[maybe_unused]] void KeepWorkersWaiting(HostPool& p) {
  int queued = p.shared->lingering.load(std::memory_order_relaxed);
  while (queued < p.threads - 1) {
    if (!p.shared->lingering.compare_exchange_weak(queued, queued + 1, std::memory_order_relaxed))
      continue;
    p.arena.enqueue([s = p.shared, linger = p.linger] { Linger(*s, linger); });
    ++queued;
  }
}

// oneTBB dlopens Intel's thread composability manager (libtcm, in the tbb
// wheel's lib directory) and dlcloses it as it shuts down at exit; a call
// into it after that crashed a process at exit now and then (a core showed
// the main thread in its unmapped range). Pinned, it stays mapped.
void PinThreadComposabilityManager() {
  [[maybe_unused]] static void* const pinned =
      dlopen("libtcm.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

int32_t CreateHostPool(const BrtHostPoolConfig* config, void** pool, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    const int threads =
        config->threads > 0 ? config->threads : oneapi::tbb::info::default_concurrency();
    // The fast policy sends workers back to sleep when the arena runs dry;
    // the automatic one keeps them a short while for the next op's work.
    const auto leave =
        config->spin ? task_arena::leave_policy::automatic : task_arena::leave_policy::fast;
    auto p = std::make_unique<HostPool>();
    p->arena.initialize(threads, 1, task_arena::priority::normal, leave);
    PinThreadComposabilityManager();
    p->threads = threads;
    // An older core's config ends before linger_us: no lingering. The bound
    // holds whatever a caller passes.
    if (BRT_STRUCT_HAS(BrtHostPoolConfig, config, linger_us) && config->spin && threads > 1)
      p->linger = std::chrono::microseconds(
          std::clamp(config->linger_us, int32_t{0}, int32_t{BRT_HOST_POOL_MAX_LINGER_US}));
    if (p->Lingers()) p->spread = std::make_unique<SpreadWorkers>(p->arena, p->shared);
    *pool = p.release();
  });
}

void DestroyHostPool(void* pool) { delete static_cast<HostPool*>(pool); }

// The body may run on another thread of the arena when its slots are
// taken. Under TSan, on the calling thread (parallel.h says why).
void RunInHostPool(void* pool, void (*body)(void*), void* arg) {
  HostPool& p = *static_cast<HostPool*>(pool);
#if defined(__SANITIZE_THREAD__)
  const int outer = tsan_pool_threads;
  tsan_pool_threads = p.threads;
  body(arg);
  tsan_pool_threads = outer;
#else
  if (p.Lingers()) p.shared->request_cpu.store(sched_getcpu(), std::memory_order_relaxed);
  p.arena.execute([&] {
    HostPool* outer = request_pool;
    request_pool = &p;
    body(arg);
    request_pool = outer;
  });
#endif
}

}  // namespace

void OpStarting() {
  if (const HostPool* p = request_pool; p && p->Lingers()) {
    p->shared->running_ops.fetch_add(1, std::memory_order_relaxed);
    op_epoch.fetch_add(1, std::memory_order_release);
  }
}

// Workers linger only when no other request's op of the pool is under way
// (they would hold back its tasks). A linger task that cannot be queued
// (out of memory) only means no lingering.
void OpEnded() noexcept {
  HostPool* p = request_pool;
  if (!p || !p->Lingers() || p->shared->running_ops.fetch_sub(1, std::memory_order_relaxed) != 1)
    return;
#if !defined(__SANITIZE_THREAD__)
  try {
    KeepWorkersWaiting(*p);
  } catch (...) {
  }
#endif
}

void SetHostPool(BrtProviderApi& api) {
  api.create_host_pool = &CreateHostPool;
  api.destroy_host_pool = &DestroyHostPool;
  api.run_in_host_pool = &RunInHostPool;
}

}  // namespace brt::cpu
