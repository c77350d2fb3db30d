#include "dataplane/switch/fib_writer.h"

#include <fmt/core.h>
#include <rte_errno.h>
#include <rte_rcu_qsbr.h>

#include <stdexcept>

namespace rs {

FibWriter::FibWriter(RcuSnapshot<Fib>& fib, rte_rcu_qsbr* qsbr, RouteLimits limits)
    : fib_(fib), qsbr_(qsbr), limits_(limits) {}

void FibWriter::load(std::shared_ptr<const FibGroups> groups, const std::vector<RouteSpec>& routes) {
  for (auto& b : bank_) {
    b = std::make_shared<RouteBank>(limits_);
    for (auto& r : routes) {
      if (r.group >= groups->groups.size()) throw std::runtime_error(fmt::format("route to unknown group {}", r.group));
      const int rc = b->add(r);
      if (rc < 0) throw std::runtime_error(fmt::format("route add failed: {}", rte_strerror(-rc)));
    }
  }
  groups_ = std::move(groups);
  live_ = 0;
  pending_.clear();
  spare_behind_ = false;
  fib_.publish(std::make_unique<Fib>(bank_[live_], groups_));
}

std::optional<FibWriter::Failure> FibWriter::apply(RouteBank& bank, const std::vector<RouteChange>& changes,
                                                   bool undo_on_failure) {
  for (std::size_t i = 0; i < changes.size(); ++i) {
    const RouteChange& c = changes[i];
    const int rc = c.remove ? bank.del(c.route.ipv6, c.route.addr, c.route.depth) : bank.add(c.route);
    if (rc >= 0) continue;
    if (undo_on_failure)
      for (std::size_t k = i; k-- > 0;) {
        const RouteChange& u = changes[k];
        if (u.before) {
          RouteSpec r = u.route;
          r.group = *u.before;
          bank.add(r);  // the prefix was there: its rules and tbl8 groups still are
        } else {
          bank.del(u.route.ipv6, u.route.addr, u.route.depth);
        }
      }
    return Failure{c.op, rc == -ENOSPC ? std::string("route table full (its rules or tbl8 groups)")
                                       : fmt::format("route table: {}", rte_strerror(-rc))};
  }
  return std::nullopt;
}

bool FibWriter::catch_up() {
  if (!spare_behind_) return true;
  if (qsbr_ && rte_rcu_qsbr_check(qsbr_, token_, false) != 1) return false;
  // The spare held what the live bank held before the last commit, and the last commit succeeded
  // on the live bank from that same content: the replay cannot fail for want of room unless the
  // two banks allocate differently; then the spare is rebuilt from scratch.
  RouteBank& spare = *bank_[1 - live_];
  if (apply(spare, pending_, false)) throw std::runtime_error("route bank replay failed: the two banks diverged");
  pending_.clear();
  spare_behind_ = false;
  return true;
}

std::optional<FibWriter::Failure> FibWriter::commit(const std::vector<RouteChange>& changes,
                                                    std::shared_ptr<const FibGroups> groups,
                                                    const std::function<void()>& wait) {
  while (!catch_up()) {
    if (wait) wait();
  }
  if (groups) {
    for (auto& c : changes)
      if (!c.remove && c.route.group >= groups->groups.size())
        return Failure{c.op, fmt::format("route to unknown group {}", c.route.group)};
  }
  const int spare = 1 - live_;
  if (auto f = apply(*bank_[spare], changes, true)) return f;
  if (groups) groups_ = std::move(groups);
  live_ = spare;
  fib_.publish(std::make_unique<Fib>(bank_[live_], groups_));
  token_ = qsbr_ ? rte_rcu_qsbr_start(qsbr_) : 0;
  pending_ = changes;
  spare_behind_ = true;
  return std::nullopt;
}

}  // namespace rs
