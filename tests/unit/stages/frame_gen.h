// A seeded generator of frames over every header variant the parse step knows, for the property
// test (step_forms_test.cc): untagged, 802.1Q, 802.1ad and stacked tags; IPv4 with and without
// options, wrong versions and IHLs, fragments, lying total lengths, bad header sums, every TTL
// boundary; IPv6 with lying payload lengths and every hop-limit boundary; UDP and not, lying UDP
// lengths, RoCE (BTH opcodes including CNPs, with and without room for the ICRC) and not; MAC
// control (PFC, PAUSE, bad opcodes, runts, tagged); non-IP; runts; truncated and unpadded frames;
// the NIC's checksum verdicts; frames split over two segments. Destinations cover every kind of
// route of the test's FIB (stage_forms.h's forms_routes()).
#pragma once
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "dataplane/core/packet_meta.h"
#include "tests/support/packet_builder.h"
#include "tests/support/seeded_rng.h"

namespace rs::test {

struct GenFrame {
  std::vector<uint8_t> bytes;
  uint64_t ol_flags = 0;  // the NIC's IPv4 checksum verdict
  uint32_t split = 0;     // bytes in the first segment when the frame is a chain of two; 0: one
};

class FrameGen {
 public:
  explicit FrameGen(uint64_t seed) : rng_(seed) {}

  GenFrame next() {
    GenFrame f;
    f.bytes = spec().bytes();
    post(f);
    return f;
  }

 private:
  bool chance(unsigned percent) { return rng_.between(0, 99) < percent; }
  template <typename T>
  T one_of(std::initializer_list<T> v) {
    return *(v.begin() + rng_.between(0, v.size() - 1));
  }
  uint8_t ttl() { return chance(70) ? one_of<uint8_t>({0, 1, 2, 3, 64, 255}) : static_cast<uint8_t>(rng_.between(0, 255)); }
  uint8_t dscp() { return chance(60) ? one_of<uint8_t>({0, 3, 4, 5, 8, 26, 46, 48}) : static_cast<uint8_t>(rng_.between(0, 63)); }
  std::string v4_dst() {
    const unsigned k = static_cast<unsigned>(rng_.between(0, 6));
    const unsigned a = static_cast<unsigned>(rng_.between(0, 255)), b = static_cast<unsigned>(rng_.between(1, 254));
    switch (k) {
      case 0: return fmt::format("10.0.{}.{}", rng_.between(0, 3), b);  // one next hop per port
      case 1: return fmt::format("10.1.{}.{}", a, b);                  // 4-way ECMP
      case 2: return fmt::format("10.2.{}.{}", a, b);                  // 3-way ECMP
      case 3: return fmt::format("10.9.{}.{}", a, b);                  // a next hop on a missing port
      case 4: return fmt::format("192.0.2.{}", b);                     // no route
      case 5: return fmt::format("10.0.{}.{}", rng_.between(0, 3), b);
      default: return fmt::format("10.3.{}.{}", a, b);                 // a group of the test policy
    }
  }
  std::string v6_dst() {
    const unsigned k = static_cast<unsigned>(rng_.between(0, 4));
    const unsigned x = static_cast<unsigned>(rng_.between(1, 0xFFFF));
    switch (k) {
      case 0: return fmt::format("2001:db8:{}::{:x}", rng_.between(0, 3), x);
      case 1: return fmt::format("2001:db8:100:{:x}::{:x}", rng_.between(0, 0xFFFF), x);
      case 2: return fmt::format("2001:db9::{:x}", x);  // no route
      case 3: return fmt::format("2001:db8:{}::{:x}", rng_.between(0, 3), x);
      default: return fmt::format("2001:db8:300::{:x}", x);
    }
  }
  Payload payload(unsigned max) {
    const std::size_t n = chance(50) ? rng_.between(0, 64) : rng_.between(0, max);
    return Payload::of_size(n, static_cast<uint8_t>(rng_.next()));
  }

