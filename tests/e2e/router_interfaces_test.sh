#!/bin/bash
# End to end: roceswitch as the hosts' IP router, with addresses on its ports (issue 21). Three
# Linux hosts in their own network namespaces reach each other through the switch, which owns
# the other ends of their veth pairs through net_af_packet and runs in a fourth namespace.
# Nobody has a static neighbour entry: the hosts resolve their gateway (the switch port) by ARP
# and IPv6 ND, and the switch resolves the hosts (and its `via` next hop) the same way.
#
#   ns A: ra (10.0.1.2/24, 2001:db8:1::2/64; gw .1)  ==veth== sa [ns SW: port pa 10.0.1.1, 2001:db8:1::1]
#   ns B: rb (10.0.2.2/24, 2001:db8:2::2/64; gw .1)  ==veth== sb [ns SW: port pb 10.0.2.1, 2001:db8:2::1]
#         lo 10.9.0.1/32 (the switch's route 10.9.0.0/16 via 10.0.2.2)
#   ns C: rc (10.0.3.2/24, 2001:db8:3::2/64; gw .1)  ==veth== sc [ns SW: port pc 10.0.3.1, 2001:db8:3::1]
#
# Checks, each printed PASS/FAIL with what was expected and what was seen:
#   1 ping the gateway (IPv4, IPv6)            2 ping across the switch, reply TTL 63 (one hop)
#   3 arping the gateway: the port's MAC       3b no route: ICMP unreachable (icmp_unreachable)
#   4 traceroute (UDP, ICMP, IPv6): the switch's port address is hop 1
#   5 neighbour tables: the hosts' (ip neigh) and the switch's (roceswitch-ctl neighbours --json)
#   6 a route `via` a next hop resolved by ARP
#   7 B stops answering ARP/ND: the switch's neighbour goes `failed` within the NUD timers;
#     7b it answers again: traffic resumes
#   8 an address given at run time (roceswitch-ctl port set pc --ipv4 10.0.3.1/24,10.0.7.1/24): C
#     pings 10.0.7.1 from 10.0.7.2 on the same link; taken back (--ipv4 10.0.3.1/24): no answer
#   9 SIGINT: exit 0, books balanced, stats "neighbours" and a `neighbor_failed` drop count
#
# The rig (namespaces, veths, the switch's configuration, the router's neighbour table) is
# router_lib.sh; what the e2e tests share (the switch's process, ctl, the PASS/FAIL plumbing, the
# hosts' ping, traceroute and neighbour checks, the reader of the switch's JSON, sj) is
# switch_lib.sh; both sourced here. This file is the checks, in order.
#
# Usage: router_interfaces_test.sh ROCESWITCH [ROCESWITCH-CTL]. Needs root; exits 77 (meson:
# SKIP) where namespaces cannot be made. arping (Debian iputils-arping) and traceroute (Debian
# traceroute) are optional: their checks are skipped, with a note, when missing.
# RS_E2E_ROUTER=kernel runs the same host-side checks with the switch namespace's Linux kernel as
# the router (same addresses, route and NUD timers), which checks this test itself against a
# reference router; the switch-only checks (control socket, stats) are then skipped.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
CTL="${2:-$REPO_ROOT/tools/roceswitch-ctl}"
ROUTER="${RS_E2E_ROUTER:-roceswitch}"
# shellcheck source=switch_lib.sh
source "$(dirname "$0")/switch_lib.sh"
case "$ROUTER" in
  roceswitch) require_switch ;;
  kernel) ;;
  *) die "RS_E2E_ROUTER: '$ROUTER', expected roceswitch or kernel" ;;
esac

