// Deficit weighted round robin (Shreedhar & Varghese), ETS's discipline: each visit adds
// weight x quantum bytes of credit; a queue sends while its head fits in its deficit. Byte
// shares converge to the weights whatever the packet sizes. A paused queue keeps its deficit;
// an empty one loses it, so idle queues cannot bank credit.
#pragma once
#include <array>
#include <cstdint>

namespace rs {

class Dwrr {
 public:
  static constexpr uint32_t kQuantumBytes = 1024;

  void set_weight(int q, uint32_t w) { quantum_[q] = (w ? w : 1) * kQuantumBytes; }

  // `eligible`: DWRR queues that are non-empty and not paused; head_len[q] their head sizes.
  int select(uint8_t eligible, const uint32_t* head_len) {
    return select_by(eligible, [head_len](int q) { return head_len[q]; });
  }
  // Same, asking for a head length only when the queue's turn comes (cheaper per packet).
  template <typename HeadLen>
  int select_by(uint8_t eligible, HeadLen head_len) {
    if (!eligible) return -1;
    for (;;) {
      const int q = cur_;
      if (eligible & (1u << q)) {
        if (!fresh_) {
          deficit_[q] += quantum_[q];
          fresh_ = true;
        }
        if (deficit_[q] >= head_len(q)) return q;
      }
      cur_ = (cur_ + 1) & 7;
      fresh_ = false;
    }
  }
  void on_sent(int q, uint32_t len, bool now_empty) {
    deficit_[q] -= len;
    if (now_empty) {
      deficit_[q] = 0;
      cur_ = (cur_ + 1) & 7;
      fresh_ = false;
    }
  }
  void on_empty(int q) { deficit_[q] = 0; }

 private:
  std::array<uint32_t, 8> quantum_{kQuantumBytes, kQuantumBytes, kQuantumBytes, kQuantumBytes,
                                   kQuantumBytes, kQuantumBytes, kQuantumBytes, kQuantumBytes};
  std::array<uint32_t, 8> deficit_{};
  int cur_ = 0;
  bool fresh_ = false;
};

}  // namespace rs
