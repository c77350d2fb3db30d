// What a person watching the switch sees: a live line per second and a summary table.
#pragma once
#include <string>
#include <vector>

#include "dataplane/switch/switch.h"

namespace rs {

class Reporter {
 public:
  explicit Reporter(const Switch& sw);
  // One line: per-port rx/tx rates since the last call, deepest queue, new drops.
  std::string progress_line(double t_s);
  std::string summary(double elapsed_s) const;
  // Start-up lines: the shared buffer and each lossless PG's thresholds and headroom
  // (configured and computed minimum). Empty when nothing is lossless.
  std::string buffer_plan() const;

 private:
  const Switch& sw_;
  double last_t_ = 0;
  std::vector<uint64_t> last_rx_bytes_, last_tx_bytes_, last_drops_;
  uint64_t last_ce_ = 0, last_pfc_tx_ = 0, last_pfc_rx_ = 0;
};

}  // namespace rs
