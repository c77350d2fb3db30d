#!/bin/bash
# End to end: roceswitch as an 802.1Q bridge (L2 switching by MAC within VLANs). Four Linux
# hosts in their own network namespaces, each on a veth pair to a fifth namespace where the
# switch owns the other ends through net_af_packet. No static neighbours: ARP crosses the bridge
# (broadcasts flooded within the VLAN, replies forwarded to the learned port).
#
#   ns A: ha (10.0.10.1/24)                       ==veth== sa [ns SW: port pa, access VLAN 10]
#   ns B: hb (10.0.10.2/24)                       ==veth== sb [ns SW: port pb, access VLAN 10]
#   ns C: hc (no address), hc.10 (10.0.10.3/24),  ==veth== sc [ns SW: port pc, tagged 10 and 20]
#         hc.20 (10.0.20.3/24), both with hc's MAC (one MAC in two VLANs); a kernel without
#         802.1Q: c10, c20 instead, bridged to hc by a user-space tagger (see below)
#   ns D: hd (10.0.20.4/24)                       ==veth== sd [ns SW: port pd, access VLAN 20]
#
# Checks, each printed PASS/FAIL with what was expected and what was seen:
#   1 ping A<->B, A<->C (C's VLAN 10 subinterface), D<->C (VLAN 20): answered, reply TTL 64
#   2 isolation: A's broadcast ARP for 10.0.10.99 reaches B (untagged) and C's trunk (tagged
#     10), not D (tshark captures; without tshark, the interfaces' rx counters)
#   3 the FDB (roceswitch-ctl fdb --json): A, B on pa, pb in VLAN 10; C's MAC on pc in VLAN 10
#     and in VLAN 20; D on pd in VLAN 20
#   4 flooding stops once learned: 20 pings A->B leave the bridge's `flooded` counter (nearly)
#     unchanged and add >= 40 to `forwarded`
#   5 ageing: a silent D's entry goes after bridge.ageing_s (not before ageing_s - 1.5 s, by
#     ageing_s + 2 s); 5b D's link goes down: its entry is flushed at once (skipped, with a
#     note, where the switch does not see the link go down: net_af_packet in DPDK 22.11)
#   6 SIGINT: exit 0, books balanced, stats "bridge": learned >= 5, aged >= 1, fdb_entries = fdb
#
# The switch's process, its control socket (ctl), cleanup, the PASS/FAIL plumbing and the reader
# of the switch's JSON (sj) are switch_lib.sh (shared with the other e2e tests); the topology,
# configuration and checks are here.
#
# Usage: bridge_test.sh ROCESWITCH [ROCESWITCH-CTL]. Root; exit 77 (SKIP) without namespaces.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
CTL="${2:-$REPO_ROOT/tools/roceswitch-ctl}"
# shellcheck source=switch_lib.sh
source "$(dirname "$0")/switch_lib.sh"
require_switch
require_root ip ethtool ping
HAVE_ARPING="" HAVE_TSHARK=""
if command -v arping >/dev/null; then HAVE_ARPING=1; else log "note: no arping (iputils-arping): check 2 sends its ARP requests with ping"; fi
if command -v tshark >/dev/null; then HAVE_TSHARK=1; else log "note: no tshark: check 2 compares interface rx counters"; fi

NS_A="rs-br-a-$ID" NS_B="rs-br-b-$ID" NS_C="rs-br-c-$ID" NS_D="rs-br-d-$ID" NS_SW="rs-br-sw-$ID"
IF_A="ha$ID" IF_B="hb$ID" IF_C="hc$ID" IF_D="hd$ID"  # <= 12 characters, so "$IF_C.20" fits 15
SW_A="sa$ID" SW_B="sb$ID" SW_C="sc$ID" SW_D="sd$ID"
IF_C10="$IF_C.10" IF_C20="$IF_C.20"
MAC_A=02:00:00:00:bb:01 MAC_B=02:00:00:00:bb:02 MAC_C=02:00:00:00:bb:03 MAC_D=02:00:00:00:bb:04
AGEING_S=5
RIG_NETNS=("$NS_A" "$NS_B" "$NS_C" "$NS_D" "$NS_SW")
RIG_LINKS=("$IF_A" "$IF_B" "$IF_C" "$IF_D" "$SW_A" "$SW_B" "$SW_C" "$SW_D")
make_scratch bridge
CAP_PIDS=()  # the tshark captures of check 2 (in BG_PIDS too)

