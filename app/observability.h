// Observability with the ecosystem's tools: a Prometheus /metrics endpoint served by civetweb
// (app/prometheus.h has the text, app/metrics_http.h the server) and the switch's own DPDK
// telemetry commands (/roceswitch/ports, /queues, /pfc, /groups, /drops, /totals), which
// dpdk-telemetry.py reads as it reads /ethdev/stats (app/telemetry_answers.h).
// docs/observability.md describes both.
//
// Threading: the switch's state is read on its main (control) thread only (the FIB snapshot
// the stats read is changed and freed there). civetweb answers on its own threads and DPDK
// runs telemetry callbacks on its telemetry thread, so both post their request to a mailbox
// (app/main_thread_mailbox.h) and wait (bounded: answer_timeout, then HTTP 503 / a telemetry
// error); the main loop runs the requests in serve_pending(), once per turn. Workers never see
// any of it.
//
// This header is the whole interface (main.cc and the tests include only it): the mailbox and
// the telemetry answers come with it.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "app/main_thread_mailbox.h"
#include "app/telemetry_answers.h"
#include "dataplane/switch/switch.h"

namespace rs {

class MetricsHttpServer;

struct ObservabilityOptions {
  std::string metrics_listen;  // "" = no HTTP; "ADDR:PORT" (IPv4 address; port 0 = any free port)
  bool telemetry = true;       // register the /roceswitch/* DPDK telemetry commands
  // How long an HTTP or telemetry request waits for the main thread (serve_pending).
  std::chrono::milliseconds answer_timeout{2000};
};

class Observability {
 public:
  // Starts civetweb when metrics_listen is set and registers the telemetry commands; throws
  // std::runtime_error with a clear reason (bad address, port in use, another Observability
  // holds the telemetry commands).
  Observability(const Switch& sw, ObservabilityOptions opts);
  // Stops civetweb; telemetry commands answer {"error": "switch stopped"} afterwards (DPDK
  // cannot unregister commands).
  ~Observability();
  Observability(const Observability&) = delete;
  Observability& operator=(const Observability&) = delete;

  void serve_pending();              // main thread, once per loop turn
  std::string metrics_text() const;  // the /metrics body, main thread
  // The port civetweb listens on (the free port it took for ":0"); 0 without HTTP.
  uint16_t metrics_port() const { return port_; }

 private:
  const Switch& sw_;
  ObservabilityOptions opts_;
  std::shared_ptr<MainThreadMailbox> mailbox_;
  std::unique_ptr<MetricsHttpServer> http_;
  uint16_t port_ = 0;
  bool telemetry_owner_ = false;
};

}  // namespace rs
