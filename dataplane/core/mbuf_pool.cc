#include "dataplane/core/mbuf_pool.h"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>

namespace rs {

bool mbuf_pool_packs_pages() { return !rte_eal_has_hugepages() && rte_eal_iova_mode() == RTE_IOVA_VA; }

rte_mempool* create_mbuf_pool(const MbufPoolSpec& spec) {
  if (!mbuf_pool_packs_pages())
    return rte_pktmbuf_pool_create(spec.name.c_str(), spec.mbufs, spec.cache, spec.priv_size, spec.data_room,
                                   SOCKET_ID_ANY);
  // rte_pktmbuf_pool_create_by_ops' steps, with the one flag it cannot be given.
  if (RTE_ALIGN(spec.priv_size, RTE_MBUF_PRIV_ALIGN) != spec.priv_size) {
    rte_errno = EINVAL;
    return nullptr;
  }
  rte_mempool* mp = rte_mempool_create_empty(spec.name.c_str(), spec.mbufs,
                                             sizeof(rte_mbuf) + spec.priv_size + spec.data_room, spec.cache,
                                             sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (!mp) return nullptr;
  int rc = rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr);
  if (rc == 0) {
    rte_pktmbuf_pool_private priv{};
    priv.mbuf_data_room_size = spec.data_room;
    priv.mbuf_priv_size = spec.priv_size;
    rte_pktmbuf_pool_init(mp, &priv);
    rc = rte_mempool_populate_default(mp);
  }
  if (rc < 0) {
    rte_mempool_free(mp);
    rte_errno = -rc;
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace rs