# --- topology -------------------------------------------------------------------------------
ip netns add "$NS_SW" 2>"$T/err" || skip "cannot create network namespaces: $(cat "$T/err")"
for ns in "$NS_A" "$NS_B" "$NS_C" "$NS_D"; do ip netns add "$ns"; done
# IPv4 only and quiet: IPv6 off everywhere (no ND, MLD or router solicitations); the switch
# namespace's kernel has no addresses, so it never answers anything of its own.
for ns in "$NS_SW" "$NS_A" "$NS_B" "$NS_C" "$NS_D"; do
  in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 net.ipv4.ip_default_ttl=64
  in_ns "$ns" ip link set lo up
done
# make_link HOST_NS HOST_IF SW_IF MAC: a veth pair, the host's end with MAC, both ends up.
make_link() {
  ip link add "$2" netns "$1" type veth peer name "$3" netns "$NS_SW" 2>"$T/err" || skip "cannot create veth pairs: $(cat "$T/err")"
  # veth offloads checksums: a frame read off the wire by af_packet would carry a partial one.
  in_ns "$NS_SW" ethtool -K "$3" tx off >/dev/null
  in_ns "$NS_SW" ip link set "$3" up
  in_ns "$1" ip link set "$2" address "$4"
  in_ns "$1" ethtool -K "$2" tx off >/dev/null
  in_ns "$1" ip link set "$2" up
}
make_link "$NS_A" "$IF_A" "$SW_A" $MAC_A
make_link "$NS_B" "$IF_B" "$SW_B" $MAC_B
make_link "$NS_C" "$IF_C" "$SW_C" $MAC_C
make_link "$NS_D" "$IF_D" "$SW_D" $MAC_D
in_ns "$NS_A" ip addr add 10.0.10.1/24 dev "$IF_A"
in_ns "$NS_B" ip addr add 10.0.10.2/24 dev "$IF_B"
in_ns "$NS_D" ip addr add 10.0.20.4/24 dev "$IF_D"
# C's VLAN interfaces: by default a veth pair per VLAN inside C's namespace, the inner end the
# VLAN interface (C's MAC too), the outer end bridged to the trunk by a user-space tagger
# (vlan_tagger.py, stdlib Python on packet sockets: push the tag towards the trunk, pop it from
# it), so the test runs the same on every kernel (some have no 802.1Q, CONFIG_VLAN_8021Q).
# RS_E2E_KERNEL_VLAN=1 uses 802.1Q subinterfaces of the trunk instead, where the kernel has them.
if [ "${RS_E2E_KERNEL_VLAN:-0}" = 1 ] && in_ns "$NS_C" ip link add link "$IF_C" name "$IF_C10" type vlan id 10 2>"$T/err"; then
  in_ns "$NS_C" ip link add link "$IF_C" name "$IF_C20" type vlan id 20
  C_HOW="802.1Q subinterfaces $IF_C10, $IF_C20"
else
  IF_C10="c10$ID" IF_C20="c20$ID" C_HOW="user-space tagger"
  TAGGER="$(cd "$(dirname "$0")" && pwd)/vlan_tagger.py"
  for v in 10 20; do
    in_ns "$NS_C" ip link add "c$v$ID" type veth peer name "k$v$ID"
    in_ns "$NS_C" ip link set "c$v$ID" address $MAC_C
    for i in "c$v$ID" "k$v$ID"; do in_ns "$NS_C" ethtool -K "$i" tx off >/dev/null; in_ns "$NS_C" ip link set "$i" up; done
  done
  ip netns exec "$NS_C" "$PY" -u "$TAGGER" "$IF_C" "10=k10$ID" "20=k20$ID" >"$T/tagger.log" 2>&1 &
  BG_PIDS+=($!)
  for ((i = 0; i < 50; i++)); do grep -qs ready "$T/tagger.log" && break; sleep 0.1; done
  grep -qs ready "$T/tagger.log" || die "the tagger did not start: $(cat "$T/tagger.log")"
