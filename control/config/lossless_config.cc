// SONiC's BUFFER_POOL / BUFFER_PROFILE / BUFFER_PG / BUFFER_QUEUE / WRED_PROFILE / PFC_WD /
// PORT_QOS_MAP settings, read from YAML and resolved per port (see lossless_config.h).
#include "control/config/lossless_config.h"

#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace rs {
namespace {

constexpr int64_t kMaxBytes = int64_t{1} << 40;  // any buffer size or threshold
constexpr double kMaxCableM = 40'000;             // 40 km: the longest optics (ER4)
constexpr int64_t kMaxWatchdogMs = 600'000;
constexpr uint64_t kNsPerMs = 1'000'000;

struct BufferProfile {
  std::string name;
  YAML::Node node;
  std::optional<uint64_t> xoff, xon, headroom;
  std::optional<int8_t> dynamic_th;
  std::optional<uint64_t> size;  // a queue profile's reserved bytes
};

uint64_t read_bytes(const ConfigReader& rd, const YAML::Node& n, const std::string& path, int64_t lo) {
  return static_cast<uint64_t>(rd.integer(n, path, lo, kMaxBytes));
}

// Metres as a number, or SONiC's CABLE_LENGTH string form "40m".
double read_cable_length(const ConfigReader& rd, const YAML::Node& n, const std::string& path) {
  std::string s = rd.str(n, path);
  if (!s.empty() && s.back() == 'm') s.pop_back();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || std::isnan(v)) rd.fail(n, path, "expected metres (a number, or SONiC's \"40m\")");
  if (v < 0 || v > kMaxCableM) rd.fail(n, path, fmt::format("out of range [0, {}] m, got {}", kMaxCableM, n.Scalar()));
  return v;
}

// A list of priorities, or SONiC's PORT_QOS_MAP string "3,4".
uint8_t read_pfc_enable(const ConfigReader& rd, const YAML::Node& n, const std::string& path) {
  uint8_t mask = 0;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) mask |= static_cast<uint8_t>(1u << rd.integer(n[i], fmt::format("{}[{}]", path, i), 0, 7));
    return mask;
  }
  const std::string s = rd.str(n, path);
  std::size_t pos = 0;
  while (!s.empty() && pos <= s.size()) {
    const std::size_t comma = std::min(s.find(',', pos), s.size());
    std::string tok = s.substr(pos, comma - pos);
    tok.erase(0, tok.find_first_not_of(' '));
    tok.erase(tok.find_last_not_of(' ') + 1);
    if (tok.size() != 1 || tok[0] < '0' || tok[0] > '7')
      rd.fail(n, path, fmt::format("'{}' is not a priority 0..7 (expected a list or SONiC's \"3,4\")", tok));
    mask |= static_cast<uint8_t>(1u << (tok[0] - '0'));
    pos = comma + 1;
  }
  return mask;
}

std::string names_of(const auto& m) {
  std::string out;
  for (auto& kv : m) out += (out.empty() ? "" : ", ") + kv.first;
  return out.empty() ? "none" : out;
}

