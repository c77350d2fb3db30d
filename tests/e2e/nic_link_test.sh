#!/bin/bash
# End to end: the emulated RoCE NIC on a real link (ports[].kind: nic, issue 22 point 4). Two
# roceswitch processes back to back over a veth pair, both in one network namespace made here:
# one is the switch (an ethdev port on the link, and an emulated NIC host h0 behind it), the
# other is a RoCE host n0 whose NIC is its end of the link (no switch in that process at all).
#
#   ns NS: [process SW: port pl (af_packet on VA) -- switch -- h0, 10.0.0.2, emulated NIC]
#                         ==veth VA<->VB==
#          [process HS: n0 (kind: nic, af_packet on VB), 10.0.9.2, gateway: pl's MAC]
#
# Both directions carry messages: n0 has a requester QP 0x11 toward h0, h0 one (0x22) toward n0;
# each end makes the listening QP for the other's. 50 RDMA WRITEs of 64 KiB each way, depth 4.
# Placement: each process busy-polls on its worker lcore, and with EAL's default (or -l 0-1)
# both put it on CPU 1: they then share it in scheduler ticks (4 ms here), completion times come
# in multiples of 4 ms, goodput is a quarter of the link and the 1 ms default retransmit timer
# resends thousands of packets (4607 of 7807 tried by hand). So the two workers get different
# CPUs (--lcores; the main lcores mostly sleep). Both NICs still have retransmit_us 50000: a
# loaded machine (meson, other tests) still deschedules a poller for milliseconds, and timeouts
# are not what is judged here. h0's QP starts at 1 s (its switch's clock), once HS is up: what
# it sent earlier would only be lost and resent.
#
# Checks, for case 1 (a clean link) and case 2 (pl drops 1 % of what it sends, faults on tx),
# each printed PASS/FAIL with what was expected and what was seen:
#   1 both processes exit 0 (the switch's books balance, else it exits 1)
#   2 every posted message completed on both requesters: messages_done = messages = 50
#   3 each responder received what the other side sent: rx_messages 50, rx_bytes 50 x 65536,
#     equal to the requester's acked_bytes
#   4 the switch's books balance: its summary line says "-> balanced", stats totals.balanced
#   5 no ICRC errors on either host (stats host.rx_icrc_bad = 0)
#   6 (case 1, where tshark is installed) on the link every RoCE frame of n0 goes to its
#     gateway (pl's MAC) and every one from pl to n0's MAC: the switch routes IP frames
#     whatever their destination MAC, so its figures cannot show that n0 honours `gateway`
#   7 (case 2 only) the fault dropped frames (ports[pl].faults.tx.dropped > 0) and go-back-N
#     recovered them: h0's requester received NAKs (n0 saw a gap) and still completed (2, 3)
# Retransmissions, NAKs, timeouts, goodput and completion times of every QP are printed, not
# judged (they depend on how the two processes are scheduled).
#
# Usage: nic_link_test.sh ROCESWITCH. Root; exit 77 (SKIP) without namespaces or veth.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
# shellcheck source=switch_lib.sh
source "$(dirname "$0")/switch_lib.sh"  # require_root, ID, make_scratch/cleanup, expect, in_ns, indent
require_binary
require_root ip ethtool
NS="rs-nl-$ID" VA="nla$ID" VB="nlb$ID"
RIG_NETNS=("$NS") RIG_LINKS=("$VA" "$VB")
make_scratch niclink
# cleanup kills BG_PIDS (the processes themselves: `ip netns exec` execs them), deletes the
# namespace and T; and here the DPDK runtime directories of the four processes.
trap 'cleanup; for d in sw1 hs1 sw2 hs2; do rm -rf "/var/run/dpdk/rs-$TEST_NAME-$d-$ID"; done' EXIT
PL_MAC=02:00:00:00:aa:a0 H0_MAC=02:00:00:00:00:10 N0_MAC=02:00:00:00:bb:b9
MSGS=50 MSG_BYTES=65536 SW_S=6 HS_S=4
BYTES=$((MSGS * MSG_BYTES))  # each way (not `want`: expect has a local of that name)
NIC="{mtu: 1024, retransmit_us: 50000}"

# The CPUs: SW's worker on the first allowed, HS's on the second (its main lcore on the first);
# with four, each process has two of its own. One CPU: both there, the 50 ms timer carries it.
read -r -a CPUS <<<"$("$PY" -c 'import os; print(*sorted(os.sched_getaffinity(0)))')"
C0=${CPUS[0]} C1=${CPUS[1]:-${CPUS[0]}}
LC_SW="--lcores 0@$C0,1@$C1" LC_HS="--lcores 0@$C1,1@$C0"
[ "${#CPUS[@]}" -ge 4 ] && LC_HS="--lcores 0@${CPUS[2]},1@${CPUS[3]}"

