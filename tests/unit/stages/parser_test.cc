// Parser stage: which edge each header stack takes, the metadata it fills, and a named drop for
// every malformed shape. Truncation is checked at every byte of a full RoCE packet so that no
// length check can read past the bytes actually present.
#include "dataplane/stages/parse/parser.h"

#include <fmt/core.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dataplane/stages/parse/ipv4_udp_fast.h"
#include "tests/support/stage_harness.h"
#include "tests/unit/stages/stage_test_util.h"

namespace rs::test {
namespace {

// Runs one packet; returns the edge it took and (on drop) the reason.
struct One {
  uint8_t edge = 0;
  DropReason reason = DropReason::None;
  PacketMeta m{};
};

One parse(Parser& p, const PacketSpec& s, uint16_t in_port = 0) {
  rte_mbuf* mb = s.mbuf(test_pool(), in_port);
  EXPECT_NE(mb, nullptr);
  if (!mb) return {};
  One r;
  r.edge = p.parse_one(mb);
  r.m = meta(mb);
  r.reason = r.m.drop_reason;
  rte_pktmbuf_free(mb);
  return r;
}

DropReason drop_of(const PacketSpec& s) {
  Parser p{StageEnv{}};
  One r = parse(p, s);
  EXPECT_EQ(r.edge, kNextDrop) << "expected a drop";
  return r.reason;
}

// --- Well-formed stacks ----------------------------------------------------------------------

// The fast shape's fixed fields, from the header's own field definitions (RFC 791): the vector
// compare and the plain one both say the same for every value of every byte they look at,
// and for the fragment field's two bytes together.
bool fixed_fields_reference(const uint8_t* p) {
  const unsigned ethertype = p[12] << 8 | p[13];
  const unsigned version = p[14] >> 4, ihl = p[14] & 0xF;
  const unsigned frag_offset = (p[20] << 8 | p[21]) & 0x1FFF;
  return ethertype == 0x0800 && version == 4 && ihl == 5 && frag_offset == 0 && p[22] >= 2 && p[23] == 17;
}

TEST(Parser, FastFixedFieldsAgreeWithTheHeaderFields) {
  // Eth (dst, src, type) then IPv4 up to the source address: a header of the fast shape.
  std::array<uint8_t, 28> base{};
  const uint8_t ip[] = {0x08, 0x00, 0x45, 0x68, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 64, 17, 0xab, 0xcd, 10, 0};
  std::memcpy(base.data() + 12, ip, sizeof(ip));
  ASSERT_TRUE(fixed_fields_reference(base.data()));
  int taken = 0, cases = 0;
  auto check = [&](const std::array<uint8_t, 28>& h) {
    const bool want = fixed_fields_reference(h.data());
    EXPECT_EQ(parse::fixed_fields_fast(h.data()), want) << fmt::format("bytes 12..27: {:02x}", fmt::join(h.begin() + 12, h.end(), " "));
    EXPECT_EQ(parse::fixed_fields_scalar(h.data()), want) << fmt::format("bytes 12..27: {:02x}", fmt::join(h.begin() + 12, h.end(), " "));
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
    for (int lo = 0; lo < 256; lo += 17) {
      auto h = base;
      h[20] = static_cast<uint8_t>(hi);
      h[21] = static_cast<uint8_t>(lo);
      check(h);
    }
  // Both outcomes were seen many times: TTL 2..255 and the free bytes (TOS, lengths, id,
  // checksum, source) keep the shape; the flags bits (DF, MF, reserved) do too.
  EXPECT_GT(taken, 10 * 256);
  EXPECT_GT(cases - taken, 2000);
}

TEST(Parser, RoceOverIpv4FillsMeta) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 26, .ecn = 2} / Udp{.sport = 0xC123} / Bth{.opcode = 0x0a, .dest_qp = 0x11, .psn = 7} / Payload::of_size(64)}, 3);
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  const PacketMeta& m = meta(out[Parser::Ip][0]);
  EXPECT_EQ(m.l3, L3Type::Ipv4);
  EXPECT_EQ(m.l3_offset, 14);
  EXPECT_EQ(m.l4_offset, 34);
  EXPECT_EQ(m.in_port, 3) << "the parser must keep the rx port";
  EXPECT_EQ(m.out_port, kInvalidPort);
  EXPECT_EQ(m.ip_proto, 17);
  EXPECT_EQ(m.dscp, 26);
  EXPECT_EQ(m.ecn, 2);
  EXPECT_TRUE(m.flags & meta_flag::kUdp);
  EXPECT_TRUE(m.flags & meta_flag::kRoce);
  EXPECT_FALSE(m.flags & meta_flag::kCnp);
  EXPECT_FALSE(m.flags & meta_flag::kVlan);
  EXPECT_EQ(m.bth_opcode, 0x0a);
  EXPECT_EQ(m.dest_qp, 0x11u);
  EXPECT_EQ(m.psn, 7u);
  EXPECT_EQ(h.counter("ipv4"), 1u);
  EXPECT_EQ(h.counter("udp"), 1u);
  EXPECT_EQ(h.counter("roce"), 1u);
  EXPECT_EQ(h.counter("ipv6"), 0u);
}

