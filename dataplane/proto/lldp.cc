// LLDP and DCBX wire format (IEEE 802.1AB clause 8, IEEE 802.1Q annex D): the one place that
// knows their byte layout. Every length comes from the frame, so each is checked against the
// bytes left before it is used: parse_lldp is a fuzz target.
#include "dataplane/proto/lldp.h"

#include <arpa/inet.h>

#include <cstring>

#include "dataplane/proto/arp.h"  // start_frame, load_be16, store_be16
#include "dataplane/proto/mac_addr.h"

namespace rs::proto {
namespace {

constexpr uint32_t kTlvHeaderLen = 2;  // 7-bit type, 9-bit length

// TLV types (802.1AB clause 8).
constexpr uint8_t kTlvEnd = 0;
constexpr uint8_t kTlvChassisId = 1;
constexpr uint8_t kTlvPortId = 2;
constexpr uint8_t kTlvTtl = 3;
constexpr uint8_t kTlvPortDescription = 4;
constexpr uint8_t kTlvSystemName = 5;
constexpr uint8_t kTlvSystemDescription = 6;
constexpr uint8_t kTlvSystemCapabilities = 7;
constexpr uint8_t kTlvManagementAddress = 8;
constexpr uint8_t kTlvOrgSpecific = 127;

constexpr uint32_t kMaxIdLen = 255;      // chassis/port ID after the subtype byte
constexpr uint32_t kMaxStringLen = 255;  // port description, system name/description

// Management address TLV (802.1AB 8.5.9): string length (= 1 + address bytes, 2..32), address
// subtype, address, interface numbering subtype, 4-byte interface number, OID length (0..128),
// OID. So the TLV is the address string length + 7 + the OID length bytes long.
constexpr uint32_t kMgmtFixedLen = 7;
constexpr uint8_t kMgmtAddrStrMin = 2;
constexpr uint8_t kMgmtAddrStrMax = 32;
constexpr uint8_t kMgmtOidMax = 128;
constexpr uint8_t kIanaFamilyIpv4 = 1;
constexpr uint8_t kIanaFamilyIpv6 = 2;
constexpr uint8_t kIfNumberingIfIndex = 2;

// IEEE 802.1 organisationally specific TLVs: OUI 00-80-C2 and a subtype byte, then the body.
constexpr uint8_t kOui8021[3] = {0x00, 0x80, 0xC2};
constexpr uint32_t kOrgHeaderLen = 4;
constexpr uint8_t kSubEtsCfg = 0x09;
constexpr uint8_t kSubEtsRec = 0x0A;
constexpr uint8_t kSubPfcCfg = 0x0B;
constexpr uint8_t kSubApp = 0x0C;
constexpr uint32_t kEtsTlvLen = kOrgHeaderLen + 1 + 4 + 8 + 8;  // 25
constexpr uint32_t kPfcTlvLen = kOrgHeaderLen + 2;              // 6
constexpr uint32_t kAppTlvBaseLen = kOrgHeaderLen + 1;          // 5, then 3 bytes an entry
constexpr uint32_t kAppEntryLen = 3;
constexpr uint32_t kMaxTlvLen = 511;  // what 9 bits hold
constexpr uint32_t kMaxAppEntries = (kMaxTlvLen - kAppTlvBaseLen) / kAppEntryLen;  // 168

constexpr uint8_t kBitWilling = 0x80;
constexpr uint8_t kBitCbsOrMbc = 0x40;

bool is_mac_subtype(uint8_t subtype, bool port) { return subtype == (port ? kPortSubtypeMac : kChassisSubtypeMac); }

// The three tables shared by ETS configuration and recommendation, from/to `p` (24 bytes).
void get_ets_tables(const uint8_t* p, DcbxEts& e) {
  for (int i = 0; i < 4; ++i) {
    e.prio_tc[2 * i] = p[i] >> 4;
    e.prio_tc[2 * i + 1] = p[i] & 0x0f;
  }
  std::memcpy(e.bw_pct.data(), p + 4, 8);
  std::memcpy(e.tsa.data(), p + 12, 8);
}
void put_ets_tables(uint8_t* p, const DcbxEts& e) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(e.prio_tc[2 * i] << 4 | e.prio_tc[2 * i + 1]);
  std::memcpy(p + 4, e.bw_pct.data(), 8);
  std::memcpy(p + 12, e.tsa.data(), 8);
}

// One IEEE 802.1 org-specific TLV body (after OUI and subtype is `v + 4`), `len` its TLV length.
// DCBX TLVs have fixed layouts, so a wrong length is a malformed TLV rather than an extension.
// Of repeated DCBX TLVs the first counts, the later ones are only length-checked.
bool parse_ieee8021(const uint8_t* v, uint32_t len, LldpInfo& info, bool& app_seen) {
  const uint8_t* b = v + kOrgHeaderLen;
  switch (v[3]) {
    case kSubEtsCfg:
    case kSubEtsRec: {
      if (len != kEtsTlvLen) return false;
      std::optional<DcbxEts>& slot = v[3] == kSubEtsCfg ? info.ets_cfg : info.ets_rec;
      if (slot) return true;
      DcbxEts e;
      if (v[3] == kSubEtsCfg) {
        e.willing = (b[0] & kBitWilling) != 0;
        e.cbs = (b[0] & kBitCbsOrMbc) != 0;
        e.max_tcs = (b[0] & 0x07) == 0 ? 8 : static_cast<uint8_t>(b[0] & 0x07);
      }
      get_ets_tables(b + 1, e);
      slot = e;
      return true;
    }
    case kSubPfcCfg: {
      if (len != kPfcTlvLen) return false;
      if (info.pfc) return true;
      DcbxPfc p;
      p.willing = (b[0] & kBitWilling) != 0;
      p.mbc = (b[0] & kBitCbsOrMbc) != 0;
      p.cap = b[0] & 0x0f;
      p.enable = b[1];
      info.pfc = p;
      return true;
    }
    case kSubApp: {
      if (len < kAppTlvBaseLen || (len - kAppTlvBaseLen) % kAppEntryLen != 0) return false;
      if (app_seen) return true;
      app_seen = true;
      // b[0] is reserved (the willing bit of pre-standard drafts): ignored.
      for (uint32_t at = 1; at < len - kOrgHeaderLen; at += kAppEntryLen)
        info.app.push_back(DcbxApp{static_cast<uint8_t>(b[at] >> 5), static_cast<uint8_t>(b[at] & 0x07),
                                   load_be16(b + at + 1)});
      return true;
    }
    default: return true;  // VLAN name, link aggregation, congestion notification...: not ours
  }
}

// The management address TLV: lengths checked against each other and the TLV; the first IPv4 or
// IPv6 address kept.
bool parse_mgmt(const uint8_t* v, uint32_t len, LldpInfo& info) {
  if (len < kMgmtFixedLen + kMgmtAddrStrMin) return false;
  const uint8_t str_len = v[0];
  if (str_len < kMgmtAddrStrMin || str_len > kMgmtAddrStrMax) return false;
  if (len < kMgmtFixedLen + str_len) return false;  // so the OID length byte is inside
  const uint8_t oid_len = v[1 + str_len + 5];
  if (oid_len > kMgmtOidMax || len != kMgmtFixedLen + str_len + oid_len) return false;
  const uint8_t family = v[1];
  const uint32_t addr_len = str_len - 1u;
  if (info.mgmt_addr.empty() &&
      ((family == kIanaFamilyIpv4 && addr_len == 4) || (family == kIanaFamilyIpv6 && addr_len == 16)))
    info.mgmt_addr.assign(v + 2, v + 2 + addr_len);
  return true;
}

// Sequential writer for build_lldp, which has already checked that everything fits.
struct Writer {
  uint8_t* p;
  void header(uint8_t type, uint32_t len) {
    store_be16(p, static_cast<uint16_t>(type << 9 | len));
    p += kTlvHeaderLen;
  }
  void u8(uint8_t v) { *p++ = v; }
  void be16(uint16_t v) {
    store_be16(p, v);
    p += 2;
  }
  void bytes(const void* src, std::size_t n) {
    if (n != 0) std::memcpy(p, src, n);
    p += n;
  }
  void org(uint8_t subtype, uint32_t len) {
    header(kTlvOrgSpecific, len);
    bytes(kOui8021, 3);
    u8(subtype);
  }
};

bool ets_encodable(const DcbxEts& e) {
  if (e.max_tcs < 1 || e.max_tcs > 8) return false;
  for (uint8_t tc : e.prio_tc)
    if (tc > 15) return false;
  return true;
}

// Text of an ID with unprintable bytes escaped, so that a peer's bytes never reach a log raw.
std::string escaped(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0x0f];
    }
  }
  return out;
}

