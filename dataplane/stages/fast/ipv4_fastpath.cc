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
  // No IPv4 LPM means no IPv4 route at all (Fib::add_route creates it for a default route
  // too): nothing here could be routed, and the general path names each drop. Checked here so
  // the per-packet lookup need not.
  // (And a context without the port words the rewrite stores sends everything there too.)
  if (!ctx.fib->v4_view().lpm || !ctx.port_src_ipv4) [[unlikely]] {
    for (uint16_t i = 0; i < in.n; ++i) {
      meta(in.pkts[i]).in_port = ctx.rx_port;
      next[i] = Slow;
    }
    std::array<uint32_t, kCounters.size()> tally{};
    tally[SlowPath] = in.n;
    publish(tally);
    return;
  }
  // Plain ECMP everywhere (the usual configuration): the member is one more load, taken inline.
  const int uniform = ctx.fib->uniform_policy();
  if (uniform >= 0 && ctx.policies[uniform]->hash_table_only()) {
    // Every port's egress on this worker and none reading metadata (one worker, lossy queues:
    // the line-rate case): no packet can need its metadata stored, so the loop carries none of
    // what storing it takes past the member choice, and spills less.
    bool local_lossy = true;
    for (uint16_t p = 0; p < ctx.num_ports; ++p) {
      const EgressPort* e = ctx.egress[p];
      local_lossy &= e != nullptr && !e->reads_metadata();
    }
    if (local_lossy) run<true, true>(in, next, ctx);
    else run<true, false>(in, next, ctx);
  } else {
    run<false, false>(in, next, ctx);
  }
}

