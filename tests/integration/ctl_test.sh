#!/bin/bash
# tools/roceswitch-ctl against a live switch: the embedded demo (configs/demo_incast.yaml, with LLDP
# on h2 so that ports may be given addresses) with a control socket. Reads
# (ports, groups, routes, counters, limits), writes and their undo (the state hash comes back),
# error messages and exit codes, a batch file as one transaction (a bad line changes nothing and
# is named by its line number), config dump accepted by --check-config, a port's admin state
# reaching its link, watch, a capture and a mirror session read back by tshark, a port's addresses
# and their routes, system get/set (the switch's host settings), the peer check
# (SO_PEERCRED) and the bash completion. Stops at the
# first failure; the switch must then exit 0 on SIGINT and remove its socket.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
CTL="$REPO_ROOT/tools/roceswitch-ctl"
COMPLETION="$REPO_ROOT/tools/completion/roceswitch-ctl.bash"
[ -x "$CTL" ] || die "$CTL is not executable"

# The socket's directory must be traversable by nobody (the peer check): 0755.
T="$(mktemp -d -t rs-ctl.XXXXXX)"
chmod 0755 "$T"
SOCK="$T/ctl.sock"
OUT="$T/out"
ERR="$T/err"
PID=""
cleanup() {
  if [ -n "$PID" ]; then kill -KILL "$PID" 2>/dev/null || true; fi  # only the switch this script started
  rm -rf "$T"
}
trap cleanup EXIT

fail() {
  if [ -s "$T/switch.log" ]; then sed 's/^/    | /' "$T/switch.log" | tail -n 15 >&2; fi
  die "$*"
}

# ctl ARGS...: roceswitch-ctl on the test's socket; stdout in $OUT, stderr in $ERR, exit code in RC.
ctl() {
  set +e
  timeout 30 "$CTL" --socket "$SOCK" --timeout 10 "$@" >"$OUT" 2>"$ERR"
  RC=$?
  set -e
}
# ok ARGS...: it must succeed.
ok() {
  ctl "$@"
  [ "$RC" -eq 0 ] || fail "roceswitch-ctl $*: exit $RC, expected 0; stderr: $(cat "$ERR")"
}
# fails CODE REGEX ARGS...: it must exit CODE with a message matching REGEX on stderr.
fails() {
  local want="$1" re="$2"
  shift 2
  ctl "$@"
  [ "$RC" -eq "$want" ] || fail "roceswitch-ctl $*: exit $RC, expected $want; stderr: $(cat "$ERR")"
  grep -qE -- "$re" "$ERR" || fail "roceswitch-ctl $*: stderr does not match /$re/: $(cat "$ERR")"
}
# jtrue EXPR WHAT: the Python expression on the JSON output `j` must hold.
jtrue() { json_true "$OUT" "$1" || fail "$2; output: $(head -c 800 "$OUT")"; }
# has REGEX WHAT: the output must have a line matching REGEX.
has() { grep -qE -- "$1" "$OUT" || fail "$2: no line matches /$1/ in:"$'\n'"$(cat "$OUT")"; }
pass() { log "ok   $*"; }
hash_now() { ok state hash; cat "$OUT"; }

# ---- start the demo with a control socket -------------------------------------------------
# The demo as the binary embeds it, h2 sending LLDP: a switch that starts with no address and no
# LLDP has no path to its control plane, and refuses port addresses (port set --ipv4) at run time.
sed '/^  - name: h2$/a\    lldp: true' "$REPO_ROOT/configs/demo_incast.yaml" >"$T/demo.yaml"
grep -q '^    lldp: true$' "$T/demo.yaml" || die "no LLDP line added to $T/demo.yaml"
# shellcheck disable=SC2046
"$ROCESWITCH" $(eal_args main) -- --config "$T/demo.yaml" --duration 60 --quiet --control-socket "$SOCK" \
  >"$T/switch.log" 2>&1 &
