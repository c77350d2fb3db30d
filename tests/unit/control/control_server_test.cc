// The control socket server against a stepped switch: requests in one piece, pipelined or split;
// the socket file's mode, removal and stale-file replacement; peer checks; the limits on
// connections, request size and unread output; clients that send garbage, vanish mid-request or
// flood; and fairness between clients. Every client is a plain socket in this process (or a
// forked child), and the test thread polls the server, so every loop is bounded.
#include "control/server/control_server.h"

#include <gtest/gtest.h>
#include <grp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <optional>

#include "dataplane/emu/emulated_host.h"
#include "tests/support/host_net.h"

namespace rs::test {
namespace {

using nlohmann::json;

struct TempDir {  // mkdtemp, mode 0755 so a child that dropped to another uid can traverse it
  TempDir() {
    char t[] = "/tmp/rs_ctl_XXXXXX";
    if (!mkdtemp(t)) std::abort();
    path = t;
    chmod(t, 0755);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string path;
};

sockaddr_un addr_of(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::snprintf(a.sun_path, sizeof a.sun_path, "%s", path.c_str());
  return a;
}

// A non-blocking client socket connected to `path` (-1 on failure).
int connect_to(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const sockaddr_un a = addr_of(path);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0) return fd;
  close(fd);
  return -1;
}

// For forked children: everything read until EOF or timeout_ms (`eof` tells which).
std::string read_until_eof(int fd, int timeout_ms, bool& eof) {
  std::string got;
  eof = false;
  char buf[4096];
  for (int waited = 0; waited < timeout_ms; waited += 10) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10) <= 0) continue;
    const ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
    // ECONNRESET counts as closed: a server that closes with our request unread resets us.
    if (n == 0 || (n < 0 && errno != EAGAIN)) return eof = true, got;
    if (n > 0) got.append(buf, static_cast<std::size_t>(n));
  }
  return got;
}

struct Client {
  explicit Client(int f) : fd(f) {}
  ~Client() { if (fd >= 0) close(fd); }
  int fd;
  std::string buf;  // read, not yet returned as a line
  bool eof = false;
};

SwitchConfig four_hosts() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  return cfg;
}

ServerOptions at(ServerOptions o, const std::string& dir) {
  o.path = dir + "/ctl.sock";
  return o;
}

// The switch of control_api_test's Rig, plus a server on a socket in a fresh directory.
struct Rig {
  explicit Rig(ServerOptions o = {}, SwitchConfig cfg = four_hosts())
      : sw(cfg, kT0), state(sw), api(state, [this] { step(); }), server(api, at(std::move(o), dir.path)) {}
  void step() { sw.poll_all(now); now += kUs; }
  void pump() { server.poll(0); step(); }  // one server poll, one step of the workers
  template <class Pred>
  bool pump_until(Pred done, int rounds = 200) {
    for (int i = 0; i < rounds; ++i) {
      if (done()) return true;
      pump();
    }
    return done();
  }
  std::unique_ptr<Client> client() {
    const int fd = connect_to(server.path());
    EXPECT_GE(fd, 0) << std::strerror(errno);
    return std::make_unique<Client>(fd);
  }
  // Sends everything, pumping the server while the socket is full; false if the peer is gone.
  bool send_all(Client& c, std::string_view s, int rounds = 2000) {
    for (std::size_t at = 0; at < s.size();) {
      const ssize_t n = send(c.fd, s.data() + at, s.size() - at, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) at += static_cast<std::size_t>(n);
      else if (errno != EAGAIN || --rounds < 0) return false;
      else pump();
    }
    return true;
  }
  // Whatever is readable now, without polling the server.
  void drain(Client& c) {
    char buf[65536];
    while (!c.eof) {
      const ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
      if (n < 0 && errno == EAGAIN) return;
      if (n <= 0) c.eof = true;  // EOF, or reset (closed with our request unread)
      else c.buf.append(buf, static_cast<std::size_t>(n));
    }
  }
  std::optional<std::string> take_line(Client& c) {
    const auto nl = c.buf.find('\n');
    if (nl == std::string::npos) return std::nullopt;
    std::string l = c.buf.substr(0, nl);
    c.buf.erase(0, nl + 1);
    return l;
  }
  // The next line, pumping the server up to `rounds` times; nullopt on EOF or when none came.
  std::optional<std::string> line(Client& c, int rounds = 200) {
    for (int i = 0; i <= rounds; ++i) {
      drain(c);
      if (auto l = take_line(c)) return l;
      if (c.eof) return std::nullopt;
      pump();
    }
    return std::nullopt;
  }
  json call(Client& c, const json& req) {
    EXPECT_TRUE(send_all(c, req.dump() + "\n"));
    auto l = line(c);
    EXPECT_TRUE(l.has_value()) << "no response to " << req.dump();
    return l ? json::parse(*l) : json{};
  }

