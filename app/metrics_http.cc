#include "app/metrics_http.h"

#include <arpa/inet.h>
#include <civetweb.h>
#include <fmt/core.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#include "app/prometheus.h"

namespace rs {

namespace {

struct ListenAddress {
  std::string addr;
  uint16_t port = 0;
};

ListenAddress parse_listen(const std::string& s) {
  auto bad = [&](const std::string& why) {
    return std::runtime_error(fmt::format("metrics listen address '{}': {} (expected ADDR:PORT, e.g. 127.0.0.1:9464)", s, why));
  };
  const auto colon = s.rfind(':');
  if (colon == std::string::npos) throw bad("no port");
  ListenAddress a;
  a.addr = s.substr(0, colon);
  const std::string port = s.substr(colon + 1);
  if (a.addr.empty()) throw bad("no address (0.0.0.0 listens on every interface)");
  if (a.addr.front() == '[' || a.addr.find(':') != std::string::npos)
    throw bad("IPv6 is not supported by this civetweb build; give an IPv4 address");
  in_addr ia{};
  if (inet_pton(AF_INET, a.addr.c_str(), &ia) != 1) throw bad(fmt::format("'{}' is not an IPv4 address", a.addr));
  if (port.empty() || port.size() > 5 || !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      std::stoul(port) > 65535)
    throw bad(fmt::format("'{}' is not a port number (0..65535)", port));
  a.port = static_cast<uint16_t>(std::stoul(port));
  return a;
}

// civetweb says only "Failed to setup server ports"; a bind of our own says why.
void check_bindable(const ListenAddress& a, const std::string& text) {
  if (a.port == 0) return;
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // as civetweb binds
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(a.port);
  inet_pton(AF_INET, a.addr.c_str(), &sin.sin_addr);
  const int rc = bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  const int e = errno;
  close(fd);
  if (rc == 0) return;
  std::string why;
  if (e == EADDRINUSE) why = fmt::format("port {} is in use (another process listens on it)", a.port);
  else if (e == EADDRNOTAVAIL) why = fmt::format("{} is not an address of this host", a.addr);
  else if (e == EACCES) why = fmt::format("port {} needs root or CAP_NET_BIND_SERVICE", a.port);
  else why = std::strerror(e);
  throw std::runtime_error(fmt::format("metrics listen address '{}': {}", text, why));
}

void send_text(mg_connection* c, int status, const std::string& body, const char* type = "text/plain; charset=utf-8") {
  mg_response_header_start(c, status);
  mg_response_header_add(c, "Content-Type", type, -1);
  mg_response_header_add(c, "Content-Length", std::to_string(body.size()).c_str(), -1);
  mg_response_header_add(c, "Cache-Control", "no-cache", -1);
  if (status == 405) mg_response_header_add(c, "Allow", "GET, HEAD", -1);
  mg_response_header_send(c);
  const mg_request_info* ri = mg_get_request_info(c);
  if (!ri || std::strcmp(ri->request_method, "HEAD") != 0) mg_write(c, body.data(), body.size());
}

}  // namespace

MetricsHttpServer::MetricsHttpServer(const Switch& sw, const std::string& listen_text,
                                     std::shared_ptr<MainThreadMailbox> mailbox, std::chrono::milliseconds wait)
    : mailbox_(std::move(mailbox)), sw_(&sw), wait_(wait) {
  const ListenAddress a = parse_listen(listen_text);
  check_bindable(a, listen_text);
  static std::once_flag init;
  std::call_once(init, [] { mg_init_library(0); });
  const std::string listen = fmt::format("{}:{}", a.addr, a.port);
  // No document_root: civetweb serves no files, only the handler below. Keep-alive off: one
  // scrape a connection, so idle scrapers hold no thread.
  const char* options[] = {"listening_ports", listen.c_str(), "num_threads", "4", "request_timeout_ms", "10000",
                           "enable_keep_alive", "no", nullptr};
  char text[256] = "";
  unsigned code = 0;
  mg_error_data err{&code, text, sizeof text};
  mg_init_data init_data{nullptr, nullptr, options};
  ctx_ = mg_start2(&init_data, &err);
  if (!ctx_)
    throw std::runtime_error(fmt::format("metrics listen address '{}': civetweb cannot start: {}", listen_text,
                                         *text ? text : "unknown error"));
  mg_set_request_handler(ctx_, "/", &MetricsHttpServer::handle, this);
  mg_server_port ports[4];
  const int n = mg_get_server_ports(ctx_, 4, ports);
  port_ = n > 0 ? static_cast<uint16_t>(ports[0].port) : a.port;
  addr_ = a.addr;
}

MetricsHttpServer::~MetricsHttpServer() {
  mailbox_->close();  // handlers waiting for the main thread answer 503 at once
  // civetweb's accept loop polls with a 2 s timeout and sees the stop flag only when the
  // poll returns: connections wake it, so the switch stops in milliseconds, not 2 s.
  std::atomic<bool> stopped{false};
  std::thread waker([&] {
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_port = htons(port_);
    inet_pton(AF_INET, addr_ == "0.0.0.0" ? "127.0.0.1" : addr_.c_str(), &sin.sin_addr);
    while (!stopped.load()) {
      const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (fd >= 0) {
        connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
        close(fd);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  mg_stop(ctx_);
  stopped.store(true);
  waker.join();
}

int MetricsHttpServer::handle(mg_connection* c, void* data) {
  auto* self = static_cast<MetricsHttpServer*>(data);
  const mg_request_info* ri = mg_get_request_info(c);
  const std::string_view uri = ri->local_uri ? ri->local_uri : "";
  const std::string_view method = ri->request_method ? ri->request_method : "";
  if (uri == "/" && (method == "GET" || method == "HEAD")) {
    send_text(c, 200, "roceswitch: Prometheus metrics at /metrics (docs/observability.md)\n");
    return 200;
  }
  if (uri != "/metrics") {
    send_text(c, 404, fmt::format("404 Not Found: {} (the metrics are at /metrics)\n", uri));
    return 404;
  }
  if (method != "GET" && method != "HEAD") {
    send_text(c, 405, "405 Method Not Allowed: GET or HEAD\n");
    return 405;
  }
  auto body = std::make_shared<std::string>();
  const Switch* sw = self->sw_;
  std::string err;
  switch (self->mailbox_->call([body, sw] { *body = prometheus_metrics(*sw); }, self->wait_, &err)) {
    case MainThreadMailbox::Result::Done:
      send_text(c, 200, *body, kPrometheusContentType);
      return 200;
    case MainThreadMailbox::Result::Timeout:
      send_text(c, 503, fmt::format("503 Service Unavailable: the switch's main thread did not answer within {} ms\n",
                                    self->wait_.count()));
      return 503;
    case MainThreadMailbox::Result::Closed:
      send_text(c, 503, "503 Service Unavailable: the switch is stopping\n");
      return 503;
    case MainThreadMailbox::Result::Failed:
      send_text(c, 500, "500 Internal Server Error: " + err + "\n");
      return 500;
  }
  return 500;
}

}  // namespace rs