PID=$!
for ((i = 0; ; i++)); do
  kill -0 "$PID" 2>/dev/null || fail "roceswitch exited before serving its control socket"
  if [ -S "$SOCK" ]; then
    ctl state hash
    [ "$RC" -eq 0 ] && break
  fi
  [ "$i" -lt 300 ] || fail "no answer on $SOCK within 30 s"
  sleep 0.1
done
START=$SECONDS
pass "switch $PID serves $SOCK"
[ "$(stat -c %a "$SOCK")" = 660 ] || fail "socket mode $(stat -c %a "$SOCK"), expected 660"
H0="$(hash_now)"
[[ "$H0" =~ ^[0-9a-f]{16}$ ]] || fail "state hash '$H0' is not 16 hex digits"

# ---- reads ---------------------------------------------------------------------------------
ok port list --json
jtrue "[p['name'] for p in j] == ['h0', 'h1', 'h2', 'h3']" "port list: the demo's 4 ports"
jtrue "all(p['admin'] == 'up' and p['link'] == 'up' for p in j)" "port list: all up"
ok port list
has '^h2 +up +up +1G$' "port list table"
ok group list
for n in 0 1 2 3; do has "^route:10\.0\.$n\.0/24 +ecmp +h$n\*1 +64 +1$" "group list: the demo's group for route 10.0.$n.0/24"; done
ok route list
has '^10\.0\.3\.0/24 +route:10\.0\.3\.0/24$' "route list table"
has '^4 routes$' "route list count"
ok limits
has '^routes_v4 +4 +[0-9]+$' "limits: 4 IPv4 routes used"
ok ops
has '^route\.add +write' "ops lists route.add as a write"
pass "reads: 4 ports up, the demo's 4 groups and routes, limits"

# ---- a group, a route, changes, removal ---------------------------------------------------
ok group add spine --members h1=02:00:00:00:aa:01,h2=02:00:00:00:aa:02*2 --policy flowlet_quality --param idle_time_us=128
ok route add 10.9.0.0/16 group spine
ok route list 10.9.0.0/16 --json
jtrue "j['routes'] == [{'prefix': '10.9.0.0/16', 'group': 'spine'}] and j['total'] == 1" "route list 10.9.0.0/16: the new route"
ok group list spine --json
jtrue "j[0]['policy']['name'] == 'flowlet_quality' and j[0]['policy']['params']['idle_time_us'] == 128" "group spine: policy and parameter"
jtrue "[(m['port'], m['weight']) for m in j[0]['members']] == [('h1', 1), ('h2', 2)] and j[0]['routes'] == 1" "group spine: members, weights, routes"
ok group list spine
has '^spine +flowlet_quality\([^)]*idle_time_us=128[^)]*\) +h1\*1,h2\*2 +64 +1$' "group list spine table"
ok route list --limit 2
has '^5 routes \(first 2 shown\)$' "route list --limit 2: truncation line"
ok group set spine --policy spray --policy-by-tc 3=drill
ok group list spine --json
jtrue "j[0]['policy']['name'] == 'spray' and j[0]['policy_by_tc']['3']['name'] == 'drill' and len(j[0]['members']) == 2" "group set: policy replaced, members kept"
ok counters spine --json
jtrue "j['name'] == 'spine' and [m['port'] for m in j['members']] == ['h1', 'h2']" "counters spine: the group's members"
fails 1 "^roceswitch-ctl: group: 'route:10\.0\.1\.0/24' is a route's own group" route add 10.9.0.0/16 group "route:10.0.1.0/24" --replace
fails 1 "^roceswitch-ctl: name: 'route:10\.0\.1\.0/24' is a route's own group" group del "route:10.0.1.0/24"
fails 1 "^roceswitch-ctl: name: group 'spine' is used by 1 route" group del spine
# A route with next hops of its own: its group comes and goes with it.
ok route add 10.11.0.0/16 nexthops h1=02:00:00:00:aa:01,h2=02:00:00:00:aa:02*3
ok group list route:10.11.0.0/16 --json
jtrue "[(m['port'], m['weight']) for m in j[0]['members']] == [('h1', 1), ('h2', 3)]" "route add nexthops: its own group"
ok route add 10.11.0.0/16 group spine --replace
fails 1 "^roceswitch-ctl: name: no group 'route:10\.11\.0\.0/16'" group list route:10.11.0.0/16
# A blackhole: `drop`, shown as such; nothing may follow it, and the other forms need their target.
ok route add 10.12.0.0/16 drop
ok route list 10.12.0.0/16
has '^10\.12\.0\.0/16 +drop$' "route add drop: listed as drop"
fails 2 "drop takes nothing after it" route add 10.13.0.0/16 drop spine
fails 2 "drop takes nothing after it" route add 10.13.0.0/16 group
ok route del 10.12.0.0/16
ok route del 10.11.0.0/16
ok route del 10.9.0.0/16
ok route list 10.9.0.0/16 --json
jtrue "j['routes'] == [] and j['total'] == 0" "route del: the route is gone"
ok group del spine
fails 1 "^roceswitch-ctl: name: no group 'spine'" group list spine
[ "$(hash_now)" = "$H0" ] || fail "state hash after add, set, del: $(cat "$OUT"), expected the initial $H0"
pass "group add/set/del, route add/replace/del; the state hash is back to the start"

