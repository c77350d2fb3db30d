#include "control/config/nic_config.h"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace rs {

void read_nic(const ConfigReader& rd, const YAML::Node& n, const std::string& path, nic::NicSpec& s) {
  rd.map(n, path);
  rd.keys(n, path, {"mtu", "cc", "ack_req_every", "ack_every", "retransmit_us", "max_outstanding", "reorder", "dcqcn"});
  s.enabled = true;
  if (auto x = n["mtu"]) {
    const auto mtu = static_cast<uint32_t>(rd.integer(x, path + ".mtu", 256, 4096));
    if (mtu & (mtu - 1)) rd.fail(x, path + ".mtu", fmt::format("{}: an IB path MTU is 256, 512, 1024, 2048 or 4096", mtu));
    s.rc.mtu = mtu;
  }
  if (auto x = n["cc"]) {
    const std::string cc = rd.str(x, path + ".cc");
    if (cc != "dcqcn" && cc != "none") rd.fail(x, path + ".cc", fmt::format("'{}': expected 'dcqcn' or 'none'", cc));
    s.dcqcn = cc == "dcqcn";
  }
  if (auto x = n["ack_req_every"]) s.rc.ack_req_every = static_cast<uint32_t>(rd.integer(x, path + ".ack_req_every", 0, 1 << 20));
  if (auto x = n["ack_every"]) s.rc.ack_every = static_cast<uint32_t>(rd.integer(x, path + ".ack_every", 0, 1 << 20));
  if (auto x = n["retransmit_us"]) s.rc.retransmit_ns = rd.nanoseconds(x, path + ".retransmit_us", 1, 1e7, 1e3);
  if (auto x = n["reorder"]) {
    const std::string r = rd.str(x, path + ".reorder");
    if (r != "go_back_n" && r != "placement") rd.fail(x, path + ".reorder", fmt::format("'{}': expected 'go_back_n' or 'placement'", r));
    s.rc.placement = r == "placement";
  }
  if (auto x = n["max_outstanding"]) s.rc.max_outstanding = static_cast<uint32_t>(rd.integer(x, path + ".max_outstanding", 1, 1 << 22));
  const YAML::Node d = n["dcqcn"];
  if (!d) return;
  const std::string dp = path + ".dcqcn";
  rd.map(d, dp);
  rd.keys(d, dp, {"rpg_time_reset", "rpg_byte_reset", "rpg_threshold", "rpg_ai_rate", "rpg_hai_rate", "rpg_min_rate",
                  "rate_to_set_on_first_cnp", "dce_tcp_g", "dce_tcp_rtt", "rate_reduce_monitor_period", "initial_alpha_value",
                  "clamp_tgt_rate", "min_time_between_cnps", "cnp_dscp", "cnp_802p_prio"});
  nic::DcqcnConfig& c = s.cc;
  auto us = [&](const char* k, double& v, double lo, double hi) {
    if (auto x = d[k]) v = rd.real(x, dp + "." + k, lo, hi);
  };
  us("rpg_time_reset", c.rpg_time_reset_us, 1, 1e6);
  us("rpg_ai_rate", c.rpg_ai_rate_mbps, 1, 800'000);
  us("rpg_hai_rate", c.rpg_hai_rate_mbps, 1, 800'000);
  us("rpg_min_rate", c.rpg_min_rate_mbps, 1, 800'000);
  us("rate_to_set_on_first_cnp", c.rate_to_set_on_first_cnp_mbps, 0, 800'000);
  us("dce_tcp_rtt", c.dce_tcp_rtt_us, 1, 1e6);
  us("rate_reduce_monitor_period", c.rate_reduce_monitor_period_us, 1, 1e6);
  us("min_time_between_cnps", c.min_time_between_cnps_us, 0, 1e6);
  if (auto x = d["rpg_byte_reset"]) c.rpg_byte_reset = static_cast<uint64_t>(rd.integer(x, dp + ".rpg_byte_reset", 0, int64_t{1} << 40));
  if (auto x = d["rpg_threshold"]) c.rpg_threshold = static_cast<uint32_t>(rd.integer(x, dp + ".rpg_threshold", 1, 31));
  if (auto x = d["dce_tcp_g"]) c.dce_tcp_g = static_cast<uint32_t>(rd.integer(x, dp + ".dce_tcp_g", 1, 1024));
  if (auto x = d["initial_alpha_value"]) c.initial_alpha_value = static_cast<uint32_t>(rd.integer(x, dp + ".initial_alpha_value", 0, 1024));
  if (auto x = d["clamp_tgt_rate"]) c.clamp_tgt_rate = rd.boolean(x, dp + ".clamp_tgt_rate");
  if (auto x = d["cnp_dscp"]) c.cnp_dscp = static_cast<uint8_t>(rd.integer(x, dp + ".cnp_dscp", 0, 63));
  if (auto x = d["cnp_802p_prio"]) c.cnp_802p_prio = static_cast<uint8_t>(rd.integer(x, dp + ".cnp_802p_prio", 0, 7));
}

void read_qps(const ConfigReader& rd, const YAML::Node& n, const std::string& path, uint32_t own_ip, std::vector<nic::QpSpec>& out) {
  rd.seq(n, path);
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node q = n[i];
    const std::string qp = fmt::format("{}[{}]", path, i);
    rd.keys(q, qp, {"dst", "qpn", "dscp", "priority", "message_bytes", "messages", "depth", "interval_us", "op", "rate_gbps", "start_s",
                    "stop_s"});
    nic::QpSpec s;
    if (!q["dst"]) rd.fail(q, qp + ".dst", "missing");
    s.peer_ip = rd.ipv4(q["dst"], qp + ".dst");
    if (s.peer_ip == own_ip) rd.fail(q["dst"], qp + ".dst", "the host's own address: a QP connects two hosts");
    s.qpn = q["qpn"] ? static_cast<uint32_t>(rd.integer(q["qpn"], qp + ".qpn", 1, 0xFFFFFF)) : static_cast<uint32_t>(0x100 + i);
    for (auto& o : out)
      if (o.peer_ip == s.peer_ip && o.qpn == s.qpn)
        rd.fail(q, qp + ".qpn", fmt::format("QP {:#x} to this host is given twice", s.qpn));
    if (auto x = q["dscp"]) s.dscp = static_cast<uint8_t>(rd.integer(x, qp + ".dscp", 0, 63));
    if (auto x = q["priority"]) s.priority = static_cast<int8_t>(rd.integer(x, qp + ".priority", 0, 7));
    if (auto x = q["message_bytes"]) s.message_bytes = static_cast<uint32_t>(rd.integer(x, qp + ".message_bytes", 1, int64_t{1} << 31));
    if (auto x = q["messages"]) s.messages = static_cast<uint64_t>(rd.integer(x, qp + ".messages", 0, int64_t{1} << 40));
    if (auto x = q["depth"]) s.depth = static_cast<uint32_t>(rd.integer(x, qp + ".depth", 1, 4096));
    if (auto x = q["interval_us"]) s.interval_ns = rd.nanoseconds(x, qp + ".interval_us", 0, 1e9, 1e3);
    if (auto x = q["op"]) {
      const std::string op = rd.str(x, qp + ".op");
      if (op != "write" && op != "send") rd.fail(x, qp + ".op", fmt::format("'{}': expected 'write' or 'send'", op));
      s.write = op == "write";
    }
    if (auto x = q["rate_gbps"]) s.rate_gbps = rd.real(x, qp + ".rate_gbps", 0.001, 800);
    if (auto x = q["start_s"]) s.start_ns = rd.nanoseconds(x, qp + ".start_s", 0, 1e6, 1e9);
    if (auto x = q["stop_s"]) s.stop_ns = rd.nanoseconds(x, qp + ".stop_s", 0, 1e6, 1e9);
    if (s.stop_ns <= s.start_ns) rd.fail(q, qp + ".stop_s", "stops before it starts");
    out.push_back(s);
  }
}

namespace {

// A list of host names (a group name stands for its hosts), each host once.
std::vector<uint16_t> read_host_list(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const HostTable& hosts) {
  rd.seq(n, path);
  std::vector<uint16_t> out;
  for (std::size_t k = 0; k < n.size(); ++k) {
    const std::string hp = fmt::format("{}[{}]", path, k);
    const std::string name = rd.str(n[k], hp);
    std::vector<uint16_t> these;
    if (auto it = std::find(hosts.names.begin(), hosts.names.end(), name); it != hosts.names.end())
      these.push_back(static_cast<uint16_t>(it - hosts.names.begin()));
    else if (auto g = hosts.groups.find(name); g != hosts.groups.end())
      these = g->second;
    else
      rd.fail(n[k], hp, fmt::format("no {} '{}'", hosts.noun, name));
    for (uint16_t h : these) {
      if (!hosts.ports[h]) rd.fail(n[k], hp, fmt::format("port '{}' is not an emulated host", hosts.names[h]));
      if (std::find(out.begin(), out.end(), h) != out.end()) rd.fail(n[k], hp, fmt::format("'{}' is given twice", hosts.names[h]));
      out.push_back(h);
    }
  }
  return out;
}

}  // namespace

uint16_t read_host(const ConfigReader& rd, const YAML::Node& n, const std::string& path, const HostTable& hosts) {
  const std::string name = rd.str(n, path);
  auto it = std::find(hosts.names.begin(), hosts.names.end(), name);
  if (it == hosts.names.end()) rd.fail(n, path, fmt::format("no {} '{}'", hosts.noun, name));
  const auto h = static_cast<uint16_t>(it - hosts.names.begin());
  if (!hosts.ports[h]) rd.fail(n, path, fmt::format("port '{}' is not an emulated host", name));
  return h;
}

HostTable switch_hosts(SwitchConfig& cfg) {
  HostTable t;
  t.source = cfg.source;
  std::vector<uint16_t> all;
  for (std::size_t p = 0; p < cfg.ports.size(); ++p) {
    const bool host = cfg.ports[p].kind == PortKind::EmulatedHost || cfg.ports[p].kind == PortKind::Nic;
    t.names.push_back(cfg.ports[p].name);
    t.ports.push_back(host ? &cfg.ports[p] : nullptr);
    if (host) all.push_back(static_cast<uint16_t>(p));
  }
  t.groups.emplace("all", std::move(all));
  return t;
}

void read_collectives(const ConfigReader& rd, const YAML::Node& n, const HostTable& hosts, std::vector<nic::CollectiveSpec>& out) {
  rd.seq(n, "collectives");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node c = n[i];
    const std::string cp = fmt::format("collectives[{}]", i);
    rd.keys(c, cp, {"op", "hosts", "size_bytes", "slices", "qpn", "dscp", "start_s"});
    nic::CollectiveSpec s;
    if (!c["op"]) rd.fail(c, cp + ".op", "missing");
    const std::string op = rd.str(c["op"], cp + ".op");
    if (!nic::collective_of(op, s.op)) rd.fail(c["op"], cp + ".op", fmt::format("'{}': expected allreduce, allgather, reducescatter or alltoall", op));
    if (!c["hosts"]) rd.fail(c, cp + ".hosts", "missing");
    s.ports = read_host_list(rd, c["hosts"], cp + ".hosts", hosts);
    if (s.ports.size() < 2) rd.fail(c["hosts"], cp + ".hosts", "a collective needs two hosts at least");
    if (!c["size_bytes"]) rd.fail(c, cp + ".size_bytes", "missing");
    s.size_bytes = static_cast<uint64_t>(rd.integer(c["size_bytes"], cp + ".size_bytes", 1, int64_t{1} << 40));
    if (auto x = c["slices"]) s.slices = static_cast<uint32_t>(rd.integer(x, cp + ".slices", 1, 64));
    if (s.size_bytes < uint64_t{s.ports.size()} * s.slices)
      rd.fail(c["size_bytes"], cp + ".size_bytes", fmt::format("{} bytes cannot make {} ranks x {} slices of a byte at least", s.size_bytes, s.ports.size(), s.slices));
    s.qpn = c["qpn"] ? static_cast<uint32_t>(rd.integer(c["qpn"], cp + ".qpn", 1, 0xFFF000)) : static_cast<uint32_t>(0x800 + 0x1000 * i);
    if (auto x = c["dscp"]) s.dscp = static_cast<uint8_t>(rd.integer(x, cp + ".dscp", 0, 63));
    if (auto x = c["start_s"]) s.start_ns = rd.nanoseconds(x, cp + ".start_s", 0, 1e6, 1e9);
    std::vector<nic::Rank> ranks;
    for (uint16_t p : s.ports) {
      HostSpec& h = hosts.ports[p]->host;
      h.nic.enabled = true;
      ranks.push_back({h.ip, &h.qps});
    }
    const auto tag = static_cast<uint16_t>(out.size() + 1);
    nic::expand_collective(s, tag, ranks);
    // Its queue pairs may not be one a host has already (the same peer and number).
    for (uint16_t p : s.ports) {
      const auto& q = hosts.ports[p]->host.qps;
      for (std::size_t a = 0; a < q.size(); ++a)
        for (std::size_t b = 0; b < a; ++b)
          if (q[a].peer_ip == q[b].peer_ip && q[a].qpn == q[b].qpn && (q[a].tag == tag || q[b].tag == tag))
            rd.fail(c, cp + ".qpn", fmt::format("QP {:#x} of host {} is taken: give the collective another qpn", q[a].qpn, hosts.names[p]));
    }
    out.push_back(s);
  }
}

nic::FlowSizeCdf read_cdf_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, 0, "(file)", "cannot read it");
  nic::FlowSizeCdf c;
  std::string line;
  int no = 0, last_line = 0;
  while (std::getline(in, line)) {
    ++no;
    if (auto h = line.find('#'); h != std::string::npos) line.resize(h);
    std::istringstream ls(line);
    double bytes, p;
    if (!(ls >> bytes)) continue;  // blank
    std::string rest;
    if (!(ls >> p) || (ls >> rest)) throw ConfigError(path, no, "(line)", "expected two numbers: bytes and cumulative probability");
    if (bytes < 0 || p < 0) throw ConfigError(path, no, "(line)", "negative");
    if (!c.points.empty() && (bytes < c.points.back().first || p < c.points.back().second))
      throw ConfigError(path, no, "(line)", fmt::format("not monotonic: {} {} after {} {}", bytes, p, c.points.back().first, c.points.back().second));
    c.points.emplace_back(bytes, p);
    last_line = no;
  }
  if (c.points.size() < 2) throw ConfigError(path, no, "(file)", "a CDF needs two points at least");
  const double top = c.points.back().second;
  if (top != 1 && top != 100) throw ConfigError(path, last_line, "(line)", fmt::format("the last probability is {}: it must be 1 (or 100, percent)", top));
  for (auto& [b, p] : c.points) p /= top;
  if (c.points.back().first < 1) throw ConfigError(path, last_line, "(line)", "the largest flow is under a byte");
  return c;
}

