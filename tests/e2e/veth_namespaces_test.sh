#!/bin/bash
# End to end through the Linux kernel: two hosts in their own network namespaces talk through
# roceswitch, which owns the other ends of their veth pairs through DPDK's net_af_packet PMD and
# runs in a third namespace. The hosts' kernels build the packets (ICMP echo, UDP) and judge the
# answers, so this checks the switch against real stacks: ping both ways with the TTL of the
# replies decremented once (64 -> 63), and a UDP stream that arrives complete and intact.
#
#   ns A: ra (10.0.1.2/24, gw 10.0.1.1) ==veth== sa [ns SW: roceswitch port pa]
#   ns B: rb (10.0.2.2/24, gw 10.0.2.1) ==veth== sb [ns SW: roceswitch port pb]
#
# The switch does not answer ARP, so each host has a permanent neighbour entry for its gateway
# with the switch port's MAC, and the switch's routes carry the hosts' MACs as next hops.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
require_binary
NETPROBE="$(cd "$(dirname "$0")" && pwd)/netprobe.py"

skip() { log "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, raw sockets)"
command -v ip >/dev/null || skip "iproute2 'ip' not installed"
command -v ethtool >/dev/null || skip "ethtool not installed (needed to turn off veth checksum offload)"

ID=$$
NS_A="rs-e2e-a-$ID" NS_B="rs-e2e-b-$ID" NS_SW="rs-e2e-sw-$ID"
IF_A="ra$ID" IF_B="rb$ID" SW_A="sa$ID" SW_B="sb$ID"   # <= 15 characters
HOST_A_MAC=02:00:00:00:aa:01 HOST_B_MAC=02:00:00:00:aa:02
PORT_A_MAC=02:00:00:00:00:01 PORT_B_MAC=02:00:00:00:00:02
UDP_N=2000 UDP_SIZE=1000

T="$(mktemp -d -t rs-e2e-veth.XXXXXX)"
SW_PID="" RX_PID=""
cleanup() {
  # Only what this script started and created, by PID and by its unique names.
  if [ -n "$RX_PID" ]; then kill -KILL "$RX_PID" 2>/dev/null || true; fi
  if [ -n "$SW_PID" ]; then
    kill -KILL "$SW_PID" 2>/dev/null || true
    wait "$SW_PID" 2>/dev/null || true
  fi
  for ns in "$NS_A" "$NS_B" "$NS_SW"; do ip netns del "$ns" 2>/dev/null || true; done
  # A veth left in the root namespace by a half-finished setup.
  for i in "$IF_A" "$IF_B" "$SW_A" "$SW_B"; do ip link del "$i" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT

in_ns() { local ns="$1"; shift; ip netns exec "$ns" "$@"; }

# --- topology -------------------------------------------------------------------------------
ip netns add "$NS_SW" 2>"$T/err" || skip "cannot create network namespaces: $(cat "$T/err")"
ip netns add "$NS_A"
ip netns add "$NS_B"
for ns in "$NS_A" "$NS_B" "$NS_SW"; do
  # No IPv6 (no NDP/MLD noise through the switch); a known TTL to compare against.
  in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  in_ns "$ns" sysctl -qw net.ipv4.ip_default_ttl=64
  in_ns "$ns" ip link set lo up
done
ip link add "$IF_A" netns "$NS_A" type veth peer name "$SW_A" netns "$NS_SW" 2>"$T/err" ||
  skip "cannot create veth pairs: $(cat "$T/err")"
ip link add "$IF_B" netns "$NS_B" type veth peer name "$SW_B" netns "$NS_SW"

setup_host() {
  local ns="$1" ifc="$2" mac="$3" ip="$4" gw="$5" gw_mac="$6"
  in_ns "$ns" ip link set "$ifc" address "$mac"
  # veth offloads checksums by default: a UDP packet read off the wire by af_packet would carry
  # only a partial checksum, and the other host's kernel would drop it. Real NICs fill it in.
  in_ns "$ns" ethtool -K "$ifc" tx off >/dev/null
  in_ns "$ns" ip addr add "$ip/24" dev "$ifc"
  in_ns "$ns" ip link set "$ifc" up
  in_ns "$ns" ip route add default via "$gw"
  in_ns "$ns" ip neigh replace "$gw" lladdr "$gw_mac" dev "$ifc" nud permanent
}
setup_host "$NS_A" "$IF_A" $HOST_A_MAC 10.0.1.2 10.0.1.1 $PORT_A_MAC
setup_host "$NS_B" "$IF_B" $HOST_B_MAC 10.0.2.2 10.0.2.1 $PORT_B_MAC
for p in "$SW_A:$PORT_A_MAC" "$SW_B:$PORT_B_MAC"; do
  in_ns "$NS_SW" ip link set "${p%%:*}" address "${p#*:}"
  in_ns "$NS_SW" ethtool -K "${p%%:*}" tx off >/dev/null
  in_ns "$NS_SW" ip link set "${p%%:*}" up
done
log "namespaces $NS_A, $NS_B, $NS_SW and veths $IF_A<->$SW_A, $IF_B<->$SW_B are up"

cat >"$T/switch.yaml" <<EOF
switch: {workers: 1, seed: 7}
ports:
  - {name: pa, kind: ethdev, mac: "$PORT_A_MAC", devargs: "net_af_packet0,iface=$SW_A"}
  - {name: pb, kind: ethdev, mac: "$PORT_B_MAC", devargs: "net_af_packet1,iface=$SW_B"}
routes:
  - {prefix: 10.0.1.0/24, port: pa, mac: "$HOST_A_MAC"}
  - {prefix: 10.0.2.0/24, port: pb, mac: "$HOST_B_MAC"}
EOF

# --- the switch -----------------------------------------------------------------------------
# `ip netns exec` execs the switch, so $! is the switch itself (a function or subshell here
# would be a bash in between that ignores SIGINT, as background jobs do).
# shellcheck disable=SC2046
ip netns exec "$NS_SW" "$ROCESWITCH" $(eal_args sw) -- --config "$T/switch.yaml" --duration 0 \
  --stats-json "$T/stats.json" --quiet >"$T/switch.log" 2>&1 &
SW_PID=$!
for ((i = 0; i < 600; i++)); do
  grep -qs 'running until SIGINT' "$T/switch.log" && break
  kill -0 "$SW_PID" 2>/dev/null || { sed 's/^/    | /' "$T/switch.log"; die "roceswitch exited during start-up"; }
  sleep 0.1
done
grep -q 'running until SIGINT' "$T/switch.log" || { sed 's/^/    | /' "$T/switch.log"; die "roceswitch did not start within 60 s"; }
log "roceswitch is running in $NS_SW (pid $SW_PID)"

# --- traffic --------------------------------------------------------------------------------
ping_check() {
  local ns="$1" dst="$2" out="$T/ping-$1.txt"
  in_ns "$ns" "$PY" "$NETPROBE" ping "$dst" 5 >"$out" 2>&1 || { sed 's/^/    | /' "$out"; return 1; }
  sed 's/^/    | /' "$out"
  # Replies are built with TTL 64 by the far host's kernel and cross the switch once.
  json_true <(tail -n 1 "$out") "j['received'] == 5 and j['ttls'] == [63] * 5"
}
check "ping A -> B: 5 of 5 answered, reply TTL 63 (decremented once)" ping_check "$NS_A" 10.0.2.2
check "ping B -> A: 5 of 5 answered, reply TTL 63 (decremented once)" ping_check "$NS_B" 10.0.1.2

udp_check() {
  in_ns "$NS_B" "$PY" "$NETPROBE" udp-recv 10.0.2.2 5001 $UDP_N 30 "$T/udp.json" >"$T/udp-recv.txt" 2>&1 &
  RX_PID=$!
  for ((i = 0; i < 100; i++)); do [ -f "$T/udp.json.ready" ] && break; sleep 0.1; done
  [ -f "$T/udp.json.ready" ] || { echo "    receiver did not start" >&2; return 1; }
  in_ns "$NS_A" "$PY" "$NETPROBE" udp-send 10.0.2.2 5001 $UDP_N $UDP_SIZE | sed 's/^/    | /'
  local rc=0
  wait "$RX_PID" || rc=$?
  RX_PID=""
  sed 's/^/    | /' "$T/udp-recv.txt"
  [ $rc -eq 0 ] && json_true "$T/udp.json" "j['received'] == $UDP_N and j['corrupt'] == 0 and j['duplicates'] == 0"
}
check "UDP A -> B: $UDP_N datagrams of $UDP_SIZE bytes arrive complete and intact" udp_check

# --- stop and read the books ----------------------------------------------------------------
kill -INT "$SW_PID"
for ((i = 0; i < 100; i++)); do kill -0 "$SW_PID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$SW_PID" 2>/dev/null; then
  sed 's/^/    | /' "$T/switch.log"
  die "roceswitch still running 10 s after SIGINT"
fi
set +e
wait "$SW_PID"
RC=$?
set -e
SW_PID=""
sed 's/^/    | /' "$T/switch.log"
check "roceswitch exits 0 after SIGINT" eq "exit code" "$RC" 0
[ -s "$T/stats.json" ] || die "no stats JSON written"
S="$T/stats.json"
log "drops: $(json_get "$S" "j['drops']")"
check "stats: totals.balanced" json_true "$S" "j['totals']['balanced'] is True"
# What the hosts sent through the switch: A sent 5 echo requests, 5 echo replies and the UDP
# stream; B sent 5 requests and 5 replies. Nothing else, so the counts are exact.
check "stats: pb transmitted exactly A's traffic (5 + 5 + $UDP_N)" \
  json_true "$S" "j['ports'][1]['tx_packets'] == 10 + $UDP_N"
check "stats: pa transmitted exactly B's traffic (5 + 5)" json_true "$S" "j['ports'][0]['tx_packets'] == 10"
# Anything else that reached the switch may only be non-IP noise, dropped under a named reason.
check "stats: no drops other than non-IP noise" json_true "$S" "set(j['drops']) <= {'non_ip'}"
finish
