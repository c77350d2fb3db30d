// The bridge's forwarding database: (VLAN, MAC) -> port, in an rte_hash that workers read
// without locks (RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF) and one control thread writes. A
// deleted key's slot is reused only after every worker passed a quiescent state (the hash's
// own RCU integration, rte_hash_rcu_qsbr_add), so a reader never sees it reused under it.
// Workers do not write the table: a source MAC that is new or has moved is reported on the
// worker's learn ring (as an ASIC notifies its CPU of learning events), and the control thread
// adds it; a known source refreshes its entry's last-seen time in place (a relaxed store, at
// most once a second a source). The control thread also ages entries out.
#pragma once
#include <rte_hash.h>
#include <rte_ring.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dataplane/core/types.h"
#include "dataplane/tables/vlan_table.h"

struct rte_rcu_qsbr;

namespace rs {

class Fdb {
 public:
  struct Entry {
    std::atomic<uint16_t> port{kInvalidPort};
    std::atomic<uint64_t> seen_ns{0};
  };
  struct Learn {  // a learn event, 16 bytes on the ring
    uint64_t key;
    uint16_t port;
    uint16_t pad[3];
  };
  struct Row {  // what fdb.list shows
    uint16_t vlan;
    uint8_t mac[6];
    uint16_t port;
    uint64_t seen_ns;
  };

  Fdb(uint32_t capacity, uint16_t workers, rte_rcu_qsbr* qsbr);
  ~Fdb();
  Fdb(const Fdb&) = delete;
  Fdb& operator=(const Fdb&) = delete;

  static uint64_t key(uint16_t vlan, const uint8_t* mac) {
    uint64_t k = uint64_t{vlan} << 48;
    for (int i = 0; i < 6; ++i) k |= uint64_t{mac[i]} << (40 - 8 * i);
    return k;
  }

  // Worker side, lock-free.
  Entry* lookup(uint64_t k) const {
    void* d;
    if (rte_hash_lookup_data(h_, &k, &d) < 0) return nullptr;
    return &entries_[reinterpret_cast<uintptr_t>(d)];
  }
  // A source to learn (new, or moved to `port`); false when the ring is full (counted).
  bool report(uint16_t worker, uint64_t k, uint16_t port) {
    Learn ev{k, port, {}};
    return rte_ring_sp_enqueue_elem(learn_[worker], &ev, sizeof ev) == 0;
  }

  // Control thread: the learn events (but for a port not in the VLAN in `vlans`, when given:
  // a worker may still report from the table before a change), then entries not seen for
  // `ageing_ns` go.
  void poll(uint64_t now_ns, uint64_t ageing_ns, const VlanTable* vlans = nullptr);
  // Entries of `port` (its link went down, as a bridge flushes a port's addresses).
  void flush_port(uint16_t port);
  // Entries for which `gone(vlan, port)` is true (a port left a VLAN).
  void flush_if(const std::function<bool(uint16_t vlan, uint16_t port)>& gone);
  std::vector<Row> rows() const;
  // Entries in the table (rte_hash_count would also count deleted keys whose slots wait for
  // the grace period).
  uint32_t size() const { return live_.load(std::memory_order_relaxed); }
  uint64_t learned() const { return learned_.load(std::memory_order_relaxed); }
  uint64_t moved() const { return moved_.load(std::memory_order_relaxed); }
  uint64_t aged() const { return aged_.load(std::memory_order_relaxed); }
  uint64_t full() const { return full_.load(std::memory_order_relaxed); }
  uint64_t pending() const;  // learn events on the rings

 private:
  static void free_slot(void* self, void* data);
  void remove(uint64_t k, uint32_t index);

  rte_hash* h_ = nullptr;
  std::unique_ptr<Entry[]> entries_;
  // Entry indices not in use (control thread). Twice the table's size: a deleted key's entry
  // comes back only after the grace period, and the hash may hold as many deleted keys waiting
  // (its defer queue) as live ones.
  std::vector<uint32_t> free_;
  std::vector<rte_ring*> learn_;
  std::atomic<uint64_t> learned_{0}, moved_{0}, aged_{0}, full_{0};
  std::atomic<uint32_t> live_{0};
  uint64_t last_age_ns_ = 0;
};

}  // namespace rs
