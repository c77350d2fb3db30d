# shellcheck shell=bash
# What the e2e tests that run roceswitch in a network namespace share (sourced, not run):
# router_lib.sh (router_interfaces_test.sh) and bridge_test.sh. The scratch directory and the
# EXIT trap that removes everything a test made, the PASS/FAIL plumbing (expect), time and
# format helpers, and the switch's life: launched in its namespace on $T/switch.yaml, started
# (start_ok), driven through its control socket (ctl), required alive, stopped by SIGINT and its
# stats read (stop_switch). The topology, the configuration and the checks are the test's own.
# The sourcing script has sourced ../integration/common.sh and set ROCESWITCH and CTL before
# sourcing this; it names its namespaces in RIG_NETNS and its veths in RIG_LINKS (for cleanup),
# then calls make_scratch, and puts the switch in the namespace NS_SW.

ID=$$            # in every namespace and interface name, and in the DPDK file prefix (eal_args)
SW_PID=""        # the switch's PID while it runs
BG_PIDS=()       # other background processes of the test, killed at exit
RIG_NETNS=()     # the test's network namespaces, deleted at exit
RIG_LINKS=()     # the test's veths, deleted at exit (in case a half-finished setup left one in the root namespace)

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
