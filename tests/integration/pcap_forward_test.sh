#!/bin/bash
# Real packets through real DPDK ports: a pcap of RoCEv2/IPv4, RoCEv2/IPv6 and plain UDP enters
# port p0 (net_pcap), and the switch must route every frame to the port its route names, rewrite
# the MACs, decrement the TTL, keep the IPv4 checksum and the RoCE ICRC valid, and spread an
# 8-way ECMP group by flow. The outputs are judged by the test oracle tests/oracle/roce_pcap.py
# (its own byte-level checks, scapy as a second opinion) plus tshark, not by anything in the switch.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
require_pcap_tools

T="$(mktemp -d -t rs-pcap-forward.XXXXXX)"
trap 'rm -rf "$T"' EXIT

IN_COUNT=300 IN6_COUNT=30 UDP_COUNT=30
TOTAL=$((IN_COUNT + IN6_COUNT + UDP_COUNT))
log "generating $TOTAL frames ($IN_COUNT RoCEv2/IPv4, $IN6_COUNT RoCEv2/IPv6, $UDP_COUNT UDP)"
# 16 QPs per destination, so the ECMP destination carries enough flows to reach several members.
"$PY" "$ROCE_PCAP" gen valid --out "$T/in.pcap" --count $IN_COUNT --ipv6-count $IN6_COUNT \
  --udp-count $UDP_COUNT --dst 10.0.2.2 --dst 10.0.3.2 --dst 10.0.4.2 --dst 10.0.5.2 --qps 16 \
  --dmac 02:00:00:00:00:01
empty_pcap "$T/empty.pcap"

# Expected per-destination counts, read from the input itself (byte-level), not assumed.
"$PY" "$ROCE_PCAP" split "$T/in.pcap" 10.0.2.0/24 "$T/in_d2.pcap" "$T/rest.pcap" >/dev/null
"$PY" "$ROCE_PCAP" split "$T/in.pcap" 10.0.3.0/24 "$T/in_d3.pcap" "$T/rest.pcap" >/dev/null
"$PY" "$ROCE_PCAP" split "$T/in.pcap" 10.0.4.0/24 "$T/in_d4.pcap" "$T/rest.pcap" >/dev/null
"$PY" "$ROCE_PCAP" split "$T/in.pcap" 10.0.5.0/24 "$T/in_d5.pcap" "$T/rest.pcap" >/dev/null
N2=$(pcap_count "$T/in_d2.pcap"); N3=$(pcap_count "$T/in_d3.pcap")
N4=$(pcap_count "$T/in_d4.pcap"); N5=$(pcap_count "$T/in_d5.pcap")
[ $((N2 + N3 + N4 + N5 + IN6_COUNT)) -eq $TOTAL ] || die "input split does not add up: $N2+$N3+$N4+$N5+$IN6_COUNT != $TOTAL"
log "input: 10.0.2/24 $N2, 10.0.3/24 $N3, 10.0.4/24 $N4, 10.0.5/24 (ECMP) $N5, 2001:db8:2::/48 $IN6_COUNT"

# p0 receives; p1..p3 only transmit. net_pcap needs an rx side, so theirs is an empty pcap.
P0_MAC=02:00:00:00:00:01 P1_MAC=02:00:00:00:01:01 P2_MAC=02:00:00:00:01:02 P3_MAC=02:00:00:00:01:03
NH2=02:00:00:00:aa:02 NH3=02:00:00:00:aa:03 NH4=02:00:00:00:aa:04
cat >"$T/switch.yaml" <<EOF
switch: {workers: 1, seed: 7}
ports:
  - {name: p0, kind: ethdev, mac: "$P0_MAC", devargs: "net_pcap0,rx_pcap=$T/in.pcap,tx_pcap=$T/out0.pcap"}
  - {name: p1, kind: ethdev, mac: "$P1_MAC", devargs: "net_pcap1,rx_pcap=$T/empty.pcap,tx_pcap=$T/out1.pcap"}
  - {name: p2, kind: ethdev, mac: "$P2_MAC", devargs: "net_pcap2,rx_pcap=$T/empty.pcap,tx_pcap=$T/out2.pcap"}
  - {name: p3, kind: ethdev, mac: "$P3_MAC", devargs: "net_pcap3,rx_pcap=$T/empty.pcap,tx_pcap=$T/out3.pcap"}
