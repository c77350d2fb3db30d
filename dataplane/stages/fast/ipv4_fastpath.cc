#include "dataplane/stages/fast/ipv4_fastpath.h"

#include <rte_prefetch.h>

#include <algorithm>

#include "dataplane/stages/egress/egress_rewrite.h"
#include "dataplane/stages/egress/tm_enqueue.h"
#include "dataplane/stages/parse/ipv4_udp_fast.h"
#include "dataplane/stages/route/nexthop_group.h"

namespace rs {

Ipv4Fastpath::Ipv4Fastpath(const StageEnv& env)
    : seed_(env.hash_seed), map_(env.qos ? *env.qos : QosMaps::sonic_default()) {}

void Ipv4Fastpath::process(Burst& in, uint8_t* next, WorkerContext& ctx) {
  const Fib& fib = *ctx.fib;
  const NextHop* nexthops = fib.nexthop_table();
  // Loaded once, not after every byte store to a frame or to next[] (which may alias them).
  const std::size_t num_nexthops = fib.num_nexthops();
  const Fib::V4View v4 = fib.v4_view();
  const uint32_t seed = seed_;
  const uint16_t n = in.n;
  uint32_t fast = 0, cnp = 0, local = 0, bad = 0;
  parse::FastTally parsed;  // the parser's tallies; this stage counts by outcome instead
  // A chunk at a time, so that pass 2 finds each packet's page still in the L1 TLB and its
  // lines in L1: a whole burst's pages do not fit (4 KiB pages under --no-huge).
  // The mbufs come from the rx burst of a PMD that touched many other pages since writing
  // them: their translations are gone from the TLB. Prefetching each chunk's mbuf headers two
  // chunks ahead and frames one chunk ahead overlaps those page walks (as l3fwd does).
  for (uint16_t i = 0; i < n && i < kMbufAhead; ++i) rte_prefetch0(in.pkts[i]);
  for (uint16_t i = 0; i < n && i < kFrameAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i], void*));
  for (uint16_t base = 0; base < n; base += kChunk) {
    const uint16_t end = std::min<uint16_t>(n, base + kChunk);
    // Whole chunks ahead. Inside the burst (most chunks) the loops have a constant count and
    // unroll; near its end the bounds are clipped to the burst.
    if (base + kChunk + kMbufAhead <= n) [[likely]] {
#pragma GCC unroll 8
      for (uint16_t k = 0; k < kChunk; ++k) rte_prefetch0(in.pkts[base + kMbufAhead + k]);
#pragma GCC unroll 8
      for (uint16_t k = 0; k < kChunk; ++k) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[base + kFrameAhead + k], void*));
    } else {
      const uint16_t mbuf_end = std::min<uint16_t>(n, end + kMbufAhead);
      for (uint16_t i = base + kMbufAhead; i < mbuf_end; ++i) rte_prefetch0(in.pkts[i]);
      const uint16_t frame_end = std::min<uint16_t>(n, end + kFrameAhead);
      for (uint16_t i = base + kFrameAhead; i < frame_end; ++i) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i], void*));
    }
    PacketMeta* pm[kChunk];
    uint16_t k = 0;
    // Pass 1: parse, classify, route.
    for (uint16_t i = base; i < end; ++i) {
      rte_mbuf* m = in.pkts[i];
      parse::FastFields f;
      uint32_t group;
      // The general path re-parses the others and drops them with their reason (in_port is
      // kept: nothing is written to a packet that is not taken).
      const bool take = parse::ipv4_udp_fast_fields(m, seed, f, parsed) && f.ttl > 1 && v4.lookup(f.dst_be, group);
      next[i] = take ? kNextConsumed : uint8_t{Slow};
      if (!take) [[unlikely]]
        continue;
      // Parse, classify and route results in one store of the metadata.
      unsigned report;
      const TcQueueMap::TcQueue tq = map_.classify(f.flags, 0, f.tos >> 2, report);
      cnp += (report & TcQueueMap::kCnpSteered) != 0;
      PacketMeta& p = meta(m);
      parse::store_fast_meta(p, f, static_cast<uint16_t>(group), tq.tc, tq.queue);
      pm[k++] = &p;
    }
    uint32_t nh[kChunk];
    select_nexthops(pm, k, ctx, nh);
    // Pass 2: next hop, rewrite, enqueue.
    for (uint16_t j = 0; j < k; ++j) {
      rte_mbuf* m = mbuf_of(pm[j]);
      const uint16_t port = nexthop_port(nexthops, num_nexthops, nh[j], ctx.num_ports);
      if (port == kInvalidPort) [[unlikely]] {
        pm[j]->drop_reason = DropReason::BadNextHop;
        next[std::find(&in.pkts[base], &in.pkts[end], m) - in.pkts] = kNextDrop;
        ++bad;
        continue;
      }
      pm[j]->nexthop = nh[j];
      pm[j]->out_port = port;
      uint8_t* frame = rte_pktmbuf_mtod(m, uint8_t*);
      rewrite_macs(frame, &nexthops[nh[j]].mac, &ctx.port_mac[port]);
      decrement_ttl_ipv4(frame + sizeof(rte_ether_hdr));
      local += enqueue_one(m, port, ctx);
    }
    fast += k;
  }
  // Every packet queued or handed off: the pipeline need not scan next[].
  if (fast == n && bad == 0) ctx.single_next = kNextConsumed;
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Local] = local;
  tally[Handoff] = fast - bad - local;
  tally[SlowPath] = n - fast;
  tally[BadNexthop] = bad;
  tally[CnpToQueue] = cnp;
  publish(tally);
}

REGISTER_STAGE(Ipv4Fastpath);

}  // namespace rs
