// LLDP (IEEE 802.1AB) with the IEEE 802.1Qaz DCBX TLVs (ETS, PFC, application priority) for the
// control-plane thread: each port advertises the PFC/ETS/app-priority settings a RoCE NIC reads
// (a willing NIC adopts them), and what the NIC sends back is decoded to check it agrees.
// Pure functions on byte buffers; the parsed struct owns the only allocations.
#pragma once
#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rs::proto {

inline constexpr uint16_t kEtherTypeLldp = 0x88CC;
// 01:80:C2:00:00:0E (nearest bridge): the one scope a NIC's DCBX agent listens on.
inline constexpr rte_ether_addr kLldpNearestBridge{{0x01, 0x80, 0xC2, 0x00, 0x00, 0x0E}};

// Chassis ID and port ID subtypes (802.1AB 8.5.2.2, 8.5.3.2) the switch and NICs use.
inline constexpr uint8_t kChassisSubtypeMac = 4;
inline constexpr uint8_t kChassisSubtypeNetAddr = 5;  // IANA family byte, then the address
inline constexpr uint8_t kChassisSubtypeLocal = 7;
inline constexpr uint8_t kPortSubtypeMac = 3;
inline constexpr uint8_t kPortSubtypeNetAddr = 4;
inline constexpr uint8_t kPortSubtypeIfName = 5;
inline constexpr uint8_t kPortSubtypeLocal = 7;

// ETS transmission selection algorithm identifiers (802.1Q 8.6.8).
inline constexpr uint8_t kTsaStrict = 0;
inline constexpr uint8_t kTsaCbs = 1;
inline constexpr uint8_t kTsaEts = 2;
inline constexpr uint8_t kTsaVendor = 255;

// Application priority selectors (802.1Q annex D); 3 with protocol 4791 is RoCEv2.
inline constexpr uint8_t kAppSelEtherType = 1;
inline constexpr uint8_t kAppSelTcpSctp = 2;
inline constexpr uint8_t kAppSelUdpDccp = 3;
inline constexpr uint8_t kAppSelTcpSctpUdpDccp = 4;
inline constexpr uint8_t kAppSelDscp = 5;

// PFC Configuration TLV (OUI 00-80-C2 subtype 0x0B): a byte willing (bit 7) / MBC (bit 6) /
// reserved / PFC cap (bits 3-0, 0..15), then the enable bitmap (bit p = priority p).
struct DcbxPfc {
  bool willing = false;
  bool mbc = false;  // MACsec bypass capability
  uint8_t cap = 8;   // how many priorities may have PFC enabled at once
  uint8_t enable = 0;
  bool operator==(const DcbxPfc&) const = default;
};

// ETS Configuration (subtype 0x09) and ETS Recommendation (0x0A). Configuration: a byte willing
// (bit 7) / CBS (bit 6) / reserved / max TCs (bits 2-0, 0 on the wire means 8); Recommendation:
// a reserved byte instead, so willing, cbs and max_tcs are not carried (build writes 0, parse
// leaves the defaults). Then both: 4 bytes of priority->TC nibbles (priority 0 in the high nibble
// of the first byte; values 0..15 kept as sent), 8 TC bandwidth percentages, 8 TSAs (kTsa*).
struct DcbxEts {
  bool willing = false;
  bool cbs = false;     // credit-based shaper supported
  uint8_t max_tcs = 8;  // 1..8
  std::array<uint8_t, 8> prio_tc{};
  std::array<uint8_t, 8> bw_pct{};
  std::array<uint8_t, 8> tsa{};
  bool operator==(const DcbxEts&) const = default;
};

// One entry of the Application Priority TLV (subtype 0x0C): priority in bits 7-5 of its first
// byte, selector (kAppSel*) in bits 2-0, then the 16-bit protocol (port, EtherType or DSCP).
struct DcbxApp {
  uint8_t priority = 0;  // 0..7
  uint8_t selector = 0;  // 0..7
  uint16_t protocol = 0;
  bool operator==(const DcbxApp&) const = default;
};

