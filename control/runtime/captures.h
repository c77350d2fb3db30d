// Capture sessions (`capture` in the control protocol, `roceswitch-ctl capture`): a port's rx,
// tx or both written to a pcapng file that Wireshark and tshark open, until a packet count or
// a duration is reached or the session is stopped. The workers' taps copy the packets
// (ports/capture_tap.h); poll(), on the control thread, drains the copies and writes them.
//
// The file is written here rather than by DPDK's rte_pcapng: in DPDK 22.11 an rte_pcapng file
// describes the process's ethdevs only (it writes their interface blocks when it opens), so a
// port that is not an ethdev (an emulated host, an emulated link) could not appear in it.
// pcapng's blocks are simple (section header, one interface description, enhanced packets).
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>

#include "dataplane/switch/switch.h"

namespace rs {

struct CaptureSpec {
  uint16_t port = 0;
  uint8_t dirs = CaptureTap::kRx | CaptureTap::kTx;
  std::string file;
  uint64_t count = 0;      // packets; 0: no limit
  double duration_s = 0;   // 0: no limit
  uint32_t snaplen = 0;    // bytes kept of each packet; 0: all
};

class Captures {
 public:
  // `now_ns` is the switch's clock (what the workers stamp copies with).
  Captures(Switch& sw, std::function<uint64_t()> now_ns);
  ~Captures();  // closes every file
  Captures(const Captures&) = delete;
  Captures& operator=(const Captures&) = delete;

  // Throws std::runtime_error with the reason (port already captured, file not writable).
  void start(const CaptureSpec& spec);
  bool stop(uint16_t port);  // false: no session on that port
  void poll();               // drain, write, end sessions at their limits
  nlohmann::json list() const;
  bool active() const;

 private:
  struct Session {
    CaptureSpec spec;
    std::FILE* f = nullptr;
    uint64_t start_ns = 0, end_ns = 0;  // switch clock; end 0: no time limit
    int64_t to_epoch_ns = 0;            // added to a switch time gives the wall clock
    uint64_t packets = 0, bytes = 0;
    bool done = false;
    std::string error;
  };
  void finish(Session& s);
  void write_packet(Session& s, const CaptureHeader& h, const uint8_t* data, uint32_t len);

  Switch& sw_;
  std::function<uint64_t()> now_ns_;
  std::map<uint16_t, Session> sessions_;  // by port; finished ones stay listed until restarted
};

}  // namespace rs
