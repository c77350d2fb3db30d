// Packets for tests, written as layers: Eth{} / Ipv4{.dst = "10.1.0.7", .dscp = 26} /
// Udp{.dport = 4791} / Bth{.dest_qp = 0x11}. Lengths, types, checksums and the RoCE ICRC
// are filled in unless a field is set on purpose (to build malformed packets).
#pragma once
#include <rte_mbuf.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace rs::test {

struct Eth {
  std::string dst = "02:00:00:00:00:01";
  std::string src = "02:00:00:00:aa:01";
  std::optional<uint16_t> type;
};
struct Vlan {
  uint8_t pcp = 0;
  uint16_t vid = 0;
  uint16_t tpid = 0x8100;  // the TPID written before this tag (set on the outer Eth/Vlan type)
  std::optional<uint16_t> type;
};
struct Ipv4 {
  std::string src = "10.0.1.2";
  std::string dst = "10.0.2.2";
  uint8_t dscp = 0;
  uint8_t ecn = 0;
  uint8_t ttl = 64;
  uint8_t version = 4;
  std::optional<uint8_t> ihl;  // in 32-bit words; default 5 + options
  std::optional<uint8_t> proto;
  std::optional<uint16_t> total_length;
  std::optional<uint16_t> checksum;
  uint16_t frag = 0x4000;  // DF
  std::vector<uint8_t> options;
};
struct Ipv6 {
  std::string src = "2001:db8:1::2";
  std::string dst = "2001:db8:2::2";
  uint8_t dscp = 0;
  uint8_t ecn = 0;
  uint8_t hop_limit = 64;
  uint32_t flow_label = 0;
  std::optional<uint8_t> next;
  std::optional<uint16_t> payload_length;
};
struct Udp {
  uint16_t sport = 0xC001;
  uint16_t dport = 4791;
  std::optional<uint16_t> length;
};
struct Bth {
  uint8_t opcode = 0x04;  // RC SEND_ONLY
  uint32_t dest_qp = 0x11;
  uint32_t psn = 0;
  uint16_t pkey = 0xFFFF;
  bool becn = false;
  bool icrc = true;  // append a valid ICRC after the payload
};
struct Payload {
  std::vector<uint8_t> bytes;
  static Payload of_size(std::size_t n, uint8_t seed = 0);
};
struct MacCtl {
  uint16_t opcode = 0x0101;  // PFC; 0x0001 = 802.3x PAUSE
  uint16_t class_enable = 0;
  std::array<uint16_t, 8> quanta{};
};

using Layer = std::variant<Eth, Vlan, Ipv4, Ipv6, Udp, Bth, Payload, MacCtl>;

class PacketSpec {
 public:
  PacketSpec() = default;
  template <typename L>
  PacketSpec(L l) : layers_{Layer(std::move(l))} {}

  PacketSpec& operator/=(Layer l) {
    layers_.push_back(std::move(l));
    return *this;
  }
  // Cut the frame to n bytes (after all fix-ups), for truncation tests.
  PacketSpec& truncate(std::size_t n) {
    truncate_ = n;
    return *this;
  }
  PacketSpec& no_pad() {
    pad_ = false;
    return *this;
  }

  std::vector<uint8_t> bytes() const;
  rte_mbuf* mbuf(rte_mempool* pool, uint16_t in_port = 0) const;  // nullptr when the pool is empty

 private:
  std::vector<Layer> layers_;
  std::optional<std::size_t> truncate_;
  bool pad_ = true;
};

template <typename A, typename B>
PacketSpec operator/(A a, B b) {
  PacketSpec s(std::move(a));
  s /= Layer(std::move(b));
  return s;
}
template <typename B>
PacketSpec operator/(PacketSpec s, B b) {
  s /= Layer(std::move(b));
  return s;
}

// Helpers to read back what the switch wrote.
std::vector<uint8_t> mbuf_bytes(const rte_mbuf* m);
bool ipv4_checksum_ok(const std::vector<uint8_t>& frame, std::size_t l3_offset = 14);

}  // namespace rs::test
