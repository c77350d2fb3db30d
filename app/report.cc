#include "app/report.h"

#include "app/collective_stats.h"
#include "app/stats_json.h"

#include <fmt/core.h>

namespace rs {
namespace {

uint64_t port_drops(const Switch& sw, std::size_t p) {
  uint64_t d = 0;
  for (std::size_t r = 1; r < kNumDropReasons; ++r) d += sw.drops(p, static_cast<DropReason>(r));
  return d;
}

std::string human_bytes(uint64_t b) {
  if (b >= 1 << 20) return fmt::format("{:.1f}MB", b / 1048576.0);
  if (b >= 1 << 10) return fmt::format("{:.0f}KB", b / 1024.0);
  return fmt::format("{}B", b);
}

uint64_t ce_marked(const Switch& sw, std::size_t p) {
  uint64_t n = 0;
  for (int q = 0; q < 8; ++q) n += sw.egress(p).queue(q).ecn_marked.get();
  return n;
}

uint64_t pfc_sent(const Switch& sw, std::size_t p) { return sw.egress(p).pfc_gen().counters().frames.get(); }

uint64_t pfc_received(const Switch& sw, std::size_t p) {
  const PfcRxCounters& rx = sw.egress(p).pfc_rx();
  uint64_t n = rx.pause.get();
  for (int pr = 0; pr < 8; ++pr) n += rx.xoff[pr].get() + rx.xon[pr].get();
  return n;
}

template <typename F>
uint64_t sum_ports(const Switch& sw, F f) {
  uint64_t n = 0;
  for (std::size_t p = 0; p < sw.num_ports(); ++p) n += f(sw, p);
  return n;
}

}  // namespace

Reporter::Reporter(const Switch& sw)
    : sw_(sw), last_rx_bytes_(sw.num_ports()), last_tx_bytes_(sw.num_ports()), last_drops_(sw.num_ports()) {}

std::string Reporter::progress_line(double t) {
  const double dt = t - last_t_ > 1e-9 ? t - last_t_ : 1.0;
  std::string line = fmt::format("[{:6.1f}s]", t);
  for (std::size_t p = 0; p < sw_.num_ports(); ++p) {
    const uint64_t rx = sw_.rx_bytes(p), tx = sw_.tx_bytes(p), d = port_drops(sw_, p);
    uint64_t depth = 0;
    for (int q = 0; q < 8; ++q) depth += sw_.egress(p).queue(q).depth_bytes.get();
    line += fmt::format("{}{} rx {:.2f} tx {:.2f} Gb/s q {} drop +{}", p ? " | " : " ", sw_.config().ports[p].name,
                        (rx - last_rx_bytes_[p]) * 8 / dt / 1e9, (tx - last_tx_bytes_[p]) * 8 / dt / 1e9,
                        human_bytes(depth), d - last_drops_[p]);
    last_rx_bytes_[p] = rx;
    last_tx_bytes_[p] = tx;
    last_drops_[p] = d;
  }
  if (sw_.buffer().any_lossless() || sum_ports(sw_, ce_marked)) {
    const uint64_t ce = sum_ports(sw_, ce_marked), tx = sum_ports(sw_, pfc_sent), rx = sum_ports(sw_, pfc_received);
    line += fmt::format(" || CE +{} PFC out +{} in +{} lossless drops {}", ce - last_ce_, tx - last_pfc_tx_,
                        rx - last_pfc_rx_, sw_.lossless_drops());
    last_ce_ = ce;
    last_pfc_tx_ = tx;
    last_pfc_rx_ = rx;
  }
  last_t_ = t;
  return line;
}

std::string Reporter::summary(double el) const {
  if (el <= 0) el = 1e-9;
  std::string s = fmt::format("\nroceswitch summary after {:.1f} s\n", el);
  s += fmt::format("{:<10} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12} {:>10} {:>8} {:>8}\n", "port", "rx_pkts",
                   "tx_pkts", "rx_Gb/s", "tx_Gb/s", "peak_q", "drops", "ce_marked", "pfc_out", "pfc_in");
  for (std::size_t p = 0; p < sw_.num_ports(); ++p) {
    uint64_t peak = 0;
    for (int q = 0; q < 8; ++q) peak = std::max<uint64_t>(peak, sw_.egress(p).queue(q).peak_bytes.get());
    s += fmt::format("{:<10} {:>12} {:>12} {:>10.3f} {:>10.3f} {:>10} {:>12} {:>10} {:>8} {:>8}\n",
                     sw_.config().ports[p].name, sw_.rx_packets(p), sw_.tx_packets(p), sw_.rx_bytes(p) * 8 / el / 1e9,
                     sw_.tx_bytes(p) * 8 / el / 1e9, human_bytes(peak), port_drops(sw_, p), ce_marked(sw_, p),
                     pfc_sent(sw_, p), pfc_received(sw_, p));
  }
  s += "drops by reason:";
  bool any = false;
  for (std::size_t r = 1; r < kNumDropReasons; ++r)
    if (uint64_t v = sw_.drops(static_cast<DropReason>(r))) {
      s += fmt::format(" {}={}", kDropReasonNames[r], v);
      any = true;
    }
  s += any ? "\n" : " none\n";
  if (sw_.buffer().any_lossless()) {
    std::string prios;
    for (int pr = 0; pr < 8; ++pr)
      if (sw_.buffer().config().pfc_enable & (1u << pr)) prios += fmt::format("{}{}", prios.empty() ? "" : ",", pr);
    const uint64_t ld = sw_.lossless_drops();
    s += fmt::format("lossless class (PFC priorities {}): {} drops{}\n", prios, ld, ld ? "" : " -- lossless held");
  }
  if (!sw_.config().collectives.empty()) s += collectives_table(stats_json(sw_)["collectives"]);
  const SwitchTotals t = sw_.totals();
  s += fmt::format("packets: received={} sent={} queued={} in_flight={} dropped={} -> {}\n", t.received, t.sent,
                   t.queued, t.in_flight, t.dropped, t.balanced() ? "balanced" : "UNBALANCED");
  return s;
}

std::string Reporter::buffer_plan() const {
  const SharedBuffer& sb = sw_.buffer();
  if (!sb.any_lossless()) return {};
  std::string s = fmt::format("buffer: pool {} in {}-byte cells, {} reserved as lossless headroom, {} shared\n",
                              human_bytes(sb.config().pool.size), sb.config().pool.cell_size,
                              human_bytes(sb.headroom_reserved()), human_bytes(sb.shared_size()));
  for (std::size_t p = 0; p < sw_.num_ports(); ++p)
    for (uint8_t g = 0; g < 8; ++g) {
      const PgSettings& x = sb.pg(static_cast<uint16_t>(p), g);
      if (!x.lossless) continue;
      s += fmt::format("  {} pg{}: xoff {} xon {} headroom {} (computed minimum {} at {} Gb/s, {} m)\n",
                       sw_.config().ports[p].name, g, x.xoff, x.xon, x.headroom, x.headroom_min,
                       sw_.config().ports[p].egress.speed_gbps, sw_.config().ports[p].lossless.cable_length_m);
    }
  return s;
}

}  // namespace rs