void read_traffic(const ConfigReader& rd, const YAML::Node& n, const HostTable& hosts, std::vector<nic::TrafficSpec>& out,
                  uint64_t seed) {
  rd.seq(n, "traffic");
  for (std::size_t i = 0; i < n.size(); ++i) {
    const YAML::Node t = n[i];
    const std::string tp = fmt::format("traffic[{}]", i);
    rd.keys(t, tp, {"pattern", "hosts", "receiver", "message_bytes", "messages", "depth", "dscp", "qpn", "seed", "start_s", "stop_s",
                    "cdf_file", "load", "duration_s"});
    nic::TrafficSpec s;
    s.seed = seed;
    if (!t["pattern"]) rd.fail(t, tp + ".pattern", "missing");
    const std::string pat = rd.str(t["pattern"], tp + ".pattern");
    if (!nic::pattern_of(pat, s.pattern)) rd.fail(t["pattern"], tp + ".pattern", fmt::format("'{}': expected incast, permutation, all_to_all or cdf", pat));
    if (!t["hosts"]) rd.fail(t, tp + ".hosts", "missing");
    s.hosts = read_host_list(rd, t["hosts"], tp + ".hosts", hosts);
    if (s.pattern == nic::Pattern::Incast) {
      if (!t["receiver"]) rd.fail(t, tp + ".receiver", "missing: an incast's senders send to it");
      s.receiver = read_host(rd, t["receiver"], tp + ".receiver", hosts);
      if (std::find(s.hosts.begin(), s.hosts.end(), s.receiver) != s.hosts.end()) rd.fail(t["receiver"], tp + ".receiver", "the receiver is one of the senders");
      if (s.hosts.empty()) rd.fail(t["hosts"], tp + ".hosts", "an incast needs a sender at least");
    } else {
      if (t["receiver"]) rd.fail(t["receiver"], tp + ".receiver", "only an incast has a receiver");
      if (s.hosts.size() < 2) rd.fail(t["hosts"], tp + ".hosts", "the pattern needs two hosts at least");
    }
    if (auto x = t["message_bytes"]) s.message_bytes = static_cast<uint32_t>(rd.integer(x, tp + ".message_bytes", 1, int64_t{1} << 31));
    if (auto x = t["messages"]) s.messages = static_cast<uint64_t>(rd.integer(x, tp + ".messages", 0, int64_t{1} << 40));
    if (auto x = t["depth"]) s.depth = static_cast<uint32_t>(rd.integer(x, tp + ".depth", 1, 4096));
    if (auto x = t["dscp"]) s.dscp = static_cast<uint8_t>(rd.integer(x, tp + ".dscp", 0, 63));
    s.qpn = t["qpn"] ? static_cast<uint32_t>(rd.integer(t["qpn"], tp + ".qpn", 1, 0xF00000)) : static_cast<uint32_t>(0x10000 + 0x10000 * i);
    if (auto x = t["seed"]) s.seed = static_cast<uint64_t>(rd.integer(x, tp + ".seed", 0, int64_t{1} << 62));
    if (auto x = t["start_s"]) s.start_ns = rd.nanoseconds(x, tp + ".start_s", 0, 1e6, 1e9);
    if (auto x = t["stop_s"]) s.stop_ns = rd.nanoseconds(x, tp + ".stop_s", 0, 1e6, 1e9);
    if (s.stop_ns <= s.start_ns) rd.fail(t, tp + ".stop_s", "stops before it starts");
    const bool cdf = s.pattern == nic::Pattern::Cdf;
    for (const char* k : {"cdf_file", "load", "duration_s"})
      if (t[k] && !cdf) rd.fail(t[k], tp + "." + k, "only a cdf pattern has it");
    if (cdf) {
      if (!t["cdf_file"]) rd.fail(t, tp + ".cdf_file", "missing: the flow-size distribution");
      if (!t["duration_s"]) rd.fail(t, tp + ".duration_s", "missing: how long flows arrive");
      s.cdf_file = rd.str(t["cdf_file"], tp + ".cdf_file");
      std::string path = s.cdf_file;
      if (!path.empty() && path[0] != '/' && hosts.source.find('/') != std::string::npos) path = hosts.source.substr(0, hosts.source.rfind('/') + 1) + path;
      try {
        s.cdf = read_cdf_file(path);
      } catch (const ConfigError& e) {
        throw ConfigError(e.file, e.line, tp + ".cdf_file", e.reason);
      }
      if (auto x = t["load"]) s.load = rd.real(x, tp + ".load", 1e-6, 1);
      s.duration_ns = rd.nanoseconds(t["duration_s"], tp + ".duration_s", 1e-6, 3600, 1e9);
    }
    std::vector<nic::Endpoint> eps;
    auto endpoint = [&](uint16_t p) {
      HostSpec& h = hosts.ports[p]->host;
      h.nic.enabled = true;
      eps.push_back({h.ip, hosts.ports[p]->egress.speed_gbps, &h.qps});
    };
    for (uint16_t p : s.hosts) endpoint(p);
    if (s.pattern == nic::Pattern::Incast) endpoint(s.receiver);
    const auto index = static_cast<uint16_t>(out.size() + 1);
    nic::expand_traffic(s, index, eps);
    for (const nic::Endpoint& e : eps)
      for (std::size_t a = 0; a < e.qps->size(); ++a)
        for (std::size_t b = 0; b < a; ++b)
          if ((*e.qps)[a].peer_ip == (*e.qps)[b].peer_ip && (*e.qps)[a].qpn == (*e.qps)[b].qpn &&
              ((*e.qps)[a].traffic == index || (*e.qps)[b].traffic == index))
            rd.fail(t, tp + ".qpn", fmt::format("QP {:#x} is taken on a host of the pattern: give it another qpn", (*e.qps)[a].qpn));
    out.push_back(std::move(s));
  }
}

}  // namespace rs
