// The whole-switch half of the property test (step_forms_test.cc): the switch configurations,
// a switch whose ports the test plays the peers of, and the comparisons of what two switches
// (l3_roce and l3_roce_general) sent and counted.
#pragma once
#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "dataplane/core/mbuf_pool.h"
#include "dataplane/switch/switch.h"
#include "pipelines_embedded.h"
#include "tests/support/fake_port.h"
#include "tests/support/host_net.h"
#include "tests/unit/stages/stage_forms.h"

namespace rs::test {

// A pool of its own: two switches hold many packets in their queues at once.
inline rte_mempool* forms_pool() {
  static rte_mempool* p = create_mbuf_pool({.name = "forms_pool", .mbufs = 32767, .cache = 256, .priv_size = kMbufPrivSize});
  return p;
}

// Slow ports (10, 5 and 1 Gb/s) with shallow queues, so that one packet a port every 100 ns
// congests them.
inline SwitchConfig base_config() {
  SwitchConfig cfg;
  cfg.workers = 1;
  cfg.seed = kFormsSeed;
  cfg.mbufs = 4096;
  cfg.qos.dscp_to_tc[26] = 3;
  cfg.qos.cnp_queue = 6;
  cfg.qos.tc_to_queue = {0, 1, 2, 3, 4, 5, 7, 6};
  for (uint16_t p = 0; p < kFormsPorts; ++p) {
    PortSpec ps;
    ps.name = fmt::format("p{}", p);
    ps.kind = PortKind::Ethdev;
    ps.mac = rte_ether_addr{{0x02, 0, 0, 0, 0, static_cast<uint8_t>(0x10 + p)}};
    ps.egress.speed_gbps = p == 0 ? 10 : p == 1 ? 5 : 1;
    for (auto& l : ps.egress.limits) l = {.packets = 48, .bytes = 48u << 10};
    cfg.ports.push_back(ps);
  }
  for (const RouteDef& d : forms_routes()) {
    GroupSpec g;
    g.name = d.prefix;
    g.policy = PolicySpec{d.policy, {}};
    for (std::size_t k = 0; k < d.ports.size(); ++k) g.members.push_back({.port = d.ports[k], .mac = member_mac(d.ports[k], k), .weight = 1});
    add_group_route(cfg, g, d.prefix);
  }
  return cfg;
}
// Fast ports and deep queues: nothing competes, so a burst may mix every kind of packet.
inline SwitchConfig bursts_config() {
  SwitchConfig cfg = base_config();
  for (auto& p : cfg.ports) {
    p.egress.speed_gbps = 100;
    for (auto& l : p.egress.limits) l = QueueLimits{};
  }
  return cfg;
}
// Plain lossy queues that tail-drop under the load; two workers, so ports are handed between
// them.
inline SwitchConfig lossy_config() {
  SwitchConfig cfg = base_config();
  cfg.workers = 2;
  return cfg;
}
// Priorities 3 and 4 lossless (PFC out when their PGs fill, headroom drops past it: the peers
// here never pause), WRED with ECN marking on queues 1 and 3; two workers.
inline SwitchConfig lossless_config() {
  SwitchConfig cfg = lossy_config();
  cfg.mmu.pfc_enable = (1u << 3) | (1u << 4);
  for (auto& p : cfg.ports) {
    p.lossless.pg[3] = p.lossless.pg[4] = PgSettings{.lossless = true, .xoff = 4 * 1280, .xon = 2 * 1280, .headroom = 2 * 1280};
    p.lossless.wred[1] = {.enabled = true, .wred_drop = true, .ecn_mark = true, .kmin = 2048, .kmax = 12288, .pmax_percent = 60};
    p.lossless.wred[3] = {.enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 1024, .kmax = 8192, .pmax_percent = 100};
    p.lossless.pfc_quanta = 500;
    // Lossless queues bounded by their PGs (XOFF, then headroom), not by a short queue.
    p.egress.limits[3] = p.egress.limits[4] = QueueLimits{.packets = 1024, .bytes = 1u << 20};
  }
  return cfg;
}
// As lossless, one worker, PCP trusted, and SONiC's dynamic thresholds on the lossy queues 0 and
// 1 of a shared pool small enough to fill.
inline SwitchConfig lossless_pcp_config() {
  SwitchConfig cfg = lossless_config();
  cfg.workers = 1;
  cfg.qos.trust = QosTrust::Pcp;
  cfg.mmu.pool.size = 128u << 10;
  for (auto& p : cfg.ports) p.lossless.dynamic_th[0] = p.lossless.dynamic_th[1] = -1;
  return cfg;
}

// One switch whose ports are ring ethdevs the test plays the peers of; records every frame it
// sends, with its queue and metadata (MAC control frames the switch makes have neither).
class SwitchRig {
 public:
  struct Sent {
    std::vector<uint8_t> bytes;
    int queue = -1;
    PacketMeta meta{};
  };
  SwitchRig(const std::string& tag, SwitchConfig cfg, const char* pipeline) : sent(kFormsPorts) {
    for (uint16_t p = 0; p < kFormsPorts; ++p) {
      links_.push_back(std::make_unique<RingPeer>(fmt::format("{}{}", tag, p), 4096));
      ok_ &= links_.back()->ok();
      cfg.ports[p].devargs = links_.back()->devname();
    }
    cfg.pipeline_text = pipeline;
    cfg.pipeline_source = tag;
    if (ok_) sw = std::make_unique<Switch>(cfg, kT0);
  }
  ~SwitchRig() {
    sw.reset();  // before the links: it stops their ethdevs
    links_.clear();
  }
  bool ok() const { return ok_ && sw; }
  void inject(uint16_t port, rte_mbuf* m) {
    if (m) links_[port]->inject(m);
    else ADD_FAILURE() << "forms pool exhausted";
  }
  void step(uint64_t now) {
    sw->poll_all(now);
    for (uint16_t p = 0; p < kFormsPorts; ++p)
      for (rte_mbuf* m : links_[p]->take_tx()) {
        Sent s{mbuf_bytes(m)};
        const bool mac_control = s.bytes.size() >= 14 && s.bytes[12] == 0x88 && s.bytes[13] == 0x08;
        if (!mac_control) {
          s.queue = meta(m).queue;
          s.meta = meta(m);
        }
        ++frames_sent;
        mac_control_sent += mac_control;
        sent[p].push_back(std::move(s));
        rte_pktmbuf_free(m);
      }
  }
  // A stage's counter, whether the stage is a node of its own or a step of a chain (where its
  // counters are prefixed with its name).
  uint64_t stage_total(std::string_view stage, std::string_view name) const {
    const std::string chained = std::string(stage) + "." + std::string(name);
    uint64_t s = 0;
    for (uint16_t w = 0; w < sw->num_workers(); ++w)
      for (const auto& n : sw->pipeline(w).nodes()) {
        const auto names = n.stage->counter_names();
        for (std::size_t i = 0; i < names.size(); ++i)
          if ((n.name == stage && names[i] == name) || names[i] == chained) s += n.stage->counters()[i].get();
      }
    return s;
  }
  // The run exercised what the test is for.
  void expect_coverage(bool bursts) const {
    for (DropReason r : {DropReason::TtlExpired, DropReason::NoRoute, DropReason::BadNextHop, DropReason::MacControl,
                         DropReason::BadIpv4Checksum, DropReason::MalformedBth})
      EXPECT_GT(sw->drops(r), 0u) << drop_reason_name(r);
    EXPECT_GT(frames_sent, bursts ? 10'000u : 2'000u);
    EXPECT_GT(stage_total("nexthop_select", "policy_calls"), 0u);
    uint64_t admission = 0;
    for (DropReason r : {DropReason::TailDropPackets, DropReason::TailDropBytes, DropReason::HeadroomExhausted,
                         DropReason::WredDrop, DropReason::DynamicThreshold, DropReason::SharedPoolFull})
      admission += sw->drops(r);
    if (bursts) {
      EXPECT_EQ(admission, 0u) << "nothing competed";
    } else {
      EXPECT_GT(admission, 0u) << "the queues filled";
    }
    if (sw->buffer().any_lossless()) {
      EXPECT_GT(mac_control_sent, 0u) << "PFC frames out";
      EXPECT_GT(sw->drops(DropReason::HeadroomExhausted), 0u);
      uint64_t marked = 0;
      for (std::size_t p = 0; p < sw->num_ports(); ++p)
        for (int q = 0; q < 8; ++q) marked += sw->egress(p).queue(q).ecn_marked.get();
      EXPECT_GT(marked, 0u);
    }
  }

