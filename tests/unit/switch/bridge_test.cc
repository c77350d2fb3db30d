// L2 bridging within 802.1Q VLANs (stages/bridge.h) through a whole switch (bridge_rig.h): flood
// to the VLAN's other members then learning and known unicast to one port; broadcast and
// multicast always flood, a frame for a station on its own port is filtered, link-local control
// frames never cross; VLANs never leak into each other; tags pushed (PCP = the traffic class),
// popped and kept, the bytes judged by scapy (IP checksum, RoCE ICRC); bridged traffic queued,
// ECN-marked and PFC-charged as routed traffic is; the flood storm limit. bridge_fdb_test.cc:
// the FDB (ageing, moves, limits) and two workers.
#include "tests/unit/switch/bridge_rig.h"

namespace rs::test {
namespace {

// ---------------------------------------------------------------------------------------------
// 1. Flood, then learn: unknown unicast reaches every other member of the VLAN once (tagged on
// the tagged member), nothing outside it; the answer goes to the one port its destination was
// learned on, and so does the next frame: flooding stops once both stations are known.
TEST_F(BridgeTest, FloodThenLearnThenForward) {
  make(kFive, {10, 20});
  const PacketSpec ab = roce(kB, kA);
  send(0, ab);
  settle();
  auto out = take_all();
  EXPECT_EQ(out[0].size(), 0u) << "not back to its own port";
  ASSERT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_EQ(out[3].size(), 0u) << "VLAN 20's port";
  EXPECT_EQ(out[4].size(), 0u) << "a port in no VLAN";
  EXPECT_EQ(out[1][0].bytes, ab.bytes()) << "untagged to an untagged member, unchanged";
  EXPECT_TRUE(out[2][0].tagged());
  EXPECT_EQ(out[2][0].vid(), 10);
  EXPECT_EQ(ctr("flooded"), 1u);
  EXPECT_EQ(ctr("flood_copies"), 1u);
  EXPECT_EQ(sw->totals().replicated, 1u);
  EXPECT_EQ(ctr("forwarded"), 0u);
  EXPECT_EQ(ctr("learn_reports"), 1u);
  EXPECT_EQ((fdb()), (std::map<std::pair<uint16_t, std::string>, uint16_t>{{{10, kA}, 0}}));

  // B answers: A is known on p0.
  send(1, roce(kA, kB));
  settle();
  EXPECT_EQ(counts(), (Counts{1, 0, 0, 0, 0}));
  EXPECT_EQ(ctr("forwarded"), 1u);
  EXPECT_EQ(ctr("flooded"), 1u);
  // A to B again: B is known on p1 now.
  for (int i = 0; i < 3; ++i) send(0, roce(kB, kA, kRoceDscp, 0, std::nullopt, 64, i + 1));
  settle();
  EXPECT_EQ(counts(), (Counts{0, 3, 0, 0, 0}));
  EXPECT_EQ(ctr("forwarded"), 4u);
  EXPECT_EQ(ctr("flooded"), 1u) << "no flooding once both are learned";
  EXPECT_EQ(ctr("learn_reports"), 2u) << "a known source is not reported again";
  EXPECT_EQ((fdb()), (std::map<std::pair<uint16_t, std::string>, uint16_t>{{{10, kA}, 0}, {{10, kB}, 1}}));
  EXPECT_EQ(sw->fdb()->learned(), 2u);
  EXPECT_EQ(sw->fdb()->size(), 2u);

  // The stats show it, ports by name.
  const nlohmann::json j = stats_json(*sw);
  ASSERT_TRUE(j.contains("bridge"));
  const auto& b = j["bridge"];
  EXPECT_EQ(b["fdb_entries"], 2);
  EXPECT_EQ(b["learned"], 2);
  EXPECT_EQ(b["moved"], 0);
  EXPECT_EQ(b["aged"], 0);
  EXPECT_EQ(b["fdb_full"], 0);
  std::map<std::string, std::string> rows;
  for (auto& r : b["fdb"]) {
    EXPECT_EQ(r["vlan"], 10);
    rows[r["mac"].get<std::string>()] = r["port"].get<std::string>();
  }
  EXPECT_EQ(rows, (std::map<std::string, std::string>{{kA, "p0"}, {kB, "p1"}}));
  EXPECT_EQ(j["totals"]["replicated"], 1);
  EXPECT_EQ(j["drops"].value("vlan_not_member", 0), 0);
}

// The trace shows the bridge's decision: the VLAN, flood (with the target ports) or the port.
TEST_F(BridgeTest, TraceShowsFloodAndForward) {
  make(kFive, {10, 20});
  sw->set_trace(8, 0);
  send(0, roce(kB, kA));
  settle();
  send(1, roce(kA, kB));
  settle();
  send(0, roce(kB, kA, kRoceDscp, 0, tag(20)));  // p0 does not carry 20
  settle();
  take_all();
  const std::string t = sw->trace_text();
  EXPECT_NE(t.find("vlan 10: flood to ports 0x6"), std::string::npos) << t;
  EXPECT_NE(t.find("vlan 10: to port 0"), std::string::npos) << t;
  EXPECT_NE(t.find("not a member of the frame's VLAN"), std::string::npos) << t;
  EXPECT_NE(t.find("bridged"), std::string::npos) << t;
}

// Link-local control frames (802.1Q 8.6.3: destinations 01-80-C2-00-00-00..0F, e.g. STP BPDUs,
// LACP, 802.1X, LLDP) are never forwarded by a bridge; PAUSE/PFC act on the port only.
TEST_F(BridgeTest, LinkLocalControlFramesAreNotBridged) {
  make(kFive, {10, 20});
  EXPECT_EQ(send_and_count(0, Eth{.dst = "01:80:c2:00:00:0e", .src = kA, .type = 0x88cc} / Payload::of_size(60)),
            (Counts{0, 0, 0, 0, 0}))
      << "LLDP";
  EXPECT_EQ(send_and_count(0, pfc_spec()), (Counts{0, 0, 0, 0, 0})) << "PFC";
  EXPECT_EQ(send_and_count(0, Eth{.dst = "01:80:c2:00:00:02", .src = kA, .type = 0x8809} / Payload::of_size(110)),
            (Counts{0, 0, 0, 0, 0}))
      << "LACP (slow protocols)";
  EXPECT_EQ(send_and_count(0, Eth{.dst = "01:80:c2:00:00:00", .src = kA, .type = 0x0026} / Payload::of_size(38)),
            (Counts{0, 0, 0, 0, 0}))
      << "an STP BPDU (802.3 length + LLC)";
  EXPECT_EQ(send_and_count(0, Eth{.dst = "01:80:c2:00:00:03", .src = kA, .type = 0x888e} / Payload::of_size(40)),
            (Counts{0, 0, 0, 0, 0}))
      << "802.1X EAPOL";
  EXPECT_EQ(ctr("flooded"), 0u);
}

// ---------------------------------------------------------------------------------------------
// 2. Broadcast and multicast flood even with every station known; a frame whose destination was
// learned on the port it came in on is filtered (bridge_filtered), not sent back.
TEST_F(BridgeTest, BroadcastAndMulticastFloodAndSamePortIsFiltered) {
  make(kFive, {10, 20});
  send(0, roce(kB, kA));
  send(1, roce(kA, kB));
  settle();
  take_all();
  ASSERT_EQ(fdb().size(), 2u);
  const uint64_t flooded0 = ctr("flooded");

  EXPECT_EQ(send_and_count(0, roce(kBcast, kA)), (Counts{0, 1, 1, 0, 0})) << "broadcast";
  EXPECT_EQ(send_and_count(0, roce(kMcast, kA)), (Counts{0, 1, 1, 0, 0})) << "IPv4 multicast";
  EXPECT_EQ(send_and_count(1, Eth{.dst = "33:33:00:00:00:01", .src = kB} / Ipv6{} / Udp{.dport = 5000} / Payload::of_size(30)),
            (Counts{1, 0, 1, 0, 0}))
      << "IPv6 multicast";
  EXPECT_EQ(send_and_count(1, raw_l2(kBcast, kB)), (Counts{1, 0, 1, 0, 0})) << "a non-IP broadcast is bridged too";
  EXPECT_EQ(send_and_count(2, raw_l2(kBcast, kC, tag(10))), (Counts{1, 1, 0, 0, 0})) << "from the tagged member";
  EXPECT_EQ(ctr("flooded") - flooded0, 5u);
  EXPECT_EQ(ctr("forwarded"), 0u) << "a group address is never forwarded as a known station";

  // C on p0 too: A's frame to C is filtered, nothing leaves.
  send(0, raw_l2(kBcast, kC));  // C moves to p0 (it was on p2)
  settle();
  take_all();
  ASSERT_EQ(fdb().at({10, kC}), 0);
  EXPECT_EQ(send_and_count(0, roce(kC, kA)), (Counts{0, 0, 0, 0, 0}));
  EXPECT_EQ(sw->drops(0, DropReason::BridgeFiltered), 1u);
  EXPECT_EQ(sw->drops(DropReason::BridgeFiltered), 1u);
  EXPECT_EQ(sw->drops(DropReason::BridgeStorm), 0u);
}

// ---------------------------------------------------------------------------------------------
// 3. VLAN isolation: VLAN 10 (p0, p1 untagged; p2 tagged) and VLAN 20 (p3, p4 untagged; p2 and
// p5 tagged) never see each other's frames, the same MAC in both is two stations, and a frame
// of a VLAN its port does not carry (a tag it does not carry, an untagged frame on a port with
// no access VLAN) is dropped as vlan_not_member and not learned from.
TEST_F(BridgeTest, VlansAreIsolated) {
  make({{10, {}}, {10, {}}, {0, {10, 20}}, {20, {}}, {20, {}}, {0, {20}}}, {10, 20});
  auto out = (send(0, roce(kBcast, kA)), settle(), take_all());
  EXPECT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_EQ(out[2][0].vid(), 10);
  EXPECT_EQ(out[3].size() + out[4].size() + out[5].size(), 0u) << "VLAN 10 leaked into VLAN 20";

  out = (send(3, roce(kBcast, kB)), settle(), take_all());
  EXPECT_EQ(out[0].size() + out[1].size(), 0u) << "VLAN 20 leaked into VLAN 10";
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_EQ(out[2][0].vid(), 20);
  EXPECT_EQ(out[4].size(), 1u);
  ASSERT_EQ(out[5].size(), 1u);
  EXPECT_EQ(out[5][0].vid(), 20);

  // From the trunk, tagged 20: VLAN 20's ports only.
  EXPECT_EQ(send_and_count(2, roce(kBcast, kC, kRoceDscp, 0, tag(20))), (Counts{0, 0, 0, 1, 1, 1}));
  // The same MAC in both VLANs: two entries, each VLAN's traffic to its own.
  send(1, raw_l2(kBcast, kC));  // C in VLAN 10 on p1 (and in VLAN 20 on p2, above)
  settle();
  take_all();
  const auto f = fdb();
  EXPECT_EQ(f.at({10, kA}), 0);
  EXPECT_EQ(f.at({20, kB}), 3);
  EXPECT_EQ(f.at({20, kC}), 2);
  EXPECT_EQ(f.at({10, kC}), 1);
  EXPECT_EQ(f.size(), 4u);
  EXPECT_EQ(send_and_count(0, roce(kC, kA)), (Counts{0, 1, 0, 0, 0, 0})) << "VLAN 10's C";
  EXPECT_EQ(send_and_count(4, roce(kC, "02:00:00:00:aa:44")), (Counts{0, 0, 1, 0, 0, 0})) << "VLAN 20's C";
  EXPECT_EQ(send_and_count(5, roce(kB, "02:00:00:00:aa:55", kRoceDscp, 0, tag(20))), (Counts{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(sw->drops(DropReason::VlanNotMember), 0u);

  // Not members: p2 does not carry 30, p5 has no access VLAN, p0 carries 10 untagged, not 20.
  const size_t fdb_before = fdb().size();
  EXPECT_EQ(send_and_count(2, roce(kBcast, "02:00:00:00:bb:01", kRoceDscp, 0, tag(30))), (Counts{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(send_and_count(5, roce(kBcast, "02:00:00:00:bb:02")), (Counts{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(send_and_count(0, roce(kBcast, "02:00:00:00:bb:03", kRoceDscp, 0, tag(20))), (Counts{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(send_and_count(5, roce(kA, "02:00:00:00:bb:04", kRoceDscp, 0, tag(10))), (Counts{0, 0, 0, 0, 0, 0}))
      << "a known station of VLAN 10 is not reached from a port outside it";
  EXPECT_EQ(sw->drops(2, DropReason::VlanNotMember), 1u);
  EXPECT_EQ(sw->drops(5, DropReason::VlanNotMember), 2u);
  EXPECT_EQ(sw->drops(0, DropReason::VlanNotMember), 1u);
  EXPECT_EQ(sw->drops(DropReason::VlanNotMember), 4u);
  EXPECT_EQ(fdb().size(), fdb_before) << "nothing learned from a frame outside its port's VLANs";
}

// ---------------------------------------------------------------------------------------------
// 4. Tags, judged by scapy: untagged -> tagged member gets 802.1Q with VID 10 and PCP = the
// traffic class (DSCP 26 -> TC 3); tagged -> untagged member loses it; tagged -> tagged keeps
// it as it came (PCP 5 stays 5); the IP datagram (header, BTH, payload, ICRC) is unchanged in
// every copy.
std::vector<std::string> scapy_lines(const std::vector<std::vector<uint8_t>>& frames) {
  char tmpl[] = "/tmp/rs-bridge-test.XXXXXX";
  if (!mkdtemp(tmpl)) return {"mkdtemp failed"};
  const std::string dir = tmpl;
  write_pcap(dir + "/out.pcap", frames);
  std::ofstream(dir + "/check.py")
      << "import struct\n"
         "from scapy.all import rdpcap, Ether, Dot1Q, IP, UDP, raw\n"
         "from scapy.utils import checksum\n"
         "from scapy.contrib.roce import BTH\n"
         "for p in rdpcap('" + dir + "/out.pcap'):\n"
         "  vid, pcp = (p[Dot1Q].vlan, p[Dot1Q].prio) if Dot1Q in p else (-1, -1)\n"
         "  ip = p[IP]\n"
         "  hdr = raw(ip)[:ip.ihl * 4]\n"
         "  b = p[BTH]\n"
         "  icrc_ok = b.compute_icrc(None) == struct.pack('!I', b.icrc)\n"
         "  print(vid, pcp, ip.tos >> 2, ip.tos & 3, checksum(hdr) == 0, UDP in p and p[UDP].dport, icrc_ok)\n";
  auto out = run_python(dir + "/check.py");
  std::filesystem::remove_all(dir);
  return out;
}

TEST_F(BridgeTest, TagsArePushedPoppedAndKeptAndThePayloadIsUntouched) {
  if (std::system("/usr/bin/python3 -c 'import scapy.all, scapy.contrib.roce' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no python3 with scapy";
  make({{10, {}}, {10, {}}, {0, {10}}, {0, {10}}}, {10});
  // Untagged from p0: p1 as is, p2 and p3 tagged VID 10, PCP 3.
  const PacketSpec in0 = roce(kBcast, kA, kRoceDscp, 1);
  send(0, in0);
  settle();
  auto out = take_all();
  ASSERT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[2].size(), 1u);
  ASSERT_EQ(out[3].size(), 1u);
  EXPECT_FALSE(out[1][0].tagged());
  EXPECT_EQ(out[1][0].bytes, in0.bytes());
  for (int p : {2, 3}) {
    const Out& o = out[p][0];
    ASSERT_TRUE(o.tagged()) << p;
    EXPECT_EQ(o.vid(), 10) << p;
    EXPECT_EQ(o.pcp(), kTc3) << p << ": PCP is the traffic class";
    EXPECT_EQ(o.bytes.size(), in0.bytes().size() + 4) << p;
    EXPECT_EQ(o.dst(), kBcast);
    EXPECT_EQ(o.src(), kA);
    EXPECT_EQ(o.after_tag(), after_tag(in0.bytes())) << p;
    EXPECT_EQ(o.pm.tc, kTc3);
    EXPECT_EQ(o.pm.queue, kTc3);
  }
  EXPECT_EQ(ctr("tag_pushed"), 2u);
  std::vector<std::vector<uint8_t>> frames = {in0.bytes(), out[1][0].bytes, out[2][0].bytes, out[3][0].bytes};

  // Tagged (VID 10, PCP 5) from p2: p0 and p1 untagged, p3 tagged as it came.
  const PacketSpec in2 = roce(kBcast, kB, kRoceDscp, 2, tag(10, 5));
  send(2, in2);
  settle();
  out = take_all();
  ASSERT_EQ(out[0].size(), 1u);
  ASSERT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[3].size(), 1u);
  EXPECT_EQ(out[2].size(), 0u);
  for (int p : {0, 1}) {
    const Out& o = out[p][0];
    EXPECT_FALSE(o.tagged()) << p;
    EXPECT_EQ(o.bytes.size(), in2.bytes().size() - 4) << p;
    EXPECT_EQ(o.dst(), kBcast);
    EXPECT_EQ(o.src(), kB);
    EXPECT_EQ(o.after_tag(), after_tag(in2.bytes())) << p;
  }
  EXPECT_EQ(out[3][0].bytes, in2.bytes()) << "tagged to tagged: the frame as it came, tag and PCP 5 included";
  EXPECT_EQ(ctr("tag_popped"), 2u);
  EXPECT_EQ(ctr("tag_pushed"), 2u);
  frames.insert(frames.end(), {in2.bytes(), out[0][0].bytes, out[1][0].bytes, out[3][0].bytes});

  const auto lines = scapy_lines(frames);
  ASSERT_EQ(lines.size(), frames.size()) << (lines.empty() ? "" : lines[0]);
  // vid pcp dscp ecn ip-checksum-ok udp-dport icrc-ok
  const std::vector<std::string> want = {
      "-1 -1 26 1 True 4791 True",  // what p0's peer sent
      "-1 -1 26 1 True 4791 True",  // p1
      "10 3 26 1 True 4791 True",   // p2: tag pushed, PCP = TC 3
      "10 3 26 1 True 4791 True",   // p3
      "10 5 26 2 True 4791 True",   // what p2's peer sent
      "-1 -1 26 2 True 4791 True",  // p0: tag popped
      "-1 -1 26 2 True 4791 True",  // p1
      "10 5 26 2 True 4791 True",   // p3: kept
  };
  EXPECT_EQ(lines, want);
}

// A priority-tagged frame (VID 0, 802.1Q 6.9.1) belongs to the port's access VLAN; sent to a
// tagged member it must carry that VLAN's VID, not VID 0.
TEST_F(BridgeTest, PriorityTaggedFrameLeavesATrunkWithItsVlansVid) {
  make({{10, {}}, {10, {}}, {0, {10}}}, {10});
  const PacketSpec in = roce(kBcast, kA, kRoceDscp, 0, tag(0, 3));
  send(0, in);
  settle();
  auto out = take_all();
  ASSERT_EQ(out[1].size(), 1u);
  ASSERT_EQ(out[2].size(), 1u);
  EXPECT_FALSE(out[1][0].tagged()) << "to an untagged member: no tag";
  ASSERT_TRUE(out[2][0].tagged());
  EXPECT_EQ(out[2][0].vid(), 10) << "the VLAN the frame was switched in";
  EXPECT_EQ(out[2][0].pcp(), 3);
}

// ---------------------------------------------------------------------------------------------
// 5. QoS as routed: a bridged frame is queued in the class its DSCP maps to, and marked CE by
// a queue's ECN profile (here certain: Kmin = Kmax = 0) with a valid IPv4 checksum and ICRC,
// exactly as a routed frame through the same profile in the same switch (p3 -> p4, routed
// ports in no VLAN).
TEST_F(BridgeTest, BridgedTrafficIsQueuedAndEcnMarkedAsRoutedTraffic) {
  make({{10, {}}, {10, {}}, {0, {10}}, {}, {}}, {10}, [](SwitchConfig& c) {
    const WredProfile always{.enabled = true, .wred_drop = false, .ecn_mark = true, .kmin = 0, .kmax = 0, .pmax_percent = 100};
    for (int p : {1, 2, 4}) c.ports[p].lossless.wred[kTc3] = always;
    GroupSpec g;
    g.name = "to_p4";
    g.members.push_back(static_member(4, rte_ether_addr{{0x02, 0, 0, 0, 0xcc, 4}}));
    add_group_route(c, g, "10.0.4.0/24");
  });
  send(1, raw_l2(kBcast, kB));
  settle();
  take_all();
  // DSCP 26 (TC 3, queue 3) and DSCP 0 (SONiC: TC 1, queue 1), ECT(0) and not ECT, to B.
  send(0, roce(kB, kA, kRoceDscp, 2));
  send(0, roce(kB, kA, kRoceDscp, 0));
  send(0, roce(kB, kA, 0, 2));
  // Routed, the same class: p3 -> 10.0.4.2 on p4.
  send(3, Eth{.dst = "02:00:00:00:00:13", .src = "02:00:00:00:cc:03"} / Ipv4{.src = "10.0.3.2", .dst = "10.0.4.2", .dscp = kRoceDscp, .ecn = 2} /
              Udp{} / Bth{} / Payload::of_size(64));
  settle();
  auto out = take_all();
  ASSERT_EQ(out[1].size(), 3u);
  ASSERT_EQ(out[4].size(), 1u) << "routed";
  EXPECT_EQ(out[0].size() + out[2].size() + out[3].size(), 0u);
  std::map<uint8_t, int> by_queue;
  for (const Out& o : out[1]) ++by_queue[o.pm.queue];
  EXPECT_EQ(by_queue, (std::map<uint8_t, int>{{1, 1}, {kTc3, 2}}));
  EXPECT_EQ(sw->egress(1).queue(kTc3).deq_packets.get(), 2u);
  EXPECT_EQ(sw->egress(1).queue(1).deq_packets.get(), 1u);
  // The order per queue is kept; find each by its class.
  const Out* ect = nullptr;
  const Out* not_ect = nullptr;
  for (const Out& o : out[1]) {
    if (o.pm.queue != kTc3) {
      EXPECT_EQ(o.bytes[14 + 1] & 3, 2) << "queue 1 has no ECN profile: left as sent";
      continue;
    }
    (o.pm.ecn == 0 ? not_ect : ect) = &o;
  }
  ASSERT_NE(ect, nullptr);
  ASSERT_NE(not_ect, nullptr);
  EXPECT_EQ(ect->bytes[14 + 1], (kRoceDscp << 2) | 3) << "bridged ECT: CE";
  EXPECT_TRUE(ipv4_checksum_ok(ect->bytes));
  EXPECT_EQ(not_ect->bytes[14 + 1], kRoceDscp << 2) << "not ECT: left alone";
  EXPECT_TRUE(ipv4_checksum_ok(not_ect->bytes));
  EXPECT_EQ(sw->egress(1).queue(kTc3).ecn_marked.get(), 1u);
  const Out& routed = out[4][0];
  EXPECT_EQ(routed.pm.queue, kTc3);
  EXPECT_EQ(routed.bytes[14 + 1], (kRoceDscp << 2) | 3) << "routed ECT: CE";
  EXPECT_TRUE(ipv4_checksum_ok(routed.bytes));
  EXPECT_EQ(sw->egress(4).queue(kTc3).ecn_marked.get(), 1u);
  EXPECT_EQ(sw->drops(DropReason::WredDrop), 0u);

  // A frame tagged on the way out is marked at its IP header (4 bytes further on).
  send(0, roce(kBcast, kA, kRoceDscp, 1));
  settle();
  out = take_all();
  ASSERT_EQ(out[2].size(), 1u);
  ASSERT_TRUE(out[2][0].tagged());
  EXPECT_EQ(out[2][0].bytes[18 + 1], (kRoceDscp << 2) | 3);
  EXPECT_TRUE(ipv4_checksum_ok(out[2][0].bytes, 18));
  EXPECT_EQ(out[2][0].bytes[12 + 6], 0x45) << "the tag is intact: marking did not write into it";
  ASSERT_EQ(out[1].size(), 1u);
  EXPECT_EQ(out[1][0].bytes[14 + 1], (kRoceDscp << 2) | 3);
  EXPECT_TRUE(ipv4_checksum_ok(out[1][0].bytes));
}

// PFC: priority 3 lossless on p0. B's port is paused by its peer (PFC XOFF on priority 3), so
// what A sends B in TC 3 waits in p1's queue 3 charged to p0's PG 3: past XOFF the switch
// pauses A's peer; when B's peer resumes, the queue drains, the PG empties and XON follows.
TEST_F(BridgeTest, BridgedLosslessClassChargesItsIngressPgAndSendsPfc) {
  make({{10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) {
    c.mmu.pfc_enable = 1u << kTc3;
    c.ports[0].lossless.pg[kTc3] = {.lossless = true, .xoff = 4 * kCells, .xon = 2 * kCells, .headroom = 40 * kCells};
  });
  send(1, raw_l2(kBcast, kB));
  send(0, raw_l2(kBcast, kA));
  settle();
  take_all();
  send_bytes(1, pfc_frame(1u << kTc3, 0xffff));  // B's peer pauses priority 3 (0xffff quanta: 335 us at 100 Gb/s)
  settle(2);
  ASSERT_TRUE(sw->egress(1).paused(kTc3));
  const PfcGenerator& gen = sw->egress(0).pfc_gen();
  EXPECT_EQ(gen.counters().xoff_sent[kTc3].get(), 0u);
  for (uint32_t i = 0; i < 8; ++i) send(0, roce(kB, kA, kRoceDscp, 0, std::nullopt, kPayload, i));
  settle(2);
  EXPECT_EQ(sw->buffer().pg_level(0, kTc3), 8u * kCells) << "p0's PG 3 holds what waits in p1's queue 3";
  EXPECT_EQ(sw->egress(1).queue(kTc3).depth_packets.get(), 8u);
  EXPECT_GE(gen.counters().xoff_sent[kTc3].get(), 1u) << "past XOFF: A's peer is paused";
  auto out = take_all();
  EXPECT_EQ(out[1].size(), 0u) << "p1 is paused on priority 3";
  int pfc_to_a = 0;
  for (const Out& o : out[0]) pfc_to_a += o.mac_control() && o.src() == "02:00:00:00:00:10";  // the switch's, on p0
  EXPECT_EQ(pfc_to_a, static_cast<int>(out[0].size()));
  EXPECT_GE(pfc_to_a, 1) << "the XOFF frame reached A's peer";

  send_bytes(1, pfc_frame(1u << kTc3, 0));  // resume
  settle();
  out = take_all();
  EXPECT_EQ(out[1].size(), 8u);
  EXPECT_EQ(sw->buffer().pg_level(0, kTc3), 0u);
  EXPECT_GE(gen.counters().xon_sent[kTc3].get(), 1u);
  EXPECT_EQ(sw->lossless_drops(), 0u);
}

// ---------------------------------------------------------------------------------------------
// 6. The storm limit, per ingress port: 100 floods/s with a burst of 10. 50 broadcasts at once:
// 10 flooded, 40 dropped as bridge_storm; known unicast is not limited, nor another port's
// floods; a second later 10 conform again.
TEST_F(BridgeTest, FloodStormLimit) {
  make({{10, {}}, {10, {}}, {10, {}}}, {10}, [](SwitchConfig& c) {
    c.bridge.flood_pps = 100;
    c.bridge.flood_burst = 10;
  });
  send(1, roce(kA, kB));  // B known (one flood of p1's budget)
  settle();
  take_all();
  for (int i = 0; i < 50; ++i) send(0, roce(kBcast, kA, kRoceDscp, 0, std::nullopt, 64, i));
  for (int i = 0; i < 30; ++i) send(0, roce(kB, kA, kRoceDscp, 0, std::nullopt, 64, 100 + i));
  for (int i = 0; i < 5; ++i) send(2, roce(kBcast, kC, kRoceDscp, 0, std::nullopt, 64, 200 + i));
  step();
  settle();
  EXPECT_EQ(counts(), (Counts{5, 10 + 30 + 5, 10}));
  EXPECT_EQ(sw->drops(0, DropReason::BridgeStorm), 40u);
  EXPECT_EQ(sw->drops(2, DropReason::BridgeStorm), 0u);
  EXPECT_EQ(ctr("flooded"), 1u + 10 + 5);

  now += 1'000'000'000;  // a second: the bucket is full again (10, not 100)
  for (int i = 0; i < 50; ++i) send(0, roce(kBcast, kA, kRoceDscp, 0, std::nullopt, 64, 300 + i));
  step();
  settle();
  EXPECT_EQ(counts(), (Counts{0, 10, 10}));
  EXPECT_EQ(sw->drops(0, DropReason::BridgeStorm), 80u);
  // At the rate it conforms: one every 10 ms.
  for (int i = 0; i < 20; ++i) {
    now += 10 * kMs;
    send(0, roce(kBcast, kA, kRoceDscp, 0, std::nullopt, 64, 400 + i));
    step();
  }
  settle();
  EXPECT_EQ(counts(), (Counts{0, 20, 20}));
  EXPECT_EQ(sw->drops(0, DropReason::BridgeStorm), 80u);
}

}  // namespace
}  // namespace rs::test
