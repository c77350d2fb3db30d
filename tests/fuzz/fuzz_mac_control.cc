// libFuzzer target: the MAC control (PFC / 802.3x PAUSE) frame decoder, on any bytes. A frame
// it accepts as PFC must survive its own encoder: decode(encode(decode(x))) == decode(x).
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "dataplane/tm/pfc/pfc_frame.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rs::PauseFrame f;
  const rs::MacControlError e = rs::decode_mac_control(data, static_cast<uint32_t>(size), f);
  if (rs::to_string(e) == nullptr) std::abort();
  if (e != rs::MacControlError::Ok || !f.pfc) return 0;
  uint8_t again[rs::kMacControlFrameLen];
  rte_ether_addr src;
  std::memcpy(&src, data + 6, sizeof src);
  rs::encode_pfc(again, src, f.enable, f.quanta);
  rs::PauseFrame g;
  if (rs::decode_mac_control(again, sizeof again, g) != rs::MacControlError::Ok) std::abort();
  if (g.pfc != f.pfc || g.enable != f.enable || g.quanta != f.quanta) std::abort();
  return 0;
}
