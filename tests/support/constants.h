// What the tests share besides ports and rigs: the simulated clock's units and start, the
// RoCE frame the emulated hosts send and what it costs in the shared buffer, and builders of
// the frames tests hand-craft (a PFC frame as a peer sends it, a RoCE packet as the ingress
// stages hand it to an egress queue).
#pragma once
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <vector>

#include "dataplane/core/packet_meta.h"
#include "dataplane/tm/pfc/pfc_frame.h"
#include "tests/support/eal_env.h"
#include "tests/support/packet_builder.h"

namespace rs::test {

// --- Time: every clock in the tests is nanoseconds, stepped by the test ---------------------
inline constexpr uint64_t kUs = 1'000;
inline constexpr uint64_t kMs = 1'000'000;
inline constexpr uint64_t kT0 = 1'000 * kMs;  // switches start at an arbitrary non-zero time

// --- The emulated hosts' RoCE frame ----------------------------------------------------------
inline constexpr uint32_t kPayload = 1024;
// Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + payload + ICRC 4.
constexpr uint32_t roce_frame_len(uint32_t payload) { return 14 + 20 + 8 + 12 + payload + 4; }
inline constexpr uint32_t kFrame = roce_frame_len(kPayload);  // 1082 bytes
inline constexpr uint32_t kCell = 256;                         // the shared buffer's default cell
inline constexpr uint32_t kCells = (kFrame + kCell - 1) / kCell * kCell;  // 1280: what one kFrame charges

// --- Classes: RoCE data on DSCP 26 -> TC 3 -> queue 3 -> PG 3, lossless when PFC is on -------
inline constexpr uint8_t kRoceDscp = 26;
inline constexpr uint8_t kRoceQueue = 3;

// --- Frame builders --------------------------------------------------------------------------

// A PFC frame (802.1Qbb) from a peer with MAC `src`: every priority in `enable` gets `quanta`.
inline std::vector<uint8_t> pfc_frame(uint8_t enable, uint16_t quanta,
                                      const rte_ether_addr& src = rte_ether_addr{{0x02, 0, 0, 0, 0xbb, 1}}) {
  std::vector<uint8_t> b(kMacControlFrameLen);
  std::array<uint16_t, 8> q{};
  for (int p = 0; p < 8; ++p)
    if (enable & (1u << p)) q[p] = quanta;
  encode_pfc(b.data(), src, enable, q);
  return b;
}

// A RoCE-shaped IPv4/UDP/BTH packet from `in_port` as the ingress stages hand it to egress
// port `out_port`: queue = tc = `q`, and the IPv4 ECN field `ecn` in the metadata too.
inline rte_mbuf* roce_to_queue(uint16_t in_port, uint16_t out_port, uint8_t q, uint8_t dscp, uint8_t ecn,
                               uint32_t payload) {
  const PacketSpec s = Eth{} / Ipv4{.dscp = dscp, .ecn = ecn} / Udp{} / Bth{} / Payload::of_size(payload);
  rte_mbuf* m = s.mbuf(test_pool(), in_port);
  EXPECT_NE(m, nullptr);
  if (!m) return nullptr;
  PacketMeta& pm = meta(m);
  pm.out_port = out_port;
  pm.queue = q;
  pm.tc = q;
  pm.l3 = L3Type::Ipv4;
  pm.l3_offset = 14;
  pm.ecn = ecn;
  return m;
}

// An mbuf holding exactly `bytes`, metadata zeroed but for the ingress port, as an rx PMD
// hands a frame to the pipeline (nullptr, and a test failure, when the pool is empty).
inline rte_mbuf* raw_frame(const std::vector<uint8_t>& bytes, uint16_t in_port = 0) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  EXPECT_NE(m, nullptr) << "test pool exhausted";
  if (!m) return nullptr;
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size()));
  EXPECT_TRUE(p != nullptr || bytes.empty());
  if (p && !bytes.empty()) __builtin_memcpy(p, bytes.data(), bytes.size());
  meta(m) = PacketMeta{};
  meta(m).in_port = in_port;
  return m;
}

}  // namespace rs::test
