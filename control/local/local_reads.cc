// What the control plane's packet work shows: the neighbour table (stats, `neighbour.list`,
// roceswitch-ctl neighbours) and its counters.
#include <fmt/core.h>

#include "control/local/local_agent.h"
#include "dataplane/proto/mac_addr.h"

namespace rs {

nlohmann::json LocalAgent::neighbours_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Neighbour* n : table_.entries()) {
    nlohmann::json e = {{"port", port_name(n->key.iface)}, {"ip", format_ip(n->key.ip)}, {"state", nud_state_name(n->state)},
                        {"held", n->held.size()}, {"static", n->is_static}};
    e["mac"] = n->has_mac ? nlohmann::json(format_mac(n->mac)) : nlohmann::json(nullptr);
    out.push_back(std::move(e));
  }
  return out;
}

nlohmann::json LocalAgent::counters_json() const {
  const NudCounters& t = table_.counters();
  return {{"arp_requests", c_.arp_requests},
          {"arp_replies_sent", c_.arp_replies_sent},
          {"arp_replies_received", c_.arp_replies_received},
          {"arp_gratuitous", c_.arp_gratuitous},
          {"arp_ignored", c_.arp_ignored},
          {"nd_solicitations", c_.nd_solicitations},
          {"nd_adverts_sent", c_.nd_adverts_sent},
          {"nd_adverts_received", c_.nd_adverts_received},
          {"nd_ignored", c_.nd_ignored},
          {"echo_replies", c_.echo_replies},
          {"ttl_exceeded_sent", c_.ttl_exceeded_sent},
          {"unreachable_sent", c_.unreachable_sent},
          {"icmp_not_sent", c_.icmp_not_sent},
          {"other_local", c_.other_local},
          {"probes_sent", c_.probes_sent},
          {"gleaned", c_.gleaned},
          {"no_mbuf", c_.no_mbuf},
          {"fib_commits", c_.fib_commits},
          {"fib_errors", c_.fib_errors},
          {"neighbours_resolved", t.resolved},
          {"neighbours_failed", t.failed},
          {"neighbours_removed", t.removed},
          {"held_packets", t.held},
          {"hold_dropped", t.hold_dropped},
          {"originated", path_.originated()},
          {"held_now", path_.held_now()},
          {"lldp",
           {{"sent", lldp_.counters().sent},
            {"received", lldp_.counters().received},
            {"malformed", lldp_.counters().malformed},
            {"shutdowns", lldp_.counters().shutdowns},
            {"expired", lldp_.counters().expired},
            {"pfc_mismatches", lldp_.counters().pfc_mismatches}}}};
}

}  // namespace rs
