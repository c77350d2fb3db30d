#include "tests/support/packet_builder.h"

#include <arpa/inet.h>
#include <rte_ether.h>

#include <cstring>
#include <stdexcept>

#include "dataplane/proto/icrc.h"
#include "dataplane/core/packet_meta.h"

namespace rs::test {
namespace {

void put16(std::vector<uint8_t>& v, std::size_t at, uint16_t x) {
  v[at] = static_cast<uint8_t>(x >> 8);
  v[at + 1] = static_cast<uint8_t>(x);
}

std::array<uint8_t, 6> parse_mac(const std::string& s) {
  rte_ether_addr a{};
  if (rte_ether_unformat_addr(s.c_str(), &a) != 0) throw std::invalid_argument("bad MAC " + s);
  std::array<uint8_t, 6> r;
  std::memcpy(r.data(), a.addr_bytes, 6);
  return r;
}

uint16_t ip_sum(const uint8_t* p, std::size_t n) {
  uint32_t s = 0;
  for (std::size_t i = 0; i + 1 < n; i += 2) s += static_cast<uint32_t>(p[i] << 8 | p[i + 1]);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return static_cast<uint16_t>(~s);
}

uint16_t type_of(const Layer* next) {
  if (!next) return 0;
  if (std::holds_alternative<Vlan>(*next)) return std::get<Vlan>(*next).tpid;
  if (std::holds_alternative<Ipv4>(*next)) return 0x0800;
  if (std::holds_alternative<Ipv6>(*next)) return 0x86DD;
  if (std::holds_alternative<MacCtl>(*next)) return 0x8808;
  return 0x88B5;  // local experimental
}

uint8_t proto_of(const Layer* next) {
  if (next && std::holds_alternative<Udp>(*next)) return 17;
  return 253;  // experimental
}

}  // namespace

Payload Payload::of_size(std::size_t n, uint8_t seed) {
  Payload p;
  p.bytes.resize(n);
  for (std::size_t i = 0; i < n; ++i) p.bytes[i] = static_cast<uint8_t>(i * 7 + seed);
  return p;
}

std::vector<uint8_t> PacketSpec::bytes() const {
  // Build innermost first so every header knows the length of what it carries.
  std::vector<uint8_t> inner;
  std::optional<std::size_t> bth_index;
  std::vector<std::size_t> header_len(layers_.size(), 0);
  for (std::size_t k = layers_.size(); k-- > 0;) {
    const Layer* next = k + 1 < layers_.size() ? &layers_[k + 1] : nullptr;
    std::vector<uint8_t> h;
    std::visit(
        [&](const auto& l) {
          using T = std::decay_t<decltype(l)>;
          if constexpr (std::is_same_v<T, Eth>) {
            h.resize(14);
            auto d = parse_mac(l.dst), s = parse_mac(l.src);
            std::memcpy(&h[0], d.data(), 6);
            std::memcpy(&h[6], s.data(), 6);
            put16(h, 12, l.type.value_or(type_of(next)));
          } else if constexpr (std::is_same_v<T, Vlan>) {
            h.resize(4);
            put16(h, 0, static_cast<uint16_t>(l.pcp << 13 | (l.vid & 0x0FFF)));
            put16(h, 2, l.type.value_or(type_of(next)));
          } else if constexpr (std::is_same_v<T, Ipv4>) {
            const std::size_t hl = 20 + l.options.size();
            h.resize(hl);
            h[0] = static_cast<uint8_t>(l.version << 4 | l.ihl.value_or(static_cast<uint8_t>(hl / 4)));
            h[1] = static_cast<uint8_t>(l.dscp << 2 | (l.ecn & 3));
            put16(h, 2, l.total_length.value_or(static_cast<uint16_t>(hl + inner.size())));
            put16(h, 6, l.frag);
            h[8] = l.ttl;
            h[9] = l.proto.value_or(proto_of(next));
            if (inet_pton(AF_INET, l.src.c_str(), &h[12]) != 1 || inet_pton(AF_INET, l.dst.c_str(), &h[16]) != 1)
              throw std::invalid_argument("bad IPv4 address");
            if (!l.options.empty()) std::memcpy(h.data() + 20, l.options.data(), l.options.size());
            put16(h, 10, l.checksum.value_or(ip_sum(h.data(), hl)));
          } else if constexpr (std::is_same_v<T, Ipv6>) {
            h.resize(40);
            const uint32_t vtc = 6u << 28 | static_cast<uint32_t>(l.dscp << 2 | (l.ecn & 3)) << 20 | (l.flow_label & 0xFFFFF);
            h[0] = static_cast<uint8_t>(vtc >> 24);
            h[1] = static_cast<uint8_t>(vtc >> 16);
            h[2] = static_cast<uint8_t>(vtc >> 8);
            h[3] = static_cast<uint8_t>(vtc);
            put16(h, 4, l.payload_length.value_or(static_cast<uint16_t>(inner.size())));
            h[6] = l.next.value_or(proto_of(next));
            h[7] = l.hop_limit;
            if (inet_pton(AF_INET6, l.src.c_str(), &h[8]) != 1 || inet_pton(AF_INET6, l.dst.c_str(), &h[24]) != 1)
              throw std::invalid_argument("bad IPv6 address");
          } else if constexpr (std::is_same_v<T, Udp>) {
            h.resize(8);
            put16(h, 0, l.sport);
            put16(h, 2, l.dport);
            put16(h, 4, l.length.value_or(static_cast<uint16_t>(8 + inner.size())));
          } else if constexpr (std::is_same_v<T, Bth>) {
            h.resize(12);
            h[0] = l.opcode;
            const std::size_t pad = (4 - inner.size() % 4) % 4;
            h[1] = static_cast<uint8_t>(pad << 4);
            put16(h, 2, l.pkey);
            h[4] = l.becn ? 0x40 : 0;
            h[5] = static_cast<uint8_t>(l.dest_qp >> 16);
            h[6] = static_cast<uint8_t>(l.dest_qp >> 8);
            h[7] = static_cast<uint8_t>(l.dest_qp);
            h[9] = static_cast<uint8_t>(l.psn >> 16);
            h[10] = static_cast<uint8_t>(l.psn >> 8);
            h[11] = static_cast<uint8_t>(l.psn);
            inner.insert(inner.end(), pad, 0);
            if (l.icrc) {
              inner.insert(inner.end(), 4, 0);
              bth_index = k;
            }
          } else if constexpr (std::is_same_v<T, Payload>) {
            h = l.bytes;
          } else if constexpr (std::is_same_v<T, MacCtl>) {
            h.resize(20);
            put16(h, 0, l.opcode);
            put16(h, 2, l.class_enable);
            for (int i = 0; i < 8; ++i) put16(h, 4 + 2 * i, l.quanta[i]);
          }
        },
        layers_[k]);
    header_len[k] = h.size();
    h.insert(h.end(), inner.begin(), inner.end());
    inner = std::move(h);
  }
  if (bth_index) {
    // The ICRC covers the IP datagram: find the IP layer's offset and length.
    std::size_t off = 0;
    for (std::size_t k = 0; k < layers_.size(); ++k) {
      if (std::holds_alternative<Ipv4>(layers_[k]) || std::holds_alternative<Ipv6>(layers_[k])) {
        const bool v6 = std::holds_alternative<Ipv6>(layers_[k]);
        const std::size_t len = inner.size() - off;
        const uint32_t c = roce_icrc(inner.data() + off, len, v6);
        for (int i = 0; i < 4; ++i) inner[inner.size() - 4 + i] = static_cast<uint8_t>(c >> (8 * i));
        break;
      }
      off += header_len[k];
    }
  }
  if (pad_ && inner.size() < 60) inner.resize(60, 0);
  if (truncate_ && *truncate_ < inner.size()) inner.resize(*truncate_);
  return inner;
}

rte_mbuf* PacketSpec::mbuf(rte_mempool* pool, uint16_t in_port) const {
  const auto b = bytes();
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (!m) return nullptr;
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(b.size()));
  if (!p && !b.empty()) {
    rte_pktmbuf_free(m);
    return nullptr;
  }
  if (!b.empty()) std::memcpy(p, b.data(), b.size());
  meta(m) = PacketMeta{};
  meta(m).in_port = in_port;
  return m;
}

std::vector<uint8_t> mbuf_bytes(const rte_mbuf* m) {
  std::vector<uint8_t> v(m->pkt_len);
  const uint8_t* p = static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, m->pkt_len, v.data()));
  if (p != v.data()) std::memcpy(v.data(), p, m->pkt_len);
  return v;
}

bool ipv4_checksum_ok(const std::vector<uint8_t>& f, std::size_t off) {
  const std::size_t hl = (f[off] & 0x0F) * 4u;
  uint32_t s = 0;
  for (std::size_t i = 0; i < hl; i += 2) s += static_cast<uint32_t>(f[off + i] << 8 | f[off + i + 1]);
  while (s >> 16) s = (s & 0xFFFF) + (s >> 16);
  return s == 0xFFFF;
}

}  // namespace rs::test
