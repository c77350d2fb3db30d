// Port captures through the control protocol, on a stepped switch: the pcapng files are read
// back by scapy (an independent reader), limits end a capture, and a port not captured is
// left alone.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "control/runtime/captures.h"
#include "control/runtime/control_api.h"
#include "tests/unit/control/control_rig.h"

namespace rs::test {
namespace {

using nlohmann::json;

using Rig = ControlRig;

// scapy's summary of a pcapng file: one line a packet, "src dst proto length".
std::string scapy_read(const std::string& file) {
  const std::string cmd = "/usr/bin/python3 -c \"from scapy.all import rdpcap, IP\n"
                          "for p in rdpcap('" + file + "'):\n"
                          "  print(p[IP].src, p[IP].dst, p[IP].proto, len(p))\" 2>&1";
  std::string out;
  if (std::FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  return out;
}

// tshark's reading of each packet's direction flag (pcapng epb_flags; scapy does not read it).
std::string tshark_directions(const std::string& file) {
  std::string out;
  if (std::FILE* f = popen(("tshark -r " + file + " -T fields -e frame.packet_flags_direction 2>/dev/null | sort | uniq -c").c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  return out;
}

std::size_t lines(const std::string& s) { return static_cast<std::size_t>(std::count(s.begin(), s.end(), '\n')); }

SwitchConfig two_flows() {
  SwitchConfig cfg;
  for (int h = 0; h < 4; ++h) add_host_port(cfg, 10, QueueLimits{});
  add_host_flow(cfg, 0, 1, 0.5, 0x100, 1024);
  add_host_flow(cfg, 2, 3, 0.5, 0x200, 512);
  return cfg;
}

class CaptureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/rs-capture.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir;
};

TEST_F(CaptureTest, CountLimitWritesWhatScapyReads) {
  Rig r(two_flows());
  const std::string file = dir + "/h1.pcapng";
  json resp = r.call({{"op", "capture.start"}, {"port", "h1"}, {"direction", "tx"}, {"file", file}, {"count", 25}});
  ASSERT_TRUE(resp["ok"].get<bool>()) << resp.dump();
  r.run(2 * kMs);
  json l = r.call({{"op", "capture.list"}})["result"][0];
  EXPECT_TRUE(l["done"].get<bool>());
  EXPECT_EQ(l["packets"], 25);
  EXPECT_EQ(l["lost"], 0);
  EXPECT_EQ(r.sw.tap().dirs(1), 0) << "the tap stays on after its count";
  const std::string got = scapy_read(file);
  ASSERT_EQ(lines(got), 25u) << got;
  // Out of the switch towards h1: h0's RoCE packets (UDP), 1082 bytes, outbound (direction 2).
  EXPECT_NE(got.find("10.0.0.2 10.0.1.2 17 1082"), std::string::npos) << got;
  EXPECT_NE(tshark_directions(file).find("25 0x00000002"), std::string::npos) << "outbound: " << tshark_directions(file);
  EXPECT_EQ(got.find("10.0.2.2"), std::string::npos) << "another port's packets in the file";
}

TEST_F(CaptureTest, DurationSnaplenBothDirectionsAndStop) {
  Rig r(two_flows());
  const std::string a = dir + "/h0.pcapng", b = dir + "/h3.pcapng";
  ASSERT_TRUE(r.call({{"op", "capture.start"}, {"port", "h0"}, {"file", a}, {"duration_s", 0.001}, {"snaplen", 64}})["ok"].get<bool>());
  ASSERT_TRUE(r.call({{"op", "capture.start"}, {"port", "h3"}, {"direction", "rx"}, {"file", b}, {"count", 1000000}})["ok"].get<bool>());
  EXPECT_EQ(r.sw.tap().dirs(1), 0) << "a port not captured has its tap off";
  r.run(3 * kMs);
  const json l = r.call({{"op", "capture.list"}})["result"];
  EXPECT_TRUE(l[0]["done"].get<bool>()) << "the duration ended it";
  EXPECT_FALSE(l[1]["done"].get<bool>());
  const uint64_t in_1ms = l[0]["packets"];
  // 0.5 Gb/s of 1082-byte frames for 1 ms is about 58 packets; h0 receives nothing.
  EXPECT_NEAR(static_cast<double>(in_1ms), 58.0, 6.0);
  const std::string got = scapy_read(a);
  EXPECT_EQ(lines(got), in_1ms);
  EXPECT_NE(got.find("10.0.0.2 10.0.1.2 17 64"), std::string::npos) << "snap length 64: " << got;
  EXPECT_NE(tshark_directions(a).find(" 0x00000001"), std::string::npos) << "inbound: " << tshark_directions(a);
  EXPECT_EQ(tshark_directions(a).find(" 0x00000002"), std::string::npos) << "h0 sends nothing out: " << tshark_directions(a);
  // h3 receives h2's flow (no rx at h3: it only sends nothing) -> its rx is empty; stop it.
  const json stopped = r.call({{"op", "capture.stop"}, {"port", "h3"}});
  ASSERT_TRUE(stopped["ok"].get<bool>());
  EXPECT_TRUE(r.call({{"op", "capture.list"}})["result"][1]["done"].get<bool>());
  EXPECT_FALSE(r.call({{"op", "capture.stop"}, {"port", "h3"}})["ok"].get<bool>()) << "stopped twice";
  // The books still balance: a capture copies, it never takes a packet.
  EXPECT_TRUE(r.sw.totals().balanced());
}

TEST_F(CaptureTest, BadRequestsAreRefused) {
  Rig r(two_flows());
  const std::string file = dir + "/x.pcapng";
  struct Case {
    json req;
    const char* field;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {{{"op", "capture.start"}, {"port", "h9"}, {"file", file}}, "port", "no port 'h9'"},
      {{{"op", "capture.start"}, {"port", "h1"}, {"file", "rel.pcapng"}}, "file", "absolute path"},
      {{{"op", "capture.start"}, {"port", "h1"}, {"file", "/nonexistent/dir/x.pcapng"}}, "file", "cannot write"},
      {{{"op", "capture.start"}, {"port", "h1"}, {"file", file}, {"direction", "up"}}, "direction", "rx, tx or both"},
      {{{"op", "capture.start"}, {"port", "h1"}}, "file", "missing"},
      {{{"op", "capture.stop"}, {"port", "h1"}}, "port", "no capture running"},
  };
  for (auto& c : cases) {
    const json resp = r.call(c.req);
    ASSERT_FALSE(resp["ok"].get<bool>()) << c.req.dump();
    EXPECT_EQ(resp["error"]["field"], c.field) << resp.dump();
    EXPECT_NE(resp["error"]["reason"].get<std::string>().find(c.reason), std::string::npos) << resp.dump();
  }
  ASSERT_TRUE(r.call({{"op", "capture.start"}, {"port", "h1"}, {"file", file}, {"count", 5}})["ok"].get<bool>());
  const json busy = r.call({{"op", "capture.start"}, {"port", "h1"}, {"file", file}, {"count", 5}});
  EXPECT_NE(busy["error"]["reason"].get<std::string>().find("being captured already"), std::string::npos) << busy.dump();
}

}  // namespace
}  // namespace rs::test