TEST(Parser, RoceOverIpv6FillsMeta) {
  StageHarness<Parser> h;
  // 24-bit QP and PSN at their maximum catch a byte-order or width mistake.
  auto out = h.run({Eth{} / Ipv6{.dscp = 3, .ecn = 1} / Udp{} / Bth{.opcode = 0x0c, .dest_qp = 0xABCDEF, .psn = 0xFFFFFF} / Payload::of_size(32)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  const PacketMeta& m = meta(out[Parser::Ip][0]);
  EXPECT_EQ(m.l3, L3Type::Ipv6);
  EXPECT_EQ(m.l3_offset, 14);
  EXPECT_EQ(m.l4_offset, 54);
  EXPECT_EQ(m.dscp, 3);
  EXPECT_EQ(m.ecn, 1);
  EXPECT_EQ(m.ip_proto, 17);
  EXPECT_TRUE(m.flags & meta_flag::kRoce);
  EXPECT_EQ(m.bth_opcode, 0x0c);
  EXPECT_EQ(m.dest_qp, 0xABCDEFu);
  EXPECT_EQ(m.psn, 0xFFFFFFu);
  EXPECT_EQ(h.counter("ipv6"), 1u);
  EXPECT_EQ(h.counter("roce"), 1u);
}

TEST(Parser, CnpOpcodeSetsCnpFlag) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.dscp = 48} / Udp{} / Bth{.opcode = 0x81, .becn = true} / Payload::of_size(16),
                    Eth{} / Ipv4{} / Udp{} / Bth{.opcode = 0x80} / Payload::of_size(16)});
  ASSERT_EQ(out[Parser::Ip].size(), 2u);
  EXPECT_TRUE(meta(out[Parser::Ip][0]).flags & meta_flag::kCnp);
  EXPECT_EQ(meta(out[Parser::Ip][0]).bth_opcode, 0x81);
  EXPECT_FALSE(meta(out[Parser::Ip][1]).flags & meta_flag::kCnp) << "only 0x81 is a CNP";
  EXPECT_EQ(h.counter("cnp"), 1u);
  EXPECT_EQ(h.counter("roce"), 2u);
}

TEST(Parser, PlainUdpIsNotRoce) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{} / Udp{.dport = 4792} / Payload::of_size(40)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  const PacketMeta& m = meta(out[Parser::Ip][0]);
  EXPECT_TRUE(m.flags & meta_flag::kUdp);
  EXPECT_FALSE(m.flags & meta_flag::kRoce);
  EXPECT_EQ(h.counter("roce"), 0u);
}

TEST(Parser, NonUdpIpIsForwardedWithoutL4) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.proto = 6} / Payload::of_size(40)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  EXPECT_EQ(meta(out[Parser::Ip][0]).ip_proto, 6);
  EXPECT_EQ(meta(out[Parser::Ip][0]).l4_offset, 0);
  EXPECT_FALSE(meta(out[Parser::Ip][0]).flags & meta_flag::kUdp);
}

TEST(Parser, LaterFragmentHasNoL4) {
  // A non-first fragment starts with payload bytes, not a UDP header: reading "ports" there
  // would spread one datagram's fragments over several paths.
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.frag = 0x0010} / Udp{} / Bth{} / Payload::of_size(40)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  EXPECT_EQ(meta(out[Parser::Ip][0]).ip_proto, 0);
  EXPECT_FALSE(meta(out[Parser::Ip][0]).flags & meta_flag::kRoce);
}

