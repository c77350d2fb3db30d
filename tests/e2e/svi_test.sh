#!/bin/bash
# End to end: a VLAN interface (SVI) routes between a bridged VLAN and a routed port. Three Linux
# hosts in their own network namespaces, each on a veth pair to a fourth namespace where the
# switch owns the other ends through net_af_packet. No static neighbours: the hosts resolve the
# SVI's and the port's addresses by ARP/ND, and the switch resolves the hosts the same way (on
# VLAN 10 by ARP/ND flooded in the VLAN, each host then on the port the bridge learned it on).
#
#   ns A: ha (10.0.10.2/24, fd00:10::2/64; gw .1)  ==veth== sa [ns SW: port pa, access VLAN 10]
#   ns B: hb (trunk, no address), b10 (10.0.10.3/24, ==veth== sb [ns SW: port pb, tagged 10]
#         fd00:10::3/64; gw .1), B's MAC on both; b10 is bridged to hb by the user-space tagger
#         (vlan_tagger.py: only VID 10 frames pass) or, with RS_E2E_KERNEL_VLAN=1 where the
#         kernel has 802.1Q, the subinterface hb.10
#   ns R: hr (10.0.2.2/24, fd00:2::2/64; gw .1)    ==veth== sr [ns SW: port pr 10.0.2.1, fd00:2::1]
#   switch: vlans [{id: 10, ipv4: 10.0.10.1/24, ipv6: fd00:10::1/64}], the SVI's MAC the default
#
# Checks, each printed PASS/FAIL with what was expected and what was seen:
#   1 A and B ping the SVI's addresses (IPv4, IPv6)
#   2 A<->R and B<->R across the SVI: reply TTL/hop limit 63 (one routed hop), IPv4 and IPv6;
#     A<->B still bridged: TTL 64
#   3 traceroute A -> R (IPv4, IPv6), B -> R: hop 1 the SVI's address; R -> A: hop 1 pr's
#   4 neighbour tables: A's and B's kernels hold the SVI's MAC for its addresses, R's pr's MAC;
#     the switch's (roceswitch-ctl neighbours --json): A and B on Vlan10 with their MACs, R on pr
#   5 the FDB (roceswitch-ctl fdb --json): exactly A on pa and B on pb in VLAN 10. R pings
#     addresses B never used (10.0.10.33, fd00:10::33): answered, TTL 63; the switch's ARP
#     request / NS for them, from the SVI's MAC, flooded in VLAN 10: tagged on B's trunk,
#     untagged to A; R's replies to B leave the trunk tagged 10, SVI's MAC -> B's (tshark on hb
#     and ha; without tshark the pings prove it: the tagger passes only VID 10 frames)
#   5b pa's VLAN membership changed at run time (roceswitch-ctl port set pa --vlan-access none
#     --vlan-tagged 10): A no longer reaches the SVI; changed back: it does
#   6 SIGINT: exit 0, books balanced, stats "neighbours" holds A on Vlan10
#   7 bad configurations (--check-config): an SVI without an address, a bridged port with an
#     address, an SVI subnet overlapping a port's: exit 2, the message names the field
#
# The switch's process, ctl, cleanup, the PASS/FAIL plumbing, the hosts' ping, traceroute and
# neighbour checks and the reader of the switch's JSON (sj) are switch_lib.sh.
#
# Usage: svi_test.sh ROCESWITCH [ROCESWITCH-CTL]. Root; exit 77 (SKIP) without namespaces.
# traceroute and tshark are optional: their checks are skipped, with a note, when missing.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
CTL="${2:-$REPO_ROOT/tools/roceswitch-ctl}"
# shellcheck source=switch_lib.sh
source "$(dirname "$0")/switch_lib.sh"
require_switch
require_root ip ethtool ping
HAVE_TRACEROUTE="" HAVE_TSHARK=""
if command -v traceroute >/dev/null; then HAVE_TRACEROUTE=1; else log "note: no traceroute: check 3 skipped"; fi
if command -v tshark >/dev/null; then HAVE_TSHARK=1; else log "note: no tshark: check 5 relies on B's pings"; fi