fi
for v in 10 20; do
  ifc="IF_C$v"
  in_ns "$NS_C" ip addr add "10.0.$v.3/24" dev "${!ifc}"
  in_ns "$NS_C" ip link set "${!ifc}" up
done
log "namespaces $NS_A $NS_B $NS_C $NS_D $NS_SW; veths $IF_A<->$SW_A $IF_B<->$SW_B $IF_C<->$SW_C $IF_D<->$SW_D; C: $C_HOW"

# --- the switch -----------------------------------------------------------------------------
# port N NAME IFACE MAC VLAN: one bridged port of the configuration.
port() { printf '  - {name: %s, kind: ethdev, devargs: "net_af_packet%s,iface=%s", mac: "%s", vlan: %s}\n' "$2" "$1" "$3" "$4" "$5"; }
{
  echo "switch: {workers: 1, seed: 7}"
  echo "vlans: [10, 20]"
  echo "ports:"
  port 0 pa "$SW_A" 02:00:00:00:00:01 "{access: 10}"
  port 1 pb "$SW_B" 02:00:00:00:00:02 "{access: 10}"
  port 2 pc "$SW_C" 02:00:00:00:00:03 "{tagged: [10, 20]}"
  port 3 pd "$SW_D" 02:00:00:00:00:04 "{access: 20}"
  echo "bridge: {ageing_s: $AGEING_S, flood_pps: 100000, flood_burst: 1000, fdb_size: 16384}"
} >"$T/switch.yaml"
start_switch "roceswitch starts as a bridge"

# --- 1: ping within the VLANs ---------------------------------------------------------------
# ping64_ok NS DST [COUNT]: COUNT (3) of COUNT echoes answered, every reply with TTL 64 (bridged).
ping64_ok() {
  local ns="$1" dst="$2" n="${3:-3}" out="$T/ping.txt" rx ttls
  set +e
  timeout 60 ip netns exec "$ns" ping -n -c "$n" -i 0.2 -W 2 "$dst" >"$out" 2>&1
  set -e
  rx=$(sed -n 's/.*transmitted, \([0-9]*\) received.*/\1/p' "$out")
  ttls=$(grep -o 'ttl=[0-9]*' "$out" | cut -d= -f2 | sort | uniq -c | awk '{ printf "%s%sx%s", s, $1, $2; s = " " }' || true)
  SEEN="${rx:-0} of $n answered, reply TTLs ${ttls:-none}"
  if [ "${rx:-0}" != "$n" ]; then indent "$out"; return 1; fi
  grep -o 'ttl=[0-9]*' "$out" >"$T/ttls" || true
  ! grep -qvx 'ttl=64' "$T/ttls"
}
require_alive "ping"
for p in "A $NS_A 10.0.10.2 B" "B $NS_B 10.0.10.1 A" "A $NS_A 10.0.10.3 C.10" "C.10 $NS_C 10.0.10.1 A" \
  "D $NS_D 10.0.20.3 C.20" "C.20 $NS_C 10.0.20.4 D" "B $NS_B 10.0.10.3 C.10"; do
  read -r from ns dst to <<<"$p"
  expect "1 ping $from -> $to $dst" "3 of 3 answered, reply TTL 64 (bridged, not routed)" ping64_ok "$ns" "$dst"
done

