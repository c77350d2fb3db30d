#include "dataplane/nic/dcqcn.h"

#include <algorithm>
#include <cmath>

namespace rs::nic {

namespace {
uint64_t ns(double us) { return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(us * 1000))); }
}  // namespace

DcqcnRp::DcqcnRp(const DcqcnConfig& c, double line_gbps)
    : line_(line_gbps), rate_(line_gbps), target_(line_gbps),
      // Never a floor at the line rate (HPCC's 1 Gb/s on a 1 Gb/s link would stop every cut):
      // at most a 25th of the line, as HPCC's 1 Gb/s is of its 25 Gb/s links.
      min_(std::min(c.rpg_min_rate_mbps / 1000, line_gbps / 25)),
      ai_(c.rpg_ai_rate_mbps > 0 ? c.rpg_ai_rate_mbps / 1000 : 0.005 * line_gbps / 25),
      hai_(c.rpg_hai_rate_mbps > 0 ? c.rpg_hai_rate_mbps / 1000 : 0.05 * line_gbps / 25), g_(c.dce_tcp_g / 1024.0),
      t_alpha_(ns(c.dce_tcp_rtt_us)), t_dec_(ns(c.rate_reduce_monitor_period_us)), t_inc_(ns(c.rpg_time_reset_us)),
      threshold_(c.rpg_threshold), byte_reset_(c.rpg_byte_reset),
      first_rate_(c.rate_to_set_on_first_cnp_mbps > 0 ? std::min(c.rate_to_set_on_first_cnp_mbps / 1000, line_gbps) : 0),
      clamp_(c.clamp_tgt_rate) {
  alpha_ = std::min(c.initial_alpha_value, 1024u) / 1024.0;
}

void DcqcnRp::alpha_to(uint64_t t) {
  if (first_cnp_ || alpha_at_ > t) return;
  if (alpha_cnp_) {
    alpha_ = (1 - g_) * alpha_ + g_;
    alpha_cnp_ = false;
    alpha_at_ += t_alpha_;
    if (alpha_at_ > t) return;
  }
  // No CNP in the updates left: each only decays alpha.
  const uint64_t k = (t - alpha_at_) / t_alpha_ + 1;
  alpha_ *= std::pow(1 - g_, static_cast<double>(k));
  alpha_at_ += k * t_alpha_;
}

void DcqcnRp::increase(uint64_t t, bool by_bytes) {
  (void)t;
  // With the byte counter on, both stages count (the paper): hyper only when both passed F.
  const uint32_t hi = byte_reset_ ? std::max(time_stage_, byte_stage_) : time_stage_;
  const uint32_t lo = byte_reset_ ? std::min(time_stage_, byte_stage_) : time_stage_;
  if (hi < threshold_) {
    ++c_.fast_recovery;
  } else if (lo > threshold_) {
    target_ = std::min(line_, target_ + hai_);
    ++c_.hyper;
  } else {
    target_ = std::min(line_, target_ + ai_);
    ++c_.additive;
  }
  rate_ = rate_ / 2 + target_ / 2;
  ++(by_bytes ? byte_stage_ : time_stage_);
}

void DcqcnRp::advance(uint64_t now) {
  if (first_cnp_) return;
  for (;;) {
    const uint64_t dec = decrease_cnp_ ? decrease_at_ : UINT64_MAX;
    const uint64_t t = std::min(dec, increase_at_);
    if (t > now) break;
    alpha_to(t);
    if (t == dec) {
      // rdma-hw.cc CheckRateDecreaseMlx: the cut, and the increase timer starts again.
      if (clamp_ || time_stage_ != 0) target_ = rate_;
      rate_ = std::max(min_, rate_ * (1 - alpha_ / 2));
      time_stage_ = byte_stage_ = 0;
      bytes_ = 0;
      decrease_cnp_ = false;
      increase_at_ = t + t_inc_;
      ++c_.cuts;
    } else {
      increase(t, false);
      increase_at_ = t + t_inc_;
    }
  }
  // The decrease check runs every period from the first CNP; the next that can matter.
  if (decrease_at_ <= now) decrease_at_ += ((now - decrease_at_) / t_dec_ + 1) * t_dec_;
  alpha_to(now);
}

void DcqcnRp::on_cnp(uint64_t now) {
  advance(now);
  ++c_.cnps;
  alpha_cnp_ = decrease_cnp_ = true;
  if (first_cnp_) {
    // rdma-hw.cc cnp_received_mlx: alpha as configured, the periodic updates and checks start.
    first_cnp_ = false;
    alpha_cnp_ = false;
    alpha_at_ = now + t_alpha_;
    decrease_at_ = now + t_dec_;
    if (first_rate_ > 0) rate_ = first_rate_;
    target_ = rate_;
  }
}

void DcqcnRp::on_sent(uint64_t bytes, uint64_t now) {
  if (!byte_reset_ || first_cnp_) return;
  bytes_ += bytes;
  while (bytes_ >= byte_reset_) {
    bytes_ -= byte_reset_;
    advance(now);
    increase(now, true);
  }
}

}  // namespace rs::nic
