#include "app/main_thread_mailbox.h"

#include <algorithm>
#include <exception>
#include <utility>

namespace rs {

MainThreadMailbox::Result MainThreadMailbox::call(std::function<void()> fn, std::chrono::milliseconds wait,
                                                  std::string* error) {
  auto job = std::make_shared<Job>();
  job->fn = std::move(fn);
  std::unique_lock lk(mu_);
  if (closed_) return Result::Closed;
  queue_.push_back(job);
  pending_.store(queue_.size(), std::memory_order_release);
  cv_.wait_for(lk, wait, [&] { return job->done || closed_; });
  if (job->done) {
    if (job->error.empty()) return Result::Done;
    if (error) *error = job->error;
    return Result::Failed;
  }
  // Not run yet: take it back. Already running: it finishes into its own captures.
  if (auto it = std::find(queue_.begin(), queue_.end(), job); it != queue_.end()) {
    queue_.erase(it);
    pending_.store(queue_.size(), std::memory_order_release);
  }
  return closed_ ? Result::Closed : Result::Timeout;
}

std::size_t MainThreadMailbox::drain() {
  if (pending_.load(std::memory_order_acquire) == 0) return 0;
  std::deque<std::shared_ptr<Job>> jobs;
  {
    std::lock_guard lk(mu_);
    jobs.swap(queue_);
    pending_.store(0, std::memory_order_release);
  }
  for (auto& job : jobs) {
    std::string error;
    try {
      job->fn();
    } catch (const std::exception& e) {
      error = *e.what() ? e.what() : "unknown error";
    } catch (...) {
      error = "unknown error";
    }
    {
      std::lock_guard lk(mu_);
      job->error = std::move(error);
      job->done = true;
    }
    cv_.notify_all();
  }
  return jobs.size();
}

void MainThreadMailbox::close() {
  {
    std::lock_guard lk(mu_);
    closed_ = true;
    queue_.clear();
    pending_.store(0, std::memory_order_release);
  }
  cv_.notify_all();
}

}  // namespace rs
