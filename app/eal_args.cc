#include "app/eal_args.h"

#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <fstream>

namespace rs {
namespace {

bool has(const std::vector<std::string>& v, std::initializer_list<const char*> opts) {
  for (auto& a : v)
    for (auto o : opts) {
      const std::string s(o);
      if (a == s || a.rfind(s + "=", 0) == 0 || (s.size() == 2 && a.rfind(s, 0) == 0 && a.size() > 2)) return true;
    }
  return false;
}

long read_free_hugepages() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  long v;
  while (in >> key >> v) {
    if (key == "HugePages_Free:") return v;
    in.ignore(256, '\n');
  }
  return 0;
}

std::vector<int> allowed_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

}  // namespace

bool user_chose_lcores(const std::vector<std::string>& user_eal) {
  if (user_eal.size() < 2) return false;
  return has(std::vector<std::string>(user_eal.begin() + 1, user_eal.end()), {"-l", "-c", "--lcores"});
}

EalPlan plan_eal_args(const std::vector<std::string>& user_eal, unsigned workers, long hugepages_free, unsigned heap_mb) {
  EalPlan plan;
  plan.args = user_eal;
  if (plan.args.empty()) plan.args.push_back("roceswitch");
  const std::vector<std::string> user(plan.args.begin() + 1, plan.args.end());
  if (!has(user, {"--no-huge"})) {
    if (hugepages_free < 0) hugepages_free = read_free_hugepages();
    if (hugepages_free == 0) {
      plan.args.push_back("--no-huge");
      if (!has(user, {"-m", "--socket-mem"})) plan.args.push_back(fmt::format("-m{}", heap_mb));
      // Nothing to share without hugepages; a per-process prefix lets runs coexist.
      if (!has(user, {"--no-shconf"})) plan.args.push_back("--no-shconf");
      // Without hugepages no PCI NIC can do DMA; skip the bus scan unless devices were named.
      if (!has(user, {"--no-pci", "-a", "--allow", "-b", "--block"})) plan.args.push_back("--no-pci");
      if (!has(user, {"--file-prefix"})) plan.args.push_back(fmt::format("--file-prefix=roceswitch-{}", getpid()));
      plan.notes.push_back("no free hugepages: running with --no-huge (heap memory; fine for virtual ports, not for real NICs)");
    }
  }
  if (!has(user, {"-l", "-c", "--lcores"})) {
    // Main lcore for housekeeping plus one per worker, spread over the CPUs we may use.
    const auto cpus = allowed_cpus();
    std::string map;
    for (unsigned i = 0; i <= workers; ++i) map += fmt::format("{}{}@{}", i ? "," : "", i, cpus[i % cpus.size()]);
    plan.args.push_back("--lcores=" + map);
  }
  return plan;
}

}  // namespace rs
