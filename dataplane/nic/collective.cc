#include "dataplane/nic/collective.h"

#include <algorithm>

namespace rs::nic {

namespace {
constexpr const char* kNames[] = {"allreduce", "allgather", "reducescatter", "alltoall"};
}  // namespace

const char* collective_name(CollectiveOp op) { return kNames[static_cast<int>(op)]; }

bool collective_of(const std::string& name, CollectiveOp& op) {
  for (int i = 0; i < 4; ++i)
    if (name == kNames[i]) {
      op = static_cast<CollectiveOp>(i);
      return true;
    }
  return false;
}

double busbw_factor(CollectiveOp op, std::size_t n) {
  const double k = static_cast<double>(n - 1) / static_cast<double>(n);
  return op == CollectiveOp::AllReduce ? 2 * k : k;
}

void expand_collective(const CollectiveSpec& c, uint16_t tag, const std::vector<Rank>& ranks) {
  const std::size_t n = ranks.size();
  const uint64_t chunk = c.size_bytes / n;
  const uint32_t slices = std::max<uint32_t>(c.slices, 1);
  const auto message = static_cast<uint32_t>(std::max<uint64_t>(1, chunk / slices));
  auto base = [&](uint32_t peer, uint32_t qpn) {
    QpSpec q;
    q.peer_ip = peer;
    q.qpn = qpn;
    q.dscp = c.dscp;
    q.message_bytes = message;
    q.write = true;
    q.start_ns = c.start_ns;
    q.tag = tag;
    return q;
  };
  if (c.op == CollectiveOp::AllToAll) {
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t b = 0; b < n; ++b) {
        if (a == b) continue;
        // One QP a pair, the same number at both ends.
        const auto pair = static_cast<uint32_t>(std::min(a, b) * n + std::max(a, b));
        QpSpec q = base(ranks[b].ip, c.qpn + pair);
        q.messages = slices;
        q.depth = slices;
        ranks[a].qps->push_back(q);
      }
    return;
  }
  const uint32_t steps = static_cast<uint32_t>(c.op == CollectiveOp::AllReduce ? 2 * (n - 1) : n - 1);
  for (std::size_t r = 0; r < n; ++r) {
    const Rank& me = ranks[r];
    const uint32_t right = ranks[(r + 1) % n].ip, left = ranks[(r + n - 1) % n].ip;
    QpSpec send = base(right, c.qpn);
    send.messages = uint64_t{steps} * slices;
    send.depth = 2 * slices;  // NCCL keeps a few steps' slices in flight
    send.gate_lag = slices;
    const auto at = static_cast<uint32_t>(me.qps->size());
    if (left == right) {
      send.gate = at;  // two ranks: the one QP both sends and receives
      me.qps->push_back(send);
      continue;
    }
    send.gate = at + 1;
    me.qps->push_back(send);
    QpSpec listen = base(left, c.qpn);
    listen.depth = 0;
    listen.messages = 0;
    me.qps->push_back(listen);
  }
}

}  // namespace rs::nic