  std::vector<std::vector<Sent>> sent;  // per port, since the last outputs_diff()
  std::unique_ptr<Switch> sw;
  uint64_t frames_sent = 0, mac_control_sent = 0;

 private:
  std::vector<std::unique_ptr<RingPeer>> links_;
  bool ok_ = true;
};

inline std::string one_diff(const SwitchRig::Sent& x, const SwitchRig::Sent& y) {
  if (x.bytes != y.bytes) return fmt::format("bytes differ ({} vs {} bytes)", x.bytes.size(), y.bytes.size());
  if (x.queue != y.queue) return fmt::format("queue {} vs {}", x.queue, y.queue);
  return meta_diff(x.meta, y.meta);
}
// "" when both sent the same frames on every port, in the same order, from the same queues with
// the same metadata; else the first difference.
inline std::string sent_diff(const std::vector<std::vector<SwitchRig::Sent>>& a, const std::vector<std::vector<SwitchRig::Sent>>& b) {
  if (a.size() != b.size()) return "port counts differ";
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (a[p].size() != b[p].size()) return fmt::format("port {}: {} frames vs {}", p, a[p].size(), b[p].size());
    for (std::size_t i = 0; i < a[p].size(); ++i) {
      if (std::string d = one_diff(a[p][i], b[p][i]); !d.empty()) return fmt::format("port {}, frame {}: {}", p, i, d);
    }
  }
  return "";
}
// As sent_diff, but only each flow's frames in order: per port, per queue, per flow (its family,
// group and flow hash); the MAC control frames the switch made, as one flow.
inline std::string flows_diff(const std::vector<std::vector<SwitchRig::Sent>>& a, const std::vector<std::vector<SwitchRig::Sent>>& b) {
  using Key = std::tuple<int, uint8_t, uint16_t, uint32_t>;
  auto flows = [](const std::vector<SwitchRig::Sent>& v) {
    std::map<Key, std::vector<const SwitchRig::Sent*>> m;
    for (const auto& s : v) m[{s.queue, static_cast<uint8_t>(s.meta.l3), s.meta.group, s.meta.flow_hash}].push_back(&s);
    return m;
  };
  if (a.size() != b.size()) return "port counts differ";
  for (std::size_t p = 0; p < a.size(); ++p) {
    if (a[p].size() != b[p].size()) return fmt::format("port {}: {} frames vs {}", p, a[p].size(), b[p].size());
    const auto fa = flows(a[p]), fb = flows(b[p]);
    for (const auto& [k, va] : fa) {
      const auto it = fb.find(k);
      const std::string flow = fmt::format("port {}, queue {}, flow {:#x} of group {}", p, std::get<0>(k), std::get<3>(k), std::get<2>(k));
      if (it == fb.end()) return flow + ": only in the first";
      if (va.size() != it->second.size()) return fmt::format("{}: {} frames vs {}", flow, va.size(), it->second.size());
      for (std::size_t i = 0; i < va.size(); ++i)
        if (std::string d = one_diff(*va[i], *it->second[i]); !d.empty()) return fmt::format("{}, frame {}: {}", flow, i, d);
    }
  }
  return "";
}
// Compares what both sent since the last call, then forgets it.
inline std::string outputs_diff(SwitchRig& a, SwitchRig& b) {
  std::string d = sent_diff(a.sent, b.sent);
  for (auto* r : {&a, &b})
    for (auto& v : r->sent) v.clear();
  return d;
}