# --- topology -------------------------------------------------------------------------------
ip netns add "$NS" 2>"$T/err" || skip "cannot create network namespaces: $(cat "$T/err")"
# No IPv6 (no ND/MLD from the kernel on the link), nothing of the kernel's own on it.
in_ns "$NS" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
in_ns "$NS" ip link add "$VA" type veth peer name "$VB" 2>"$T/err" || skip "cannot create veth pairs: $(cat "$T/err")"
for i in lo "$VA" "$VB"; do
  # veth offloads checksums: a frame read off the wire by af_packet would carry a partial one.
  [ "$i" = lo ] || in_ns "$NS" ethtool -K "$i" tx off >/dev/null
  in_ns "$NS" ip link set "$i" up
done
log "namespace $NS, veth $VA <-> $VB; EAL placement: SW $LC_SW, HS $LC_HS (CPUs allowed: ${CPUS[*]})"

# nj FILE MODE ARGS...: figures from a stats JSON (Debian's python, standard library).
#   qp PORT PEER QPN KEY...  one QP's fields, space-separated ("missing" where absent)
#   qps PORT                 a line per QP of the port's NIC, for the log
#   host PORT KEY            a field of the port's host
#   faults PORT              the port's faults.tx.dropped
nj() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
path, mode, a = sys.argv[1], sys.argv[2], sys.argv[3:]
try:
    j = json.load(open(path))
    port = [p for p in j['ports'] if p.get('name') == a[0]][0]
except (OSError, ValueError, KeyError, IndexError) as e:
    print('no port %s in %s: %s' % (a[0], path, e)); sys.exit(3)
host = port.get('host') or {}
qps = (host.get('nic') or {}).get('qps') or []
if mode == 'qp':
    q = [q for q in qps if q.get('peer') == a[1] and q.get('qpn') == int(a[2], 0)]
    if not q:
        print('no QP %s to %s on %s' % (a[2], a[1], a[0])); sys.exit(3)
    print(' '.join(str(q[0].get(k, 'missing')) for k in a[3:]))
elif mode == 'qps':
    for q in qps:
        f = q.get('fct_us') or {}
        print('%s QP %#x %s peer %s: done %s/%s, goodput %.3f Gb/s, fct p50 %.0f p99 %.0f us, tx %s, '
              'retransmitted %s, naks %s, timeouts %s | rx %s msgs %s bytes, acks_sent %s, naks_sent %s, '
              'out_of_seq %s, cnp sent %s rcvd %s, rate %.2f Gb/s' % (
              a[0], q['qpn'], q['role'], q['peer'], q['messages_done'], q['messages'], q['goodput_gbps'],
              f.get('p50', 0), f.get('p99', 0), q['tx_packets'], q['retransmitted'], q['naks_received'],
              q['timeouts'], q['rx_messages'], q['rx_bytes'], q['acks_sent'], q['naks_sent'],
              q['out_of_sequence'], q['cnp_sent'], q['cnp_received'], q['rate_gbps']))
elif mode == 'host':
    print(host.get(a[1], 'missing'))
elif mode == 'faults':
    print(((port.get('faults') or {}).get('tx') or {}).get('dropped', 'missing'))
PYEOF
}

# launch TAG YAML DURATION LCORES: one roceswitch process in NS, in the background; PID in LPID.
launch() {
  # shellcheck disable=SC2046,SC2086
  ip netns exec "$NS" "$ROCESWITCH" $(eal_args "$1") $4 -- --config "$2" --duration "$3" \
    --stats-json "$T/$1.json" --control-socket "$T/$1.sock" --quiet >"$T/$1.log" 2>&1 &
  LPID=$!
  BG_PIDS+=("$LPID")
}
# wait_rc PID BOUND_S: its exit code in RC, or "still running ..." (then it is killed).
wait_rc() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$1" 2>/dev/null; then
    kill -KILL "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
    RC="still running after $2 s: killed"
    return
  fi
  set +e; wait "$1"; RC=$?; set -e
}

