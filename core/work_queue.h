// Work queues give execution order (DESIGN.md §5). On the host: inline, or a
// dedicated worker thread for asynchronous runs.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace brt::core {

class WorkQueue {
 public:
  virtual ~WorkQueue() = default;
  // Work items run in submission order.
  virtual void Submit(std::function<void()> work) = 0;
  // Blocks until everything submitted so far has run.
  virtual void Drain() = 0;
};

class InlineQueue final : public WorkQueue {
 public:
  void Submit(std::function<void()> work) override { work(); }
  void Drain() override {}
};

class ThreadQueue final : public WorkQueue {
 public:
  ThreadQueue();
  ~ThreadQueue() override;
  void Submit(std::function<void()> work) override;
  void Drain() override;

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
