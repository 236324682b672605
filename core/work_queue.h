// The worker thread behind RequestContext::RunAsync: work items run one at a
// time, in submission order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace brt::core {

class ThreadQueue {
 public:
  ThreadQueue();
  ~ThreadQueue();
  void Submit(std::function<void()> work);
  // Blocks until everything submitted so far has run.
  void Drain();

 private:
  void Loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> items_;
  size_t running_ = 0;
  bool stop_ = false;
  std::thread worker_;
};

}  // namespace brt::core
