#include "control/runtime/running_state.h"

#include "control/config/config_reader.h"
#include "control/config/routing_config.h"
#include "dataplane/switch/mirror_sessions.h"

#include <arpa/inet.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace rs {

RouteKey route_key(const RouteSpec& r) {
  // Host bits do not count (rte_lpm ignores them too): 10.1.0.0/8 is 10.0.0.0/8.
  const RouteSpec m = ConfigReader::masked(r);
  RouteKey k;
  k.ipv6 = m.ipv6;
  std::memcpy(k.addr.data(), m.addr, 16);
  k.depth = m.depth;
  return k;
}

RouteSpec route_spec(const RouteKey& k, uint32_t group) {
  RouteSpec r;
  r.ipv6 = k.ipv6;
  std::memcpy(r.addr, k.addr.data(), 16);
  r.depth = k.depth;
  r.group = group;
  return r;
}

std::string format_prefix(const RouteKey& k) { return ConfigReader::prefix_text(route_spec(k)); }

RunningState::RunningState(Switch& sw, ControlLimits limits) : sw_(sw), limits_(limits), base_(sw.config()) {
  const auto slots = rs::group_slots(base_);
  for (std::size_t g = 0; g < base_.groups.size(); ++g) {
    group_ids_[base_.groups[g].name] = static_cast<uint32_t>(g);
    groups_.push_back(base_.groups[g]);
    nh_of_.push_back(slots[g].nexthop);
    nh_count_ += static_cast<uint32_t>(slots[g].nexthop.size());
  }
  refs_.assign(groups_.size(), 0);
  for (auto& r : base_.routes) {
    routes_[route_key(r)] = r.group;
    ++refs_[r.group];
    ++count_[r.ipv6];
  }
  for (auto& p : base_.ports) admin_.push_back(p.admin_up);
  base_.groups.clear();
  base_.routes.clear();
}

std::optional<uint32_t> RunningState::group_id(const std::string& name) const {
  auto it = group_ids_.find(name);
  if (it == group_ids_.end()) return std::nullopt;
  return it->second;
}

int RunningState::port_index(const std::string& name) const {
  for (std::size_t i = 0; i < base_.ports.size(); ++i)
    if (base_.ports[i].name == name) return static_cast<int>(i);
  return -1;
}

void RunningState::require_txn() const {
  if (!txn_.open) throw std::logic_error("RunningState: change outside a transaction");
}

void RunningState::begin() {
  if (txn_.open) throw std::logic_error("RunningState: nested transaction");
  txn_ = Txn{};
  txn_.open = true;
}

void RunningState::abort() {
  for (auto it = txn_.undo.rbegin(); it != txn_.undo.rend(); ++it) (*it)();
  txn_ = Txn{};
}

void RunningState::mark_group(uint32_t id) {
  if (!txn_.groups_dirty) {
    // The first group change of a transaction saves the group model whole (a few thousand
    // entries at most); undoing restores it. Route changes undo themselves one by one.
    txn_.undo.push_back([this, g = groups_, n = nh_of_, r = refs_, ids = group_ids_, f = free_nh_, c = nh_count_]() mutable {
      groups_ = std::move(g);
      nh_of_ = std::move(n);
      // Routes undone after this point (earlier operations) still adjust the counts.
      refs_ = std::move(r);
      group_ids_ = std::move(ids);
      free_nh_ = std::move(f);
      nh_count_ = c;
    });
    txn_.groups_dirty = true;
  }
  if (txn_.group_changed.size() <= id) txn_.group_changed.resize(id + 1, false);
  txn_.group_changed[id] = true;
}

uint32_t RunningState::alloc_nexthop() {
  if (!free_nh_.empty()) {
    const uint32_t id = free_nh_.back();
    free_nh_.pop_back();
    return id;
  }
  if (nh_count_ >= limits_.nexthops) throw OpError{"members", fmt::format("next-hop table full ({} next hops)", limits_.nexthops)};
  return nh_count_++;
}

namespace {
std::string own_name(const RouteKey& k) { return kRouteGroupPrefix + format_prefix(k); }
}  // namespace

void RunningState::drop_own_group(std::size_t op, uint32_t gid, const RouteKey& k) {
  if (groups_[gid] && groups_[gid]->name == own_name(k) && refs_[gid] == 0) group_del(op, own_name(k));
}