NS_A="rs-svi-a-$ID" NS_B="rs-svi-b-$ID" NS_R="rs-svi-r-$ID" NS_SW="rs-svi-sw-$ID"
IF_A="ha$ID" IF_B="hb$ID" IF_R="hr$ID" SW_A="sa$ID" SW_B="sb$ID" SW_R="sr$ID"  # <= 12 characters
IF_B10="$IF_B.10"
MAC_A=02:00:00:00:cc:01 MAC_B=02:00:00:00:cc:02 MAC_R=02:00:00:00:cc:03
PORT_A_MAC=02:00:00:00:00:01 PORT_B_MAC=02:00:00:00:00:02 PORT_R_MAC=02:00:00:00:00:03
SVI_MAC=02:52:53:01:00:0a  # VLAN 10's default: 02:52:53:01 and the VLAN id
RIG_NETNS=("$NS_A" "$NS_B" "$NS_R" "$NS_SW")
RIG_LINKS=("$IF_A" "$IF_B" "$IF_R" "$SW_A" "$SW_B" "$SW_R")
make_scratch svi

# --- topology -------------------------------------------------------------------------------
ip netns add "$NS_SW" 2>"$T/err" || skip "cannot create network namespaces: $(cat "$T/err")"
for ns in "$NS_A" "$NS_B" "$NS_R"; do
  ip netns add "$ns"
  dual_stack_host "$ns"
done
# The switch namespace's kernel has no addresses and no IPv6: it never answers anything itself.
in_ns "$NS_SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_ns "$NS_SW" ip link set lo up
# make_link HOST_NS HOST_IF SW_IF MAC SW_MAC: a veth pair, both ends' MACs set, no checksum
# offload (af_packet would read a partial checksum off the wire), the switch's end up.
make_link() {
  ip link add "$2" netns "$1" type veth peer name "$3" netns "$NS_SW" 2>"$T/err" || skip "cannot create veth pairs: $(cat "$T/err")"
  in_ns "$NS_SW" ip link set "$3" address "$5"
  in_ns "$NS_SW" ethtool -K "$3" tx off >/dev/null
  in_ns "$NS_SW" ip link set "$3" up
  in_ns "$1" ip link set "$2" address "$4"
  in_ns "$1" ethtool -K "$2" tx off >/dev/null
}
# host_addrs NS IF V4 V6 GW4 GW6: the host's interface up with its addresses and default routes.
host_addrs() {
  in_ns "$1" ip addr add "$3" dev "$2"
  in_ns "$1" ip -6 addr add "$4" dev "$2" nodad
  in_ns "$1" ip link set "$2" up
  in_ns "$1" ip route add default via "$5" dev "$2"
  in_ns "$1" ip -6 route add default via "$6" dev "$2"
}
make_link "$NS_A" "$IF_A" "$SW_A" $MAC_A $PORT_A_MAC
make_link "$NS_B" "$IF_B" "$SW_B" $MAC_B $PORT_B_MAC
make_link "$NS_R" "$IF_R" "$SW_R" $MAC_R $PORT_R_MAC
host_addrs "$NS_A" "$IF_A" 10.0.10.2/24 fd00:10::2/64 10.0.10.1 fd00:10::1
host_addrs "$NS_R" "$IF_R" 10.0.2.2/24 fd00:2::2/64 10.0.2.1 fd00:2::1
# B's trunk carries only tagged frames: no IPv6 on it (no link-local address, MLD or ND).
in_ns "$NS_B" sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
in_ns "$NS_B" ip link set "$IF_B" up
if [ "${RS_E2E_KERNEL_VLAN:-0}" = 1 ] && in_ns "$NS_B" ip link add link "$IF_B" name "$IF_B10" type vlan id 10 2>"$T/err"; then
  B_HOW="802.1Q subinterface $IF_B10"
