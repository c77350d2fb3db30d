# shellcheck shell=bash
# What the e2e tests that run roceswitch in a network namespace share (sourced, not run):
# svi_test.sh, bridge_test.sh, nic_link_test.sh, router_interfaces_test.sh and its rig router_lib.sh.
# The preamble's requirements (require_switch, require_root, skip), the scratch directory and
# the EXIT trap that removes everything a test made, the PASS/FAIL plumbing (expect), time and
# format helpers, a dual-stack host namespace's settings (dual_stack_host), and the switch's life: launched in its namespace on $T/switch.yaml, started
# (start_ok), driven through its control socket (ctl), required alive, stopped by SIGINT and its
# stats read (stop_switch). Then checks from the hosts' side (ping_ok, trace_ok, host_neigh_ok)
# and the reader of the switch's JSON, its control socket's answers and its stats (sj). The
# topology, the configuration and the other checks are the test's own.
# The sourcing script has sourced ../integration/common.sh and set ROCESWITCH (and CTL, where it
# uses roceswitch-ctl), and sources this next, before its checks of what it needs: it then calls
# require_switch (or common.sh's require_binary) and require_root. It names its namespaces in
# RIG_NETNS and its veths in RIG_LINKS (for cleanup), then calls make_scratch, and puts the switch
# in the namespace NS_SW.

ID=$$            # in every namespace and interface name, and in the DPDK file prefix (eal_args)
SW_PID=""        # the switch's PID while it runs
BG_PIDS=()       # other background processes of the test, killed at exit
RIG_NETNS=()     # the test's network namespaces, deleted at exit
RIG_LINKS=()     # the test's veths, deleted at exit (in case a half-finished setup left one in the root namespace)

# skip WHY: the test cannot run here: say why and exit 77 (meson: SKIP).
skip() { log "SKIP: $*"; exit 77; }
# require_switch: the roceswitch binary ($ROCESWITCH) and roceswitch-ctl ($CTL) executable; the
# test fails (exit 1) if not. (A test without roceswitch-ctl calls common.sh's require_binary.)
require_switch() {
  require_binary
  [ -x "$CTL" ] || die "roceswitch-ctl '$CTL' is not executable"
}
# require_root [TOOL...]: root (network namespaces, raw sockets) and each TOOL on the PATH; the
# test is skipped (exit 77) if not.
require_root() {
  local tool
  [ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces, raw sockets)"
  for tool; do command -v "$tool" >/dev/null || skip "$tool not installed"; done
}

# make_scratch TAG: the scratch directory T (the switch's configuration, log, stats S and control
# socket SOCK), and the EXIT trap that removes it and everything above.
make_scratch() {
  T="$(mktemp -d -t "rs-e2e-$1.XXXXXX")"
  SOCK="$T/ctl.sock"
  S="$T/stats.json"
  trap cleanup EXIT
}
cleanup() {
  # Only what this script started and created, by PID and by its unique names.
  local p
  for p in "${BG_PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  if [ -n "$SW_PID" ]; then
    kill -KILL "$SW_PID" 2>/dev/null || true
    wait "$SW_PID" 2>/dev/null || true
  fi
  for p in "${RIG_NETNS[@]}"; do ip netns del "$p" 2>/dev/null || true; done
  for p in "${RIG_LINKS[@]}"; do ip link del "$p" 2>/dev/null || true; done
  # The switch's DPDK runtime directory: its file prefix is this script's (common.sh eal_args).
  rm -rf "/var/run/dpdk/rs-$TEST_NAME-sw-$ID" "$T"
}

in_ns() { local ns="$1"; shift; ip netns exec "$ns" "$@"; }
# dual_stack_host NS: a host's namespace with IPv6 on but quiet: addresses usable at once (no
# DAD), no router solicitations (nobody sends RAs); known TTL and hop limit (64); no ICMP rate
# limits (traceroute's parallel probes); lo up.
dual_stack_host() {
  in_ns "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0 \
    net.ipv6.conf.all.accept_dad=0 net.ipv6.conf.default.accept_dad=0 \
    net.ipv6.conf.all.router_solicitations=0 net.ipv6.conf.default.router_solicitations=0 \
    net.ipv6.conf.all.hop_limit=64 net.ipv6.conf.default.hop_limit=64 \
    net.ipv4.ip_default_ttl=64 net.ipv4.icmp_ratelimit=0 net.ipv6.icmp.ratelimit=0
  in_ns "$1" ip link set lo up
}
indent() { sed 's/^/    | /' "$@"; }
now_ms() { local t="${EPOCHREALTIME/[.,]/}"; echo $((t / 1000)); }
fmt_ms() { printf '%d.%d' $(($1 / 1000)) $(($1 % 1000 / 100)); }  # milliseconds -> "S.d"

