// l3_input on malformed frames: a named drop for every malformed shape, on both forms of the
// stage. Truncation is checked at every byte of a full RoCE packet so that no length check can
// read past the bytes actually present; checksums as the NIC reported them; the header sum
// against DPDK's over every carry.
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/parse.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

template <typename T>
class L3InputMalformed : public ::testing::Test {
 protected:
  // Runs one packet; the edge it took and its metadata.
  struct One {
    uint8_t edge = 0;
    DropReason reason = DropReason::None;
    PacketMeta m{};
  };
  One parse(const PacketSpec& s) { return parse_mbuf(s.mbuf(test_pool())); }
  One parse_mbuf(rte_mbuf* mb) {
    EXPECT_NE(mb, nullptr);
    if (!mb) return {};
    One r;
    r.edge = stage.process_one(mb);
    r.m = meta(mb);
    r.reason = r.m.drop_reason;
    rte_pktmbuf_free(mb);
    return r;
  }
  DropReason drop_of(const PacketSpec& s) {
    One r = parse(s);
    EXPECT_EQ(r.edge, kNextDrop) << "expected a drop";
    return r.reason;
  }
  T stage{StageEnv{}};
};
using Forms = ::testing::Types<L3Input, L3InputGeneral>;
TYPED_TEST_SUITE(L3InputMalformed, Forms);

TYPED_TEST(L3InputMalformed, MacControlWithoutOpcodeIsMalformed) {
  EXPECT_EQ(this->drop_of((Eth{} / MacCtl{}).truncate(15)), DropReason::MalformedMacControl);
}

// --- Truncation at every length --------------------------------------------------------------

// Expected verdict of a full Eth/IPv4/UDP/BTH/64B/ICRC packet (122 bytes) cut to n bytes: the
// IPv4 total length still claims 108 bytes, so once the IP header is whole, the length check
// is the one that fires.
DropReason ipv4_cut_reason(std::size_t n) {
  if (n < 14) return DropReason::MalformedEth;
  if (n < 34) return DropReason::MalformedIpv4;
  return DropReason::BadIpv4Length;
}

TYPED_TEST(L3InputMalformed, TruncatedRoceIpv4AtEveryLength) {
  const PacketSpec full = Eth{} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 122u);
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    auto r = this->parse(s.truncate(n));
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, ipv4_cut_reason(n)) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
  EXPECT_EQ(this->parse(full).edge, TypeParam::Ipv4);
}

// The same cuts, but with the IPv4 total length rewritten to match (a sender that lies
// consistently at L3): now the UDP checks must catch what is missing.
TYPED_TEST(L3InputMalformed, TruncatedRoceWithConsistentIpLength) {
  for (std::size_t n = 34; n < 122; ++n) {
    const auto tot = static_cast<uint16_t>(n - 14);
    auto r = this->parse((Eth{} / Ipv4{.total_length = tot} / Udp{} / Bth{} / Payload::of_size(64)).truncate(n));
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, DropReason::MalformedUdp) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
}

// And with both the IP and UDP lengths rewritten: the BTH check must want BTH (12) + ICRC (4).
TYPED_TEST(L3InputMalformed, TruncatedRoceWithConsistentIpAndUdpLength) {
  for (std::size_t n = 42; n <= 122; ++n) {
    const auto tot = static_cast<uint16_t>(n - 14);
    const auto ulen = static_cast<uint16_t>(n - 34);
    auto r = this->parse((Eth{} / Ipv4{.total_length = tot} / Udp{.length = ulen} / Bth{} / Payload::of_size(64)).truncate(n));
    if (ulen < 8 + 12 + 4) {
      EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
      EXPECT_EQ(r.reason, DropReason::MalformedBth) << "cut at " << n << ": got " << drop_reason_name(r.reason);
    } else {
      // Enough for BTH + ICRC: the parse cannot know the payload was cut (the ICRC would).
      EXPECT_EQ(r.edge, TypeParam::Ipv4) << "cut at " << n << ": " << drop_reason_name(r.reason);
      EXPECT_TRUE(r.m.flags & meta_flag::kRoce);
    }
  }
}

TYPED_TEST(L3InputMalformed, TruncatedRoceIpv6AtEveryLength) {
  const PacketSpec full = Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 142u);
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    auto r = this->parse(s.truncate(n));
    const DropReason want = n < 14 ? DropReason::MalformedEth : n < 54 ? DropReason::MalformedIpv6 : DropReason::BadIpv6Length;
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, want) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
  EXPECT_EQ(this->parse(full).edge, TypeParam::Ipv6);
}

