#include "control/local/lldp_service.h"

#include <fmt/core.h>

#include "dataplane/core/log.h"

namespace rs {

namespace {
constexpr uint16_t kRoceUdpPort = 4791;

// Bandwidth shares in whole percent that add up to 100 (largest remainder).
std::array<uint8_t, 8> percent(const std::array<uint32_t, 8>& weight) {
  std::array<uint8_t, 8> out{};
  uint64_t total = 0;
  for (uint32_t w : weight) total += w;
  if (total == 0) return out;
  std::array<uint64_t, 8> rem{};
  unsigned given = 0;
  for (int q = 0; q < 8; ++q) {
    out[q] = static_cast<uint8_t>(uint64_t{weight[q]} * 100 / total);
    rem[q] = uint64_t{weight[q]} * 100 % total;
    given += out[q];
  }
  while (given < 100) {
    int best = 0;
    for (int q = 1; q < 8; ++q)
      if (rem[q] > rem[best]) best = q;
    ++out[best];
    rem[best] = 0;
    ++given;
  }
  return out;
}
}  // namespace

LldpService::LldpService(const Switch& sw) : sw_(sw) {}

proto::LldpInfo LldpService::advert(uint16_t port) const {
  const SwitchConfig& cfg = sw_.config();
  const PortSpec& ps = cfg.ports[port];
  const QosMaps& qos = sw_.qos();
  proto::LldpInfo a;
  a.chassis_subtype = proto::kChassisSubtypeMac;
  a.chassis_id = proto::mac_id(cfg.ports[0].mac);  // the switch: its first port's MAC
  a.port_subtype = proto::kPortSubtypeIfName;
  a.port_id = ps.name;
  a.ttl = static_cast<uint16_t>(std::min<double>(65535, cfg.lldp.interval_s * cfg.lldp.hold + 0.5));
  a.port_description = ps.name;
  a.system_name = cfg.lldp.system_name;
  a.system_description = cfg.lldp.system_description;
  for (auto& x : ps.addrs)
    if (!x.addr.v6) {
      a.mgmt_addr.assign(x.addr.b.begin(), x.addr.b.begin() + 4);
      break;
    }
  const uint8_t enable = cfg.mmu.pfc_enable;
  a.pfc = proto::DcbxPfc{false, false, 8, enable};
  // ETS: a priority's traffic class is the queue its frames land in.
  proto::DcbxEts ets;
  std::array<uint32_t, 8> weight{};
  for (int q = 0; q < 8; ++q) {
    const bool strict = ps.egress.sched[q] == QueueSched::Strict;
    ets.tsa[q] = strict ? proto::kTsaStrict : proto::kTsaEts;
    weight[q] = strict ? 0 : ps.egress.weights[q];
  }
  ets.bw_pct = percent(weight);
  for (int p = 0; p < 8; ++p) ets.prio_tc[p] = qos.tc_to_queue[qos.pcp_to_tc[p] & 7] & 7;
  a.ets_cfg = ets;
  a.ets_rec = ets;
  // Application priority: RoCEv2 to the first lossless priority, and each DSCP whose class is
  // lossless to its priority (priority p pauses PG p).
  if (enable) {
    const uint8_t roce = static_cast<uint8_t>(__builtin_ctz(enable));
    a.app.push_back({roce, proto::kAppSelUdpDccp, kRoceUdpPort});
    for (uint16_t d = 0; d < 64; ++d) {
      const uint8_t pg = cfg.mmu.tc_to_pg[qos.dscp_to_tc[d] & 7] & 7;
      if ((enable >> pg) & 1) a.app.push_back({pg, proto::kAppSelDscp, d});
    }
  }
  return a;
}

std::vector<std::pair<uint16_t, std::vector<uint8_t>>> LldpService::due(uint64_t now) {
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> out;
  if (now < next_ns_) return out;
  const SwitchConfig& cfg = sw_.config();
  next_ns_ = now + static_cast<uint64_t>(cfg.lldp.interval_s * 1e9);
  sending_.resize(cfg.ports.size(), false);
  for (uint16_t p = 0; p < cfg.ports.size(); ++p) {
    const bool on = cfg.ports[p].lldp;
    if (!on && !sending_[p]) continue;
    proto::LldpInfo info = advert(p);
    if (!on) {
      // LLDP turned off on a port that advertised: a shutdown LLDPDU (IEEE 802.1AB 9.2.7.1:
      // chassis ID, port ID, TTL 0), so the peer forgets the switch now, not when the TTL runs out.
      proto::LldpInfo bare;
      bare.chassis_subtype = info.chassis_subtype;
      bare.chassis_id = info.chassis_id;
      bare.port_subtype = info.port_subtype;
      bare.port_id = info.port_id;
      bare.ttl = 0;
      info = std::move(bare);
    }
    sending_[p] = on;
    std::vector<uint8_t> f(proto::kLldpMaxPdu + 64);
    const uint32_t len = proto::build_lldp(f.data(), static_cast<uint32_t>(f.size()), cfg.ports[p].mac, info);
    if (!len) continue;
    f.resize(len);
    out.emplace_back(p, std::move(f));
    ++c_.sent;
  }
  return out;
}

bool LldpService::receive(uint16_t port, const uint8_t* frame, uint32_t len, uint16_t l3_offset, uint64_t now) {
  proto::LldpInfo info;
  if (proto::parse_lldp(frame, len, l3_offset, info) != proto::LldpError::Ok) {
    ++c_.malformed;
    return false;
  }
  ++c_.received;
  if (info.shutdown()) {
    ++c_.shutdowns;
    peers_.erase(port);
    return true;
  }
  Peer& p = peers_[port];
  const bool was = p.pfc_mismatch;
  p.pfc_mismatch = info.pfc && info.pfc->enable != sw_.config().mmu.pfc_enable;
  if (p.pfc_mismatch && !was) {
    ++c_.pfc_mismatches;
    log(LogLevel::Warn, "port {}: LLDP neighbour {} ({}) advertises PFC enable {:#04x}, the switch has {:#04x}",
        port < sw_.num_ports() ? sw_.port(port).name : std::to_string(port), info.system_name, proto::chassis_id_text(info),
        info.pfc->enable, sw_.config().mmu.pfc_enable);
  }
  p.expires_ns = now + uint64_t{info.ttl} * 1'000'000'000ull;
  p.info = std::move(info);
  return true;
}

void LldpService::expire(uint64_t now) {
  for (auto it = peers_.begin(); it != peers_.end();)
    if (now >= it->second.expires_ns) {
      ++c_.expired;
      it = peers_.erase(it);
    } else {
      ++it;
    }
}

const proto::LldpInfo* LldpService::neighbour(uint16_t port) const {
  auto it = peers_.find(port);
  return it == peers_.end() ? nullptr : &it->second.info;
}

bool LldpService::pfc_mismatch(uint16_t port) const {
  auto it = peers_.find(port);
  return it != peers_.end() && it->second.pfc_mismatch;
}

nlohmann::json LldpService::neighbours_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (auto& [port, p] : peers_) {
    const proto::LldpInfo& i = p.info;
    nlohmann::json e = {{"port", port < sw_.num_ports() ? sw_.port(port).name : std::to_string(port)},
                        {"chassis_id", proto::chassis_id_text(i)},
                        {"port_id", proto::port_id_text(i)},
                        {"system_name", i.system_name},
                        {"ttl", i.ttl},
                        {"pfc_mismatch", p.pfc_mismatch}};
    if (i.pfc) e["pfc"] = {{"enable", i.pfc->enable}, {"willing", i.pfc->willing}, {"mbc", i.pfc->mbc}, {"cap", i.pfc->cap}};
    if (i.ets_cfg) e["ets"] = {{"willing", i.ets_cfg->willing}, {"prio_tc", i.ets_cfg->prio_tc}, {"bw_pct", i.ets_cfg->bw_pct}, {"tsa", i.ets_cfg->tsa}};
    nlohmann::json app = nlohmann::json::array();
    for (auto& a : i.app) app.push_back({{"priority", a.priority}, {"selector", a.selector}, {"protocol", a.protocol}});
    e["app"] = app;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace rs
