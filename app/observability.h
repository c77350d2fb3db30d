// Observability with the ecosystem's tools: a Prometheus /metrics endpoint served by civetweb
// (app/prometheus.h has the text) and the switch's own DPDK telemetry commands
// (/roceswitch/ports, /queues, /pfc, /groups, /drops, /totals), which dpdk-telemetry.py reads
// as it reads /ethdev/stats. docs/observability.md describes both.
//
// Threading: the switch's state is read on its main (control) thread only (the FIB snapshot
// the stats read is changed and freed there). civetweb answers on its own threads and DPDK
// runs telemetry callbacks on its telemetry thread, so both post their request to a mailbox
// and wait (bounded: answer_timeout, then HTTP 503 / a telemetry error); the main loop runs
// the requests in serve_pending(), once per turn. Workers never see any of it.
#pragma once
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include "dataplane/switch/switch.h"

struct rte_tel_data;

namespace rs {

struct ObservabilityOptions {
  std::string metrics_listen;  // "" = no HTTP; "ADDR:PORT" (IPv4 address; port 0 = any free port)
  bool telemetry = true;       // register the /roceswitch/* DPDK telemetry commands
  // How long an HTTP or telemetry request waits for the main thread (serve_pending).
  std::chrono::milliseconds answer_timeout{2000};
};

// Requests from other threads run on the main thread: call() posts a job and waits for it,
// drain() runs the posted jobs. A job owns what it writes (shared_ptr captures): a caller that
// timed out leaves, and a job already running finishes into memory that is still alive.
class MainThreadMailbox {
 public:
  enum class Result { Done, Timeout, Closed, Failed };
  // Any thread but the main one. On Failed, `error` holds the job's exception text.
  Result call(std::function<void()> job, std::chrono::milliseconds wait, std::string* error = nullptr);
  // Main thread: runs every job posted so far; returns how many ran. Lock-free when empty.
  std::size_t drain();
  // Every waiting and later call returns Closed at once; pending jobs never run.
  void close();

 private:
  struct Job {
    std::function<void()> fn;
    bool done = false;
    std::string error;
  };
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Job>> queue_;
  std::atomic<std::size_t> pending_{0};
  bool closed_ = false;
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
  struct Http;
  const Switch& sw_;
  ObservabilityOptions opts_;
  std::shared_ptr<MainThreadMailbox> mailbox_;
  std::unique_ptr<Http> http_;
  uint16_t port_ = 0;
  bool telemetry_owner_ = false;
};

// The telemetry commands, exposed for tests. Names and help strings as DPDK lists them.
struct TelemetryCommand {
  const char* name;
  const char* help;
};
extern const TelemetryCommand kTelemetryCommands[6];

// The answer to one command (main thread): an object whose values are numbers, strings, or
// arrays of them (DPDK telemetry has no deeper nesting that dpdk-telemetry.py shows well);
// {"error": "..."} for an unknown command, port or group, or an answer too large for DPDK.
nlohmann::ordered_json telemetry_answer(const Switch& sw, std::string_view cmd, std::string_view param);
// Fills DPDK's reply from such an answer (any thread; no switch access). 0, or negative errno.
int telemetry_fill(const nlohmann::ordered_json& answer, rte_tel_data* d);

}  // namespace rs