TYPED_TEST(L3InputMalformed, TruncatedVlanTaggedAtEveryLength) {
  const PacketSpec full = Eth{} / Vlan{.pcp = 3} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 126u);
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    auto r = this->parse(s.truncate(n));
    const DropReason want = n < 14   ? DropReason::MalformedEth
                            : n < 18 ? DropReason::MalformedVlan
                            : n < 38 ? DropReason::MalformedIpv4
                                     : DropReason::BadIpv4Length;
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, want) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
}

TYPED_TEST(L3InputMalformed, CuttingOnlyEthernetPaddingStillForwards) {
  // BTH + ICRC with no payload is a 58-byte frame, padded to the 60-byte minimum: the padding
  // is outside every length field, so removing it changes nothing; one byte more is a lie.
  const PacketSpec small = Eth{} / Ipv4{} / Udp{} / Bth{};
  ASSERT_EQ(small.bytes().size(), 60u);
  for (std::size_t n : {58u, 59u, 60u}) {
    PacketSpec s = small;
    auto r = this->parse(s.truncate(n));
    EXPECT_EQ(r.edge, TypeParam::Ipv4) << "cut at " << n << ": " << drop_reason_name(r.reason);
    EXPECT_TRUE(r.m.flags & meta_flag::kRoce) << "cut at " << n;
  }
  PacketSpec s = small;
  EXPECT_EQ(this->parse(s.truncate(57)).reason, DropReason::BadIpv4Length);

  // A tiny plain-UDP datagram: 46 bytes of headers and data, 14 of padding.
  const PacketSpec udp = Eth{} / Ipv4{} / Udp{.dport = 9} / Payload::of_size(4);
  for (std::size_t n = 46; n <= 60; ++n) {
    PacketSpec u = udp;
    EXPECT_EQ(this->parse(u.truncate(n)).edge, TypeParam::Ipv4) << "cut at " << n;
  }
}

// --- Malformed IPv4 ---------------------------------------------------------------------------

TYPED_TEST(L3InputMalformed, Ipv4IhlBelowFive) {
  for (uint8_t ihl = 0; ihl < 5; ++ihl)
    EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.ihl = ihl} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Ihl) << "ihl " << int{ihl};
}

TYPED_TEST(L3InputMalformed, Ipv4IhlBeyondData) {
  // IHL 15 = 60 bytes of header; the padded frame has only 46 bytes after Ethernet.
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.ihl = 15} / Udp{}), DropReason::BadIpv4Ihl);
}

TYPED_TEST(L3InputMalformed, Ipv4WithOptionsIsParsedPastThem) {
  auto r = this->parse(Eth{} / Ipv4{.options = {1, 1, 1, 1, 1, 1, 1, 0}} / Udp{} / Bth{.dest_qp = 0x42} / Payload::of_size(8));
  ASSERT_EQ(r.edge, TypeParam::Ipv4);
  EXPECT_EQ(r.m.l4_offset, 14 + 28);
  EXPECT_EQ(r.m.dest_qp, 0x42u);
}

TYPED_TEST(L3InputMalformed, Ipv4TotalLengthBeyondFrame) {
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.total_length = 1000} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
}

TYPED_TEST(L3InputMalformed, Ipv4TotalLengthBelowHeader) {
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.total_length = 19} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.total_length = 0} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
  // With options the bound is IHL*4 (24), not 20.
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.total_length = 22, .options = {1, 1, 1, 0}} / Udp{} / Payload::of_size(20)),
            DropReason::BadIpv4Length);
}

TYPED_TEST(L3InputMalformed, WrongIpVersion) {
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.version = 6} / Udp{} / Payload::of_size(20)), DropReason::MalformedIpv4);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.version = 5} / Udp{} / Payload::of_size(20)), DropReason::MalformedIpv4);
  // An IPv4 header behind the IPv6 EtherType.
  EXPECT_EQ(this->drop_of(Eth{.type = 0x86DD} / Ipv4{} / Udp{} / Payload::of_size(40)), DropReason::MalformedIpv6);
}

