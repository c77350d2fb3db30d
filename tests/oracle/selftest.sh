#!/bin/bash
# Self-test of the test oracle tests/oracle/roce_pcap.py (needs /usr/bin/python3 with scapy;
# tshark optional): it must pass what is right and fail what is wrong.
# Usage: tests/oracle/selftest.sh [CAPTURE_DIR]   (default ../shared/captures/rocev2 beside the checkout)
set -u
T="$(cd "$(dirname "$0")" && pwd)/roce_pcap.py"
# Real captures are read in place from the shared folder beside the checkout, never copied in.
CAPS="${1:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/captures/rocev2}"
D="$(mktemp -d)"
trap 'rm -rf "$D"' EXIT
fails=0; n=0
HAVE_TSHARK=; command -v tshark >/dev/null 2>&1 && HAVE_TSHARK=--tshark

# expect RC LAST_LINE_REGEX -- command...
expect() {
  local rc_want="$1" re="$2"; shift 2
  n=$((n + 1))
  local out rc
  out="$("$@" 2>&1)"; rc=$?
  local last; last="$(printf '%s\n' "$out" | tail -n 1)"
  if [ "$rc" != "$rc_want" ] || ! printf '%s\n' "$last" | grep -Eq "$re"; then
    fails=$((fails + 1))
    echo "FAIL: $*"; echo "  rc $rc (want $rc_want), last line: $last (want /$re/)"
  fi
}

MAP=10.0.2.0/24=02:00:00:00:02:01,10.0.3.0/24=02:00:00:00:03:01,10.0.4.0/24=02:00:00:00:04:01,2001:db8:2::/48=02:00:00:00:06:01

expect 0 '^gen valid: wrote 160 frames' "$T" gen valid --out "$D/v.pcap" --count 120 --ipv6-count 20 --udp-count 20
expect 0 '^icrc: 140 valid, 0 invalid, 20 not roce$' "$T" icrc "$D/v.pcap"
expect 0 '^roce_pcap check: 160 packets ok, 0 bad$' "$T" check --in "$D/v.pcap" --out "$D/v.pcap" --ttl-dec 0 --expect-count 160 $HAVE_TSHARK
expect 0 '^gen valid: wrote 40 frames' "$T" gen valid --out "$D/vl.pcap" --count 30 --ipv6-count 5 --udp-count 5 --vlan 3 --seed 9
expect 0 '^roce_pcap check: 40 packets ok, 0 bad$' "$T" check --in "$D/vl.pcap" --out "$D/vl.pcap" --ttl-dec 0 $HAVE_TSHARK

# reference rewrite: TTL-1 with checksum fixed, MACs, CE marking: ICRC stays valid
expect 0 '^mutate:' "$T" mutate --in "$D/v.pcap" --out "$D/r.pcap" --smac 02:00:00:00:ff:01 --dmac-map "$MAP" --ce
expect 0 '^icrc: 140 valid, 0 invalid, 20 not roce$' "$T" icrc "$D/r.pcap"
expect 0 '^roce_pcap check: 160 packets ok, 0 bad$' "$T" check --in "$D/v.pcap" --out "$D/r.pcap" --smac 02:00:00:00:ff:01 --dmac-map "$MAP" --expect-count 160 $HAVE_TSHARK
# wrong expectations are caught
expect 1 '^roce_pcap check: 0 packets ok, 160 bad$' "$T" check --in "$D/v.pcap" --out "$D/r.pcap" --ttl-dec 0
expect 1 '^roce_pcap check: 0 packets ok, 160 bad$' "$T" check --in "$D/v.pcap" --out "$D/r.pcap" --smac 02:00:00:00:ff:02
expect 1 '^roce_pcap check: 160 packets ok, 5 bad$' "$T" check --in "$D/v.pcap" --out "$D/r.pcap" --expect-count 165
# one payload byte flipped (frame 2 is IPv4 RoCE with payload): ICRC invalid, check fails
expect 0 '^mutate:' "$T" mutate --in "$D/v.pcap" --out "$D/f.pcap" --ttl-dec 0 --flip-payload 2
expect 1 '^icrc: 139 valid, 1 invalid, 20 not roce$' "$T" icrc "$D/f.pcap"
expect 1 '^roce_pcap check: 159 packets ok, 1 bad$' "$T" check --in "$D/v.pcap" --out "$D/f.pcap" --ttl-dec 0
# TTL changed but IPv4 checksum left stale: ICRC still valid, check fails on the checksum
expect 0 '^mutate:' "$T" mutate --in "$D/v.pcap" --out "$D/k.pcap" --keep-checksum
expect 0 '^icrc: 140 valid, 0 invalid, 20 not roce$' "$T" icrc "$D/k.pcap"
expect 1 '^roce_pcap check: 20 packets ok, 140 bad$' "$T" check --in "$D/v.pcap" --out "$D/k.pcap"

# malformed set: every frame is rejected by check
expect 0 '^gen malformed: wrote [0-9]+ frames' "$T" gen malformed --out "$D/m.pcap"
expect 1 '^roce_pcap check: 0 packets ok, [0-9]+ bad$' "$T" check --in "$D/v.pcap" --out "$D/m.pcap"
[ -s "$D/m.pcap.cases.json" ] || { fails=$((fails + 1)); echo "FAIL: no cases.json"; }

# pcap helpers: counts, splits by prefix, merges, ECMP flow map (a flow on two ports is seen)
expect 0 '^160$' "$T" count "$D/v.pcap"
expect 0 '^' "$T" empty "$D/e.pcap"
expect 0 '^0$' "$T" count "$D/e.pcap"
expect 0 '^47 113$' "$T" split "$D/v.pcap" 10.0.2.0/24 "$D/in.pcap" "$D/out.pcap"
expect 0 '^47$' "$T" count "$D/in.pcap"
expect 0 '^20 140$' "$T" split "$D/v.pcap" 2001:db8:2::/48 "$D/in6.pcap" "$D/out6.pcap"
expect 0 '^320$' "$T" merge "$D/two.pcap" "$D/v.pcap" "$D/r.pcap"
expect 0 '^320$' "$T" count "$D/two.pcap"
expect 0 '"flows": 11, .*"split_flows": \{\}, "per_port": \{"p1": 47\}' "$T" ecmp 10.0.2.0/24 p1="$D/r.pcap"
expect 0 '"members": \["p1@02:00:00:00:02:01", "p2@02:00:00:00:00:01"\], "split_flows": \{"' "$T" ecmp 10.0.2.0/24 p1="$D/r.pcap" p2="$D/v.pcap"

# real SoftRoCE captures: every RoCE frame verifies
for c in "$CAPS"/*.pcap; do
  [ -e "$c" ] || continue
  expect 0 '^icrc: [1-9][0-9]* valid, 0 invalid, [0-9]+ not roce$' "$T" icrc "$c"
done

echo "roce_pcap selftest: $((n - fails)) of $n steps as expected"
[ "$fails" = 0 ]