# run_case N FAULTS: both processes on case N's configurations; then its checks.
run_case() {
  local n="$1" faults="$2" SWP HSP i S1 S2
  cat >"$T/sw$n.yaml" <<EOF
switch: {workers: 1, seed: 7}
ports:
  - {name: pl, kind: ethdev, devargs: "net_af_packet0,iface=$VA", mac: "$PL_MAC", speed_gbps: 1$faults}
  - {name: h0, speed_gbps: 1, host: {ip: 10.0.0.2, mac: "$H0_MAC", nic: $NIC,
     qps: [{dst: 10.0.9.2, qpn: 0x22, message_bytes: $MSG_BYTES, messages: $MSGS, depth: 4, start_s: 1}]}}
routes:
  - {prefix: 10.0.0.0/24, port: h0, mac: "$H0_MAC"}
  - {prefix: 10.0.9.0/24, port: pl, mac: "$N0_MAC"}
EOF
  cat >"$T/hs$n.yaml" <<EOF
switch: {workers: 1}
ports:
  - {name: n0, kind: nic, devargs: "net_af_packet1,iface=$VB", speed_gbps: 1,
     host: {ip: 10.0.9.2, mac: "$N0_MAC", gateway: "$PL_MAC", nic: $NIC,
            qps: [{dst: 10.0.0.2, qpn: 0x11, message_bytes: $MSG_BYTES, messages: $MSGS, depth: 4}]}}
EOF
  log "case $n: switch (sw$n, $SW_S s) then hosts (hs$n, $HS_S s) once the switch runs:"
  indent "$T/sw$n.yaml" "$T/hs$n.yaml"
  CAP=""
  # 6: the link's frames, on both ends: af_packet sends past the taps (qdisc bypass), so each
  # end shows what it received, VA n0's frames and VB pl's.
  if [ "$n" = 1 ] && command -v tshark >/dev/null; then
    ip netns exec "$NS" tshark -n -q -i "$VA" -i "$VB" -a "duration:$((SW_S + 4))" -f "udp dst port 4791" \
      -w "$T/link.pcapng" >"$T/tshark.log" 2>&1 &
    CAP=$! BG_PIDS+=("$CAP")
    for ((i = 0; i < 100; i++)); do [ -s "$T/link.pcapng" ] && break; sleep 0.1; done
    [ -s "$T/link.pcapng" ] || log "note: tshark has not started its file in 10 s: $(head -c 300 "$T/tshark.log")"
  fi
  launch "sw$n" "$T/sw$n.yaml" "$SW_S" "$LC_SW"
  SWP=$LPID
  for ((i = 0; i < 200; i++)); do grep -qs 'running' "$T/sw$n.log" && break; kill -0 "$SWP" 2>/dev/null || break; sleep 0.1; done
  launch "hs$n" "$T/hs$n.yaml" "$HS_S" "$LC_HS"
  HSP=$LPID
  wait_rc "$HSP" $((HS_S + 30)); RC_HS=$RC
  wait_rc "$SWP" $((SW_S + 30)); RC_SW=$RC
  for t in sw hs; do log "case $n: $t$n's output:"; { grep -v '^TELEMETRY' "$T/$t$n.log" || true; } | indent | tail -n 15; done
  rc_is0() { SEEN="$1"; [ "$1" = 0 ]; }
  expect "$n.1 the switch's process (sw$n) exits" "code 0" rc_is0 "$RC_SW"
  expect "$n.1 the hosts' process (hs$n) exits" "code 0" rc_is0 "$RC_HS"
  S1="$T/sw$n.json" S2="$T/hs$n.json"
  no_file() { SEEN="no file $1"; return 1; }
  for f in "$S1" "$S2"; do [ -s "$f" ] || { expect "$n stats JSON written" "a non-empty $f" no_file "$f"; return 0; }; done
  nj "$S1" qps h0 | indent
  nj "$S2" qps n0 | indent
  if [ -n "$CAP" ]; then
    kill -INT "$CAP" 2>/dev/null || true
    for ((i = 0; i < 100; i++)); do kill -0 "$CAP" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$CAP" 2>/dev/null || true; wait "$CAP" 2>/dev/null || true
    macs_ok() {  # the (source, destination) pairs of the captured frames, and their counts
      local pairs
      pairs=$(timeout 30 tshark -n -r "$T/link.pcapng" -T fields -e eth.src -e eth.dst 2>/dev/null | sort | uniq -c) || true
      SEEN=$(awk '{ printf "%s%s %s->%s", s, $1, $2, $3; s = ", " }' <<<"$pairs")
      SEEN="${SEEN:-no frames} (frames src->dst)"
      [ "$(awk '{ print $2 "->" $3 }' <<<"$pairs" | tr '\n' ' ')" = "$PL_MAC->$N0_MAC $N0_MAC->$PL_MAC " ]
    }
    expect "$n.6 RoCE frames on the link (tshark on $VA and $VB)" "only $N0_MAC->$PL_MAC (n0 to its gateway) and $PL_MAC->$N0_MAC" macs_ok
  fi
  # 2: requesters. done_ok FILE PORT PEER QPN
  done_ok() {
    SEEN=$(nj "$1" qp "$2" "$3" "$4" messages_posted messages_done messages acked_bytes) || return 1
    local p d m b; read -r p d m b <<<"$SEEN"
    SEEN="posted $p, done $d of $m, acked_bytes $b"
    [ "$p" = "$MSGS" ] && [ "$d" = "$MSGS" ] && [ "$m" = "$MSGS" ] && [ "$b" = "$BYTES" ]
  }
  expect "$n.2 h0's requester QP 0x22 -> 10.0.9.2 (switch side)" "$MSGS of $MSGS done, acked_bytes $BYTES" done_ok "$S1" h0 10.0.9.2 0x22
  expect "$n.2 n0's requester QP 0x11 -> 10.0.0.2 (hosts side, on the link)" "$MSGS of $MSGS done, acked_bytes $BYTES" done_ok "$S2" n0 10.0.0.2 0x11
  # 3: responders. rx_ok FILE PORT PEER QPN (the requester's acked_bytes: SENT)
  rx_ok() {
    SEEN=$(nj "$1" qp "$2" "$3" "$4" role rx_messages rx_bytes) || return 1
    local r m b; read -r r m b <<<"$SEEN"
    SEEN="$r: rx_messages $m, rx_bytes $b; the requester's acked_bytes $SENT"
    [ "$m" = "$MSGS" ] && [ "$b" = "$BYTES" ] && [ "$SENT" = "$BYTES" ]
  }
  SENT=$(nj "$S2" qp n0 10.0.0.2 0x11 acked_bytes) || true
  expect "$n.3 h0 received n0's messages (QP 0x11)" "rx_messages $MSGS, rx_bytes $BYTES = n0's acked_bytes" rx_ok "$S1" h0 10.0.9.2 0x11
  SENT=$(nj "$S1" qp h0 10.0.9.2 0x22 acked_bytes) || true
  expect "$n.3 n0 received h0's messages (QP 0x22)" "rx_messages $MSGS, rx_bytes $BYTES = h0's acked_bytes" rx_ok "$S2" n0 10.0.0.2 0x22
  # 4: the switch's books.
  books_ok() {
    local line; line=$(grep '^packets: ' "$T/sw$n.log" || echo "no 'packets:' line")
    SEEN="summary '$line'; stats totals.balanced $(json_get "$S1" "j['totals']['balanced']" 2>&1)"
    [[ "$line" == *'-> balanced' ]] && json_true "$S1" "j['totals']['balanced'] is True" 2>/dev/null
  }
  expect "$n.4 the switch's books" "summary '... -> balanced', totals.balanced True" books_ok
  log "case $n: switch drops $(json_get "$S1" "j.get('drops')"); n0's wire: $(json_get "$S2" "'ipackets {ipackets} opackets {opackets}'.format(**j['ports'][0]['wire']['ethdev'])"), its ports[].rx_packets/tx_packets (the summary's row): $(json_get "$S2" "'%s/%s' % (j['ports'][0]['rx_packets'], j['ports'][0]['tx_packets'])")"
  # 5: ICRC.
  icrc_ok() { SEEN="h0 $(nj "$S1" host h0 rx_icrc_bad), n0 $(nj "$S2" host n0 rx_icrc_bad)"; [ "$SEEN" = "h0 0, n0 0" ]; }
  expect "$n.5 ICRC errors (host.rx_icrc_bad)" "h0 0, n0 0" icrc_ok
  # 7: loss recovered by go-back-N.
  if [ -n "$faults" ]; then
    gbn_ok() {
      local d k r t
      d=$(nj "$S1" faults pl) k=$(nj "$S1" qp h0 10.0.9.2 0x22 naks_received retransmitted timeouts) || true
      read -r k r t <<<"$k"
      SEEN="pl dropped $d; h0's requester: naks_received $k, retransmitted $r, timeouts $t"
      [[ "$d$k" =~ ^[0-9]+$ ]] && [ "$d" -gt 0 ] && [ "$k" -gt 0 ]
    }
    expect "$n.7 pl's lost frames recovered by go-back-N" "dropped > 0, NAKs > 0 (and 2, 3: all complete)" gbn_ok
  fi
}

T_START=$(now_ms)
run_case 1 ""
run_case 2 ", faults: {direction: tx, drop: 0.01}"
log "run time $(fmt_ms $(($(now_ms) - T_START))) s"
finish