require_root
command -v ip >/dev/null || skip "iproute2 'ip' not installed"
command -v ethtool >/dev/null || skip "ethtool not installed (needed to turn off veth checksum offload)"
command -v ping >/dev/null || skip "ping not installed (Debian package iputils-ping)"
HAVE_ARPING="" HAVE_TRACEROUTE=""
missing=()
if command -v arping >/dev/null; then HAVE_ARPING=1; else missing+=("arping (Debian package iputils-arping)"); fi
if command -v traceroute >/dev/null; then HAVE_TRACEROUTE=1; else missing+=("traceroute (Debian package traceroute)"); fi
if [ ${#missing[@]} -gt 0 ]; then
  log "optional tools missing, their checks will be skipped: ${missing[*]}"
else
  log "optional tools present: arping, traceroute"
fi
[ "$ROUTER" = kernel ] && log "reference mode: the switch namespace's Linux kernel is the router, not roceswitch"

# shellcheck source=router_lib.sh
source "$(dirname "$0")/router_lib.sh"
# A neighbour that stops answering is failed at the latest after reachable (randomised up to
# 1.5 x base), delay, then the unicast probes; 5 s more for the switch's timer granularity.
FAIL_BOUND_MS=$((BASE_REACHABLE_MS * 3 / 2 + DELAY_FIRST_PROBE_MS + UCAST_PROBES * RETRANS_MS + 5000))

make_topology
write_switch_config

# --- the router -----------------------------------------------------------------------------
if [ "$ROUTER" = roceswitch ]; then
  start_switch "roceswitch starts with the router configuration"
fi

# --- 1, 2: ping -----------------------------------------------------------------------------
require_alive "ping"
expect "1 ping A -> gateway 10.0.1.1" "3 of 3 answered" ping_ok "$NS_A" 10.0.1.1
expect "1 ping A -> gateway 2001:db8:1::1" "3 of 3 answered" ping_ok "$NS_A" 2001:db8:1::1
expect "2 ping A -> B 10.0.2.2" "3 of 3 answered, reply TTL 63 (one hop)" ping_ok "$NS_A" 10.0.2.2 63
expect "2 ping A -> C 10.0.3.2" "3 of 3 answered, reply TTL 63 (one hop)" ping_ok "$NS_A" 10.0.3.2 63
expect "2 ping B -> C 10.0.3.2" "3 of 3 answered, reply TTL 63 (one hop)" ping_ok "$NS_B" 10.0.3.2 63
expect "2 ping A -> B 2001:db8:2::2" "3 of 3 answered, reply hop limit 63 (one hop)" ping_ok "$NS_A" 2001:db8:2::2 63
expect "2 ping A -> C 2001:db8:3::2" "3 of 3 answered, reply hop limit 63 (one hop)" ping_ok "$NS_A" 2001:db8:3::2 63
expect "2 ping B -> C 2001:db8:3::2" "3 of 3 answered, reply hop limit 63 (one hop)" ping_ok "$NS_B" 2001:db8:3::2 63

# --- 3: arping --------------------------------------------------------------------------------
# Both Debian arpings: iputils ("Unicast reply from 10.0.1.1 [02:00:..]", broadcast first, then
# unicast to the MAC that answered) and Thomas Habets' ("60 bytes from 02:00:.. (10.0.1.1)").
arping_ok() {
  local out="$T/arping.txt" replies macs
  set +e
  timeout 20 ip netns exec "$NS_A" arping -c 2 -w 5 -I "$IF_A" 10.0.1.1 >"$out" 2>&1
  set -e
  replies=$(grep -ciE 'reply from|bytes from' "$out" || true)
  macs=$(grep -iE 'reply from|bytes from' "$out" | grep -oiE '([0-9a-f]{2}:){5}[0-9a-f]{2}' | tr 'A-F' 'a-f' | sort -u | paste -sd ' ' - || true)
  SEEN="$replies replies, from MAC ${macs:-none}"
  if [ "$replies" -ge 2 ] && [ "$macs" = "$PORT_A_MAC" ]; then return 0; fi
  indent "$out"
  return 1
}
require_alive "arping"
if [ -n "$HAVE_ARPING" ]; then
  expect "3 arping -c 2 -I $IF_A 10.0.1.1 (from A)" "2 replies, all from $PORT_A_MAC" arping_ok
else
  note_skip "3 arping: not installed (Debian package iputils-arping)"
fi

# --- 3b: no route: ICMP destination unreachable (pa has icmp_unreachable) -------------------
# Before traceroute: Linux (the reference router) sends at most one such error a second to a
# source that has just had a Time Exceeded (net.ipv4.route.error_cost).
require_alive "icmp unreachable"
# unreach_ok DST FROM: one echo to an address with no route: "From FROM ... Destination ... unreachable".
unreach_ok() {
  local out="$T/unreach.txt"
  set +e
  timeout 20 ip netns exec "$NS_A" ping -n -c 1 -W 2 "$1" >"$out" 2>&1
  set -e
  SEEN="'$(grep -m 1 '^From' "$out" || echo 'no ICMP error')'"
  grep -qiE "^From $2 .*Destination .*unreachable" "$out"
}
expect "3b ping A -> 10.77.0.1 (no route; pa has icmp_unreachable)" "From 10.0.1.1 ... Destination ... Unreachable" \
  unreach_ok 10.77.0.1 10.0.1.1
expect "3b ping A -> 2001:db8:77::1 (no route; pa has icmp_unreachable)" "From 2001:db8:1::1 ... Destination unreachable" \
  unreach_ok 2001:db8:77::1 2001:db8:1::1

# --- 4: traceroute ------------------------------------------------------------------------------
require_alive "traceroute"
if [ -n "$HAVE_TRACEROUTE" ]; then
  expect "4 traceroute -n -w 1 -q 1 -m 3 10.0.2.2 (UDP, from A)" "hop 1 10.0.1.1, hop 2 10.0.2.2" \
    trace_ok "$NS_A" 10.0.1.1 10.0.2.2 -n -w 1 -q 1 -m 3 10.0.2.2
  # grep reads it all: with -q it could stop early, and traceroute's SIGPIPE fail the pipeline.
  if ip netns exec "$NS_A" traceroute --help 2>&1 | grep -E '(^| )-I( |,)' >/dev/null; then
    expect "4 traceroute -I -n -w 1 -q 1 -m 3 10.0.2.2 (ICMP echo, from A)" "hop 1 10.0.1.1, hop 2 10.0.2.2" \
      trace_ok "$NS_A" 10.0.1.1 10.0.2.2 -I -n -w 1 -q 1 -m 3 10.0.2.2
  else
    note_skip "4 traceroute -I: this traceroute has no ICMP mode (Debian package traceroute has)"
  fi
  expect "4 traceroute -6 -n -w 1 -q 1 -m 3 2001:db8:2::2 (UDP, from A)" "hop 1 2001:db8:1::1, hop 2 2001:db8:2::2" \
    trace_ok "$NS_A" 2001:db8:1::1 2001:db8:2::2 -6 -n -w 1 -q 1 -m 3 2001:db8:2::2
else
  note_skip "4 traceroute: not installed (Debian package traceroute)"
fi

# --- 5: neighbour tables --------------------------------------------------------------------
# sw_neigh_ok IP PORT MAC: the router holds IP on PORT with MAC, in a usable state.
sw_neigh_ok() {
  local got
  if ! neigh_snapshot "$T/neigh.json"; then
    SEEN="roceswitch-ctl neighbours --json failed: $(head -c 300 "$T/neigh.json" | tr '\n' ' ')"
    return 1
  fi
  got=$(sj neigh "$T/neigh.json" "$1") || { SEEN="$got"; return 1; }
  SEEN="'$got'"
  [[ "$got" =~ ^$2\ $3\ (reachable|stale|delay|probe)$ ]]
}
require_alive "neighbour tables"
expect "5 A's neighbour 10.0.1.1 (ip neigh)" "lladdr $PORT_A_MAC, REACHABLE/STALE/DELAY/PROBE" \
  host_neigh_ok "$NS_A" "$IF_A" 10.0.1.1 $PORT_A_MAC
expect "5 A's neighbour 2001:db8:1::1 (ip -6 neigh)" "lladdr $PORT_A_MAC, REACHABLE/STALE/DELAY/PROBE" \
  host_neigh_ok "$NS_A" "$IF_A" 2001:db8:1::1 $PORT_A_MAC
for h in "10.0.1.2 pa $HOST_A_MAC" "10.0.2.2 pb $HOST_B_MAC" "10.0.3.2 pc $HOST_C_MAC" \
  "2001:db8:1::2 pa $HOST_A_MAC" "2001:db8:2::2 pb $HOST_B_MAC" "2001:db8:3::2 pc $HOST_C_MAC"; do
  read -r hip hport hmac <<<"$h"
  expect "5 the router's neighbour $hip (neighbours --json)" "'$hport $hmac reachable|stale|delay|probe'" \
    sw_neigh_ok "$hip" "$hport" "$hmac"
done
if [ "$ROUTER" = roceswitch ]; then
  valid_ok() { SEEN=$(sj valid "$T/neigh.json") && [[ "$SEEN" != "0 entries" ]]; }
  expect "5 roceswitch-ctl neighbours --json: a list of {port, ip, mac, state}" \
    "every entry has the four keys and a state among incomplete/reachable/stale/delay/probe/failed" valid_ok
  ctl neighbours
  table_ok() { SEEN="exit $CTL_RC, $(wc -l <"$T/ctl.out") lines"; [ "$CTL_RC" -eq 0 ] && grep -q '10\.0\.1\.2' "$T/ctl.out"; }
  expect "5 roceswitch-ctl neighbours (table)" "exit 0, a line for 10.0.1.2" table_ok
  indent "$T/ctl.out"
fi

# --- 6: a route via a next hop resolved by ARP ----------------------------------------------
require_alive "via route"
expect "6 ping A -> 10.9.0.1 (B's lo, route 10.9.0.0/16 via 10.0.2.2)" "3 of 3 answered, reply TTL 63" \
  ping_ok "$NS_A" 10.9.0.1 63

# --- 7: a neighbour that stops answering ---------------------------------------------------
# B stops answering ARP (its interface NOARP) and ND for 2001:db8:2::2 (the address removed),
# while A keeps sending to 10.9.0.1 (via 10.0.2.2) and 2001:db8:2::2. The switch's entries must
# go through stale/delay/probe to failed (or be removed), and the packets then be dropped.
require_alive "neighbour failure"
in_ns "$NS_B" ip link set "$IF_B" arp off
in_ns "$NS_B" ip -6 addr del 2001:db8:2::2/64 dev "$IF_B"
T0=$(now_ms)
PING_S=$(((FAIL_BOUND_MS + 5000) / 1000))
ip netns exec "$NS_A" ping -n -q -i 0.2 -w "$PING_S" 10.9.0.1 >"$T/fail-ping4.txt" 2>&1 &
BG_PIDS+=($!)
ip netns exec "$NS_A" ping -n -q -i 0.2 -w "$PING_S" 2001:db8:2::2 >"$T/fail-ping6.txt" 2>&1 &
BG_PIDS+=($!)
H4="" H6="" L4="" L6="" D4="" D6="" SEEN4="" SEEN6=""
# watch_until DEADLINE_MS: poll the router's table, note each state change of the two entries.
watch_until() {
  local s4 s6 t
  while [ "$(now_ms)" -lt "$1" ] && { [ -z "$D4" ] || [ -z "$D6" ]; }; do
    t=$(($(now_ms) - T0))
    if neigh_snapshot "$T/nf.json"; then
      s4=$(sj neigh "$T/nf.json" 10.0.2.2 | awk '{ print ($1 == "absent" ? "absent" : $NF) }') || s4=error
      s6=$(sj neigh "$T/nf.json" 2001:db8:2::2 | awk '{ print ($1 == "absent" ? "absent" : $NF) }') || s6=error
    else
      s4=ctl-error s6=ctl-error
    fi
    if [ "$s4" != "$L4" ]; then H4+=" $s4@$(fmt_ms $t)s"; L4=$s4; fi
    if [ "$s6" != "$L6" ]; then H6+=" $s6@$(fmt_ms $t)s"; L6=$s6; fi
    # Gone counts only for an entry seen before.
    [[ "$s4" =~ ^(reachable|stale|delay|probe|incomplete)$ ]] && SEEN4=1
    [[ "$s6" =~ ^(reachable|stale|delay|probe|incomplete)$ ]] && SEEN6=1
    if [ -z "$D4" ] && { [ "$s4" = failed ] || { [ "$s4" = absent ] && [ -n "$SEEN4" ]; }; }; then D4=$t; fi
    if [ -z "$D6" ] && { [ "$s6" = failed ] || { [ "$s6" = absent ] && [ -n "$SEEN6" ]; }; }; then D6=$t; fi
    switch_alive || return 0
    sleep 0.2
  done
}
watch_until $((T0 + FAIL_BOUND_MS))
# Traffic for 2 s more after the failure, for the drop counter; then quiet.
if [ -n "$D4" ] && [ -n "$D6" ]; then sleep 2; fi
for p in "${BG_PIDS[@]}"; do kill -INT "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
BG_PIDS=()
# Under traffic a failed entry may start resolving again (Linux: failed -> incomplete); without
# traffic the multicast probes end in failed.
if [ -z "$D4" ] || [ -z "$D6" ]; then
  watch_until $((T0 + FAIL_BOUND_MS + MCAST_PROBES * RETRANS_MS + 3000))
fi
log "A's pings while B was silent: $(grep -h 'transmitted' "$T/fail-ping4.txt" "$T/fail-ping6.txt" | tr '\n' ';')"
failed_ok() { SEEN="states${1:- (none seen)}"; [ -n "$2" ]; }
FAIL_WANT="failed (or removed) within $(fmt_ms $FAIL_BOUND_MS) s under traffic, or $(fmt_ms $((MCAST_PROBES * RETRANS_MS + 3000))) s after it stops"
expect "7 the router's neighbour 10.0.2.2 after B stops answering ARP" "$FAIL_WANT" failed_ok "$H4" "$D4"
expect "7 the router's neighbour 2001:db8:2::2 after B drops that address (no NA)" "$FAIL_WANT" failed_ok "$H6" "$D6"

# 7b: B answers again; the router resolves it anew and forwards.
require_alive "neighbour recovery"
in_ns "$NS_B" ip link set "$IF_B" arp on
in_ns "$NS_B" ip -6 addr add 2001:db8:2::2/64 dev "$IF_B" nodad
# recover_ok DST: an echo answered within 15 s.
recover_ok() {
  local t0 i
  t0=$(now_ms)
  for ((i = 0; i < 15; i++)); do
    if timeout 10 ip netns exec "$NS_A" ping -n -c 1 -W 1 "$1" >/dev/null 2>&1; then
      SEEN="answered after $(fmt_ms $(($(now_ms) - t0))) s"
      return 0
    fi
  done
  SEEN="no answer in 15 tries over $(fmt_ms $(($(now_ms) - t0))) s"
  return 1
}
expect "7b ping A -> 10.9.0.1 after B answers ARP again" "an answer within 15 s" recover_ok 10.9.0.1
expect "7b ping A -> 2001:db8:2::2 after B has the address again" "an answer within 15 s" recover_ok 2001:db8:2::2

# --- 8: an address given and taken back at run time ---------------------------------------
# pc gains 10.0.7.1/24 through the control socket (the kernel reference: sc, by ip addr), C a
# second address on that subnet; C's pings to 10.0.7.1 are answered, until pc's addresses are
# set back to 10.0.3.1/24 alone.
require_alive "an address at run time"
# pc_ipv4 ADDRS HAS: pc's IPv4 addresses become ADDRS; HAS 1: the router then has 10.0.7.1 (its
# routes 10.0.7.0/24 to connected:pc:10.0.7.0/24 and 10.0.7.1/32 to local), 0: none of them.
pc_ipv4() {
  local got want
  if [ "$ROUTER" = kernel ]; then
    in_ns "$NS_SW" ip addr "$([ "$2" = 1 ] && echo add || echo del)" 10.0.7.1/24 dev "$SW_C"
    got=$(in_ns "$NS_SW" ip -4 -o addr show dev "$SW_C" | awk '{ print $4 }' | paste -sd ' ' -)
    SEEN="$SW_C's addresses: $got"
    [ "$([[ " $got " == *" 10.0.7.1/24 "* ]] && echo 1 || echo 0)" = "$2" ]
    return
  fi
  ctl port set pc --ipv4 "$1"
  [ "$CTL_RC" -eq 0 ] || { SEEN="port set pc --ipv4 $1: exit $CTL_RC: $(tr '\n' ' ' <"$T/ctl.out")"; return 1; }
  ctl route list 10.0.7.0/24 --json
  got=$(json_get "$T/ctl.out" "' '.join('%s %s' % (r['prefix'], r.get('group', '-')) for r in j['routes']) or 'none'") ||
    got="route list: exit $CTL_RC: $(tr '\n' ' ' <"$T/ctl.out")"
  want=$([ "$2" = 1 ] && echo "10.0.7.0/24 connected:pc:10.0.7.0/24 10.0.7.1/32 local" || echo none)
  SEEN="routes in 10.0.7.0/24: $got"
  [ "$got" = "$want" ]
}
# ping2 NS DST ANSWERED: `ping -c 2 -W 1 DST` from NS; ANSWERED of the 2 echoes answered.
ping2() {
  local out="$T/ping2.txt" rx
  set +e
  timeout 20 ip netns exec "$1" ping -n -c 2 -W 1 "$2" >"$out" 2>&1
  set -e
  rx=$(sed -n 's/.*transmitted, \([0-9]*\) received.*/\1/p' "$out")
  SEEN="${rx:-0} of 2 answered"
  [ "${rx:-0}" = "$3" ] && return 0
  indent "$out"
  return 1
}
expect "8 roceswitch-ctl port set pc --ipv4 10.0.3.1/24,10.0.7.1/24" "the routes of 10.0.7.1/24" \
  pc_ipv4 10.0.3.1/24,10.0.7.1/24 1
in_ns "$NS_C" ip addr add 10.0.7.2/24 dev "$IF_C"
expect "8 ping -c 2 -W 1 10.0.7.1 (from C's 10.0.7.2)" "2 of 2 answered" ping2 "$NS_C" 10.0.7.1 2
expect "8 roceswitch-ctl port set pc --ipv4 10.0.3.1/24" "none of 10.0.7.1/24's routes" pc_ipv4 10.0.3.1/24 0
expect "8 ping -c 2 -W 1 10.0.7.1 (from C's 10.0.7.2), the address gone" "0 of 2 answered" ping2 "$NS_C" 10.0.7.1 0
in_ns "$NS_C" ip addr del 10.0.7.2/24 dev "$IF_C"

# --- 9: stop and read the books -------------------------------------------------------------
if [ "$ROUTER" = kernel ]; then
  note_skip "9 stop, stats and the neighbor_failed drop count: reference mode (no roceswitch)"
  finish
  exit 0
fi
stop_switch 9
if [ -s "$S" ]; then
  stats_neigh_ok() {
    local v a
    v=$(sj valid "$S" stats) || { SEEN="neighbours: $v"; return 1; }
    a=$(sj neigh "$S" 10.0.1.2 stats) || { SEEN="$a"; return 1; }
    SEEN="neighbours: $v; 10.0.1.2: '$a'"
    [[ "$a" =~ ^pa\ $HOST_A_MAC\ (reachable|stale|delay|probe)$ ]]
  }
  expect "9 stats: top-level \"neighbours\"" "a list of {port, ip, mac, state}, 10.0.1.2 on pa with $HOST_A_MAC" stats_neigh_ok
  nf_ok() {
    local got
    got=$(sj sum "$S" neighbor_failed)
    SEEN="total ${got%% *} (${got#* })"
    [ "${got%% *}" -gt 0 ] 2>/dev/null
  }
  expect "9 stats: packets to the failed neighbour dropped as neighbor_failed" "a non-zero neighbor_failed count" nf_ok
fi
finish
