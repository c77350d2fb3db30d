// mac_control: MAC control frames (EtherType 0x8808: 802.3x PAUSE, 802.1Qbb PFC) are
// link-local: consumed here, never forwarded, and counted by kind; a valid one pauses or
// resumes the receiving port's egress queues (PFC acts where it lands). A frame of the wrong
// size, address or opcode is counted as malformed and changes nothing.
#pragma once
#include "dataplane/core/stage.h"

namespace rs {

class MacControl final : public StageBase<MacControl> {
 public:
  static constexpr std::string_view kName = "mac_control";
  static constexpr std::array<std::string_view, 0> kNext = {};
  enum Ctr : uint8_t { Pause, Pfc, Malformed };
  static constexpr std::array<std::string_view, 3> kCounters = {"pause", "pfc", "malformed"};

  explicit MacControl(const StageEnv&) {}
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
  std::string format_trace(const TraceRecord& r) const override;
};

}  // namespace rs
