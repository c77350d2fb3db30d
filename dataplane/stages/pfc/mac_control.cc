#include "dataplane/stages/pfc/mac_control.h"

#include <algorithm>
#include <cstring>

#include "dataplane/pfc/pfc_frame.h"
#include "dataplane/queues/egress_port.h"

namespace rs {

void MacControl::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  std::array<uint32_t, kCounters.size()> tally{};
  for (uint16_t i = 0; i < in.n; ++i) {
    rte_mbuf* m = in.pkts[i];
    PacketMeta& pm = meta(m);
    next[i] = kNextDrop;
    PauseFrame f;
    const uint8_t* frame = rte_pktmbuf_mtod(m, const uint8_t*);
    uint32_t len = m->data_len;
    uint8_t untagged[kMacControlFrameLen];
    if (pm.l3_offset > 14 && len >= pm.l3_offset + 20u) {
      // Some NICs tag MAC control frames: decode the frame as if the tag were not there (the
      // tag's 4 bytes come out of the padding, which is zero).
      const uint32_t body = std::min<uint32_t>(len - (pm.l3_offset - 2u), kMacControlFrameLen - 12);
      std::memset(untagged, 0, sizeof untagged);
      std::memcpy(untagged, frame, 12);
      std::memcpy(untagged + 12, frame + pm.l3_offset - 2, body);
      frame = untagged;
      len = kMacControlFrameLen;
    }
    if (decode_mac_control(frame, len, f) != MacControlError::Ok) {
      pm.drop_reason = DropReason::MalformedMacControl;
      ++tally[Malformed];
      continue;
    }
    pm.drop_reason = DropReason::MacControl;
    ++tally[f.pfc ? Pfc : Pause];
    // The receiving port's egress (same worker) pauses its queues: PFC acts where it lands.
    if (ctx.egress && pm.in_port < ctx.num_ports && ctx.egress[pm.in_port])
      ctx.egress[pm.in_port]->on_pause_frame(f, ctx.now_ns);
  }
  publish(tally);
}

REGISTER_STAGE(MacControl);

}  // namespace rs