else  # the tagger (see bridge_test.sh): b10 the VLAN interface, k10 its end on the tagger's side
  IF_B10="b10$ID" B_HOW="user-space tagger"
  in_ns "$NS_B" ip link add "$IF_B10" type veth peer name "k10$ID"
  in_ns "$NS_B" sysctl -qw "net.ipv6.conf.k10$ID.disable_ipv6=1"
  in_ns "$NS_B" ip link set "$IF_B10" address $MAC_B
  for i in "$IF_B10" "k10$ID"; do in_ns "$NS_B" ethtool -K "$i" tx off >/dev/null; in_ns "$NS_B" ip link set "$i" up; done
  ip netns exec "$NS_B" "$PY" -u "$(cd "$(dirname "$0")" && pwd)/vlan_tagger.py" "$IF_B" "10=k10$ID" >"$T/tagger.log" 2>&1 &
  BG_PIDS+=($!)
  for ((i = 0; i < 50; i++)); do grep -qs ready "$T/tagger.log" && break; sleep 0.1; done
  grep -qs ready "$T/tagger.log" || die "the tagger did not start: $(cat "$T/tagger.log")"
fi
host_addrs "$NS_B" "$IF_B10" 10.0.10.3/24 fd00:10::3/64 10.0.10.1 fd00:10::1
log "namespaces $NS_A $NS_B $NS_R $NS_SW; veths $IF_A<->$SW_A $IF_B<->$SW_B $IF_R<->$SW_R; B: $B_HOW"

# --- the switch -----------------------------------------------------------------------------
# port N NAME IFACE MAC REST: one port of the configuration.
port() { printf '  - {name: %s, kind: ethdev, devargs: "net_af_packet%s,iface=%s", mac: "%s", %s}\n' "$2" "$1" "$3" "$4" "$5"; }
{
  echo "switch: {workers: 1, seed: 7}"
  echo "vlans:"
  echo '  - {id: 10, ipv4: 10.0.10.1/24, ipv6: "fd00:10::1/64"}'
  echo "ports:"
  port 0 pa "$SW_A" $PORT_A_MAC "vlan: {access: 10}"
  port 1 pb "$SW_B" $PORT_B_MAC "vlan: {tagged: [10]}"
  port 2 pr "$SW_R" $PORT_R_MAC 'ipv4: 10.0.2.1/24, ipv6: "fd00:2::1/64"'
} >"$T/switch.yaml"
start_switch "roceswitch starts with VLAN 10's interface"

# --- 1, 2: ping -----------------------------------------------------------------------------
require_alive "ping"
for p in "A $NS_A 10.0.10.1" "A $NS_A fd00:10::1" "B $NS_B 10.0.10.1" "B $NS_B fd00:10::1"; do
  read -r from ns dst <<<"$p"
  expect "1 ping $from -> the SVI's $dst" "3 of 3 answered" ping_ok "$ns" "$dst"
done
for p in "A $NS_A 10.0.2.2 R" "A $NS_A fd00:2::2 R" "B $NS_B 10.0.2.2 R" "B $NS_B fd00:2::2 R" \
  "R $NS_R 10.0.10.2 A" "R $NS_R fd00:10::2 A" "R $NS_R 10.0.10.3 B" "R $NS_R fd00:10::3 B"; do
  read -r from ns dst to <<<"$p"
  expect "2 ping $from -> $to $dst (routed by the SVI)" "3 of 3 answered, reply TTL/hop limit 63 (one hop)" ping_ok "$ns" "$dst" 63
done
for p in "A $NS_A 10.0.10.3 B" "B $NS_B 10.0.10.2 A" "A $NS_A fd00:10::3 B" "B $NS_B fd00:10::2 A"; do
  read -r from ns dst to <<<"$p"
  expect "2 ping $from -> $to $dst (same VLAN)" "3 of 3 answered, reply TTL/hop limit 64 (bridged, not routed)" ping_ok "$ns" "$dst" 64
done

# --- 3: traceroute --------------------------------------------------------------------------
require_alive "traceroute"
if [ -n "$HAVE_TRACEROUTE" ]; then
  for p in "A $NS_A 10.0.10.1 10.0.2.2" "A $NS_A fd00:10::1 fd00:2::2" "B $NS_B 10.0.10.1 10.0.2.2" "R $NS_R 10.0.2.1 10.0.10.2"; do
    read -r from ns h1 dst <<<"$p"
    expect "3 traceroute -n -w 1 -q 1 -m 3 $dst (UDP, from $from)" "hop 1 $h1, hop 2 $dst" trace_ok "$ns" "$h1" "$dst" -n -w 1 -q 1 -m 3 "$dst"
  done
