// What DPDK's route tables cost a route, apart from everything else the control plane does:
// the floor under perf/route_install's rate. Every route change is applied to two banks
// (dataplane/switch/fib_writer.h), so a batched install cannot beat 1 / (2 x the add below).
// Beside the tables the switch uses (rte_lpm, rte_lpm6), the same work on rte_fib / rte_fib6
// (DIR-24-8 and a trie over an rte_rib), the alternative DPDK offers: cheaper adds, but only a
// bulk lookup behind a function pointer, where rte_lpm's lookup is inline in the route step.
//
// The prefixes have perf/route_install's shape (prefixes.py): IPv4 /16-/32, those longer
// than /24 inside 2048 random /24s; IPv6 /48-/128 cut from 128 random addresses below the
// byte rte_lpm6 gives their last bit. Seeded, duplicate-free, shuffled.
// The tables are created, and their pages faulted in, outside the timed region (as
// limits.prefault does for the switch's IPv4 table): the figures are the tables' own work.
#include <benchmark/benchmark.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr int kV4Routes = 45000, kV6Routes = 15000;  // route_install's 60 000 at 3:1
constexpr uint32_t kTbl8 = 1u << 12;                  // RouteLimits' default tbl8 groups
constexpr uint32_t kMiss = 0x7FFFFFFF;                // rte_fib's default next hop: no route

struct V4 {
  uint32_t ip;
  uint8_t depth;
};
struct V6 {
  std::array<uint8_t, 16> ip;
  uint8_t depth;
};

std::vector<V4> v4_prefixes(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto random_unicast = [&] {
    for (;;) {
      const auto a = static_cast<uint32_t>(rng());
      const uint32_t first = a >> 24;
      if (first != 0 && first != 10 && first != 127 && first < 224) return a;
    }
  };
  std::vector<uint32_t> subnets(2048);
  for (auto& s : subnets) s = random_unicast() & 0xFFFFFF00u;
  std::set<std::pair<uint32_t, uint8_t>> seen;
  std::vector<V4> out;
  while (static_cast<int>(out.size()) < n) {
    const auto d = static_cast<uint8_t>(16 + rng() % 17);
    uint32_t a = d > 24 ? subnets[rng() % subnets.size()] | static_cast<uint32_t>(rng() & 0xFF) : random_unicast();
    a &= d == 32 ? ~0u : ~((1u << (32 - d)) - 1);
    if (seen.insert({a, d}).second) out.push_back({a, d});
  }
  return out;
}

std::vector<V6> v6_prefixes(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::array<uint8_t, 16>> trunks(128);
  for (auto& t : trunks) {
    for (auto& b : t) b = static_cast<uint8_t>(rng());
    t[0] = 0x20 | (t[0] & 0x1F);  // 2000::/3
  }
  std::set<std::pair<std::array<uint8_t, 16>, uint8_t>> seen;
  std::vector<V6> out;
  while (static_cast<int>(out.size()) < n) {
    const auto d = static_cast<uint8_t>(48 + rng() % 81);
    const int top = 24 + 8 * ((d - 25) / 8);  // the bits above the level holding bit d
    V6 p{trunks[rng() % trunks.size()], d};
    for (int bit = top; bit < 128; ++bit) {
      const uint8_t m = static_cast<uint8_t>(0x80 >> (bit % 8));
      const bool on = bit < d && (rng() & 1);
      p.ip[bit / 8] = static_cast<uint8_t>(on ? p.ip[bit / 8] | m : p.ip[bit / 8] & ~m);
    }
    if (seen.insert({p.ip, d}).second) out.push_back(p);
  }
  return out;
}

const std::vector<V4>& v4() {
  static const auto p = v4_prefixes(kV4Routes, 1);
  return p;
}
const std::vector<V6>& v6() {
  static const auto p = v6_prefixes(kV6Routes, 2);
  return p;
}

