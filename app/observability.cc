#include "app/observability.h"

#include <stdexcept>
#include <utility>

#include "app/metrics_http.h"
#include "app/prometheus.h"
#include "app/telemetry_registration.h"

namespace rs {

Observability::Observability(const Switch& sw, ObservabilityOptions opts)
    : sw_(sw), opts_(std::move(opts)), mailbox_(std::make_shared<MainThreadMailbox>()) {
  if (opts_.answer_timeout.count() <= 0) throw std::runtime_error("observability: answer_timeout must be positive");
  if (!opts_.metrics_listen.empty()) {
    http_ = std::make_unique<MetricsHttpServer>(sw_, opts_.metrics_listen, mailbox_, opts_.answer_timeout);
    port_ = http_->port();
  }
  if (opts_.telemetry) {
    telemetry_attach(sw_, mailbox_, opts_.answer_timeout);
    telemetry_owner_ = true;
  }
}

Observability::~Observability() {
  if (telemetry_owner_) telemetry_detach();
  mailbox_->close();  // waiting telemetry callbacks and HTTP handlers answer at once
  http_.reset();      // stops civetweb (its threads are joined)
}

void Observability::serve_pending() { mailbox_->drain(); }

std::string Observability::metrics_text() const { return prometheus_metrics(sw_); }

}  // namespace rs