nexthop_groups:
  - name: ecmp8
    members:
      - {port: p1, mac: "02:00:00:00:e0:00"}
      - {port: p2, mac: "02:00:00:00:e0:01"}
      - {port: p3, mac: "02:00:00:00:e0:02"}
      - {port: p1, mac: "02:00:00:00:e0:03"}
      - {port: p2, mac: "02:00:00:00:e0:04"}
      - {port: p3, mac: "02:00:00:00:e0:05"}
      - {port: p1, mac: "02:00:00:00:e0:06"}
      - {port: p2, mac: "02:00:00:00:e0:07"}
routes:
  - {prefix: 10.0.2.0/24, port: p1, mac: "$NH2"}
  - {prefix: 10.0.3.0/24, port: p2, mac: "$NH3"}
  - {prefix: 10.0.4.0/24, port: p3, mac: "$NH4"}
  - {prefix: "2001:db8:2::/48", port: p1, mac: "$NH2"}
  - {prefix: 10.0.5.0/24, group: ecmp8}
EOF

run_switch 2
[ $RC -eq 0 ] || die "roceswitch exited $RC (expected 0)"
[ -s "$T/stats.json" ] || die "no stats JSON written"
for n in 0 1 2 3; do [ -f "$T/out$n.pcap" ] || die "net_pcap did not write out$n.pcap"; done

O0=$(pcap_count "$T/out0.pcap"); O1=$(pcap_count "$T/out1.pcap")
O2=$(pcap_count "$T/out2.pcap"); O3=$(pcap_count "$T/out3.pcap")
log "output frames: p0 $O0, p1 $O1, p2 $O2, p3 $O3"

# Non-ECMP traffic per port must be exactly what the routes say; ECMP frames are split out and
# judged separately because their destination MAC depends on the member the hash picked.
for n in 1 2 3; do
  "$PY" "$ROCE_PCAP" split "$T/out$n.pcap" 10.0.5.0/24 "$T/ecmp$n.pcap" "$T/direct$n.pcap" >/dev/null
done
D1=$(pcap_count "$T/direct1.pcap"); D2=$(pcap_count "$T/direct2.pcap"); D3=$(pcap_count "$T/direct3.pcap")
E1=$(pcap_count "$T/ecmp1.pcap"); E2=$(pcap_count "$T/ecmp2.pcap"); E3=$(pcap_count "$T/ecmp3.pcap")
log "ECMP frames per port: p1 $E1, p2 $E2, p3 $E3"

check "nothing goes back out of the ingress port p0" eq "p0 frames" "$O0" 0
check "p1 carries 10.0.2.0/24 + 2001:db8:2::/48 (route)" eq "p1 direct frames" "$D1" $((N2 + IN6_COUNT))
check "p2 carries 10.0.3.0/24 (route)" eq "p2 direct frames" "$D2" "$N3"
check "p3 carries 10.0.4.0/24 (route)" eq "p3 direct frames" "$D3" "$N4"
check "every ECMP frame leaves on some member" eq "ECMP frames" $((E1 + E2 + E3)) "$N5"
check "every input frame leaves exactly once in total" eq "output frames" $((O1 + O2 + O3)) "$TOTAL"