# --- 2: VLAN isolation ----------------------------------------------------------------------
# A broadcasts ARP requests for 10.0.10.99 (nobody has it). The bridge floods them in VLAN 10:
# to B untagged and to C's trunk tagged 10; D, in VLAN 20, must see none.
rx_packets() { in_ns "$1" cat "/sys/class/net/$2/statistics/rx_packets"; }
send_arps() {
  set +e
  if [ -n "$HAVE_ARPING" ]; then
    timeout 20 ip netns exec "$NS_A" arping -c 3 -w 4 -I "$IF_A" 10.0.10.99 >"$T/arping.txt" 2>&1
  else  # an unresolved neighbour: Linux broadcasts mcast_solicit (3) ARP requests
    timeout 20 ip netns exec "$NS_A" ping -n -c 1 -W 4 10.0.10.99 >"$T/arping.txt" 2>&1
  fi
  set -e
}
# capture NS IF NAME: tshark on IF in NS, in the background, until stopped; waits until it
# captures (tshark says 'Capturing on' before dumpcap has opened the interface; dumpcap writes
# the file's header once it has).
capture() {
  local i
  ip netns exec "$1" tshark -n -q -i "$2" -f "arp or (vlan and arp)" -w "$T/$3.pcapng" >"$T/$3.tshark.log" 2>&1 &
  BG_PIDS+=($!) CAP_PIDS+=($!)
  for ((i = 0; i < 100; i++)); do [ -s "$T/$3.pcapng" ] && return 0; sleep 0.1; done
  log "note: tshark on $2 has not started its file within 10 s: $(head -c 300 "$T/$3.tshark.log")"
}
# arp99 NAME [DISPLAY-FILTER]: the captured ARP requests for 10.0.10.99 (and the filter).
arp99() {
  timeout 30 tshark -n -r "$T/$1.pcapng" -Y "arp.opcode == 1 && arp.dst.proto_ipv4 == 10.0.10.99${2:+ && $2}" 2>/dev/null | grep -c . || true
}
require_alive "isolation"
# Quiet hosts: no neighbour entry left that Linux would re-confirm (unicast ARP 5 s after use).
for ns in "$NS_A" "$NS_B" "$NS_C" "$NS_D"; do in_ns "$ns" ip neigh flush all; done
if [ -n "$HAVE_TSHARK" ]; then
  capture "$NS_B" "$IF_B" b
  capture "$NS_C" "$IF_C" c
  capture "$NS_D" "$IF_D" d
  send_arps
  sleep 1
  for p in "${CAP_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${CAP_PIDS[@]}"; do  # up to 10 s for tshark to write its file (a zombie has exited)
    for ((i = 0; i < 100; i++)); do grep -qs '^State:.*Z' "/proc/$p/status" || [ ! -e "/proc/$p" ] && break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  GOT_B=$(arp99 b) GOT_C=$(arp99 c "vlan.id == 10") GOT_C_ANY=$(arp99 c) GOT_D=$(arp99 d)
  HOW="tshark"
else
  B0=$(rx_packets "$NS_B" "$IF_B") C0=$(rx_packets "$NS_C" "$IF_C10") D0=$(rx_packets "$NS_D" "$IF_D")
  send_arps
  sleep 1
  GOT_B=$(($(rx_packets "$NS_B" "$IF_B") - B0)) GOT_C=$(($(rx_packets "$NS_C" "$IF_C10") - C0))
  GOT_C_ANY=$GOT_C GOT_D=$(($(rx_packets "$NS_D" "$IF_D") - D0))
  HOW="rx_packets deltas"
fi
log "A's ARP requests for 10.0.10.99: $(grep -cE 'ARPING|Unicast|Sent|bytes|PING' "$T/arping.txt" || true) lines of output; counted with $HOW"
flood_in_ok() { SEEN="$1 frames"; [ "$1" -ge 3 ]; }
expect "2 A's broadcast ARP requests flooded to B ($IF_B)" ">= 3 (untagged)" flood_in_ok "$GOT_B"
expect "2 A's broadcast ARP requests flooded to C's trunk ($IF_C)" ">= 3 tagged VLAN 10" flood_in_ok "$GOT_C"
isol_ok() { SEEN="$GOT_D frames on $IF_D (C's trunk: $GOT_C_ANY in all, $GOT_C tagged 10)"; [ "$GOT_D" -eq 0 ] && [ "$GOT_C_ANY" = "$GOT_C" ]; }
expect "2 VLAN isolation: A's broadcasts in VLAN 10 not seen by D (VLAN 20)" "0 frames on $IF_D, none untagged or in VLAN 20 on C's trunk" isol_ok
no_route_ok() {
  set +e; timeout 10 ip netns exec "$NS_A" ping -n -c 1 -W 1 10.0.20.4 >"$T/noroute.txt" 2>&1; local rc=$?; set -e
  SEEN="exit $rc: $(head -n 1 "$T/noroute.txt")"; [ "$rc" -ne 0 ]
}
expect "2 A cannot reach D's 10.0.20.4 (no route, no SVI)" "ping fails" no_route_ok

