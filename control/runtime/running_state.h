// The running switch as the control plane sees it: the configuration it started from, changed
// by operations. Every change is a transaction: operations apply one by one to this model,
// each recording how to undo itself; the first error undoes them all and names the operation's
// index, the field and the reason; a valid batch becomes one commit to the data plane (one FIB
// snapshot through the FibWriter, so the workers see all of it at once or none of it).
// One thread (the control thread) uses it.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/switch/switch.h"

namespace rs {

// What the control plane accepts at most; a request over a limit changes nothing.
struct ControlLimits {
  uint32_t groups = 4096;          // P4 nexthop_selector groups
  uint32_t nexthops = kMaxNexthops;
  uint32_t request_bytes = 64u << 20;
  uint32_t ops_per_request = 1u << 20;
  uint32_t connections = 16;
  uint32_t mirror_sessions = 64;
};

struct RouteKey {
  bool ipv6 = false;
  std::array<uint8_t, 16> addr{};
  uint8_t depth = 0;
  auto operator<=>(const RouteKey&) const = default;
};
// The same order as RouteKey's <=> (family, address bytes, depth), compared as two 64-bit
// words: the route model's map compares keys on every step of every lookup.
struct RouteKeyLess {
  static uint64_t word(const RouteKey& k, int i) {
    uint64_t w;
    std::memcpy(&w, k.addr.data() + 8 * i, 8);
    return __builtin_bswap64(w);
  }
  bool operator()(const RouteKey& a, const RouteKey& b) const {
    if (a.ipv6 != b.ipv6) return b.ipv6;
    const uint64_t a0 = word(a, 0), b0 = word(b, 0);
    if (a0 != b0) return a0 < b0;
    const uint64_t a1 = word(a, 1), b1 = word(b, 1);
    if (a1 != b1) return a1 < b1;
    return a.depth < b.depth;
  }
};
using RouteMap = std::map<RouteKey, uint32_t, RouteKeyLess>;
RouteKey route_key(const RouteSpec& r);
RouteSpec route_spec(const RouteKey& k, uint32_t group = 0);
std::string format_prefix(const RouteKey& k);

// An operation's failure: `field` is the key path inside the operation ("prefix",
// "members[1].port"), the transaction adds its index.
struct OpError {
  std::string field;
  std::string reason;
};

class RunningState {
 public:
  RunningState(Switch& sw, ControlLimits limits = {});

  // A transaction. Every mutation below is legal only between begin() and commit()/abort().
  void begin();
  // Publishes the batch (one snapshot); on a data-plane refusal (a route table full) undoes the
  // model, and returns the failing operation's index and reason.
  std::optional<std::pair<std::size_t, OpError>> commit(const std::function<void()>& wait);
  void abort();  // undoes every operation of the transaction
  // State kept beside the model (the BMv2 CLI's handles) undoes itself with the transaction.
  void on_abort(std::function<void()> undo) {
    require_txn();
    txn_.undo.push_back(std::move(undo));
  }

  // Operations; each throws OpError and leaves the model as it was before it.
  // A route names a group of nexthop_groups, or its own group (`route:PREFIX`, as the config's
  // port + mac and nexthops forms make): own_members gives the latter, created or changed with
  // the route. A route's own group goes when its route goes or names another group.
  void route_add(std::size_t op, const RouteSpec& r, const std::string& group, bool replace);
  // A route's own group: its members, or none and `drop` (a blackhole route).
  void route_add_own(std::size_t op, const RouteSpec& r, std::vector<GroupMemberSpec> own_members, bool replace, bool drop = false);
  void route_del(std::size_t op, const RouteSpec& r);
  void group_add(std::size_t op, GroupSpec g);
  void group_set(std::size_t op, GroupSpec g);  // replaces the group of that name, id kept
  void group_del(std::size_t op, const std::string& name);
  void port_admin(std::size_t op, uint16_t port, bool up);
  // The classification maps (trust, dscp_to_tc, pcp_to_tc, tc_to_queue, cnp_queue); the
  // lossless mapping (tc_to_pg, PFC) stays as configured.
  void qos_set(std::size_t op, const QosMaps& maps);
  const QosMaps& qos() const { return base_.qos; }
  // Mirror sessions (config mirror_sessions; the P4 mirror sessions and mirror tables): set adds
  // or replaces the session of that name, del removes it and its watched ports.
  void mirror_set(std::size_t op, MirrorSessionSpec s);
  void mirror_del(std::size_t op, const std::string& name);
  const std::vector<MirrorSessionSpec>& mirror_sessions() const { return base_.mirror_sessions; }

