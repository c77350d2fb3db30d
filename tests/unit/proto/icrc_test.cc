// RoCEv2 ICRC: fixed known-answer vectors (computed outside this code base), and the
// invariance that lets a switch rewrite TTL, DSCP/ECN and checksums without recomputing it,
// while any change to what the ICRC protects breaks it.
#include "dataplane/proto/icrc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/support/packet_builder.h"

namespace rs::test {
namespace {

// An IPv4 RoCEv2 datagram (IP header .. ICRC, no Ethernet): 10.0.1.2 -> 10.0.2.2, DSCP 26 /
// ECT(0), TTL 64, UDP 0xC001 -> 4791 with a zero checksum, BTH RC SEND_ONLY to QP 0x11, PSN 7,
// 16 payload bytes 0x40..0x4f. The ICRC was computed with Python's zlib.crc32 over
// 8 x 0xFF + the masked headers + payload, following IBTA Annex A17:
//   h = ip; h[1] = h[8] = h[10] = h[11] = 0xff; u = udp; u[6] = u[7] = 0xff; b = bth; b[4] = 0xff
//   zlib.crc32(b'\xff' * 8 + h + u + b + payload) == 0x0470fe17, stored little-endian.
// scapy.contrib.roce's BTH.compute_icrc gives the same four bytes (17 fe 70 04).
const std::vector<uint8_t> kIpv4Vector = {
    0x45, 0x68, 0x00, 0x3c, 0x12, 0x34, 0x40, 0x00, 0x40, 0x11, 0x11, 0x12, 0x0a, 0x00, 0x01, 0x02,
    0x0a, 0x00, 0x02, 0x02, 0xc0, 0x01, 0x12, 0xb7, 0x00, 0x28, 0x00, 0x00, 0x04, 0x00, 0xff, 0xff,
    0x00, 0x00, 0x00, 0x11, 0x00, 0x00, 0x00, 0x07, 0x40, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47,
    0x48, 0x49, 0x4a, 0x4b, 0x4c, 0x4d, 0x4e, 0x4f, 0x17, 0xfe, 0x70, 0x04,
};
constexpr uint32_t kIpv4Icrc = 0x0470fe17;

// An IPv6 RoCEv2 datagram: 2001:db8:1::2 -> 2001:db8:2::2, traffic class 0x68, flow label
// 0xABCDE, hop limit 64, UDP 0xC002 -> 4791 with checksum 0xBEEF, BTH opcode 0x0a with BECN set
// (byte 4 = 0x40), QP 0x1234, AckReq + PSN 0x100, payload 0x80..0x87. Same Python recipe with
// the IPv6 mask: h[0] |= 0x0f; h[1] = h[2] = h[3] = 0xff (traffic class + flow label);
// h[7] = 0xff (hop limit) -> 0x7bab0555.
const std::vector<uint8_t> kIpv6Vector = {
    0x66, 0x8a, 0xbc, 0xde, 0x00, 0x20, 0x11, 0x40, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x02, 0x00, 0x00,
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0xc0, 0x02, 0x12, 0xb7, 0x00, 0x20, 0xbe, 0xef,
    0x0a, 0x00, 0xff, 0xff, 0x40, 0x00, 0x12, 0x34, 0x80, 0x00, 0x01, 0x00, 0x80, 0x81, 0x82, 0x83,
    0x84, 0x85, 0x86, 0x87, 0x55, 0x05, 0xab, 0x7b,
};
constexpr uint32_t kIpv6Icrc = 0x7bab0555;

TEST(Icrc, KnownAnswerIpv4) {
  EXPECT_EQ(roce_icrc(kIpv4Vector.data(), kIpv4Vector.size(), false), kIpv4Icrc);
  EXPECT_TRUE(roce_icrc_ok(kIpv4Vector.data(), kIpv4Vector.size(), false));
}

TEST(Icrc, KnownAnswerIpv6) {
  EXPECT_EQ(roce_icrc(kIpv6Vector.data(), kIpv6Vector.size(), true), kIpv6Icrc);
  EXPECT_TRUE(roce_icrc_ok(kIpv6Vector.data(), kIpv6Vector.size(), true));
}

TEST(Icrc, StoredValueIsLittleEndianOnTheWire) {
  // The last four bytes hold the CRC least significant byte first; a byte-swapped ICRC is bad.
  std::vector<uint8_t> v = kIpv4Vector;
  const std::size_t n = v.size();
  std::swap(v[n - 4], v[n - 1]);
  std::swap(v[n - 3], v[n - 2]);
  EXPECT_FALSE(roce_icrc_ok(v.data(), v.size(), false));
}

TEST(Icrc, TooShortDatagramIsNeverValid) {
  EXPECT_FALSE(roce_icrc_ok(kIpv4Vector.data(), 3, false));
  // IP + UDP + BTH present but no room for an ICRC: no value, and not valid.
  EXPECT_EQ(roce_icrc(kIpv4Vector.data(), 20 + 8 + 12, false), 0u);
  EXPECT_FALSE(roce_icrc_ok(kIpv4Vector.data(), 20 + 8 + 12, false));
}

// Builder frames: Ethernet + IP datagram (the payload keeps them above the 60-byte pad).
struct Frame {
  std::vector<uint8_t> b;
  bool v6;
  std::size_t l3 = 14;
  std::size_t ip_hdr() const { return v6 ? 40 : 20; }
  std::size_t udp() const { return l3 + ip_hdr(); }
  std::size_t bth() const { return udp() + 8; }
  std::size_t payload() const { return bth() + 12; }
  std::size_t datagram_len() const {
    return v6 ? 40u + (b[l3 + 4] << 8 | b[l3 + 5]) : static_cast<std::size_t>(b[l3 + 2] << 8 | b[l3 + 3]);
  }
  bool icrc_ok() const { return roce_icrc_ok(b.data() + l3, datagram_len(), v6); }
};

Frame v4_frame() {
  return {(Eth{} / Ipv4{.dscp = 26, .ecn = 2} / Udp{} / Bth{.dest_qp = 0x11, .psn = 42} / Payload::of_size(64)).bytes(),
          false};
}
Frame v6_frame() {
  return {(Eth{} / Ipv6{.dscp = 26, .ecn = 2, .flow_label = 0x12345} / Udp{} / Bth{.dest_qp = 0x11, .psn = 42} /
           Payload::of_size(64))
              .bytes(),
          true};
}

TEST(Icrc, BuilderFramesCarryAValidIcrc) {
  EXPECT_TRUE(v4_frame().icrc_ok());
  EXPECT_TRUE(v6_frame().icrc_ok());
}

TEST(Icrc, Ipv4VariantFieldsDoNotAffectIt) {
  // What a router rewrites hop by hop is masked out of the ICRC.
  struct Case {
    const char* what;
    std::size_t (*at)(const Frame&);
    uint8_t value;
  };
  const Case cases[] = {
      {"TOS (DSCP/ECN, e.g. CE marking)", [](const Frame& f) { return f.l3 + 1; }, 0x6b},
      {"TTL", [](const Frame& f) { return f.l3 + 8; }, 0x3f},
      {"IP checksum high", [](const Frame& f) { return f.l3 + 10; }, 0x00},
      {"IP checksum low", [](const Frame& f) { return f.l3 + 11; }, 0x5a},
      {"UDP checksum high", [](const Frame& f) { return f.udp() + 6; }, 0x12},
      {"UDP checksum low", [](const Frame& f) { return f.udp() + 7; }, 0x34},
      {"BTH byte 4 (FECN/BECN)", [](const Frame& f) { return f.bth() + 4; }, 0xC0},
  };
  for (const Case& c : cases) {
    Frame f = v4_frame();
    ASSERT_NE(f.b[c.at(f)], c.value) << c.what;
    f.b[c.at(f)] = c.value;
    EXPECT_TRUE(f.icrc_ok()) << c.what;
  }
  // All of them at once, as a hop that decrements TTL and marks CE does.
  Frame f = v4_frame();
  f.b[f.l3 + 1] |= 3;
  f.b[f.l3 + 8] -= 1;
  f.b[f.l3 + 10] ^= 0xff;
  f.b[f.bth() + 4] = 0x40;
  EXPECT_TRUE(f.icrc_ok());
}

TEST(Icrc, Ipv4ProtectedFieldsBreakIt) {
  struct Case {
    const char* what;
    std::size_t (*at)(const Frame&);
  };
  const Case cases[] = {
      {"IP source", [](const Frame& f) { return f.l3 + 15; }},
      {"IP destination", [](const Frame& f) { return f.l3 + 19; }},
      {"IP identification", [](const Frame& f) { return f.l3 + 5; }},
      {"UDP source port (ECMP entropy)", [](const Frame& f) { return f.udp() + 1; }},
      {"BTH opcode", [](const Frame& f) { return f.bth(); }},
      {"BTH P_Key", [](const Frame& f) { return f.bth() + 3; }},
      {"destination QP", [](const Frame& f) { return f.bth() + 7; }},
      {"destination QP high byte", [](const Frame& f) { return f.bth() + 5; }},
      {"PSN", [](const Frame& f) { return f.bth() + 11; }},
      {"first payload byte", [](const Frame& f) { return f.payload(); }},
      {"last payload byte", [](const Frame& f) { return f.l3 + f.datagram_len() - 5; }},
      {"ICRC itself", [](const Frame& f) { return f.l3 + f.datagram_len() - 1; }},
  };
  for (const Case& c : cases) {
    Frame f = v4_frame();
    f.b[c.at(f)] ^= 0x01;
    EXPECT_FALSE(f.icrc_ok()) << c.what;
  }
}

TEST(Icrc, Ipv6VariantFieldsDoNotAffectIt) {
  Frame f = v6_frame();
  f.b[f.l3 + 0] ^= 0x0f;  // traffic class, high nibble
  f.b[f.l3 + 1] ^= 0xff;  // traffic class low nibble + flow label
  f.b[f.l3 + 3] ^= 0x55;  // flow label
  f.b[f.l3 + 7] -= 1;     // hop limit
  f.b[f.udp() + 6] ^= 0xaa;
  f.b[f.bth() + 4] = 0x80;
  EXPECT_TRUE(f.icrc_ok());
}

TEST(Icrc, Ipv6ProtectedFieldsBreakIt) {
  for (std::size_t off : {8u + 15u, 24u + 15u, 4u + 1u, 6u}) {  // src, dst, payload length, next header
    Frame f = v6_frame();
    f.b[f.l3 + off] ^= 0x01;
    // Keep the length the checker reads unchanged when the payload-length byte is the one hit.
    const std::size_t len = off == 5 ? v6_frame().datagram_len() : f.datagram_len();
    EXPECT_FALSE(roce_icrc_ok(f.b.data() + f.l3, len, true)) << "IPv6 header byte " << off;
  }
  Frame f = v6_frame();
  f.b[f.payload() + 10] ^= 0x80;
  EXPECT_FALSE(f.icrc_ok());
  f = v6_frame();
  f.b[f.bth() + 6] ^= 0x01;  // QP
  EXPECT_FALSE(f.icrc_ok());
}

TEST(Icrc, Ipv4OptionsAreCovered) {
  // With IP options the BTH moves; the ICRC must follow the IHL, not assume 20 bytes.
  Frame f{(Eth{} / Ipv4{.options = {0x01, 0x01, 0x01, 0x00}} / Udp{} / Bth{} / Payload::of_size(64)).bytes(), false};
  EXPECT_TRUE(f.icrc_ok());
  f.b[f.l3 + 24 + 8 + 4] = 0xff;  // BTH byte 4, now at IP header 24 + UDP 8
  EXPECT_TRUE(f.icrc_ok());
  f.b[f.l3 + 24 + 8 + 7] ^= 1;  // QP
  EXPECT_FALSE(f.icrc_ok());
}

}  // namespace
}  // namespace rs::test
