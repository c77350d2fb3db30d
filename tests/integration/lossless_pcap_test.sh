#!/bin/bash
# PFC and ECN on the wire, judged by independent decoders. RoCEv2 (DSCP 26, ECT(0)) enters p0
# through net_pcap far faster than p1's 10 Mb/s emulated link drains it, on a lossless priority
# with an ECN profile. The switch must (a) send 802.1Qbb PFC out of p0 — XOFF for priority 3 at
# the PG's XOFF threshold, XON (time 0) once the PG drained under XON — which tshark decodes as
# MAC control PFC with the right class-enable vector and times; (b) mark CE on some RoCE packets
# it forwards on p1, which tshark decodes as InfiniBand over UDP with ECN = CE, and whose ICRC
# scapy's contrib/roce (tests/oracle/roce_pcap.py) still finds valid; (c) drop nothing lossless.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
require_pcap_tools

T="$(mktemp -d -t rs-lossless.XXXXXX)"
trap 'rm -rf "$T"' EXIT

COUNT=200
log "generating $COUNT RoCEv2 frames, DSCP 26, ECT(0)"
"$PY" "$ROCE_PCAP" gen valid --out "$T/in.pcap" --count $COUNT --dst 10.0.2.2 --qps 8 --dscp 26 --ecn 2 \
  --dmac 02:00:00:00:00:01
empty_pcap "$T/empty.pcap"

P0_MAC=02:00:00:00:00:01 P1_MAC=02:00:00:00:01:01 NH=02:00:00:00:aa:02
cat >"$T/switch.yaml" <<EOF
switch: {workers: 1, seed: 7}
qos:
  dscp_to_tc: {26: 3}
  pfc_enable: [3]
buffer:
  pool: {size: 8388608, cell_size: 256}
  profiles:
    lossless: {xoff: 16384, xon: 8192, headroom: 262144}
  pg: {3: lossless}
wred_profiles:
  ROCE: {wred_green_enable: true, ecn: ecn_all, green_min_threshold: 4096, green_max_threshold: 12288,
         green_drop_probability: 50}
queue_wred: {3: ROCE}
ports:
  - {name: p0, kind: ethdev, mac: "$P0_MAC", speed_gbps: 100,
     devargs: "net_pcap0,rx_pcap=$T/in.pcap,tx_pcap=$T/out0.pcap"}
  - {name: p1, kind: ethdev, mac: "$P1_MAC", speed_gbps: 0.01,
     devargs: "net_pcap1,rx_pcap=$T/empty.pcap,tx_pcap=$T/out1.pcap"}
routes:
  - {prefix: 10.0.2.0/24, port: p1, mac: "$NH"}
EOF

run_switch 2
[ $RC -eq 0 ] || die "roceswitch exited $RC (expected 0)"
for n in 0 1; do [ -f "$T/out$n.pcap" ] || die "net_pcap did not write out$n.pcap"; done

# --- the switch's own account (what the decoders below must agree with)
MARKED=$(json_get "$T/stats.json" "j['ports'][1]['queues'][3]['ecn_marked']")
FRAMES=$(json_get "$T/stats.json" "j['ports'][0]['pfc']['frames_sent']")
log "stats: p0 PFC frames sent $FRAMES, p1 queue 3 CE marked $MARKED"
check "no lossless drop" json_true "$T/stats.json" "j['lossless_drops'] == 0 and j['drops'] == {}"
check "every frame forwarded" json_true "$T/stats.json" "j['ports'][1]['tx_packets'] == $COUNT"
check "XOFF and XON counted for priority 3" json_true "$T/stats.json" \
  "j['ports'][0]['pfc']['pg'][3]['xoff_sent'] >= 1 and j['ports'][0]['pfc']['pg'][3]['xon_sent'] >= 1"
check "some packets CE-marked, not all" json_true "$T/stats.json" "0 < j['ports'][1]['queues'][3]['ecn_marked'] < $COUNT"

# --- PFC frames on p0's wire, decoded by tshark
tshark -r "$T/out0.pcap" -T fields -E separator=, -e frame.len -e eth.dst -e eth.type -e macc.opcode \
  -e macc.cbfc.enbv -e macc.cbfc.pause_time.c3 >"$T/pfc.csv" 2>"$T/tshark.err" || true
head -n 6 "$T/pfc.csv" | sed 's/^/    | tshark: /'  # head reads the file itself: no writer left to take SIGPIPE under pipefail
PFC_LINES=$(wc -l <"$T/pfc.csv")
check "tshark sees every PFC frame the switch counted" eq "PFC frames in out0.pcap" "$PFC_LINES" "$FRAMES"
pfc_ok() {
  "$PY" - "$T/pfc.csv" <<'EOF'
import sys
rows = [l.strip().split(',') for l in open(sys.argv[1]) if l.strip()]
bad = []
for i, (flen, dst, etype, op, enbv, t3) in enumerate(rows):
    if flen != '60' or dst != '01:80:c2:00:00:01' or etype != '0x8808' or int(op, 16) != 0x0101:
        bad.append((i, 'frame shape', flen, dst, etype, op))
    if int(enbv, 16) != 0x0008:
        bad.append((i, 'class-enable vector', enbv))
times = [int(r[5]) for r in rows]
if not times or times[0] != 65535:
    bad.append(('first frame is not XOFF 65535 quanta', times[:1]))
if times and times[-1] != 0:
    bad.append(('last frame is not XON (time 0)', times[-1:]))
if any(t not in (0, 65535) for t in times):
    bad.append(('unexpected pause time', times))
for b in bad:
    print('    ', b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
}
check "PFC frames: 60 bytes, 01:80:c2:00:00:01, 0x8808/0x0101, vector 0x0008, XOFF 65535 first, XON 0 last" pfc_ok

# --- CE-marked RoCE on p1's wire: tshark (InfiniBand over UDP) and scapy's ICRC
CE_TSHARK=$(tshark -r "$T/out1.pcap" -Y "ip.dsfield.ecn == 3 && infiniband.bth" 2>/dev/null | wc -l)
IB_TSHARK=$(tshark -r "$T/out1.pcap" -Y "infiniband.bth" 2>/dev/null | wc -l)
check "tshark decodes every forwarded frame as InfiniBand BTH" eq "IB frames" "$IB_TSHARK" "$COUNT"
check "tshark sees exactly the CE marks the switch counted" eq "CE frames" "$CE_TSHARK" "$MARKED"
roce_check() {
  "$PY" "$ROCE_PCAP" check --in "$T/in.pcap" --out "$T/out1.pcap" --smac "$P1_MAC" --ttl-dec 1 \
    --expect-count "$COUNT" --dmac-map "10.0.2.0/24=$NH" --tshark >"$T/check.log" 2>&1 || {
    sed 's/^/    | /' "$T/check.log"; return 1; }
  sed 's/^/    | /' "$T/check.log" | tail -n 3
}
check "roce_pcap check: ECT->CE only, checksum and ICRC valid (own + scapy contrib/roce)" roce_check
finish
