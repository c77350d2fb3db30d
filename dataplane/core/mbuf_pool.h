// The switch's packet buffer pool: rte_pktmbuf_pool_create's pool, laid out for the cache
// when the memory is 4 KiB pages.
#pragma once
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <cstdint>
#include <string>

namespace rs {

struct MbufPoolSpec {
  std::string name;
  unsigned mbufs = 0;
  unsigned cache = 0;      // per-lcore cache size
  uint16_t priv_size = 0;  // metadata area after each mbuf header
  uint16_t data_room = RTE_MBUF_DEFAULT_BUF_SIZE;
};

// Why not rte_pktmbuf_pool_create as it is: without hugepages DPDK keeps every object inside
// one 4 KiB page (a NIC could DMA across the boundary only if the pages were physically
// contiguous), and an mbuf of the default size is over half a page, so each mbuf starts a page
// of its own. Every mbuf header, metadata line and frame then sits at the same page offset,
// which is the same L1 set: 12 ways for all packets in flight and for the pcap PMD's stored
// frames. Where no device needs that (no hugepages and IOVA as VA, which is how --no-huge
// runs), the objects are packed across pages instead (RTE_MEMPOOL_F_NO_IOVA_CONTIG), as
// testpmd's --mp-alloc=anon --no-iova-contig does. With hugepages the pool is DPDK's default.
// Returns nullptr with rte_errno set on failure.
rte_mempool* create_mbuf_pool(const MbufPoolSpec& spec);

// Whether create_mbuf_pool packs objects across pages in this process (after EAL init).
bool mbuf_pool_packs_pages();

}  // namespace rs
