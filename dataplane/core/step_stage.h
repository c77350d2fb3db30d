// Stages whose work is one packet at a time, written once as a step, and chains of them.
//
// A step stage T declares, besides kName/kNext/kCounters:
//   struct Pass { ... };                      // per burst: tables it reads, its tallies
//   Pass begin(const WorkerContext&) const;   // loads them once, before the first packet
//   template <bool kTrace> uint8_t step(rte_mbuf*, PacketMeta&, WorkerContext&, Pass&) const;
//   void publish_tally(const Pass&, uint16_t n, Counter* ctr) const;   // into its counters
//   static uint8_t whole(const Pass&, uint16_t n);  // the edge all n took, or kNextMixed
// and, when part of its work must see the whole burst at once (a routing policy is called once
// with its packets in arrival order), optionally
//   void prepare(const Burst&, WorkerContext&, Pass&) const;  // before the first step
// whose results the steps then take in order, one packet each. Only a chain's first stage may
// have one: the later stages see only the packets the stages before them let through.
// A pass's tables are copied out of the context and the FIB once per burst: a step writes
// the frame byte by byte, and a byte store may alias any table the compiler has not got in a
// local, which it would then reload for every packet.
// StepStage<T> runs the step over a burst (the stage as a pipeline node). Chain<Name, A, B, C>
// runs A's step, then B's on the packets A sent on A::kChainEdge, then C's, packet by packet:
// the same bodies, run to completion. Why: every pass over a burst re-reads each packet's
// mbuf, metadata and frame, and without hugepages a burst's pages do not stay in the TLB
// between passes; a chain is one pass (perf/README.md has the figures). A chain's own edges
// are its stages' other edges, named as they are there; its counters are theirs, prefixed
// with the stage's name; its trace records name the stage that wrote them.
#pragma once
#include <rte_prefetch.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "dataplane/core/stage.h"

namespace rs {

template <typename T>
concept PreparesBurst = requires(const T& s, const Burst& b, WorkerContext& c, typename T::Pass& p) { s.prepare(b, c, p); };

// Packet data is prefetched this many packets ahead: every step stage reads the frame.
inline constexpr uint16_t kPrefetchAhead = 4;

template <typename T>
class StepStage : public StageBase<T> {
 public:
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) final {
    return ctx.tracing ? run<true>(in, next, ctx) : run<false>(in, next, ctx);
  }

 private:
  template <bool kTrace>
  uint8_t run(Burst& in, uint8_t* next, WorkerContext& ctx) {
    T& self = static_cast<T&>(*this);
    typename T::Pass t = self.begin(ctx);
    if constexpr (PreparesBurst<T>) self.prepare(in, ctx, t);
    const uint16_t n = in.n;
    for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i], void*));
    for (uint16_t i = 0; i < n; ++i) {
      if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i + kPrefetchAhead], void*));
      rte_mbuf* m = in.pkts[i];
      next[i] = self.template step<kTrace>(m, meta(m), ctx, t);
    }
    self.publish_tally(t, n, this->ctr_.data());
    return T::whole(t, n);
  }
};

// A name as a template argument (a chain's stage name).
template <std::size_t N>
struct FixedName {
  constexpr FixedName(const char (&s)[N]) { std::copy_n(s, N, v); }
  char v[N];
  constexpr std::string_view view() const { return {v, N - 1}; }
};

template <FixedName kChainName, typename... Ts>
class Chain final : public Stage {
  static constexpr std::size_t kSteps = sizeof...(Ts);
  using Steps = std::tuple<Ts...>;
  // Each stage is built from the chain's env (a member of a template, so that Ts stays in the
  // expansion below: clang takes an alias that drops it for a pack with nothing to expand).
  template <typename>
  struct EnvFor {
    using type = const StageEnv&;
  };

 public:
  static constexpr std::string_view kName = kChainName.view();
  static_assert([]<std::size_t... K>(std::index_sequence<K...>) {
    return ((K == 0 || !PreparesBurst<std::tuple_element_t<K, Steps>>) && ...);
  }(std::make_index_sequence<kSteps>{}), "only a chain's first stage may prepare the burst");
  explicit Chain(const StageEnv& env) : steps_(static_cast<typename EnvFor<Ts>::type>(env)...) {
    std::size_t base = 0;
    for_each([&](auto& s, auto k) {
      using S = std::remove_reference_t<decltype(s)>;
      static_assert(S::kNext.size() <= 8, "edge_map_ holds 8 edges a step");
      counter_base_[k] = base;
      for (auto c : S::kCounters) counter_strings_.push_back(std::string(S::kName) + "." + std::string(c));
      base += S::kCounters.size();
      if (base > counters_.size()) throw std::logic_error("chain: too many counters");
      // The last stage's edges all leave the chain; the others' do but for the chain edge.
      for (std::size_t e = 0; e < S::kNext.size(); ++e) {
        if constexpr (k + 1 < kSteps) {
          if (e == S::kChainEdge) {
            edge_map_[k][e] = kNextMixed;  // stays in the chain
            continue;
          }
        }
        edge_map_[k][e] = static_cast<uint8_t>(edge_names_.size());
        edge_names_.push_back(S::kNext[e]);
      }
    });
    num_counters_ = base;
    for (auto& c : counter_strings_) counter_names_.push_back(c);
  }