# ---- errors: the field and reason, exit 1; usage, exit 2 ----------------------------------
fails 1 "^roceswitch-ctl: group: no group 'nosuch'$" route add 10.8.0.0/16 group nosuch
fails 1 "^roceswitch-ctl: prefix: .*33" route add 10.8.0.0/33 group "route:10.0.1.0/24"
fails 1 "^roceswitch-ctl: prefix: not an IPv4 prefix" route add 10.8.0.0.1/16 group "route:10.0.1.0/24"
fails 1 "^roceswitch-ctl: members\[0\]\.port: .*'h9'" group add x --members h9=02:00:00:00:aa:01
fails 1 "^roceswitch-ctl: port: no port 'h9'" port down h9
fails 1 "^roceswitch-ctl: object: no port or group 'zz'" counters zz
fails 2 "invalid choice: 'via'" route add 10.8.0.0/16 via x
fails 2 "--members: 'h1': expected PORT=MAC" group add x --members h1
fails 2 "required: --members" group add x
fails 2 "--param needs --policy" group set x --param idle_time_us=1
fails 2 "a command is needed" route
fails 2 "not JSON" raw '{"op":'
ctl --socket "$T/none.sock" port list
[ "$RC" -eq 1 ] || fail "no switch on the socket: exit $RC, expected 1"
if ! grep -qF "cannot connect to $T/none.sock" "$ERR" || ! grep -qF "is roceswitch running with --control-socket?" "$ERR"; then
  fail "no switch on the socket: $(cat "$ERR")"
fi
[ "$(wc -l <"$ERR")" -eq 1 ] || fail "no switch on the socket: not one line: $(cat "$ERR")"
ok raw '{"op": "state.hash"}'
jtrue "j['ok'] is True and j['id'] is not None and j['result']['hash'] == '$H0'" "raw: the response with an id"
ctl raw '{"op": "nosuch"}'
[ "$RC" -eq 1 ] || fail "raw with an error response: exit $RC, expected 1"
jtrue "j['ok'] is False and j['error']['field'] == 'op'" "raw: an error response, exit 1"
[ "$(hash_now)" = "$H0" ] || fail "a failed request changed the state"
pass "errors: field and reason on stderr, exit 1; usage errors exit 2; no switch: the path and the hint"