std::map<std::string, BufferProfile> read_profiles(const ConfigReader& rd, const YAML::Node& ps) {
  std::map<std::string, BufferProfile> out;
  rd.map(ps, "buffer.profiles");
  for (auto kv : ps) {
    BufferProfile p;
    p.name = rd.str(kv.first, "buffer.profiles");
    p.node = kv.second;
    const std::string path = "buffer.profiles." + p.name;
    const YAML::Node v = kv.second;
    rd.keys(v, path, {"xoff", "xon", "headroom", "dynamic_th", "size"});
    if (auto x = v["xoff"]) p.xoff = read_bytes(rd, x, path + ".xoff", 1);
    if (auto x = v["xon"]) p.xon = read_bytes(rd, x, path + ".xon", 0);
    if (auto x = v["headroom"]) p.headroom = read_bytes(rd, x, path + ".headroom", 0);
    // SONiC's dynamic_th: the queue may hold alpha = 2^dynamic_th times the free buffer.
    if (auto x = v["dynamic_th"]) p.dynamic_th = static_cast<int8_t>(rd.integer(x, path + ".dynamic_th", -7, 3));
    // SONiC's size: bytes reserved for the queue out of the pool, always admitted.
    if (auto x = v["size"]) p.size = read_bytes(rd, x, path + ".size", 0);
    if (p.size && p.xoff) rd.fail(v["size"], path + ".size", "size is a queue profile's reservation; a lossless PG is sized by xoff, xon and headroom");
    if (p.xoff.has_value() != p.xon.has_value())
      rd.fail(v, p.xoff ? path + ".xon" : path + ".xoff", "missing: a lossless PG profile needs both xoff and xon");
    if (p.headroom && !p.xoff) rd.fail(v["headroom"], path + ".headroom", "headroom goes with xoff and xon");
    if (!p.xoff && !p.dynamic_th) rd.fail(v, path, "empty profile: give xoff and xon (a PG profile) or dynamic_th (a queue profile)");
    if (p.xoff && *p.xon >= *p.xoff)
      rd.fail(v["xon"], path + ".xon", fmt::format("xon {} must be below xoff {} (PAUSE at xoff, resume under xon)", *p.xon, *p.xoff));
    out.emplace(p.name, std::move(p));
  }
  return out;
}

std::map<std::string, WredProfile> read_wred_profiles(const ConfigReader& rd, const YAML::Node& ws) {
  std::map<std::string, WredProfile> out;
  rd.map(ws, "wred_profiles");
  for (auto kv : ws) {
    const std::string name = rd.str(kv.first, "wred_profiles");
    const std::string path = "wred_profiles." + name;
    const YAML::Node v = kv.second;
    rd.keys(v, path, {"wred_green_enable", "ecn", "green_min_threshold", "green_max_threshold", "green_drop_probability"});
    WredProfile w;
    w.enabled = true;
    if (auto x = v["wred_green_enable"]) w.wred_drop = rd.boolean(x, path + ".wred_green_enable");
    if (auto x = v["ecn"]) {
      // SONiC's modes name the colours that are marked; only green exists here.
      static const std::map<std::string, bool> kModes{
          {"ecn_none", false},         {"ecn_green", true},     {"ecn_yellow", false},     {"ecn_red", false},
          {"ecn_green_yellow", true}, {"ecn_green_red", true}, {"ecn_yellow_red", false}, {"ecn_all", true}};
      const std::string m = rd.str(x, path + ".ecn");
      auto it = kModes.find(m);
      if (it == kModes.end()) rd.fail(x, path + ".ecn", fmt::format("unknown ECN mode '{}' (known: {})", m, names_of(kModes)));
      w.ecn_mark = it->second;
    }
    for (const char* k : {"green_min_threshold", "green_max_threshold", "green_drop_probability"})
      if (!v[k]) rd.fail(v, path + "." + k, "missing");
    w.kmin = read_bytes(rd, v["green_min_threshold"], path + ".green_min_threshold", 0);
    w.kmax = read_bytes(rd, v["green_max_threshold"], path + ".green_max_threshold", 1);
    w.pmax_percent = static_cast<uint32_t>(rd.integer(v["green_drop_probability"], path + ".green_drop_probability", 0, 100));
    if (w.kmin >= w.kmax)
      rd.fail(v["green_min_threshold"], path + ".green_min_threshold",
              fmt::format("green_min_threshold {} must be below green_max_threshold {}", w.kmin, w.kmax));
    out.emplace(name, w);
  }
  return out;
}

