// The BMv2 CLI's queue commands (see bmv2_cli.h), on the running state's port settings:
//   set_queue_depth <nb_pkts> [<egress_port> [<priority>]]   a queue's packet limit
//   set_queue_rate <rate_pps> [<egress_port> [<priority>]]   the port's rate
// Without a port, every port; without a priority, every queue (BMv2's queue for priority p is
// queue p here). roceswitch shapes a port as a whole at its link rate, so a rate takes no
// priority; BMv2 counts packets whatever their size, the switch bytes: rate_pps becomes the
// rate that sends that many full-size frames (buffer.mtu) a second, wire overhead included.
#include <fmt/core.h>

#include "control/p4/bmv2_args.h"
#include "control/p4/bmv2_cli.h"
#include "dataplane/tm/queue/shaper.h"

namespace rs {

std::vector<std::string> Bmv2Cli::queue_command(const std::vector<std::string>& t) {
  const std::string& c = t[0];
  const bool depth = c == "set_queue_depth";
  if (t.size() < 2 || t.size() > 4) throw OpError{"", fmt::format("usage: {} <{}> [<egress_port> [<priority>]]", c, depth ? "nb_pkts" : "rate_pps")};
  const uint64_t value = bmv2::number(t[1], 32, depth ? "nb_pkts" : "rate_pps");
  if (value == 0) throw OpError{"", fmt::format("{}: must be at least 1", depth ? "nb_pkts" : "rate_pps")};
  SwitchConfig next = st_.config(false);
  std::size_t first = 0, last = next.ports.size();
  if (t.size() > 2) {
    first = bmv2::number(t[2], 16, "egress_port");
    if (first >= next.ports.size()) throw OpError{"", fmt::format("egress_port {}: the switch has {} ports", first, next.ports.size())};
    last = first + 1;
  }
  int queue = -1;
  if (t.size() > 3) {
    queue = static_cast<int>(bmv2::number(t[3], 32, "priority"));
    if (queue > 7) throw OpError{"", fmt::format("priority {}: queues are 0 to 7", queue)};
    if (!depth) throw OpError{"", "a queue's own rate: roceswitch shapes each port as a whole (give no priority)"};
  }
  for (std::size_t p = first; p < last; ++p) {
    EgressConfig& e = next.ports[p].egress;
    if (depth) {
      for (int q = 0; q < 8; ++q)
        if (queue < 0 || q == queue) e.limits[q].packets = static_cast<uint32_t>(value);
    } else {
      e.speed_gbps = static_cast<double>(value) * wire_bytes(next.mmu.pool.mtu + 14) * 8 / 1e9;
    }
  }
  st_.settings_set(0, std::move(next));
  return {};
}

}  // namespace rs
