// PFC / PAUSE frame codec: exact bytes of a known frame, round trips, every rejection reason,
// the mbuf builder (including an empty pool) and the quanta-to-time conversion.
#include "dataplane/tm/pfc/pfc_frame.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs {
namespace {

constexpr rte_ether_addr kSrc{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};

std::vector<uint8_t> encoded(uint8_t enable, const std::array<uint16_t, 8>& q) {
  std::vector<uint8_t> f(kMacControlFrameLen, 0xee);  // not zero: the encoder must write the pad
  encode_pfc(f.data(), kSrc, enable, q);
  return f;
}

// A heap buffer of exactly `n` bytes, so a sanitizer build catches any read past `len`.
MacControlError decode_exact(const std::vector<uint8_t>& f, std::size_t n, PauseFrame& out) {
  std::vector<uint8_t> exact(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(n));
  return decode_mac_control(exact.data(), static_cast<uint32_t>(n), out);
}

TEST(PfcFrame, KnownFrameBytes) {
  // Priorities 3 and 4 (SONiC's lossless pair): XOFF for 0xffff quanta on 3, 0x1234 on 4.
  const std::array<uint8_t, 60> expected = {
      0x01, 0x80, 0xc2, 0x00, 0x00, 0x01,  // DA
      0x02, 0x00, 0x00, 0x00, 0xaa, 0x01,  // SA
      0x88, 0x08,                          // MAC control
      0x01, 0x01,                          // PFC opcode
      0x00, 0x18,                          // class-enable vector: bits 3 and 4
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // quanta 0..2
      0xff, 0xff,                          // quanta 3
      0x12, 0x34,                          // quanta 4
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  // quanta 5..7
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,  // pad to 60
  };
  const auto f = encoded(0x18, {0, 0, 0, 0xffff, 0x1234, 0, 0, 0});
  ASSERT_EQ(f.size(), expected.size());
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], expected[i]) << "byte " << i;
}

TEST(PfcFrame, MatchesTheTestPacketBuilder) {
  // A second, independent writer of the same format.
  const std::array<uint16_t, 8> q = {1, 2, 3, 0xfffe, 0x8000, 0, 7, 0xffff};
  const auto ours = encoded(0xa5, q);
  const auto theirs = (test::Eth{.dst = "01:80:c2:00:00:01", .src = "02:00:00:00:aa:01"} /
                       test::MacCtl{.opcode = 0x0101, .class_enable = 0xa5, .quanta = q})
                          .bytes();
  EXPECT_EQ(ours, theirs);
}

TEST(PfcFrame, RoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const auto enable = static_cast<uint8_t>(rng());
    std::array<uint16_t, 8> q{};
    for (auto& v : q) v = static_cast<uint16_t>(rng());
    PauseFrame out;
    ASSERT_EQ(decode_mac_control(encoded(enable, q).data(), kMacControlFrameLen, out), MacControlError::Ok);
    EXPECT_TRUE(out.pfc);
    EXPECT_EQ(out.enable, enable);
    EXPECT_EQ(out.quanta, q);
  }
}

TEST(PfcFrame, PaddedFramesAccepted) {
  // Ethdevs may deliver more than the 60-byte minimum (padding, a kept FCS).
  auto f = encoded(0x08, {0, 0, 0, 500, 0, 0, 0, 0});
  for (std::size_t n : {61u, 64u, 128u, 1514u}) {
    f.resize(n, 0);
    PauseFrame out;
    EXPECT_EQ(decode_exact(f, n, out), MacControlError::Ok) << n;
    EXPECT_EQ(out.enable, 0x08);
    EXPECT_EQ(out.quanta[3], 500);
  }
}

TEST(PfcFrame, LegacyPause) {
  auto f = encoded(0, {});
  f[14] = 0x00;  // opcode 0x0001
  f[15] = 0x01;
  f[16] = 0x12;  // pause time 0x1234 where PFC has its class-enable vector
  f[17] = 0x34;
  f[18] = 0xbe;  // bytes PAUSE leaves reserved must not leak into the quanta
  PauseFrame out;
  ASSERT_EQ(decode_mac_control(f.data(), static_cast<uint32_t>(f.size()), out), MacControlError::Ok);
  EXPECT_FALSE(out.pfc);
  EXPECT_EQ(out.enable, 0xff);
  for (auto q : out.quanta) EXPECT_EQ(q, 0x1234);
}

TEST(PfcFrame, TooShort) {
  const auto f = encoded(0x08, {0, 0, 0, 1, 0, 0, 0, 0});
  PauseFrame out;
  for (std::size_t n : {0u, 1u, 14u, 34u, 59u}) EXPECT_EQ(decode_exact(f, n, out), MacControlError::TooShort) << n;
  EXPECT_EQ(decode_exact(f, 60, out), MacControlError::Ok);
}

