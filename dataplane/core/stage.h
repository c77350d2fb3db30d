// A stage is one class in one file: a process() over a burst that writes one next-edge per
// packet, plus its named counters. The pipeline moves the packets (VPP's enqueue-to-next).
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "dataplane/core/burst.h"
#include "dataplane/core/counter.h"
#include "dataplane/core/worker_context.h"

namespace rs {

struct QosMaps;

// Edges every stage may use without declaring them.
inline constexpr uint8_t kNextDrop = 0xFF;      // meta.drop_reason says why
inline constexpr uint8_t kNextConsumed = 0xFE;  // the stage took ownership (queued, handed off)

// Start-up parameters a stage may read when it is built (never touched per packet).
struct StageEnv {
  const QosMaps* qos = nullptr;
  uint32_t hash_seed = 0;
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual std::string_view name() const = 0;
  virtual std::span<const std::string_view> next_names() const = 0;
  virtual std::span<const std::string_view> counter_names() const = 0;
  virtual std::span<const Counter> counters() const = 0;
  virtual void process(Burst& in, uint8_t* next, WorkerContext& ctx) = 0;
  // True for a stage that, as a pipeline's entry, writes meta in_port (= ctx.rx_port) itself
  // wherever anything will read it; for any other entry the pipeline writes it for the whole
  // burst first.
  virtual bool stamps_in_port() const { return false; }
};

// CRTP glue so a stage only declares kName, kNext, kCounters, an enum and process().
template <typename T>
class StageBase : public Stage {
 public:
  std::string_view name() const override { return T::kName; }
  std::span<const std::string_view> next_names() const override { return T::kNext; }
  std::span<const std::string_view> counter_names() const override { return T::kCounters; }
  std::span<const Counter> counters() const override {
    static_assert(T::kCounters.size() <= kMaxStageCounters);
    return std::span<const Counter>(ctr_.data(), T::kCounters.size());
  }

 protected:
  template <typename E>
  void count(E e, uint64_t n = 1) { ctr_[static_cast<std::size_t>(e)].add(n); }
  // Stages tally a burst in a local array and publish once: one store per counter per burst
  // instead of one per packet.
  template <std::size_t N>
  void publish(const std::array<uint32_t, N>& tally) {
    for (std::size_t i = 0; i < N; ++i)
      if (tally[i]) ctr_[i].add(tally[i]);
  }
  // Sized by a bound, not by T::kCounters: T is incomplete where this base is instantiated.
  static constexpr std::size_t kMaxStageCounters = 16;
  std::array<Counter, kMaxStageCounters> ctr_{};
};

using StageFactory = std::unique_ptr<Stage> (*)(const StageEnv&);

class StageRegistry {
 public:
  static bool add(std::string_view name, StageFactory f);
  static StageFactory find(std::string_view name);
  static std::vector<std::string_view> names();
};

#define REGISTER_STAGE(Type)                                                                 \
  static const bool rs_stage_registered_##Type = ::rs::StageRegistry::add(                   \
      Type::kName, [](const ::rs::StageEnv& env) -> std::unique_ptr<::rs::Stage> { return std::make_unique<Type>(env); })

}  // namespace rs