# The independent decoder: MACs, TTL - 1, IPv4 checksum, ICRC, headers byte-identical, tshark.
DMAP="10.0.2.0/24=$NH2,2001:db8:2::/48=$NH2,10.0.3.0/24=$NH3,10.0.4.0/24=$NH4"
roce_check() {
  local out="$1" smac="$2" count="$3"; shift 3
  "$PY" "$ROCE_PCAP" check --in "$T/in.pcap" --out "$out" --smac "$smac" --ttl-dec 1 \
    --expect-count "$count" --min-frame 60 --tshark "$@" >"$T/check.log" 2>&1 || { sed 's/^/    | /' "$T/check.log"; return 1; }
  sed 's/^/    | /' "$T/check.log" | tail -n 3
}
check "roce_pcap check p1 (routed frames)" roce_check "$T/direct1.pcap" $P1_MAC "$D1" --dmac-map "$DMAP"
check "roce_pcap check p2 (routed frames)" roce_check "$T/direct2.pcap" $P2_MAC "$D2" --dmac-map "$DMAP"
check "roce_pcap check p3 (routed frames)" roce_check "$T/direct3.pcap" $P3_MAC "$D3" --dmac-map "$DMAP"
# ECMP frames: the same checks apart from the destination MAC (checked against the group below).
check "roce_pcap check p1 (ECMP frames)" roce_check "$T/ecmp1.pcap" $P1_MAC "$E1"
check "roce_pcap check p2 (ECMP frames)" roce_check "$T/ecmp2.pcap" $P2_MAC "$E2"
check "roce_pcap check p3 (ECMP frames)" roce_check "$T/ecmp3.pcap" $P3_MAC "$E3"
# All outputs together against the input: a frame duplicated onto two ports would show here.
"$PY" "$ROCE_PCAP" merge "$T/all.pcap" "$T/out1.pcap" "$T/out2.pcap" "$T/out3.pcap" >/dev/null
all_check() {
  "$PY" "$ROCE_PCAP" check --in "$T/in.pcap" --out "$T/all.pcap" --ttl-dec 1 --expect-count "$TOTAL" \
    --no-scapy >"$T/check.log" 2>&1 || { sed 's/^/    | /' "$T/check.log"; return 1; }
}
check "all outputs together: each input frame exactly once, none duplicated" all_check

# ECMP: every flow sticks to one member, members are real group members on the right port, and
# the 16+ flows are spread over more than one member.
"$PY" "$ROCE_PCAP" ecmp 10.0.5.0/24 p1="$T/out1.pcap" p2="$T/out2.pcap" p3="$T/out3.pcap" >"$T/ecmp.json"
log "ECMP: $(cat "$T/ecmp.json")"
check "ECMP: no flow is split over two members (per-flow hashing)" json_true "$T/ecmp.json" "j['split_flows'] == {}"
check "ECMP: each used (port, MAC) is a configured member" json_true "$T/ecmp.json" \
  "set(j['members']) <= {'p1@02:00:00:00:e0:00','p2@02:00:00:00:e0:01','p3@02:00:00:00:e0:02','p1@02:00:00:00:e0:03','p2@02:00:00:00:e0:04','p3@02:00:00:00:e0:05','p1@02:00:00:00:e0:06','p2@02:00:00:00:e0:07'}"
check "ECMP: flows spread over at least 4 of the 8 members" json_true "$T/ecmp.json" "len(j['members']) >= 4"

# The switch's own books must agree with what the pcaps show.
S="$T/stats.json"
check "stats: totals.balanced" json_true "$S" "j['totals']['balanced'] is True"
check "stats: received == $TOTAL" json_true "$S" "j['totals']['received'] == $TOTAL"
check "stats: sent == $TOTAL, nothing dropped or queued" json_true "$S" \
  "j['totals']['sent'] == $TOTAL and j['totals']['dropped'] == 0 and j['totals']['queued'] == 0 and j['totals']['in_flight'] == 0"
check "stats: p0 rx_packets == $TOTAL" json_true "$S" "j['ports'][0]['rx_packets'] == $TOTAL"
check "stats: per-port tx_packets == frames in each output pcap" json_true "$S" \
  "[p['tx_packets'] for p in j['ports']] == [$O0, $O1, $O2, $O3]"
check "stats: ethdev counters agree (p0 ipackets, p1..p3 opackets)" json_true "$S" \
  "j['ports'][0]['ethdev']['ipackets'] == $TOTAL and [p['ethdev']['opackets'] for p in j['ports'][1:]] == [$O1, $O2, $O3]"
check "stats: no drop reason counted anywhere" json_true "$S" "j['drops'] == {}"
finish
