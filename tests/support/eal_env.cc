#include "tests/support/eal_env.h"

#include <fmt/core.h>
#include <rte_eal.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "dataplane/core/mbuf_pool.h"
#include "dataplane/core/packet_meta.h"

namespace rs::test {
namespace {
rte_mempool* g_pool = nullptr;
}  // namespace

void init_test_eal(const std::vector<std::string>& extra) {
  if (g_pool) return;
  const std::string prefix = fmt::format("--file-prefix=rstest-{}", getpid());
  std::vector<std::string> args = {"test", "--no-huge", "-m1024", "--no-pci", "--no-shconf", prefix,
                                   "--lcores=0@0,1@0", "--log-level=lib.*:error"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  rte_log_set_global_level(RTE_LOG_ERR);
  if (rte_eal_init(static_cast<int>(argv.size()), argv.data()) < 0) {
    std::fprintf(stderr, "test: EAL init failed\n");
    std::exit(1);
  }
  // The switch's own pool layout, so tests and benchmarks see the production mbufs.
  g_pool = create_mbuf_pool({.name = "test_pool", .mbufs = 8191, .cache = 256, .priv_size = kMbufPrivSize});
  if (!g_pool) {
    std::fprintf(stderr, "test: mbuf pool creation failed\n");
    std::exit(1);
  }
}

void shutdown_test_eal() {
  rte_mempool_free(g_pool);
  g_pool = nullptr;
  rte_eal_cleanup();
}

rte_mempool* test_pool() { return g_pool; }

}  // namespace rs::test
