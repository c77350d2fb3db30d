#include "dataplane/core/pipeline.h"

#include <fmt/core.h>
#include <yaml-cpp/yaml.h>

#include <cassert>
#include <cstring>
#include <map>
#include <functional>
#include <set>
#include <stdexcept>

namespace rs {
namespace {

[[noreturn]] void fail(const PipelineSpec& s, const std::string& path, const std::string& why) {
  throw std::runtime_error(fmt::format("{}: {}: {}", s.source, path, why));
}

}  // namespace

PipelineSpec parse_pipeline(const std::string& yaml_text, const std::string& source) {
  PipelineSpec spec;
  spec.source = source;
  YAML::Node root;
  try {
    root = YAML::Load(yaml_text);
  } catch (const YAML::Exception& e) {
    fail(spec, "(file)", e.what());
  }
  if (!root.IsMap()) fail(spec, "(root)", "expected a map with 'pipeline' and 'nodes'");
  for (auto kv : root) {
    auto k = kv.first.as<std::string>();
    if (k != "pipeline" && k != "nodes") fail(spec, k, "unknown key");
  }
  spec.name = root["pipeline"] ? root["pipeline"].as<std::string>() : "unnamed";
  auto nodes = root["nodes"];
  if (!nodes || !nodes.IsSequence() || nodes.size() == 0) fail(spec, "nodes", "expected a non-empty list");
  std::set<std::string> names;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto n = nodes[i];
    std::string path = fmt::format("nodes[{}]", i);
    if (!n.IsMap() || !n["name"]) fail(spec, path, "expected a map with 'name'");
    PipelineNodeSpec ns;
    for (auto kv : n) {
      auto k = kv.first.as<std::string>();
      if (k != "name" && k != "stage" && k != "next") fail(spec, path + "." + k, "unknown key");
    }
    ns.name = n["name"].as<std::string>();
    ns.stage = n["stage"] ? n["stage"].as<std::string>() : ns.name;
    if (!names.insert(ns.name).second) fail(spec, path + ".name", "duplicate node '" + ns.name + "'");
    if (auto nx = n["next"]) {
      if (!nx.IsMap()) fail(spec, path + ".next", "expected a map edge -> node");
      for (auto kv : nx) ns.next.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
    }
    spec.nodes.push_back(std::move(ns));
  }
  // Every declared edge of every stage is wired, to an existing node; nothing extra.
  StageEnv probe_env;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) {
    auto& ns = spec.nodes[i];
    std::string path = fmt::format("nodes[{}]", i);
    auto factory = StageRegistry::find(ns.stage);
    if (!factory) fail(spec, path + ".stage", "unknown stage '" + ns.stage + "'");
    auto st = factory(probe_env);
    for (auto edge : st->next_names()) {
      bool wired = false;
      for (auto& [e, target] : ns.next) wired |= (e == edge);
      if (!wired) fail(spec, path + ".next", fmt::format("edge '{}' of stage '{}' is not wired", edge, ns.stage));
    }
    for (auto& [e, target] : ns.next) {
      bool declared = false;
      for (auto edge : st->next_names()) declared |= (e == edge);
      if (!declared) fail(spec, path + ".next." + e, fmt::format("stage '{}' has no edge '{}'", ns.stage, e));
      if (!names.count(target)) fail(spec, path + ".next." + e, "unknown node '" + target + "'");
      if (target == spec.nodes[0].name) fail(spec, path + ".next." + e, "edge back to the entry node");
    }
  }
  // Cycle check (DFS colours).
  std::map<std::string, const PipelineNodeSpec*> by_name;
  for (auto& n : spec.nodes) by_name[n.name] = &n;
  std::map<std::string, int> colour;
  std::function<void(const std::string&)> visit = [&](const std::string& n) {
    colour[n] = 1;
    for (auto& [e, t] : by_name[n]->next) {
      if (colour[t] == 1) fail(spec, "nodes", fmt::format("cycle through '{}' -> '{}'", n, t));
      if (colour[t] == 0) visit(t);
    }
    colour[n] = 2;
  };
  visit(spec.nodes[0].name);
  for (auto& n : spec.nodes)
    if (colour[n.name] == 0) fail(spec, "nodes", fmt::format("node '{}' is unreachable from '{}'", n.name, spec.nodes[0].name));
  return spec;
}