struct LldpInfo {
  // IDs are the raw bytes after the subtype: for the MAC subtypes the 6 address bytes (mac_id()
  // makes them, mac_text() prints them), for the name subtypes the text. 1..255 bytes.
  uint8_t chassis_subtype = kChassisSubtypeMac;
  std::string chassis_id;
  uint8_t port_subtype = kPortSubtypeIfName;
  std::string port_id;
  uint16_t ttl = 120;  // seconds; 0 is a shutdown LLDPDU (the peer forgets us at once)
  std::string port_description, system_name, system_description;  // empty = TLV absent; <= 255 bytes
  // Management Address TLV: empty = none; 4 bytes IPv4 or 16 bytes IPv6 (address subtype 1/2).
  // Build gives interface numbering ifIndex with number 0 and no OID; parse keeps the first
  // IPv4/IPv6 address and skips addresses of other families.
  std::vector<uint8_t> mgmt_addr;
  std::optional<DcbxPfc> pfc;
  std::optional<DcbxEts> ets_cfg, ets_rec;
  std::vector<DcbxApp> app;  // absent TLV and TLV with no entries both parse to empty
  bool shutdown() const { return ttl == 0; }
  bool operator==(const LldpInfo&) const = default;
};

// Why an LLDPDU was rejected; Ok means `out` is filled in.
//   Short: no room for the EtherType before l3_offset or for a TLV header after it.
//   NotLldp: the EtherType before l3_offset is not 0x88CC.
//   BadTlv: a TLV runs past the frame, has an impossible length for its type (chassis/port ID
//     2..256, TTL 2, strings <= 255, capabilities 4, management address 9..167 and consistent
//     with its inner lengths, End 0, org-specific >= 4, PFC 6, ETS 25, App 5 + 3k), or repeats
//     the chassis ID, port ID or TTL.
//   MissingMandatory: chassis ID, port ID and TTL are not the first three TLVs, in that order.
//   NoEnd: the frame ends after the mandatory TLVs without an End TLV.
enum class LldpError : uint8_t { Ok, Short, NotLldp, BadTlv, MissingMandatory, NoEnd };
const char* lldp_error_name(LldpError e);  // "ok", "short", "not_lldp", "bad_tlv", ...

// `frame` starts at the Ethernet header; the LLDPDU starts at `l3_offset` (14, or 18 behind an
// 802.1Q tag) and the EtherType is the two bytes before it. The destination MAC is not checked
// (the other LLDP group addresses are the caller's choice to accept). Unknown TLV types, unknown
// org-specific TLVs and the optional TLVs not in LldpInfo are skipped (those of a known layout
// still length-checked); of a repeated optional TLV (a DCBX TLV, a string) the first counts, as
// lldpad does with the DCBX ones.
// Bytes after the End TLV (padding, FCS) are ignored. Never reads past `len`; `out` is only
// written on Ok.
LldpError parse_lldp(const uint8_t* frame, uint32_t len, uint16_t l3_offset, LldpInfo& out);

// The largest LLDPDU: it must fit one untagged frame's payload.
inline constexpr uint32_t kLldpMaxPdu = 1500;

// Writes an untagged frame from `src` to 01:80:C2:00:00:0E, EtherType 0x88CC, with the TLVs in
// this order: chassis ID, port ID, TTL, port description, system name, system description,
// management address (each optional one only if set), then the DCBX TLVs present (ETS
// configuration, ETS recommendation, PFC configuration, application priority), End; padded to
// 60 bytes. Returns its length, or 0 (nothing written) when `cap` is short or `info` cannot be
// encoded: an ID empty or over 255 bytes, a MAC-subtype ID not 6 bytes, a string over 255 bytes,
// a management address not 4 or 16 bytes, ETS max_tcs not 1..8 or a TC over 15, PFC cap over 15,
// an app priority or selector over 7, over 168 app entries (one TLV), or an LLDPDU over 1500 bytes.
// A shutdown LLDPDU (ttl 0) carries whatever `info` holds: clear the optional parts for a bare one.
uint32_t build_lldp(uint8_t* buf, uint32_t cap, const rte_ether_addr& src, const LldpInfo& info);

// --- Formatting, for logs and the control API ---------------------------------------------------

// The 6 raw ID bytes of a MAC-subtype chassis or port ID.
std::string mac_id(const rte_ether_addr& mac);
// "aa:bb:cc:dd:ee:ff" for 6 raw bytes; "" for any other length.
std::string mac_text(const std::string& raw6);
// An ID as text: colon hex for the MAC subtype with 6 bytes, a dotted quad or IPv6 text for the
// network-address subtype with family 1/2 and 4/16 bytes, otherwise the bytes with anything
// unprintable (and the backslash) escaped as \xNN.
std::string chassis_id_text(const LldpInfo& info);
std::string port_id_text(const LldpInfo& info);

}  // namespace rs::proto