  std::string_view name() const override { return kChainName.view(); }
  std::span<const std::string_view> next_names() const override { return edge_names_; }
  std::span<const std::string_view> counter_names() const override { return counter_names_; }
  std::span<const Counter> counters() const override { return {counters_.data(), num_counters_}; }
  uint8_t process(Burst& in, uint8_t* next, WorkerContext& ctx) override {
    return ctx.tracing ? run<true>(in, next, ctx) : run<false>(in, next, ctx);
  }
  const Stage& step_stage(uint8_t step) const override {
    const Stage* out = this;
    for_each([&](auto& s, auto k) {
      if (k == step) out = &s;
    });
    return *out;
  }

 private:
  template <typename F>
  void for_each(F&& f) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (f(std::get<K>(steps_), std::integral_constant<std::size_t, K>{}), ...);
    }(std::make_index_sequence<kSteps>{});
  }
  template <typename F>
  void for_each(F&& f) const {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (f(std::get<K>(steps_), std::integral_constant<std::size_t, K>{}), ...);
    }(std::make_index_sequence<kSteps>{});
  }

  // Step K of packet m, then the steps after it while the packet stays in the chain. Counts
  // in `left` the packets that leave the chain after step K but the last (rare), from which
  // run() knows how many packets each step saw.
  template <bool kTrace, std::size_t K>
  [[gnu::always_inline]] uint8_t walk(rte_mbuf* m, PacketMeta& pm, WorkerContext& ctx,
                                      std::tuple<typename Ts::Pass...>& t, uint16_t* left) {
    using S = std::tuple_element_t<K, Steps>;
    if constexpr (kTrace) ctx.step = static_cast<uint8_t>(K);
    const uint8_t e = std::get<K>(steps_).template step<kTrace>(m, pm, ctx, std::get<K>(t));
    if constexpr (K + 1 < kSteps) {
      if (e == S::kChainEdge) [[likely]]
        return walk<kTrace, K + 1>(m, pm, ctx, t, left);
      ++left[K];
    }
    return e >= kNextMixed ? e : edge_map_[K][e];
  }

  template <bool kTrace>
  uint8_t run(Burst& in, uint8_t* next, WorkerContext& ctx) {
    std::tuple<typename Ts::Pass...> t = begin(ctx, std::make_index_sequence<kSteps>{});
    using First = std::tuple_element_t<0, Steps>;
    if constexpr (PreparesBurst<First>) std::get<0>(steps_).prepare(in, ctx, std::get<0>(t));
    uint16_t left[kSteps] = {};
    const uint16_t n = in.n;
    for (uint16_t i = 0; i < n && i < kPrefetchAhead; ++i) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i], void*));
    for (uint16_t i = 0; i < n; ++i) {
      if (i + kPrefetchAhead < n) rte_prefetch0(rte_pktmbuf_mtod(in.pkts[i + kPrefetchAhead], void*));
      rte_mbuf* m = in.pkts[i];
      next[i] = walk<kTrace, 0>(m, meta(m), ctx, t, left);
    }
    if constexpr (kTrace) ctx.step = 0;
    uint16_t entered[kSteps];
    entered[0] = n;
    for (std::size_t k = 1; k < kSteps; ++k) entered[k] = static_cast<uint16_t>(entered[k - 1] - left[k - 1]);
    uint8_t whole = kNextMixed;
    for_each([&](auto& s, auto k) {
      using S = std::remove_reference_t<decltype(s)>;
      if (entered[k] == 0) return;
      s.publish_tally(std::get<k>(t), entered[k], &counters_[counter_base_[k]]);
      // The whole burst left by one edge of the last stage it reached.
      if (entered[k] == n && (k + 1 == kSteps || entered[k + 1 < kSteps ? k + 1 : k] != n)) {
        const uint8_t w = S::whole(std::get<k>(t), n);
        whole = w >= kNextMixed ? w : edge_map_[k][w];
      }
    });
    return whole;
  }

  template <std::size_t... K>
  std::tuple<typename Ts::Pass...> begin(const WorkerContext& ctx, std::index_sequence<K...>) const {
    return {std::get<K>(steps_).begin(ctx)...};
  }

  Steps steps_;
  std::array<std::array<uint8_t, 8>, kSteps> edge_map_{};  // step's edge -> chain edge
  std::array<std::size_t, kSteps> counter_base_{};
  std::vector<std::string_view> edge_names_;
  std::vector<std::string> counter_strings_;
  std::vector<std::string_view> counter_names_;
  std::array<Counter, 48> counters_{};
  std::size_t num_counters_ = 0;
};

}  // namespace rs
