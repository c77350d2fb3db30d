// A stage is one class in one file: a process() over a burst that writes one next-edge per
// packet, plus its named counters. The pipeline moves the packets (VPP's enqueue-to-next).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dataplane/core/burst.h"
#include "dataplane/core/counter.h"
#include "dataplane/core/trace.h"
#include "dataplane/core/worker_context.h"

namespace rs {

struct QosMaps;
struct CoppConfig;

// Edges every stage may use without declaring them.
inline constexpr uint8_t kNextDrop = 0xFF;      // meta.drop_reason says why
inline constexpr uint8_t kNextConsumed = 0xFE;  // the stage took ownership (queued, handed off)
// What process() returns when its packets took different edges (else the one edge they all
// took, as DPDK's rte_node_next_stream_move is a node's own call).
inline constexpr uint8_t kNextMixed = 0xFD;

// Start-up parameters a stage may read when it is built (never touched per packet).
struct StageEnv {
  const QosMaps* qos = nullptr;
  const CoppConfig* copp = nullptr;  // the punt stage's policers (null: the defaults)
  uint32_t hash_seed = 0;
};

class Stage {
 public:
  virtual ~Stage() = default;
  virtual std::string_view name() const = 0;
  virtual std::span<const std::string_view> next_names() const = 0;
  virtual std::span<const std::string_view> counter_names() const = 0;
  virtual std::span<const Counter> counters() const = 0;
  // Writes each packet's edge into next[i] and returns kNextMixed, or the edge every packet
  // took (the pipeline then moves the whole burst without reading next[]).
  virtual uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) = 0;
  // One trace record of this stage as text (its two words; the edge and drop are printed by
  // the pipeline). VPP's format_*_trace.
  virtual std::string format_trace(const TraceRecord& r) const;
  // The stage that wrote trace records with this step number: itself, or one of a chain's
  // stages (core/step_stage.h).
  virtual const Stage& step_stage(uint8_t) const { return *this; }
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
    add_tallies(ctr_.data(), tally);
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
