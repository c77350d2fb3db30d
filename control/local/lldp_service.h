// LLDP with the IEEE 802.1Qaz DCBX TLVs, as every RoCE-capable ASIC switch sends it: NICs in
// "willing" mode (NVIDIA, Intel) take their PFC and ETS settings from it. Each port with
// `lldp: true` advertises, every interval, the switch's identity and the port's DCBX settings:
// PFC Configuration (qos.pfc_enable, willing 0), ETS Configuration and Recommendation (each
// priority's traffic class is the egress queue it lands in; DWRR weights as bandwidth shares,
// strict queues as strict), and Application Priority (RoCEv2, UDP 4791, and the DSCPs of the
// lossless classes, to their lossless priority). What arrives is parsed into the port's
// neighbour; one that advertises another PFC enable vector is flagged (the lossless classes
// would not be lossless end to end).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <vector>

#include "dataplane/proto/lldp.h"
#include "dataplane/switch/switch.h"

namespace rs {

struct LldpCounters {
  uint64_t sent = 0, received = 0, malformed = 0, shutdowns = 0, expired = 0, pfc_mismatches = 0;
};

class LldpService {
 public:
  explicit LldpService(const Switch& sw);

  // The LLDPDUs due by `now` (each enabled port's, every interval_s), as (port, frame); a port
  // whose LLDP was turned off since its last one sends a shutdown LLDPDU (TTL 0), once.
  std::vector<std::pair<uint16_t, std::vector<uint8_t>>> due(uint64_t now);
  // A received LLDP frame on `port`: false when it is malformed (counted, nothing changes).
  bool receive(uint16_t port, const uint8_t* frame, uint32_t len, uint16_t l3_offset, uint64_t now);
  // The settings changed (which ports send, the interval): the next LLDPDUs go at once.
  void restart() { next_ns_ = 0; }
  // Forgets neighbours whose TTL ran out.
  void expire(uint64_t now);

  // What the switch advertises on `port`.
  proto::LldpInfo advert(uint16_t port) const;
  // The port's neighbour, if one is known.
  const proto::LldpInfo* neighbour(uint16_t port) const;
  bool pfc_mismatch(uint16_t port) const;
  // [{port, chassis_id, port_id, system_name, ttl, pfc: {enable, willing, mbc, cap}, pfc_mismatch,
  //   ets: {prio_tc, bw_pct, tsa}, app: [{priority, selector, protocol}]}]
  nlohmann::json neighbours_json() const;
  const LldpCounters& counters() const { return c_; }

 private:
  struct Peer {
    proto::LldpInfo info;
    uint64_t expires_ns = 0;
    bool pfc_mismatch = false;
  };
  const Switch& sw_;
  std::map<uint16_t, Peer> peers_;
  std::vector<bool> sending_;  // by port: it advertised last time
  uint64_t next_ns_ = 0;
  LldpCounters c_;
};

}  // namespace rs