  TempDir dir;  // first: outlives the server
  uint64_t now = kT0;
  Switch sw;
  RunningState state;
  ControlApi api;
  ControlServer server;
};

std::string route_list(int id) { return json{{"id", id}, {"op", "route.list"}}.dump() + "\n"; }

TEST(ControlServer, PipelinedAndSplitRequestsAnsweredInOrder) {
  Rig r;
  auto c = r.client();
  ASSERT_TRUE(r.send_all(*c, route_list(1) + R"({"id":2,"op":"route.add","prefix":"10.9.0.0/16","group":"to_h3"})" "\n"));
  for (int id : {1, 2}) {
    auto l = r.line(*c);
    ASSERT_TRUE(l);
    const json resp = json::parse(*l);
    EXPECT_EQ(resp["id"], id) << *l;
    EXPECT_TRUE(resp["ok"].get<bool>()) << *l;
  }
  // One request in two sends, with polls between: nothing answered before its newline.
  const std::string req = R"({"id":3,"op":"route.list","prefix":"10.9.0.0/16"})" "\n";
  ASSERT_TRUE(r.send_all(*c, req.substr(0, 20)));
  for (int i = 0; i < 5; ++i) r.pump();
  r.drain(*c);
  EXPECT_TRUE(c->buf.empty()) << c->buf;
  ASSERT_TRUE(r.send_all(*c, req.substr(20)));
  auto l = r.line(*c);
  ASSERT_TRUE(l);
  const json resp = json::parse(*l);
  EXPECT_EQ(resp["id"], 3);
  EXPECT_EQ(resp["result"]["total"], 1) << *l;
  EXPECT_EQ(r.server.counters().requests, 3u);
}

TEST(ControlServer, SocketFileModeRemovalInUseAndStale) {
  Rig r;
  struct stat st{};
  ASSERT_EQ(lstat(r.server.path().c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  try {
    ControlServer second(r.api, at({}, r.dir.path));
    ADD_FAILURE() << "a second server took a live socket";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("in use"), std::string::npos) << e.what();
  }
  EXPECT_EQ(lstat(r.server.path().c_str(), &st), 0) << "the refused server removed the live socket";
  EXPECT_EQ(r.call(*r.client(), {{"id", 1}, {"op", "help"}})["id"], 1);

  const std::string other = r.dir.path + "/other.sock";
  { ControlServer s(r.api, {.path = other}); ASSERT_EQ(lstat(other.c_str(), &st), 0); }
  EXPECT_NE(lstat(other.c_str(), &st), 0) << "the destructor left the socket file";

  // A stale socket: bound, then closed without unlink, as a switch that died leaves it.
  const int stale = socket(AF_UNIX, SOCK_STREAM, 0);
  const sockaddr_un a = addr_of(other);
  ASSERT_EQ(bind(stale, reinterpret_cast<const sockaddr*>(&a), sizeof a), 0);
  close(stale);
  EXPECT_LT(connect_to(other), 0) << "nobody listens on a stale socket";
  ControlServer s(r.api, {.path = other});
  const int fd = connect_to(other);  // succeeds only with a listener: the file was replaced
  EXPECT_GE(fd, 0) << std::strerror(errno);
  close(fd);

  // A file that is not a socket is never replaced.
  { std::FILE* f = std::fopen((r.dir.path + "/plain").c_str(), "w"); std::fclose(f); }
  EXPECT_THROW({ ControlServer s2(r.api, {.path = r.dir.path + "/plain"}); }, std::runtime_error);
}

// Forks a child that drops to uid/gid 65534 with `groups` as its supplementary groups, connects,
// sends `request` (if any) and reads until EOF; its exit status is 0 when `check` passed on what
// it read, 2 if connect failed, 3 on no EOF, 4 when check failed. The parent polls the server.
template <class Check>
int as_nobody(Rig& r, const std::vector<gid_t>& groups, const std::string& request, Check check) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (setgroups(groups.size(), groups.data()) != 0 || setgid(65534) != 0 || setuid(65534) != 0) _exit(1);
    const int fd = connect_to(r.server.path());
    if (fd < 0) _exit(2);
    if (!request.empty()) {  // a refused child may find the socket closed already: read anyway
      [[maybe_unused]] ssize_t n = send(fd, request.data(), request.size(), MSG_NOSIGNAL);
      shutdown(fd, SHUT_WR);
    }
    bool eof = false;
    const std::string got = read_until_eof(fd, 5000, eof);
    _exit(!eof ? 3 : check(got) ? 0 : 4);
  }
  int status = -1;
  for (int i = 0; i < 1000; ++i) {
    r.server.poll(10);
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 100;
  }
  kill(pid, SIGKILL);
  waitpid(pid, &status, 0);
  return 101;  // timed out
}