std::string pipeline_to_dot(const PipelineSpec& spec) {
  std::string out = fmt::format("digraph \"{}\" {{\n  rankdir=LR;\n", spec.name);
  for (auto& n : spec.nodes) {
    out += fmt::format("  \"{}\" [shape=box label=\"{}\\n({})\"];\n", n.name, n.name, n.stage);
    for (auto& [e, t] : n.next) out += fmt::format("  \"{}\" -> \"{}\" [label=\"{}\"];\n", n.name, t, e);
  }
  out += "}\n";
  return out;
}

Pipeline::Pipeline(const PipelineSpec& spec, const StageEnv& env) {
  // Topological order (Kahn) so a node runs once all its inputs have been filled.
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < spec.nodes.size(); ++i) index[spec.nodes[i].name] = i;
  std::vector<int> indeg(spec.nodes.size(), 0);
  for (auto& n : spec.nodes)
    for (auto& [e, t] : n.next) indeg[index[t]]++;
  std::vector<std::size_t> order, ready{0};
  while (!ready.empty()) {
    auto i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (auto& [e, t] : spec.nodes[i].next)
      if (--indeg[index[t]] == 0) ready.push_back(index[t]);
  }
  std::vector<uint16_t> pos(spec.nodes.size());
  for (std::size_t k = 0; k < order.size(); ++k) pos[order[k]] = static_cast<uint16_t>(k);
  nodes_ = std::vector<Node>(order.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    auto& ns = spec.nodes[order[k]];
    auto& node = nodes_[k];
    node.name = ns.name;
    node.in = &node.buf;
    node.stage = StageRegistry::find(ns.stage)(env);
    for (auto edge : node.stage->next_names())
      for (auto& [e, t] : ns.next)
        if (e == edge) node.target.push_back(pos[index[t]]);
  }
}

namespace {

// Whether every packet took edge next[0]: what a stage that returns one edge promises (checked
// in debug builds).
[[maybe_unused]] inline bool one_edge(const uint8_t* next, uint16_t n) {
  const uint8_t e0 = next[0];
  for (uint16_t i = 1; i < n; ++i)
    if (next[i] != e0) return false;
  return true;
}

}  // namespace

