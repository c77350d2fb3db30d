// The /roceswitch/* commands (app/telemetry_answers.h) in DPDK's telemetry: registered once a
// process (DPDK cannot unregister them), they answer through the mailbox of the Observability
// that holds them, if any. DPDK runs them on its telemetry thread, so each posts its request to
// that mailbox and waits (bounded, then a telemetry error) for the switch's main thread.
#pragma once
#include <chrono>
#include <memory>

#include "app/main_thread_mailbox.h"
#include "dataplane/switch/switch.h"

namespace rs {

// Registers the commands if this process has not yet, then lets them answer from `sw` through
// `mailbox`, each waiting at most `wait`. Throws std::runtime_error with the reason when DPDK
// refuses a command or another holder has them.
void telemetry_attach(const Switch& sw, std::shared_ptr<MainThreadMailbox> mailbox, std::chrono::milliseconds wait);
// The holder lets go: the commands answer {"error": "switch stopped"} until the next attach.
void telemetry_detach();

}  // namespace rs
