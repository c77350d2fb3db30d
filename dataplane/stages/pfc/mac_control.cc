#include "dataplane/stages/pfc/mac_control.h"

#include <rte_ether.h>

namespace rs {
namespace {
constexpr uint16_t kOpPause = 0x0001;
constexpr uint16_t kOpPfc = 0x0101;
constexpr uint32_t kMinFrame = 60;  // without FCS
}  // namespace

void MacControl::process(Burst& in, uint8_t* next, WorkerContext&) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    const uint8_t* p = rte_pktmbuf_mtod_offset(m, const uint8_t*, pm.l3_offset);
    const uint16_t op = m->data_len >= pm.l3_offset + 2u ? static_cast<uint16_t>(p[0] << 8 | p[1]) : 0;
    next[i] = kNextDrop;
    if (m->pkt_len < kMinFrame || (op != kOpPause && op != kOpPfc)) {
      pm.drop_reason = DropReason::MalformedMacControl;
      ++tally[Malformed];
      continue;
    }
    pm.drop_reason = DropReason::MacControl;
    ++tally[op == kOpPfc ? Pfc : Pause];
  }
  publish(tally);
}

REGISTER_STAGE(MacControl);

}  // namespace rs