# --- 3: the FDB -----------------------------------------------------------------------------
# Refresh every host's entry first (the ageing time is short): one echo on each path.
for p in "$NS_A 10.0.10.2" "$NS_C 10.0.10.1" "$NS_D 10.0.20.3"; do
  read -r ns dst <<<"$p"
  timeout 10 ip netns exec "$ns" ping -n -c 1 -W 2 "$dst" >/dev/null 2>&1 || true
done
require_alive "fdb"
ctl fdb --json
cp "$T/ctl.out" "$T/fdb.json"
FDB=$(sj fdb "$T/fdb.json") || FDB="roceswitch-ctl fdb --json (exit $CTL_RC): $FDB"
log "FDB: $FDB"
fdb_has() { SEEN="$FDB"; [[ " $FDB " == *" $1 "* ]]; }
WANT=""
for e in "10/$MAC_A/pa A" "10/$MAC_B/pb B" "10/$MAC_C/pc C.10" "20/$MAC_C/pc C.20" "20/$MAC_D/pd D"; do
  expect "3 FDB entry of ${e#* }" "${e%% *}" fdb_has "${e%% *}"
  WANT+="${WANT:+ }${e%% *}"
done
fdb_only_ok() { SEEN="$FDB"; [ "$FDB" = "$WANT" ]; }
expect "3 FDB has nothing else (the switch's own MACs, a host on a wrong port or VLAN)" "exactly $WANT" fdb_only_ok
ctl fdb
indent "$T/ctl.out"

# --- 4: flooding stops once learned ---------------------------------------------------------
# bridge_ctrs: "flooded forwarded" of the bridge stage, live (roceswitch-ctl counters --json).
bridge_ctrs() {
  ctl counters --json
  [ "$CTL_RC" -eq 0 ] || { echo "roceswitch-ctl counters --json: exit $CTL_RC: $(head -c 200 "$T/ctl.out")"; return 1; }
  sj stage "$T/ctl.out" bridge flooded forwarded
}
require_alive "flooding"
timeout 10 ip netns exec "$NS_A" ping -n -c 1 -W 2 10.0.10.2 >/dev/null 2>&1 || true  # A and B learned
C0=$(bridge_ctrs) || C0="error: $C0"
expect "4 20 pings A -> B (neighbours resolved)" "20 of 20 answered, reply TTL 64" ping64_ok "$NS_A" 10.0.10.2 20
C1=$(bridge_ctrs) || C1="error: $C1"
learned_ok() {
  local f0 w0 f1 w1
  read -r f0 w0 <<<"$C0"
  read -r f1 w1 <<<"$C1"
  SEEN="flooded $f0 -> $f1, forwarded $w0 -> $w1"
  [[ "$f0$w0$f1$w1" =~ ^[0-9]+$ ]] && [ $((f1 - f0)) -le 2 ] && [ $((w1 - w0)) -ge 40 ]
}
expect "4 bridge stage counters across the 20 pings" "flooded grows by <= 2, forwarded by >= 40" learned_ok

