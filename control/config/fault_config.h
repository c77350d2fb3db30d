// `ports[].faults:` a port's fault model (dataplane/ports/fault_port.h), for tests and
// experiments that show what the switch does with a bad link or a hung receiver:
//   faults:
//     direction: both        # rx (into the switch), tx (out of it) or both
//     drop: 0.001            # probabilities per frame, 0..1
//     corrupt: 0.001
//     corrupt_offset: 24     # the byte changed (absent: any byte of the frame)
//     duplicate: 0.001
//     delay_us: 10           # every frame held this long...
//     jitter_us: 5           # ...plus up to this (frames then arrive out of order)
//     stuck: {start_s: 0.1, stop_s: 0.5, pfc: [3], quanta: 65535}
// `stuck`: from start_s (to stop_s, or for ever) the port's receiver takes nothing and sends PFC
// XOFF for the listed priorities (none: it only stops draining). Failures name the key path.
#pragma once
#include <yaml-cpp/yaml.h>

#include <string>

#include "control/config/config_reader.h"
#include "dataplane/ports/fault_port.h"

namespace rs {

FaultSpec read_faults(const ConfigReader& rd, const YAML::Node& n, const std::string& path);

}  // namespace rs
