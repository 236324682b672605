#include "work_queue.h"

namespace brt::core {

ThreadQueue::ThreadQueue() : worker_([this] { Loop(); }) {}

ThreadQueue::~ThreadQueue() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void ThreadQueue::Submit(std::function<void()> work) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(std::move(work));
  }
  cv_.notify_all();
}

void ThreadQueue::Drain() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [this] { return items_.empty() && running_ == 0; });
}

void ThreadQueue::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !items_.empty(); });
    if (items_.empty()) return;  // stopping and nothing left
    std::function<void()> work = std::move(items_.front());
    items_.pop_front();
    ++running_;
    lock.unlock();
    work();
    lock.lock();
    --running_;
    cv_.notify_all();
  }
}

}  // namespace brt::core
