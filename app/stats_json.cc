#include "app/stats_json.h"

#include <fmt/core.h>

#include "app/collective_stats.h"
#include "app/routing_stats.h"
#include "dataplane/proto/mac_addr.h"

namespace rs {
namespace {

nlohmann::json pfc_stats(const Switch& sw, std::size_t p) {
  using nlohmann::json;
  const EgressPort& e = sw.egress(p);
  const PfcGenerator& g = e.pfc_gen();
  const PfcRxCounters& rx = e.pfc_rx();
  json pj;
  json pgs = json::array();
  for (uint8_t pg = 0; pg < 8; ++pg) {
    const PgSettings& s = sw.buffer().pg(static_cast<uint16_t>(p), pg);
    json x = {{"pg", pg}, {"lossless", s.lossless}, {"level_bytes", sw.buffer().pg_level(static_cast<uint16_t>(p), pg)}};
    if (s.lossless) {
      x["xoff"] = s.xoff;
      x["xon"] = s.xon;
      x["headroom"] = s.headroom;
      x["headroom_min"] = s.headroom_min;
      x["xoff_sent"] = g.counters().xoff_sent[pg].get();
      x["xon_sent"] = g.counters().xon_sent[pg].get();
      x["assert_ns"] = g.counters().assert_ns[pg].get();
      x["asserting"] = static_cast<bool>(g.asserted_published() & (1u << pg));
    }
    pgs.push_back(x);
  }
  pj["pg"] = pgs;
  pj["frames_sent"] = g.counters().frames.get();
  pj["send_failures"] = g.counters().tx_fail.get();
  json rxo = json::array(), rxn = json::array();
  for (int pr = 0; pr < 8; ++pr) {
    rxo.push_back(rx.xoff[pr].get());
    rxn.push_back(rx.xon[pr].get());
  }
  pj["rx_xoff"] = rxo;
  pj["rx_xon"] = rxn;
  pj["rx_pause"] = rx.pause.get();
  pj["rx_ignored_priorities"] = rx.ignored.get();
  return pj;
}

}  // namespace

nlohmann::json stats_json(const Switch& sw) {
  using nlohmann::json;
  json j;
  auto drop_map = [](auto get) {
    json d = json::object();
    for (std::size_t r = 1; r < kNumDropReasons; ++r)
      if (uint64_t v = get(static_cast<DropReason>(r))) d[std::string(kDropReasonNames[r])] = v;
    return d;
  };
  json ports = json::array();
  for (std::size_t p = 0; p < sw.num_ports(); ++p) {
    json pj;
    pj["name"] = sw.port(p).name;
    pj["kind"] = sw.port(p).kind();
    pj["speed_gbps"] = sw.port(p).speed_gbps;
    pj["rx_packets"] = sw.rx_packets(p);
    pj["rx_bytes"] = sw.rx_bytes(p);
    pj["tx_packets"] = sw.tx_packets(p);
    pj["tx_bytes"] = sw.tx_bytes(p);
    const auto port = static_cast<uint16_t>(p);
    pj["drops"] = drop_map([&](DropReason r) { return sw.drops(p, r); });
    // The port's share of lossless_drops that no queue counts (lost on the way to one).
    pj["lossless_drops_before_queue"] = sw.lossless_drops_before_queue(p);
    pj["link_up"] = sw.load().link_up(port);
    pj["link_down_events"] = sw.link_down_events(p);
    // Mirror copies this port's frames made (its rx and tx sides), and lost to an empty pool.
    pj["mirror"] = {{"rx_copies", sw.mirror().copies(port, PortMirror::kRx)}, {"tx_copies", sw.mirror().copies(port, PortMirror::kTx)},
                    {"lost", sw.mirror().lost(port, PortMirror::kRx) + sw.mirror().lost(port, PortMirror::kTx)}};
    pj["load"] = {{"queued_bytes", sw.load().port_bytes(port)}, {"tx_rate_bps", sw.load().tx_rate_bps(port)},
                  {"quality", sw.load().quality(port)}};
    json qs = json::array();
    for (int q = 0; q < 8; ++q) {
      const QueueCounters& c = sw.egress(p).queue(q);
      json qj = {{"queue", q},
                 {"enqueued_packets", c.enq_packets.get()},
                 {"enqueued_bytes", c.enq_bytes.get()},
                 {"dequeued_packets", c.deq_packets.get()},
                 {"dequeued_bytes", c.deq_bytes.get()},
                 {"depth_packets", c.depth_packets.get()},
                 {"depth_bytes", c.depth_bytes.get()},
                 {"peak_packets", c.peak_packets.get()},
                 {"peak_bytes", c.peak_bytes.get()},
                 {"ecn_marked", c.ecn_marked.get()},
                 {"paused_ns", c.paused_ns.get()},
                 {"paused_now", sw.egress(p).paused(q)},
                 {"pfcwd_storms_detected", c.storms_detected.get()},
                 {"pfcwd_storms_restored", c.storms_restored.get()}};
      qj["drops"] = drop_map([&](DropReason r) { return c.drops[static_cast<std::size_t>(r)].get(); });
      qs.push_back(qj);
    }
    pj["queues"] = qs;
    pj["pfc"] = pfc_stats(sw, p);
    sw.port(p).stats(pj);
    ports.push_back(pj);
  }
  j["collectives"] = collectives_json(sw.config(), ports);
  j["ports"] = ports;
  j["drops"] = drop_map([&](DropReason r) { return sw.drops(r); });
  j["buffer"] = {{"pool_bytes", sw.buffer().config().pool.size},     {"cell_bytes", sw.buffer().config().pool.cell_size},
                 {"headroom_reserved_bytes", sw.buffer().headroom_reserved()}, {"shared_bytes", sw.buffer().shared_size()},
                 {"used_bytes", sw.buffer().used()},                  {"pfc_enable", sw.buffer().config().pfc_enable}};
  j["lossless_drops"] = sw.lossless_drops();
  j["lossless_drops_before_queue"] = sw.lossless_drops_before_queue();  // part of lossless_drops
  j["groups"] = groups_json(sw);
  json stages = json::array();
  const auto& nodes0 = sw.pipeline(0).nodes();
  for (std::size_t n = 0; n < nodes0.size(); ++n) {
    json sj;
    sj["node"] = nodes0[n].name;
    sj["stage"] = std::string(nodes0[n].stage->name());
    uint64_t calls = 0, pkts = 0;
    json ctr = json::object();
    auto names = nodes0[n].stage->counter_names();
    std::vector<uint64_t> sums(names.size(), 0);
    for (uint16_t w = 0; w < sw.num_workers(); ++w) {
      const auto& node = sw.pipeline(w).nodes()[n];
      calls += node.calls.get();
      pkts += node.packets.get();
      auto c = node.stage->counters();
      for (std::size_t k = 0; k < c.size(); ++k) sums[k] += c[k].get();
    }
    for (std::size_t k = 0; k < names.size(); ++k) ctr[std::string(names[k])] = sums[k];
    sj["calls"] = calls;
    sj["packets"] = pkts;
    sj["counters"] = ctr;
    stages.push_back(sj);
  }
  j["stages"] = stages;
  json workers = json::array();
  for (uint16_t w = 0; w < sw.num_workers(); ++w) {
    const Worker& wk = sw.worker(w);
    workers.push_back({{"worker", wk.id}, {"loops", wk.counters.loops.get()}, {"rx_bursts", wk.counters.rx_bursts.get()},
                       {"handoff_held", wk.counters.handoff_held.get()}});
  }
  j["workers"] = workers;
  if (const Fdb* fdb = sw.fdb()) {
    // The FDB (first 1000 entries; `roceswitch-ctl fdb` lists them all) and its learning.
    json rows = json::array();
    for (const Fdb::Row& r : fdb->rows()) {
      if (rows.size() == 1000) break;
      rows.push_back({{"vlan", r.vlan},
                      {"mac", format_mac(r.mac)},
                      {"port", r.port < sw.num_ports() ? sw.port(r.port).name : std::to_string(r.port)}});
    }
    j["bridge"] = {{"fdb_entries", fdb->size()}, {"learned", fdb->learned()}, {"moved", fdb->moved()},
                   {"aged", fdb->aged()},        {"fdb_full", fdb->full()},     {"fdb", rows}};
  }
  const SwitchTotals t = sw.totals();
  j["totals"] = {{"received", t.received}, {"sent", t.sent},         {"queued", t.queued},       {"in_flight", t.in_flight},
                 {"dropped", t.dropped},   {"mirrored", t.mirrored}, {"originated", t.originated},
                 {"held", t.held},         {"replicated", t.replicated},         {"balanced", t.balanced()}};
  // The switch's packet pool (a soak watches it stay flat), the per-lcore caches counted as free.
  j["mbufs"] = {{"size", sw.pool()->size}, {"in_use", rte_mempool_in_use_count(sw.pool())}};
  return j;
}

}  // namespace rs