else
  note_skip "3 traceroute: not installed (Debian package traceroute)"
fi

# --- 4: neighbour tables --------------------------------------------------------------------
# sw_neigh_ok IP PORT MAC: the switch holds IP on PORT with MAC, in a usable state.
sw_neigh_ok() {
  local got
  ctl neighbours --json
  [ "$CTL_RC" -eq 0 ] || { SEEN="roceswitch-ctl neighbours --json: exit $CTL_RC: $(head -c 300 "$T/ctl.out")"; return 1; }
  got=$(sj neigh "$T/ctl.out" "$1") || { SEEN="$got"; return 1; }
  SEEN="'$got'"
  [[ "$got" =~ ^$2\ $3\ (reachable|stale|delay|probe)$ ]]
}
require_alive "neighbour tables"
for h in "A $NS_A $IF_A 10.0.10.1 $SVI_MAC" "A $NS_A $IF_A fd00:10::1 $SVI_MAC" "B $NS_B $IF_B10 10.0.10.1 $SVI_MAC" \
  "B $NS_B $IF_B10 fd00:10::1 $SVI_MAC" "R $NS_R $IF_R 10.0.2.1 $PORT_R_MAC" "R $NS_R $IF_R fd00:2::1 $PORT_R_MAC"; do
  read -r who ns ifc hip hmac <<<"$h"
  expect "4 $who's neighbour $hip (ip neigh)" "lladdr $hmac, REACHABLE/STALE/DELAY/PROBE" host_neigh_ok "$ns" "$ifc" "$hip" "$hmac"
done
for h in "10.0.10.2 Vlan10 $MAC_A" "fd00:10::2 Vlan10 $MAC_A" "10.0.10.3 Vlan10 $MAC_B" "fd00:10::3 Vlan10 $MAC_B" \
  "10.0.2.2 pr $MAC_R" "fd00:2::2 pr $MAC_R"; do
  read -r hip hport hmac <<<"$h"
  expect "4 the switch's neighbour $hip (neighbours --json)" "'$hport $hmac reachable|stale|delay|probe'" sw_neigh_ok "$hip" "$hport" "$hmac"
done
ctl neighbours
indent "$T/ctl.out"

# --- 5: the FDB; the switch resolves a host on the VLAN; tagging ----------------------------
require_alive "fdb"
for p in "$NS_A 10.0.10.3" "$NS_B 10.0.10.2"; do  # both entries fresh (one echo each way)
  read -r ns dst <<<"$p"
  timeout 10 ip netns exec "$ns" ping -n -c 1 -W 2 "$dst" >/dev/null 2>&1 || true
done
ctl fdb --json
FDB=$(sj fdb "$T/ctl.out") || FDB="roceswitch-ctl fdb --json (exit $CTL_RC): $FDB"
WANT="10/$MAC_A/pa 10/$MAC_B/pb"
fdb_ok() { SEEN="$FDB"; [ "$FDB" = "$WANT" ]; }
expect "5 the FDB: A and B in VLAN 10 on their ports, nothing else (not the SVI's MAC, not R)" "exactly $WANT" fdb_ok
# B gets addresses it never used (10.0.10.33, fd00:10::33): R's pings to them make the switch
# resolve them itself, by an ARP request / NS from the SVI flooded in VLAN 10 (tagged on B's
# trunk, untagged to A). Meanwhile B pings R: the replies come out of the switch tagged 10, from
# the SVI's MAC to B's. tshark listens on B's trunk and on A.
in_ns "$NS_B" ip addr add 10.0.10.33/24 dev "$IF_B10"
in_ns "$NS_B" ip -6 addr add fd00:10::33/64 dev "$IF_B10" nodad
CAP_PIDS=()
# cap_start NS IF NAME: tshark on IF in NS into $T/NAME.pcapng, in the background, until
# cap_stop; waits until it captures (tshark says 'Capturing on' before dumpcap has opened the
# interface; dumpcap writes the file's header once it has).
cap_start() {
  ip netns exec "$1" tshark -n -q -i "$2" -f "arp or icmp or icmp6 or (vlan and (arp or icmp or icmp6))" \
    -w "$T/$3.pcapng" >"$T/$3.tshark.log" 2>&1 &
  BG_PIDS+=($!) CAP_PIDS+=($!)
  for ((i = 0; i < 100; i++)); do [ -s "$T/$3.pcapng" ] && return 0; sleep 0.1; done
  log "note: tshark on $2 has not started its file within 10 s: $(head -c 300 "$T/$3.tshark.log")"
}
cap_stop() {  # up to 10 s for each tshark to write its file (a zombie has exited)
  local p
  for p in "${CAP_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; done
  for p in "${CAP_PIDS[@]}"; do
    for ((i = 0; i < 100; i++)); do grep -qs '^State:.*Z' "/proc/$p/status" || [ ! -e "/proc/$p" ] && break; sleep 0.1; done
    kill -KILL "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
}
count() { timeout 30 tshark -n -r "$T/$1.pcapng" -Y "$2" 2>/dev/null | grep -c . || true; }
[ -z "$HAVE_TSHARK" ] || { cap_start "$NS_B" "$IF_B" b; cap_start "$NS_A" "$IF_A" a; }
for dst in 10.0.10.33 fd00:10::33; do
  expect "5 ping R -> B's fresh $dst (the switch resolves it on VLAN 10)" "3 of 3 answered, reply TTL/hop limit 63" ping_ok "$NS_R" "$dst" 63
