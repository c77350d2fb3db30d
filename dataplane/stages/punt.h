// punt: the packets for the control plane (the P4 program's CPU port), taken from the `arp` and
// `local` edges. Per port and per kind (CoPP: arp, ip2me, icmp_error, neigh_miss, lldp) a policer
// decides what may go up, as an ASIC polices its CPU queue: what is over is dropped and counted
// (punt_policed; a packet that was expiring or had no route keeps that reason, only its ICMP
// answer was policed). The rest goes on this worker's punt ring to the control thread
// (switch/local_path.h); a full ring is a counted drop. Nothing else happens on a worker.
#pragma once
#include <array>

#include "dataplane/core/gcra.h"
#include "dataplane/core/stage.h"
#include "dataplane/tables/copp.h"

namespace rs {

class Punt final : public StageBase<Punt> {
 public:
  static constexpr std::string_view kName = "punt";
  static constexpr std::array<std::string_view, 0> kNext = {};
  enum Ctr : uint8_t { Arp, Ip2me, IcmpError, NeighMiss, Lldp, Policed, QueueFull };
  static constexpr std::array<std::string_view, 7> kCounters = {"arp", "ip2me", "icmp_error", "neigh_miss", "lldp", "policed", "queue_full"};

  explicit Punt(const StageEnv& env);
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
  std::string format_trace(const TraceRecord& r) const override;

  // The kind a punted packet is policed as (ND messages are ARP's kind).
  static CoppClass classify(const rte_mbuf* m, const PacketMeta& pm);

 private:
  // A GCRA policer per port and kind (core/gcra.h): each kind's rate (pps 0: none allowed; the
  // switch's published PuntPolicy when the worker has one, so it can change at run time) and
  // each port's theoretical arrival times.
  std::array<GcraRate, kCoppClasses> rate_{};
  std::array<std::array<uint64_t, kCoppClasses>, kMaxPorts> tat_{};
};

}  // namespace rs
