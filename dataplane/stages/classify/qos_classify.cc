#include "dataplane/stages/classify/qos_classify.h"

namespace rs {

TcQueueMap::TcQueueMap(const QosMaps& maps)
    : maps_(maps), pcp_flag_(maps.trust == QosTrust::Pcp ? meta_flag::kVlan : 0) {
  for (std::size_t d = 0; d < dscp_pair_.size(); ++d) dscp_pair_[d] = pair_of(maps_.dscp_to_tc[d]);
  for (std::size_t p = 0; p < pcp_pair_.size(); ++p) pcp_pair_[p] = pair_of(maps_.pcp_to_tc[p]);
  for (std::size_t t = 0; t < tos_queue_.size(); ++t) tos_queue_[t] = dscp_pair_[t >> 2].queue & 7;
}

TcQueueMap::TcQueue TcQueueMap::pair_of(uint8_t tc) const {
  // The config loader keeps TCs below 8; a wider one must not read past the map.
  return TcQueue{tc, tc < maps_.tc_to_queue.size() ? maps_.tc_to_queue[tc] : uint8_t{0}};
}

QosClassify::QosClassify(const StageEnv& env) : map_(env.qos ? *env.qos : QosMaps::sonic_default()) {}

void QosClassify::process(Burst& in, uint8_t* next, WorkerContext&) {
  const uint16_t n = in.n;
  uint32_t by_pcp = 0, cnp = 0;
  for (uint16_t i = 0; i < n; ++i) {
    PacketMeta& pm = meta(in.pkts[i]);
    const unsigned r = map_.apply(pm);
    by_pcp += r & TcQueueMap::kByPcp;
    cnp += (r & TcQueueMap::kCnpSteered) != 0;
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
