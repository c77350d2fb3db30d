#include "control/server/control_server.h"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace rs {

std::string default_control_socket() { return "/run/roceswitch/roceswitch.sock"; }

struct ControlServer::Conn {
  int fd = -1;
  std::string in;
  std::string out;
  std::size_t out_at = 0;  // bytes of `out` already written
  bool closing = false;    // send what is queued, then close
  bool discarding = false; // inside an oversized line: drop bytes until its newline
};

namespace {

sockaddr_un address(const std::string& path) {
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  if (path.size() >= sizeof a.sun_path) throw std::runtime_error(fmt::format("control socket path too long: {}", path));
  std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
  return a;
}

// A socket file some live process accepts on.
bool answered(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const sockaddr_un a = address(path);
  const bool live = connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a) == 0;
  close(fd);
  return live;
}

std::string error_line(const std::string& reason) {
  return nlohmann::json{{"id", nullptr}, {"ok", false}, {"error", {{"field", ""}, {"reason", reason}}}}.dump(
             -1, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

}  // namespace

ControlServer::ControlServer(ControlApi& api, ServerOptions opts) : api_(api), opts_(std::move(opts)) {
  const sockaddr_un a = address(opts_.path);
  const auto slash = opts_.path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    const std::string dir = opts_.path.substr(0, slash);
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error(fmt::format("control socket: cannot create {}: {}", dir, std::strerror(errno)));
  }
  struct stat st{};
  if (lstat(opts_.path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode)) throw std::runtime_error(fmt::format("control socket: {} exists and is not a socket", opts_.path));
    if (answered(opts_.path)) throw std::runtime_error(fmt::format("control socket: {} is in use by another switch", opts_.path));
    unlink(opts_.path.c_str());  // left by a switch that is gone
  }
  listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (listen_fd_ < 0) throw std::runtime_error(fmt::format("control socket: {}", std::strerror(errno)));
  // The mode is set before anyone can connect: bind under a umask that leaves 0660 at most.
  const mode_t old = umask(0117);
  const int b = bind(listen_fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  umask(old);
  if (b != 0 || listen(listen_fd_, 64) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    throw std::runtime_error(fmt::format("control socket {}: {}", opts_.path, why));
  }
  if (opts_.group != static_cast<gid_t>(-1) && chown(opts_.path.c_str(), static_cast<uid_t>(-1), opts_.group) != 0) {
    const std::string why = std::strerror(errno);
    close(listen_fd_);
    unlink(opts_.path.c_str());
    throw std::runtime_error(fmt::format("control socket {}: cannot give it group {}: {}", opts_.path, opts_.group, why));
  }
  chmod(opts_.path.c_str(), 0660);
  if (opts_.group == static_cast<gid_t>(-1)) opts_.group = getegid();
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;  // the listening socket
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
}

ControlServer::~ControlServer() {
  while (!conns_.empty()) close_conn(conns_.size() - 1);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (listen_fd_ >= 0) {
    close(listen_fd_);
    unlink(opts_.path.c_str());
  }
}

void ControlServer::close_conn(std::size_t i) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, conns_[i]->fd, nullptr);
  close(conns_[i]->fd);
  conns_.erase(conns_.begin() + static_cast<std::ptrdiff_t>(i));
}

void ControlServer::accept_all() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN, or a client that gave up
    ucred cr{};
    socklen_t len = sizeof cr;
    bool allowed = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 &&
                   (cr.uid == 0 || cr.uid == geteuid() || cr.gid == opts_.group ||
                    std::find(opts_.allow_uids.begin(), opts_.allow_uids.end(), cr.uid) != opts_.allow_uids.end());
    if (!allowed) {
      // A member of the socket's group by a supplementary group (usermod -aG) is a member too.
      gid_t groups[256];
      socklen_t glen = sizeof groups;
      if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &glen) == 0)
        allowed = std::find(groups, groups + glen / sizeof(gid_t), opts_.group) != groups + glen / sizeof(gid_t);
    }
    std::string refusal;
    if (!allowed) {
      ++counters_.refused_peer;
      refusal = error_line(fmt::format("permission denied: uid {} gid {} is not allowed on this switch", cr.uid, cr.gid));
    } else if (conns_.size() >= opts_.max_connections) {
      ++counters_.refused_full;
      refusal = error_line(fmt::format("too many connections (at most {})", opts_.max_connections));
    }
    if (!refusal.empty()) {
      // Best effort, never blocking: the socket buffer takes one short line.
      [[maybe_unused]] auto n = send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      // Read what it sent before closing, so it sees the line and EOF rather than a reset.
      shutdown(fd, SHUT_WR);
      char sink[4096];
      while (recv(fd, sink, sizeof sink, MSG_DONTWAIT) > 0) {
      }
      close(fd);
      continue;
    }
    ++counters_.accepted;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.ptr = c.get();
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    conns_.push_back(std::move(c));
  }
}