# expect WHAT EXPECTED CMD...: one check. CMD leaves what it saw in SEEN; PASS or FAIL with both.
SEEN=""
expect() {
  local what="$1" want="$2" verdict=PASS
  shift 2
  SEEN="(nothing)" CHECKS=$((CHECKS + 1))
  "$@" || { verdict=FAIL; FAILURES=$((FAILURES + 1)); }
  log "$verdict $what: expected $want; seen $SEEN"
}
note_skip() { log "SKIP $*"; }

# --- the switch -----------------------------------------------------------------------------
# ctl ARGS...: roceswitch-ctl on the switch's socket; output in $T/ctl.out (stderr included), exit code in CTL_RC.
ctl() {
  set +e
  timeout 20 "$CTL" --socket "$SOCK" --timeout 5 "$@" >"$T/ctl.out" 2>&1
  CTL_RC=$?
  set -e
}

# switch_alive: the switch is running (router_lib.sh redefines it for its kernel reference mode).
switch_alive() { kill -0 "$SW_PID" 2>/dev/null; }
# require_alive WHAT: a switch that died leaves nothing to check: say so, show why, and stop.
require_alive() {
  switch_alive && return 0
  CHECKS=$((CHECKS + 1)) FAILURES=$((FAILURES + 1))
  log "FAIL roceswitch is running before: $1: expected the process $SW_PID alive; seen it gone"
  indent "$T/switch.log" | tail -n 40
  SW_PID=""
  finish
}

# launch_switch: roceswitch in NS_SW on $T/switch.yaml, in the background; its PID in SW_PID.
# Not to be called in a subshell or a pipeline: SW_PID must reach the caller.
launch_switch() {
  log "switch configuration:"
  indent "$T/switch.yaml"
  # `ip netns exec` execs the switch, so $! is the switch itself (a function or subshell here
  # would be a bash in between that ignores SIGINT, as background jobs do).
  # shellcheck disable=SC2046
  ip netns exec "$NS_SW" "$ROCESWITCH" $(eal_args sw) -- --config "$T/switch.yaml" --duration 0 \
    --stats-json "$S" --control-socket "$SOCK" --quiet >"$T/switch.log" 2>&1 &
  SW_PID=$!
}
# start_ok: the switch says it runs and its control socket answers, within 60 s.
start_ok() {
  local i
  for ((i = 0; i < 600; i++)); do
    if grep -qs 'running until SIGINT' "$T/switch.log" && [ -S "$SOCK" ]; then
      ctl state hash
      [ "$CTL_RC" -eq 0 ] && { SEEN="running, control socket answers after $(fmt_ms $((i * 100))) s"; return 0; }
    fi
    if ! kill -0 "$SW_PID" 2>/dev/null; then
      set +e; wait "$SW_PID"; SEEN="exited with code $? during start-up"; set -e
      SW_PID=""
      return 1
    fi
    sleep 0.1
  done
  SEEN="no 'running until SIGINT' and a control socket within 60 s"
  return 1
}
# start_switch WHAT: launch the switch and check (WHAT) that it starts; the test ends if not.
start_switch() {
  launch_switch
  expect "$1" "running, its control socket answering, within 60 s" start_ok
  if [ "$FAILURES" -ne 0 ]; then
    indent "$T/switch.log" | tail -n 40
    finish
  fi
}

# stop_switch N: SIGINT to the switch; checks N: it exits 0 within 15 s, and its stats JSON ($S)
# is written with the books balanced. The test's own stats checks follow where [ -s "$S" ].
stop_switch() {
  local n="$1" i
  require_alive "SIGINT"
  kill -INT "$SW_PID"
  for ((i = 0; i < 150; i++)); do kill -0 "$SW_PID" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$SW_PID" 2>/dev/null; then
    RC="still running 15 s after SIGINT"
    kill -KILL "$SW_PID" 2>/dev/null || true
    wait "$SW_PID" 2>/dev/null || true
  else
    set +e
    wait "$SW_PID"
    RC=$?
    set -e
  fi
  SW_PID=""
  indent "$T/switch.log" | tail -n 40
  expect "$n roceswitch exits after SIGINT" "exit code 0 within 15 s" rc_ok
  if [ -s "$S" ]; then
    log "stats drops: $(json_get "$S" "j.get('drops')")"
    expect "$n stats: the books balance" "totals.balanced true" balanced_ok
  else
    expect "$n stats JSON written at exit" "a non-empty $S" no_stats
  fi
}
rc_ok() { SEEN="$RC"; [ "$RC" = 0 ]; }
balanced_ok() { SEEN="totals $(json_get "$S" "json.dumps(j.get('totals'))")"; json_true "$S" "j['totals']['balanced'] is True" 2>/dev/null; }
no_stats() { SEEN="no file $S"; return 1; }