PfcwdConfig read_pfcwd(const ConfigReader& rd, const YAML::Node& w) {
  rd.keys(w, "pfcwd", {"detection_time", "restoration_time", "poll_interval", "action"});
  PfcwdConfig c;
  c.enabled = true;
  auto ms = [&](const char* key, uint64_t& dst) {
    if (auto x = w[key]) dst = static_cast<uint64_t>(rd.integer(x, fmt::format("pfcwd.{}", key), 1, kMaxWatchdogMs)) * kNsPerMs;
  };
  ms("detection_time", c.detection_ns);
  ms("restoration_time", c.restoration_ns);
  ms("poll_interval", c.poll_ns);
  if (auto x = w["action"]) {
    const std::string a = rd.str(x, "pfcwd.action");
    if (a == "drop") c.action = PfcwdAction::Drop;
    else if (a == "forward") c.action = PfcwdAction::Forward;
    else if (a == "alert") c.action = PfcwdAction::Alert;
    else rd.fail(x, "pfcwd.action", fmt::format("unknown action '{}' (expected drop, forward or alert)", a));
  }
  // The watchdog only looks every poll interval, so a longer poll would stretch both times.
  const YAML::Node poll_node = w["poll_interval"] ? w["poll_interval"] : w;
  const char* poll_src = w["poll_interval"] ? "" : " (default)";
  if (c.poll_ns > c.detection_ns)
    rd.fail(poll_node, "pfcwd.poll_interval", fmt::format("{} ms{} is longer than detection_time {} ms", c.poll_ns / kNsPerMs, poll_src, c.detection_ns / kNsPerMs));
  if (c.poll_ns > c.restoration_ns)
    rd.fail(poll_node, "pfcwd.poll_interval", fmt::format("{} ms{} is longer than restoration_time {} ms", c.poll_ns / kNsPerMs, poll_src, c.restoration_ns / kNsPerMs));
  return c;
}

// `m` maps a queue or PG (0..7) to a name; `on_entry(index, name node, path)` resolves it.
template <typename F>
void read_name_map(const ConfigReader& rd, const YAML::Node& m, const std::string& path, F on_entry) {
  rd.map(m, path);
  for (auto kv : m) {
    const int idx = static_cast<int>(rd.integer(kv.first, path, 0, 7));
    on_entry(idx, kv.second, fmt::format("{}.{}", path, idx));
  }
}

}  // namespace