template <bool kInlineEcmp, bool kLocalLossy>
void Ipv4Fastpath::run(Burst& in, uint8_t* next, WorkerContext& ctx) {
  static_assert(kInlineEcmp || !kLocalLossy);
  const Fib& fib = *ctx.fib;
  const NextHop* nexthops = fib.nexthop_table();
  // Loaded once, not after every byte store to a frame or to next[] (which may alias them).
  const std::size_t num_nexthops = fib.num_nexthops();
  const NextHopGroup* groups = fib.group_table();
  const Fib::GroupWords* group_words = fib.group_words();
  const Fib::V4View v4 = fib.v4_view();
  const uint32_t seed = seed_;
  const uint16_t num_ports = ctx.num_ports;
  EgressPort* const* egress = ctx.egress;
  const uint64_t* port_src = ctx.port_src_ipv4;
  const uint16_t rx_port = ctx.rx_port;
  const uint16_t n = in.n;
  // The rare outcomes are counted; the usual one (queued here) is what is left.
  uint32_t slow = 0, cnp = 0, handoff = 0, bad = 0;
  parse::FastTally parsed;  // the parser's tallies; this stage counts by outcome instead
  // The rewrite of a routed packet whose egress port is valid; nh_word is its next hop's
  // table entry (nexthop_word).
  auto rewrite = [&](uint8_t* frame, uint64_t nh_word, uint16_t port) {
    rewrite_macs_ipv4(frame, nh_word, port_src[port]);
    decrement_ttl_ipv4(frame + sizeof(rte_ether_hdr));
  };
  // A chunk at a time, so that the packets' pages are still in the L1 TLB and their lines in
  // L1 when the chunk's second pass (when there is one) rewrites them: a whole burst's pages
  // do not fit (4 KiB pages under --no-huge).
  // Frames are prefetched one chunk ahead (as l3fwd does): a NIC's DMA leaves them in the
  // last-level cache at best. The mbuf headers are not: the rx PMD has just written them, and
  // prefetching them too cost 2 instructions per packet for no gain (perf/README.md). The
  // frame is prefetched where a received packet's data starts in the switch's own pool
  // (rx PMDs leave the default headroom), not at buf_addr + data_off: that would load the mbuf
  // first, and a prefetch at a wrong guess costs nothing but itself.
  auto frame_guess = [](const rte_mbuf* m) { return reinterpret_cast<const uint8_t*>(m) + kFrameOffsetGuess; };
  for (uint16_t i = 0; i < n && i < kFrameAhead; ++i) rte_prefetch0(frame_guess(in.pkts[i]));
  for (uint16_t base = 0; base < n; base += kChunk) {
    const uint16_t end = std::min<uint16_t>(n, base + kChunk);
    // Whole chunks ahead. Inside the burst (most chunks) the loops have a constant count and
    // unroll; near its end the bounds are clipped to the burst.
    if (base + kChunk + kFrameAhead <= n) [[likely]] {
#pragma GCC unroll 8
      for (uint16_t k = 0; k < kChunk; ++k) rte_prefetch0(frame_guess(in.pkts[base + kFrameAhead + k]));
    } else {
      const uint16_t frame_end = std::min<uint16_t>(n, end + kFrameAhead);
      for (uint16_t i = base + kFrameAhead; i < frame_end; ++i) rte_prefetch0(frame_guess(in.pkts[i]));
    }
    PacketMeta* pm[kChunk];
    uint16_t k = 0;
    // Parse, classify, route (and with inline ECMP: choose, rewrite, queue).
    for (uint16_t i = base; i < end; ++i) {
      rte_mbuf* m = in.pkts[i];
      parse::FastFields f;
      uint32_t group;
      // The general path re-parses the others and drops them with their reason (nothing but
      // in_port is written to a packet that is not taken).
      const bool take = parse::ipv4_udp_fast_fields(m, seed, f, parsed) && v4.lookup_in_lpm(f.dst_be, group);
      next[i] = take ? kNextConsumed : uint8_t{Slow};
      if (!take) [[unlikely]] {
        meta(m).in_port = rx_port;
        ++slow;
        continue;
      }
      // Classification, after the member choice where that is inline (a packet left to the
      // general path is classified there, and counted there if it is a CNP).
      auto classify = [&] {
        unsigned report;
        const TcQueueMap::TcQueue tq = map_.classify_untagged(f.cnp() ? meta_flag::kCnp : 0, f.tos >> 2, report);
        cnp += (report & TcQueueMap::kCnpSteered) != 0;
        return tq;
      };
      PacketMeta& p = meta(m);
      if constexpr (kInlineEcmp) {
        // EcmpHash::select, inline. Where no metadata is stored the next hop's index is not
        // needed: the slot holds its word. Slots are < num_nexthops (Fib::add_group checks).
        uint32_t nh = 0;
        uint64_t nh_word;  // port and MAC in one load
        if constexpr (kLocalLossy) {
          const Fib::GroupWords& g = group_words[group];
          nh_word = g.words[f.flow_hash & g.mask];
        } else {
          const NextHopGroup& g = groups[group];
          nh = g.table[f.flow_hash & g.mask];
          nh_word = nexthop_word(nexthops[nh]);
        }
        const uint16_t port = static_cast<uint16_t>(nh_word);
        if (port >= num_ports) [[unlikely]] {
          // A next hop on a port this switch does not have goes on untouched, like a packet
          // without a route: nexthop_group drops it under the same reason. Dropped here, the
          // metadata it needs would keep the parse's fields live through the whole loop, and
          // the loop's own values would go to the stack (8 instructions a packet, callgrind).
          p.in_port = rx_port;
          next[i] = Slow;
          ++slow;
          continue;
        }
        if constexpr (kLocalLossy) {
          // classify() for the queue alone. The opcode byte first: one compare where RoCE data
          // goes on, the port test only for the rare frame with a CNP's opcode (6 instructions
          // fewer than f.cnp(), callgrind).
          unsigned q = map_.queue_of_tos(f.tos);
          if (f.cnp_opcode() && f.roce() && map_.cnp_queue() >= 0) [[unlikely]] {
            q = static_cast<unsigned>(map_.cnp_queue()) & 7;
            ++cnp;
          }
          if (q > 7) __builtin_unreachable();
          rewrite(f.frame(), nh_word, port);
          egress[port]->enqueue_lossy(m, static_cast<int>(q), ctx);  // port < num_ports: local, lossy
          continue;
        }
        const TcQueueMap::TcQueue tq = classify();
        // The frame as the parse found it: not rte_pktmbuf_mtod again (two loads and an add).
        rewrite(f.frame(), nh_word, port);
        // ctx.egress holds only this worker's ports (null for the others): one load and one
        // test say the port is local.
        if (EgressPort* e = egress[port]; e && !e->reads_metadata()) [[likely]] {
          // Nothing past this port's queue reads metadata, and no policy was asked: the
          // packet is queued without any being stored.
          e->enqueue_lossy(m, tq.queue & 7, ctx);
          continue;
        }
        // Parse, classify, route and member results in one store of the metadata.
        parse::store_fast_meta(p, f, rx_port, static_cast<uint16_t>(group), tq.tc, tq.queue, port, nh);
        handoff += !enqueue_one(m, port, ctx);
      } else {
        // Parse, classify and route results in one store of the metadata; the policy reads it.
        const TcQueueMap::TcQueue tq = classify();
        parse::store_fast_meta(p, f, rx_port, static_cast<uint16_t>(group), tq.tc, tq.queue);
        pm[k++] = &p;
      }
    }
    if constexpr (!kInlineEcmp) {
      uint32_t nh[kChunk];
      select_nexthops(pm, k, ctx, nh);
      // Second pass: next hop, rewrite, enqueue.
      for (uint16_t j = 0; j < k; ++j) {
        rte_mbuf* m = mbuf_of(pm[j]);
        const uint16_t port = nexthop_port(nexthops, num_nexthops, nh[j], num_ports);
        if (port == kInvalidPort) [[unlikely]] {
          pm[j]->drop_reason = DropReason::BadNextHop;
          next[std::find(&in.pkts[base], &in.pkts[end], m) - in.pkts] = kNextDrop;
          ++bad;
          continue;
        }
        pm[j]->nexthop = nh[j];
        pm[j]->out_port = port;
        rewrite(rte_pktmbuf_mtod(m, uint8_t*), nexthop_word(nexthops[nh[j]]), port);
        handoff += !enqueue_one(m, port, ctx);
      }
    }
  }
  // Every packet queued or handed off: the pipeline need not scan next[].
  if (slow == 0 && bad == 0) ctx.single_next = kNextConsumed;
  std::array<uint32_t, kCounters.size()> tally{};
  tally[Local] = n - slow - bad - handoff;
  tally[Handoff] = handoff;
  tally[SlowPath] = slow;
  tally[BadNexthop] = bad;
  tally[CnpToQueue] = cnp;
  publish(tally);
}

REGISTER_STAGE(Ipv4Fastpath);

}  // namespace rs