TEST(ControlServer, PeerOfAnotherUidIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to fork a child of another uid";
  Rig r;
  // The file mode alone would keep uid 65534 out (connect: EACCES); open it so what is tested
  // is the server's own SO_PEERCRED check.
  ASSERT_EQ(chmod(r.server.path().c_str(), 0666), 0);
  const int rc = as_nobody(r, {}, "", [](const std::string& got) {
    return std::count(got.begin(), got.end(), '\n') == 1 && got.find("permission denied") != std::string::npos;
  });
  EXPECT_EQ(rc, 0) << "child: 2 connect failed, 3 no EOF, 4 not one 'permission denied' line";
  EXPECT_EQ(r.server.counters().refused_peer, 1u);
  EXPECT_EQ(r.server.counters().accepted, 0u);
  EXPECT_EQ(r.server.connections(), 0u);
}

// A user who is in the socket's group the usual way, as a supplementary group (`usermod -aG`),
// passes the file mode and must pass the server's check too: SO_PEERCRED's gid alone is the
// primary group, so the server also reads SO_PEERGROUPS.
TEST(ControlServer, MemberOfTheSocketGroupBySupplementaryGroupIsAllowed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to fork a child of another uid";
  Rig r({.group = 4242});
  const int rc = as_nobody(r, {4242}, route_list(9), [](const std::string& got) {
    return got.find("\"id\":9") != std::string::npos && got.find("\"ok\":true") != std::string::npos;
  });
  EXPECT_EQ(rc, 0) << "child: 2 connect failed, 3 no EOF, 4 no answer to its request";
  EXPECT_EQ(r.server.counters().refused_peer, 0u);
}

TEST(ControlServer, TooManyConnectionsRefusesTheThird) {
  Rig r({.max_connections = 2});
  auto a = r.client(), b = r.client();
  ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 2; }));
  auto c = r.client();
  auto l = r.line(*c);
  ASSERT_TRUE(l);
  EXPECT_NE(l->find("too many connections"), std::string::npos) << *l;
  EXPECT_FALSE(r.line(*c)) << "the refused client was not closed";
  EXPECT_TRUE(c->eof);
  // One that speaks first reads the refusal too (then EOF or a reset).
  auto d = r.client();
  ASSERT_TRUE(r.send_all(*d, route_list(4)));
  l = r.line(*d);
  ASSERT_TRUE(l);
  EXPECT_NE(l->find("too many connections"), std::string::npos) << *l;
  EXPECT_EQ(r.server.counters().refused_full, 2u);
  EXPECT_EQ(r.call(*a, {{"id", 1}, {"op", "route.list"}})["id"], 1);
  EXPECT_EQ(r.call(*b, {{"id", 2}, {"op", "route.list"}})["id"], 2);
  EXPECT_EQ(r.server.connections(), 2u);
}

