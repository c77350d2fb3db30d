#include "control/runtime/captures.h"

#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace rs {

namespace {

// pcapng (draft-ietf-opsawg-pcapng): every block is type, total length, body, total length;
// bodies and options are padded to 4 bytes.
void put32(std::vector<uint8_t>& b, uint32_t v) { b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 4); }
void put16(std::vector<uint8_t>& b, uint16_t v) { b.insert(b.end(), reinterpret_cast<uint8_t*>(&v), reinterpret_cast<uint8_t*>(&v) + 2); }
void pad4(std::vector<uint8_t>& b) {
  while (b.size() % 4) b.push_back(0);
}
void option(std::vector<uint8_t>& b, uint16_t code, const void* data, uint16_t len) {
  put16(b, code);
  put16(b, len);
  b.insert(b.end(), static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + len);
  pad4(b);
}
void end_options(std::vector<uint8_t>& b) { put32(b, 0); }  // opt_endofopt
bool block(std::FILE* f, uint32_t type, const std::vector<uint8_t>& body) {
  const uint32_t total = static_cast<uint32_t>(12 + body.size());
  return std::fwrite(&type, 4, 1, f) == 1 && std::fwrite(&total, 4, 1, f) == 1 &&
         (body.empty() || std::fwrite(body.data(), body.size(), 1, f) == 1) && std::fwrite(&total, 4, 1, f) == 1;
}

constexpr uint32_t kSectionHeader = 0x0A0D0D0A, kInterfaceDescription = 1, kEnhancedPacket = 6;

}  // namespace

Captures::Captures(Switch& sw, std::function<uint64_t()> now_ns) : sw_(sw), now_ns_(std::move(now_ns)) {}

Captures::~Captures() {
  for (auto& [port, s] : sessions_)
    if (!s.done) finish(s);
}

bool Captures::active() const {
  for (auto& [port, s] : sessions_)
    if (!s.done) return true;
  return false;
}

void Captures::start(const CaptureSpec& spec) {
  if (spec.port >= sw_.num_ports()) throw std::runtime_error(fmt::format("no port {}", spec.port));
  if (auto it = sessions_.find(spec.port); it != sessions_.end() && !it->second.done)
    throw std::runtime_error(fmt::format("port {} is being captured already (to {})", sw_.port(spec.port).name, it->second.spec.file));
  Session s;
  s.spec = spec;
  s.f = std::fopen(spec.file.c_str(), "wb");
  if (!s.f) throw std::runtime_error(fmt::format("cannot write {}: {}", spec.file, std::strerror(errno)));
  std::vector<uint8_t> b;
  put32(b, 0x1A2B3C4D);  // byte-order magic
  put16(b, 1);
  put16(b, 0);
  put32(b, 0xFFFFFFFF);  // section length unknown
  put32(b, 0xFFFFFFFF);
  const std::string app = "roceswitch";
  option(b, 4, app.data(), static_cast<uint16_t>(app.size()));  // shb_userappl
  end_options(b);
  bool ok = block(s.f, kSectionHeader, b);
  b.clear();
  put16(b, 1);  // LINKTYPE_ETHERNET
  put16(b, 0);
  put32(b, spec.snaplen);
  const std::string& name = sw_.port(spec.port).name;
  option(b, 2, name.data(), static_cast<uint16_t>(name.size()));  // if_name
  const uint8_t tsresol = 9;                                       // nanoseconds
  option(b, 9, &tsresol, 1);
  end_options(b);
  ok &= block(s.f, kInterfaceDescription, b);
  if (!ok) {
    std::fclose(s.f);
    throw std::runtime_error(fmt::format("cannot write {}: {}", spec.file, std::strerror(errno)));
  }
  s.start_ns = now_ns_();
  s.end_ns = spec.duration_s > 0 ? s.start_ns + static_cast<uint64_t>(spec.duration_s * 1e9 + 0.5) : 0;
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  s.to_epoch_ns = static_cast<int64_t>(wall) - static_cast<int64_t>(s.start_ns);
  sessions_[spec.port] = std::move(s);
  sw_.tap().set(spec.port, spec.dirs, spec.snaplen);
}

