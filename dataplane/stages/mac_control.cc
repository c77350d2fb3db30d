#include "dataplane/stages/mac_control.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstring>

#include "dataplane/tm/pfc/pfc_frame.h"
#include "dataplane/tm/queue/egress_port.h"

namespace rs {

uint8_t MacControl::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
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
      if (ctx.tracing) [[unlikely]]
        ctx.trace(pm, kNextDrop);
      continue;
    }
    pm.drop_reason = DropReason::MacControl;
    ++tally[f.pfc ? Pfc : Pause];
    if (ctx.tracing) [[unlikely]] {
      uint64_t quanta;  // the first four priorities' quanta, 16 bits each, for the trace
      std::memcpy(&quanta, f.quanta.data(), 8);
      ctx.trace(pm, kNextDrop, uint64_t{f.pfc} << 8 | f.enable, quanta);
    }
    // The receiving port's egress (same worker) pauses its queues: PFC acts where it lands.
    if (ctx.egress && pm.in_port < ctx.num_ports && ctx.egress[pm.in_port])
      ctx.egress[pm.in_port]->on_pause_frame(f, ctx.now_ns);
  }
  publish(tally);
  return kNextDrop;
}

std::string MacControl::format_trace(const TraceRecord& r) const {
  if (r.drop == DropReason::MalformedMacControl) return "malformed";
  const bool pfc = (r.a >> 8) & 1;
  const unsigned enable = r.a & 0xFF;
  if (!pfc) return fmt::format("pause quanta {}", r.b & 0xFFFF);
  std::string s = fmt::format("pfc enable {:#04x}", enable);
  for (unsigned p = 0; p < 4; ++p)
    if (enable & (1u << p)) s += fmt::format(" p{}={}", p, (r.b >> (16 * p)) & 0xFFFF);
  for (unsigned p = 4; p < 8; ++p)
    if (enable & (1u << p)) s += fmt::format(" p{}", p);
  return s;
}

REGISTER_STAGE(MacControl);

}  // namespace rs
