// The /metrics endpoint over real HTTP from another thread while this (main) thread serves the
// mailbox (404, 405, 503 when nobody serves), bad listen addresses, and the mailbox itself: the
// hand-off that runs the endpoint's requests on the main thread. On a stepped switch of four
// emulated hosts (observability_rig.h).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>

#include "app/observability.h"
#include "tests/unit/app/observability_rig.h"
#include "tests/unit/app/prometheus_parse.h"

namespace rs::test {
namespace {

using namespace std::chrono_literals;

// --- A plain HTTP/1.1 client (no curl in C++) ------------------------------------------------

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

HttpReply http(uint16_t port, const std::string& method, const std::string& path) {
  HttpReply r;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) != 0) {
    close(fd);
    return r;
  }
  const std::string req = method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return r;
  }
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<std::size_t>(n));
  close(fd);
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return r;
  std::istringstream head(raw.substr(0, head_end));
  std::string line;
  std::getline(head, line);
  r.status = std::stoi(line.substr(line.find(' ') + 1, 3));
  while (std::getline(head, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::size_t c = line.find(':');
    if (c == std::string::npos) continue;
    std::string k = line.substr(0, c);
    for (char& ch : k) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    r.headers[k] = line.substr(line.find_first_not_of(' ', c + 1));
  }
  r.body = raw.substr(head_end + 4);
  return r;
}

uint16_t free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  close(fd);
  return ntohs(sin.sin_port);
}

// --- HTTP --------------------------------------------------------------------------------------

