#include "dataplane/stages/classify.h"

namespace rs {

TcQueueMap::TcQueueMap(const QosMaps& maps)
    : maps_(maps), pcp_flag_(maps.trust == QosTrust::Pcp ? meta_flag::kVlan : 0) {
  for (std::size_t d = 0; d < dscp_pair_.size(); ++d) dscp_pair_[d] = pair_of(maps_.dscp_to_tc[d]);
  for (std::size_t p = 0; p < pcp_pair_.size(); ++p) pcp_pair_[p] = pair_of(maps_.pcp_to_tc[p]);
}

TcQueueMap::TcQueue TcQueueMap::pair_of(uint8_t tc) const {
  // The config loader keeps TCs below 8; a wider one must not read past the map, and the
  // queue is kept below 8 for the traffic manager's masks.
  return TcQueue{tc, static_cast<uint8_t>((tc < maps_.tc_to_queue.size() ? maps_.tc_to_queue[tc] : uint8_t{0}) & 7)};
}

}  // namespace rs
