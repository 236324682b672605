// The Session's host pool (provider_abi.h: create_host_pool): a oneTBB task
// arena of the Session's intra-op threads. A request runs its ops inside
// it, so brt's parallel loops (parallel.h) and oneDNN's primitives share its
// threads. Arenas draw their workers from oneTBB's one pool per process.
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>

#include "host_pool.h"
#include "kernel.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

using oneapi::tbb::task_arena;

struct HostPool {
  task_arena arena;
  int threads = 1;
};

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
    p->threads = threads;
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
  p.arena.execute([&] { body(arg); });
#endif
}

}  // namespace

void SetHostPool(BrtProviderApi& api) {
  api.create_host_pool = &CreateHostPool;
  api.destroy_host_pool = &DestroyHostPool;
  api.run_in_host_pool = &RunInHostPool;
}

}  // namespace brt::cpu