void Pipeline::run(Burst& in, WorkerContext& ctx) {
  // Every packet gets its ingress port and trace id, in one 4-byte store: the stages read the
  // first, and only traced packets (the pipeline's choice) carry a non-zero second.
  const uint32_t port_word = ctx.rx_port;
  ctx.tracing = false;
  if (ctx.tracer && ctx.tracer->active()) [[unlikely]] {
    for (uint16_t i = 0; i < in.n; ++i) {
      rte_mbuf* m = in.pkts[i];
      const uint16_t id = ctx.tracer->take();
      const uint32_t w = port_word | uint32_t{id} << 16;
      __builtin_memcpy(&meta(m), &w, kMetaStampBytes);
      if (id) {
        ctx.tracing = true;
        ctx.tracer->add(id, kTraceRx, 0, DropReason::None, ctx.rx_port, m->pkt_len);
      }
    }
  } else {
    for (uint16_t i = 0; i < in.n; ++i) __builtin_memcpy(&meta(in.pkts[i]), &port_word, kMetaStampBytes);
  }
  uint8_t next[kBurst];
  Node* nodes = nodes_.data();
  const std::size_t num_nodes = nodes_.size();
  // The entry node works on the caller's burst in place (no edge leads back to it).
  nodes[0].in = &in;
  // Packets waiting in the nodes' inputs: once none are (the entry stage queued the whole
  // burst, the usual case) the nodes after it are not even looked at.
  uint32_t waiting = in.n;
  bool handed = false;  // some burst changed hands: every node's input needs putting back
  for (std::size_t k = 0; k < num_nodes && waiting != 0; ++k) {
    Node& node = nodes[k];
    Burst& b = *node.in;
    const uint16_t n = b.n;
    if (n == 0) continue;
    waiting -= n;
    node.calls.inc();
    node.packets.add(n);
    ctx.node = static_cast<uint16_t>(k);
    const uint8_t whole = node.stage->process(b, next, ctx);
    assert(whole == kNextMixed || (one_edge(next, n) && next[0] == whole));
    if (whole != kNextMixed) {
      const uint8_t e0 = whole;
      if (e0 == kNextConsumed) {
        b.clear();
        continue;
      }
      if (e0 != kNextDrop) {
        // The whole burst takes one edge (VPP's enqueue-to-next common case, DPDK's
        // rte_node_next_stream_move): when the target has nothing queued yet, hand it this
        // burst by pointer instead of copying it. This node has run and gets no more input in
        // this pass (topological order), so it takes the target's empty burst in exchange.
        Node& t = nodes[node.target[e0]];
        waiting += n;
        if (t.in->n == 0) {
          std::swap(node.in, t.in);
          handed = true;
        } else {
          Burst& d = *t.in;
          std::memcpy(&d.pkts[d.n], b.pkts, n * sizeof(rte_mbuf*));
          d.n = static_cast<uint16_t>(d.n + n);
          b.clear();
        }
        continue;
      }
    }
    const uint16_t* target = node.target.data();
    // Drops are counted one by one and freed together: one call to the pool for a burst's
    // drops, not one each (a flood of frames the switch drops costs the burst less).
    rte_mbuf* dropped[kBurst];
    uint16_t nd = 0;
    for (uint16_t i = 0; i < n; ++i) {
      rte_mbuf* m = b.pkts[i];
      const uint8_t e = next[i];
      if (e == kNextConsumed) continue;
      if (e == kNextDrop) {
        const PacketMeta& pm = meta(m);
        // Nothing a stage drops is in a queue yet; a frame refused before l3_input classified
        // it has no class to be lossless in.
        if (drop_before_class(pm.drop_reason)) ctx.count_drop(pm.drop_reason, pm.in_port);
        else ctx.count_before_queue(pm, pm.drop_reason, pm.in_port);
        dropped[nd++] = m;
        continue;
      }
      Burst& d = *nodes[target[e]].in;
      d.pkts[d.n++] = m;
      ++waiting;
    }
    if (nd) rte_pktmbuf_free_bulk(dropped, nd);
    b.clear();
  }
  // Every burst is empty again; give each node back its own, and the caller back its burst.
  if (handed) {
    for (std::size_t k = 0; k < num_nodes; ++k) nodes[k].in = &nodes[k].buf;
  } else {
    nodes[0].in = &nodes[0].buf;
  }
  in.clear();
}

}  // namespace rs

namespace rs {

std::string Pipeline::format_trace(const Tracer& t, uint16_t worker, const std::vector<std::string>& port_name) const {
  // Records are in the order they were written: a packet's lie between other packets' (a
  // burst runs node by node). Group them by packet, keeping each packet's own order.
  std::map<uint16_t, std::vector<const TraceRecord*>> by_packet;
  for (const TraceRecord& r : t.records()) by_packet[r.packet].push_back(&r);
  std::string out;
  for (auto& [id, recs] : by_packet) {
    for (const TraceRecord* r : recs) {
      if (r->node == kTraceRx) {
        const std::string port = r->a < port_name.size() ? port_name[r->a] : std::to_string(r->a);
        out += fmt::format("packet {} (worker {}): received on port {} ({}), {} bytes\n", id, worker, r->a, port, r->b);
        continue;
      }
      if (r->node >= nodes_.size()) continue;
      const Node& node = nodes_[r->node];
      const Stage& st = node.stage->step_stage(r->step);
      // A chain node's records name the stage in it that wrote them.
      const std::string where = &st == node.stage.get() ? node.name : fmt::format("{}/{}", node.name, st.name());
      std::string to;
      if (r->edge == kNextDrop && r->drop == DropReason::MacControl) {
        to = "consumed";  // a MAC control frame ends here by design: not a fault
      } else if (r->edge == kNextDrop) {
        to = fmt::format("drop {}", drop_reason_name(r->drop));
      } else if (r->edge == kNextConsumed) {
        to = "";  // the stage said where it went (queued, handed off)
      } else {
        auto edges = st.next_names();
        to = r->edge < edges.size() ? fmt::format("-> {}", edges[r->edge]) : fmt::format("-> edge {}", r->edge);
      }
      const std::string what = st.format_trace(*r);
      out += fmt::format("  {}: {}{}{}\n", where, what, what.empty() || to.empty() ? "" : " ", to);
    }
  }
  return out;
}

}  // namespace rs