# ---- batch: one transaction, a bad line named by its number -------------------------------
cat >"$T/bad.txt" <<'B'
# line 1: a comment
group add spine --members h1=02:00:00:00:aa:01,h2=02:00:00:00:aa:02*2 --policy flowlet_quality --param idle_time_us=128
route add 10.9.0.0/16 group nosuch
{"op": "route.add", "prefix": "10.10.0.0/16", "group": "spine"}
B
fails 1 "^roceswitch-ctl: $T/bad\.txt:3: ops\[1\]\.group: no group 'nosuch'$" batch "$T/bad.txt"
[ "$(hash_now)" = "$H0" ] || fail "a failed batch changed the state"
fails 1 "no group 'spine'" group list spine
printf '%s\n' '{"op": "group.add", "name": "s", "members": [{"port": "h1", "mac": "02:00:00:00:aa:01"}]}' '' \
  '{"op": "route.add", "prefix": "10.11.0.0/16" "group": "s"}' >"$T/bad.json"
fails 1 "^roceswitch-ctl: $T/bad\.json:3: " batch "$T/bad.json"
fails 1 "<stdin>:2: 'route list' is not a change" batch - < <(printf 'route del 10.0.0.0/24\nroute list\n')
[ "$(hash_now)" = "$H0" ] || fail "a batch with a bad line changed the state"
sed '/nosuch/d' "$T/bad.txt" >"$T/good.txt"
ok batch "$T/good.txt"
has '^2 operations applied$' "batch: applied"
ok route list 10.10.0.0/16 --json
jtrue "j['routes'] == [{'prefix': '10.10.0.0/16', 'group': 'spine'}]" "batch: its route"
H1="$(hash_now)"
[ "$H1" != "$H0" ] || fail "the state hash did not change with the batch"
pass "batch: line 3 named, nothing applied, hash unchanged; without it, applied"

# ---- config dump: a configuration the switch accepts ---------------------------------------
ok config dump "$T/dump.yaml"
if ! grep -q 'flowlet_quality' "$T/dump.yaml" || ! grep -q '10.10.0.0/16' "$T/dump.yaml"; then
  fail "config dump lacks the batch's group and route"
fi
ok config dump
cmp -s "$OUT" "$T/dump.yaml" || fail "config dump to stdout and to a file differ"
set +e
# shellcheck disable=SC2046
timeout 60 "$ROCESWITCH" $(eal_args check) -- --config "$T/dump.yaml" --check-config >"$T/check.log" 2>&1
RC=$?
set -e
[ "$RC" -eq 0 ] || fail "roceswitch --check-config refuses the dump (exit $RC): $(cat "$T/check.log")"
pass "config dump: $(tail -n 1 "$T/check.log")"
printf 'route del 10.10.0.0/16\ngroup del spine\n' >"$T/undo.txt"
ok batch - <"$T/undo.txt"
[ "$(hash_now)" = "$H0" ] || fail "undoing the batch did not restore the state hash"

# ---- port admin state reaches the link -----------------------------------------------------
# port_is NAME ADMIN LINK: within 1 s.
port_is() {
  local i
  for ((i = 0; i < 10; i++)); do
    ok port list --json
    json_true "$OUT" "[(p['admin'], p['link']) for p in j if p['name'] == '$1'] == [('$2', '$3')]" 2>/dev/null && return 0
    sleep 0.1
  done
  fail "port $1 is not admin $2, link $3 within 1 s: $(cat "$OUT")"
}
ok port down h2
port_is h2 down down
ok port up h2
port_is h2 up up
pass "port down/up: admin and link follow within 1 s"

# ---- counters and watch -------------------------------------------------------------------
ok counters --json
jtrue "[p['name'] for p in j['ports']] == ['h0', 'h1', 'h2', 'h3'] and j['ports'][0]['tx_packets'] > 0" "counters: ports, h0 sends"
ok counters
has '^port +rx_packets +tx_packets +drops +queue_bytes +pfc_tx +pfc_rx +ecn_marked$' "counters table header"
has '^h0( +[0-9]+){7}$' "counters table: h0"
ok counters h0 --json
jtrue "j['name'] == 'h0' and len(j['queues']) == 8" "counters h0"
ok watch --count 2 --interval 0.2
[ "$(grep -c '^roceswitch ' "$OUT")" -eq 2 ] || fail "watch --count 2: not 2 refreshes:"$'\n'"$(cat "$OUT")"
[ "$(grep -cE '^h[0-3] +(up|down) +[0-9]+\.[0-9]{3} ' "$OUT")" -eq 8 ] || fail "watch: not 4 port lines a refresh:"$'\n'"$(cat "$OUT")"
if grep -q $'\e' "$OUT"; then fail "watch wrote escape codes to a file"; fi
pass "counters and watch (2 plain tables)"

