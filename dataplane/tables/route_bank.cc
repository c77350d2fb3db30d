#include "dataplane/tables/route_bank.h"

#include <fmt/core.h>
#include <rte_errno.h>

#include <sys/mman.h>

#include <cerrno>
#include <cstddef>
#include <stdexcept>

#include "dataplane/core/object_name.h"

namespace rs {

namespace {
uint32_t host_order(const uint8_t a[16]) {
  return static_cast<uint32_t>(a[0]) << 24 | static_cast<uint32_t>(a[1]) << 16 | static_cast<uint32_t>(a[2]) << 8 | a[3];
}
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14; older headers lack it
#endif

// Faults every page of [p, p + len) in now: in one call where the kernel can (Linux 5.14),
// else by writing each page its own first byte. Only for memory no one else uses yet.
void make_resident(void* p, std::size_t len) {
  const std::size_t page = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
  const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + len + page - 1) & ~(page - 1);
  if (madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE) == 0) return;
  volatile uint8_t* b = static_cast<uint8_t*>(p);
  for (std::size_t off = 0; off < len; off += page) b[off] = b[off];
}
}  // namespace

RouteBank::~RouteBank() {
  if (v4_) rte_lpm_free(v4_);
  if (v6_) rte_lpm6_free(v6_);
}

int RouteBank::add(const RouteSpec& r) {
  if (r.depth == 0) {
    (r.ipv6 ? default_v6_ : default_v4_) = r.group;
    return 0;
  }
  if (r.ipv6) {
    if (!v6_) {
      rte_lpm6_config c{};
      c.max_rules = limits_.v6;
      c.number_tbl8s = limits_.v6_tbl8;
      v6_ = rte_lpm6_create(unique_object_name("fib6_").c_str(), SOCKET_ID_ANY, &c);
      if (!v6_) throw std::runtime_error(fmt::format("rte_lpm6_create failed: {}", rte_strerror(rte_errno)));
    }
    return rte_lpm6_add(v6_, r.addr, r.depth, r.group);
  }
  if (!v4_) {
    rte_lpm_config c{};
    c.max_rules = limits_.v4;
    c.number_tbl8s = limits_.v4_tbl8;
    v4_ = rte_lpm_create(unique_object_name("fib4_").c_str(), SOCKET_ID_ANY, &c);
    if (!v4_) throw std::runtime_error(fmt::format("rte_lpm_create failed: {}", rte_strerror(rte_errno)));
    if (limits_.prefault) {
      make_resident(v4_->tbl24, sizeof(v4_->tbl24));
      make_resident(v4_->tbl8, std::size_t{c.number_tbl8s} * RTE_LPM_TBL8_GROUP_NUM_ENTRIES * sizeof(rte_lpm_tbl_entry));
    }
  }
  return rte_lpm_add(v4_, host_order(r.addr), r.depth, r.group);
}

int RouteBank::del(bool ipv6, const uint8_t addr[16], uint8_t depth) {
  if (depth == 0) {
    int64_t& d = ipv6 ? default_v6_ : default_v4_;
    if (d < 0) return -ENOENT;
    d = -1;
    return 0;
  }
  if (ipv6) return v6_ ? rte_lpm6_delete(v6_, addr, depth) : -ENOENT;
  return v4_ ? rte_lpm_delete(v4_, host_order(addr), depth) : -ENOENT;
}

}  // namespace rs
