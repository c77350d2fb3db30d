// Classification maps named after the P4 tables dscp_to_tc, pcp_to_tc and tc_to_queue.
#pragma once
#include <array>
#include <cstdint>

namespace rs {

enum class QosTrust : uint8_t { Dscp, Pcp };

struct QosMaps {
  QosTrust trust = QosTrust::Dscp;
  std::array<uint8_t, 64> dscp_to_tc{};
  std::array<uint8_t, 8> pcp_to_tc{};
  std::array<uint8_t, 8> tc_to_queue{};
  int8_t cnp_queue = -1;  // >= 0: CNPs (BTH opcode 0x81) go to this queue whatever their DSCP

  // SONiC's default map (AZURE profile): DSCP 3/4 are the lossless RDMA classes, 46 and 48
  // (CNPs on NVIDIA NICs) get TC5/TC6, everything else is best effort TC1.
  static QosMaps sonic_default() {
    QosMaps m;
    m.dscp_to_tc.fill(1);
    m.dscp_to_tc[3] = 3;
    m.dscp_to_tc[4] = 4;
    m.dscp_to_tc[46] = 5;
    m.dscp_to_tc[48] = 6;
    m.dscp_to_tc[8] = 0;
    m.dscp_to_tc[5] = 2;
    for (uint8_t i = 0; i < 8; ++i) {
      m.pcp_to_tc[i] = i;
      m.tc_to_queue[i] = i;
    }
    return m;
  }
};

}  // namespace rs
