#include "dataplane/stages/classify/qos_classify.h"

namespace rs {

void QosClassify::process(Burst& in, uint8_t* next, WorkerContext&) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    PacketMeta& pm = meta(in.pkts[i]);
    // PCP trust only applies to tagged frames; untagged ones fall back to DSCP.
    if (maps_.trust == QosTrust::Pcp && (pm.flags & meta_flag::kVlan)) {
      pm.tc = maps_.pcp_to_tc[pm.pcp];
      ++tally[ByPcp];
    } else {
      pm.tc = maps_.dscp_to_tc[pm.dscp];
      ++tally[ByDscp];
    }
    pm.queue = maps_.tc_to_queue[pm.tc];
    // CNPs carry the congestion signal back to the sender: they skip the data queues (whose
    // depth is the congestion being reported) for a strict queue, whatever their DSCP says.
    if ((pm.flags & meta_flag::kCnp) && maps_.cnp_queue >= 0) [[unlikely]] {
      pm.queue = static_cast<uint8_t>(maps_.cnp_queue);
      ++tally[Cnp];
    }
    next[i] = pm.l3 == L3Type::Ipv6 ? Ipv6 : Ipv4;
  }
  publish(tally);
}

REGISTER_STAGE(QosClassify);

}  // namespace rs