TEST(ControlServer, InvalidJsonAnsweredAndConnectionStaysUsable) {
  Rig r;
  auto c = r.client();
  ASSERT_TRUE(r.send_all(*c, "{\"id\": 1, \"op\": \n"));
  auto l = r.line(*c);
  ASSERT_TRUE(l);
  EXPECT_FALSE(json::parse(*l)["ok"].get<bool>());
  EXPECT_NE(l->find("invalid JSON"), std::string::npos) << *l;
  const json ok = r.call(*c, {{"id", 2}, {"op", "route.list"}});
  EXPECT_EQ(ok["id"], 2);
  EXPECT_TRUE(ok["ok"].get<bool>());
  EXPECT_EQ(r.server.counters().errors, 1u);
}

// A valid transaction of exactly `bytes` bytes (padded with JSON whitespace) adding routes.
std::string big_transaction(std::size_t bytes) {
  json ops = json::array();
  for (int i = 0; ops.dump().size() < bytes - 200; ++i)
    ops.push_back({{"op", "route.add"}, {"prefix", fmt::format("10.{}.{}.0/24", 100 + i / 200, i % 200)}, {"group", "to_h1"}});
  std::string s = json{{"id", 1}, {"ops", ops}}.dump();
  s.insert(s.size() - 1, std::string(bytes - s.size(), ' '));
  return s;
}

void oversized(bool in_pieces) {
  Rig r({.max_request_bytes = 4096});
  const uint64_t hash = r.api.state_hash();
  const std::string big = big_transaction(10000);
  ASSERT_EQ(big.size(), 10000u);
  auto c = r.client();
  if (in_pieces) {
    for (std::size_t at = 0; at < big.size(); at += 2500) {
      ASSERT_TRUE(r.send_all(*c, big.substr(at, 2500)));
      r.pump();
    }
    ASSERT_TRUE(r.send_all(*c, "\n" + route_list(2)));
  } else {
    ASSERT_TRUE(r.send_all(*c, big + "\n" + route_list(2)));
  }
  auto l = r.line(*c);
  ASSERT_TRUE(l);
  EXPECT_NE(l->find("over 4096 bytes"), std::string::npos) << l->substr(0, 300);
  EXPECT_EQ(r.api.state_hash(), hash) << "the oversized request was applied";
  l = r.line(*c);
  ASSERT_TRUE(l) << "no response to the request after the oversized one";
  const json next = json::parse(*l);
  EXPECT_EQ(next["id"], 2) << l->substr(0, 300);
  EXPECT_EQ(r.server.counters().oversized, 1u);
  // The refused line was a valid request: applied directly it changes the state.
  if (r.api.state_hash() == hash) {
    EXPECT_NE(r.api.handle_line(big).find("\"ok\":true"), std::string::npos);
  }
  EXPECT_NE(r.api.state_hash(), hash);
}

TEST(ControlServer, OversizedRequestArrivingInPiecesIsRefused) { oversized(true); }

// A too-long line that arrives whole in one read, newline included, is refused as one that
// arrives in pieces is.
TEST(ControlServer, OversizedRequestArrivingWholeIsRefused) { oversized(false); }

TEST(ControlServer, DisconnectMidRequestAppliesNothingButWholeRequestIsApplied) {
  Rig r;
  const uint64_t hash = r.api.state_hash();
  {
    auto half = r.client();
    ASSERT_TRUE(r.send_all(*half, R"({"id":1,"op":"route.add","prefix":"10.9.0.0/16","gro)"));
    ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 1; }));
  }
  ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 0; }));
  EXPECT_EQ(r.api.state_hash(), hash);
  {
    auto whole = r.client();
    ASSERT_TRUE(r.send_all(*whole, R"({"id":2,"op":"route.add","prefix":"10.9.0.0/16","group":"to_h3"})" "\n"));
  }  // closed before any poll, never reading its response
  ASSERT_TRUE(r.pump_until([&] { return r.server.counters().accepted == 2 && r.server.connections() == 0; }));
  auto c = r.client();
  const json routes = r.call(*c, {{"id", 3}, {"op", "route.list"}, {"prefix", "10.9.0.0/16"}});
  EXPECT_EQ(routes["result"]["total"], 1) << routes.dump();
  EXPECT_EQ(r.server.counters().requests, 2u);
}

