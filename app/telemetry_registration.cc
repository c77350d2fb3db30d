#include "app/telemetry_registration.h"

#include <fmt/core.h>
#include <rte_telemetry.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "app/telemetry_answers.h"

namespace rs {

namespace {

using ojson = nlohmann::ordered_json;

struct TelemetryHolder {
  std::mutex mu;
  std::shared_ptr<MainThreadMailbox> mailbox;
  const Switch* sw = nullptr;
  std::chrono::milliseconds wait{2000};
  bool registered = false;  // tried: the commands are DPDK's for good
  std::string register_error;
};
// Never destroyed: DPDK's telemetry thread may call in while the process exits.
TelemetryHolder& holder() {
  static auto* h = new TelemetryHolder;
  return *h;
}

int tel_error(rte_tel_data* d, const std::string& msg) {
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "error", msg.c_str());
  return 0;
}

int telemetry_callback(const char* cmd, const char* params, rte_tel_data* d) {
  std::shared_ptr<MainThreadMailbox> mb;
  const Switch* sw = nullptr;
  std::chrono::milliseconds wait{0};
  {
    TelemetryHolder& h = holder();
    std::lock_guard lk(h.mu);
    mb = h.mailbox;
    sw = h.sw;
    wait = h.wait;
  }
  if (!mb) return tel_error(d, "switch stopped");
  auto answer = std::make_shared<ojson>();
  std::string c = cmd ? cmd : "", p = params ? params : "", err;
  switch (mb->call([answer, sw, c, p] { *answer = telemetry_answer(*sw, c, p); }, wait, &err)) {
    case MainThreadMailbox::Result::Done:
      if (telemetry_fill(*answer, d) < 0) return tel_error(d, "the answer does not fit DPDK telemetry's data");
      return 0;
    case MainThreadMailbox::Result::Timeout:
      return tel_error(d, fmt::format("the switch's main thread did not answer within {} ms", wait.count()));
    case MainThreadMailbox::Result::Closed:
      return tel_error(d, "switch stopped");
    case MainThreadMailbox::Result::Failed:
      return tel_error(d, err);
  }
  return -1;
}

}  // namespace

void telemetry_attach(const Switch& sw, std::shared_ptr<MainThreadMailbox> mailbox, std::chrono::milliseconds wait) {
  TelemetryHolder& h = holder();
  std::lock_guard lk(h.mu);
  if (h.mailbox) throw std::runtime_error("DPDK telemetry: another Observability of this process holds the /roceswitch commands");
  if (!h.registered) {
    h.registered = true;
    for (const TelemetryCommand& c : kTelemetryCommands)
      if (const int rc = rte_telemetry_register_cmd(c.name, telemetry_callback, c.help); rc != 0) {
        h.register_error = fmt::format("DPDK telemetry: cannot register {}: {}", c.name,
                                       rc == -ENOENT ? "too many telemetry commands in this process" : std::strerror(-rc));
        break;
      }
  }
  if (!h.register_error.empty()) throw std::runtime_error(h.register_error);
  h.mailbox = std::move(mailbox);
  h.sw = &sw;
  h.wait = wait;
}

void telemetry_detach() {
  TelemetryHolder& h = holder();
  std::lock_guard lk(h.mu);
  h.mailbox.reset();
  h.sw = nullptr;
}

}  // namespace rs
