// Helpers shared by the stage tests: packets whose metadata was filled by the real l3_input stage
// (so a later stage sees what it sees in the pipeline), raw-frame mbufs, and checksum/IP helpers.
#pragma once
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "dataplane/stages/l3_input.h"
#include "tests/support/stage_harness.h"

namespace rs {
// gtest prints drop reasons by name.
inline void PrintTo(DropReason r, std::ostream* os) { *os << drop_reason_name(r); }
}  // namespace rs

namespace rs::test {

// Builds each packet and runs l3_input on it; every packet must take `edge` (either IP edge
// when not given). The caller hands the mbufs to a harness, which frees them.
inline std::vector<rte_mbuf*> parsed(const std::vector<PacketSpec>& specs, uint16_t in_port = 0,
                                     std::optional<uint8_t> edge = std::nullopt, uint32_t seed = 0,
                                     const QosMaps* qos = nullptr) {
  L3Input stage{StageEnv{.qos = qos, .hash_seed = seed}};
  std::vector<rte_mbuf*> v;
  for (const auto& s : specs) {
    rte_mbuf* m = s.mbuf(test_pool(), in_port);
    EXPECT_NE(m, nullptr) << "test pool exhausted";
    if (!m) continue;
    const uint8_t e = stage.process_one(m);
    if (edge) {
      EXPECT_EQ(e, *edge) << "l3_input: " << drop_reason_name(meta(m).drop_reason);
    } else {
      EXPECT_TRUE(e == L3Input::Ipv4 || e == L3Input::Ipv6) << "l3_input: " << drop_reason_name(meta(m).drop_reason);
    }
    v.push_back(m);
  }
  return v;
}

// An mbuf holding exactly `bytes`, metadata zeroed, as the rx path hands it to the pipeline.
inline rte_mbuf* raw_mbuf(const std::vector<uint8_t>& bytes, uint16_t in_port = 0, rte_mempool* pool = nullptr) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool ? pool : test_pool());
  EXPECT_NE(m, nullptr) << "test pool exhausted";
  if (!m) return nullptr;
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size()));
  EXPECT_TRUE(p != nullptr || bytes.empty());
  if (p && !bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  meta(m) = PacketMeta{};
  meta(m).in_port = in_port;
  return m;
}

// Moves the packets of one edge out of a StageOutput so the next stage (or the test) owns them.
inline std::vector<rte_mbuf*> take(StageOutput& out, uint8_t edge) {
  std::vector<rte_mbuf*> v = std::move(out.edge[edge]);
  out.edge.erase(edge);
  return v;
}

inline void free_all(std::vector<rte_mbuf*>& v) {
  for (auto* m : v) rte_pktmbuf_free(m);
  v.clear();
}

// Full RFC 791 header checksum of the IPv4 header at `off` (its checksum field taken as zero),
// as stored in the packet (network order, byte by byte).
inline uint16_t ipv4_full_checksum(const std::vector<uint8_t>& f, std::size_t off) {
  const std::size_t hl = (f[off] & 0x0F) * 4u;
  uint32_t s = 0;
  for (std::size_t i = 0; i < hl; i += 2) {
    if (i == 10) continue;
    s += static_cast<uint32_t>(f[off + i] << 8 | f[off + i + 1]);
  }
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

inline std::string mac_str(const rte_ether_addr& a) {
  char buf[RTE_ETHER_ADDR_FMT_SIZE];
  rte_ether_format_addr(buf, sizeof(buf), &a);
  return buf;
}

}  // namespace rs::test