# ---- QoS maps and a BMv2 command file ------------------------------------------------------
ok qos set --dscp-to-tc 26=5,10=2 --cnp-queue 6
ok qos get --json
jtrue "j['dscp_to_tc'][26] == 5 and j['dscp_to_tc'][10] == 2 and j['dscp_to_tc'][3] == 3 and j['cnp_queue'] == 6" "qos set: given entries only"
fails 1 "^roceswitch-ctl: dscp_to_tc.*out of range" qos set --dscp-to-tc 64=1
cat >"$T/p4.txt" <<'P4'
# as for simple_switch_CLI against p4/roceswitch.p4
act_prof_create_member nexthop_selector set_nexthop 1 02:00:00:00:aa:01
act_prof_create_member nexthop_selector set_nexthop 2 02:00:00:00:aa:02
act_prof_create_group nexthop_selector
act_prof_add_member_to_group nexthop_selector 0 0
act_prof_add_member_to_group nexthop_selector 1 0
table_indirect_add_with_group ipv4_lpm 10.77.0.0/16 => 0
table_add dscp_to_tc set_tc 30 => 4
P4
ok p4 "$T/p4.txt"
has '^Entry has been added with handle 0$' "p4: the route entry's handle"
ok route list 10.77.0.0/16 --json
jtrue "j['routes'] == [{'prefix': '10.77.0.0/16', 'group': 'p4_group_0'}]" "p4: the route through the selector group"
printf 'table_dump ipv4_lpm\nact_prof_create_member nexthop_selector set_nexthop 9 02:00:00:00:aa:09\n' >"$T/p4bad.txt"
before=$(hash_now)
fails 1 "p4bad.txt:2: act_prof_create_member: port 9" p4 "$T/p4bad.txt"
[ "$(hash_now)" = "$before" ] || fail "p4: a bad line changed the state"
pass "qos set/get and a BMv2 command file (selector group, route, dscp_to_tc); a bad line named, nothing applied"

# ---- capture: a pcapng file tshark reads ---------------------------------------------------
ok capture h1 rx "$T/h1.pcapng" --count 50
has '^h1 +rx +50 ' "capture: 50 packets written"
frames=$(tshark -r "$T/h1.pcapng" 2>/dev/null | wc -l)
[ "$frames" = 50 ] || fail "capture: tshark reads $frames frames, not 50"
roce=$(tshark -r "$T/h1.pcapng" -Y 'infiniband.bth.opcode' -T fields -e frame.interface_name 2>/dev/null | sort | uniq -c)
echo "$roce" | grep -qE '^ +50 h1$' || fail "capture: tshark does not see 50 RoCE packets on interface h1: $roce"
fails 2 "a capture ends at its first limit" capture h1 rx "$T/x.pcapng"
pass "capture: 50 RoCE frames from h1 in a pcapng file that tshark decodes"

# ---- mirror: h1's received frames copied to h3 (which nothing else sends to), cut to 96 bytes --
before="$(hash_now)"
ok mirror set span h3 --rx h1 --truncate 96
ok capture h3 tx "$T/span.pcapng" --count 40
seen=$(tshark -r "$T/span.pcapng" -T fields -e frame.len -e ip.src 2>/dev/null | sort | uniq -c)
echo "$seen" | grep -qE '^ +40 96\s+10\.0\.1\.2$' || fail "mirror: tshark does not see 40 frames of 96 bytes from 10.0.1.2 leaving h3: $seen"
ok mirror list --json
jtrue "j[0]['name'] == 'span' and j[0]['rx_ports'] == ['h1'] and j[0]['copies'] >= 40 and j[0]['lost'] == 0" "mirror list: the session and its copies"
fails 1 "the destination port cannot be a source" mirror set other h2 --tx h2
ok mirror del span
[ "$(hash_now)" = "$before" ] || fail "mirror: the state after mirror del is not the state before"
pass "mirror: h1's frames, cut to 96 bytes, leave h3 as tshark reads them; set, list, del"

