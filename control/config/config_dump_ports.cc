// dump_config's ports section: each port with its queues, its emulated host and its faults.
#include <fmt/core.h>

#include <algorithm>
#include <string>
#include <vector>

#include "control/config/config_writer.h"

namespace rs::dump {
namespace {

void write_host(Out& o, const HostSpec& h, const std::string& hp) {
  o.begin_map("host").kv("ip", ip_text(false, &h.ip)).kmac("mac", h.mac);
  if (!rte_is_zero_ether_addr(&h.gateway)) o.kmac("gateway", h.gateway);
  if (!h.receiver.empty()) o.ks("receiver", h.receiver);
  if (!h.flows.empty()) o.begin_seq("flows");
  for (std::size_t k = 0; k < h.flows.size(); ++k) {
    const HostFlowSpec& f = h.flows[k];
    const std::string fp = fmt::format("{}.flows[{}]", hp, k);
    o.begin_map(nullptr, true).kv("dst", ip_text(false, &f.dst_ip)).kv("rate_gbps", real(f.rate_gbps));
    o.kv("dscp", static_cast<unsigned>(f.dscp)).kv("ecn", static_cast<unsigned>(f.ecn)).kv("payload", f.payload);
    // qp always: the loader's default depends on the flow's index.
    o.kv("qp", fmt::format("{:#x}", f.qp)).kv("opcode", fmt::format("{:#04x}", f.opcode));
    if (f.priority >= 0) o.kv("priority", static_cast<int>(f.priority));  // -1: from the switch's maps
    o.kv("start_s", seconds(f.start_ns, fp + ".start_ns"));
    if (f.stop_ns != UINT64_MAX) o.kv("stop_s", seconds(f.stop_ns, fp + ".stop_ns"));  // max: to the end
    o.end_map();
  }
  if (!h.flows.empty()) o.end_seq();
  if (h.nic.enabled) {
    const nic::NicSpec& n = h.nic;
    o.begin_map("nic").kv("mtu", n.rc.mtu).kv("cc", n.dcqcn ? "dcqcn" : "none").kv("ack_req_every", n.rc.ack_req_every);
    o.kv("ack_every", n.rc.ack_every).kv("retransmit_us", time_text(n.rc.retransmit_ns, 1e3, 1, 1e7, hp + ".nic.retransmit_ns"));
    o.kv("max_outstanding", n.rc.max_outstanding).kv("reorder", n.rc.placement ? "placement" : "go_back_n");
    const nic::DcqcnConfig& c = n.cc;
    o.begin_map("dcqcn", true).kv("rpg_time_reset", real(c.rpg_time_reset_us)).kv("rpg_byte_reset", c.rpg_byte_reset);
    o.kv("rpg_threshold", c.rpg_threshold);
    if (c.rpg_ai_rate_mbps > 0) o.kv("rpg_ai_rate", real(c.rpg_ai_rate_mbps));  // 0: scaled to the line rate
    if (c.rpg_hai_rate_mbps > 0) o.kv("rpg_hai_rate", real(c.rpg_hai_rate_mbps));
    o.kv("rpg_min_rate", real(c.rpg_min_rate_mbps)).kv("rate_to_set_on_first_cnp", real(c.rate_to_set_on_first_cnp_mbps));
    o.kv("dce_tcp_g", c.dce_tcp_g).kv("dce_tcp_rtt", real(c.dce_tcp_rtt_us)).kv("rate_reduce_monitor_period", real(c.rate_reduce_monitor_period_us));
    o.kv("initial_alpha_value", c.initial_alpha_value).kv("clamp_tgt_rate", c.clamp_tgt_rate);
    o.kv("min_time_between_cnps", real(c.min_time_between_cnps_us)).kv("cnp_dscp", static_cast<unsigned>(c.cnp_dscp));
    o.kv("cnp_802p_prio", static_cast<unsigned>(c.cnp_802p_prio)).end_map().end_map();
  }
  // A collective's queue pairs are its own: the loader makes them again from `collectives`.
  const bool own_qps = std::any_of(h.qps.begin(), h.qps.end(), [](const nic::QpSpec& q) { return q.tag == 0 && q.traffic == 0; });
  if (own_qps) o.begin_seq("qps");
  for (std::size_t k = 0; k < h.qps.size(); ++k) {
    const nic::QpSpec& q = h.qps[k];
    if (q.tag || q.traffic) continue;  // made again from its collective or traffic pattern
    if (q.gate != nic::QpSpec::kNoGate) unrepresentable(fmt::format("{}.qps[{}].gate", hp, k), "only a collective's queue pairs wait for another");
    const std::string qp = fmt::format("{}.qps[{}]", hp, k);
    o.begin_map(nullptr, true).kv("dst", ip_text(false, &q.peer_ip)).kv("qpn", fmt::format("{:#x}", q.qpn)).kv("dscp", static_cast<unsigned>(q.dscp));
    if (q.priority >= 0) o.kv("priority", static_cast<int>(q.priority));
    o.kv("message_bytes", q.message_bytes).kv("messages", q.messages).kv("depth", q.depth);
    o.kv("interval_us", time_text(q.interval_ns, 1e3, 0, 1e9, qp + ".interval_ns")).kv("op", q.write ? "write" : "send");
    if (q.rate_gbps > 0) o.kv("rate_gbps", real(q.rate_gbps));
    o.kv("start_s", seconds(q.start_ns, qp + ".start_ns"));
    if (q.stop_ns != UINT64_MAX) o.kv("stop_s", seconds(q.stop_ns, qp + ".stop_ns"));
    o.end_map();
  }
  if (own_qps) o.end_seq();
  const HostPfcStorm& st = h.storm;
  if (st.priority >= 0) {
    o.begin_map("pfc_storm", true).kv("priority", static_cast<int>(st.priority)).kv("start_s", seconds(st.start_ns, hp + ".storm.start_ns"));
    if (st.stop_ns != UINT64_MAX) o.kv("stop_s", seconds(st.stop_ns, hp + ".storm.stop_ns"));
    o.kv("quanta", st.quanta).end_map();
  }
  o.end_map();
}

void write_faults(Out& o, const FaultSpec& f, const std::string& fp) {
  o.begin_map("faults");
  o.kv("direction", f.direction == FaultSpec::kRx ? "rx" : f.direction == FaultSpec::kTx ? "tx" : "both");
  if (f.direction == 0 || f.direction > 3) unrepresentable(fp + ".direction", "neither rx nor tx");
  o.kv("drop", real(f.drop)).kv("corrupt", real(f.corrupt));
  if (f.corrupt_offset >= 0) o.kv("corrupt_offset", f.corrupt_offset);
  o.kv("duplicate", real(f.duplicate));
  o.kv("delay_us", time_text(f.delay_ns, 1e3, 0, 1e6, fp + ".delay_ns"));
  o.kv("jitter_us", time_text(f.jitter_ns, 1e3, 0, 1e6, fp + ".jitter_ns"));
  if (f.stuck_start_ns != UINT64_MAX) {
    o.begin_map("stuck", true).kv("start_s", seconds(f.stuck_start_ns, fp + ".stuck_start_ns"));
    if (f.stuck_stop_ns != UINT64_MAX) o.kv("stop_s", seconds(f.stuck_stop_ns, fp + ".stuck_stop_ns"));
    std::vector<int> pfc;
    for (int p = 0; p < 8; ++p)
      if (f.stuck_pfc & (1u << p)) pfc.push_back(p);
    o.list("pfc", pfc, [](int p) { return p; }).kv("quanta", f.stuck_quanta).end_map();
  } else if (f.stuck_stop_ns != UINT64_MAX || f.stuck_pfc || f.stuck_quanta != 0xffff) {
    unrepresentable(fp + ".stuck_start_ns", "a stuck receiver's stop or priorities without its start");
  }
  o.end_map();
}

// ipv4 / ipv6 of a port or a VLAN interface, as lists.
void write_addresses(Out& o, const std::vector<InterfaceAddress>& addrs) {
  for (const bool v6 : {false, true}) {
    std::vector<std::string> a;
    for (auto& x : addrs)
      if (x.addr.v6 == v6) a.push_back(fmt::format("{}/{}", format_ip(x.addr), x.depth));
    if (!a.empty()) o.list(v6 ? "ipv6" : "ipv4", a, [](const std::string& t) { return t; });
  }
}

}  // namespace

void write_ports(Out& o, const SwitchConfig& cfg) {
  const HostSpec kNoHost;
  o.begin_seq("ports");
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    const PortSpec& p = cfg.ports[i];
    const std::string pp = fmt::format("ports[{}]", i);
    const bool ethdev = p.kind == PortKind::Ethdev;
    o.begin_map().ks("name", p.name).kv("kind", ethdev ? "ethdev" : p.kind == PortKind::Nic ? "nic" : "emulated_host");
    if (p.kind != PortKind::EmulatedHost) o.ks("devargs", p.devargs);  // an ethdev has no host: the Switch reads each kind's own fields only
    o.kmac("mac", p.mac).kv("speed_gbps", real(p.egress.speed_gbps));
    if (p.worker >= 0) o.kv("worker", p.worker);  // -1 (round robin) is the key's absence
    o.kv("admin", p.admin_up ? "up" : "down");
    o.kv("cable_length_m", real(p.lossless.cable_length_m));  // per port: buffer.cable_length_m is only the default
    const EgressConfig& q = p.egress;
    o.begin_map("queues").list("limit_packets", q.limits, [](const QueueLimits& l) { return l.packets; });
    o.list("limit_bytes", q.limits, [](const QueueLimits& l) { return l.bytes; });
    o.list("scheduler", q.sched, [](QueueSched s) { return s == QueueSched::Strict ? "strict" : "dwrr"; });
    o.list("weights", q.weights, [](uint32_t w) { return w; }).end_map();
    const HostSpec& h = p.host;
    // The loader has no key for the tracker's capacity: every host gets the default.
    if (h.rx_flow_capacity != kNoHost.rx_flow_capacity)
      unrepresentable(pp + ".host.rx_flow_capacity", fmt::format("{}: no key sets it (always {})", h.rx_flow_capacity, kNoHost.rx_flow_capacity));
    if (!ethdev) write_host(o, h, pp + ".host");
    if (p.faults != FaultSpec{}) write_faults(o, p.faults, pp + ".faults");
    write_addresses(o, p.addrs);
    if (p.icmp_unreachable) o.kv("icmp_unreachable", true);
    if (p.lldp) o.kv("lldp", true);
    if (p.bridged()) {
      o.begin_map("vlan", true);
      if (p.access_vlan) o.kv("access", p.access_vlan);
      if (!p.tagged_vlans.empty()) o.list("tagged", p.tagged_vlans, [](uint16_t v) { return v; });
      o.end_map();
    }
    o.end_map();
  }
  o.end_seq();
}