  PacketSpec spec() {
    const unsigned kind = static_cast<unsigned>(rng_.between(0, 99));
    Eth eth{.dst = "02:00:00:00:00:10", .src = fmt::format("02:00:00:00:aa:{:02x}", rng_.between(0, 255))};
    if (kind < 5) {  // MAC control
      eth.dst = chance(90) ? "01:80:c2:00:00:01" : "01:80:c2:00:00:02";
      MacCtl c{.opcode = one_of<uint16_t>({0x0101, 0x0101, 0x0001, 0x0002, 0x0000}),
               .class_enable = static_cast<uint16_t>(chance(90) ? rng_.between(0, 255) : rng_.between(0, 0xFFFF))};
      for (auto& q : c.quanta) q = static_cast<uint16_t>(chance(50) ? 0 : rng_.between(1, 200));
      PacketSpec s{eth};
      if (chance(10)) s /= Vlan{.pcp = static_cast<uint8_t>(rng_.between(0, 7))};
      s /= c;
      if (chance(10)) s.truncate(rng_.between(0, 60));
      return s;
    }
    if (kind < 9) {  // not IP: ARP, LLDP, a local experimental type
      eth.type = one_of<uint16_t>({0x0806, 0x88CC, 0x88B5});
      return PacketSpec{eth} / payload(100);
    }
    if (kind < 11) return (PacketSpec{eth} / payload(20)).no_pad().truncate(rng_.between(0, 13));  // runts
    PacketSpec s{eth};
    const unsigned tag = static_cast<unsigned>(rng_.between(0, 99));
    const auto pcp = static_cast<uint8_t>(rng_.between(0, 7));
    if (tag < 15) {
      s /= Vlan{.pcp = pcp, .vid = static_cast<uint16_t>(rng_.between(0, 4095))};
    } else if (tag < 18) {
      s /= Vlan{.pcp = pcp, .tpid = 0x88a8};
      s /= Vlan{.pcp = pcp};
    } else if (tag < 20) {
      s /= Vlan{.pcp = pcp};
      s /= Vlan{.pcp = pcp};
    } else if (tag < 22) {
      s /= Vlan{.pcp = pcp, .tpid = 0x88a8};
    }
    const bool v6 = chance(30);
    bool udp = chance(85);
    if (v6) {
      Ipv6 ip{.src = fmt::format("2001:db8:aa::{:x}", rng_.between(1, 0xFFFF)), .dst = v6_dst(), .dscp = dscp(),
              .ecn = static_cast<uint8_t>(rng_.between(0, 3)), .hop_limit = ttl(),
              .flow_label = static_cast<uint32_t>(rng_.between(0, 0xFFFFF))};
      if (!udp) ip.next = one_of<uint8_t>({6, 59, 58});
      if (chance(8)) ip.payload_length = static_cast<uint16_t>(rng_.between(0, 400));
      s /= ip;
    } else {
      Ipv4 ip{.src = fmt::format("10.{}.{}.{}", rng_.between(0, 9), rng_.between(0, 255), rng_.between(1, 254)), .dst = v4_dst(),
              .dscp = dscp(), .ecn = static_cast<uint8_t>(rng_.between(0, 3)), .ttl = ttl()};
      if (chance(3)) ip.version = static_cast<uint8_t>(rng_.between(0, 15));
      const unsigned frag = static_cast<unsigned>(rng_.between(0, 99));
      ip.frag = frag < 70 ? 0x4000 : frag < 80 ? 0 : frag < 85 ? 0x2000 : frag < 90 ? static_cast<uint16_t>(0x2000 | rng_.between(1, 0x1FFF))
                : frag < 95 ? static_cast<uint16_t>(rng_.between(1, 0x1FFF)) : 0x8000;
      if (chance(20))
        for (uint64_t k = rng_.between(1, 10) * 4; k > 0; --k) ip.options.push_back(static_cast<uint8_t>(rng_.next()));
      if (chance(3)) ip.ihl = static_cast<uint8_t>(rng_.between(0, 15));
      if (!udp) ip.proto = one_of<uint8_t>({6, 1, 47, 253});
      if (chance(8)) ip.total_length = static_cast<uint16_t>(chance(50) ? rng_.between(0, 60) : rng_.between(0, 600));
      s /= ip;
    }
    if (!udp) return s / payload(200);
    const uint16_t dport = chance(75) ? 4791 : one_of<uint16_t>({4792, 53, 9000, static_cast<uint16_t>(rng_.between(0, 0xFFFF))});
    Udp u{.sport = static_cast<uint16_t>(chance(5) ? 4791 : rng_.between(0xC000, 0xFFFF)), .dport = dport};
    if (chance(8)) u.length = static_cast<uint16_t>(rng_.between(0, 120));
    s /= u;
    if (dport != 4791 || chance(8)) return s / payload(dport == 4791 ? 30 : 200);
    s /= Bth{.opcode = one_of<uint8_t>({0x04, 0x0a, 0x0c, 0x11, 0x81, 0x81, 0x80, 0x64, static_cast<uint8_t>(rng_.next())}),
             .dest_qp = static_cast<uint32_t>(rng_.next() & 0xFFFFFF), .psn = static_cast<uint32_t>(rng_.next() & 0xFFFFFF),
             .becn = chance(20), .icrc = chance(92)};
    return s / payload(300);
  }