void RunningState::route_add_own(std::size_t op, const RouteSpec& r, std::vector<GroupMemberSpec> own_members, bool replace,
                                 bool drop) {
  require_txn();
  const RouteKey k = route_key(r);
  GroupSpec g;
  g.name = own_name(k);
  g.members = std::move(own_members);
  g.drop = drop;
  uint32_t w = 0;
  for (auto& m : g.members) w += m.weight;
  while (g.table_size < w) g.table_size <<= 1;
  if (routes_.count(k) && !replace)
    throw OpError{"prefix", fmt::format("route {} exists; replace: true changes it (roceswitch-ctl: --replace)", format_prefix(k))};
  if (const auto id = group_id(g.name)) {
    group_set(op, std::move(g));
  } else {
    group_add(op, std::move(g));
  }
  route_add(op, r, own_name(k), true);
}

void RunningState::refuse_derived(const std::string& field, uint32_t group) const {
  if (internal_ || group >= groups_.size() || !groups_[group]) return;
  switch (groups_[group]->origin) {
    case GroupOrigin::Config:
      return;
    case GroupOrigin::Local:
      throw OpError{field, "the switch's own addresses (ports[].ipv4 / ipv6) route there: change the port's address (port.set)"};
    case GroupOrigin::Connected:
      throw OpError{field, fmt::format("'{}' is a port's connected subnet: change the port's address (port.set)", groups_[group]->name)};
    case GroupOrigin::Neighbour:
      throw OpError{field, fmt::format("'{}' is a neighbour the switch resolved: it follows ARP / neighbour discovery", groups_[group]->name)};
  }
}

void RunningState::undo_route(const RouteUndo& u) {
  if (u.after >= 0) --refs_[u.after];
  else ++count_[u.key.ipv6];
  if (u.before >= 0) {
    routes_[u.key] = static_cast<uint32_t>(u.before);
    ++refs_[u.before];
  } else {
    routes_.erase(u.key);
    --count_[u.key.ipv6];
  }
}

void RunningState::route_add(std::size_t op, const RouteSpec& r, const std::string& group, bool replace) {
  require_txn();
  const auto gid = group_id(group);
  if (!gid) throw OpError{"group", fmt::format("no group '{}'", group)};
  refuse_derived("group", *gid);
  const RouteKey k = route_key(r);
  // One walk of the map finds the prefix and, when it is new, where it goes.
  auto it = routes_.lower_bound(k);
  const bool exists = it != routes_.end() && !RouteKeyLess{}(k, it->first);
  if (exists) refuse_derived("prefix", it->second);
  if (group.starts_with(kRouteGroupPrefix) && group != own_name(k))
    throw OpError{"group", fmt::format("'{}' is a route's own group; name a group of nexthop_groups, or give port + mac or nexthops", group)};
  std::optional<uint32_t> before;
  if (exists) {
    if (!replace)
      throw OpError{"prefix", fmt::format("route {} exists (group '{}'); replace: true changes it (roceswitch-ctl: --replace)", format_prefix(k),
                                          groups_[it->second] ? groups_[it->second]->name : "?")};
    before = it->second;
    it->second = *gid;
  } else {
    const uint32_t cap = r.ipv6 ? sw_.fib_writer().limits().v6 : sw_.fib_writer().limits().v4;
    if (count_[r.ipv6] >= cap)
      throw OpError{"prefix", fmt::format("IPv{} route table full ({} routes)", r.ipv6 ? 6 : 4, cap)};
    routes_.emplace_hint(it, k, *gid);
  }
  ++refs_[*gid];
  if (before) --refs_[*before];
  else ++count_[r.ipv6];
  txn_.route_undo.push_back({k, before ? int64_t{*before} : -1, *gid});
  txn_.undo.push_back([this, i = txn_.route_undo.size() - 1] { undo_route(txn_.route_undo[i]); });
  RouteSpec spec = ConfigReader::masked(r);
  spec.group = *gid;
  txn_.changes.push_back({spec, false, before, op});
  if (before && *before != *gid) drop_own_group(op, *before, k);
}

void RunningState::route_del(std::size_t op, const RouteSpec& r) {
  require_txn();
  const RouteKey k = route_key(r);
  auto it = routes_.find(k);
  if (it == routes_.end()) throw OpError{"prefix", fmt::format("no route {}", format_prefix(k))};
  refuse_derived("prefix", it->second);
  const uint32_t before = it->second;
  routes_.erase(it);
  --refs_[before];
  --count_[r.ipv6];
  txn_.route_undo.push_back({k, before, -1});
  txn_.undo.push_back([this, i = txn_.route_undo.size() - 1] { undo_route(txn_.route_undo[i]); });
  txn_.changes.push_back({ConfigReader::masked(r), true, before, op});
  drop_own_group(op, before, k);
}

namespace {
// A group's policies resolve (known names, parameters in range), or the operation fails.
void check_policies(const GroupSpec& g) {
  try {
    resolve_policy(g.policy, "policy");
    for (auto& p : g.policy_by_tc)
      if (p) resolve_policy(*p, "policy_by_tc");
  } catch (const std::runtime_error& e) {
    throw OpError{"policy", e.what()};
  }
}
}  // namespace