// Each table behind one interface, created once and kept: its pages are faulted in by the
// first (untimed) fill.
struct Lpm4 {
  rte_lpm* t;
  Lpm4() {
    rte_lpm_config c{};
    c.max_rules = 1u << 16;
    c.number_tbl8s = kTbl8;
    t = rte_lpm_create("bench_lpm", SOCKET_ID_ANY, &c);
    if (!t) throw std::runtime_error("rte_lpm_create failed");
  }
  int add(const V4& r, uint32_t nh) { return rte_lpm_add(t, r.ip, r.depth, nh); }
  int del(const V4& r) { return rte_lpm_delete(t, r.ip, r.depth); }
};
struct Fib4 {
  rte_fib* t;
  Fib4() {
    rte_fib_conf c{};
    c.type = RTE_FIB_DIR24_8;
    c.default_nh = kMiss;
    c.max_routes = 1 << 16;
    c.dir24_8.nh_sz = RTE_FIB_DIR24_8_4B;
    c.dir24_8.num_tbl8 = kTbl8;
    t = rte_fib_create("bench_fib", SOCKET_ID_ANY, &c);
    if (!t) throw std::runtime_error("rte_fib_create failed");
  }
  int add(const V4& r, uint32_t nh) { return rte_fib_add(t, r.ip, r.depth, nh); }
  int del(const V4& r) { return rte_fib_delete(t, r.ip, r.depth); }
};
struct Lpm6 {
  rte_lpm6* t;
  Lpm6() {
    rte_lpm6_config c{};
    c.max_rules = 1u << 14;
    c.number_tbl8s = 1u << 16;
    t = rte_lpm6_create("bench_lpm6", SOCKET_ID_ANY, &c);
    if (!t) throw std::runtime_error("rte_lpm6_create failed");
  }
  int add(const V6& r, uint32_t nh) { return rte_lpm6_add(t, r.ip.data(), r.depth, nh); }
  int del(const V6& r) { return rte_lpm6_delete(t, r.ip.data(), r.depth); }
};
struct Fib6 {
  rte_fib6* t;
  Fib6() {
    rte_fib6_conf c{};
    c.type = RTE_FIB6_TRIE;
    c.default_nh = kMiss;
    c.max_routes = 1 << 14;
    c.trie.nh_sz = RTE_FIB6_TRIE_4B;
    c.trie.num_tbl8 = 1u << 16;
    t = rte_fib6_create("bench_fib6", SOCKET_ID_ANY, &c);
    if (!t) throw std::runtime_error("rte_fib6_create failed");
  }
  int add(const V6& r, uint32_t nh) { return rte_fib6_add(t, r.ip.data(), r.depth, nh); }
  int del(const V6& r) { return rte_fib6_delete(t, r.ip.data(), r.depth); }
};

template <typename T>
T& table() {
  static T t;
  return t;
}

template <typename T, typename P>
void fill(benchmark::State& st, T& t, const std::vector<P>& ps) {
  for (std::size_t i = 0; i < ps.size(); ++i)
    if (t.add(ps[i], static_cast<uint32_t>(i % 1000)) < 0) st.SkipWithError("add failed: table too small");
}
template <typename T, typename P>
void empty(benchmark::State& st, T& t, const std::vector<P>& ps) {
  for (auto& p : ps)
    if (t.del(p) < 0) st.SkipWithError("delete failed");
}

