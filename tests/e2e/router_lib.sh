# shellcheck shell=bash
# The rig of router_interfaces_test.sh (sourced, not run): three Linux hosts in network
# namespaces, each on a veth pair to a fourth namespace where the router runs (roceswitch through
# net_af_packet, or the namespace's own kernel when ROUTER=kernel), and what the checks use to
# drive it: names, MACs and NUD timers, building the topology, the switch's configuration and
# the router's neighbour table (neigh_snapshot; the kernel's converted by kernel_neigh).
# What any switch test needs (scratch directory and cleanup, skip, expect, starting and stopping
# the switch, ctl, the reader of the switch's JSON, sj) is switch_lib.sh.
# The sourcing script has sourced ../integration/common.sh and switch_lib.sh, and set ROCESWITCH,
# CTL and ROUTER (roceswitch or kernel), before sourcing this.

NS_A="rs-ri-a-$ID" NS_B="rs-ri-b-$ID" NS_C="rs-ri-c-$ID" NS_SW="rs-ri-sw-$ID"
IF_A="ra$ID" IF_B="rb$ID" IF_C="rc$ID" SW_A="sa$ID" SW_B="sb$ID" SW_C="sc$ID"  # <= 15 characters
HOST_A_MAC=02:00:00:00:aa:01 HOST_B_MAC=02:00:00:00:aa:02 HOST_C_MAC=02:00:00:00:aa:03
PORT_A_MAC=02:00:00:00:00:01 PORT_B_MAC=02:00:00:00:00:02 PORT_C_MAC=02:00:00:00:00:03
# The switch's neighbour timers (Linux's NUD names), short so that a failure shows in seconds.
BASE_REACHABLE_MS=2000 DELAY_FIRST_PROBE_MS=1000 RETRANS_MS=200 UCAST_PROBES=3 MCAST_PROBES=3 HOLD_PACKETS=3

# shellcheck disable=SC2034  # RIG_NETNS and RIG_LINKS: for switch_lib.sh's cleanup
RIG_NETNS=("$NS_A" "$NS_B" "$NS_C" "$NS_SW")
# shellcheck disable=SC2034
RIG_LINKS=("$IF_A" "$IF_B" "$IF_C" "$SW_A" "$SW_B" "$SW_C")
make_scratch router

secs() { awk -v m="$1" 'BEGIN { printf "%g", m / 1000 }'; }  # milliseconds -> seconds for YAML
# The router is alive: roceswitch's process, or always in the kernel reference mode.
switch_alive() { [ "$ROUTER" = kernel ] || kill -0 "$SW_PID" 2>/dev/null; }

# kernel_neigh FILE PORTS: `ip -j neigh` of the switch namespace in FILE as the switch's table,
# [{port, ip, mac, state}], the interfaces named by PORTS (JSON: {interface: port}).
kernel_neigh() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
raw, ports = json.load(open(sys.argv[1])), json.loads(sys.argv[2])
print(json.dumps([{'port': ports.get(e.get('dev'), e.get('dev')), 'ip': e['dst'], 'mac': e.get('lladdr'),
                   'state': (e.get('state') or ['none'])[0].lower()} for e in raw]))
PYEOF
}

