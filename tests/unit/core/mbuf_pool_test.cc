// The switch's mbuf pool: under --no-huge (how the tests run EAL) its objects are packed across
// 4 KiB pages instead of one per page at one page offset, and each is a normal pktmbuf.
#include "dataplane/core/mbuf_pool.h"

#include <gtest/gtest.h>
#include <rte_errno.h>
#include <rte_mbuf.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

#include "dataplane/core/packet_meta.h"
#include "tests/support/eal_env.h"

namespace rs::test {
namespace {

constexpr unsigned kMbufs = 1023;
constexpr std::size_t kPage = 4096;

std::set<uintptr_t> page_offsets(rte_mempool* mp, unsigned n) {
  std::vector<rte_mbuf*> ms(n);
  EXPECT_EQ(rte_pktmbuf_alloc_bulk(mp, ms.data(), n), 0);
  std::set<uintptr_t> offsets;
  for (rte_mbuf* m : ms) offsets.insert(reinterpret_cast<uintptr_t>(m) % kPage);
  rte_pktmbuf_free_bulk(ms.data(), n);
  return offsets;
}

TEST(MbufPool, PacksObjectsAcrossPagesWithoutHugepages) {
  init_test_eal();
  ASSERT_TRUE(mbuf_pool_packs_pages()) << "the tests run EAL with --no-huge, IOVA as VA";
  rte_mempool* mp = create_mbuf_pool({.name = "mbuf_pool_t1", .mbufs = kMbufs, .cache = 0, .priv_size = kMbufPrivSize});
  ASSERT_NE(mp, nullptr) << rte_strerror(rte_errno);
  // Many page offsets (so many L1 sets) among the headers, not the single one DPDK's default
  // layout gives objects of over half a page.
  EXPECT_GT(page_offsets(mp, 256).size(), 16u);
  rte_mempool_free(mp);
}

TEST(MbufPool, DefaultLayoutIsOnePerPage) {
  // Why the pool above exists: the stock pool of the same objects puts every header at one
  // page offset. If a DPDK release changes that, the special layout may no longer be needed.
  init_test_eal();
  rte_mempool* mp = rte_pktmbuf_pool_create("mbuf_pool_t2", kMbufs, 0, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE,
                                            SOCKET_ID_ANY);
  ASSERT_NE(mp, nullptr);
  EXPECT_EQ(page_offsets(mp, 256).size(), 1u);
  rte_mempool_free(mp);
}

TEST(MbufPool, ObjectsAreWholePktmbufs) {
  init_test_eal();
  rte_mempool* mp = create_mbuf_pool({.name = "mbuf_pool_t3", .mbufs = kMbufs, .cache = 32, .priv_size = kMbufPrivSize});
  ASSERT_NE(mp, nullptr);
  EXPECT_EQ(rte_pktmbuf_data_room_size(mp), RTE_MBUF_DEFAULT_BUF_SIZE);
  EXPECT_EQ(rte_pktmbuf_priv_size(mp), kMbufPrivSize);
  EXPECT_EQ(mp->size, kMbufs);
  // Every mbuf can be taken at once, and each one's metadata and whole data room are its own
  // (a neighbour's header is intact after filling them: ASan builds would also see an overrun).
  std::vector<rte_mbuf*> ms(kMbufs);
  ASSERT_EQ(rte_pktmbuf_alloc_bulk(mp, ms.data(), kMbufs), 0);
  for (rte_mbuf* m : ms) {
    EXPECT_EQ(m->pool, mp);
    EXPECT_EQ(m->priv_size, kMbufPrivSize);
    EXPECT_EQ(m->data_off, RTE_PKTMBUF_HEADROOM);
    EXPECT_EQ(rte_pktmbuf_tailroom(m), RTE_MBUF_DEFAULT_BUF_SIZE - RTE_PKTMBUF_HEADROOM);
    std::memset(rte_mbuf_to_priv(m), 0xA5, kMbufPrivSize);
    std::memset(m->buf_addr, 0x5A, m->buf_len);
  }
  for (rte_mbuf* m : ms) {
    EXPECT_EQ(m->pool, mp);
    EXPECT_EQ(rte_mbuf_refcnt_read(m), 1);
    EXPECT_EQ(m->nb_segs, 1);
  }
  rte_pktmbuf_free_bulk(ms.data(), kMbufs);
  EXPECT_EQ(rte_mempool_avail_count(mp), kMbufs);
  rte_mempool_free(mp);
}

TEST(MbufPool, RejectsUnalignedPrivateArea) {
  init_test_eal();
  EXPECT_EQ(create_mbuf_pool({.name = "mbuf_pool_t4", .mbufs = 63, .cache = 0, .priv_size = 12}), nullptr);
  EXPECT_EQ(rte_errno, EINVAL);
}

}  // namespace
}  // namespace rs::test
