// The control socket: a Unix stream socket, mode 0660, whose peers are checked with SO_PEERCRED
// (root, the switch's own user, and members of the socket's group by default); newline-
// delimited JSON requests and responses (runtime/control_api.h). It never blocks: poll() serves
// what is ready and returns, on the program's control thread, so a client that is slow, silent,
// sends garbage, floods or vanishes mid-request stalls neither the workers nor other clients.
// Limits: connections, bytes in one request line, bytes waiting to be read by a client.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "control/runtime/control_api.h"

namespace rs {

struct ServerOptions {
  std::string path;               // the socket's file
  gid_t group = static_cast<gid_t>(-1);  // the socket's group (-1: the process's)
  std::vector<uid_t> allow_uids;  // besides root and the switch's own uid
  uint32_t max_connections = 16;
  uint32_t max_request_bytes = 64u << 20;
  uint32_t max_pending_output = 256u << 20;  // unread responses before a client is dropped
  uint32_t requests_per_poll = 64;           // per client, so one client cannot starve the rest
};

struct ServerCounters {
  uint64_t accepted = 0, refused_peer = 0, refused_full = 0, requests = 0, errors = 0, oversized = 0, dropped_slow = 0;
};

class ControlServer {
 public:
  // Binds and listens; throws std::runtime_error with the reason. A socket file left by a switch
  // that is gone is replaced; one a live switch answers on is not.
  ControlServer(ControlApi& api, ServerOptions opts);
  ~ControlServer();  // closes every connection and removes the socket file
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // Waits up to timeout_ms for activity, then serves what is ready.
  void poll(int timeout_ms);
  const ServerCounters& counters() const { return counters_; }
  const std::string& path() const { return opts_.path; }
  std::size_t connections() const { return conns_.size(); }

 private:
  struct Conn;
  void accept_all();
  bool serve(Conn& c);  // false: close it
  bool flush(Conn& c);
  void close_conn(std::size_t i);

  ControlApi& api_;
  ServerOptions opts_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  std::vector<std::unique_ptr<Conn>> conns_;
  ServerCounters counters_;
};

// The default socket path, under /run/roceswitch/.
std::string default_control_socket();

}  // namespace rs
