#include "dataplane/tm/buffer/shared_buffer.h"

#include <fmt/core.h>

#include <stdexcept>

namespace rs {

SharedBuffer::Layout SharedBuffer::layout(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint64_t static_limits) {
  if (ports.size() > kMaxPorts) throw std::runtime_error("too many ports");
  Layout l;
  l.table = std::make_unique<PgTable>();
  for (std::size_t p = 0; p < ports.size(); ++p)
    for (uint8_t g = 0; g < 8; ++g) {
      l.reserved += ports[p].reserved[g];
      const PgSettings& s = ports[p].pg[g];
      l.table->pg[p][g] = s;
      if (s.lossless) l.headroom += s.headroom;
    }
  l.pool = cfg.pool.size ? cfg.pool.size : static_limits + l.headroom + l.reserved;
  if (l.headroom + l.reserved >= l.pool)
    throw std::runtime_error(fmt::format("buffer: lossless headroom ({} bytes) and reserved queue sizes ({} bytes) do not fit in the {}-byte pool",
                                         l.headroom, l.reserved, l.pool));
  return l;
}

SharedBuffer::SharedBuffer(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint16_t workers,
                           uint64_t static_limits, bool any_dynamic)
    : cfg_(cfg), cell_mask_(cfg.pool.cell_size - 1), workers_(workers), usage_(workers) {
  if (cfg.pool.cell_size == 0 || (cfg.pool.cell_size & cell_mask_) != 0)
    throw std::runtime_error(fmt::format("buffer.pool.cell_size: {} is not a power of two", cfg.pool.cell_size));
  Layout l = layout(cfg, ports, static_limits);
  for (std::size_t p = 0; p < ports.size(); ++p)
    for (uint8_t g = 0; g < 8; ++g)
      if (ports[p].pg[g].lossless) {
        lossless_[p] |= static_cast<uint8_t>(1u << g);
        any_lossless_ = true;
      }
  cfg_.pool.size = l.pool;
  headroom_total_ = l.headroom;
  reserved_total_ = l.reserved;
  shared_size_ = l.pool - l.headroom - l.reserved;
  pool_can_fill_ = any_dynamic || static_limits > shared_size_;
  pgs_.publish(std::move(l.table));
}

void SharedBuffer::reconfigure(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint64_t static_limits,
                               bool any_dynamic) {
  for (std::size_t p = 0; p < ports.size(); ++p)
    for (uint8_t g = 0; g < 8; ++g)
      if (ports[p].pg[g].lossless != static_cast<bool>(lossless_[p] & (1u << g)))
        throw std::runtime_error(fmt::format("port {} PG {}: lossless or not is set at start-up", p, g));
  Layout l = layout(cfg, ports, static_limits);
  cfg_.pool.size = l.pool;
  cfg_.pfcwd = cfg.pfcwd;
  headroom_total_ = l.headroom;
  reserved_total_ = l.reserved;
  // A shrinking shared part first shows as less free pool, never as more: admission may refuse
  // a little early for one poll, never admit past the new split.
  const uint64_t shared = l.pool - l.headroom - l.reserved;
  shared_size_.store(shared, std::memory_order_relaxed);
  pool_can_fill_.store(any_dynamic || static_limits > shared, std::memory_order_relaxed);
  pgs_.publish(std::move(l.table));
}

}  // namespace rs
