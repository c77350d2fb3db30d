// One worker wired as the Switch wires it, without a Switch: the tables and context of a
// TestWorld, plus an egress port (over a FakePort) for every switch port, ctx.egress naming
// only the ports this worker owns, handoff bursts towards the other workers, optionally a
// shared buffer over every port (as a switch with lossless PGs or a pool that can fill has),
// a tracer, and a pipeline to run bursts through. Tests of stages that enqueue, of pipelines
// and of the traffic manager, and the benchmarks, build on it instead of wiring a
// WorkerContext by hand. The destructor gives back every mbuf still held (queued, handed off).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/core/pipeline.h"
#include "dataplane/core/trace.h"
#include "dataplane/tm/buffer/shared_buffer.h"
#include "dataplane/tm/queue/egress_port.h"
#include "tests/support/fake_port.h"
#include "tests/support/stage_harness.h"

namespace rs::test {

struct RigConfig {
  uint16_t ports = 4;
  uint16_t worker = 0;          // the worker this rig plays
  std::vector<uint8_t> owners;  // port id -> worker owning its egress; empty: all this worker's
  EgressConfig egress{};        // every port's
  // A SharedBuffer over every port, built from `mmu` and `lossless` (by port id; empty: no
  // lossless PG), as the Switch builds it; without one each egress port has a private buffer.
  std::optional<MmuConfig> mmu;
  std::vector<PortLosslessConfig> lossless;
  uint64_t static_limits = 0;
  bool any_dynamic = false;
  uint64_t now_ns = 0;
};

class WorkerRig : public TestWorld {
 public:
  explicit WorkerRig(const RigConfig& cfg = {});
  ~WorkerRig();
  WorkerRig(const WorkerRig&) = delete;
  WorkerRig& operator=(const WorkerRig&) = delete;

  // The pipeline run() uses: a graph in YAML (parse_pipeline's checks apply), or a spec.
  void load_pipeline(const std::string& yaml, const StageEnv& env = {}, const std::string& source = "rig.yaml");
  void set_pipeline(const PipelineSpec& spec, const StageEnv& env = {});

  // Builds the packets (stamped with in_port) and runs them through the pipeline in bursts of
  // kBurst from `in_port`, as Worker::poll does, then flushes nothing: handed-off packets stay
  // in handoff[], queued ones in their egress port. Returns the mbufs in input order; one that
  // was dropped has been freed, so read only the ones the test knows were queued or handed off.
  std::vector<rte_mbuf*> run(const std::vector<PacketSpec>& specs, uint16_t in_port = 0);
  void run_mbufs(const std::vector<rte_mbuf*>& pkts, uint16_t in_port = 0);

  // transmit() on every egress port this worker owns, once, at `now_ns`; packets sent.
  uint32_t transmit(uint64_t now_ns);
  // Publishes every egress port's counters (a stage alone never calls transmit()).
  void publish();
  // Moves the packets handed to worker `w` out; the caller owns them.
  std::vector<rte_mbuf*> take_handoff(uint8_t w);

  EgressPort& egress(uint16_t p) { return *egress_ports[p]; }
  FakePort& port(uint16_t p) { return *ports[p]; }
  uint8_t owner(uint16_t p) const { return port_owner[p]; }

  RigConfig config;
  std::unique_ptr<SharedBuffer> sb;
  std::vector<std::unique_ptr<FakePort>> ports;           // by port id
  std::vector<std::unique_ptr<EgressPort>> egress_ports;  // by port id, owned here or not
  EgressPort* egress_by_port[kMaxPorts] = {};             // only the ones this worker owns
  Burst handoff[kMaxWorkers];
  Tracer tracer;
  std::unique_ptr<Pipeline> pipeline;
};

}  // namespace rs::test
