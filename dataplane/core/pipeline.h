// The pipeline is data: a YAML file in pipelines/ names the nodes (stage instances) and wires
// each declared next-edge to another node. The loader checks every edge and the graph is a
// DAG, so one rx burst visits each node at most once and no node input exceeds kBurst.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/core/burst.h"
#include "dataplane/core/counter.h"
#include "dataplane/core/stage.h"
#include "dataplane/core/trace.h"

namespace rs {

struct PipelineNodeSpec {
  std::string name;
  std::string stage;
  std::vector<std::pair<std::string, std::string>> next;  // edge name -> node name
};

struct PipelineSpec {
  std::string name;
  std::string source;  // file name or "<embedded>", for error messages
  std::vector<PipelineNodeSpec> nodes;  // nodes[0] is the entry
};

// Parses and validates; throws std::runtime_error "source: path: reason".
PipelineSpec parse_pipeline(const std::string& yaml_text, const std::string& source);

// Graphviz view of a pipeline, for docs and teaching.
std::string pipeline_to_dot(const PipelineSpec& spec);

class Pipeline {
 public:
  Pipeline(const PipelineSpec& spec, const StageEnv& env);

  // Runs one burst through the graph. Every packet ends queued, handed off or dropped.
  void run(Burst& in, WorkerContext& ctx);
  // The trace records of one worker as text: a header line per packet, then one line per node
  // it went through (what the stage saw or decided, then the edge, the drop reason or the
  // queue). `port_name` names ports by id.
  std::string format_trace(const Tracer& t, uint16_t worker, const std::vector<std::string>& port_name) const;

  struct Node {
    std::string name;
    std::unique_ptr<Stage> stage;
    std::vector<uint16_t> target;  // next-edge index -> node index
    // This node's input during run(): its own buf, or a burst handed over whole from the
    // node before it (see run()); back on buf between runs.
    Burst* in = &buf;
    Burst buf;
    Counter calls;
    Counter packets;
  };
  const std::vector<Node>& nodes() const { return nodes_; }

 private:
  std::vector<Node> nodes_;  // in topological order, entry first
};

}  // namespace rs
