// flowlet_random: LetFlow (Vanini et al., "Let It Flow: Resilient Asymmetric Load Balancing
// with Flowlet Switching", NSDI'17); SAI ARS's SAI_ARS_MODE_FLOWLET_RANDOM. A flow keeps its
// member while its packets come closer together than the idle time; after a longer gap the
// packets in flight have left, so the next burst of the flow (a new flowlet) can take another
// path without reordering: it takes a random live member. Paths that are slow or congested
// end flowlets less often, so they keep less traffic, with no load measured at all.
// The table and its rules are in flowlet.h.
#include "dataplane/routing/policies/flowlet.h"

namespace rs {
namespace {

using FlowletRandom = Flowlet<false>;
REGISTER_ROUTING_POLICY(FlowletRandom, "flowlet_random");

}  // namespace
}  // namespace rs