# ---- port and buffer settings: a port's rate and queues, the lossless sections -------------
ok buffer get "$T/settings-before.yaml"
before="$(hash_now)"
ok port set h3 --speed 40 --limit-packets 2048 --scheduler strict,dwrr,dwrr,dwrr,dwrr,dwrr,dwrr,dwrr
ok port list --json
jtrue "[p for p in j if p['name'] == 'h3'][0]['speed_gbps'] == 40" "port set: h3 runs at 40 Gb/s"
ok buffer get "$T/settings.yaml"
python3 - "$T/settings.yaml" <<'PY' || fail "buffer get: h3's new rate and queues are not in $(cat "$T/settings.yaml")"
import sys, yaml
h3 = [p for p in yaml.safe_load(open(sys.argv[1]))['ports'] if p['name'] == 'h3'][0]
assert h3['speed_gbps'] == 40 and h3['queues']['limit_packets'] == [2048] * 8 and h3['queues']['scheduler'][0] == 'strict'
PY
printf 'buffer: {pool: {cell_size: 64}}\n' >"$T/bad-buffer.yaml"
fails 1 "bad-buffer.yaml: buffer.pool.cell_size: set at start-up" buffer set "$T/bad-buffer.yaml"
fails 2 "expected one value or eight" port set h3 --weights 1,2
ok buffer set "$T/settings-before.yaml"
[ "$(hash_now)" = "$before" ] || fail "buffer set with the file buffer get wrote before: not the state before"
pass "port set (rate, queue limits, scheduler), buffer get/set round trip, a start-up-only field refused"

