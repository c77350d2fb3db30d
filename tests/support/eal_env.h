// One EAL per test process: --no-huge, no PCI, a per-pid file prefix so meson's parallel test
// processes never collide. Also the shared mbuf pool tests build packets from.
#pragma once
#include <rte_mempool.h>

#include <string>
#include <vector>

namespace rs::test {

// Idempotent; `extra` EAL args (e.g. --vdev=...) only take effect on the first call.
void init_test_eal(const std::vector<std::string>& extra = {});
void shutdown_test_eal();
// 8191 mbufs with the PacketMeta private area, laid out as the switch lays out its own
// (create_mbuf_pool), shared by the tests of one process.
rte_mempool* test_pool();

}  // namespace rs::test
