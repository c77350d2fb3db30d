// DCQCN (Zhu et al., SIGCOMM'15) as ConnectX NICs run it, with the parameter names of NVIDIA's
// firmware (mlxconfig / /sys/class/net/<if>/ecn/roce_rp and roce_np) and, as defaults, the
// values the HPCC simulator runs DCQCN with (alibaba-edu/High-Precision-Congestion-Control,
// simulation/run.py --cc dcqcn, and its rdma-hw.cc "Mlx" reaction point); docs/emulated-nic.md
// says where each comes from.
//
// The reaction point (the sender, per QP) is driven by timers, as in rdma-hw.cc:
//   - a CNP marks the QP; the first one sets alpha to initial_alpha_value (and the rate to
//     rate_to_set_on_first_cnp, when given);
//   - every dce_tcp_rtt: alpha = (1 - g) alpha + g if a CNP came since the last update, else
//     (1 - g) alpha;
//   - every rate_reduce_monitor_period, if a CNP came: target = rate (unless clamp_tgt_rate is
//     off and no increase happened since the last cut), rate = max(min, rate (1 - alpha / 2)),
//     the increase stage back to 0 and the increase timer restarted;
//   - every rpg_time_reset (and every rpg_byte_reset bytes sent, when that is on): one increase,
//     by stage: below rpg_threshold fast recovery, rate = (rate + target) / 2; at it additive,
//     target += rpg_ai_rate; above it hyper, target += rpg_hai_rate; then rate = (rate + target) / 2
//     (target at most the line rate).
// The notification point (the receiver) answers CE-marked packets with CNPs, at most one per QP
// each min_time_between_cnps.
// Time is injected: advance(now) applies every timer due up to now, in order.
#pragma once
#include <cstdint>

namespace rs::nic {

struct DcqcnConfig {
  // Reaction point (roce_rp).
  double rpg_time_reset_us = 300;          // increase timer (HPCC t_inc)
  uint64_t rpg_byte_reset = 0;             // bytes between increases; 0: off (HPCC has no byte counter)
  uint32_t rpg_threshold = 1;              // F: fast-recovery steps (HPCC FAST_RECOVERY_TIMES)
  double rpg_ai_rate_mbps = 0;             // 0: 5 Mb/s per 25 Gb/s of line rate (HPCC ai)
  double rpg_hai_rate_mbps = 0;            // 0: 50 Mb/s per 25 Gb/s of line rate (HPCC hai)
  double rpg_min_rate_mbps = 1000;         // HPCC MIN_RATE; at most a 25th of the line rate
  double rate_to_set_on_first_cnp_mbps = 0;  // 0: keep the current rate (HPCC RateOnFirstCnp 1.0)
  uint32_t dce_tcp_g = 4;                  // g in 1/1024: 4 = 1/256 (HPCC ewma gain)
  double dce_tcp_rtt_us = 1;               // alpha update period (HPCC t_alpha)
  double rate_reduce_monitor_period_us = 4;  // HPCC t_dec
  uint32_t initial_alpha_value = 1024;     // in 1/1024; HPCC sets alpha to 1 (firmware: at most 1023)
  bool clamp_tgt_rate = false;
  // Notification point (roce_np).
  double min_time_between_cnps_us = 50;
  uint8_t cnp_dscp = 48;
  uint8_t cnp_802p_prio = 6;
  bool operator==(const DcqcnConfig&) const = default;
};

struct DcqcnCounters {
  uint64_t cnps = 0, cuts = 0, fast_recovery = 0, additive = 0, hyper = 0;
};

class DcqcnRp {
 public:
  DcqcnRp(const DcqcnConfig& c, double line_gbps);
  // A CNP for this QP at `now`.
  void on_cnp(uint64_t now);
  // Bytes sent (the byte counter, when rpg_byte_reset is on).
  void on_sent(uint64_t bytes, uint64_t now);
  // Applies every timer due up to `now`.
  void advance(uint64_t now);
  double rate_gbps() const { return rate_; }
  double target_gbps() const { return target_; }
  double alpha() const { return alpha_; }
  // Whether DCQCN limits the QP (a CNP came); a QP never marked sends at line rate.
  bool limiting() const { return !first_cnp_; }
  const DcqcnCounters& counters() const { return c_; }

 private:
  void alpha_to(uint64_t t);  // the alpha updates due up to t
  void increase(uint64_t t, bool by_bytes);

  double line_, rate_, target_, min_, ai_, hai_, g_;
  double alpha_ = 1;
  uint64_t t_alpha_, t_dec_, t_inc_;
  bool first_cnp_ = true, alpha_cnp_ = false, decrease_cnp_ = false;
  uint64_t alpha_at_ = 0, decrease_at_ = 0, increase_at_ = UINT64_MAX;
  uint32_t time_stage_ = 0, byte_stage_ = 0, threshold_;
  uint64_t byte_reset_, bytes_ = 0;
  double first_rate_;
  bool clamp_;
  DcqcnCounters c_;
};

// The notification point's pacing: whether a CE-marked packet of a QP gets a CNP now.
class CnpPacer {
 public:
  explicit CnpPacer(const DcqcnConfig& c) : gap_(static_cast<uint64_t>(c.min_time_between_cnps_us * 1000)) {}
  bool due(uint64_t now) {
    if (sent_ && now < last_ + gap_) return false;
    sent_ = true;
    last_ = now;
    return true;
  }

 private:
  uint64_t gap_, last_ = 0;
  bool sent_ = false;
};

}  // namespace rs::nic