std::string id_text(uint8_t subtype, const std::string& id, bool port) {
  if (is_mac_subtype(subtype, port) && id.size() == RTE_ETHER_ADDR_LEN) return mac_text(id);
  if (subtype == (port ? kPortSubtypeNetAddr : kChassisSubtypeNetAddr) && !id.empty()) {
    const auto family = static_cast<uint8_t>(id[0]);
    char text[INET6_ADDRSTRLEN];
    if ((family == kIanaFamilyIpv4 && id.size() == 5 && inet_ntop(AF_INET, id.data() + 1, text, sizeof text)) ||
        (family == kIanaFamilyIpv6 && id.size() == 17 && inet_ntop(AF_INET6, id.data() + 1, text, sizeof text)))
      return text;
  }
  return escaped(id);
}

}  // namespace

const char* lldp_error_name(LldpError e) {
  switch (e) {
    case LldpError::Ok: return "ok";
    case LldpError::Short: return "short";
    case LldpError::NotLldp: return "not_lldp";
    case LldpError::BadTlv: return "bad_tlv";
    case LldpError::MissingMandatory: return "missing_mandatory";
    case LldpError::NoEnd: return "no_end";
  }
  return "unknown";
}

LldpError parse_lldp(const uint8_t* frame, uint32_t len, uint16_t l3_offset, LldpInfo& out) {
  // Subtraction only after the offset is known to lie inside the frame: no wrap-around.
  if (frame == nullptr || l3_offset < 2 || l3_offset > len || len - l3_offset < kTlvHeaderLen)
    return LldpError::Short;
  if (load_be16(frame + l3_offset - 2) != kEtherTypeLldp) return LldpError::NotLldp;

  LldpInfo info;  // filled here, moved to `out` only when the whole LLDPDU is good
  bool app_seen = false;
  uint32_t seen = 0;  // bit t: a TLV of type t < 32 came before (a repeated string keeps the first)
  const uint8_t* p = frame + l3_offset;
  uint32_t left = len - l3_offset;
  for (uint32_t index = 0;; ++index) {
    if (left == 0) return index < 3 ? LldpError::MissingMandatory : LldpError::NoEnd;
    if (left < kTlvHeaderLen) return LldpError::BadTlv;
    const uint16_t hdr = load_be16(p);
    const auto type = static_cast<uint8_t>(hdr >> 9);
    const uint32_t tlv_len = hdr & 0x1ffu;
    // 802.1AB: an LLDPDU starts with chassis ID, port ID and TTL, in that order.
    if (index < 3 && type != index + 1) return LldpError::MissingMandatory;
    if (tlv_len > left - kTlvHeaderLen) return LldpError::BadTlv;
    const uint8_t* v = p + kTlvHeaderLen;
    p += kTlvHeaderLen + tlv_len;
    left -= kTlvHeaderLen + tlv_len;

    switch (type) {
      case kTlvEnd:
        if (tlv_len != 0) return LldpError::BadTlv;
        out = std::move(info);
        return LldpError::Ok;
      case kTlvChassisId:
      case kTlvPortId: {
        // Only the first two TLVs may be these (the order check above put them there).
        if (index >= 2 || tlv_len < 2 || tlv_len > 1 + kMaxIdLen) return LldpError::BadTlv;
        std::string id(reinterpret_cast<const char*>(v + 1), tlv_len - 1);
        if (type == kTlvChassisId) {
          info.chassis_subtype = v[0];
          info.chassis_id = std::move(id);
        } else {
          info.port_subtype = v[0];
          info.port_id = std::move(id);
        }
        break;
      }
      case kTlvTtl:
        if (index != 2 || tlv_len != 2) return LldpError::BadTlv;
        info.ttl = load_be16(v);
        break;
      case kTlvPortDescription:
      case kTlvSystemName:
      case kTlvSystemDescription: {
        if (tlv_len > kMaxStringLen) return LldpError::BadTlv;
        if (seen & (1u << type)) break;
        std::string& s = type == kTlvPortDescription ? info.port_description
                         : type == kTlvSystemName    ? info.system_name
                                                     : info.system_description;
        s.assign(reinterpret_cast<const char*>(v), tlv_len);
        break;
      }
      case kTlvSystemCapabilities:
        if (tlv_len != 4) return LldpError::BadTlv;
        break;
      case kTlvManagementAddress:
        if (!parse_mgmt(v, tlv_len, info)) return LldpError::BadTlv;
        break;
      case kTlvOrgSpecific:
        if (tlv_len < kOrgHeaderLen) return LldpError::BadTlv;
        if (std::memcmp(v, kOui8021, 3) == 0 && !parse_ieee8021(v, tlv_len, info, app_seen))
          return LldpError::BadTlv;
        break;
      default: break;  // reserved types 9..126: skipped, as 802.1AB asks of unrecognised TLVs
    }
    if (type < 32) seen |= 1u << type;
  }
}