TEST(Observability, ServesMetricsOverHttpFromTheMainThread) {
  Rig r;
  r.run(kMs);
  const uint16_t port = free_port();  // bound and released: civetweb takes it
  Observability obs(r.sw, {.metrics_listen = fmt::format("127.0.0.1:{}", port), .telemetry = false});
  EXPECT_EQ(obs.metrics_port(), port);
  const HttpReply a = serving(obs, &r, [&] { return http(port, "GET", "/metrics"); });
  ASSERT_EQ(a.status, 200) << a.body;
  EXPECT_EQ(a.headers.at("content-type"), "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(a.headers.at("content-length"), std::to_string(a.body.size()));
  const Exposition ea = parse(a.body);
  for (const std::string& err : ea.errors) ADD_FAILURE() << err;
  EXPECT_TRUE(ea.type.count("roceswitch_port_rx_packets_total"));
  // A second scrape after the switch ran on (a millisecond, so that whichever of the incast's
  // senders PFC pauses, traffic moved on), and while it keeps running: counters only grow.
  r.run(kMs);
  const HttpReply b = serving(obs, &r, [&] { return http(port, "GET", "/metrics"); });
  ASSERT_EQ(b.status, 200);
  const auto ca = ea.counters(), cb = parse(b.body).counters();
  for (const auto& [k, v] : ca) EXPECT_GE(cb.at(k), v) << k;
  EXPECT_GT(cb.at("roceswitch_port_tx_packets_total|port=h0"), ca.at("roceswitch_port_tx_packets_total|port=h0"));
  // The body equals what the main thread computes itself, once the switch stands still.
  const HttpReply still = serving(obs, nullptr, [&] { return http(port, "GET", "/metrics"); });
  EXPECT_EQ(still.body, obs.metrics_text());

  const HttpReply other = serving(obs, &r, [&] { return http(port, "GET", "/metricsx"); });
  EXPECT_EQ(other.status, 404);
  const HttpReply post = serving(obs, &r, [&] { return http(port, "POST", "/metrics"); });
  EXPECT_EQ(post.status, 405);
  const HttpReply head = serving(obs, &r, [&] { return http(port, "HEAD", "/metrics"); });
  EXPECT_EQ(head.status, 200);
  EXPECT_TRUE(head.body.empty());
  const HttpReply query = serving(obs, &r, [&] { return http(port, "GET", "/metrics?x=1"); });
  EXPECT_EQ(query.status, 200);
}

TEST(Observability, AnyFreePortWithPortZero) {
  Rig r;
  Observability obs(r.sw, {.metrics_listen = "127.0.0.1:0", .telemetry = false});
  ASSERT_NE(obs.metrics_port(), 0);
  const HttpReply a = serving(obs, &r, [&] { return http(obs.metrics_port(), "GET", "/metrics"); });
  EXPECT_EQ(a.status, 200);
}

TEST(Observability, AnswersServiceUnavailableWhenTheMainThreadDoesNotServe) {
  Rig r;
  Observability obs(r.sw, {.metrics_listen = "127.0.0.1:0", .telemetry = false, .answer_timeout = 200ms});
  const auto t0 = std::chrono::steady_clock::now();
  const HttpReply a = http(obs.metrics_port(), "GET", "/metrics");  // nobody calls serve_pending
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(a.status, 503);
  EXPECT_NE(a.body.find("did not answer"), std::string::npos) << a.body;
  EXPECT_GE(waited, 200ms);
  EXPECT_LT(waited, 5s);
  // Served again, the same endpoint answers.
  const HttpReply b = serving(obs, &r, [&] { return http(obs.metrics_port(), "GET", "/metrics"); });
  EXPECT_EQ(b.status, 200);
}

TEST(Observability, RefusesBadListenAddressesWithTheReason) {
  Rig r;
  auto reason = [&](const std::string& listen) -> std::string {
    try {
      Observability obs(r.sw, {.metrics_listen = listen, .telemetry = false});
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(reason("9464").find("no port"), std::string::npos);
  EXPECT_NE(reason("localhost:9464").find("not an IPv4 address"), std::string::npos);
  EXPECT_NE(reason("127.0.0.1:99999").find("not a port number"), std::string::npos);
  EXPECT_NE(reason("127.0.0.1:").find("not a port number"), std::string::npos);
  EXPECT_NE(reason("[::1]:9464").find("IPv6"), std::string::npos);
  EXPECT_NE(reason("192.0.2.1:9464").find("not an address of this host"), std::string::npos);
  // A port another socket listens on.
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof sin;
  getsockname(fd, reinterpret_cast<sockaddr*>(&sin), &len);
  EXPECT_NE(reason(fmt::format("127.0.0.1:{}", ntohs(sin.sin_port))).find("in use"), std::string::npos);
  close(fd);
}

// --- The mailbox -------------------------------------------------------------------------------

TEST(MainThreadMailbox, RunsJobsOnTheDrainingThreadTimesOutAndCloses) {
  MainThreadMailbox mb;
  EXPECT_EQ(mb.drain(), 0u);
  auto ran_on = std::make_shared<std::thread::id>();
  auto fut = std::async(std::launch::async, [&] { return mb.call([ran_on] { *ran_on = std::this_thread::get_id(); }, 5s); });
  while (fut.wait_for(1ms) != std::future_status::ready) mb.drain();
  EXPECT_EQ(fut.get(), MainThreadMailbox::Result::Done);
  EXPECT_EQ(*ran_on, std::this_thread::get_id());

  auto ran = std::make_shared<bool>(false);
  EXPECT_EQ(mb.call([ran] { *ran = true; }, 50ms), MainThreadMailbox::Result::Timeout);
  EXPECT_EQ(mb.drain(), 0u);  // the timed-out job was taken back
  EXPECT_FALSE(*ran);

  std::string err;
  auto failing = std::async(std::launch::async, [&] {
    return mb.call([] { throw std::runtime_error("no such thing"); }, 5s, &err);
  });
  while (failing.wait_for(1ms) != std::future_status::ready) mb.drain();
  EXPECT_EQ(failing.get(), MainThreadMailbox::Result::Failed);
  EXPECT_EQ(err, "no such thing");

  auto waiting = std::async(std::launch::async, [&] { return mb.call([] {}, 10s); });
  std::this_thread::sleep_for(50ms);
  mb.close();
  EXPECT_EQ(waiting.get(), MainThreadMailbox::Result::Closed);
  EXPECT_EQ(mb.call([] {}, 10s), MainThreadMailbox::Result::Closed);
}

}  // namespace
}  // namespace rs::test
