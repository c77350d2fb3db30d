// A table the control plane replaces while workers read it (DPDK's QSBR RCU): readers load one
// pointer per poll loop and never wait; publish() swaps in a new immutable snapshot and keeps
// the old one until every worker has reported a quiescent state since the swap (reclaim()).
// Writers are one thread (the control plane); never called by a worker.
#pragma once
#include <rte_rcu_qsbr.h>

#include <atomic>
#include <memory>
#include <vector>

namespace rs {

template <typename T>
class RcuSnapshot {
 public:
  explicit RcuSnapshot(rte_rcu_qsbr* qsbr = nullptr) : qsbr_(qsbr) {}
  RcuSnapshot(const RcuSnapshot&) = delete;
  RcuSnapshot& operator=(const RcuSnapshot&) = delete;

  void set_qsbr(rte_rcu_qsbr* qsbr) { qsbr_ = qsbr; }
  // Readers: one acquire load; the snapshot stays valid until the reader's next quiescent state.
  const T* load() const { return cur_.load(std::memory_order_acquire); }

  // One pointer store publishes; the grace period starts after it, so a worker still holding
  // the old snapshot is waited for. The first publication (no readers yet) retires nothing.
  void publish(std::unique_ptr<T> next) {
    cur_.store(next.get(), std::memory_order_release);
    if (owned_) retired_.push_back({std::move(owned_), qsbr_ ? rte_rcu_qsbr_start(qsbr_) : 0});
    owned_ = std::move(next);
  }
  // Frees the retired snapshots no worker can still see.
  void reclaim() {
    std::erase_if(retired_, [&](Retired& r) { return !qsbr_ || rte_rcu_qsbr_check(qsbr_, r.token, false) == 1; });
  }
  // Teardown, once no worker runs.
  void clear() {
    cur_.store(nullptr, std::memory_order_release);
    retired_.clear();
    owned_.reset();
  }

 private:
  struct Retired {
    std::unique_ptr<T> snapshot;
    uint64_t token;
  };
  std::atomic<const T*> cur_{nullptr};
  std::unique_ptr<T> owned_;
  std::vector<Retired> retired_;
  rte_rcu_qsbr* qsbr_;
};

}  // namespace rs
