// flowlet_quality: SAI ARS's SAI_ARS_MODE_FLOWLET_QUALITY (OCP SAI saiars.h), the mode of
// Broadcom's dynamic load balancing (DLB) and of SONiC's ARS. The flowlet table of
// flowlet_random (LetFlow), but a new flowlet takes a member of the best quality band the load
// view reports (7 = least loaded; queued bytes and the tx rate's EWMA, as SAI_ARS_PROFILE's
// future and past port load), a random one among equals. A flowlet never moves while it is
// active, however the bands change: only a member that goes down moves it at once.
//
// The table and its rules are in flowlet.h.
#include "dataplane/routing/policies/flowlet.h"

namespace rs {
namespace {

using FlowletQuality = Flowlet<true>;
REGISTER_ROUTING_POLICY(FlowletQuality, "flowlet_quality");

}  // namespace
}  // namespace rs