TEST(Parser, VlanPcpAndOffsets) {
  StageHarness<Parser> h;
  std::vector<PacketSpec> pkts;
  for (uint8_t pcp = 0; pcp < 8; ++pcp)
    pkts.push_back(Eth{} / Vlan{.pcp = pcp, .vid = 100} / Ipv4{.dscp = 46} / Udp{} / Bth{} / Payload::of_size(32));
  auto out = h.run(pkts);
  ASSERT_EQ(out[Parser::Ip].size(), 8u);
  for (uint8_t pcp = 0; pcp < 8; ++pcp) {
    const PacketMeta& m = meta(out[Parser::Ip][pcp]);
    EXPECT_EQ(m.pcp, pcp);
    EXPECT_TRUE(m.flags & meta_flag::kVlan);
    EXPECT_EQ(m.l3_offset, 18);
    EXPECT_EQ(m.l4_offset, 38);
    EXPECT_EQ(m.dscp, 46);
    EXPECT_TRUE(m.flags & meta_flag::kRoce);
  }
  EXPECT_EQ(h.counter("vlan"), 8u);
}

TEST(Parser, MacControlTakesItsOwnEdge) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.opcode = 0x0101, .class_enable = 0x08},
                    Eth{.dst = "01:80:c2:00:00:01"} / MacCtl{.opcode = 0x0001}});
  ASSERT_EQ(out[Parser::MacControl].size(), 2u);
  EXPECT_EQ(meta(out[Parser::MacControl][0]).l3_offset, 14) << "mac_control reads the opcode at l3_offset";
  EXPECT_EQ(out.dropped(), 0u);
}

TEST(Parser, MacControlWithoutOpcodeIsMalformed) {
  EXPECT_EQ(drop_of((Eth{} / MacCtl{}).truncate(15)), DropReason::MalformedMacControl);
}

TEST(Parser, ArpIsNonIpDrop) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{.dst = "ff:ff:ff:ff:ff:ff", .type = 0x0806} / Payload::of_size(28),
                    Eth{.type = 0x88CC} / Payload::of_size(40)});  // LLDP too
  ASSERT_EQ(out.dropped(), 2u);
  for (auto* m : out[kNextDrop]) EXPECT_EQ(meta(m).drop_reason, DropReason::NonIp);
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

TEST(Parser, TruncatedRoceIpv4AtEveryLength) {
  const PacketSpec full = Eth{} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 122u);
  Parser p{StageEnv{}};
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    One r = parse(p, s.truncate(n));
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, ipv4_cut_reason(n)) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
  EXPECT_EQ(parse(p, full).edge, Parser::Ip);
}

// The same cuts, but with the IPv4 total length rewritten to match (a sender that lies
// consistently at L3): now the UDP checks must catch what is missing.
TEST(Parser, TruncatedRoceWithConsistentIpLength) {
  Parser p{StageEnv{}};
  for (std::size_t n = 34; n < 122; ++n) {
    const auto tot = static_cast<uint16_t>(n - 14);
    One r = parse(p, (Eth{} / Ipv4{.total_length = tot} / Udp{} / Bth{} / Payload::of_size(64)).truncate(n));
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, DropReason::MalformedUdp) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
}

// And with both the IP and UDP lengths rewritten: the BTH check must want BTH (12) + ICRC (4).
TEST(Parser, TruncatedRoceWithConsistentIpAndUdpLength) {
  Parser p{StageEnv{}};
  for (std::size_t n = 42; n <= 122; ++n) {
    const auto tot = static_cast<uint16_t>(n - 14);
    const auto ulen = static_cast<uint16_t>(n - 34);
    One r = parse(p, (Eth{} / Ipv4{.total_length = tot} / Udp{.length = ulen} / Bth{} / Payload::of_size(64)).truncate(n));
    if (ulen < 8 + 12 + 4) {
      EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
      EXPECT_EQ(r.reason, DropReason::MalformedBth) << "cut at " << n << ": got " << drop_reason_name(r.reason);
    } else {
      // Enough for BTH + ICRC: the parser cannot know the payload was cut (the ICRC would).
      EXPECT_EQ(r.edge, Parser::Ip) << "cut at " << n << ": " << drop_reason_name(r.reason);
      EXPECT_TRUE(r.m.flags & meta_flag::kRoce);
    }
  }
}

