#!/bin/bash
# Malformed frames through a real DPDK port: one frame per defect (truncated headers, bad IHL,
# bad lengths, bad versions, short BTH, stacked VLANs, a bad IPv4 checksum, an empty frame...)
# enter p0. The destinations are routed, so a frame the parser wrongly accepts WOULD be
# forwarded and show up in an output pcap. The switch must forward nothing, count every frame it
# received under a named drop reason, keep its books balanced and exit 0.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
require_pcap_tools

T="$(mktemp -d -t rs-malformed.XXXXXX)"
trap 'rm -rf "$T"' EXIT

"$PY" "$ROCE_PCAP" gen malformed --out "$T/bad.pcap" --dmac 02:00:00:00:00:01 | tail -n 1
empty_pcap "$T/empty.pcap"
FRAMES=$(json_get "$T/bad.pcap.cases.json" "j['count']")
EMPTY=$(json_get "$T/bad.pcap.cases.json" "sum(1 for c in j['cases'] if c['length'] == 0)")
log "$FRAMES malformed frames, $EMPTY of them empty (0 bytes)"

# Every destination the generator uses is routed: only the parser stands between these frames
# and the output ports.
cat >"$T/switch.yaml" <<EOF
switch: {workers: 1, seed: 7}
ports:
  - {name: p0, kind: ethdev, mac: "02:00:00:00:00:01", devargs: "net_pcap0,rx_pcap=$T/bad.pcap,tx_pcap=$T/out0.pcap"}
  - {name: p1, kind: ethdev, mac: "02:00:00:00:01:01", devargs: "net_pcap1,rx_pcap=$T/empty.pcap,tx_pcap=$T/out1.pcap"}
routes:
  - {prefix: 0.0.0.0/1, port: p1, mac: "02:00:00:00:aa:02"}
  - {prefix: 128.0.0.0/1, port: p1, mac: "02:00:00:00:aa:02"}
  - {prefix: "::/1", port: p1, mac: "02:00:00:00:aa:02"}
  - {prefix: "8000::/1", port: p1, mac: "02:00:00:00:aa:02"}
EOF

run_switch 2
check "roceswitch exits 0" eq "exit code" "$RC" 0
[ -s "$T/stats.json" ] || die "no stats JSON written"
S="$T/stats.json"

O0=$(pcap_count "$T/out0.pcap"); O1=$(pcap_count "$T/out1.pcap")
RX=$(json_get "$S" "j['ports'][0]['rx_packets']")
log "p0 received $RX of $FRAMES frames; output frames: p0 $O0, p1 $O1"
log "drops: $(json_get "$S" "j['drops']")"
if [ "$O1" -ne 0 ]; then
  log "frames that were forwarded (they should have been dropped):"
  tshark -r "$T/out1.pcap" 2>/dev/null | sed 's/^/    | /' || true
fi

check "nothing is forwarded to p1" eq "p1 frames" "$O1" 0
check "nothing is sent back out of p0" eq "p0 frames" "$O0" 0
# libpcap may hand a 0-byte record to net_pcap or skip it; either way the switch must count
# exactly what its port received, and receive every non-empty frame.
check "p0 received every non-empty frame (and at most all $FRAMES)" \
  json_true "$S" "$((FRAMES - EMPTY)) <= j['ports'][0]['rx_packets'] <= $FRAMES"
check "sum of p0's drop counters == p0 rx_packets" \
  json_true "$S" "sum(j['ports'][0]['drops'].values()) == j['ports'][0]['rx_packets']"
check "switch-wide drops == frames received (every frame dropped)" \
  json_true "$S" "sum(j['drops'].values()) == j['totals']['received'] == j['totals']['dropped']"
check "every drop has a named reason (none is 'none' or unnamed)" \
  json_true "$S" "all(k and k != 'none' and v > 0 for k, v in j['drops'].items())"
check "stats: totals.balanced, sent 0, queued 0" \
  json_true "$S" "j['totals']['balanced'] is True and j['totals']['sent'] == 0 and j['totals']['queued'] == 0"
check "stats: tx_packets 0 on every port" json_true "$S" "all(p['tx_packets'] == 0 for p in j['ports'])"

# Per reason: the generator names the first defect of every frame (its own parser, in
# Ethernet/VLAN/IP/UDP/BTH order), and the switch must count the same categories. An empty frame
# that libpcap did not deliver is not counted by the switch (it never saw it).
per_reason() {
  "$PY" - "$T/bad.pcap.cases.json" "$S" <<'EOF'
import collections, json, sys
cases = json.load(open(sys.argv[1]))['cases']
j = json.load(open(sys.argv[2]))
got = j['drops']
ref = collections.Counter(c['reference_category'] for c in cases)
ref['malformed_eth'] -= len(cases) - j['ports'][0]['rx_packets']
bad = 0
for k in sorted(set(ref) | set(got)):
    same = ref.get(k, 0) == got.get(k, 0)
    bad += not same
    print('    %-22s reference %3d  switch %3d%s' % (k, ref.get(k, 0), got.get(k, 0), '' if same else '  <- differs'))
sys.exit(1 if bad else 0)
EOF
}
check "drop counts per reason == the reference category of every case" per_reason
finish