// A batch client writes its requests and half-closes (`ctl < file`): every whole request is
// applied and answered, over several polls when there are more than requests_per_poll.
TEST(ControlServer, HalfClosedClientGetsAllItsPipelinedRequestsServed) {
  Rig r({.requests_per_poll = 8});
  auto c = r.client();
  ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 1; }));
  std::string reqs;
  for (int i = 0; i < 20; ++i)
    reqs += json{{"id", i}, {"op", "route.add"}, {"prefix", fmt::format("10.50.{}.0/24", i)}, {"group", "to_h2"}}.dump() + "\n";
  ASSERT_TRUE(r.send_all(*c, reqs));
  shutdown(c->fd, SHUT_WR);
  int answered = 0;
  while (auto l = r.line(*c)) EXPECT_EQ(json::parse(*l)["id"], answered++);
  EXPECT_TRUE(c->eof);
  EXPECT_EQ(answered, 20);
  auto d = r.client();
  EXPECT_EQ(r.call(*d, {{"id", 99}, {"op", "route.list"}})["result"]["total"], 4 + 20);
}

TEST(ControlServer, FloodingClientThatNeverReadsIsDroppedOthersServed) {
  SwitchConfig cfg = four_hosts();
  add_host_flow(cfg, 0, 1, 0.5, 0x100, 1024);
  Rig r({.max_pending_output = 64 << 10}, cfg);
  auto flood = r.client(), good = r.client();
  const int small = 4096;
  ASSERT_EQ(setsockopt(flood->fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small), 0);
  ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 2; }));
  std::string reqs;
  for (int i = 0; i < 5000; ++i) reqs += route_list(i);
  auto rx = [&] {
    RxFlowStats s;
    return dynamic_cast<EmulatedHost&>(r.sw.port(1)).rx_tracker().find(host_ip(0), 0x100, s) ? s.packets : 0;
  };
  const uint64_t rx_before = rx();
  std::size_t sent = 0;
  int good_id = 0;
  bool flood_gone = false;
  for (int round = 0; round < 3000 && !(flood_gone && good_id > 5); ++round) {
    if (!flood_gone && sent < reqs.size()) {
      const ssize_t n = send(flood->fd, reqs.data() + sent, reqs.size() - sent, MSG_NOSIGNAL | MSG_DONTWAIT);
      if (n > 0) sent += static_cast<std::size_t>(n);
      else if (errno == EPIPE || errno == ECONNRESET) flood_gone = true;
    }
    r.pump();
    if (r.server.counters().dropped_slow > 0) flood_gone = true;
    if (round % 10 == 0) {  // the well-behaved client: answered within 5 polls, every time
      ASSERT_TRUE(r.send_all(*good, route_list(100000 + good_id)));
      auto l = r.line(*good, 5);
      ASSERT_TRUE(l) << "the good client waited more than 5 polls at round " << round;
      EXPECT_EQ(json::parse(*l)["id"], 100000 + good_id);
      ++good_id;
    }
  }
  EXPECT_GE(r.server.counters().dropped_slow, 1u) << "sent " << sent << " bytes of requests";
  EXPECT_EQ(r.server.connections(), 1u);
  EXPECT_GT(rx(), rx_before) << "the workers stopped forwarding";
  EXPECT_TRUE(r.sw.totals().balanced());
}

TEST(ControlServer, OneBusyClientDoesNotDelayAnother) {
  Rig r({.requests_per_poll = 8});
  auto busy = r.client(), quiet = r.client();
  ASSERT_TRUE(r.pump_until([&] { return r.server.connections() == 2; }));
  std::string reqs;
  for (int i = 0; i < 100; ++i) reqs += route_list(i);
  ASSERT_TRUE(r.send_all(*busy, reqs));
  ASSERT_TRUE(r.send_all(*quiet, route_list(1000)));
  std::optional<std::string> l;
  for (int p = 0; p < 2 && !l; ++p) {
    r.server.poll(0);
    r.drain(*quiet);
    l = r.take_line(*quiet);
  }
  ASSERT_TRUE(l) << "the quiet client's request waited more than 2 polls";
  EXPECT_EQ(json::parse(*l)["id"], 1000);
  r.drain(*busy);
  EXPECT_LE(std::count(busy->buf.begin(), busy->buf.end(), '\n'), 16) << "requests_per_poll not applied";
  for (int i = 0; i < 100; ++i) {
    auto b = r.line(*busy);
    ASSERT_TRUE(b) << "busy client's response " << i;
    EXPECT_EQ(json::parse(*b)["id"], i);
  }
}

}  // namespace
}  // namespace rs::test
