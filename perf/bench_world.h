// Shared set-up for the microbenchmarks: a FIB of 1000 IPv4 routes over 16 eight-way ECMP
// groups, 8 egress ports at 400 Gb/s (so the shaper never limits), and 1024 distinct 64-byte
// RoCEv2 frames (60 bytes in the mbuf, 64 with FCS) spread over those routes and over UDP
// source ports. Stages mutate packets (TTL, MACs, metadata), so every benchmark restores its
// packets from these templates before each timed batch.
#pragma once
#include <benchmark/benchmark.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <ctime>
#include <vector>

#include "dataplane/core/packet_meta.h"
#include "dataplane/tables/qos_maps.h"
#include "dataplane/tm/queue/egress_port.h"
#include "tests/support/worker_rig.h"

namespace rs::bench {

inline constexpr uint16_t kInPort = 0;
inline constexpr uint16_t kOutPorts = 8;        // ports 1..8, every group spans all of them
inline constexpr uint32_t kRoutes = 1000;
inline constexpr uint32_t kGroups = 16;
inline constexpr uint32_t kTemplates = 1024;
inline constexpr uint32_t kFrameLen = 60;       // 58 bytes of headers + ICRC, padded to 60
// Stages are measured on bursts of 32 (the usual DPDK burst), whatever the worker uses.
inline constexpr uint16_t kBenchBurst = 32;
static_assert(kBenchBurst <= kBurst);
inline constexpr uint32_t kBurstsPerBatch = 32;  // one timed iteration = 32 bursts of kBenchBurst
inline constexpr uint32_t kPktsPerBatch = kBurstsPerBatch * kBenchBurst;

// Where a stage sits in l3_roce's IPv4 path; a template stores the metadata a packet carries
// when it reaches each of them. nexthop_select's is what ipv4_route_general leaves (the group
// found, no member chosen): in l3_roce the ECMP member is chosen inside ipv4_route.
enum StageIndex : int { kL3Input, kIpv4Route, kNexthopSelect, kRewriteEnqueue, kNumStages };

struct Template {
  std::array<uint8_t, kFrameLen> bytes;
  PacketMeta meta_before[kNumStages];
};

// One worker's wiring (tests/support/worker_rig.h): the FIB, and an egress port for every
// port over a FakePort that frees and counts what it is given, as net_null's tx does.
struct World {
  World();
  test::WorkerRig rig;
  QosMaps qos;
  StageEnv env;
  std::vector<Template> templates;
  WorkerContext& ctx() { return rig.ctx; }
  EgressPort* egress(uint16_t p) { return rig.egress_by_port[p]; }
  // Packets the ports have taken so far (all of them, the ingress port included).
  uint64_t sent() const;
};

// Built on first use, after the EAL is up (rte_lpm and the mempool need it).
World& world();
// Frees the world before the EAL goes down (main calls it).
void destroy_world();

// Restores `n` packets to template state for `stage`, picking templates round-robin from `*cursor`.
void restore(rte_mbuf* const* pkts, uint32_t n, int stage, uint32_t* cursor);
// Allocates `n` fresh mbufs (as an rx PMD would) and fills them for `stage`; aborts on an empty pool.
void alloc_restore(rte_mbuf** pkts, uint32_t n, int stage, uint32_t* cursor);
// Calls transmit on every egress port until their queues are empty, so mbufs return to the pool.
void drain_egress(WorkerContext& ctx);

// Times one batch in this thread's CPU time (the untimed restore stays outside). CPU time, not
// wall time: on a shared machine a wall clock also counts the time other processes ran, which
// inflates every figure by the machine's load. Cache pollution by others still shows.
class BatchTimer {
 public:
  void start() { t0_ = now(); }
  void stop(benchmark::State& state) { state.SetIterationTime(now() - t0_); }

 private:
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  }
  double t0_ = 0;
};

// items/s plus a per-packet time counter ("ns_per_pkt").
void report_packets(benchmark::State& state, uint64_t per_iteration);

}  // namespace rs::bench
