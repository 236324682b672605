// Parallel loops for the CPU provider's own kernels. They and oneDNN (its
// oneTBB build) share one threading runtime, oneTBB: a request runs inside
// its Session's arena (host_pool.cc), so these loops and oneDNN's primitives
// use that arena's threads, and every Session draws on one set of workers.
// Work is cut into tasks that idle threads take: a thread the OS has taken
// off the CPU holds up only a task it already started, never a whole op (an
// OpenMP barrier waited for it a scheduler tick at a time on a busy machine).
#pragma once

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <cstdint>

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace brt::cpu {

// oneTBB hands tasks over inside libtbb, which TSan does not see: these tell
// it that what a thread did before Release(x) happens before what another
// does after Acquire(x). No-ops in other builds.
inline void Release([[maybe_unused]] void* x) {
#if defined(__SANITIZE_THREAD__)
  __tsan_release(x);
#endif
}
inline void Acquire([[maybe_unused]] void* x) {
#if defined(__SANITIZE_THREAD__)
  __tsan_acquire(x);
#endif
}

// The threads of the arena the caller runs in: its Session's during a run.
inline int MaxThreads() { return oneapi::tbb::this_task_arena::max_concurrency(); }

// body(begin, end) over ranges covering [0, n), each of at least `grain`
// items unless n is smaller, in parallel where there is more than one.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, const F& body) {
  if (n <= 0) return;
  if (n <= grain || MaxThreads() == 1) return body(int64_t{0}, n);
  int fork = 0, join = 0;
  Release(&fork);
  oneapi::tbb::parallel_for(oneapi::tbb::blocked_range<int64_t>(0, n, grain),
                            [&](const oneapi::tbb::blocked_range<int64_t>& r) {
                              Acquire(&fork);
                              body(r.begin(), r.end());
                              Release(&join);
                            });
  Acquire(&join);
}

// body(part) for each part < parts, each its own task (for parts that own a
// scratch buffer each: no two tasks share a part).
template <typename F>
void ParallelParts(int64_t parts, const F& body) {
  if (parts == 1 || MaxThreads() == 1) {
    for (int64_t p = 0; p < parts; ++p) body(p);
    return;
  }
  int fork = 0, join = 0;
  Release(&fork);
  oneapi::tbb::parallel_for(int64_t{0}, parts, [&](int64_t p) {
    Acquire(&fork);
    body(p);
    Release(&join);
  });
  Acquire(&join);
}

}  // namespace brt::cpu
