#!/bin/bash
# Stopping by signal is the normal way to end a long run (--duration 0). SIGINT and SIGTERM must
# both lead to a clean exit 0 within a few seconds, with the stats JSON written, the books
# balanced and nothing left queued (shutdown counts leftovers as shutdown_flush drops).
# A --workers 2 run of the demo must also end cleanly and deliver traffic.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary

T="$(mktemp -d -t rs-signal.XXXXXX)"
PIDS=()
cleanup() {
  # Only the switches this script started, by PID.
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT

# wait_for_line FILE REGEX SECONDS PID: wait until the log shows REGEX (or the process died).
wait_for_line() {
  local i
  for ((i = 0; i < $3 * 10; i++)); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    kill -0 "$4" 2>/dev/null || return 1
    sleep 0.1
  done
  return 1
}

# signal_run SIG: start the demo until signalled, send SIG after ~2 s of running, expect exit 0.
signal_run() {
  local sig="$1" log="$T/$1.log" json="$T/$1.json" pid rc i
  # shellcheck disable=SC2046
  "$ROCESWITCH" $(eal_args "$sig") -- --duration 0 --stats-json "$json" >"$log" 2>&1 &
  pid=$!
  PIDS+=("$pid")
  # The "running until SIGINT" line is logged after the signal handlers are installed, so a
  # signal sent after it can never hit DPDK's start-up with the default (killing) action.
  if ! wait_for_line "$log" 'running until SIGINT' 60 "$pid"; then
    sed 's/^/    | /' "$log"
    echo "    roceswitch did not report that it runs" >&2
    return 1
  fi
  sleep 2
  log "sending SIG$sig to $pid"
  local t0=$SECONDS
  kill -s "$sig" "$pid"
  # It must exit by itself within 10 s; otherwise it is killed and the check fails.
  for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    sed 's/^/    | /' "$log"
    echo "    still running 10 s after SIG$sig" >&2
    return 1
  fi
  set +e; wait "$pid"; rc=$?; set -e
  log "exited $rc $((SECONDS - t0)) s after SIG$sig"
  sed 's/^/    | /' "$log" | tail -n 12
  eq "exit code after SIG$sig" "$rc" 0 || return 1
  [ -s "$json" ] || { echo "    no stats JSON written" >&2; return 1; }
  json_true "$json" "j['totals']['balanced'] is True" || return 1
  json_true "$json" "j['totals']['queued'] == 0 and j['totals']['in_flight'] == 0" || return 1
  # It really ran: the demo's hosts sent and received traffic before the signal.
  json_true "$json" "j['totals']['received'] > 0 and j['totals']['sent'] > 0" || return 1
  # It ran about 2 s before the signal (a loose bound: the point is that it ran, not how long).
  json_true "$json" "j['elapsed_s'] >= 1.5" || return 1
}
check "SIGINT: exit 0, stats written, balanced, queued 0" signal_run INT
check "SIGTERM: exit 0, stats written, balanced, queued 0" signal_run TERM

workers_run() {
  local log="$T/w2.log" json="$T/w2.json" rc
  set +e
  # shellcheck disable=SC2046
  timeout 60 "$ROCESWITCH" $(eal_args w2) -- --workers 2 --duration 3 --stats-json "$json" >"$log" 2>&1
  rc=$?
  set -e
  sed 's/^/    | /' "$log" | tail -n 12
  eq "exit code (--workers 2)" "$rc" 0 || return 1
  [ -s "$json" ] || { echo "    no stats JSON written" >&2; return 1; }
  json_true "$json" "len(j['workers']) == 2" || return 1
  json_true "$json" "j['totals']['balanced'] is True and j['totals']['queued'] == 0" || return 1
  # h0 is the incast target: with 2 workers its traffic comes from the other worker's ports.
  json_true "$json" "[p for p in j['ports'] if p['name'] == 'h0'][0]['tx_packets'] > 0" || return 1
  json_true "$json" "all(w['loops'] > 0 for w in j['workers'])" || return 1
  log "h0 tx_packets $(json_get "$json" "[p for p in j['ports'] if p['name'] == 'h0'][0]['tx_packets']"), elapsed $(json_get "$json" "round(j['elapsed_s'], 2)") s"
  # Once-a-second totals (perf/linerate's rates): about one per second, time and counts never
  # going back, none past the final totals.
  log "samples: $(json_get "$json" "[(round(x['t_s'], 2), x['sent']) for x in j['samples']]")"
  json_true "$json" "1 <= len(j['samples']) <= 4" || return 1
  json_true "$json" "all(a['t_s'] < b['t_s'] and a['received'] <= b['received'] and a['sent'] <= b['sent'] for a, b in zip(j['samples'], j['samples'][1:]))" || return 1
  json_true "$json" "j['samples'][0]['sent'] > 0 and j['samples'][-1]['sent'] <= j['totals']['sent'] and j['samples'][-1]['received'] <= j['totals']['received']" || return 1
}
check "--workers 2 demo for 3 s: exit 0, balanced, h0 tx > 0, once-a-second samples" workers_run
finish