void write_host_settings(Out& o, const SwitchConfig& cfg) {
  o.begin_map("copp", true);
  for (std::size_t k = 0; k < kCoppClasses; ++k) {
    const CoppPolicer& pl = cfg.copp.policer[k];
    o.begin_map(std::string(kCoppClassNames[k]).c_str(), true).kv("pps", pl.pps).kv("burst", pl.burst).end_map();
  }
  o.end_map();
  const NeighbourConfig& n = cfg.neighbours;
  o.begin_map("neighbours", true).kv("base_reachable_s", real(n.base_reachable_s)).kv("delay_first_probe_s", real(n.delay_first_probe_s));
  o.kv("retrans_s", real(n.retrans_s)).kv("ucast_probes", n.ucast_probes).kv("mcast_probes", n.mcast_probes);
  o.kv("hold_packets", n.hold_packets).kv("gc_stale_s", real(n.gc_stale_s)).kv("max_entries", n.max_entries).end_map();
  if (cfg.vlan_interfaces.empty()) {
    if (!cfg.vlans.empty()) o.list("vlans", cfg.vlans, [](uint16_t v) { return v; });
  } else {
    o.begin_seq("vlans");
    for (uint16_t id : cfg.vlans) {
      auto it = std::find_if(cfg.vlan_interfaces.begin(), cfg.vlan_interfaces.end(), [&](auto& v) { return v.vlan == id; });
      if (it == cfg.vlan_interfaces.end()) {
        o.e << id;
        continue;
      }
      o.begin_map(nullptr, true).kv("id", id).kmac("mac", it->mac);
      write_addresses(o, it->addrs);
      o.end_map();
    }
    o.end_seq();
  }
  const BridgeConfig& b = cfg.bridge;
  o.begin_map("bridge", true).kv("ageing_s", real(b.ageing_s)).kv("flood_pps", b.flood_pps).kv("flood_burst", b.flood_burst);
  o.kv("fdb_size", b.fdb_size).end_map();
  if (!cfg.collectives.empty()) o.begin_seq("collectives");
  for (const nic::CollectiveSpec& c : cfg.collectives) {
    std::vector<std::string> hosts;
    for (uint16_t p : c.ports) hosts.push_back(cfg.ports[p].name);
    o.begin_map(nullptr, true).kv("op", nic::collective_name(c.op)).list("hosts", hosts, [](const std::string& x) { return x; });
    o.kv("size_bytes", c.size_bytes).kv("slices", c.slices).kv("qpn", fmt::format("{:#x}", c.qpn)).kv("dscp", static_cast<unsigned>(c.dscp));
    o.kv("start_s", seconds(c.start_ns, "collectives.start_ns")).end_map();
  }
  if (!cfg.collectives.empty()) o.end_seq();
  if (!cfg.traffic.empty()) o.begin_seq("traffic");
  for (const nic::TrafficSpec& t : cfg.traffic) {
    std::vector<std::string> hosts;
    for (uint16_t p : t.hosts) hosts.push_back(cfg.ports[p].name);
    o.begin_map(nullptr, true).kv("pattern", nic::pattern_name(t.pattern)).list("hosts", hosts, [](const std::string& x) { return x; });
    if (t.pattern == nic::Pattern::Incast) o.ks("receiver", cfg.ports[t.receiver].name);
    o.kv("message_bytes", t.message_bytes).kv("messages", t.messages).kv("depth", t.depth).kv("dscp", static_cast<unsigned>(t.dscp));
    o.kv("qpn", fmt::format("{:#x}", t.qpn)).kv("seed", t.seed).kv("start_s", seconds(t.start_ns, "traffic.start_ns"));
    if (t.stop_ns != UINT64_MAX) o.kv("stop_s", seconds(t.stop_ns, "traffic.stop_ns"));
    if (t.pattern == nic::Pattern::Cdf)
      o.ks("cdf_file", t.cdf_file).kv("load", real(t.load)).kv("duration_s", seconds(t.duration_ns, "traffic.duration_ns"));
    o.end_map();
  }
  if (!cfg.traffic.empty()) o.end_seq();
  const LldpConfig& l = cfg.lldp;
  o.begin_map("lldp", true).kv("interval_s", real(l.interval_s)).kv("hold", l.hold).ks("system_name", l.system_name);
  o.ks("system_description", l.system_description).end_map();
}

}  // namespace rs::dump
