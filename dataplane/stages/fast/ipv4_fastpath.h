// The straight-through path for the one shape a RoCE fabric carries almost exclusively:
// untagged IPv4/UDP with a route. It does what parser, qos_classify, ipv4_lpm, nexthop_group,
// egress_rewrite and tm_enqueue do, with the same inline code (ipv4_udp_fast_fields +
// store_fast_meta, TcQueueMap::classify_untagged, Fib::V4View::lookup, select_nexthops,
// rewrite_macs + decrement_ttl_ipv4, enqueue_one), so both paths leave a packet in the same
// state: the same frame in the same queue, with the same metadata wherever anything reads it
// (tests/unit/stages/ipv4_fastpath_test.cc compares them). Anything else (IPv6, VLAN
// tags, MAC control, options, fragments, UDP shorter than a BTH and an ICRC, malformed
// frames, no route, TTL <= 1, and with plain ECMP a next hop on a port the switch lacks) goes
// on untouched to the general stages, which name every drop. Within a burst, fast packets reach
// their egress queues before the slow ones.
// Why it exists: each stage is a pass over the burst that re-reads every packet's mbuf,
// metadata and frame, and under --no-huge (4 KiB pages) a burst's pages do not fit the L1
// TLB, so a pass costs about 10 ns per packet whatever it computes. Here each packet is
// handled start to end in one pass when every group uses plain ECMP (a policy that says
// hash_table_only()), and queued without storing its metadata when its egress port is local
// and reads none (no routing policy needs it then either); with other policies, a chunk of 8
// packets takes two short passes around one select_burst call (perf/README.md has the
// figures).
#pragma once
#include "dataplane/core/stage.h"
#include "dataplane/stages/classify/qos_classify.h"

namespace rs {

class Ipv4Fastpath final : public StageBase<Ipv4Fastpath> {
 public:
  static constexpr std::string_view kName = "ipv4_fastpath";
  enum Next : uint8_t { Slow };
  static constexpr std::array<std::string_view, 1> kNext = {"slow"};
  // bad_nexthop: dropped after a per-packet policy chose a next hop on a port the switch lacks
  // (with plain ECMP such a packet goes on slow, and nexthop_group drops it).
  enum Ctr : uint8_t { Local, Handoff, SlowPath, BadNexthop, CnpToQueue };
  static constexpr std::array<std::string_view, 5> kCounters = {"local", "handoff", "slow_path", "bad_nexthop",
                                                                "cnp_to_queue"};

  explicit Ipv4Fastpath(const StageEnv& env);
  void process(Burst& in, uint8_t* next, WorkerContext& ctx) override;
  // In every packet it passes on or stores metadata for; not in one queued without any.
  bool stamps_in_port() const override { return true; }

 private:
  static constexpr uint16_t kChunk = 8;
  static constexpr uint16_t kFrameAhead = kChunk;  // prefetch distance
  // mbuf header, private area, default headroom: where rx puts a frame in the switch's pool.
  static constexpr std::size_t kFrameOffsetGuess = sizeof(rte_mbuf) + kMbufPrivSize + RTE_PKTMBUF_HEADROOM;
  template <bool kInlineEcmp, bool kLocalLossy>
  void run(Burst& in, uint8_t* next, WorkerContext& ctx);
  uint32_t seed_;  // the parser's, so flow hashes (and ECMP choices) agree between the paths
  TcQueueMap map_;
};

}  // namespace rs