void RunningState::group_add(std::size_t op, GroupSpec g) {
  require_txn();
  if (group_ids_.count(g.name)) throw OpError{"name", fmt::format("group '{}' exists", g.name)};
  if (group_ids_.size() >= limits_.groups) throw OpError{"name", fmt::format("group table full ({} groups)", limits_.groups)};
  check_policies(g);
  // A free slot first, so churn does not grow the group table.
  uint32_t id = static_cast<uint32_t>(groups_.size());
  for (uint32_t i = 0; i < groups_.size(); ++i)
    if (!groups_[i]) {
      id = i;
      break;
    }
  mark_group(id);
  std::vector<uint32_t> nhs;
  for (std::size_t m = 0; m < g.members.size(); ++m) nhs.push_back(alloc_nexthop());
  if (id == groups_.size()) {
    groups_.emplace_back();
    nh_of_.emplace_back();
    refs_.push_back(0);
  }
  group_ids_[g.name] = id;
  groups_[id] = std::move(g);
  nh_of_[id] = std::move(nhs);
  txn_.group_ops.push_back(op);
}

void RunningState::group_set(std::size_t op, GroupSpec g) {
  require_txn();
  const auto id = group_id(g.name);
  if (!id) throw OpError{"name", fmt::format("no group '{}'", g.name)};
  refuse_derived("name", *id);
  g.origin = groups_[*id]->origin;
  check_policies(g);
  mark_group(*id);
  // A member that stays (same port and MAC) keeps its next-hop id, and so its counters.
  const GroupSpec& old = *groups_[*id];
  std::vector<uint32_t> old_nh = nh_of_[*id];
  std::vector<bool> kept(old.members.size(), false);
  std::vector<uint32_t> nhs(g.members.size(), UINT32_MAX);
  for (std::size_t m = 0; m < g.members.size(); ++m)
    for (std::size_t o = 0; o < old.members.size(); ++o)
      if (!kept[o] && old.members[o].port == g.members[m].port &&
          std::memcmp(&old.members[o].mac, &g.members[m].mac, sizeof(rte_ether_addr)) == 0) {
        kept[o] = true;
        nhs[m] = old_nh[o];
        break;
      }
  for (std::size_t o = 0; o < old.members.size(); ++o)
    if (!kept[o]) free_nh_.push_back(old_nh[o]);
  for (auto& n : nhs)
    if (n == UINT32_MAX) n = alloc_nexthop();
  groups_[*id] = std::move(g);
  nh_of_[*id] = std::move(nhs);
  txn_.group_ops.push_back(op);
}

void RunningState::group_del(std::size_t op, const std::string& name) {
  require_txn();
  const auto id = group_id(name);
  if (!id) throw OpError{"name", fmt::format("no group '{}'", name)};
  refuse_derived("name", *id);
  if (refs_[*id]) throw OpError{"name", fmt::format("group '{}' is used by {} route(s)", name, refs_[*id])};
  mark_group(*id);
  for (uint32_t n : nh_of_[*id]) free_nh_.push_back(n);
  nh_of_[*id].clear();
  groups_[*id].reset();
  group_ids_.erase(name);
  txn_.group_ops.push_back(op);
}

void RunningState::port_admin(std::size_t, uint16_t port, bool up) {
  require_txn();
  if (port >= admin_.size()) throw OpError{"port", fmt::format("no port {}", port)};
  const bool before = admin_[port];
  admin_[port] = up;
  txn_.undo.push_back([this, port, before] { admin_[port] = before; });
  txn_.admin.emplace_back(port, up);
}

void RunningState::qos_set(std::size_t, const QosMaps& maps) {
  require_txn();
  if (maps.cnp_queue > 7) throw OpError{"cnp_queue", "out of range [-1, 7]"};
  txn_.undo.push_back([this, before = base_.qos] { base_.qos = before; });
  base_.qos = maps;
  txn_.qos_dirty = true;
}

void RunningState::mirror_set(std::size_t op, MirrorSessionSpec s) {
  require_txn();
  auto& all = base_.mirror_sessions;
  auto at = std::find_if(all.begin(), all.end(), [&](auto& m) { return m.name == s.name; });
  if (at == all.end() && all.size() >= limits_.mirror_sessions)
    throw OpError{"name", fmt::format("{} mirror sessions: the limit (limits)", all.size())};
  std::vector<MirrorSessionSpec> next = all;
  const std::size_t index = static_cast<std::size_t>(at - all.begin());
  if (at == all.end()) next.push_back(std::move(s));
  else next[index] = std::move(s);
  if (auto bad = check_mirror_sessions(next, sw_.num_ports(), base_.mmu))
    throw bad->session == index ? OpError{bad->field, bad->reason}
                                : OpError{bad->field, fmt::format("{} (session '{}')", bad->reason, next[bad->session].name)};
  txn_.undo.push_back([this, before = all] { base_.mirror_sessions = before; });
  all = std::move(next);
  txn_.mirror_ops.push_back(op);
}

