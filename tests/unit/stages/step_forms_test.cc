// The property test of the steps' two forms: the specialised form of each step (the parse that
// tries the common shape first, the route stage that chooses an ECMP member inline) and its
// general form (the parse field by field, the route stage that leaves every member to the
// group's policy in nexthop_select) give the same result for every frame a seeded generator
// makes over every header variant the parse knows (frame_gen.h): same bytes, same metadata, same
// queue, same drop reason. Checked step by step, and whole: two switches running l3_roce and
// l3_roce_general side by side, lossy and lossless (PFC, WRED/ECN with a fixed seed), the same
// frames in. The seed is printed on failure; RS_TEST_SEED=<n> replays one.
#include <fmt/core.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/nexthop_select.h"
#include "dataplane/stages/parse.h"
#include "dataplane/routing/routing_policy.h"
#include "tests/support/seeded_rng.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/frame_gen.h"
#include "tests/unit/stages/stage_forms.h"
#include "tests/unit/stages/switch_forms.h"

namespace rs::test {
namespace {

// A policy that is more than the table, so that l3_roce's route stages send some packets on
// `select` too: the slot at the complement of the flow hash.
class MirrorTable final : public RoutingPolicy {
 public:
  static constexpr std::string_view kSummary = "test: the slot at the complement of the flow hash";
  static constexpr std::array<ParamSpec, 0> kParams = {};
  static constexpr std::array<std::string_view, 0> kCounters = {};
  explicit MirrorTable(const PolicyInit& in) : RoutingPolicy(in) {}
  void select(const PacketMeta* const* m, uint16_t n, const SelectEnv&, uint16_t* member) override {
    for (uint16_t i = 0; i < n; ++i) member[i] = group().slot[~m[i]->flow_hash & group().mask];
  }
};
REGISTER_ROUTING_POLICY(MirrorTable, "step_forms_mirror");

// --- The common shape's fixed fields against RFC 791 -------------------------------------------

// The common shape's fixed fields from the header's own field definitions (RFC 791): EtherType
// IPv4, version 4, a 20-byte header, fragment offset 0, protocol UDP. The TTL is the route step's
// to check, not the shape's.
bool fixed_fields_reference(const uint8_t* p) {
  const unsigned ethertype = p[12] << 8 | p[13];
  const unsigned version = p[14] >> 4, ihl = p[14] & 0xF;
  const unsigned frag_offset = (p[20] << 8 | p[21]) & 0x1FFF;
  return ethertype == 0x0800 && version == 4 && ihl == 5 && frag_offset == 0 && p[23] == 17;
}

TEST(StepForms, CommonShapeAgreesWithRfc791ForEveryValueOfBytes12To27) {
  // The vector compare and the plain one both say what the reference says for every value of
  // every byte they look at, for the fragment field's two bytes together, and for random headers.
  std::array<uint8_t, 28> base{};
  const uint8_t ip[] = {0x08, 0x00, 0x45, 0x68, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 64, 17, 0xab, 0xcd, 10, 0};
  std::memcpy(base.data() + 12, ip, sizeof(ip));
  ASSERT_TRUE(fixed_fields_reference(base.data()));
  int taken = 0, cases = 0;
  auto check = [&](const std::array<uint8_t, 28>& h) {
    const bool want = fixed_fields_reference(h.data());
    const std::string bytes = fmt::format("bytes 12..27: {:02x}", fmt::join(h.begin() + 12, h.end(), " "));
    EXPECT_EQ(parse::common_shape(h.data()), want) << bytes;
    EXPECT_EQ(parse::common_shape_scalar(h.data()), want) << bytes;
    taken += want;
    ++cases;
  };
  for (int at = 12; at < 28; ++at)
    for (int v = 0; v < 256; ++v) {
      auto h = base;
      h[at] = static_cast<uint8_t>(v);
      check(h);
    }
  for (int hi = 0; hi < 256; ++hi)
    for (int lo = 0; lo < 256; ++lo) {
      auto h = base;
      h[20] = static_cast<uint8_t>(hi);
      h[21] = static_cast<uint8_t>(lo);
      check(h);
    }
  Rng rng(test_seed());
  for (int i = 0; i < 100'000; ++i) {
    auto h = base;
    for (int k = 0, n = static_cast<int>(rng.between(1, 4)); k < n; ++k)
      h[rng.between(12, 27)] = static_cast<uint8_t>(rng.next());
    check(h);
  }
  // Both outcomes were seen many times: the free bytes (TOS, lengths, id, TTL, checksum, source)
  // keep the shape; the flag bits (DF, MF, reserved) do too.
  EXPECT_GT(taken, 20'000);
  EXPECT_GT(cases - taken, 20'000);
}

// --- Step by step -----------------------------------------------------------------------------

TEST(StepForms, EachStepsFormsAgreeOnEveryHeaderVariant) {
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  FrameGen gen(seed);
  Rng rng(seed ^ 0x9E3779B97F4A7C15ull);
  StepRig rig;
  constexpr int kFrames = 100'000;
  for (int at = 0; at < kFrames; at += kBurst) {
    std::vector<GenFrame> frames;
    for (int i = 0; i < kBurst; ++i) frames.push_back(gen.next());
    const std::string first = rig.run(frames, rng);
    ASSERT_EQ(first, "") << "frames " << at << ".." << at + kBurst - 1;
  }
  rig.expect_same_counters();
  // The generator reached what it is for: both outcomes of the common shape, every parse drop,
  // every route drop, both ways of choosing a member, chains of two segments.
  const StepStats& s = rig.stats;
  EXPECT_GT(s.common_shape, kFrames / 10);
  EXPECT_GT(s.general_only, kFrames / 5);
  EXPECT_GT(s.split, 1000);
  for (DropReason r : {DropReason::MalformedEth, DropReason::MalformedVlan, DropReason::StackedVlan, DropReason::MalformedIpv4,
                       DropReason::BadIpv4Ihl, DropReason::BadIpv4Length, DropReason::BadIpv4Checksum, DropReason::MalformedIpv6,
                       DropReason::BadIpv6Length, DropReason::MalformedUdp, DropReason::MalformedBth, DropReason::NonIp,
                       DropReason::MalformedMacControl, DropReason::NoRoute, DropReason::TtlExpired, DropReason::BadNextHop})
    EXPECT_GT(s.drops[static_cast<std::size_t>(r)], 0u) << drop_reason_name(r);
  EXPECT_GT(s.cnp, 1000);
  EXPECT_GT(s.mac_control, 1000);
  EXPECT_GT(s.routed_inline, 10'000);
  EXPECT_GT(s.routed_by_policy, 1000);
}

TEST(StepForms, TheStepComparisonCatchesADifference) {
  // The comparison the property rests on, given a copy of a result with one field corrupted:
  // each field is caught and named, and so is a different edge.
  FrameGen gen(1);
  StepRig rig;
  Rng rng(2);
  std::vector<GenFrame> frames;
  while (frames.size() < 64) {
    GenFrame f = gen.next();
    if (f.split == 0) frames.push_back(f);
  }
  for (const auto& f : frames) {
    rte_mbuf* a = gen_mbuf(f, test_pool(), PacketMeta{}, 1);
    ASSERT_NE(a, nullptr);
    L3Input l3{StageEnv{}};
    const uint8_t e = l3.process_one(a);
    const PacketMeta good = meta(a);
    EXPECT_EQ(meta_diff(good, good), "");
    for (const MetaField& fld : kMetaFields) {
      PacketMeta bad = good;
      reinterpret_cast<uint8_t*>(&bad)[fld.offset] ^= 0x01;  // e.g. a DSCP one off
      EXPECT_NE(meta_diff(good, bad).find(fld.name), std::string::npos) << fld.name;
    }
    EXPECT_NE(edge_diff(e, static_cast<uint8_t>(e ^ 1)), "");
    rte_pktmbuf_free(a);
  }
}

// --- Whole pipelines -------------------------------------------------------------------------

// How the frames arrive. l3_roce runs a burst's IPv4 packets whose member is chosen inline to
// their queue in one pass (the ipv4_forward chain) and the others (IPv6, policy groups) after
// it; l3_roce_general queues them in the graph's node order. Each flow keeps its order either
// way, but packets of different flows in one burst may reach a queue in another order, and when
// they compete for a full queue, a PG's headroom or the WRED draws, another packet may be the
// one dropped or marked. So: bursts of many packets where nothing competes (ports fast enough,
// queues deep enough), compared flow by flow; and one packet per burst under congestion,
// compared frame by frame.
enum class Arrival { Bursts, OnePerBurst };

struct Config {
  const char* name;
  char tag;  // names its ring ethdevs (short: DPDK's names are)
  SwitchConfig (*make)();
  Arrival arrival;
};
void PrintTo(const Config& c, std::ostream* os) { *os << c.name; }

class PipelineForms : public ::testing::TestWithParam<Config> {};

TEST_P(PipelineForms, SameFramesQueuesAndDropsAsTheGeneralPipeline) {
  const Config& c = GetParam();
  const bool bursts = c.arrival == Arrival::Bursts;
  const uint64_t seed = test_seed();
  SCOPED_TRACE(seed_note(seed));
  rte_mempool* pool = forms_pool();
  ASSERT_NE(pool, nullptr);
  const unsigned avail = rte_mempool_avail_count(pool);
  {
    const SwitchConfig cfg = c.make();
    SwitchRig fast(fmt::format("sf{}f", c.tag), cfg, kPipelineL3Roce);
    SwitchRig general(fmt::format("sf{}g", c.tag), cfg, kPipelineL3RoceGeneral);
    ASSERT_TRUE(fast.ok() && general.ok());
    FrameGen gen(seed);
    Rng rng(seed + 1);
    constexpr int kFrames = 30'000;
    const uint64_t step_ns = bursts ? 1'000 : 100;
    uint64_t now = kT0;
    for (int sent = 0; sent < kFrames; now += step_ns) {
      for (uint16_t p = 0; p < kFormsPorts && sent < kFrames; ++p)
        for (uint64_t k = bursts ? rng.between(0, 24) : rng.between(0, 9) != 0; k > 0 && sent < kFrames; --k, ++sent) {
          const GenFrame f = gen.next();
          const PacketMeta garbage = garbage_meta(rng);
          fast.inject(p, gen_mbuf(f, pool, garbage, p));
          general.inject(p, gen_mbuf(f, pool, garbage, p));
        }
      fast.step(now);
      general.step(now);
      if (!bursts) {
        ASSERT_EQ(outputs_diff(fast, general), "") << "at " << (now - kT0) / 1000 << " us";
      }
    }
    for (const uint64_t end = now + 20'000'000; now < end; now += 1'000) {  // drain
      fast.step(now);
      general.step(now);
    }
    EXPECT_EQ(bursts ? flows_diff(fast.sent, general.sent) : outputs_diff(fast, general), "");
    EXPECT_EQ(books_diff(*fast.sw, *general.sw), "");
    fast.sw->shutdown(now);
    general.sw->shutdown(now);
    EXPECT_EQ(books_diff(*fast.sw, *general.sw), "") << "after shutdown";
    EXPECT_TRUE(fast.sw->totals().balanced());
    fast.expect_coverage(bursts);
    // The run's figures, in --gtest_output=json: what was sent and why the rest was dropped.
    ::testing::Test::RecordProperty("frames_sent", static_cast<int>(fast.frames_sent));
    ::testing::Test::RecordProperty("pfc_frames_sent", static_cast<int>(fast.mac_control_sent));
    for (std::size_t r = 1; r < kNumDropReasons; ++r)
      if (const uint64_t d = fast.sw->drops(static_cast<DropReason>(r)))
        ::testing::Test::RecordProperty(std::string(kDropReasonNames[r]), static_cast<int>(d));
  }
  EXPECT_EQ(rte_mempool_avail_count(pool), avail) << "an mbuf leaked or was freed twice";
}

INSTANTIATE_TEST_SUITE_P(LossyAndLossless, PipelineForms,
                         ::testing::Values(Config{"bursts", 'a', bursts_config, Arrival::Bursts},
                                           Config{"lossy", 'b', lossy_config, Arrival::OnePerBurst},
                                           Config{"lossless_wred", 'c', lossless_config, Arrival::OnePerBurst},
                                           Config{"lossless_pcp_dynamic", 'd', lossless_pcp_config, Arrival::OnePerBurst}),
                         [](const ::testing::TestParamInfo<Config>& i) { return std::string(i.param.name); });

TEST(StepForms, ThePipelineComparisonCatchesADifference) {
  // Recorded outputs that differ in one byte, one queue, one metadata field, or one frame
  // missing: each is reported.
  SwitchRig::Sent s{{1, 2, 3, 4}, 3, PacketMeta{}};
  std::vector<std::vector<SwitchRig::Sent>> a(2), b;
  a[1] = {s, s};
  b = a;
  EXPECT_EQ(sent_diff(a, b), "");
  b[1][1].bytes[2] ^= 0x10;
  EXPECT_NE(sent_diff(a, b), "");
  b = a;
  b[1][0].queue = 4;
  EXPECT_NE(sent_diff(a, b), "");
  b = a;
  b[1][0].meta.dscp = 27;
  EXPECT_NE(sent_diff(a, b).find("dscp"), std::string::npos);
  b = a;
  b[1].pop_back();
  EXPECT_NE(sent_diff(a, b), "");
  // Flow by flow: the same frames of one flow in another order are caught, two flows
  // interleaved otherwise are not.
  SwitchRig::Sent t = s;
  t.meta.flow_hash = 7;
  a[1] = {s, t, s};
  b = a;
  std::swap(b[1][0], b[1][1]);
  EXPECT_EQ(flows_diff(a, b), "");
  b[1][2].bytes[0] = 9;
  EXPECT_NE(flows_diff(a, b), "");
  b = a;
  b[1][1].queue = 2;
  EXPECT_NE(flows_diff(a, b), "");
}

}  // namespace
}  // namespace rs::test