TYPED_TEST(L3InputMalformed, Ipv4BadHeaderChecksum) {
  // RFC 1812 5.2.2: a router drops a header whose checksum does not verify.
  const auto good = (Eth{} / Ipv4{} / Udp{} / Payload::of_size(20)).bytes();
  const auto sum = static_cast<uint16_t>(good[24] << 8 | good[25]);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.checksum = static_cast<uint16_t>(sum ^ 0x0001)} / Udp{} / Payload::of_size(20)),
            DropReason::BadIpv4Checksum);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.checksum = 0} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Checksum);
  // Options are covered by the checksum too: one flipped option byte is caught.
  auto opt = (Eth{} / Ipv4{.options = {1, 1, 1, 0}} / Udp{} / Payload::of_size(20)).bytes();
  opt[14 + 21] ^= 0x40;
  auto r = this->parse_mbuf(raw_mbuf(opt));
  EXPECT_EQ(r.edge, kNextDrop);
  EXPECT_EQ(r.reason, DropReason::BadIpv4Checksum);
  // And the untouched header still passes.
  EXPECT_EQ(this->parse(Eth{} / Ipv4{} / Udp{} / Payload::of_size(20)).edge, TypeParam::Ipv4);
}

TYPED_TEST(L3InputMalformed, Ipv4ChecksumAsTheNicReportedIt) {
  // A header is good when the NIC says GOOD (a sum it checked) or the sum checks out in
  // software, whatever else the flags say: UNKNOWN (software ports), NONE (sum not filled in,
  // forwarded as is) or BAD (which a real NIC says only of a sum software finds wrong too).
  const PacketSpec right = Eth{} / Ipv4{} / Udp{.dport = 4791} / Bth{} / Payload::of_size(20);
  const auto good = right.bytes();
  const auto sum = static_cast<uint16_t>(good[24] << 8 | good[25]);
  const PacketSpec wrong = Eth{} / Ipv4{.checksum = static_cast<uint16_t>(sum ^ 0x0100)} / Udp{.dport = 4791} / Bth{} /
                           Payload::of_size(20);
  struct Case {
    uint64_t flags;
    bool correct_sum, accepted;
  };
  const Case cases[] = {
      {RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, true, true}, {RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN, false, false},
      {RTE_MBUF_F_RX_IP_CKSUM_GOOD, false, true},   {RTE_MBUF_F_RX_IP_CKSUM_GOOD, true, true},
      {RTE_MBUF_F_RX_IP_CKSUM_BAD, false, false},   {RTE_MBUF_F_RX_IP_CKSUM_BAD, true, true},
      {RTE_MBUF_F_RX_IP_CKSUM_NONE, true, true},    {RTE_MBUF_F_RX_IP_CKSUM_NONE, false, false},
  };
  for (const Case& c : cases) {
    rte_mbuf* m = raw_mbuf((c.correct_sum ? right : wrong).bytes());
    ASSERT_NE(m, nullptr);
    m->ol_flags |= c.flags;
    const std::string what = fmt::format("ol_flags {:#x}, sum {}", c.flags, c.correct_sum ? "right" : "wrong");
    auto r = this->parse_mbuf(m);
    EXPECT_EQ(r.edge, c.accepted ? uint8_t{TypeParam::Ipv4} : kNextDrop) << what;
    if (c.accepted) {
      EXPECT_TRUE(r.m.flags & meta_flag::kRoce) << what;
    } else {
      EXPECT_EQ(r.reason, DropReason::BadIpv4Checksum) << what;
    }
  }
}

// --- Malformed UDP / BTH / IPv6 ---------------------------------------------------------------

TYPED_TEST(L3InputMalformed, UdpLengthBelowHeader) {
  for (uint16_t l : {0, 1, 7})
    EXPECT_EQ(this->drop_of(Eth{} / Ipv4{} / Udp{.length = l} / Payload::of_size(20)), DropReason::MalformedUdp) << "len " << l;
}

TYPED_TEST(L3InputMalformed, UdpLengthBeyondIpDatagram) {
  // 8 + 20 bytes are there; one more is a lie, even though Ethernet padding follows.
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{} / Udp{.length = 29} / Payload::of_size(20)), DropReason::MalformedUdp);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv6{} / Udp{.length = 29} / Payload::of_size(20)), DropReason::MalformedUdp);
  EXPECT_EQ(this->parse(Eth{} / Ipv4{} / Udp{.length = 28} / Payload::of_size(20)).edge, TypeParam::Ipv4);
}