# ---- a port's addresses and their routes, ICMP unreachable; system get/set -----------------
before="$(hash_now)"
ok port set h2 --ipv4 10.0.9.1/24,10.0.19.1/24 --ipv6 2001:db8:9::1/64 --icmp-unreachable on
ok route list
has '^2001:db8:9::/64 +connected:h2:2001:db8:9::/64$' "port set --ipv6: the subnet's connected route"
has '^10\.0\.9\.0/24 +connected:h2:10\.0\.9\.0/24$' "port set --ipv4: the subnet's connected route"
has '^10\.0\.19\.1/32 +local$' "port set --ipv4: the address's route to local"
ok config dump
has '^    ipv4: \[10\.0\.9\.1/24, 10\.0\.19\.1/24\]$' "config dump: h2's addresses"
has '^    icmp_unreachable: true$' "config dump: h2's icmp_unreachable"
ok port set h2 --ipv4 10.0.9.1/24 --icmp-unreachable off
ok route list 10.0.19.0/24 --json
jtrue "j['routes'] == []" "port set --ipv4 (one address): the other's routes are gone"
ok config dump
if grep -q 'icmp_unreachable' "$OUT"; then fail "port set --icmp-unreachable off: still in the config dump"; fi
ok port set h2 --ipv4 none --ipv6 ''
ok route list --json
jtrue "not [r for r in j['routes'] if r['group'] == 'local' or r['group'].startswith('connected:')]" "port set --ipv4 none --ipv6 '': no routes"
fails 1 "^roceswitch-ctl: ipv4\[0\]: 10\.0\.9\.0/24 is the subnet's own address" port set h2 --ipv4 10.0.9.0/24
fails 1 "^roceswitch-ctl: ipv4: .*10\.0\.3\.0/24, which exists" port set h2 --ipv4 10.0.3.1/24
fails 2 "--lldp: 'maybe': expected on or off" port set h2 --lldp maybe
# VLAN membership reaches the switch as port.set's vlan; this switch declares no VLAN.
fails 1 "^roceswitch-ctl: vlan\.access: .*not declared" port set h2 --vlan-access 10
fails 1 "^roceswitch-ctl: vlan\.tagged.*not declared" port set h2 --vlan-tagged 20,30
fails 2 "--vlan-tagged: 'x': expected VLAN ids" port set h2 --vlan-tagged x
fails 2 "--vlan-access: '10,20': expected one VLAN id" port set h2 --vlan-access 10,20
[ "$(hash_now)" = "$before" ] || fail "port set --ipv4 none, --icmp-unreachable off: not the state before"
ok system get "$T/system-before.yaml"
python3 - "$T/system-before.yaml" <<'PY' || fail "system get: not YAML with copp: $(cat "$T/system-before.yaml")"
import sys, yaml
s = yaml.safe_load(open(sys.argv[1]))
assert s['copp']['arp'] == {'pps': 600, 'burst': 600} and s['lldp']['interval_s'] == 30 and 'neighbours' in s
PY
printf 'copp: {arp: {pps: 900}}\nneighbours: {retrans_s: 2}\n' >"$T/system.yaml"
ok system set "$T/system.yaml"
ok system get
has '^copp: \{arp: \{pps: 900, burst: 600\}' "system set: copp.arp.pps changed, its burst kept"
has '^neighbours: \{.*retrans_s: 2,' "system set: neighbours.retrans_s changed"
printf 'bridge: {fdb_size: 4096}\n' >"$T/bad-system.yaml"
fails 1 "bad-system\.yaml: bridge\.fdb_size: set at start-up" system set "$T/bad-system.yaml"
fails 1 "<stdin>: buffer: unknown key" system set - < <(printf 'buffer: {}\n')
ok system set "$T/system-before.yaml"
[ "$(hash_now)" = "$before" ] || fail "system set with the file system get wrote before: not the state before"
pass "port set --ipv4/--ipv6 (connected and local routes, replaced, none), --icmp-unreachable; system get/set round trip, a start-up-only field refused"

# ---- a port's MAC through the P4 port_mac table, seen by tshark on the wire ------------------
before="$(hash_now)"
ok port list --json
orig=$(python3 -c "import json,sys; print([p for p in json.load(open(sys.argv[1])) if p['name'] == 'h0'][0]['mac'])" "$OUT")
printf 'table_add port_mac rewrite_smac 0 => 02:aa:bb:cc:dd:00\ncounter_read port_tx_counter 0\n' >"$T/mac.txt"
ok p4 "$T/mac.txt"
has '^Entry has been added with handle 0$' "p4 port_mac: the entry's handle"
has '^port_tx_counter\[0\]=  BmCounterData\(packets=[1-9][0-9]*, bytes=[1-9][0-9]*\)$' "p4 counter_read: h0's frames"
ok capture h0 tx "$T/h0mac.pcapng" --count 20
srcs=$(tshark -r "$T/h0mac.pcapng" -T fields -e eth.src 2>/dev/null | sort | uniq -c)
echo "$srcs" | grep -qE '^ +20 02:aa:bb:cc:dd:00$' || fail "port_mac: tshark does not see 20 frames from 02:aa:bb:cc:dd:00 leaving h0: $srcs"
ok port set h0 --mac "$orig"
[ "$(hash_now)" = "$before" ] || fail "port set --mac back to $orig: not the state before"
pass "port_mac: h0's frames leave with the MAC a BMv2 command set (tshark), counter_read, port set --mac"

# ---- trace: a packet's walk through the running pipeline ----------------------------------
ok trace 1
has '^packet 1 \(worker 0\): received on port [0-9] \(h[0-9]\)' "trace: the arrival line"
has '^  ipv4_forward/ipv4_route: dst 10\.0\.[0-9]\.2 ttl 64 group [0-9]' "trace: the route step"
pass "trace: one packet followed through the pipeline of the running switch"

