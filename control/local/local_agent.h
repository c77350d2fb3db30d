// The switch as a host on its links (grout's control-plane nexthop and ICMP modules, SONiC's
// neighsyncd + the kernel): on the control thread it answers what the workers punted (ARP and
// neighbour solicitations for the ports' addresses, pings to them), sends ICMP time exceeded and
// destination unreachable, and keeps the neighbour table (neighbour_table.h): it resolves the
// hosts of the connected subnets and the next hops routes name by IP, holds their first packets
// meanwhile, and programs each resolved neighbour into the running state (its host route and
// the members that name it), one transaction per poll, as an operator's request would be.
// An interface is a port or a VLAN's (SVI): on a VLAN's, a host is wherever the bridge found its
// MAC (the FDB, else the port its last frame came in on), the switch's frames go out of that
// port tagged as it carries the VLAN, and what is for every host is flooded to the VLAN.
#pragma once
#include <nlohmann/json.hpp>
#include <rte_mbuf.h>

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "control/local/lldp_service.h"
#include "control/local/neighbour_table.h"
#include "control/runtime/running_state.h"

namespace rs {

struct LocalCounters {
  uint64_t arp_requests = 0;        // for one of our addresses
  uint64_t arp_replies_sent = 0;
  uint64_t arp_replies_received = 0;
  uint64_t arp_gratuitous = 0;
  uint64_t arp_ignored = 0;         // for another host, or from off the port's subnets
  uint64_t nd_solicitations = 0;    // for one of our addresses
  uint64_t nd_adverts_sent = 0;
  uint64_t nd_adverts_received = 0;
  uint64_t nd_ignored = 0;
  uint64_t echo_replies = 0;        // ICMP and ICMPv6
  uint64_t ttl_exceeded_sent = 0;
  uint64_t unreachable_sent = 0;
  uint64_t icmp_not_sent = 0;       // an error RFC 1812 / 4443 forbids, or no address to send from
  uint64_t other_local = 0;         // to our addresses, nothing to answer
  uint64_t probes_sent = 0;
  uint64_t gleaned = 0;             // packets whose next hop was being resolved
  uint64_t no_mbuf = 0;
  uint64_t fib_commits = 0;
  uint64_t fib_errors = 0;
};

NudParams nud_params(const NeighbourConfig& n);

class LocalAgent {
 public:
  // `wait` is what a commit calls while the workers pass their grace period (main: a yield;
  // a stepped test: its polls). The switch must have a LocalPath (some port has an address).
  LocalAgent(Switch& sw, RunningState& state, std::function<void()> wait);
  ~LocalAgent();
  LocalAgent(const LocalAgent&) = delete;
  LocalAgent& operator=(const LocalAgent&) = delete;

  // Punted packets, neighbour timers, what traffic used, the forwarding table brought up to date.
  void poll(uint64_t now_ns);

  const NeighbourTable& neighbours() const { return table_; }
  const LldpService& lldp() const { return lldp_; }
  const LocalCounters& counters() const { return c_; }
  // A port's name, or VlanN for a VLAN's interface.
  std::string port_name(uint16_t iface) const;
  // The table as the stats and `neighbour.list` show it: [{port, ip, mac, state, held, static}]
  // (local_reads.cc), and the counters.
  nlohmann::json neighbours_json() const;
  nlohmann::json counters_json() const;
  // The LLDP neighbours (LldpService::neighbours_json).
  nlohmann::json lldp_json() const { return lldp_.neighbours_json(); }

 private:
  struct Addr {
    uint16_t iface;
    InterfaceAddress a;
  };
  void on_packet(rte_mbuf* m, uint64_t now);
  void on_arp(rte_mbuf* m, uint64_t now);
  void on_local(rte_mbuf* m, uint64_t now);
  void on_nd(rte_mbuf* m, uint64_t now);
  void on_error(rte_mbuf* m, bool ttl);  // ICMP time exceeded / destination unreachable
  void on_glean(rte_mbuf* m, uint64_t now);
  void apply(const NudActions& actions);
  void probe(const NeighbourKey& k, const rte_ether_addr* unicast);
  void release(rte_mbuf* m, uint16_t iface, const rte_ether_addr& mac);  // a held packet goes
  void note_use(uint64_t now);
  void commit_fib();
  // The interfaces' addresses and the neighbour and LLDP settings as the switch now has them
  // (RunningState::host_set): a neighbour off every subnet of its interface, and not a next
  // hop a route names, is forgotten (its host route goes with this poll's transaction).
  void refresh_host();

  // Our address on `iface` (of the family, in the subnet holding `peer` when there is one).
  const InterfaceAddress* source_on(uint16_t iface, const IpAddr& peer) const;
  bool is_ours(uint16_t iface, const IpAddr& a) const;
  // Not a subnet's own address nor (IPv4) its broadcast.
  bool names_a_host(const IpAddr& a) const;
  // The interface whose subnet holds `a`, or -1.
  int iface_of_subnet(const IpAddr& a) const;
  // The interface a punted packet came in on, and its MAC.
  static uint16_t iface_of(const PacketMeta& pm) { return pm.vlan ? svi_iface(pm.vlan) : pm.in_port; }
  rte_ether_addr mac_of(uint16_t iface) const;
  // The port a host on VLAN `vlan` with `mac` is on, or kInvalidPort.
  uint16_t svi_port(uint16_t vlan, const rte_ether_addr& mac) const;
  // Queues a frame the switch made on `iface` (network-control class): on a VLAN's, out of
  // `port` when given, else where its destination MAC is, else flooded to the VLAN.
  void send_frame(const uint8_t* frame, uint32_t len, uint16_t iface, L3Type l3, uint8_t dscp, uint16_t port = kInvalidPort);
  void send_on_port(const uint8_t* frame, uint32_t len, uint16_t port, uint16_t vlan, L3Type l3, uint8_t dscp);

  Switch& sw_;
  RunningState& state_;
  std::function<void()> wait_;
  LocalPath& path_;
  NeighbourTable table_;
  LldpService lldp_;
  std::vector<Addr> addrs_;
  LocalCounters c_;
  // Forwarding changes waiting for this poll's transaction: true = resolved with the MAC.
  std::map<NeighbourKey, std::optional<rte_ether_addr>> pending_;
  std::map<NeighbourKey, uint64_t> last_packets_;  // forwarding counters seen, for `used`
  std::vector<VlanInterface> svis_;
  // VLAN interfaces' hosts: the port each (VLAN, MAC) last sent us a frame from, and the port
  // each resolved neighbour's next hop was programmed with (moved when the bridge moves it).
  std::map<std::pair<uint16_t, uint64_t>, uint16_t> seen_on_;
  std::map<NeighbourKey, uint16_t> programmed_port_;
  uint64_t next_use_check_ = 0;
  uint64_t host_generation_ = 0;  // Switch::host_generation() the addresses were read at
  bool started_ = false;
};

}  // namespace rs
