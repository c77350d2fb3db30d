#include <cmath>

#include "dataplane/tm/buffer/mmu_config.h"

namespace rs {

uint32_t response_quanta(double speed_gbps) {
  // Published per-speed response times (background.md); a speed between two entries takes
  // the faster one's figure, which errs on the side of more headroom.
  struct Entry {
    double gbps;
    uint32_t quanta;
  };
  static constexpr Entry kTable[] = {{10, 67}, {25, 80}, {40, 118}, {100, 394}, {400, 905}};
  for (const Entry& e : kTable)
    if (speed_gbps <= e.gbps) return e.quanta;
  return static_cast<uint32_t>(std::ceil(905.0 * speed_gbps / 400.0));
}

uint64_t headroom_min_bytes(double speed_gbps, double cable_length_m, uint32_t mtu) {
  constexpr double kNsPerMetre = 5.0;  // light in fibre or copper: about 2/3 c
  const double bytes_per_ns = speed_gbps / 8.0;
  const double cable_bytes = 2.0 * cable_length_m * kNsPerMetre * bytes_per_ns;
  return mtu + static_cast<uint64_t>(std::ceil(cable_bytes)) + uint64_t{response_quanta(speed_gbps)} * 64;
}

}  // namespace rs
