#include "dataplane/tm/buffer/shared_buffer.h"

#include <fmt/core.h>

#include <stdexcept>

namespace rs {

SharedBuffer::SharedBuffer(const MmuConfig& cfg, const std::vector<PortLosslessConfig>& ports, uint16_t workers,
                           uint64_t static_limits, bool any_dynamic)
    : cfg_(cfg), cell_mask_(cfg.pool.cell_size - 1), workers_(workers), usage_(workers) {
  if (cfg.pool.cell_size == 0 || (cfg.pool.cell_size & cell_mask_) != 0)
    throw std::runtime_error(fmt::format("buffer.pool.cell_size: {} is not a power of two", cfg.pool.cell_size));
  if (ports.size() > kMaxPorts) throw std::runtime_error("too many ports");
  for (std::size_t p = 0; p < ports.size(); ++p)
    for (uint8_t g = 0; g < 8; ++g) {
      reserved_total_ += ports[p].reserved[g];
      const PgSettings& s = ports[p].pg[g];
      pg_[p][g] = s;
      if (!s.lossless) continue;
      lossless_[p] |= static_cast<uint8_t>(1u << g);
      any_lossless_ = true;
      headroom_total_ += s.headroom;
    }
  if (cfg_.pool.size == 0) cfg_.pool.size = static_limits + headroom_total_ + reserved_total_;
  if (headroom_total_ + reserved_total_ >= cfg_.pool.size)
    throw std::runtime_error(fmt::format("buffer: lossless headroom ({} bytes) and reserved queue sizes ({} bytes) do not fit in the {}-byte pool",
                                         headroom_total_, reserved_total_, cfg_.pool.size));
  shared_size_ = cfg_.pool.size - headroom_total_ - reserved_total_;
  pool_can_fill_ = any_dynamic || static_limits > shared_size_;
}

}  // namespace rs
