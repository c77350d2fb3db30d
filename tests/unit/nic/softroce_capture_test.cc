// The emulated RoCE NIC (dataplane/nic: roce_wire, rc_qp) against real SoftRoCE (Linux rxe)
// captures: header layout and opcode sequence, not bytes. The captures are third-party files read
// at run time from <repo>/../shared/captures/rocev2/ (see SOURCES.md there; never copied into the
// repo); without them (as on CI), or without tshark, the tests skip. Each holds one RC exchange: an
// RDMA WRITE ONLY of 18 bytes answered by an ACKNOWLEDGE, then a 4096-byte RDMA READ answered at
// path MTU 1024 by READ RESPONSE FIRST/MIDDLE/MIDDLE/LAST.
// Compared: frame, IP and UDP lengths, DF, TTL, UDP port 4791 and checksum 0, every BTH field
// (opcode, SE, M, pad, TVer, P_Key, AckReq, QP, PSN), RETH presence and DMA length, AETH syndrome
// and MSN, payload sizes and segmentation, the ACK's PSN (the acknowledged packet's) and MSN.
// Legitimately different, so not compared:
//  - addresses, MACs, IP ID (rxe counts it; the product sends 0 with DF), RETH VA and R_Key;
//  - the UDP source port: rxe hashes the local QPN only (0xC000 + hash_32(qpn, 14), so the two
//    directions of a QP pair differ in montybeatnik_test.pcap), the product follows mlx5's
//    rdma_get_udp_sport(lqpn, rqpn);
//  - DSCP/ECN: the captures are DSCP 0 Not-ECT; the product sends its class's DSCP with ECT(0),
//    as DCQCN NICs do.
#include <arpa/inet.h>
#include <fmt/core.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "dataplane/nic/rc_qp.h"
#include "dataplane/nic/roce_wire.h"
#include "tests/support/frame_files.h"

