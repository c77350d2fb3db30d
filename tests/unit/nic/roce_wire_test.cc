// The emulated NIC's frames (dataplane/nic/roce_wire.h) as independent decoders read them:
// tshark's InfiniBand dissector for the BTH, RETH and AETH fields, scapy's contrib.roce for the
// ICRC (rebuilt by scapy, it must come out the same), and the parser for what it accepts back.
#include "dataplane/nic/roce_wire.h"

#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/support/frame_files.h"

namespace rs::nic {
namespace {

using test::command_lines;
using test::run_python;
using test::write_pcap;
using Frame = std::vector<uint8_t>;

QpPath path() {
  QpPath p;
  p.src_mac = rte_ether_addr{{0x02, 0, 0, 0, 0, 0x01}};
  p.dst_mac = rte_ether_addr{{0x02, 0, 0, 0, 0, 0x02}};
  inet_pton(AF_INET, "10.0.0.1", &p.src_ip);
  inet_pton(AF_INET, "10.0.0.2", &p.dst_ip);
  p.dest_qp = 0x000123;
  p.sport = roce_udp_sport(0x11, 0x123);
  p.dscp = 26;
  return p;
}

Frame data(const DataPacket& d) {
  Frame f(9000);
  const uint32_t n = build_data(f.data(), static_cast<uint32_t>(f.size()), path(), d);
  EXPECT_GT(n, 0u);
  f.resize(n);
  return f;
}

std::vector<Frame> samples() {
  std::vector<Frame> v;
  v.push_back(data({kWriteFirst, 0x000100, 4096, false, 0x1122334455667788ull, 0xabc, 10000}));
  v.push_back(data({kWriteMiddle, 0x000101, 4096, false}));
  v.push_back(data({kWriteLast, 0x000102, 1810, true}));
  v.push_back(data({kSendOnly, 0xFFFFFF, 61, true}));  // a pad of 3, the last PSN before the wrap
  Frame a(128);
  a.resize(build_ack(a.data(), 128, path(), 0x000102, kAckSyndrome, 7));
  v.push_back(a);
  Frame n(128);
  n.resize(build_ack(n.data(), 128, path(), 0x000101, kNakPsnSequenceError, 6));
  v.push_back(n);
  Frame c(128);
  c.resize(build_cnp(c.data(), 128, path()));
  v.push_back(c);
  return v;
}

bool have(const char* tool) { return std::system(fmt::format("command -v {} >/dev/null 2>&1", tool).c_str()) == 0; }

TEST(RoceWire, ParsesBackWhatItBuilds) {
  const auto f = samples();
  const QpPath p = path();
  Parsed x;
  ASSERT_EQ(parse(f[0].data(), static_cast<uint32_t>(f[0].size()), x), ParseError::Ok);
  EXPECT_EQ(x.opcode, kWriteFirst);
  EXPECT_EQ(x.psn, 0x100u);
  EXPECT_EQ(x.dest_qp, 0x123u);
  EXPECT_EQ(x.payload, 4096u);
  EXPECT_TRUE(x.has_reth);
  EXPECT_EQ(x.va, 0x1122334455667788ull);
  EXPECT_EQ(x.rkey, 0xabcu);
  EXPECT_EQ(x.dma_len, 10000u);
  EXPECT_EQ(x.src_ip, p.src_ip);
  EXPECT_EQ(x.sport, p.sport);
  EXPECT_EQ(x.dscp, 26);
  EXPECT_EQ(x.ecn, 2) << "ECT(0), as DCQCN NICs send";
  ASSERT_EQ(parse(f[3].data(), static_cast<uint32_t>(f[3].size()), x), ParseError::Ok);
  EXPECT_EQ(x.payload, 61u) << "the pad is not payload";
  EXPECT_TRUE(x.ack_req);
  EXPECT_EQ(x.psn, 0xFFFFFFu);
  ASSERT_EQ(parse(f[5].data(), static_cast<uint32_t>(f[5].size()), x), ParseError::Ok);
  EXPECT_TRUE(x.has_aeth);
  EXPECT_TRUE(is_nak(x.syndrome));
  EXPECT_EQ(x.msn, 6u);
  ASSERT_EQ(parse(f[6].data(), static_cast<uint32_t>(f[6].size()), x), ParseError::Ok);
  EXPECT_EQ(x.opcode, kCnp);
  EXPECT_FALSE(x.has_reth) << "16 reserved bytes, not a RETH";
  EXPECT_EQ(x.dscp, kCnpDscp);
  EXPECT_EQ(x.ecn, 0);
  // A flipped payload bit fails the ICRC; a cut frame is truncated; ARP is not RoCE.
  Frame bad = f[1];
  bad[100] ^= 1;
  EXPECT_EQ(parse(bad.data(), static_cast<uint32_t>(bad.size()), x), ParseError::BadIcrc);
  EXPECT_EQ(parse(f[1].data(), 60, x), ParseError::Truncated);
  Frame arp(60, 0);
  arp[12] = 0x08, arp[13] = 0x06;
  EXPECT_EQ(parse(arp.data(), 60, x), ParseError::NotRoce);
  // A buffer too small is refused, not overrun; so is a datagram longer than IPv4 can say.
  Frame small(100);
  EXPECT_EQ(build_data(small.data(), 100, path(), {kSendOnly, 1, 4096, true}), 0u);
  Frame huge(70000);
  EXPECT_EQ(build_data(huge.data(), 70000, path(), {kSendOnly, 1, 65500, true}), 0u);
}

TEST(RoceWire, TsharkReadsTheTransportHeaders) {
  if (!have("tshark")) GTEST_SKIP() << "no tshark";
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("rs-roce-wire-{}", getpid());
  std::filesystem::create_directories(dir);
  write_pcap(dir + "/f.pcap", samples());
  const auto lines = command_lines(
      "tshark -n -r " + dir + "/f.pcap -T fields -E separator=, -e infiniband.bth.opcode -e infiniband.bth.psn -e infiniband.bth.destqp"
      " -e infiniband.bth.a -e infiniband.bth.padcnt -e infiniband.reth.va -e infiniband.reth.r_key -e infiniband.reth.dmalen"
      " -e infiniband.aeth.syndrome -e infiniband.aeth.msn -e ip.dsfield.dscp -e udp.srcport",
      false);
  std::filesystem::remove_all(dir);
  const std::string sport = std::to_string(path().sport);
  const std::vector<std::string> want = {
      "6,256,0x000123,0,0,0x1122334455667788,0x00000abc,10000,,,26," + sport,
      "7,257,0x000123,0,0,,,,,,26," + sport,
      "8,258,0x000123,1,2,,,,,,26," + sport,  // 1810 bytes: a pad of 2
      "4,16777215,0x000123,1,3,,,,,,26," + sport,
      "17,258,0x000123,0,0,,,,31,7,26," + sport,  // ACK: syndrome 0x1f
      "17,257,0x000123,0,0,,,,96,6,26," + sport,  // NAK, PSN sequence error: 0x60
      "129,0,0x000123,0,0,,,,,,48," + sport,  };
  std::string all;
  for (auto& l : lines) all += l + "\n";
  ASSERT_EQ(lines.size(), want.size()) << all;
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_EQ(lines[i], want[i]) << "frame " << i;
}

TEST(RoceWire, ScapyComputesTheSameIcrc) {
  if (std::system("/usr/bin/python3 -c 'import scapy.contrib.roce' >/dev/null 2>&1") != 0) GTEST_SKIP() << "no scapy";
  const std::string dir = std::filesystem::temp_directory_path() / fmt::format("rs-roce-icrc-{}", getpid());
  std::filesystem::create_directories(dir);
  write_pcap(dir + "/f.pcap", samples());
  {
    std::FILE* py = std::fopen((dir + "/check.py").c_str(), "w");
    ASSERT_NE(py, nullptr);
    std::fprintf(py,
                 "import logging\nlogging.getLogger('scapy').setLevel(logging.ERROR)\n"
                 "from scapy.all import rdpcap, Ether, raw\nfrom scapy.contrib.roce import BTH\n"
                 "for p in rdpcap('%s/f.pcap'):\n"
                 "  q = Ether(raw(p))\n"
                 "  b = q[BTH]\n"
                 "  b.icrc = None\n"
                 "  print(b.opcode, raw(Ether(raw(q))) == raw(p))\n",
                 dir.c_str());
    std::fclose(py);
  }
  const auto lines = run_python(dir + "/check.py");
  std::filesystem::remove_all(dir);
  ASSERT_EQ(lines.size(), 7u) << (lines.empty() ? "" : lines[0]);
  for (const auto& l : lines) EXPECT_EQ(l.substr(l.find(' ') + 1), "True") << l;
}

TEST(RoceWire, UdpSourcePortFollowsLinux) {
  // rdma_calc_flow_label(lqpn, rqpn) folded by rdma_flow_label_to_udp_sport, by hand:
  // 0x11 * 0x12 = 0x132, no high bits: 0x132 | 0xC000.
  EXPECT_EQ(roce_udp_sport(0x11, 0x12), 0xC132);
  // Symmetric in the two QP numbers, and always in RoCE's range.
  EXPECT_EQ(roce_udp_sport(0xabcdef, 0x123456), roce_udp_sport(0x123456, 0xabcdef));
  for (uint32_t q = 1; q < 5000; q += 37) EXPECT_GE(roce_udp_sport(q, q * 7 + 3), 0xC000);
}

}  // namespace
}  // namespace rs::nic