  // What the builder does not do: a wrong header sum, a cut or unpadded frame, the NIC's verdict,
  // two segments.
  void post(GenFrame& f) {
    auto& b = f.bytes;
    if (b.size() >= 34 && chance(6)) {
      const std::size_t l3 = (b[12] == 0x81 && b[13] == 0x00) ? 18 : 14;
      if (b.size() >= l3 + 12 && b[l3] >> 4 == 4) b[l3 + 10 + rng_.between(0, 1)] ^= static_cast<uint8_t>(rng_.between(1, 255));
    }
    if (chance(5)) b.resize(rng_.between(0, b.size()));
    if (chance(10)) {  // no Ethernet padding: trailing zeros removed (the padding, sometimes more)
      while (b.size() > 42 && b.back() == 0 && chance(80)) b.pop_back();
    }
    const unsigned v = static_cast<unsigned>(rng_.between(0, 9));
    f.ol_flags = v < 7 ? RTE_MBUF_F_RX_IP_CKSUM_UNKNOWN : v == 7 ? RTE_MBUF_F_RX_IP_CKSUM_GOOD
                 : v == 8 ? RTE_MBUF_F_RX_IP_CKSUM_BAD : RTE_MBUF_F_RX_IP_CKSUM_NONE;
    if (b.size() >= 2 && chance(5)) f.split = static_cast<uint32_t>(rng_.between(1, b.size() - 1));
  }

  Rng rng_;
};

// The frame as an mbuf (a chain of two when split) from `pool`, its metadata `garbage` (what an
// mbuf's last life left) but for the word the pipeline stamps; nullptr when the pool is empty.
inline rte_mbuf* gen_mbuf(const GenFrame& f, rte_mempool* pool, const PacketMeta& garbage, uint16_t in_port) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (!m) return nullptr;
  const uint32_t first = f.split ? f.split : static_cast<uint32_t>(f.bytes.size());
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(first));
  if (first) std::memcpy(p, f.bytes.data(), first);
  if (f.split) {
    rte_mbuf* tail = rte_pktmbuf_alloc(pool);
    if (!tail) {
      rte_pktmbuf_free(m);
      return nullptr;
    }
    const uint32_t rest = static_cast<uint32_t>(f.bytes.size()) - first;
    std::memcpy(rte_pktmbuf_append(tail, static_cast<uint16_t>(rest)), f.bytes.data() + first, rest);
    rte_pktmbuf_chain(m, tail);
  }
  m->ol_flags = f.ol_flags;
  meta(m) = garbage;
  meta(m).in_port = in_port;
  meta(m).trace = 0;
  return m;
}

}  // namespace rs::test
