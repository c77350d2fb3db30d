#include "dataplane/stages/classify/qos_classify.h"

#include <cstddef>

namespace rs {

// tc and queue are adjacent in PacketMeta, so one (tc, queue) pair per DSCP / PCP is one
// 16-bit load and one 16-bit store per packet.
static_assert(offsetof(PacketMeta, queue) == offsetof(PacketMeta, tc) + 1);

QosClassify::QosClassify(const StageEnv& env) : maps_(env.qos ? *env.qos : QosMaps::sonic_default()) {
  for (std::size_t d = 0; d < dscp_pair_.size(); ++d) dscp_pair_[d] = pair_of(maps_.dscp_to_tc[d]);
  for (std::size_t p = 0; p < pcp_pair_.size(); ++p) pcp_pair_[p] = pair_of(maps_.pcp_to_tc[p]);
}

QosClassify::TcQueue QosClassify::pair_of(uint8_t tc) const {
  // The config loader keeps TCs below 8; a wider one must not read past the map.
  return TcQueue{tc, tc < maps_.tc_to_queue.size() ? maps_.tc_to_queue[tc] : uint8_t{0}};
}

void QosClassify::process(Burst& in, uint8_t* next, WorkerContext&) {
  const uint16_t n = in.n;
  uint32_t by_pcp = 0, cnp = 0;
  // PCP trust only applies to tagged frames; untagged ones fall back to DSCP.
  const uint8_t pcp_flag = maps_.trust == QosTrust::Pcp ? meta_flag::kVlan : 0;
  for (uint16_t i = 0; i < n; ++i) {
    PacketMeta& pm = meta(in.pkts[i]);
    const bool by_pcp_here = (pm.flags & pcp_flag) != 0;
    const TcQueue tq = by_pcp_here ? pcp_pair_[pm.pcp] : dscp_pair_[pm.dscp];
    by_pcp += by_pcp_here;
    __builtin_memcpy(&pm.tc, &tq, sizeof(tq));
    // CNPs carry the congestion signal back to the sender: they skip the data queues (whose
    // depth is the congestion being reported) for a strict queue, whatever their DSCP says.
    if ((pm.flags & meta_flag::kCnp) && maps_.cnp_queue >= 0) [[unlikely]] {
      pm.queue = static_cast<uint8_t>(maps_.cnp_queue);
      ++cnp;
    }
    next[i] = pm.l3 == L3Type::Ipv6 ? Ipv6 : Ipv4;
  }
  std::array<uint32_t, kCounters.size()> tally{};
  tally[ByPcp] = by_pcp;
  tally[ByDscp] = n - by_pcp;
  tally[Cnp] = cnp;
  publish(tally);
}

REGISTER_STAGE(QosClassify);

}  // namespace rs
