// One worker's routing policy instances for the groups of one FIB snapshot: an instance per
// (group, policy choice), found by (group, traffic class). Made with the snapshot
// (Fib::attach_policies) and freed with it.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "dataplane/routing/routing_policy.h"
#include "dataplane/tables/fib.h"

namespace rs {

class PolicySet {
 public:
  PolicySet(const Fib& fib, uint16_t worker, uint64_t seed);
  RoutingPolicy* at(uint32_t group, uint8_t tc) const { return by_group_tc_[group * 8 + (tc & 7)]; }
  // Every instance with its group id and choice index (for the stats).
  struct Instance {
    uint32_t group;
    uint8_t choice;
    RoutingPolicy* policy;
  };
  const std::vector<Instance>& instances() const { return instances_; }

 private:
  std::vector<std::unique_ptr<RoutingPolicy>> owned_;
  std::vector<RoutingPolicy*> by_group_tc_;
  std::vector<Instance> instances_;
};

// What a policy knows of a FIB group (member next hops, their ports, the table as members).
PolicyGroup policy_group(const Fib& fib, uint32_t group);

}  // namespace rs