TEST(Parser, TruncatedRoceIpv6AtEveryLength) {
  const PacketSpec full = Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 142u);
  Parser p{StageEnv{}};
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    One r = parse(p, s.truncate(n));
    const DropReason want = n < 14 ? DropReason::MalformedEth : n < 54 ? DropReason::MalformedIpv6 : DropReason::BadIpv6Length;
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, want) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
  EXPECT_EQ(parse(p, full).edge, Parser::Ip);
}

TEST(Parser, TruncatedVlanTaggedAtEveryLength) {
  const PacketSpec full = Eth{} / Vlan{.pcp = 3} / Ipv4{} / Udp{} / Bth{} / Payload::of_size(64);
  const std::size_t len = full.bytes().size();
  ASSERT_EQ(len, 126u);
  Parser p{StageEnv{}};
  for (std::size_t n = 0; n < len; ++n) {
    PacketSpec s = full;
    One r = parse(p, s.truncate(n));
    const DropReason want = n < 14   ? DropReason::MalformedEth
                            : n < 18 ? DropReason::MalformedVlan
                            : n < 38 ? DropReason::MalformedIpv4
                                     : DropReason::BadIpv4Length;
    EXPECT_EQ(r.edge, kNextDrop) << "cut at " << n;
    EXPECT_EQ(r.reason, want) << "cut at " << n << ": got " << drop_reason_name(r.reason);
  }
}

TEST(Parser, CuttingOnlyEthernetPaddingStillForwards) {
  // BTH + ICRC with no payload is a 58-byte frame, padded to the 60-byte minimum: the padding
  // is outside every length field, so removing it changes nothing; one byte more is a lie.
  const PacketSpec small = Eth{} / Ipv4{} / Udp{} / Bth{};
  ASSERT_EQ(small.bytes().size(), 60u);
  Parser p{StageEnv{}};
  for (std::size_t n : {58u, 59u, 60u}) {
    PacketSpec s = small;
    One r = parse(p, s.truncate(n));
    EXPECT_EQ(r.edge, Parser::Ip) << "cut at " << n << ": " << drop_reason_name(r.reason);
    EXPECT_TRUE(r.m.flags & meta_flag::kRoce) << "cut at " << n;
  }
  PacketSpec s = small;
  EXPECT_EQ(parse(p, s.truncate(57)).reason, DropReason::BadIpv4Length);

  // A tiny plain-UDP datagram: 46 bytes of headers and data, 14 of padding.
  const PacketSpec udp = Eth{} / Ipv4{} / Udp{.dport = 9} / Payload::of_size(4);
  for (std::size_t n = 46; n <= 60; ++n) {
    PacketSpec u = udp;
    EXPECT_EQ(parse(p, u.truncate(n)).edge, Parser::Ip) << "cut at " << n;
  }
}

// --- Malformed IPv4 ---------------------------------------------------------------------------

TEST(Parser, Ipv4IhlBelowFive) {
  for (uint8_t ihl = 0; ihl < 5; ++ihl)
    EXPECT_EQ(drop_of(Eth{} / Ipv4{.ihl = ihl} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Ihl) << "ihl " << int{ihl};
}

TEST(Parser, Ipv4IhlBeyondData) {
  // IHL 15 = 60 bytes of header; the padded frame has only 46 bytes after Ethernet.
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.ihl = 15} / Udp{}), DropReason::BadIpv4Ihl);
}

TEST(Parser, Ipv4WithOptionsIsParsedPastThem) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Ipv4{.options = {1, 1, 1, 1, 1, 1, 1, 0}} / Udp{} / Bth{.dest_qp = 0x42} / Payload::of_size(8)});
  ASSERT_EQ(out[Parser::Ip].size(), 1u);
  EXPECT_EQ(meta(out[Parser::Ip][0]).l4_offset, 14 + 28);
  EXPECT_EQ(meta(out[Parser::Ip][0]).dest_qp, 0x42u);
}

