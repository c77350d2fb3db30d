// DPDK convention: EAL options first, then `--`, then ours. This fills in what a user on a
// laptop or CI box would otherwise have to know: no hugepages -> --no-huge, and an lcore
// list sized to the worker count.
#pragma once
#include <string>
#include <vector>

namespace rs {

struct EalPlan {
  std::vector<std::string> args;  // argv[0] first
  std::vector<std::string> notes;  // one line each, printed before rte_eal_init
};

// True when the user chose the lcores (-l, -c, --lcores): then the core list sets the worker count.
bool user_chose_lcores(const std::vector<std::string>& user_eal);

// `hugepages_free` < 0 means "read /proc/meminfo". `heap_mb`: the heap asked for without hugepages
// (unless the user gave -m or --socket-mem).
EalPlan plan_eal_args(const std::vector<std::string>& user_eal, unsigned workers, long hugepages_free = -1, unsigned heap_mb = 1024);

}  // namespace rs