uint32_t build_lldp(uint8_t* buf, uint32_t cap, const rte_ether_addr& src, const LldpInfo& info) {
  // Everything is checked and measured before the first byte is written.
  const auto id_ok = [](uint8_t subtype, const std::string& id, bool port) {
    if (id.empty() || id.size() > kMaxIdLen) return false;
    return !is_mac_subtype(subtype, port) || id.size() == RTE_ETHER_ADDR_LEN;
  };
  if (!id_ok(info.chassis_subtype, info.chassis_id, false) || !id_ok(info.port_subtype, info.port_id, true))
    return 0;
  const std::string* strings[3] = {&info.port_description, &info.system_name, &info.system_description};
  for (const std::string* s : strings)
    if (s->size() > kMaxStringLen) return 0;
  const std::size_t addr_len = info.mgmt_addr.size();
  if (addr_len != 0 && addr_len != 4 && addr_len != 16) return 0;
  if ((info.ets_cfg && !ets_encodable(*info.ets_cfg)) || (info.ets_rec && !ets_encodable(*info.ets_rec))) return 0;
  if (info.pfc && info.pfc->cap > 15) return 0;
  if (info.app.size() > kMaxAppEntries) return 0;
  for (const DcbxApp& a : info.app)
    if (a.priority > 7 || a.selector > 7) return 0;

  uint32_t pdu = 3 * kTlvHeaderLen + (1 + static_cast<uint32_t>(info.chassis_id.size())) +
                 (1 + static_cast<uint32_t>(info.port_id.size())) + 2;
  for (const std::string* s : strings)
    if (!s->empty()) pdu += kTlvHeaderLen + static_cast<uint32_t>(s->size());
  const uint32_t mgmt_len = kMgmtFixedLen + 1 + static_cast<uint32_t>(addr_len);  // no OID
  if (addr_len != 0) pdu += kTlvHeaderLen + mgmt_len;
  if (info.ets_cfg) pdu += kTlvHeaderLen + kEtsTlvLen;
  if (info.ets_rec) pdu += kTlvHeaderLen + kEtsTlvLen;
  if (info.pfc) pdu += kTlvHeaderLen + kPfcTlvLen;
  const uint32_t app_len = kAppTlvBaseLen + kAppEntryLen * static_cast<uint32_t>(info.app.size());
  if (!info.app.empty()) pdu += kTlvHeaderLen + app_len;
  pdu += kTlvHeaderLen;  // End
  if (pdu > kLldpMaxPdu) return 0;

  uint32_t frame_len = 0;
  uint8_t* l3 = start_frame(buf, cap, kLldpNearestBridge, src, kEtherTypeLldp, pdu, frame_len);
  if (l3 == nullptr) return 0;
  Writer w{l3};
  w.header(kTlvChassisId, 1 + static_cast<uint32_t>(info.chassis_id.size()));
  w.u8(info.chassis_subtype);
  w.bytes(info.chassis_id.data(), info.chassis_id.size());
  w.header(kTlvPortId, 1 + static_cast<uint32_t>(info.port_id.size()));
  w.u8(info.port_subtype);
  w.bytes(info.port_id.data(), info.port_id.size());
  w.header(kTlvTtl, 2);
  w.be16(info.ttl);
  const uint8_t string_types[3] = {kTlvPortDescription, kTlvSystemName, kTlvSystemDescription};
  for (int i = 0; i < 3; ++i) {
    if (strings[i]->empty()) continue;
    w.header(string_types[i], static_cast<uint32_t>(strings[i]->size()));
    w.bytes(strings[i]->data(), strings[i]->size());
  }
  if (addr_len != 0) {
    w.header(kTlvManagementAddress, mgmt_len);
    w.u8(static_cast<uint8_t>(1 + addr_len));
    w.u8(addr_len == 4 ? kIanaFamilyIpv4 : kIanaFamilyIpv6);
    w.bytes(info.mgmt_addr.data(), addr_len);
    w.u8(kIfNumberingIfIndex);
    w.be16(0);  // interface number 0: the switch's ports have no ifIndex of their own
    w.be16(0);
    w.u8(0);  // no OID
  }
  if (info.ets_cfg) {
    const DcbxEts& e = *info.ets_cfg;
    w.org(kSubEtsCfg, kEtsTlvLen);
    w.u8(static_cast<uint8_t>((e.willing ? kBitWilling : 0) | (e.cbs ? kBitCbsOrMbc : 0) | (e.max_tcs & 0x07)));
    put_ets_tables(w.p, e);
    w.p += 20;
  }
  if (info.ets_rec) {
    w.org(kSubEtsRec, kEtsTlvLen);
    w.u8(0);
    put_ets_tables(w.p, *info.ets_rec);
    w.p += 20;
  }
  if (info.pfc) {
    const DcbxPfc& f = *info.pfc;
    w.org(kSubPfcCfg, kPfcTlvLen);
    w.u8(static_cast<uint8_t>((f.willing ? kBitWilling : 0) | (f.mbc ? kBitCbsOrMbc : 0) | f.cap));
    w.u8(f.enable);
  }
  if (!info.app.empty()) {
    w.org(kSubApp, app_len);
    w.u8(0);  // reserved (a willing bit in pre-standard drafts)
    for (const DcbxApp& a : info.app) {
      w.u8(static_cast<uint8_t>(a.priority << 5 | a.selector));
      w.be16(a.protocol);
    }
  }
  w.header(kTlvEnd, 0);
  return frame_len;
}

std::string mac_id(const rte_ether_addr& mac) {
  return std::string(reinterpret_cast<const char*>(mac.addr_bytes), RTE_ETHER_ADDR_LEN);
}

std::string mac_text(const std::string& raw6) {
  if (raw6.size() != RTE_ETHER_ADDR_LEN) return {};
  return format_mac(reinterpret_cast<const uint8_t*>(raw6.data()));
}

std::string chassis_id_text(const LldpInfo& info) { return id_text(info.chassis_subtype, info.chassis_id, false); }
std::string port_id_text(const LldpInfo& info) { return id_text(info.port_subtype, info.port_id, true); }

}  // namespace rs::proto