TEST(Parser, Ipv4TotalLengthBeyondFrame) {
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.total_length = 1000} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
}

TEST(Parser, Ipv4TotalLengthBelowHeader) {
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.total_length = 19} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.total_length = 0} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Length);
  // With options the bound is IHL*4 (24), not 20.
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.total_length = 22, .options = {1, 1, 1, 0}} / Udp{} / Payload::of_size(20)),
            DropReason::BadIpv4Length);
}

TEST(Parser, WrongIpVersion) {
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.version = 6} / Udp{} / Payload::of_size(20)), DropReason::MalformedIpv4);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.version = 5} / Udp{} / Payload::of_size(20)), DropReason::MalformedIpv4);
  // An IPv4 header behind the IPv6 EtherType.
  EXPECT_EQ(drop_of(Eth{.type = 0x86DD} / Ipv4{} / Udp{} / Payload::of_size(40)), DropReason::MalformedIpv6);
}

TEST(Parser, Ipv4BadHeaderChecksum) {
  // RFC 1812 5.2.2: a router drops a header whose checksum does not verify.
  const auto good = (Eth{} / Ipv4{} / Udp{} / Payload::of_size(20)).bytes();
  const auto sum = static_cast<uint16_t>(good[24] << 8 | good[25]);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.checksum = static_cast<uint16_t>(sum ^ 0x0001)} / Udp{} / Payload::of_size(20)),
            DropReason::BadIpv4Checksum);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.checksum = 0} / Udp{} / Payload::of_size(20)), DropReason::BadIpv4Checksum);
  // Options are covered by the checksum too: one flipped option byte is caught.
  auto opt = (Eth{} / Ipv4{.options = {1, 1, 1, 0}} / Udp{} / Payload::of_size(20)).bytes();
  opt[14 + 21] ^= 0x40;
  Parser p{StageEnv{}};
  rte_mbuf* m = raw_mbuf(opt);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(p.parse_one(m), kNextDrop);
  EXPECT_EQ(meta(m).drop_reason, DropReason::BadIpv4Checksum);
  rte_pktmbuf_free(m);
  // And the untouched header still passes.
  EXPECT_EQ(parse(p, Eth{} / Ipv4{} / Udp{} / Payload::of_size(20)).edge, Parser::Ip);
}

TEST(Parser, Ipv4ChecksumAsTheNicReportedIt) {
  // A header is good when the NIC says GOOD (a sum it checked) or the sum checks out in
  // software, whatever else the flags say: UNKNOWN (software ports), NONE (sum not filled in,
  // forwarded as is) or BAD (which a real NIC says only of a sum software finds wrong too).
  // The fast shape's parse (a RoCE frame) checks in software only, so a sum only the NIC calls
  // good is left to the general parser.
  const auto good = (Eth{} / Ipv4{} / Udp{.dport = 4791} / Bth{} / Payload::of_size(20)).bytes();
  const auto sum = static_cast<uint16_t>(good[24] << 8 | good[25]);
  const PacketSpec wrong = Eth{} / Ipv4{.checksum = static_cast<uint16_t>(sum ^ 0x0100)} / Udp{.dport = 4791} / Bth{} /
                           Payload::of_size(20);
  const PacketSpec right = Eth{} / Ipv4{} / Udp{.dport = 4791} / Bth{} / Payload::of_size(20);
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
  Parser p{StageEnv{}};
  for (const Case& c : cases) {
    const auto bytes = (c.correct_sum ? right : wrong).bytes();
    rte_mbuf* m = raw_mbuf(bytes);
    ASSERT_NE(m, nullptr);
    m->ol_flags |= c.flags;
    const std::string what = fmt::format("ol_flags {:#x}, sum {}", c.flags, c.correct_sum ? "right" : "wrong");
    parse::FastFields f;
    parse::FastTally t;
    EXPECT_EQ(parse::ipv4_udp_fast_fields(m, 0, f, t), c.correct_sum) << what;
    EXPECT_EQ(p.parse_one(m), c.accepted ? uint8_t{Parser::Ip} : kNextDrop) << what;
    if (!c.accepted) {
      EXPECT_EQ(meta(m).drop_reason, DropReason::BadIpv4Checksum) << what;
    }
    rte_pktmbuf_free(m);
  }
}

