// l3_input: the parse step (P4 parser) and the classify step (dscp_to_tc, pcp_to_tc,
// tc_to_queue) in one pass, as VPP's ip4-input does its checks where it reads the header.
// Edges: ipv4 and ipv6 to the route stages, mac_control for PAUSE/PFC frames, local for ARP
// and LLDP frames when the switch has addresses of its own (the punt stage takes them to the
// control plane; without addresses they are non-IP drops, as the route stages' `local` edge
// carries the switch's IP packets), bridge for every other frame of a port that is a VLAN member
// (parsed and classified first, so bridged traffic is queued, paused and marked as routed
// traffic is); malformed and non-IP frames are dropped with their reason.
#pragma once
#include "dataplane/core/step_stage.h"
#include "dataplane/stages/classify.h"
#include "dataplane/stages/parse.h"

namespace rs {

// The parse's form is a template flag (parse.h): `l3_input` tries the common shape first,
// its sibling `l3_input_general` never does (VPP's one body, two nodes); the property test
// runs both over every header variant and holds them to the same result.
template <unsigned kForm>
class L3InputT final : public StepStage<L3InputT<kForm>> {
 public:
  static constexpr std::string_view kName = kForm ? "l3_input" : "l3_input_general";
  enum Next : uint8_t { Ipv4, Ipv6, MacControl, Local, Bridge };
  static constexpr std::array<std::string_view, 5> kNext = {"ipv4", "ipv6", "mac_control", "local", "bridge"};
  static constexpr uint8_t kChainEdge = Ipv4;
  enum Ctr : uint8_t { CIpv4, CIpv6, Vlan, Udp, Roce, Cnp, ByDscp, ByPcp, CnpToQueue };
  static constexpr std::array<std::string_view, 9> kCounters = {"ipv4", "ipv6",    "vlan",   "udp",         "roce",
                                                                "cnp",  "by_dscp", "by_pcp", "cnp_to_queue"};

  explicit L3InputT(const StageEnv& env)
      : seed_(env.hash_seed), map_(env.qos ? *env.qos : QosMaps::sonic_default()) {}

  struct Pass {
    uint32_t seed;
    const TcQueueMap* map;  // the QoS maps the control plane published, read once per burst
    bool bridged;           // the burst's port is a VLAN member: its frames are switched by MAC
    parse::Tally p;
    uint32_t by_pcp = 0, cnp_steered = 0, not_ipv4 = 0;  // rare cases only (parse.h's Tally says why)
  };
  Pass begin(const WorkerContext& ctx) const {
    return Pass{seed_, ctx.classify ? ctx.classify : &map_, bridged(ctx), {}};
  }
  template <bool kTrace>
  [[gnu::always_inline]] uint8_t step(rte_mbuf* m, PacketMeta& pm, WorkerContext& ctx, Pass& t) const {
    const parse::Parsed r = parse::parse_frame<kForm ? parse::kCommonShapeFirst : parse::kGeneral>(m, pm, t.seed, t.p);
    uint8_t e;
    if (r <= parse::Parsed::Ipv6) [[likely]] {
      const unsigned report = t.map->apply(pm);
      if (report) [[unlikely]] {
        t.by_pcp += report & TcQueueMap::kByPcp;
        t.cnp_steered += (report & TcQueueMap::kCnpSteered) != 0;
      }
      e = Ipv4;
      if (r != parse::Parsed::Ipv4) [[unlikely]] {
        e = Ipv6;
        ++t.not_ipv4;
      }
    } else {
      e = r == parse::Parsed::MacControl ? uint8_t{MacControl} : kNextDrop;
      if ((r == parse::Parsed::Arp || r == parse::Parsed::Lldp) && ctx.punt) {
        pm.punt = r == parse::Parsed::Arp ? PuntReason::Arp : PuntReason::Lldp;
        e = Local;
      }
      ++t.not_ipv4;
    }
    if (t.bridged) [[unlikely]] {
      // A MAC control frame acts on the port and LLDP goes to the switch; the rest of the
      // link-local group 01-80-C2-00-00-0X (STP, LACP, 802.1X) a bridge never forwards
      // (802.1Q 8.6.3); anything else is bridged but for what the parse found malformed.
      const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
      const bool link_local = d[0] == 0x01 && d[1] == 0x80 && d[2] == 0xC2 && d[3] == 0 && d[4] == 0 && (d[5] & 0xF0) == 0;
      if (e == Ipv4) ++t.not_ipv4;
      if (e != MacControl && r != parse::Parsed::Lldp && (e != kNextDrop || pm.drop_reason == DropReason::NonIp)) {
        if (link_local) {
          pm.drop_reason = DropReason::BridgeFiltered;
          e = kNextDrop;
        } else {
          e = Bridge;
        }
      }
    }
    if constexpr (kTrace) trace(pm, e, ctx);
    return e;
  }
  void publish_tally(const Pass& t, uint16_t n, Counter* ctr) const {
    const uint32_t common = n - t.p.general;
    const uint32_t ipv4 = t.p.ipv4 + common, udp = t.p.udp + common, roce = t.p.roce + common - t.p.common_not_roce;
    const uint32_t v[kCounters.size()] = {ipv4, t.p.ipv6, t.p.vlan, udp, roce, t.p.cnp,
                                          ipv4 + t.p.ipv6 - t.by_pcp, t.by_pcp, t.cnp_steered};
    add_tallies(ctr, v);
  }
  // Every packet went on to ipv4 when each was an IPv4 packet that got through.
  static uint8_t whole(const Pass& t, uint16_t) { return t.not_ipv4 == 0 ? uint8_t{Ipv4} : kNextMixed; }

  std::string format_trace(const TraceRecord& r) const override;
  // One packet through the stage outside a pipeline (tests and tools): the edge or kNextDrop.
  uint8_t process_one(rte_mbuf* m);

 private:
  static bool bridged(const WorkerContext& ctx);
  static void trace(const PacketMeta& pm, uint8_t e, WorkerContext& ctx);
  uint32_t seed_;
  TcQueueMap map_;  // the maps the stage was built with, for a context that publishes none
};

using L3Input = L3InputT<1>;
using L3InputGeneral = L3InputT<0>;

}  // namespace rs
