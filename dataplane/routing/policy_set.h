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
  // `previous` (may be null) lends its instances to the groups marked in `same`: a group whose
  // policy and members did not change keeps its state (flowlet tables, counters) across a
  // snapshot. The worker is the instance's only user, whichever snapshot it reads.
  PolicySet(const FibGroups& groups, uint16_t worker, uint64_t seed, const PolicySet* previous = nullptr,
            const std::vector<bool>* same = nullptr);
  RoutingPolicy* at(uint32_t group, uint8_t tc) const { return by_group_tc_[group * 8 + (tc & 7)]; }
  // Every instance with its group id and choice index (for the stats).
  struct Instance {
    uint32_t group;
    uint8_t choice;
    RoutingPolicy* policy;
  };
  const std::vector<Instance>& instances() const { return instances_; }
  // Distinct for every set ever made (never 0): instances outlive a set, and what they cached
  // under one must not be taken for another.
  uint64_t serial() const { return serial_; }

 private:
  uint64_t serial_;
  std::vector<std::shared_ptr<RoutingPolicy>> owned_;  // aligned with instances_
  std::vector<RoutingPolicy*> by_group_tc_;
  std::vector<Instance> instances_;
};

// What a policy knows of a FIB group (member next hops, their ports, the table as members).
PolicyGroup policy_group(const FibGroups& groups, uint32_t group);
inline PolicyGroup policy_group(const Fib& fib, uint32_t group) { return policy_group(fib.groups(), group); }

}  // namespace rs
