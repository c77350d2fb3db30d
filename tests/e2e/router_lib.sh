# shellcheck shell=bash
# The rig of router_interfaces_test.sh (sourced, not run): three Linux hosts in network
# namespaces, each on a veth pair to a fourth namespace where the router runs (roceswitch through
# net_af_packet, or the namespace's own kernel when ROUTER=kernel), and what the checks use to
# drive it: names, MACs and NUD timers, the JSON reader of neighbour tables and stats (nb),
# building the topology, the switch's configuration and its neighbour table (neigh_snapshot).
# What any switch test needs (scratch directory and cleanup, expect, starting and stopping the
# switch, ctl) is switch_lib.sh, sourced here.
# The sourcing script has sourced ../integration/common.sh and set ROCESWITCH, CTL, ROUTER
# (roceswitch or kernel) and skip() (exit 77 with a note) before sourcing this.

# shellcheck source=switch_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/switch_lib.sh"

NS_A="rs-ri-a-$ID" NS_B="rs-ri-b-$ID" NS_C="rs-ri-c-$ID" NS_SW="rs-ri-sw-$ID"
IF_A="ra$ID" IF_B="rb$ID" IF_C="rc$ID" SW_A="sa$ID" SW_B="sb$ID" SW_C="sc$ID"  # <= 15 characters
HOST_A_MAC=02:00:00:00:aa:01 HOST_B_MAC=02:00:00:00:aa:02 HOST_C_MAC=02:00:00:00:aa:03
PORT_A_MAC=02:00:00:00:00:01 PORT_B_MAC=02:00:00:00:00:02 PORT_C_MAC=02:00:00:00:00:03
# The switch's neighbour timers (Linux's NUD names), short so that a failure shows in seconds.
BASE_REACHABLE_MS=2000 DELAY_FIRST_PROBE_MS=1000 RETRANS_MS=200 UCAST_PROBES=3 MCAST_PROBES=3 HOLD_PACKETS=3

RIG_NETNS=("$NS_A" "$NS_B" "$NS_C" "$NS_SW")
RIG_LINKS=("$IF_A" "$IF_B" "$IF_C" "$SW_A" "$SW_B" "$SW_C")
make_scratch router

secs() { awk -v m="$1" 'BEGIN { printf "%g", m / 1000 }'; }  # milliseconds -> seconds for YAML
# The router is alive: roceswitch's process, or always in the kernel reference mode.
switch_alive() { [ "$ROUTER" = kernel ] || kill -0 "$SW_PID" 2>/dev/null; }

# nb MODE FILE ARGS...: JSON helpers (Debian's python, standard library) on the neighbour lists
# and the drop counters.
nb() {
  "$PY" - "$@" <<'PYEOF'
import ipaddress, json, sys

def entries(j):
    """A neighbour list: the list itself, or the list under a key of an object."""
    if isinstance(j, dict):
        for k in ('neighbours', 'neighbors', 'entries', 'result'):
            if k in j:
                return entries(j[k])
        return None
    return j if isinstance(j, list) else None

def walk(x, key, path='$'):
    if isinstance(x, dict):
        for k, v in x.items():
            if k == key and isinstance(v, (int, float)) and not isinstance(v, bool):
                yield path + '.' + k, v
            yield from walk(v, key, path + '.' + k)
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from walk(v, key, '%s[%d]' % (path, i))

mode = sys.argv[1]
if mode == 'kernel':  # `ip -j neigh` of the switch namespace -> [{port, ip, mac, state}]
    raw, ports = json.load(open(sys.argv[2])), json.loads(sys.argv[3])
    print(json.dumps([{'port': ports.get(e.get('dev'), e.get('dev')), 'ip': e['dst'], 'mac': e.get('lladdr'),
                       'state': (e.get('state') or ['none'])[0].lower()} for e in raw]))
    sys.exit(0)
try:
    j = json.load(open(sys.argv[2]))
except (OSError, ValueError) as e:
    print('unreadable JSON: %s' % e)
    sys.exit(3)
if mode == 'get':  # FILE IP [stats]: "port mac state" of the entry for IP, or "absent"
    if len(sys.argv) > 4:
        if not isinstance(j, dict) or 'neighbours' not in j:
            print('no top-level "neighbours"')
            sys.exit(3)
        j = j['neighbours']
    lst = entries(j)
    if lst is None:
        print('not a neighbour list: %s' % json.dumps(j)[:200])
        sys.exit(3)
    want = ipaddress.ip_address(sys.argv[3])
    for e in lst:
        try:
            if ipaddress.ip_address(str(e.get('ip')).split('%')[0]) == want:
                print(e.get('port'), str(e.get('mac') or '-').lower(), str(e.get('state')).lower())
                sys.exit(0)
        except (ValueError, AttributeError):
            continue
    print('absent')
elif mode == 'valid':  # FILE [stats]: every entry {port, ip, mac, state} with a known state
    if len(sys.argv) > 3:
        j = j.get('neighbours') if isinstance(j, dict) else None
    lst = entries(j)
    states = {'incomplete', 'reachable', 'stale', 'delay', 'probe', 'failed'}
    bad = [e for e in (lst or []) if not isinstance(e, dict) or not {'port', 'ip', 'mac', 'state'} <= set(e)
           or e['state'] not in states]
    if lst is None:
        print('no neighbour list: %s' % json.dumps(j)[:200])
        sys.exit(1)
    print('%d entries%s' % (len(lst), ', malformed: %s' % bad[:3] if bad else ''))
    sys.exit(0 if lst is not None and not bad else 1)
elif mode == 'sum':  # FILE KEY: the sum of every number under KEY anywhere, and where
    found = list(walk(j, sys.argv[3]))
    print(sum(v for _, v in found), ' '.join('%s=%s' % f for f in found) or 'nowhere')
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
  for ns in "$NS_A" "$NS_B" "$NS_C"; do
    # IPv6 on, its addresses usable at once (no DAD), no router solicitations (nobody sends RAs);
    # known TTL and hop limit; no ICMP rate limits (traceroute's parallel probes).
    in_ns "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
      net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
      net.ipv6.conf.all.router_solicitations=0 net.ipv6.conf.default.router_solicitations=0 \
      net.ipv6.conf.all.hop_limit=64 net.ipv6.conf.default.hop_limit=64 \
      net.ipv4.ip_default_ttl=64 net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
    in_ns "$ns" ip link set lo up
  done
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
    ip netns exec "$NS_SW" ip -j neigh show >"$T/kneigh.json" && nb kernel "$T/kneigh.json" "$KPORTS" >"$1"
    return
  fi
  ctl neighbours --json
  cp "$T/ctl.out" "$1"
  [ "$CTL_RC" -eq 0 ]
}