# --- 5: ageing ------------------------------------------------------------------------------
# D's entry is refreshed by one echo to C; then D must stay silent. Linux would probe its
# neighbour (C) by unicast ARP 5 s after the echo (DELAY), and C would probe D: both neighbour
# tables are flushed so that neither sends anything. D's tx counter shows it kept quiet.
# fdb_state VLAN MAC: "present"/"absent"/an error, for the entry of MAC in VLAN.
fdb_state() {
  ctl fdb --json
  [ "$CTL_RC" -eq 0 ] || { echo "ctl-error"; return; }
  local l
  l=$(sj fdb "$T/ctl.out") || { echo "bad-json"; return; }
  [[ " $l " == *" $1/$2/"* ]] && echo present || echo absent
}
tx_packets() { in_ns "$NS_D" cat "/sys/class/net/$IF_D/statistics/tx_packets"; }
# wait_gone BOUND_MS: the time in ms until D's VLAN 20 entry is gone (polling from T0), or "".
wait_gone() {
  local t s last=""
  GONE_MS="" HIST=""
  while t=$(($(now_ms) - T0)); [ "$t" -le "$1" ]; do
    s=$(fdb_state 20 $MAC_D)
    [ "$s" = "$last" ] || HIST+=" $s@$(fmt_ms "$t")s"
    last=$s
    if [ "$s" = absent ]; then GONE_MS=$t; return 0; fi
    sleep 0.2
  done
}
require_alive "ageing"
timeout 10 ip netns exec "$NS_D" ping -n -c 1 -W 2 10.0.20.3 >/dev/null 2>&1 || true
T0=$(now_ms)
in_ns "$NS_D" ip neigh flush dev "$IF_D"
in_ns "$NS_C" ip neigh flush dev "$IF_C20"
TX0=$(tx_packets)
wait_gone $((AGEING_S * 1000 + 4000))
TX1=$(tx_packets)
ageing_ok() {
  SEEN="states${HIST}; D sent $((TX1 - TX0)) frames meanwhile"
  [ "$TX1" -eq "$TX0" ] && [ -n "$GONE_MS" ] && [ "$GONE_MS" -ge $((AGEING_S * 1000 - 1500)) ] && [ "$GONE_MS" -le $((AGEING_S * 1000 + 2000)) ]
}
expect "5 D's entry (VLAN 20, $MAC_D) ages out once D is silent" \
  "present, then absent between $(fmt_ms $((AGEING_S * 1000 - 1500))) and $((AGEING_S + 2)) s; D sends nothing" ageing_ok
# 5b: D learned again, then its link goes down: the port's entries are flushed, not aged. Only
# where the switch sees the link go down (DPDK 22.11's net_af_packet reports no carrier change).
timeout 10 ip netns exec "$NS_D" ping -n -c 1 -W 2 10.0.20.3 >/dev/null 2>&1 || true
in_ns "$NS_D" ip neigh flush dev "$IF_D"
in_ns "$NS_C" ip neigh flush dev "$IF_C20"
PRE=$(fdb_state 20 $MAC_D) T0=$(now_ms) LINK=""
in_ns "$NS_D" ip link set dev "$IF_D" down
for ((i = 0; i < 30; i++)); do
  ctl port list --json
  LINK=$(sj link "$T/ctl.out" pd) || true
  [ "$LINK" = down ] && break
  sleep 0.1
done
if [ "$LINK" = down ]; then
  wait_gone 3000
  flush_ok() { SEEN="before: $PRE; after pd's link went down:${HIST}"; [ "$PRE" = present ] && [ -n "$GONE_MS" ]; }
  expect "5b D's entry after D's link goes down" "present, then absent within 3 s (flushed, before ageing_s = $AGEING_S s)" flush_ok
else
  note_skip "5b flush on link down: the switch has pd's link '$LINK' 3 s after D's end went down (its PMD reports no carrier change)"
fi
in_ns "$NS_D" ip link set dev "$IF_D" up

# --- 6: stop and read the books -------------------------------------------------------------
stop_switch 6
if [ -s "$S" ]; then
  log "stats bridge stage: $(json_get "$S" "[s for s in j.get('stages', []) if s.get('node') == 'bridge']")"
  BR="{k: v for k, v in j['bridge'].items() if k != 'fdb'} if 'bridge' in j else 'no bridge'"
  bridge_ok() { SEEN="bridge $(json_get "$S" "$BR")"; json_true "$S" "j['bridge']['learned'] >= 5 and j['bridge']['aged'] >= 1" 2>/dev/null; }
  expect "6 stats: \"bridge\"" "learned >= 5, aged >= 1" bridge_ok
  # fdb_entries counts the table; fdb lists it (its first 1000 entries).
  rows_ok() { SEEN="fdb_entries $(json_get "$S" "j['bridge']['fdb_entries']"), fdb: $(sj fdb "$S" stats)"; json_true "$S" "j['bridge']['fdb_entries'] == len(j['bridge']['fdb'])" 2>/dev/null; }
  expect "6 stats: bridge.fdb_entries = the entries of bridge.fdb" "equal (fewer than 1000)" rows_ok
fi
finish
