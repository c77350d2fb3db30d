// The BMv2 CLI's target commands (see bmv2_cli.h): the queues, on the running state's port
// settings, and the program's counters and register, read from the data plane.
//   set_queue_depth <nb_pkts> [<egress_port> [<priority>]]   a queue's packet limit
//   set_queue_rate <rate_pps> [<egress_port> [<priority>]]   the port's rate
//   counter_read <counter> <index>       port_rx_counter / port_tx_counter: a port's frames
//   register_read <register> <index>     pfc_rx_quanta: port * 8 + priority
// Without a port, every port; without a priority, every queue (BMv2's queue for priority p is
// queue p here). roceswitch shapes a port as a whole at its link rate, so a rate takes no
// priority; BMv2 counts packets whatever their size, the switch bytes: rate_pps becomes the
// rate that sends that many full-size frames (buffer.mtu) a second, wire overhead included.
#include <fmt/core.h>

#include "control/p4/bmv2_args.h"
#include "control/p4/bmv2_cli.h"
#include "control/p4/p4_schema.h"
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

std::vector<std::string> Bmv2Cli::read_command(const std::vector<std::string>& t) {
  const std::string& c = t[0];
  const bool counter = c == "counter_read";
  if (t.size() != 3) throw OpError{"", fmt::format("usage: {} <{}> <index>", c, counter ? "counter" : "register")};
  const p4::ExternDef* e = p4::registry().extern_named(t[1]);
  if (!e || e->kind != (counter ? "counter" : "register")) throw OpError{"", fmt::format("no {} '{}'", counter ? "counter" : "register", t[1])};
  const uint64_t index = bmv2::number(t[2], 32, "index");
  if (index >= e->size) throw OpError{"", fmt::format("index {}: {} has {} cells", index, t[1], e->size)};
  const Switch& sw = st_.sw();
  if (counter) {
    // One cell a port: ports the switch does not have count nothing, as BMv2's unused cells.
    const bool in = t[1] == "port_rx_counter", has = index < sw.num_ports();
    const uint64_t packets = has ? (in ? sw.rx_packets(index) : sw.tx_packets(index)) : 0;
    const uint64_t bytes = has ? (in ? sw.rx_bytes(index) : sw.tx_bytes(index)) : 0;
    return {fmt::format("{}[{}]=  BmCounterData(packets={}, bytes={})", t[1], index, packets, bytes)};
  }
  const uint64_t port = index / 8;
  const uint64_t q = port < sw.num_ports() ? sw.egress(port).pfc_rx().quanta[index % 8].get() : 0;
  return {fmt::format("{}[{}]= {}", t[1], index, q)};
}

}  // namespace rs
