// nexthop_forward: nexthop_select, then rewrite_enqueue, run to completion packet by packet (a
// chain, core/step_stage.h): the policies are called for the whole burst first (the stage's
// prepare), then each packet takes its member, its rewrite and its queue in one pass, as the
// ipv4_forward chain does for groups whose member is chosen inline.
#include "dataplane/stages/nexthop_select.h"
#include "dataplane/stages/rewrite_enqueue.h"

namespace rs {

using NexthopForward = Chain<"nexthop_forward", NexthopSelect, RewriteEnqueue>;
REGISTER_STAGE(NexthopForward);

}  // namespace rs