TYPED_TEST(L3InputMalformed, UdpHeaderBeyondIpDatagram) {
  // The IP total length ends before a whole UDP header.
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{.total_length = 24} / Udp{} / Payload::of_size(20)), DropReason::MalformedUdp);
}

TYPED_TEST(L3InputMalformed, Ipv6PayloadLengthBeyondFrame) {
  EXPECT_EQ(this->drop_of(Eth{} / Ipv6{.payload_length = 1000} / Udp{} / Payload::of_size(20)), DropReason::BadIpv6Length);
  EXPECT_EQ(this->parse(Eth{} / Ipv6{.payload_length = 28} / Udp{} / Payload::of_size(20)).edge, TypeParam::Ipv6);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv6{.payload_length = 29} / Udp{} / Payload::of_size(20)), DropReason::BadIpv6Length);
}

TYPED_TEST(L3InputMalformed, BthTooShortForBthAndIcrc) {
  // UDP 4791 with a BTH but no ICRC (20 bytes of UDP), or with less than a BTH.
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{} / Udp{} / Bth{.icrc = false}), DropReason::MalformedBth);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{} / Udp{} / Payload::of_size(8)), DropReason::MalformedBth);
  EXPECT_EQ(this->drop_of(Eth{} / Ipv4{} / Udp{} / Payload::of_size(15)), DropReason::MalformedBth);  // 23 bytes of UDP
  EXPECT_EQ(this->drop_of(Eth{} / Ipv6{} / Udp{} / Bth{.icrc = false}), DropReason::MalformedBth);
  // Exactly BTH + ICRC is enough.
  EXPECT_EQ(this->parse(Eth{} / Ipv4{} / Udp{} / Payload::of_size(24)).edge, TypeParam::Ipv4);
}

// --- VLAN stacks ------------------------------------------------------------------------------

TYPED_TEST(L3InputMalformed, StackedVlanIsCountedDrop) {
  StageHarness<TypeParam> h;
  auto out = h.run({Eth{} / Vlan{} / Vlan{} / Ipv4{} / Udp{} / Payload::of_size(20)});
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::StackedVlan);
}

TYPED_TEST(L3InputMalformed, QinQOuterTagIsStackedVlan) {
  EXPECT_EQ(this->drop_of(Eth{} / Vlan{.tpid = 0x88a8} / Vlan{} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
  // An 802.1ad tag behind an 802.1Q one.
  EXPECT_EQ(this->drop_of(Eth{} / Vlan{} / Vlan{.tpid = 0x88a8} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
  // A lone 802.1ad tag is not supported either: it is a service tag that needs a C-tag.
  EXPECT_EQ(this->drop_of(Eth{} / Vlan{.tpid = 0x88a8} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
}

// --- The header sum ---------------------------------------------------------------------------

TEST(Ipv4HeaderSum, AgreesWithDpdksOverCarries) {
  // The sum adds 64-bit words with end-around carries: headers of high bytes (every add
  // carries out of bit 63) and random ones, each with its right sum and with one bit off,
  // must get rte_raw_cksum's verdict.
  rte_mbuf* m = raw_mbuf(std::vector<uint8_t>(64, 0));
  ASSERT_NE(m, nullptr);
  m->ol_flags = 0;  // UNKNOWN: checked in software
  uint32_t seed = 12345;
  auto next = [&seed] { return seed = seed * 1103515245u + 12345u; };
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 20000; ++i) {
    uint8_t ip[20];
    const bool high = i % 2 == 0;
    for (auto& b : ip) b = high ? static_cast<uint8_t>(0xF0 | (next() >> 16 & 0x0F)) : static_cast<uint8_t>(next() >> 16);
    ip[0] = 0x45;
    ip[10] = ip[11] = 0;
    const uint16_t sum = static_cast<uint16_t>(~rte_raw_cksum(ip, 20));
    std::memcpy(&ip[10], &sum, 2);  // rte_raw_cksum sums in memory order: store it back as is
    if (i % 3 == 0) ip[1 + next() % 19] ^= static_cast<uint8_t>(1u << (next() >> 8) % 8);
    const bool want = rte_raw_cksum(ip, 20) == 0xFFFF;
    ASSERT_EQ(parse::ipv4_header_sum_ok(m, ip, 20), want) << "header " << i;
    ASSERT_EQ(parse::ipv4_header_sum_valid(ip, 20), want) << "header " << i;
    (want ? accepted : rejected)++;
  }
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 5000);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace rs::test