void Captures::write_packet(Session& s, const CaptureHeader& h, const uint8_t* data, uint32_t len) {
  std::vector<uint8_t> b;
  b.reserve(len + 48);
  put32(b, 0);  // interface 0: the file's one port
  const uint64_t ts = static_cast<uint64_t>(static_cast<int64_t>(h.ts_ns) + s.to_epoch_ns);
  put32(b, static_cast<uint32_t>(ts >> 32));
  put32(b, static_cast<uint32_t>(ts));
  put32(b, len);
  put32(b, h.orig_len);
  b.insert(b.end(), data, data + len);
  pad4(b);
  const uint32_t flags = h.dir == CaptureTap::kRx ? 1u : 2u;  // epb_flags: inbound, outbound
  option(b, 2, &flags, 4);
  end_options(b);
  if (!block(s.f, kEnhancedPacket, b) && s.error.empty()) s.error = std::strerror(errno);
  ++s.packets;
  s.bytes += h.orig_len;
}

void Captures::finish(Session& s) {
  sw_.tap().set(s.spec.port, 0, 0);
  if (s.f && std::fclose(s.f) != 0 && s.error.empty()) s.error = std::strerror(errno);
  s.f = nullptr;
  s.done = true;
}

void Captures::poll() {
  rte_mbuf* pkts[64];
  uint8_t flat[16384];
  for (uint16_t w = 0; w < sw_.tap().workers(); ++w) {
    for (int rounds = 0; rounds < 64; ++rounds) {
      const unsigned n = sw_.tap().drain(w, pkts, 64);
      for (unsigned i = 0; i < n; ++i) {
        rte_mbuf* m = pkts[i];
        CaptureHeader h;
        std::memcpy(&h, rte_pktmbuf_mtod(m, const void*), sizeof h);
        auto it = sessions_.find(h.port);
        if (it != sessions_.end() && !it->second.done && (it->second.spec.count == 0 || it->second.packets < it->second.spec.count)) {
          const uint32_t len = std::min<uint32_t>(m->pkt_len - sizeof h, sizeof flat);
          const auto* data = static_cast<const uint8_t*>(rte_pktmbuf_read(m, sizeof h, len, flat));
          write_packet(it->second, h, data, len);
        }
        rte_pktmbuf_free(m);
      }
      if (n < 64) break;
    }
  }
  const uint64_t now = now_ns_();
  for (auto& [port, s] : sessions_) {
    if (s.done) continue;
    if ((s.spec.count && s.packets >= s.spec.count) || (s.end_ns && now >= s.end_ns) || !s.error.empty()) finish(s);
  }
}

bool Captures::stop(uint16_t port) {
  auto it = sessions_.find(port);
  if (it == sessions_.end() || it->second.done) return false;
  poll();  // what the workers copied so far goes in the file
  if (!it->second.done) finish(it->second);
  return true;
}

nlohmann::json Captures::list() const {
  nlohmann::json out = nlohmann::json::array();
  for (auto& [port, s] : sessions_) {
    const char* dir = s.spec.dirs == (CaptureTap::kRx | CaptureTap::kTx) ? "both" : s.spec.dirs == CaptureTap::kRx ? "rx" : "tx";
    nlohmann::json j{{"port", sw_.port(port).name}, {"direction", dir},  {"file", s.spec.file},
                     {"packets", s.packets},        {"bytes", s.bytes},   {"done", s.done},
                     {"count", s.spec.count},       {"duration_s", s.spec.duration_s}, {"lost", sw_.tap().lost()}};
    if (!s.error.empty()) j["error"] = s.error;
    out.push_back(j);
  }
  return out;
}

}  // namespace rs