  // Port and buffer settings (the config's ports[].speed_gbps, queues, cable_length_m and its
  // lossless sections: buffer, wred_profiles, queue_wred, pfcwd, qos.pfc_quanta): `next` is a
  // configuration with new values there (config() edited; its groups and routes are ignored).
  // It is checked as a file is (a dump of it must load back), and what is set at start-up
  // (the buffer's cell size, which PGs are lossless) must be as it is. The switch applies it
  // at commit (Switch::reconfigure_ports), hitlessly.
  void settings_set(std::size_t op, SwitchConfig next);
  // The switch as a host on its links (control/local): the ports' addresses, icmp_unreachable,
  // lldp and VLAN membership, the VLANs and their interfaces, and the lldp, neighbours, copp and
  // bridge sections (copy_host_settings), from `next` (config() edited, checked by the config
  // loader). An address's routes (its /32 or /128 to `local`, its subnet to a connected group)
  // come and go with it in this transaction; one whose prefix another route holds is refused (a
  // neighbour's gives way), and so is a change that leaves a next hop group members name by IP
  // outside its interface's subnets. The rest is the switch's at commit
  // (Switch::set_host_settings); the neighbours of a subnet that went are forgotten by the
  // LocalAgent on its next poll. What is set at start-up (the FDB's size; VLANs on a switch that
  // started without a bridge; addresses, LLDP or icmp_unreachable on one that started without a
  // path to its control plane) is refused, naming the field.
  void host_set(std::size_t op, const SwitchConfig& next);

  // What the switch's control plane changes by itself (control/local): a resolved neighbour's
  // host route (its own group "neighbour:IP", origin Neighbour), and the members that name a
  // next hop by IP, resolved with its MAC or unresolved again (nullopt). These groups and the
  // ports' own routes (origins Local and Connected) are refused to the operations above.
  // A neighbour on a VLAN interface has its `vlan` and the port it was found on.
  void neighbour_route_set(std::size_t op, const IpAddr& ip, uint16_t port, const rte_ether_addr& mac, uint16_t vlan = 0);
  void neighbour_route_del(std::size_t op, const IpAddr& ip);
  // The members naming `ip` on interface `iface` (a port, or svi_iface(vlan)); on a VLAN's,
  // `port` is where the neighbour was found.
  void via_resolve(std::size_t op, const IpAddr& ip, uint16_t iface, uint16_t port, std::optional<rte_ether_addr> mac);
  // The next hops by IP that members name: address and interface (a port, or svi_iface(vlan)).
  std::vector<std::pair<IpAddr, uint16_t>> via_next_hops() const;

  // Reads.
  const RouteMap& routes() const { return routes_; }
  std::size_t routes_v4() const { return count_[0]; }
  std::size_t routes_v6() const { return count_[1]; }
  const std::optional<GroupSpec>& group(uint32_t id) const { return groups_[id]; }
  std::size_t group_slots() const { return groups_.size(); }
  std::optional<uint32_t> group_id(const std::string& name) const;
  uint32_t route_refs(uint32_t id) const { return refs_[id]; }
  const std::vector<uint32_t>& member_nexthops(uint32_t id) const { return nh_of_[id]; }
  int port_index(const std::string& name) const;
  const ControlLimits& limits() const { return limits_; }
  const Switch& sw() const { return sw_; }
  // The state as a configuration: what `config dump` writes and start-up reads back
  // (with_fib false: without its groups and routes).
  SwitchConfig config(bool with_fib = true) const;

 private:
  void require_txn() const;
  uint32_t alloc_nexthop();
  void drop_own_group(std::size_t op, uint32_t gid, const RouteKey& k);
  void mark_group(uint32_t id);
  // The operations above refuse what the switch made by itself, unless it is the switch asking.
  void refuse_derived(const std::string& field, uint32_t group) const;
  bool internal_ = false;
  // The switch's own requests (control/local, an interface's routes) pass those checks.
  struct Internal {
    bool& flag;
    bool before;
    explicit Internal(bool& f) : flag(f), before(f) { flag = true; }
    ~Internal() { flag = before; }
  };
  // An interface's routes as its addresses change (running_host.cc).
  void interface_routes_set(std::size_t op, const SwitchConfig& next);

  Switch& sw_;
  ControlLimits limits_;
  SwitchConfig base_;  // ports, QoS, buffers...: the start-up config without groups and routes
  std::vector<std::optional<GroupSpec>> groups_;  // by id; nullopt: a deleted group's slot
  std::vector<std::vector<uint32_t>> nh_of_;      // by group id: each member's next-hop id
  std::vector<uint32_t> refs_;                    // by group id: routes naming it
  std::map<std::string, uint32_t> group_ids_;
  std::vector<uint32_t> free_nh_;
  uint32_t nh_count_ = 0;
  RouteMap routes_;
  std::size_t count_[2]{};  // IPv4, IPv6 routes
  std::vector<bool> admin_;

  // A route change's undo record: the prefix's group before it, if it had one, and the group
  // it was given (none for a delete). Kept beside the undo list, which holds for each one a
  // closure small enough for std::function to store without allocating.
  struct RouteUndo {
    RouteKey key;
    int64_t before;  // -1: the prefix was not routed
    int64_t after;   // -1: deleted
  };
  void undo_route(const RouteUndo& u);

  struct Txn {
    bool open = false;
    std::vector<std::function<void()>> undo;
    std::vector<RouteUndo> route_undo;
    std::vector<FibWriter::RouteChange> changes;
    std::vector<bool> group_changed;  // by id
    bool groups_dirty = false;
    std::vector<std::size_t> group_ops;  // op index of each group change (errors at commit)
    std::vector<std::pair<uint16_t, bool>> admin;
    bool qos_dirty = false;
    std::vector<std::size_t> mirror_ops;  // op index of each mirror change
    std::vector<std::size_t> settings_ops;  // op index of each port/buffer settings change
    bool host_dirty = false;                // host_set changed base_
  } txn_;
};

}  // namespace rs
