// The Prometheus /metrics endpoint (app/prometheus.h has the text), served by civetweb: no files,
// only "/" (a pointer to /metrics) and /metrics. civetweb answers on its own threads, so a scrape
// posts its request to the main thread's mailbox (app/main_thread_mailbox.h) and waits, bounded:
// then HTTP 503.
#pragma once
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "app/main_thread_mailbox.h"
#include "dataplane/switch/switch.h"

struct mg_connection;
struct mg_context;

namespace rs {

class MetricsHttpServer {
 public:
  // `listen` is "ADDR:PORT" (IPv4 address; port 0 = any free port); a scrape waits `wait` for
  // the main thread. Throws std::runtime_error with a clear reason (bad address, port in use,
  // civetweb cannot start).
  MetricsHttpServer(const Switch& sw, const std::string& listen, std::shared_ptr<MainThreadMailbox> mailbox,
                    std::chrono::milliseconds wait);
  // Closes the mailbox (handlers waiting for the main thread answer 503 at once) and stops
  // civetweb (its threads are joined).
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // The port civetweb listens on (the free port it took for ":0").
  uint16_t port() const { return port_; }

 private:
  static int handle(mg_connection* c, void* data);

  mg_context* ctx_ = nullptr;
  std::shared_ptr<MainThreadMailbox> mailbox_;
  const Switch* sw_ = nullptr;
  std::chrono::milliseconds wait_{2000};
  std::string addr_;  // where it listens, for the wake-up in the destructor
  uint16_t port_ = 0;
};

}  // namespace rs