// A counter of the time an item took (`t_per_route`, `t_per_lookup`), as the other benches print.
benchmark::Counter per_item(double items) {
  return benchmark::Counter(items, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

// One iteration: every prefix added, then deleted; kDelete times the deletes, else the adds.
template <typename T, bool kDelete, typename P>
void changes(benchmark::State& st, const std::vector<P>& ps) {
  T& t = table<T>();
  fill(st, t, ps);  // first touch of the table's pages, untimed
  empty(st, t, ps);
  for (auto _ : st) {
    if (kDelete) st.PauseTiming();
    fill(st, t, ps);
    if (kDelete) st.ResumeTiming(); else st.PauseTiming();
    empty(st, t, ps);
    if (!kDelete) st.ResumeTiming();
  }
  st.SetItemsProcessed(static_cast<int64_t>(st.iterations() * ps.size()));
  st.counters["t_per_route"] = per_item(static_cast<double>(st.iterations() * ps.size()));
}
template <typename T, typename P>
void adds(benchmark::State& st, const std::vector<P>& ps) { changes<T, false>(st, ps); }
template <typename T, typename P>
void deletes(benchmark::State& st, const std::vector<P>& ps) { changes<T, true>(st, ps); }

void BM_lpm_add(benchmark::State& st) { adds<Lpm4>(st, v4()); }
void BM_fib_add(benchmark::State& st) { adds<Fib4>(st, v4()); }
void BM_lpm_delete(benchmark::State& st) { deletes<Lpm4>(st, v4()); }
void BM_fib_delete(benchmark::State& st) { deletes<Fib4>(st, v4()); }
void BM_lpm6_add(benchmark::State& st) { adds<Lpm6>(st, v6()); }
void BM_fib6_add(benchmark::State& st) { adds<Fib6>(st, v6()); }
void BM_lpm6_delete(benchmark::State& st) { deletes<Lpm6>(st, v6()); }
void BM_fib6_delete(benchmark::State& st) { deletes<Fib6>(st, v6()); }

// Lookups of addresses inside the installed prefixes, 32 a burst: rte_lpm's inline lookup one
// by one (as the route step does), rte_fib's bulk lookup one address a call (what a route step
// would do) and a whole burst a call (what a stage that looks the burst up first would do).
constexpr int kBurst = 32;
std::vector<uint32_t> lookup_addresses() {
  std::mt19937_64 rng(3);
  std::vector<uint32_t> a(1u << 16);
  for (auto& x : a) {
    const V4& p = v4()[rng() % v4().size()];
    x = p.ip | (p.depth == 32 ? 0 : static_cast<uint32_t>(rng()) & ((1u << (32 - p.depth)) - 1));
  }
  return a;
}
template <int kMode>
void lookups(benchmark::State& st) {
  static const auto addrs = lookup_addresses();
  Lpm4& l = table<Lpm4>();
  Fib4& f = table<Fib4>();
  fill(st, l, v4());
  fill(st, f, v4());
  std::size_t at = 0;
  uint64_t sum = 0;
  for (auto _ : st) {
    uint32_t* ips = const_cast<uint32_t*>(addrs.data()) + at;
    uint64_t nh[kBurst];
    if constexpr (kMode == 0) {
      for (int i = 0; i < kBurst; ++i) {
        uint32_t g = kMiss;
        rte_lpm_lookup(l.t, ips[i], &g);
        nh[i] = g;
      }
    } else if constexpr (kMode == 1) {
      for (int i = 0; i < kBurst; ++i) rte_fib_lookup_bulk(f.t, ips + i, nh + i, 1);
    } else {
      rte_fib_lookup_bulk(f.t, ips, nh, kBurst);
    }
    for (int i = 0; i < kBurst; ++i) sum += nh[i];
    at = (at + kBurst) & (addrs.size() - 1);
  }
  benchmark::DoNotOptimize(sum);
  empty(st, l, v4());
  empty(st, f, v4());
  st.SetItemsProcessed(st.iterations() * kBurst);
  st.counters["t_per_lookup"] = per_item(static_cast<double>(st.iterations() * kBurst));
}
void BM_lpm_lookup(benchmark::State& st) { lookups<0>(st); }
void BM_fib_lookup_one(benchmark::State& st) { lookups<1>(st); }
void BM_fib_lookup_burst(benchmark::State& st) { lookups<2>(st); }

}  // namespace

BENCHMARK(BM_lpm_add)->Name("route_table/rte_lpm_add")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_fib_add)->Name("route_table/rte_fib_add")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_lpm_delete)->Name("route_table/rte_lpm_delete")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_fib_delete)->Name("route_table/rte_fib_delete")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_lpm6_add)->Name("route_table/rte_lpm6_add")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_fib6_add)->Name("route_table/rte_fib6_add")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_lpm6_delete)->Name("route_table/rte_lpm6_delete")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_fib6_delete)->Name("route_table/rte_fib6_delete")->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_lpm_lookup)->Name("route_table/rte_lpm_lookup");
BENCHMARK(BM_fib_lookup_one)->Name("route_table/rte_fib_lookup_bulk:1");
BENCHMARK(BM_fib_lookup_burst)->Name("route_table/rte_fib_lookup_bulk:32");