# --- checks from the hosts' side ------------------------------------------------------------
# ping_ok NS DST [TTL]: 3 of 3 echoes answered (and every reply's TTL/hop limit TTL).
ping_ok() {
  local ns="$1" dst="$2" want_ttl="${3:-}" out="$T/ping.txt" rx ttls t
  set +e
  timeout 30 ip netns exec "$ns" ping -n -c 3 -i 0.2 -W 2 "$dst" >"$out" 2>&1
  set -e
  rx=$(sed -n 's/.*transmitted, \([0-9]*\) received.*/\1/p' "$out")
  ttls=$(grep -o 'ttl=[0-9]*' "$out" | cut -d= -f2 | paste -sd ' ' - || true)
  SEEN="${rx:-0} of 3 answered, reply TTL/hop limit ${ttls:-none}"
  if [ "${rx:-0}" != 3 ]; then indent "$out"; return 1; fi
  if [ -n "$want_ttl" ]; then
    for t in $ttls; do [ "$t" = "$want_ttl" ] || return 1; done
  fi
}
# trace_ok NS HOP1 HOP2 ARGS...: traceroute's first two hops.
trace_ok() {
  local ns="$1" hop1="$2" hop2="$3" out="$T/traceroute.txt" h1 h2
  shift 3
  set +e
  timeout 30 ip netns exec "$ns" traceroute "$@" >"$out" 2>&1
  set -e
  h1=$(awk '$1 == "1" { print $2 }' "$out")
  h2=$(awk '$1 == "2" { print $2 }' "$out")
  SEEN="hop 1 ${h1:-none}, hop 2 ${h2:-none}"
  if [ "$h1" = "$hop1" ] && [ "$h2" = "$hop2" ]; then return 0; fi
  indent "$out"
  return 1
}
# host_neigh_ok NS IFC IP MAC: the host's kernel has MAC for IP, in a usable state.
host_neigh_ok() {
  local line mac state
  line=$(timeout 10 ip netns exec "$1" ip neigh show "$3" dev "$2" | head -n 1 | sed 's/ *$//')
  mac=$(awk '{ for (i = 1; i < NF; i++) if ($i == "lladdr") print $(i + 1) }' <<<"$line")
  state=$(awk '{ print $NF }' <<<"$line")
  SEEN="'${line:-no entry}'"
  [ "$mac" = "$4" ] && [[ "$state" =~ ^(REACHABLE|STALE|DELAY|PROBE)$ ]]
}

# --- the switch's JSON ----------------------------------------------------------------------
# sj MODE FILE ARGS...: figures from the switch's JSON (Debian's python, standard library): an
# answer of roceswitch-ctl --json (its "result" taken) or, with the argument stats, its stats.
# Prints the figure, or why not (and exits 3; valid exits 1).
#   fdb FILE [stats]         the FDB: "vlan/mac/port ..." sorted, or "empty"
#   neigh FILE IP [stats]    the neighbour table: "port mac state" of IP's entry, or "absent"
#   valid FILE [stats]       the neighbour table: "N entries" (and the malformed ones); exit 1
#                            unless every entry is {port, ip, mac, state} with a known state
#   stage FILE NODE KEY...   a stage node's counters, space-separated
#   link FILE PORT           a port's link ("up"/"down") in a port list
#   sum FILE KEY             the sum of every number under KEY anywhere, and where
sj() {
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

mode, path = sys.argv[1], sys.argv[2]
try:
    j = json.load(open(path))
except (OSError, ValueError) as e:
    print('unreadable JSON: %s' % e)
    sys.exit(3)
if isinstance(j, dict) and 'result' in j:
    j = j['result']
if mode == 'fdb':
    if len(sys.argv) > 3:
        j = (j.get('bridge') or {}).get('fdb') if isinstance(j, dict) else None
    if not isinstance(j, list) or not all(isinstance(e, dict) and {'vlan', 'mac', 'port'} <= set(e) for e in j):
        print('not a list of {vlan, mac, port}: %s' % json.dumps(j)[:200])
        sys.exit(3)
    print(' '.join(sorted('%s/%s/%s' % (e['vlan'], str(e['mac']).lower(), e['port']) for e in j)) or 'empty')
elif mode == 'neigh':
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
elif mode == 'valid':
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
elif mode == 'stage':
    st = [s for s in (j.get('stages') or []) if s.get('node') == sys.argv[3]] if isinstance(j, dict) else []
    if not st:
        print('no stage node %s in %s' % (sys.argv[3], json.dumps(j)[:200]))
        sys.exit(3)
    print(' '.join(str(st[0]['counters'].get(k, 'missing')) for k in sys.argv[4:]))
elif mode == 'link':
    print(([p.get('link') for p in j if p.get('name') == sys.argv[3]] or ['no port %s' % sys.argv[3]])[0])
elif mode == 'sum':
    found = list(walk(j, sys.argv[3]))
    print(sum(v for _, v in found), ' '.join('%s=%s' % f for f in found) or 'nowhere')
PYEOF
}