// "" when both switches' books agree: per port rx/tx and drops by reason, per queue enqueues,
// dequeues, ECN marks and drops by reason, PFC frames.
inline std::string books_diff(const Switch& a, const Switch& b) {
  for (std::size_t p = 0; p < a.num_ports(); ++p) {
    if (a.rx_packets(p) != b.rx_packets(p) || a.tx_packets(p) != b.tx_packets(p)) return fmt::format("port {}: rx/tx", p);
    for (std::size_t r = 0; r < kNumDropReasons; ++r)
      if (a.drops(p, static_cast<DropReason>(r)) != b.drops(p, static_cast<DropReason>(r)))
        return fmt::format("port {}: drops {}: {} vs {}", p, kDropReasonNames[r], a.drops(p, static_cast<DropReason>(r)),
                           b.drops(p, static_cast<DropReason>(r)));
    if (a.egress(p).pfc_gen().counters().frames.get() != b.egress(p).pfc_gen().counters().frames.get())
      return fmt::format("port {}: PFC frames", p);
    for (int q = 0; q < 8; ++q) {
      const QueueCounters &x = a.egress(p).queue(q), &y = b.egress(p).queue(q);
      if (x.enq_packets.get() != y.enq_packets.get() || x.deq_packets.get() != y.deq_packets.get() ||
          x.ecn_marked.get() != y.ecn_marked.get())
        return fmt::format("port {} queue {}: enq {}/{} deq {}/{} ecn {}/{}", p, q, x.enq_packets.get(), y.enq_packets.get(),
                           x.deq_packets.get(), y.deq_packets.get(), x.ecn_marked.get(), y.ecn_marked.get());
      for (std::size_t r = 0; r < kNumDropReasons; ++r)
        if (x.drops[r].get() != y.drops[r].get()) return fmt::format("port {} queue {}: drops {}", p, q, kDropReasonNames[r]);
    }
  }
  return "";
}

}  // namespace rs::test