// --- Malformed UDP / BTH / IPv6 ---------------------------------------------------------------

TEST(Parser, UdpLengthBelowHeader) {
  for (uint16_t l : {0, 1, 7})
    EXPECT_EQ(drop_of(Eth{} / Ipv4{} / Udp{.length = l} / Payload::of_size(20)), DropReason::MalformedUdp) << "len " << l;
}

TEST(Parser, UdpLengthBeyondIpDatagram) {
  // 8 + 20 bytes are there; one more is a lie, even though Ethernet padding follows.
  EXPECT_EQ(drop_of(Eth{} / Ipv4{} / Udp{.length = 29} / Payload::of_size(20)), DropReason::MalformedUdp);
  EXPECT_EQ(drop_of(Eth{} / Ipv6{} / Udp{.length = 29} / Payload::of_size(20)), DropReason::MalformedUdp);
  Parser p{StageEnv{}};
  EXPECT_EQ(parse(p, Eth{} / Ipv4{} / Udp{.length = 28} / Payload::of_size(20)).edge, Parser::Ip);
}

TEST(Parser, UdpHeaderBeyondIpDatagram) {
  // The IP total length ends before a whole UDP header.
  EXPECT_EQ(drop_of(Eth{} / Ipv4{.total_length = 24} / Udp{} / Payload::of_size(20)), DropReason::MalformedUdp);
}

TEST(Parser, Ipv6PayloadLengthBeyondFrame) {
  EXPECT_EQ(drop_of(Eth{} / Ipv6{.payload_length = 1000} / Udp{} / Payload::of_size(20)), DropReason::BadIpv6Length);
  Parser p{StageEnv{}};
  EXPECT_EQ(parse(p, Eth{} / Ipv6{.payload_length = 28} / Udp{} / Payload::of_size(20)).edge, Parser::Ip);
  EXPECT_EQ(drop_of(Eth{} / Ipv6{.payload_length = 29} / Udp{} / Payload::of_size(20)), DropReason::BadIpv6Length);
}

TEST(Parser, BthTooShortForBthAndIcrc) {
  // UDP 4791 with a BTH but no ICRC (20 bytes of UDP), or with less than a BTH.
  EXPECT_EQ(drop_of(Eth{} / Ipv4{} / Udp{} / Bth{.icrc = false}), DropReason::MalformedBth);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{} / Udp{} / Payload::of_size(8)), DropReason::MalformedBth);
  EXPECT_EQ(drop_of(Eth{} / Ipv4{} / Udp{} / Payload::of_size(15)), DropReason::MalformedBth);  // 23 bytes of UDP
  EXPECT_EQ(drop_of(Eth{} / Ipv6{} / Udp{} / Bth{.icrc = false}), DropReason::MalformedBth);
  // Exactly BTH + ICRC is enough.
  Parser p{StageEnv{}};
  EXPECT_EQ(parse(p, Eth{} / Ipv4{} / Udp{} / Payload::of_size(24)).edge, Parser::Ip);
}

// --- VLAN stacks ------------------------------------------------------------------------------

TEST(Parser, StackedVlanIsCountedDrop) {
  StageHarness<Parser> h;
  auto out = h.run({Eth{} / Vlan{} / Vlan{} / Ipv4{} / Udp{} / Payload::of_size(20)});
  ASSERT_EQ(out.dropped(), 1u);
  EXPECT_EQ(meta(out[kNextDrop][0]).drop_reason, DropReason::StackedVlan);
}