TEST(PfcFrame, BadDestination) {
  PauseFrame out;
  for (std::size_t i = 0; i < 6; ++i) {
    auto f = encoded(0x08, {});
    f[i] ^= 0x01;
    EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::BadDestination) << "byte " << i;
  }
  auto f = encoded(0x08, {});
  std::memcpy(f.data(), kSrc.addr_bytes, 6);  // unicast to us: not link-local MAC control
  EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::BadDestination);
}

TEST(PfcFrame, BadEtherType) {
  PauseFrame out;
  auto f = encoded(0x08, {});
  f[12] = 0x81;  // a VLAN tag: MAC control frames are never tagged
  f[13] = 0x00;
  EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::BadEtherType);
  f[12] = 0x88;
  f[13] = 0x09;
  EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::BadEtherType);
}

TEST(PfcFrame, UnknownOpcode) {
  PauseFrame out;
  for (uint16_t op : {0x0000, 0x0002, 0x0003, 0x0100, 0x0102, 0x1001, 0xffff}) {
    auto f = encoded(0x08, {});
    f[14] = static_cast<uint8_t>(op >> 8);
    f[15] = static_cast<uint8_t>(op);
    EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::UnknownOpcode) << std::hex << op;
  }
}

TEST(PfcFrame, ReservedBits) {
  PauseFrame out;
  for (uint8_t hi : {0x01, 0x80, 0xff}) {
    auto f = encoded(0x08, {});
    f[16] = hi;
    EXPECT_EQ(decode_mac_control(f.data(), 60, out), MacControlError::ReservedBits) << int(hi);
  }
}

TEST(PfcFrame, ErrorNamesAreDistinct) {
  std::vector<std::string> names;
  for (auto e : {MacControlError::Ok, MacControlError::TooShort,
                 MacControlError::BadDestination, MacControlError::BadEtherType, MacControlError::UnknownOpcode,
                 MacControlError::ReservedBits}) {
    const std::string s = to_string(e);
    EXPECT_FALSE(s.empty());
    for (const auto& n : names) EXPECT_NE(n, s);
    names.push_back(s);
  }
  EXPECT_STREQ(to_string(MacControlError::ReservedBits), "reserved_bits");
}

TEST(PfcFrame, Mbuf) {
  const std::array<uint16_t, 8> q = {0, 0, 0, 0xffff, 0xffff, 0, 0, 0};
  rte_mbuf* m = make_pfc_mbuf(test::test_pool(), kSrc, 0x18, q);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->pkt_len, kMacControlFrameLen);
  EXPECT_EQ(m->data_len, kMacControlFrameLen);
  EXPECT_EQ(test::mbuf_bytes(m), encoded(0x18, q));
  rte_pktmbuf_free(m);
}

TEST(PfcFrame, MbufFromAnEmptyPool) {
  rte_mempool* pool = rte_pktmbuf_pool_create("pfc_tiny", 2, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  ASSERT_NE(pool, nullptr);
  rte_mbuf* a = make_pfc_mbuf(pool, kSrc, 1, {});
  rte_mbuf* b = make_pfc_mbuf(pool, kSrc, 1, {});
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(make_pfc_mbuf(pool, kSrc, 1, {}), nullptr);
  rte_pktmbuf_free(a);
  rte_pktmbuf_free(b);
  EXPECT_EQ(rte_mempool_avail_count(pool), 2u) << "nothing leaked";
  rte_mempool_free(pool);

  // Data room smaller than a minimum frame: the mbuf goes back, nothing is returned.
  pool = rte_pktmbuf_pool_create("pfc_small", 2, 0, 0, 32, SOCKET_ID_ANY);
  ASSERT_NE(pool, nullptr);
  EXPECT_EQ(make_pfc_mbuf(pool, kSrc, 1, {}), nullptr);
  EXPECT_EQ(rte_mempool_avail_count(pool), 2u);
  rte_mempool_free(pool);
}

TEST(PfcFrame, PauseQuantaToNs) {
  // 65535 quanta × 512 bit times at 100 Gb/s = 335.5392 µs.
  const double full_100g = static_cast<double>(pause_quanta_to_ns(65535, 100));
  EXPECT_NEAR(full_100g, 335'539.2, 335'539.2 * 0.01);
  EXPECT_NEAR(static_cast<double>(pause_quanta_to_ns(65535, 10)), 3'355'392.0, 3'355'392.0 * 0.01);
  EXPECT_NEAR(static_cast<double>(pause_quanta_to_ns(65535, 400)), 83'884.8, 83'884.8 * 0.01);
  EXPECT_NEAR(static_cast<double>(pause_quanta_to_ns(394, 100)), 2'017.3, 2'017.3 * 0.01);
  EXPECT_EQ(pause_quanta_to_ns(0, 100), 0u);
  EXPECT_EQ(pause_quanta_to_ns(1, 25), 20u);  // 20.48 ns, rounded
}

}  // namespace
}  // namespace rs