void read_lossless(const ConfigReader& rd, const YAML::Node& root, SwitchConfig& cfg) {
  MmuConfig& mmu = cfg.mmu;
  const YAML::Node qos = root["qos"];  // read_qos already checked its keys
  // Flags, not a default YAML::Node(): that one is a defined null. (And Node's operator= assigns
  // content rather than rebinding, so nodes are bound once, at construction.)
  const bool has_pfc = qos && qos["pfc_enable"];
  const YAML::Node where_pfc = has_pfc ? qos["pfc_enable"] : root;
  uint16_t pfc_quanta = 0xffff;
  if (qos) {
    if (has_pfc) mmu.pfc_enable = read_pfc_enable(rd, where_pfc, "qos.pfc_enable");
    if (auto m = qos["tc_to_pg"]) rd.index_map(m, "qos.tc_to_pg", 7, 7, mmu.tc_to_pg);
    if (auto m = qos["pfc_to_queue"]) rd.index_map(m, "qos.pfc_to_queue", 7, 7, mmu.pfc_to_queue);
    // 0 quanta would be an XON: every XOFF needs a pause time.
    if (auto x = qos["pfc_quanta"]) pfc_quanta = static_cast<uint16_t>(rd.integer(x, "qos.pfc_quanta", 1, 0xffff));
  }
  for (int p = 0; p < 8; ++p) {
    if (!(mmu.pfc_enable >> p & 1)) continue;
    bool reached = false;
    for (uint8_t pg : mmu.tc_to_pg) reached |= (pg == p);
    if (!reached) rd.fail(where_pfc, "qos.pfc_enable", fmt::format("priority {} is lossless but no TC maps to PG {} in qos.tc_to_pg", p, p));
  }

  // buffer: the pool, the defaults every port shares, and the profiles by name.
  const YAML::Node buf = root["buffer"];
  double default_cable = PortLosslessConfig{}.cable_length_m;
  std::map<std::string, BufferProfile> profiles;
  std::array<const BufferProfile*, 8> pg_profile{};
  const bool has_pg = buf && buf.IsMap() && buf["pg"];  // (not a map: refused by keys() below)
  std::array<int8_t, 8> dynamic_th = PortLosslessConfig{}.dynamic_th;
  std::array<uint64_t, 8> queue_size{};
  if (buf) {
    rd.keys(buf, "buffer", {"pool", "mtu", "cable_length_m", "profiles", "pg", "queue"});
    if (auto pool = buf["pool"]) {
      rd.keys(pool, "buffer.pool", {"size", "cell_size"});
      if (auto x = pool["size"]) mmu.pool.size = read_bytes(rd, x, "buffer.pool.size", 1);
      if (auto x = pool["cell_size"]) {
        const auto c = static_cast<uint32_t>(rd.integer(x, "buffer.pool.cell_size", 0, 1 << 16));
        if (c == 0 || (c & (c - 1)) != 0) rd.fail(x, "buffer.pool.cell_size", fmt::format("must be a power of two (bytes), got {}", c));
        mmu.pool.cell_size = c;
      }
      if (mmu.pool.size != 0 && mmu.pool.size < mmu.pool.cell_size)
        rd.fail(pool, "buffer.pool.size", fmt::format("{} bytes is less than one {}-byte cell", mmu.pool.size, mmu.pool.cell_size));
    }
    if (auto x = buf["mtu"]) mmu.pool.mtu = static_cast<uint32_t>(rd.integer(x, "buffer.mtu", 68, 16384));
    if (auto x = buf["cable_length_m"]) default_cable = read_cable_length(rd, x, "buffer.cable_length_m");
    if (auto x = buf["profiles"]) profiles = read_profiles(rd, x);
    auto profile = [&](const YAML::Node& ref, const std::string& path) -> const BufferProfile& {
      const std::string name = rd.str(ref, path);
      auto it = profiles.find(name);
      if (it == profiles.end()) rd.fail(ref, path, fmt::format("unknown buffer profile '{}' (defined: {})", name, names_of(profiles)));
      return it->second;
    };
    if (has_pg)
      read_name_map(rd, buf["pg"], "buffer.pg", [&](int pg, const YAML::Node& ref, const std::string& path) {
        const BufferProfile& p = profile(ref, path);
        if (!p.xoff) rd.fail(ref, path, fmt::format("profile '{}' has no xoff/xon: a PG needs a lossless profile", p.name));
        if (!(mmu.pfc_enable >> pg & 1))
          rd.fail(ref, path, fmt::format("PG {} has a lossless profile but priority {} is not in qos.pfc_enable", pg, pg));
        pg_profile[static_cast<std::size_t>(pg)] = &p;
      });
    if (auto m = buf["queue"])
      read_name_map(rd, m, "buffer.queue", [&](int q, const YAML::Node& ref, const std::string& path) {
        const BufferProfile& p = profile(ref, path);
        if (!p.dynamic_th) rd.fail(ref, path, fmt::format("profile '{}' has no dynamic_th: a queue needs one", p.name));
        dynamic_th[static_cast<std::size_t>(q)] = *p.dynamic_th;
        queue_size[static_cast<std::size_t>(q)] = p.size.value_or(0);
      });
  }
  if (has_pg)
    for (int p = 0; p < 8; ++p)
      if ((mmu.pfc_enable >> p & 1) && !pg_profile[static_cast<std::size_t>(p)])
        rd.fail(where_pfc, "qos.pfc_enable", fmt::format("priority {} is lossless but buffer.pg gives PG {} no profile", p, p));

  std::array<WredProfile, 8> wred{};
  std::map<std::string, WredProfile> wred_profiles;
  if (auto w = root["wred_profiles"]) wred_profiles = read_wred_profiles(rd, w);
  if (auto m = root["queue_wred"])
    read_name_map(rd, m, "queue_wred", [&](int q, const YAML::Node& ref, const std::string& path) {
      const std::string name = rd.str(ref, path);
      auto it = wred_profiles.find(name);
      if (it == wred_profiles.end()) rd.fail(ref, path, fmt::format("unknown WRED profile '{}' (defined: {})", name, names_of(wred_profiles)));
      wred[static_cast<std::size_t>(q)] = it->second;
    });

  if (auto w = root["pfcwd"]) mmu.pfcwd = read_pfcwd(rd, w);

  // Per port: cable length, then each lossless PG's thresholds and headroom.
  const YAML::Node ports = root["ports"];
  uint64_t reserved = 0, worst = 0;
  std::string worst_port;
  for (std::size_t i = 0; i < cfg.ports.size(); ++i) {
    PortSpec& port = cfg.ports[i];
    PortLosslessConfig& l = port.lossless;
    const std::string pp = fmt::format("ports[{}]", i);
    l.cable_length_m = ports[i]["cable_length_m"] ? read_cable_length(rd, ports[i]["cable_length_m"], pp + ".cable_length_m") : default_cable;
    l.pfc_quanta = pfc_quanta;
    l.dynamic_th = dynamic_th;
    l.reserved = queue_size;
    l.wred = wred;
    uint64_t port_reserved = 0;
    for (std::size_t pg = 0; pg < 8; ++pg) {
      if (!(mmu.pfc_enable >> pg & 1)) continue;
      PgSettings& s = l.pg[pg];
      s.lossless = true;
      s.headroom_min = headroom_min_bytes(port.egress.speed_gbps, l.cable_length_m, mmu.pool.mtu);
      if (const BufferProfile* p = pg_profile[pg]) {
        s.xoff = *p->xoff;
        s.xon = *p->xon;
        s.headroom = p->headroom.value_or(s.headroom_min);
        if (s.headroom < s.headroom_min)
          rd.fail(p->node["headroom"], fmt::format("buffer.profiles.{}.headroom", p->name),
                  fmt::format("{} bytes is below the computed minimum {} bytes for port '{}' PG {} ({} Gb/s, {} m cable, mtu {})",
                              s.headroom, s.headroom_min, port.name, pg, port.egress.speed_gbps, l.cable_length_m, mmu.pool.mtu));
      } else {
        s.xoff = uint64_t{kBuiltinXoffMtus} * mmu.pool.mtu;
        s.xon = s.xoff / 2;
        s.headroom = s.headroom_min;
      }
      port_reserved += s.xoff + s.headroom;
    }
    reserved += port_reserved;
    if (port_reserved > worst) worst = port_reserved, worst_port = port.name;
  }
  // Headroom that cannot fit in the buffer turns lossless into lossy the first time every port
  // is congested at once, which is exactly the case lossless is for. A pool of size 0 (not
  // configured) is sized by the Switch to hold every static limit plus the headroom.
  if (mmu.pool.size != 0 && reserved > mmu.pool.size) {
    const YAML::Node where = buf["pool"]["size"];
    rd.fail(where, "buffer.pool.size",
            fmt::format("lossless PGs reserve {} bytes (xoff + headroom over {} ports x {} PGs; port '{}' alone {}) but the pool "
                        "is {} bytes: shorten cables, lower xoff or speeds, or enlarge the pool",
                        reserved, cfg.ports.size(), __builtin_popcount(mmu.pfc_enable), worst_port, worst, mmu.pool.size));
  }
  uint64_t sizes = 0;
  for (uint64_t q : queue_size) sizes += q * cfg.ports.size();
  if (mmu.pool.size != 0 && sizes && reserved + sizes >= mmu.pool.size)
    rd.fail(buf["pool"]["size"], "buffer.pool.size",
            fmt::format("queue profiles reserve {} bytes (size over {} ports) and lossless PGs {} but the pool is {} bytes",
                        sizes, cfg.ports.size(), reserved, mmu.pool.size));
}

}  // namespace rs