namespace rs::nic {
namespace {

namespace fs = std::filesystem;
using test::command_lines;
using Frame = std::vector<uint8_t>;
using Row = std::map<std::string, std::string>;

// The source tree: RS_SOURCE_ROOT (meson sets it for tests), else the first parent of this binary
// or of the working directory that holds dataplane/nic/roce_wire.h.
fs::path source_root() {
  if (const char* env = std::getenv("RS_SOURCE_ROOT")) return env;
  for (fs::path p : {fs::read_symlink("/proc/self/exe").parent_path(), fs::current_path()})
    for (; !p.empty() && p != p.root_path(); p = p.parent_path())
      if (fs::exists(p / "dataplane/nic/roce_wire.h")) return p;
  return {};
}

std::vector<fs::path> captures() {
  const fs::path dir = source_root() / ".." / "shared" / "captures" / "rocev2";
  std::vector<fs::path> v;
  for (const char* name : {"montybeatnik_test.pcap", "montybeatnik_roce_capture_read-write-ecn.pcap"})
    if (fs::exists(dir / name)) v.push_back(dir / name);
  return v;
}

#define NEED_CAPTURES(tshark)                                                                          \
  if (captures().empty()) GTEST_SKIP() << "no SoftRoCE captures in <repo>/../shared/captures/rocev2/"; \
  if ((tshark) && std::system("command -v tshark >/dev/null 2>&1") != 0) GTEST_SKIP() << "no tshark"

// The classic pcap records of a little-endian file (what the captures are).
std::vector<Frame> read_pcap(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  uint32_t hdr[6], rec[4];
  std::vector<Frame> v;
  if (!in.read(reinterpret_cast<char*>(hdr), sizeof hdr) || hdr[0] != 0xa1b2c3d4) return v;
  while (in.read(reinterpret_cast<char*>(rec), sizeof rec)) {
    Frame f(rec[2]);
    if (!in.read(reinterpret_cast<char*>(f.data()), rec[2])) break;
    v.push_back(std::move(f));
  }
  return v;
}

// Layout fields, compared between the capture and the product; then the ones that may differ.
const std::vector<std::string> kLayout = {
    "frame.len", "ip.len", "ip.flags.df", "ip.ttl", "ip.proto", "udp.dstport", "udp.length", "udp.checksum",
    "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt", "infiniband.bth.tver",
    "infiniband.bth.p_key", "infiniband.bth.a", "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.reth.dmalen",
    "infiniband.aeth.syndrome", "infiniband.aeth.msn", "data.len"};
const std::vector<std::string> kFields = [] {
  auto v = kLayout;
  v.insert(v.end(), {"ip.src", "ip.dst", "udp.srcport"});
  return v;
}();

// The RC packets (opcodes below 0x20; the captures' UD CM MADs and ARP left out), as tshark reads them.
std::vector<Row> decode(const fs::path& pcap) {
  std::string cmd = "tshark -n -r '" + pcap.string() + "' -Y 'infiniband.bth.opcode < 32' -T fields -E separator='|' -E occurrence=f";
  for (const auto& f : kFields) cmd += " -e " + f;
  std::vector<Row> rows;
  for (const auto& line : command_lines(cmd, false)) {
    Row r;
    std::size_t at = 0;
    for (const auto& f : kFields) {
      const std::size_t bar = std::min(line.find('|', at), line.size());
      r[f] = line.substr(at, bar - at);
      at = bar + 1;
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

uint32_t num(const std::string& s) { return static_cast<uint32_t>(std::stoul(s, nullptr, 0)); }
uint32_t ip(const std::string& s) { uint32_t a = 0; inet_pton(AF_INET, s.c_str(), &a); return a; }

std::vector<Row> decode_ours(const std::vector<Frame>& frames) {
  const fs::path f = fs::temp_directory_path() / fmt::format("rs-softroce-{}.pcap", getpid());
  test::write_pcap(f, frames);
  auto rows = decode(f);
  fs::remove(f);
  return rows;
}

Frame build(const QpPath& p, const DataPacket& d) {
  Frame f(9000);
  f.resize(build_data(f.data(), static_cast<uint32_t>(f.size()), p, d));
  return f;
}

// FIRST/MIDDLE/LAST/ONLY of a SEND (0..4), an RDMA WRITE (6..10) or an RDMA READ RESPONSE (13..16).
char position(uint32_t op) {
  static const std::map<uint32_t, char> pos = {{0, 'F'}, {1, 'M'},  {2, 'L'},  {4, 'O'},  {6, 'F'},  {7, 'M'},
                                               {8, 'L'}, {10, 'O'}, {13, 'F'}, {14, 'M'}, {15, 'L'}, {16, 'O'}};
  return pos.contains(op) ? pos.at(op) : '?';
}

// The product's parser and transport fed the capture's own bytes (rxe's ICRCs included).
TEST(SoftRoceCapture, ParserAndQpAgreeWithTheCapturedExchange) {
  NEED_CAPTURES(false);
  for (const auto& cap : captures()) {
    SCOPED_TRACE(cap.filename().string());
    std::vector<Parsed> write, ack;
    for (const Frame& f : read_pcap(cap)) {
      Parsed x;
      const ParseError e = parse(f.data(), static_cast<uint32_t>(f.size()), x);
      // parse checks the ICRC before the opcode: READ and UD frames come back Unsupported, never BadIcrc.
      EXPECT_TRUE(e == ParseError::Ok || e == ParseError::Unsupported || e == ParseError::NotRoce) << parse_error_name(e);
      if (e == ParseError::Ok && x.opcode == kWriteOnly) write.push_back(x);
      if (e == ParseError::Ok && x.opcode == kAcknowledge) ack.push_back(x);
    }
    ASSERT_TRUE(write.size() == 1 && ack.size() == 1) << write.size() << " WRITE ONLY, " << ack.size() << " ACK";
    const Parsed& w = write[0];
    EXPECT_EQ(w.payload, 18u) << "the pad of 2 is not payload";
    EXPECT_TRUE(w.has_reth && w.dma_len == 18 && w.ack_req);
    // The product's responder answers rxe's WRITE as rxe's responder did.
    const RcConfig cfg{.mtu = 1024};
    RcResponder resp(cfg, w.psn);
    const auto r = resp.on_data(w.opcode, w.psn, w.ack_req, w.payload);
    ASSERT_TRUE(r.send);
    EXPECT_EQ(std::tuple(r.psn, r.syndrome, r.msn), std::tuple(ack[0].psn, ack[0].syndrome, ack[0].msn));
    EXPECT_EQ(r.psn, w.psn) << "an ACK names the PSN it acknowledges";
    // And the product's requester, having sent that WRITE, completes it on rxe's ACK.
    RcRequester req(cfg, w.psn);
    req.post(7, w.dma_len, true, 0);
    EXPECT_EQ(req.next(0).psn, w.psn);
    req.on_ack(ack[0].psn, ack[0].syndrome, 1);
    EXPECT_EQ(req.take_completions().size(), 1u);
  }
}

// The same exchange built by the product, and both read by tshark with the same fields.
TEST(SoftRoceCapture, WriteOnlyAndAckHaveTheCapturedLayout) {
  NEED_CAPTURES(true);
  for (const auto& cap : captures()) {
    SCOPED_TRACE(cap.filename().string());
    const auto theirs = decode(cap);
    ASSERT_GE(theirs.size(), 2u);
    const Row &tw = theirs[0], &ta = theirs[1];
    ASSERT_EQ(tw.at("infiniband.bth.opcode"), "10");
    ASSERT_EQ(ta.at("infiniband.bth.opcode"), "17");
    EXPECT_EQ(ta.at("infiniband.bth.psn"), tw.at("infiniband.bth.psn"));

    const uint32_t psn = num(tw.at("infiniband.bth.psn"));
    const uint32_t responder_qp = num(tw.at("infiniband.bth.destqp")), requester_qp = num(ta.at("infiniband.bth.destqp"));
    // rxe's UDP source port is 0xC000 + hash_32(local QPN, 14); the product's rdma_get_udp_sport's.
    auto rxe_sport = [](uint32_t qpn) { return std::to_string(0xC000 + (qpn * 0x61C88647u >> 18)); };
    EXPECT_EQ(tw.at("udp.srcport"), rxe_sport(requester_qp));
    EXPECT_EQ(ta.at("udp.srcport"), rxe_sport(responder_qp));
    const uint16_t sport = roce_udp_sport(requester_qp, responder_qp);
    const QpPath out{.src_ip = ip(tw.at("ip.src")), .dst_ip = ip(tw.at("ip.dst")), .dest_qp = responder_qp, .sport = sport};
    const QpPath back{.src_ip = out.dst_ip, .dst_ip = out.src_ip, .dest_qp = requester_qp, .sport = sport};
    const RcConfig cfg{.mtu = 1024};
    RcRequester req(cfg, psn);
    req.post(1, num(tw.at("infiniband.reth.dmalen")), true, 0);
    ASSERT_TRUE(req.ready());
    const Frame data = build(out, req.next(0));
    EXPECT_FALSE(req.ready()) << "18 bytes are one packet";
    Parsed x;
    ASSERT_EQ(parse(data.data(), static_cast<uint32_t>(data.size()), x), ParseError::Ok);
    RcResponder resp(cfg, psn);
    const auto r = resp.on_data(x.opcode, x.psn, x.ack_req, x.payload);
    ASSERT_TRUE(r.send);
    Frame a(128);
    a.resize(build_ack(a.data(), 128, back, r.psn, r.syndrome, r.msn));

    const auto ours = decode_ours({data, a});
    ASSERT_EQ(ours.size(), 2u);
    // An empty field is one tshark did not find: only the other header's fields may be missing.
    for (const auto& f : kLayout) {
      EXPECT_EQ(tw.at(f).empty(), f.starts_with("infiniband.aeth")) << "WRITE ONLY " << f;
      EXPECT_EQ(ta.at(f).empty(), f == "data.len" || f.starts_with("infiniband.reth")) << "ACK " << f;
    }
    for (std::size_t i = 0; i < 2; ++i)
      for (const auto& f : kLayout)
        EXPECT_EQ(ours[i].at(f), theirs[i].at(f)) << (i ? "ACK " : "WRITE ONLY ") << f;
  }
}

// Segmentation at the path MTU, and the MSN. rxe answered the 4096-byte READ (the QP's second
// message, PSNs following the WRITE's) with MTU-sized READ RESPONSE FIRST/MIDDLE/MIDDLE/LAST; the
// product's requester posts the WRITE and then a 4096-byte WRITE and must segment it the same way:
// same positions, payloads and PSNs (the opcode families differ: READ RESPONSE carries an AETH on
// FIRST and LAST, WRITE a RETH on FIRST; MIDDLE packets are alike to the byte count). The MSN
// counts messages, not packets: rxe's ACK says 1, its last READ RESPONSE 2; the product's
// responder, fed the product's packets, must say the same.
TEST(SoftRoceCapture, SegmentationAndMsnFollowTheCapturedRead) {
  NEED_CAPTURES(true);
  for (const auto& cap : captures()) {
    SCOPED_TRACE(cap.filename().string());
    const auto theirs = decode(cap);
    ASSERT_EQ(theirs.size(), 7u) << "WRITE ONLY, ACK, READ REQUEST, 4 READ RESPONSES";
    const Row &write = theirs[0], &read = theirs[2];
    ASSERT_EQ(read.at("infiniband.bth.opcode"), "12");
    const std::vector<Row> resp(theirs.begin() + 3, theirs.end());
    const uint32_t mtu = num(resp[0].at("data.len")), psn = num(write.at("infiniband.bth.psn"));
    EXPECT_EQ(mtu, 1024u);

    const RcConfig cfg{.mtu = mtu};
    RcRequester req(cfg, psn);
    RcResponder responder(cfg, psn);
    req.post(1, num(write.at("infiniband.reth.dmalen")), true, 0);
    req.post(2, num(read.at("infiniband.reth.dmalen")), true, 0);
    const QpPath p{.dest_qp = num(read.at("infiniband.bth.destqp"))};
    std::vector<Frame> frames;
    std::vector<std::string> msns;
    while (req.ready()) {
      const DataPacket d = req.next(0);
      frames.push_back(build(p, d));
      const auto r = responder.on_data(d.opcode, d.psn, d.ack_req, d.payload);
      EXPECT_EQ(r.send, d.ack_req) << "an ACK exactly where one is asked for, PSN " << d.psn;
      if (r.send) msns.push_back(std::to_string(r.msn));
    }
    EXPECT_EQ(msns, (std::vector<std::string>{theirs[1].at("infiniband.aeth.msn"), resp.back().at("infiniband.aeth.msn")}));

    frames.erase(frames.begin());  // the WRITE ONLY: compared above
    const auto ours = decode_ours(frames);
    ASSERT_EQ(ours.size(), resp.size());
    std::string want, got;
    for (std::size_t i = 0; i < resp.size(); ++i) {
      want += position(num(resp[i].at("infiniband.bth.opcode")));
      got += position(num(ours[i].at("infiniband.bth.opcode")));
      EXPECT_EQ(ours[i].at("data.len"), resp[i].at("data.len")) << "packet " << i;
      EXPECT_EQ(ours[i].at("infiniband.bth.psn"), resp[i].at("infiniband.bth.psn")) << "packet " << i;
      EXPECT_EQ(ours[i].at("infiniband.bth.padcnt"), resp[i].at("infiniband.bth.padcnt"));
      EXPECT_EQ(ours[i].at("infiniband.reth.dmalen"), i == 0 ? read.at("infiniband.reth.dmalen") : "")
          << "RETH (the whole message's length) on the first packet only";
      if (want.back() == 'M') {
        EXPECT_EQ(ours[i].at("frame.len"), resp[i].at("frame.len")) << "MIDDLE: BTH, payload, ICRC";
      }
    }
    EXPECT_EQ(want, "FMML");
    EXPECT_EQ(got, want);
  }
}

}  // namespace
}  // namespace rs::nic
