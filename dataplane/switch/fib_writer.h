// Publishes route and group changes to the workers as whole snapshots, without copying the
// route tables and without pausing a worker. Two route banks take turns: a commit applies its
// changes to the spare bank, which no worker reads, and publishes a snapshot of that bank and
// the group tables with one pointer store (RcuSnapshot), so the whole batch becomes visible at
// once. After the grace period (every worker has passed a quiescent state, rte_rcu_qsbr) the
// other bank has no reader left and the same changes are replayed on it: it is the next spare.
// The memory is two banks; each change is applied twice, once on each.
// Called from one control thread only.
#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/core/rcu_snapshot.h"
#include "dataplane/tables/fib.h"

struct rte_rcu_qsbr;

namespace rs {

class FibWriter {
 public:
  FibWriter(RcuSnapshot<Fib>& fib, rte_rcu_qsbr* qsbr, RouteLimits limits);
  FibWriter(const FibWriter&) = delete;
  FibWriter& operator=(const FibWriter&) = delete;

  // Start-up: both banks get `routes`; publishes the first snapshot. Throws with the reason.
  void load(std::shared_ptr<const FibGroups> groups, const std::vector<RouteSpec>& routes);

  struct RouteChange {
    RouteSpec route;                // prefix and, unless `remove`, its new group
    bool remove = false;
    std::optional<uint32_t> before;  // the group the prefix had, if any (to undo)
    std::size_t op = 0;             // the request's operation index, for errors
  };
  struct Failure {
    std::size_t op;
    std::string reason;
  };
  // One snapshot: `changes` applied in order on the spare bank and, if given, new group tables
  // (null keeps them). First waits until the spare has no reader, calling `wait` between
  // checks (a stepped test polls its workers there). When a table is full the spare is put
  // back as it was, nothing is published, and the failing change is named.
  std::optional<Failure> commit(const std::vector<RouteChange>& changes, std::shared_ptr<const FibGroups> groups,
                                const std::function<void()>& wait);
  // Non-blocking: if the last commit's grace period is over, replays it on the spare. True when
  // the spare is ready. The control thread calls it when idle, so a commit rarely waits.
  bool catch_up();

  const RouteLimits& limits() const { return limits_; }

 private:
  std::optional<Failure> apply(RouteBank& bank, const std::vector<RouteChange>& changes, bool undo_on_failure);

  RcuSnapshot<Fib>& fib_;
  rte_rcu_qsbr* qsbr_;
  RouteLimits limits_;
  std::shared_ptr<RouteBank> bank_[2];
  int live_ = 0;                       // the bank the published snapshot reads
  std::shared_ptr<const FibGroups> groups_;
  std::vector<RouteChange> pending_;   // applied on bank_[live_], not yet on the spare
  bool spare_behind_ = false;
  uint64_t token_ = 0;
};

}  // namespace rs
