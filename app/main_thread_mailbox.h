// The hand-off from observability's threads (civetweb's, DPDK's telemetry thread) to the switch's
// main (control) thread, the only one that may read the switch's state: the FIB snapshot the
// stats read is changed and freed there (app/observability.h).
#pragma once
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace rs {

// Requests from other threads run on the main thread: call() posts a job and waits for it,
// drain() runs the posted jobs. A job owns what it writes (shared_ptr captures): a caller that
// timed out leaves, and a job already running finishes into memory that is still alive.
class MainThreadMailbox {
 public:
  enum class Result { Done, Timeout, Closed, Failed };
  // Any thread but the main one. On Failed, `error` holds the job's exception text.
  Result call(std::function<void()> job, std::chrono::milliseconds wait, std::string* error = nullptr);
  // Main thread: runs every job posted so far; returns how many ran. Lock-free when empty.
  std::size_t drain();
  // Every waiting and later call returns Closed at once; pending jobs never run.
  void close();

 private:
  struct Job {
    std::function<void()> fn;
    bool done = false;
    std::string error;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<std::size_t> pending_{0};
  bool closed_ = false;
};

}  // namespace rs
