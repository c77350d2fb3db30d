#include "dataplane/tm/pfc/pfc_generator.h"

#include "dataplane/ports/port.h"
#include "dataplane/tm/buffer/shared_buffer.h"
#include "dataplane/tm/pfc/pfc_frame.h"

namespace rs {

void PfcGenerator::configure(uint16_t port, Port* out, rte_mempool* pool, double speed_gbps, uint16_t quanta) {
  port_id_ = port;
  out_ = out;
  pool_ = pool;
  if (out) src_ = out->mac;  // tests of the decoder alone give no port
  set_timing(speed_gbps, quanta);
}

void PfcGenerator::set_timing(double speed_gbps, uint16_t quanta) {
  quanta_ = quanta;
  // Half the pause we ask for: one lost or late refresh still leaves the peer paused.
  refresh_ns_ = pause_quanta_to_ns(quanta, speed_gbps) / 2;
}

bool PfcGenerator::send(uint8_t xoff_bits, uint8_t xon_bits, uint64_t now) {
  std::array<uint16_t, 8> q{};
  for (int p = 0; p < 8; ++p)
    if (xoff_bits & (1u << p)) q[p] = quanta_;
  rte_mbuf* m = make_pfc_mbuf(pool_, src_, static_cast<uint8_t>(xoff_bits | xon_bits), q);
  if (!m) {
    c_.tx_fail.inc();
    return false;
  }
  if (out_->tx_burst(&m, 1, now) != 1) {
    rte_pktmbuf_free(m);
    c_.tx_fail.inc();
    return false;
  }
  c_.frames.inc();
  for (int p = 0; p < 8; ++p) {
    if (xoff_bits & (1u << p)) c_.xoff_sent[p].inc();
    if (xon_bits & (1u << p)) c_.xon_sent[p].inc();
  }
  return true;
}

bool PfcGenerator::evaluate(const SharedBuffer& sb, uint64_t now) {
  const uint8_t lossless = sb.lossless_pgs(port_id_);
  uint8_t xoff = 0, xon = 0;
  for (uint8_t g = 0; g < 8; ++g) {
    if (!(lossless & (1u << g)) || (suppressed_ & (1u << g))) continue;
    const PgSettings& s = sb.pg(port_id_, g);
    const uint64_t level = sb.pg_level(port_id_, g);
    const bool on = asserted_ & (1u << g);
    if (!on && level >= s.xoff) xoff |= static_cast<uint8_t>(1u << g);
    else if (on && level < s.xon) xon |= static_cast<uint8_t>(1u << g);
    else if (on && now - last_sent_[g] >= refresh_ns_) xoff |= static_cast<uint8_t>(1u << g);
  }
  if (!(xoff | xon)) return false;
  // State changes only once the frame is on the wire, so a failed send is retried as is.
  if (!send(xoff, xon, now)) return false;
  for (uint8_t g = 0; g < 8; ++g) {
    const uint8_t bit = static_cast<uint8_t>(1u << g);
    if (xoff & bit) {
      if (!(asserted_ & bit)) since_[g] = now;
      asserted_ |= bit;
      last_sent_[g] = now;
    } else if (xon & bit) {
      asserted_ &= static_cast<uint8_t>(~bit);
      c_.assert_ns[g].add(now - since_[g]);
    }
  }
  asserted_pub_.set(asserted_);
  return true;
}

void PfcGenerator::set_suppressed(uint8_t mask, uint64_t now) {
  const uint8_t release = asserted_ & mask;
  suppressed_ = mask;
  if (!release) return;
  // If the XON cannot go out, stop asserting anyway: the peer's pause runs out by itself.
  send(0, release, now);
  for (uint8_t g = 0; g < 8; ++g)
    if (release & (1u << g)) c_.assert_ns[g].add(now - since_[g]);
  asserted_ &= static_cast<uint8_t>(~release);
  asserted_pub_.set(asserted_);
}

}  // namespace rs