# ---- the peer check: a user the switch does not allow --------------------------------------
if [ "$(id -u)" -eq 0 ]; then
  cp "$CTL" "$T/roceswitch-ctl"  # readable by nobody whatever the source tree's modes
  chmod 0755 "$T/roceswitch-ctl"
  cp -r "$REPO_ROOT/tools/roceswitch_ctl" "$T/" && chmod -R a+rX "$T/roceswitch_ctl"  # the modules it imports
  nobody() {
    set +e
    timeout 30 setpriv --reuid=65534 --regid=65534 --clear-groups "$T/roceswitch-ctl" --socket "$SOCK" port list >"$OUT" 2>"$ERR"
    RC=$?
    set -e
  }
  nobody  # the socket is 0660: connect() itself is refused
  if [ "$RC" -ne 1 ] || ! grep -qE '^roceswitch-ctl: .*permission denied' "$ERR"; then
    fail "nobody on a 0660 socket: exit $RC: $(cat "$ERR")"
  fi
  chmod 0666 "$SOCK"  # past the file mode: the switch's SO_PEERCRED check answers
  nobody
  chmod 0660 "$SOCK"
  if [ "$RC" -ne 1 ] || ! grep -qE '^roceswitch-ctl: permission denied: uid 65534' "$ERR"; then
    fail "nobody past the file mode: exit $RC: $(cat "$ERR")"
  fi
  pass "peer check: nobody is refused by the file mode and by SO_PEERCRED"
else
  log "note: not root, the peer check (setpriv to nobody) is skipped"
fi

# ---- bash completion -----------------------------------------------------------------------
bash -c 'source "$1"; complete -p roceswitch-ctl' _ "$COMPLETION" >"$OUT" 2>"$ERR" || fail "completion does not load: $(cat "$ERR")"
has 'complete -F _roceswitch_ctl roceswitch-ctl' "completion registered"
# shellcheck disable=SC2016
COMP='source "$1"; COMP_WORDS=("$2" --socket "$3" "${@:4}"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _roceswitch_ctl; echo "${COMPREPLY[*]}"'
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" port down '')" = "h0 h1 h2 h3" ] || fail "completion: port names from the switch"
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" route a)" = "add" ] || fail "completion: route a -> add"
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" route add 10.8.0.0/16 '')" = "group nexthops drop" ] || fail "completion: route add PREFIX -> the forms"
[[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" route add 10.8.0.0/16 group '')" == *"route:10.0.3.0/24"* ]] || fail "completion: route add PREFIX group -> the switch's groups"
[[ " $(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" '') " == *" system "* ]] || fail "completion: the commands -> system"
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" system '')" = "get set" ] || fail "completion: system -> get set"
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" port set h2 --ip)" = "--ipv4 --ipv6" ] || fail "completion: port set --ip -> --ipv4 --ipv6"
[ "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$SOCK" port set h2 --lldp '')" = "on off" ] || fail "completion: port set --lldp -> on off"
[ -z "$(bash -c "$COMP" _ "$COMPLETION" "$CTL" "$T/none.sock" port up '' 2>&1)" ] || fail "completion: not silent without a switch"
pass "bash completion: loads, completes subcommands, options and the switch's port names, silent without it"

# ---- stop ----------------------------------------------------------------------------------
log "$((SECONDS - START)) s of checks; SIGINT to $PID"
kill -INT "$PID"
for ((i = 0; i < 150; i++)); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
kill -0 "$PID" 2>/dev/null && fail "roceswitch still runs 15 s after SIGINT"
set +e
wait "$PID"
RC=$?
set -e
PID=""
[ "$RC" -eq 0 ] || fail "roceswitch exited $RC after SIGINT"
[ ! -e "$SOCK" ] || fail "the socket file $SOCK is left after exit"
log "SUMMARY: all checks passed; roceswitch exited 0 and removed its socket"