TEST(Parser, QinQOuterTagIsStackedVlan) {
  EXPECT_EQ(drop_of(Eth{} / Vlan{.tpid = 0x88a8} / Vlan{} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
  // An 802.1ad tag behind an 802.1Q one.
  EXPECT_EQ(drop_of(Eth{} / Vlan{} / Vlan{.tpid = 0x88a8} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
  // A lone 802.1ad tag is not supported either: it is a service tag that needs a C-tag.
  EXPECT_EQ(drop_of(Eth{} / Vlan{.tpid = 0x88a8} / Ipv4{} / Udp{} / Payload::of_size(20)), DropReason::StackedVlan);
}

// --- Flow hash --------------------------------------------------------------------------------

uint32_t hash_of(const PacketSpec& s, uint32_t seed = 0) {
  Parser p{StageEnv{.qos = nullptr, .hash_seed = seed}};
  One r = parse(p, s);
  EXPECT_EQ(r.edge, Parser::Ip);
  return r.m.flow_hash;
}

TEST(Parser, FlowHashDependsOnlyOnFiveTuple) {
  // Same 5-tuple, different everything else (DSCP, ECN, TTL, BTH, payload, VLAN, in_port).
  const uint32_t a = hash_of(Eth{} / Ipv4{} / Udp{.sport = 0xC001} / Bth{.psn = 1} / Payload::of_size(64));
  const uint32_t b = hash_of(Eth{.src = "02:00:00:00:aa:09"} / Vlan{.pcp = 3} / Ipv4{.dscp = 26, .ecn = 3, .ttl = 9} /
                             Udp{.sport = 0xC001} / Bth{.opcode = 0x81, .dest_qp = 7, .psn = 99} / Payload::of_size(200, 5));
  EXPECT_EQ(a, b);
  // IPv6 likewise ignores the traffic class, flow label and hop limit.
  const uint32_t c = hash_of(Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(64));
  const uint32_t d = hash_of(Eth{} / Ipv6{.dscp = 3, .hop_limit = 2, .flow_label = 0x12345} / Udp{} / Bth{} / Payload::of_size(8));
  EXPECT_EQ(c, d);
}

TEST(Parser, FlowHashChangesWithEveryTupleField) {
  const uint32_t base = hash_of(Eth{} / Ipv4{} / Udp{} / Payload::of_size(20));
  EXPECT_NE(base, hash_of(Eth{} / Ipv4{.src = "10.0.1.3"} / Udp{} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of(Eth{} / Ipv4{.dst = "10.0.2.3"} / Udp{} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of(Eth{} / Ipv4{} / Udp{.sport = 0xC002} / Payload::of_size(20)));
  EXPECT_NE(base, hash_of(Eth{} / Ipv4{} / Udp{.dport = 4792} / Payload::of_size(20)));
  // Swapping source and destination is a different (reverse) flow.
  EXPECT_NE(base, hash_of(Eth{} / Ipv4{.src = "10.0.2.2", .dst = "10.0.1.2"} / Udp{} / Payload::of_size(20)));
}

TEST(Parser, FlowHashSpreadsUdpSourcePorts) {
  // RoCE NICs put the per-QP entropy in the UDP source port only: 1024 source ports must give
  // (almost) 1024 hashes, and the low bits that index a redirection table must all be used.
  std::set<uint32_t> seen;
  std::set<uint32_t> low6;
  for (uint32_t i = 0; i < 1024; ++i) {
    const uint32_t h = hash_of(Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{} / Payload::of_size(8));
    seen.insert(h);
    low6.insert(h & 63);
  }
  EXPECT_GE(seen.size(), 1020u);
  EXPECT_EQ(low6.size(), 64u);
}

TEST(Parser, FlowHashSeedChangesHash) {
  // Different seeds per switch tier avoid ECMP polarisation.
  int differ = 0;
  for (uint32_t i = 0; i < 64; ++i) {
    const PacketSpec s = Eth{} / Ipv4{} / Udp{.sport = static_cast<uint16_t>(0xC000 + i)} / Bth{} / Payload::of_size(8);
    const uint32_t a = hash_of(s, 1), b = hash_of(s, 2);
    EXPECT_EQ(a, hash_of(s, 1)) << "the hash must be deterministic for one seed";
    differ += a != b;
  }
  EXPECT_EQ(differ, 64);
  const PacketSpec v6 = Eth{} / Ipv6{} / Udp{} / Bth{} / Payload::of_size(8);
  EXPECT_NE(hash_of(v6, 1), hash_of(v6, 0x9e3779b9));
}

TEST(Parser, Ipv4HeaderSumAgreesWithDpdksOverCarries) {
  // The fast sum adds 64-bit words with end-around carries: headers of high bytes (every add
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
    (want ? accepted : rejected)++;
  }
  EXPECT_GT(accepted, 10000);
  EXPECT_GT(rejected, 5000);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace rs::test
