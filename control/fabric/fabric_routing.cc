#include "control/fabric/fabric_routing.h"

#include <fmt/core.h>

#include <cstring>
#include <set>

#include "control/fabric/fabric_topology.h"
#include "control/runtime/running_state.h"

namespace rs {

FabricRouting::FabricRouting(Fabric& fab, uint64_t convergence_ns) : fab_(fab), convergence_ns_(convergence_ns) {
  std::set<uint64_t> at;
  for (std::size_t c = 0; c < fab.num_cables(); ++c)
    for (const auto& [t, up] : fab.cable_spec(c).events) at.insert(t + convergence_ns);
  for (uint64_t t : at) fab.at(t, [this] { converge(); });
}

FabricRouting::~FabricRouting() = default;

void FabricRouting::converge() {
  const FabricSpec& spec = fab_.spec();
  std::vector<bool> up(fab_.num_cables());
  for (std::size_t c = 0; c < up.size(); ++c) up[c] = fab_.cable(c).up();
  const auto hops = fabric_next_hops(spec, up);
  if (state_.empty()) state_.resize(fab_.num_switches());
  Update u;
  u.at_ns = fab_.now() - fab_.start();
  for (std::size_t s = 0; s < fab_.num_switches(); ++s) {
    if (!state_[s]) state_[s] = std::make_unique<RunningState>(fab_.at(s));
    RunningState& st = *state_[s];
    // The group a set of members has (the first made for it), and what a new group copies (its
    // policy, table size): the group the host's route had, else any group towards a switch.
    auto group_with = [&](const std::vector<uint16_t>& ports) -> std::optional<uint32_t> {
      for (uint32_t g = 0; g < st.group_slots(); ++g)
        if (st.group(g) && member_ports(st.group(g)->members) == ports) return g;
      return std::nullopt;
    };
    std::optional<GroupSpec> any;
    for (uint32_t g = 0; g < st.group_slots() && !any; ++g)
      if (st.group(g) && !st.group(g)->members.empty() && spec.switches[s].cfg.ports[st.group(g)->members[0].port].kind == PortKind::Link)
        any = st.group(g);
    std::size_t op = 0, withdrawn = 0;
    st.begin();
    try {
      for (const HostNextHops& h : hops[s]) {
        if (h.local) continue;
        RouteSpec r;
        std::memcpy(r.addr, &h.ip, 4);
        r.depth = 32;
        const auto had = st.routes().find(route_key(r));
        const std::vector<uint16_t> ports = member_ports(h.members);
        std::optional<GroupSpec> before;
        if (had != st.routes().end()) {
          before = st.group(had->second);
          if (before && member_ports(before->members) == ports) continue;
        } else if (ports.empty()) {
          continue;
        }
        if (ports.empty()) {
          st.route_del(op++, r);
          ++withdrawn;
          continue;
        }
        auto gid = group_with(ports);
        if (!gid) {
          GroupSpec g = before ? *before : any ? *any : GroupSpec{};
          g.origin = GroupOrigin::Config;
          g.drop = false;  // the members below forward, whatever the group copied was
          // The route's flows on members that stay keep them (resilient, as ECMP on a real
          // switch's group change): from the route's old group, when it had one.
          g.table_from = before ? before->name : "";
          g.members = h.members;
          g.name = fmt::format("to_{}", spec.switches[h.to_switch].name);
          for (int k = 2; st.group_id(g.name); ++k) g.name = fmt::format("to_{}_{}", spec.switches[h.to_switch].name, k);
          const std::string name = g.name;
          st.group_add(op, std::move(g));
          gid = st.group_id(name);
        }
        st.route_add(op++, r, st.group(*gid)->name, true);
      }
    } catch (const OpError& e) {
      st.abort();
      u.errors.push_back(fmt::format("{}: {}: {}", spec.switches[s].name, e.field, e.reason));
      continue;
    }
    if (op == 0) {
      st.abort();
      continue;
    }
    Switch& sw = fab_.at(s);
    if (auto f = st.commit([&sw] { sw.quiesce_stepped(); })) {
      u.errors.push_back(fmt::format("{}: {}", spec.switches[s].name, f->second.reason));
      continue;
    }
    ++u.switches;
    u.routes += op;
    u.withdrawn += withdrawn;
  }
  updates_.push_back(std::move(u));
}

nlohmann::json FabricRouting::json() const {
  nlohmann::json j;
  j["convergence_us"] = static_cast<double>(convergence_ns_) / 1e3;
  j["updates"] = nlohmann::json::array();
  for (const Update& u : updates_)
    j["updates"].push_back({{"at_us", static_cast<double>(u.at_ns) / 1e3},
                            {"switches", u.switches},
                            {"routes", u.routes},
                            {"withdrawn", u.withdrawn},
                            {"errors", u.errors}});
  return j;
}

}  // namespace rs