bool ControlServer::flush(Conn& c) {
  while (c.out_at < c.out.size()) {
    const ssize_t n = send(c.fd, c.out.data() + c.out_at, c.out.size() - c.out_at, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;  // the client is gone
    }
    c.out_at += static_cast<std::size_t>(n);
  }
  if (c.out_at == c.out.size()) {
    c.out.clear();
    c.out_at = 0;
  } else if (c.out.size() - c.out_at > opts_.max_pending_output) {
    ++counters_.dropped_slow;
    return false;  // it does not read its responses
  }
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (c.out.empty() ? 0u : static_cast<uint32_t>(EPOLLOUT));
  ev.data.ptr = &c;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.fd, &ev);
  return !(c.closing && c.out.empty());
}

bool ControlServer::serve(Conn& c) {
  char buf[65536];
  bool eof = false;
  // Read what is there, bounded so one flooding client yields to the others; while it has
  // whole requests waiting, read nothing more (the kernel's socket buffer holds it back).
  for (int reads = 0; reads < 16 && c.in.find('\n') == std::string::npos; ++reads) {
    const ssize_t n = recv(c.fd, buf, sizeof buf, MSG_DONTWAIT);
    if (n == 0) {
      eof = true;
      break;
    }
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      return false;
    }
    c.in.append(buf, static_cast<std::size_t>(n));
    if (c.in.size() > opts_.max_request_bytes) break;
  }
  uint32_t served = 0;
  std::size_t start = 0;
  while (served < opts_.requests_per_poll) {
    const std::size_t nl = c.in.find('\n', start);
    if (nl == std::string::npos) {
      if (c.in.size() - start > opts_.max_request_bytes && !c.discarding) {
        ++counters_.oversized;
        c.out += error_line(fmt::format("request over {} bytes: refused, nothing applied", opts_.max_request_bytes));
        c.discarding = true;
      }
      if (c.discarding) start = c.in.size();
      break;
    }
    if (c.discarding) {  // the tail of an oversized request
      c.discarding = false;
      start = nl + 1;
      continue;
    }
    std::string_view line(c.in.data() + start, nl - start);
    start = nl + 1;
    if (line.size() > opts_.max_request_bytes) {  // arrived whole, in one read
      ++counters_.oversized;
      c.out += error_line(fmt::format("request over {} bytes: refused, nothing applied", opts_.max_request_bytes));
      continue;
    }
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    ++counters_.requests;
    std::string resp = api_.handle_line(line);
    if (resp.find("\"ok\":false") != std::string::npos) ++counters_.errors;
    c.out += resp;
    c.out += '\n';
    ++served;
  }
  c.in.erase(0, start);
  // A client that closed its side: every whole request it sent is served (over later polls if
  // there are many), then the connection closes; a partial last line goes.
  if (eof && c.in.find('\n') == std::string::npos) c.closing = true;
  return flush(c) && !(c.closing && c.out.empty());
}

void ControlServer::poll(int timeout_ms) {
  epoll_event evs[64];
  const int n = epoll_wait(epoll_fd_, evs, 64, timeout_ms);
  std::vector<Conn*> ready;
  for (int i = 0; i < n; ++i) {
    if (!evs[i].data.ptr) accept_all();
    else ready.push_back(static_cast<Conn*>(evs[i].data.ptr));
  }
  // Clients with unread input left from the last poll (the per-poll bound) are served too.
  for (auto& c : conns_)
    if (c->in.find('\n') != std::string::npos && std::find(ready.begin(), ready.end(), c.get()) == ready.end()) ready.push_back(c.get());
  for (Conn* c : ready) {
    auto it = std::find_if(conns_.begin(), conns_.end(), [&](auto& p) { return p.get() == c; });
    if (it == conns_.end()) continue;
    if (!serve(*c)) close_conn(static_cast<std::size_t>(it - conns_.begin()));
  }
}

}  // namespace rs
