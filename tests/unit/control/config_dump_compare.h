// The config dump tests' comparison (config_dump_test.cc, config_dump_routes_test.cc): two
// SwitchConfigs field by field, each mismatch naming its field, and the round trip (dump, reload,
// compare, dump again to the same text).
#pragma once
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "control/config/config_dump.h"
#include "control/config/config_loader.h"

namespace rs::test {

// ---- field-level comparison: each mismatch names its field, as "cfg.ports[1].host.flows[0].qp".

#define RS_FIELD(x) EXPECT_EQ(a.x, b.x) << at << "." #x
inline std::string mac(const rte_ether_addr& m) { return fmt::format("{:02x}", fmt::join(m.addr_bytes, m.addr_bytes + RTE_ETHER_ADDR_LEN, ":")); }
#define RS_MAC(x) EXPECT_EQ(mac(a.x), mac(b.x)) << at << "." #x
// Lists: the sizes first; elements only when they agree.
template <typename T, typename F>
inline void each(const std::vector<T>& a, const std::vector<T>& b, const std::string& at, F fn) {
  EXPECT_EQ(a.size(), b.size()) << at << ".size()";
  for (std::size_t i = 0; i < a.size() && a.size() == b.size(); ++i) fn(a[i], b[i], fmt::format("{}[{}]", at, i));
}
#define RS_EACH(list, fn) each(a.list, b.list, at + "." #list, fn)

inline void equal_flow(const HostFlowSpec& a, const HostFlowSpec& b, const std::string& at) {
  RS_FIELD(dst_ip); RS_FIELD(rate_gbps); RS_FIELD(dscp); RS_FIELD(ecn); RS_FIELD(payload); RS_FIELD(qp);
  RS_FIELD(opcode); RS_FIELD(priority); RS_FIELD(start_ns); RS_FIELD(stop_ns);
}

inline void equal_port(const PortSpec& a, const PortSpec& b, const std::string& at) {
  RS_FIELD(name); RS_FIELD(kind); RS_FIELD(devargs); RS_MAC(mac); RS_FIELD(worker); RS_FIELD(admin_up);
  RS_FIELD(addrs.size()); RS_FIELD(icmp_unreachable); RS_FIELD(lldp); RS_FIELD(access_vlan); RS_FIELD(tagged_vlans);
  for (std::size_t i = 0; i < a.addrs.size() && i < b.addrs.size(); ++i)
    EXPECT_TRUE(a.addrs[i] == b.addrs[i]) << at << ".addrs[" << i << "] " << format_ip(a.addrs[i].addr) << " vs " << format_ip(b.addrs[i].addr);
  RS_FIELD(egress.speed_gbps); RS_FIELD(egress.sched); RS_FIELD(egress.weights);
  for (int q = 0; q < 8; ++q) {
    RS_FIELD(egress.limits[q].packets) << " q" << q;
    RS_FIELD(egress.limits[q].bytes) << " q" << q;
  }
  RS_FIELD(host.ip); RS_MAC(host.mac); RS_MAC(host.gateway); RS_FIELD(host.receiver); RS_FIELD(host.rx_flow_capacity);
  RS_FIELD(host.storm.priority); RS_FIELD(host.storm.start_ns); RS_FIELD(host.storm.stop_ns); RS_FIELD(host.storm.quanta);
  RS_FIELD(faults.direction); RS_FIELD(faults.drop); RS_FIELD(faults.corrupt); RS_FIELD(faults.corrupt_offset);
  RS_FIELD(faults.duplicate); RS_FIELD(faults.delay_ns); RS_FIELD(faults.jitter_ns); RS_FIELD(faults.stuck_start_ns);
  RS_FIELD(faults.stuck_stop_ns); RS_FIELD(faults.stuck_pfc); RS_FIELD(faults.stuck_quanta);
  RS_EACH(host.flows, equal_flow);
  EXPECT_TRUE(a.host.nic == b.host.nic) << at << ".host.nic";
  EXPECT_TRUE(a.host.qps == b.host.qps) << at << ".host.qps";
  RS_FIELD(lossless.cable_length_m); RS_FIELD(lossless.dynamic_th); RS_FIELD(lossless.reserved); RS_FIELD(lossless.pfc_quanta);
  for (int g = 0; g < 8; ++g) {
    const std::string pg = fmt::format("{}.lossless.pg[{}]", at, g);
    const PgSettings &x = a.lossless.pg[g], &y = b.lossless.pg[g];
    EXPECT_EQ(x.lossless, y.lossless) << pg << ".lossless";
    EXPECT_EQ(x.xoff, y.xoff) << pg << ".xoff";
    EXPECT_EQ(x.xon, y.xon) << pg << ".xon";
    EXPECT_EQ(x.headroom, y.headroom) << pg << ".headroom";
    EXPECT_EQ(x.headroom_min, y.headroom_min) << pg << ".headroom_min";
  }
  for (int q = 0; q < 8; ++q) {
    const std::string wq = fmt::format("{}.lossless.wred[{}]", at, q);
    const WredProfile &x = a.lossless.wred[q], &y = b.lossless.wred[q];
    EXPECT_EQ(x.enabled, y.enabled) << wq << ".enabled";
    EXPECT_EQ(x.wred_drop, y.wred_drop) << wq << ".wred_drop";
    EXPECT_EQ(x.ecn_mark, y.ecn_mark) << wq << ".ecn_mark";
    EXPECT_EQ(x.kmin, y.kmin) << wq << ".kmin";
    EXPECT_EQ(x.kmax, y.kmax) << wq << ".kmax";
    EXPECT_EQ(x.pmax_percent, y.pmax_percent) << wq << ".pmax_percent";
  }
}

inline void equal_member(const GroupMemberSpec& a, const GroupMemberSpec& b, const std::string& at) {
  RS_FIELD(port); RS_MAC(mac); RS_FIELD(weight); RS_FIELD(resolved); RS_FIELD(vlan); RS_FIELD(via.has_value());
  if (a.via && b.via) {
    EXPECT_EQ(format_ip(*a.via), format_ip(*b.via)) << at << ".via";
  }
}

inline void equal_svi(const VlanInterface& a, const VlanInterface& b, const std::string& at) {
  RS_FIELD(vlan); RS_MAC(mac);
  EXPECT_TRUE(a.addrs == b.addrs) << at << ".addrs";
}

inline void equal_group(const GroupSpec& a, const GroupSpec& b, const std::string& at) {
  RS_FIELD(name); RS_FIELD(origin); RS_FIELD(policy.name); RS_FIELD(policy.params); RS_FIELD(table_size);
  for (int tc = 0; tc < 8; ++tc) {
    const auto &x = a.policy_by_tc[tc], &y = b.policy_by_tc[tc];
    EXPECT_EQ(x.has_value(), y.has_value()) << at << ".policy_by_tc[" << tc << "]";
    if (x && y) {
      EXPECT_EQ(x->name, y->name) << at << ".policy_by_tc[" << tc << "].name";
      EXPECT_EQ(x->params, y->params) << at << ".policy_by_tc[" << tc << "].params";
    }
  }
  RS_EACH(members, equal_member);
}

inline void equal_route(const RouteSpec& a, const RouteSpec& b, const std::string& at) {
  RS_FIELD(ipv6); RS_FIELD(depth); RS_FIELD(group);
  EXPECT_EQ(std::string(a.addr, a.addr + 16), std::string(b.addr, b.addr + 16)) << at << ".addr";
}

inline void equal_event(const LinkEvent& a, const LinkEvent& b, const std::string& at) { RS_FIELD(port); RS_FIELD(at_ns); RS_FIELD(up); }
inline void equal_mirror(const MirrorSessionSpec& a, const MirrorSessionSpec& b, const std::string& at) {
  RS_FIELD(name); RS_FIELD(dst_port); RS_FIELD(queue); RS_FIELD(truncate); RS_FIELD(rx_ports); RS_FIELD(tx_ports);
}

// Everything but `source` (where the config came from, not what it is).
inline void equal_configs(const SwitchConfig& a, const SwitchConfig& b, const std::string& at = "cfg") {
  RS_FIELD(workers); RS_FIELD(seed); RS_FIELD(mbufs); RS_FIELD(duration_s); RS_FIELD(pipeline_text); RS_FIELD(pipeline_source);
  RS_FIELD(qos.trust); RS_FIELD(qos.dscp_to_tc); RS_FIELD(qos.pcp_to_tc); RS_FIELD(qos.tc_to_queue); RS_FIELD(qos.cnp_queue);
  RS_FIELD(mmu.pool.size); RS_FIELD(mmu.pool.cell_size); RS_FIELD(mmu.pool.mtu); RS_FIELD(mmu.pfc_enable);
  RS_FIELD(mmu.tc_to_pg); RS_FIELD(mmu.pfc_to_queue); RS_FIELD(mmu.pfcwd.enabled); RS_FIELD(mmu.pfcwd.action);
  RS_FIELD(mmu.pfcwd.detection_ns); RS_FIELD(mmu.pfcwd.restoration_ns); RS_FIELD(mmu.pfcwd.poll_ns);
  RS_FIELD(load_view.queue_thresholds_bytes); RS_FIELD(load_view.rate_thresholds_pct);
  RS_FIELD(load_view.rate_interval_ns); RS_FIELD(load_view.rate_weight);
  RS_FIELD(route_limits.v4); RS_FIELD(route_limits.v6); RS_FIELD(route_limits.v4_tbl8); RS_FIELD(route_limits.v6_tbl8);
  EXPECT_TRUE(a.copp == b.copp) << at << ".copp";
  EXPECT_TRUE(a.neighbours == b.neighbours) << at << ".neighbours";
  EXPECT_TRUE(a.lldp == b.lldp) << at << ".lldp";
  RS_FIELD(vlans);
  RS_EACH(vlan_interfaces, equal_svi);
  EXPECT_TRUE(a.collectives == b.collectives) << at << ".collectives";
  EXPECT_TRUE(a.traffic == b.traffic) << at << ".traffic";
  EXPECT_TRUE(a.bridge == b.bridge) << at << ".bridge";
  RS_EACH(ports, equal_port);
  RS_EACH(groups, equal_group);
  RS_EACH(routes, equal_route);
  RS_EACH(link_events, equal_event);
  RS_EACH(mirror_sessions, equal_mirror);
}

// ---- the property

// c's dump reloads to c, field by field, and dumps again to the same text. Returns the dump.
inline std::string round_trip(const SwitchConfig& c, const std::string& what) {
  SCOPED_TRACE(what);
  std::string d;
  try {
    d = dump_config(c);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "dump_config: " << e.what();
    return "";
  }
  SwitchConfig r;
  try {
    r = load_config_text(d, "dump.yaml");
  } catch (const ConfigError& e) {
    ADD_FAILURE() << "the loader refuses the dump: " << e.what() << "\n" << d;
    return d;
  }
  equal_configs(c, r);
  EXPECT_EQ(dump_config(r), d);
  return d;
}


}  // namespace rs::test