# --- topology -------------------------------------------------------------------------------
# make_topology: the four namespaces, the three veth pairs and the hosts' addresses and routes
# (the switch namespace's kernel as a router too when ROUTER=kernel). Skips (exit 77) where
# namespaces or veths cannot be made.
make_topology() {
  local ns n p ifc fam
  ip netns add "$NS_SW" 2>"$T/err" || skip "cannot create network namespaces: $(cat "$T/err")"
  ip netns add "$NS_A"
  ip netns add "$NS_B"
  ip netns add "$NS_C"
  for ns in "$NS_A" "$NS_B" "$NS_C"; do dual_stack_host "$ns"; done
  in_ns "$NS_SW" ip link set lo up
  if [ "$ROUTER" = kernel ]; then
    in_ns "$NS_SW" sysctl -qw net.ipv4.ip_forward=1 net.ipv6.conf.all.forwarding=1 \
      net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
      net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
      net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
  else
    # The switch's side of the veths belongs to roceswitch: its kernel stays silent (no IPv6, no
    # addresses, so no NDP, MLD or ARP answers of its own).
    in_ns "$NS_SW" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
  fi
  ip link add "$IF_A" netns "$NS_A" type veth peer name "$SW_A" netns "$NS_SW" 2>"$T/err" ||
    skip "cannot create veth pairs: $(cat "$T/err")"
  ip link add "$IF_B" netns "$NS_B" type veth peer name "$SW_B" netns "$NS_SW"
  ip link add "$IF_C" netns "$NS_C" type veth peer name "$SW_C" netns "$NS_SW"

  n=0
  for p in "$SW_A:$PORT_A_MAC" "$SW_B:$PORT_B_MAC" "$SW_C:$PORT_C_MAC"; do
    n=$((n + 1))
    ifc="${p%%:*}"
    if [ "$ROUTER" = kernel ]; then
      in_ns "$NS_SW" ip addr add "10.0.$n.1/24" dev "$ifc"
      in_ns "$NS_SW" ip -6 addr add "2001:db8:$n::1/64" dev "$ifc" nodad
      # The same NUD timers as the switch's (per interface: a namespace has no neigh.default).
      for fam in ipv4 ipv6; do
        in_ns "$NS_SW" sysctl -qw "net.$fam.neigh.$ifc.base_reachable_time_ms=$BASE_REACHABLE_MS" \
          "net.$fam.neigh.$ifc.delay_first_probe_time=$((DELAY_FIRST_PROBE_MS / 1000))" \
          "net.$fam.neigh.$ifc.retrans_time_ms=$RETRANS_MS" "net.$fam.neigh.$ifc.ucast_solicit=$UCAST_PROBES" \
          "net.$fam.neigh.$ifc.mcast_solicit=$MCAST_PROBES"
      done
    else
      in_ns "$NS_SW" sysctl -qw "net.ipv6.conf.$ifc.disable_ipv6=1"
    fi
    in_ns "$NS_SW" ip link set "$ifc" address "${p#*:}"
    # veth offloads checksums by default: a packet read off the wire by af_packet would carry only
    # a partial checksum, and the other host's kernel would drop it. Real NICs fill it in.
    in_ns "$NS_SW" ethtool -K "$ifc" tx off >/dev/null
    in_ns "$NS_SW" ip link set "$ifc" up
  done

  setup_host "$NS_A" "$IF_A" $HOST_A_MAC 1
  setup_host "$NS_B" "$IF_B" $HOST_B_MAC 2
  setup_host "$NS_C" "$IF_C" $HOST_C_MAC 3
  in_ns "$NS_B" ip addr add 10.9.0.1/32 dev lo
  [ "$ROUTER" = kernel ] && in_ns "$NS_SW" ip route add 10.9.0.0/16 via 10.0.2.2
  log "namespaces $NS_A, $NS_B, $NS_C, $NS_SW and veths $IF_A<->$SW_A, $IF_B<->$SW_B, $IF_C<->$SW_C are up"
}

# setup_host NS IFC MAC N: host N's interface up with 10.0.N.2/24 and 2001:db8:N::2/64, its
# default routes via the switch's port addresses.
setup_host() {
  local ns="$1" ifc="$2" mac="$3" n="$4"
  in_ns "$ns" ip link set "$ifc" address "$mac"
  in_ns "$ns" ethtool -K "$ifc" tx off >/dev/null
  in_ns "$ns" ip addr add "10.0.$n.2/24" dev "$ifc"
  in_ns "$ns" ip -6 addr add "2001:db8:$n::2/64" dev "$ifc" nodad
  in_ns "$ns" ip link set "$ifc" up
  in_ns "$ns" ip route add default via "10.0.$n.1"
  in_ns "$ns" ip -6 route add default via "2001:db8:$n::1" dev "$ifc"
}

# write_switch_config: the switch's configuration, $T/switch.yaml.
write_switch_config() {
  cat >"$T/switch.yaml" <<EOF
switch: {workers: 1, seed: 7}
ports:
  - name: pa
    kind: ethdev
    devargs: "net_af_packet0,iface=$SW_A"
    mac: "$PORT_A_MAC"
    ipv4: 10.0.1.1/24
    ipv6: "2001:db8:1::1/64"
    icmp_unreachable: true
  - name: pb
    kind: ethdev
    devargs: "net_af_packet1,iface=$SW_B"
    mac: "$PORT_B_MAC"
    ipv4: [10.0.2.1/24]
    ipv6: ["2001:db8:2::1/64"]
  - name: pc
    kind: ethdev
    devargs: "net_af_packet2,iface=$SW_C"
    mac: "$PORT_C_MAC"
    ipv4: 10.0.3.1/24
    ipv6: "2001:db8:3::1/64"
routes:
  - {prefix: 10.9.0.0/16, via: 10.0.2.2}
neighbours:
  base_reachable_s: $(secs $BASE_REACHABLE_MS)
  delay_first_probe_s: $(secs $DELAY_FIRST_PROBE_MS)
  retrans_s: $(secs $RETRANS_MS)
  ucast_probes: $UCAST_PROBES
  mcast_probes: $MCAST_PROBES
  hold_packets: $HOLD_PACKETS
copp: {arp: 600, ip2me: 6000, icmp_error: 600, neigh_miss: 600}
EOF
}

# --- the router -----------------------------------------------------------------------------
# The router's neighbour table, as {port, ip, mac, state} objects, in $1.
KPORTS="{\"$SW_A\": \"pa\", \"$SW_B\": \"pb\", \"$SW_C\": \"pc\"}"
neigh_snapshot() {
  if [ "$ROUTER" = kernel ]; then
    ip netns exec "$NS_SW" ip -j neigh show >"$T/kneigh.json" && kernel_neigh "$T/kneigh.json" "$KPORTS" >"$1"
    return
  fi
  ctl neighbours --json
  cp "$T/ctl.out" "$1"
  [ "$CTL_RC" -eq 0 ]
}