void RunningState::mirror_del(std::size_t op, const std::string& name) {
  require_txn();
  auto& all = base_.mirror_sessions;
  auto at = std::find_if(all.begin(), all.end(), [&](auto& m) { return m.name == name; });
  if (at == all.end()) throw OpError{"name", fmt::format("no mirror session '{}'", name)};
  txn_.undo.push_back([this, before = all] { base_.mirror_sessions = before; });
  all.erase(at);
  txn_.mirror_ops.push_back(op);
}

std::optional<std::pair<std::size_t, OpError>> RunningState::commit(const std::function<void()>& wait) {
  require_txn();
  if (!txn_.mirror_ops.empty() && !base_.mirror_sessions.empty()) {
    // The copies' pool, made before anything is published: the one mirror step that can fail.
    try {
      sw_.mirror().prepare();
    } catch (const std::exception& e) {
      const std::size_t op = txn_.mirror_ops.back();
      abort();
      return std::pair{op, OpError{"", e.what()}};
    }
  }
  // Port and buffer settings before the FIB: the one step after them that can fail (a route
  // table full) is undone by applying the settings from before.
  const SwitchConfig settings_before = txn_.settings_ops.empty() ? SwitchConfig{} : sw_.config();
  if (!txn_.settings_ops.empty()) {
    try {
      sw_.reconfigure_ports(base_, wait);
    } catch (const std::exception& e) {
      const std::size_t op = txn_.settings_ops.back();
      abort();
      return std::pair{op, OpError{"", e.what()}};
    }
  }
  auto undo_settings = [&] {
    if (!txn_.settings_ops.empty()) sw_.reconfigure_ports(settings_before, wait);
  };
  std::shared_ptr<FibGroups> groups;
  if (txn_.groups_dirty) {
    std::vector<GroupSlot> slots;
    for (std::size_t g = 0; g < groups_.size(); ++g) slots.push_back({groups_[g] ? &*groups_[g] : nullptr, nh_of_[g]});
    std::vector<bool> same(groups_.size(), true);
    for (std::size_t g = 0; g < txn_.group_changed.size() && g < same.size(); ++g) same[g] = !txn_.group_changed[g];
    try {
      groups = build_groups(slots, nh_count_, sw_.num_workers(), sw_.config().seed, &sw_.fib().groups(), same);
    } catch (const std::exception& e) {
      const std::size_t op = txn_.group_ops.empty() ? 0 : txn_.group_ops.back();
      undo_settings();
      abort();
      return std::pair{op, OpError{"", e.what()}};
    }
  }
  if (!txn_.changes.empty() || groups) {
    if (auto f = sw_.fib_writer().commit(txn_.changes, groups, wait)) {
      undo_settings();
      abort();
      return std::pair{f->op, OpError{"prefix", f->reason}};
    }
  }
  for (auto& [port, up] : txn_.admin) sw_.set_admin(port, up);
  if (txn_.qos_dirty) sw_.publish_qos(base_.qos);
  if (!txn_.mirror_ops.empty()) apply_mirror_sessions(sw_.mirror(), base_.mirror_sessions, sw_.num_ports());
  if (txn_.host_dirty) sw_.set_host_settings(base_);
  txn_ = Txn{};
  return std::nullopt;
}

SwitchConfig RunningState::config(bool with_fib) const {
  SwitchConfig c = base_;
  if (!with_fib) {
    for (std::size_t p = 0; p < c.ports.size(); ++p) c.ports[p].admin_up = admin_[p];
    return c;
  }
  std::vector<uint32_t> index(groups_.size(), UINT32_MAX);  // id -> position in the dump
  for (std::size_t g = 0; g < groups_.size(); ++g)
    if (groups_[g]) {
      index[g] = static_cast<uint32_t>(c.groups.size());
      c.groups.push_back(*groups_[g]);
    }
  for (auto& [k, g] : routes_) {
    c.routes.push_back(route_spec(k, index[g]));
  }
  for (std::size_t p = 0; p < c.ports.size(); ++p) c.ports[p].admin_up = admin_[p];
  c.route_limits = sw_.fib_writer().limits();  // what the switch holds (it may have raised them to fit)
  return c;
}

}  // namespace rs
