// Writes a few frames made by encode_pfc to a classic pcap file (written by hand: no libpcap
// dependency) so pfc_frame_tshark.sh can have Wireshark's dissector check them independently.
#include <cstdio>
#include <cstdint>
#include <vector>

#include "dataplane/tm/pfc/pfc_frame.h"

namespace {

void put32(std::FILE* f, uint32_t v) { std::fwrite(&v, 4, 1, f); }
void put16(std::FILE* f, uint16_t v) { std::fwrite(&v, 2, 1, f); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s out.pcap\n", argv[0]);
    return 2;
  }
  std::FILE* f = std::fopen(argv[1], "wb");
  if (!f) {
    std::perror(argv[1]);
    return 1;
  }
  // Host byte order throughout: the magic number tells readers which one it is.
  put32(f, 0xa1b2c3d4);
  put16(f, 2);
  put16(f, 4);
  put32(f, 0);       // thiszone
  put32(f, 0);       // sigfigs
  put32(f, 65535);   // snaplen
  put32(f, 1);       // LINKTYPE_ETHERNET
  // Keep in step with the expectations in pfc_frame_tshark.sh.
  const rte_ether_addr src{{0x02, 0x00, 0x00, 0x00, 0xaa, 0x01}};
  struct Case {
    uint8_t enable;
    std::array<uint16_t, 8> quanta;
  };
  const std::vector<Case> cases = {
      {0x18, {0, 0, 0, 0xffff, 0x1234, 0, 0, 0}},
      {0x81, {1, 0, 0, 0, 0, 0, 0, 65535}},
      {0x08, {0, 0, 0, 0, 0, 0, 0, 0}},  // XON for priority 3
      {0xff, {1, 2, 3, 4, 5, 6, 7, 8}},
  };
  uint32_t ts = 1;
  for (const auto& c : cases) {
    uint8_t buf[rs::kMacControlFrameLen];
    rs::encode_pfc(buf, src, c.enable, c.quanta);
    put32(f, ts++);
    put32(f, 0);
    put32(f, rs::kMacControlFrameLen);
    put32(f, rs::kMacControlFrameLen);
    std::fwrite(buf, 1, sizeof buf, f);
  }
  return std::fclose(f) == 0 ? 0 : 1;
}
