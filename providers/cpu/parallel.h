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

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace brt::cpu {

#if defined(__SANITIZE_THREAD__)
// Under TSan the loops run on threads of their own, which TSan sees start
// and end, rather than as oneTBB tasks, which libtbb hands between threads
// out of its sight: brt's partitions, scratch and kernels are checked with
// real threads, and oneTBB's scheduler is trusted as oneDNN is. The pool's
// thread count comes from RunInHostPool (host_pool.cc).
inline thread_local int tsan_pool_threads = 1;
inline int MaxThreads() { return tsan_pool_threads; }

template <typename F>
void ParallelFor(int64_t n, int64_t grain, const F& body) {
  if (n <= 0) return;
  const int64_t parts =
      std::min<int64_t>(MaxThreads(), (n + grain - 1) / std::max<int64_t>(1, grain));
  if (parts <= 1) return body(int64_t{0}, n);
  std::vector<std::thread> threads;
  for (int64_t p = 1; p < parts; ++p)
    threads.emplace_back([&, p] { body(n * p / parts, n * (p + 1) / parts); });
  body(int64_t{0}, n / parts);
  for (auto& t : threads) t.join();
}

#else
// The threads of the arena the caller runs in: its Session's during a run.
inline int MaxThreads() { return oneapi::tbb::this_task_arena::max_concurrency(); }

// body(begin, end) over ranges covering [0, n), each of at least `grain`
// items unless n is smaller, in parallel where there is more than one.
template <typename F>
void ParallelFor(int64_t n, int64_t grain, const F& body) {
  if (n <= 0) return;
  if (n <= grain || MaxThreads() == 1) return body(int64_t{0}, n);
  oneapi::tbb::parallel_for(
      oneapi::tbb::blocked_range<int64_t>(0, n, grain),
      [&](const oneapi::tbb::blocked_range<int64_t>& r) { body(r.begin(), r.end()); });
}
#endif

// body(part) for each part < parts, each part run whole by one thread (for
// parts that own a scratch buffer each: no two threads share a part).
template <typename F>
void ParallelParts(int64_t parts, const F& body) {
  ParallelFor(parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) body(p);
  });
}

}  // namespace brt::cpu