done
set +e
for dst in 10.0.2.2 fd00:2::2; do timeout 20 ip netns exec "$NS_B" ping -n -c 3 -i 0.2 -W 2 "$dst" >"$T/cap-ping.txt" 2>&1; done
set -e
if [ -n "$HAVE_TSHARK" ]; then
  sleep 0.5
  cap_stop
  ARP33="arp.opcode == 1 && arp.dst.proto_ipv4 == 10.0.10.33 && arp.src.hw_mac == $SVI_MAC"
  NS33="icmpv6.type == 135 && icmpv6.nd.ns.target_address == fd00:10::33 && eth.src == $SVI_MAC"
  SOL_B="$(count b "vlan.id == 10 && $ARP33") ARP, $(count b "vlan.id == 10 && $NS33") NS tagged 10; $(count b "!vlan && (($ARP33) || ($NS33))") untagged"
  SOL_A="$(count a "!vlan && $ARP33") ARP, $(count a "!vlan && $NS33") NS untagged; $(count a "vlan && (($ARP33) || ($NS33))") tagged"
  flood_ok() { SEEN="$2"; [[ "$2" =~ ^[1-9][0-9]*\ ARP,\ [1-9][0-9]*\ NS\ $1\;\ 0\  ]]; }
  expect "5 the switch's solicitations for B's fresh addresses on B's trunk $IF_B" ">= 1 ARP request and >= 1 NS from $SVI_MAC, tagged 10; none untagged" flood_ok "tagged 10" "$SOL_B"
  expect "5 the switch's solicitations for B's fresh addresses on A's $IF_A (access)" ">= 1 ARP request and >= 1 NS from $SVI_MAC, untagged; none tagged" flood_ok untagged "$SOL_A"
  REPLY4="icmp.type == 0 && ip.src == 10.0.2.2" REPLY6="icmpv6.type == 129 && ipv6.src == fd00:2::2"
  HDR="vlan.id == 10 && eth.src == $SVI_MAC && eth.dst == $MAC_B"
  GOT4=$(count b "$HDR && $REPLY4") GOT6=$(count b "$HDR && $REPLY6") ALL=$(count b "($REPLY4) || ($REPLY6)")
  UNTAGGED=$(count b "!vlan && (icmp || icmpv6)")
  tagged_ok() { SEEN="$GOT4 IPv4 and $GOT6 IPv6 replies so; $ALL replies in all, $UNTAGGED untagged ICMP frames"; [ "$GOT4" -ge 3 ] && [ "$GOT6" -ge 3 ] && [ "$ALL" = $((GOT4 + GOT6)) ] && [ "$UNTAGGED" -eq 0 ]; }
  expect "5 R's echo replies to B on B's trunk $IF_B (tshark)" ">= 3 IPv4 and >= 3 IPv6, every one tagged 10, $SVI_MAC -> $MAC_B; nothing untagged" tagged_ok
