// ipv4_forward: l3_input, ipv4_route and rewrite_enqueue run to completion packet by packet
// (a chain, core/step_stage.h): the same three stages, their bodies and counters, in one pass
// over the burst instead of three. What leaves the chain early takes the stage's own edge:
// IPv6 and MAC control from l3_input, groups with a routing policy from ipv4_route.
#include "dataplane/stages/ip_route.h"
#include "dataplane/stages/l3_input.h"
#include "dataplane/stages/rewrite_enqueue.h"

namespace rs {

using Ipv4Forward = Chain<"ipv4_forward", L3Input, Ipv4Route, RewriteEnqueue>;
REGISTER_STAGE(Ipv4Forward);

}  // namespace rs
