#include "dataplane/tables/fdb.h"

#include <fmt/core.h>
#include <rte_errno.h>
#include <rte_hash_crc.h>

#include <stdexcept>

#include "dataplane/core/object_name.h"

namespace rs {

Fdb::Fdb(uint32_t capacity, uint16_t workers, rte_rcu_qsbr* qsbr) : entries_(std::make_unique<Entry[]>(2 * std::size_t{capacity})) {
  const std::string name = unique_object_name("rs_fdb");
  rte_hash_parameters p{};
  p.name = name.c_str();
  p.entries = capacity;
  p.key_len = sizeof(uint64_t);
  p.hash_func = rte_hash_crc;
  p.socket_id = SOCKET_ID_ANY;
  p.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF;
  h_ = rte_hash_create(&p);
  if (!h_) throw std::runtime_error(fmt::format("fdb: rte_hash_create: {}", rte_strerror(rte_errno)));
  rte_hash_rcu_config rc{};
  rc.v = qsbr;
  rc.mode = RTE_HASH_QSBR_MODE_DQ;
  rc.key_data_ptr = this;
  rc.free_key_data_func = &Fdb::free_slot;
  if (qsbr && rte_hash_rcu_qsbr_add(h_, &rc) != 0) {
    rte_hash_free(h_);
    throw std::runtime_error(fmt::format("fdb: rte_hash_rcu_qsbr_add: {}", rte_strerror(rte_errno)));
  }
  free_.reserve(2 * std::size_t{capacity});
  for (uint32_t i = 2 * capacity; i > 0; --i) free_.push_back(i - 1);
  for (uint16_t w = 0; w < workers; ++w) {
    rte_ring* r = rte_ring_create_elem(unique_object_name("rs_learn").c_str(), sizeof(Learn), 1024, SOCKET_ID_ANY,
                                       RING_F_SP_ENQ | RING_F_SC_DEQ);
    if (!r) {
      for (auto* x : learn_) rte_ring_free(x);
      rte_hash_free(h_);
      throw std::runtime_error(fmt::format("fdb: learn ring: {}", rte_strerror(rte_errno)));
    }
    learn_.push_back(r);
  }
}

Fdb::~Fdb() {
  for (auto* r : learn_) rte_ring_free(r);
  rte_hash_free(h_);
}

// Called by the hash once no reader can hold the deleted key's data: its entry may be reused.
void Fdb::free_slot(void* self, void* data) {
  static_cast<Fdb*>(self)->free_.push_back(static_cast<uint32_t>(reinterpret_cast<uintptr_t>(data)));
}

void Fdb::remove(uint64_t k, uint32_t) {
  if (rte_hash_del_key(h_, &k) >= 0) live_.fetch_sub(1, std::memory_order_relaxed);
}

void Fdb::poll(uint64_t now_ns, uint64_t ageing_ns, const VlanTable* vlans) {
  Learn ev[64];
  for (rte_ring* r : learn_) {
    unsigned n;
    while ((n = rte_ring_sc_dequeue_burst_elem(r, ev, sizeof(Learn), 64, nullptr)) > 0) {
      for (unsigned i = 0; i < n; ++i) {
        // Reported by a worker that still saw the VLAN table before its port left the VLAN.
        if (vlans && !((vlans->vlan[(ev[i].key >> 48) & 0xFFF].members >> (ev[i].port & 63)) & 1)) continue;
        if (Entry* e = lookup(ev[i].key)) {  // moved (or reported twice): the newest port wins
          if (e->port.load(std::memory_order_relaxed) != ev[i].port) moved_.fetch_add(1, std::memory_order_relaxed);
          e->port.store(ev[i].port, std::memory_order_relaxed);
          e->seen_ns.store(now_ns, std::memory_order_relaxed);
          continue;
        }
        if (free_.empty()) {
          full_.fetch_add(1, std::memory_order_relaxed);
          continue;
        }
        const uint32_t idx = free_.back();
        Entry& e = entries_[idx];
        e.port.store(ev[i].port, std::memory_order_relaxed);
        e.seen_ns.store(now_ns, std::memory_order_relaxed);
        // The entry is written before the key is published (the hash's add is a release).
        if (rte_hash_add_key_data(h_, &ev[i].key, reinterpret_cast<void*>(uintptr_t{idx})) == 0) {
          free_.pop_back();
          learned_.fetch_add(1, std::memory_order_relaxed);
          live_.fetch_add(1, std::memory_order_relaxed);
        } else {
          full_.fetch_add(1, std::memory_order_relaxed);
        }
      }
    }
  }
  if (now_ns < last_age_ns_ + 1'000'000'000ull) return;  // ageing looks once a second
  last_age_ns_ = now_ns;
  const void* key;
  void* data;
  uint32_t it = 0;
  std::vector<uint64_t> old;
  while (rte_hash_iterate(h_, &key, &data, &it) >= 0) {
    const Entry& e = entries_[reinterpret_cast<uintptr_t>(data)];
    if (now_ns > e.seen_ns.load(std::memory_order_relaxed) + ageing_ns) old.push_back(*static_cast<const uint64_t*>(key));
  }
  for (uint64_t k : old) {
    remove(k, 0);
    aged_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Fdb::flush_port(uint16_t port) {
  flush_if([port](uint16_t, uint16_t p) { return p == port; });
}

void Fdb::flush_if(const std::function<bool(uint16_t vlan, uint16_t port)>& gone) {
  const void* key;
  void* data;
  uint32_t it = 0;
  std::vector<uint64_t> keys;
  while (rte_hash_iterate(h_, &key, &data, &it) >= 0) {
    const uint64_t k = *static_cast<const uint64_t*>(key);
    if (gone(static_cast<uint16_t>(k >> 48), entries_[reinterpret_cast<uintptr_t>(data)].port.load(std::memory_order_relaxed)))
      keys.push_back(k);
  }
  for (uint64_t k : keys) remove(k, 0);
}

std::vector<Fdb::Row> Fdb::rows() const {
  std::vector<Row> out;
  const void* key;
  void* data;
  uint32_t it = 0;
  while (rte_hash_iterate(h_, &key, &data, &it) >= 0) {
    const uint64_t k = *static_cast<const uint64_t*>(key);
    const Entry& e = entries_[reinterpret_cast<uintptr_t>(data)];
    Row r{static_cast<uint16_t>(k >> 48), {}, e.port.load(std::memory_order_relaxed), e.seen_ns.load(std::memory_order_relaxed)};
    for (int i = 0; i < 6; ++i) r.mac[i] = static_cast<uint8_t>(k >> (40 - 8 * i));
    out.push_back(r);
  }
  return out;
}

uint64_t Fdb::pending() const {
  uint64_t n = 0;
  for (auto* r : learn_) n += rte_ring_count(r);
  return n;
}

}  // namespace rs