else
  note_skip "5 tshark on B's trunk and A: not installed (the answered pings from and to B prove the tagging: the tagger passes only VID 10)"
fi

# --- 5b: VLAN membership changed at run time (roceswitch-ctl port set --vlan-*) -------------
# pa carries VLAN 10 tagged instead of untagged: A's untagged frames are dropped (no access
# VLAN) and the switch's come to A tagged, so A no longer reaches the SVI; back untagged, it does.
vlan_set_ok() { SEEN="exit $CTL_RC: $(head -c 200 "$T/ctl.out" | tr '\n' ' ')"; [ "$CTL_RC" -eq 0 ]; }
no_answer() {
  set +e
  timeout 10 ip netns exec "$NS_A" ping -n -c 2 -i 0.2 -W 1 "$1" >"$T/ping-none.txt" 2>&1
  set -e
  SEEN="$(sed -n 's/.*transmitted, \([0-9]*\) received.*/\1/p' "$T/ping-none.txt") of 2 answered"
  [ "$SEEN" = "0 of 2 answered" ]
}
ctl port set pa --vlan-access none --vlan-tagged 10
expect "5b roceswitch-ctl port set pa --vlan-access none --vlan-tagged 10" "exit 0" vlan_set_ok
expect "5b A pings the SVI while pa carries VLAN 10 tagged only" "0 of 2 answered" no_answer 10.0.10.1
ctl port set pa --vlan-access 10 --vlan-tagged none
expect "5b roceswitch-ctl port set pa --vlan-access 10 --vlan-tagged none" "exit 0" vlan_set_ok
expect "5b A pings the SVI with pa untagged in VLAN 10 again" "3 of 3 answered" ping_ok "$NS_A" 10.0.10.1

# --- 6: stop and read the books -------------------------------------------------------------
stop_switch 6
if [ -s "$S" ]; then
  stats_neigh_ok() { SEEN="10.0.10.2: '$(sj neigh "$S" 10.0.10.2 stats)'"; [[ "$SEEN" =~ \'Vlan10\ $MAC_A\ (reachable|stale|delay|probe)\'$ ]]; }
  expect "6 stats: top-level \"neighbours\"" "10.0.10.2 on Vlan10 with $MAC_A" stats_neigh_ok
fi

# --- 7: bad configurations ------------------------------------------------------------------
# bad_ok NAME FIELD REASON: roceswitch --check-config on $T/NAME.yaml: exit 2, FIELD and REASON
# (a regular expression) in its message.
bad_ok() {
  local out rc
  set +e
  out=$(timeout 20 "$ROCESWITCH" -- --config "$T/$1.yaml" --check-config 2>&1)
  rc=$?
  set -e
  SEEN="exit $rc: $(head -n 3 <<<"$out" | tr '\n' ' ')"
  [ "$rc" -eq 2 ] && grep -qF -- "$2" <<<"$out" && grep -qiE -- "$3" <<<"$out"
}
# bad NAME VLAN PORT0-REST: the configuration above with the VLAN item and pa's REST replaced.
bad() {
  sed -e "s|^  - {id: 10, .*|  - $2|" -e "/name: pa,/s|vlan: {access: 10}|$3|" "$T/switch.yaml" >"$T/$1.yaml"
}
bad no_addr "{id: 10}" "vlan: {access: 10}"
expect "7 bad config: vlans: [{id: 10}] (an SVI without an address)" "exit 2, 'vlans[0]', 'needs an address'" bad_ok no_addr "vlans[0]" "needs an address"
bad port_addr '{id: 10, ipv4: 10.0.10.1/24}' "vlan: {access: 10}, ipv4: 10.0.10.5/24"
expect "7 bad config: pa with vlan and ipv4" "exit 2, 'ports[0].vlan', 'no addresses of its own'" bad_ok port_addr "ports[0].vlan" "no addresses of its own"
bad overlap '{id: 10, ipv4: 10.0.2.9/24}' "vlan: {access: 10}"
expect "7 bad config: VLAN 10's 10.0.2.9/24 in pr's subnet" "exit 2, 'vlans[0].ipv4', 'overlaps port pr'" bad_ok overlap "vlans[0].ipv4" "overlaps port pr"
finish
