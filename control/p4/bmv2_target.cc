// The BMv2 CLI's target commands (see bmv2_cli.h): the queues, on the running state's port
// settings, and the program's counters and register, read from the data plane.
//   set_queue_depth <nb_pkts> [<egress_port> [<priority>]]   a queue's packet limit
//   set_queue_rate <rate_pps> [<egress_port> [<priority>]]   the port's rate
//   counter_read <counter> <index>       port_rx_counter / port_tx_counter: a port's frames
//   register_read <register> <index>     pfc_rx_quanta: port * 8 + priority
//   table_add port_mac rewrite_smac <port> => <mac>, table_modify port_mac rewrite_smac
//   <handle> [=>] <mac>, table_dump port_mac: a port's MAC. Every port has an entry from the
//   start (its configured MAC, handle = port), so table_add sets it (a BMv2 script written for
//   an empty table runs unchanged) and table_delete is refused: a port always has a MAC.
// Without a port, every port; without a priority, every queue (BMv2's queue for priority p is
// queue p here). roceswitch shapes a port as a whole at its link rate, so a rate takes no
// priority; BMv2 counts packets whatever their size, the switch bytes: rate_pps becomes the
// rate that sends that many full-size frames (buffer.mtu) a second, wire overhead included.
#include <fmt/core.h>
#include <fmt/format.h>

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

std::vector<std::string> Bmv2Cli::port_mac_command(const std::vector<std::string>& t) {
  const std::string& c = t[0];
  const std::size_t ports = st_.sw().num_ports();
  SwitchConfig cfg = st_.config(false);
  if (c == "table_dump") {
    std::vector<std::string> out{"==========", "TABLE ENTRIES"};
    for (std::size_t p = 0; p < ports; ++p)
      out.push_back(fmt::format("Dumping entry {}: port_mac {} => rewrite_smac - {:02x}", p, p,
                                fmt::join(cfg.ports[p].mac.addr_bytes, cfg.ports[p].mac.addr_bytes + 6, ":")));
    out.push_back("==========");
    return out;
  }
  if (c == "table_num_entries") return {fmt::format("{}", ports)};
  if (c == "table_delete" || c == "table_clear") throw OpError{"", "port_mac: a port always has a MAC in roceswitch (table_modify its entry)"};
  if (c == "table_set_default") {
    if (t.size() < 3 || t[2] != "NoAction") throw OpError{"", "port_mac: the default stays NoAction (every port has its entry)"};
    return {};
  }
  // table_add port_mac rewrite_smac <port> => <mac> / table_modify port_mac rewrite_smac <handle> [=>] <mac>
  std::vector<std::string> a(t.begin() + 2, t.end());
  std::erase(a, std::string("=>"));
  if (t.size() < 3 || t[2] != "rewrite_smac" || a.size() != 3)
    throw OpError{"", fmt::format("usage: {} port_mac rewrite_smac <{}> => <smac>", c, c == "table_add" ? "port" : "entry handle")};
  const uint64_t port = bmv2::number(a[1], 9, c == "table_add" ? "egress_port" : "entry handle");
  if (port >= ports) throw OpError{"", fmt::format("{} {}: the switch has {} ports", c == "table_add" ? "port" : "entry", port, ports)};
  rte_ether_addr mac;
  if (rte_ether_unformat_addr(a[2].c_str(), &mac) != 0) {
    const uint64_t v = bmv2::number(a[2], 48, "smac");
    for (int i = 0; i < 6; ++i) mac.addr_bytes[i] = static_cast<uint8_t>(v >> (40 - 8 * i));
  }
  cfg.ports[port].mac = mac;
  st_.settings_set(0, std::move(cfg));
  if (c == "table_add") return {fmt::format("Entry has been added with handle {}", port)};
  return {};
}

}  // namespace rs
