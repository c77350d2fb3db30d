// What a Clos fabric's routing protocol does when a cable fails or comes back (eBGP with
// multipath, RFC 7938): once it has converged, every switch routes each host over the shortest
// paths of the cables that are up. The emulation does not exchange the protocol's messages: it
// applies the converged routes `convergence` after each scheduled cable event, on every switch
// at the same virtual instant, each switch's changes as one control-plane transaction (the path
// an operator's `roceswitch-ctl` takes: RunningState, one FIB snapshot under RCU).
//
// Until then a switch has its own fast failover only: a group leaves out its dead members, and a
// switch whose every member towards a host is dead drops what it gets for that host
// (no_live_member): the black hole far switches keep sending into until their routes change.
#pragma once
#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dataplane/fabric/fabric.h"

namespace rs {

class RunningState;

class FabricRouting {
 public:
  // Schedules a convergence `convergence_ns` after each of the fabric's cable events (events at
  // the same time converge once). `fab` must outlive this object and run after it is made.
  FabricRouting(Fabric& fab, uint64_t convergence_ns);
  ~FabricRouting();
  FabricRouting(const FabricRouting&) = delete;
  FabricRouting& operator=(const FabricRouting&) = delete;

  struct Update {
    uint64_t at_ns = 0;        // after the start
    std::size_t switches = 0;  // switches whose routes changed
    std::size_t routes = 0;    // host routes changed (moved to another group or withdrawn)
    std::size_t withdrawn = 0; // of which withdrawn: no path left
    std::vector<std::string> errors;  // a switch that refused its transaction: name and reason
  };
  const std::vector<Update>& updates() const { return updates_; }
  uint64_t convergence_ns() const { return convergence_ns_; }
  // {convergence_us, updates: [{at_us, switches, routes, withdrawn, errors}]}
  nlohmann::json json() const;

 private:
  void converge();

  Fabric& fab_;
  uint64_t convergence_ns_;
  // Per switch, made at the first convergence: the control plane's model of the running switch.
  std::vector<std::unique_ptr<RunningState>> state_;
  std::vector<Update> updates_;
};

}  // namespace rs
