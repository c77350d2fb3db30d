#!/bin/bash
# tools/roceswitch-lab on experiments/uplink_skew.yaml: eight elephants over eight equal uplinks,
# lossless (PFC on priority 3). Per-packet policies spread the flows and reach the ideal; ECMP's
# hash puts two flows on some uplinks and none on others, so it loses throughput (through PFC
# pauses, not drops) and keeps every flow in order. Checks, from `roceswitch-lab run --json`:
#   - spray, drill and per_packet_quality: goodput_fraction >= 0.90
#   - ecmp: goodput_fraction <= 0.85 AND at least 0.10 below the lowest of the others. Its
#     collisions (fixed by the experiment's QPs and seed: two uplinks carry two flows, two
#     idle) cap it at 0.763 even with perfect PFC ((2 x 1 + 4 x 0.95) / (8 x 0.95) links), and
#     it measures ~0.76; the others measure ~0.97. So ecmp sits ~0.09 under its threshold and
#     > 0.2 under the others, and the others 0.07 over theirs: a collision pattern can only
#     change by editing the experiment or its seed (the hash is deterministic), not from run
#     to run.
#   - out_of_order_fraction is 0 for ecmp (one path per flow) and a number for the others
#   - no drops at all during the runs (lossless_drops 0, every reason but shutdown_flush 0)
#   - every run wrote its files: summary.csv, per-run series CSVs and, with matplotlib, PNGs
# plus `roceswitch-lab --help` and bad input (unknown policy, unknown parameter, a bad
# experiment file: exit 2 with a message naming the problem, nothing run).
#
# The emulated hosts run inside the switch's one worker: when other processes take the CPUs
# the senders fall behind real time and the policies' goodput drops with them, unevenly. The
# lab reports per run worker_cpu_share (how much of the time the polling worker had a CPU)
# and emulator_realtime (the unpaused senders' rate over their offered rate; spray never
# pauses a sender). When either says the machine was busy the run is retried once; if it is
# still busy the checks that hold under any load (ordering, drops, ecmp below the per-packet
# policies' best) are still made and the goodput thresholds are reported as skipped (exit 77).
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
# shellcheck source=lab_lib.sh
source "$(dirname "$0")/lab_lib.sh"
require_lab

EXP="$REPO_ROOT/experiments/uplink_skew.yaml"
# A busy machine: the worker thread (a busy poller) was on a CPU less than CPU_MIN of the time
# in some run (from the kernel's schedstat), or spray's senders, which nothing pauses, sent
# less than REALTIME_MIN of their rate. On a quiet machine these are ~1.0 and ~0.97.
CPU_MIN=0.9
REALTIME_MIN=0.93

T="$(mktemp -d -t rs-lab.XXXXXX)"
trap 'rm -rf "$T"' EXIT

# --- help and bad input ------------------------------------------------------------------
help_ok() {
  "$PY" "$LAB" --help >"$T/help.txt" 2>&1 || return 1
  local w
  for w in 'EXPERIMENT FILE' 'experiment:' 'group:' 'receivers:' 'ideal_gbps:' 'series_ms:' '--policies' \
           'NAME:param=value' 'goodput_fraction' 'out_of_order_fraction' 'max_queue_bytes' 'member_share'; do
    grep -qF -- "$w" "$T/help.txt" || { echo "    --help does not mention '$w'" >&2; return 1; }
  done
  "$PY" "$LAB" run --help >/dev/null 2>&1 || { echo "    run --help failed" >&2; return 1; }
}
check "roceswitch-lab --help documents the experiment file, --policies and the figures" help_ok

# expect_error NAME WANT_TEXT ARGS...: exit 2, the text on stderr, no run started (no stats file).
expect_error() {
  local name="$1" want="$2" rc
  shift 2
  set +e
  "$PY" "$LAB" "$@" >"$T/$name.out" 2>"$T/$name.err"
  rc=$?
  set -e
  sed 's/^/    | /' "$T/$name.err" | head -n 5
  eq "$name exit code" "$rc" 2 || return 1
  grep -qF -- "$want" "$T/$name.err" || { echo "    stderr lacks: $want" >&2; return 1; }
  if ls "$T/$name.dir"/*.json >/dev/null 2>&1; then echo "    a run was started" >&2; return 1; fi
}
check "unknown policy: exit 2, names it" expect_error unknown "unknown routing policy 'nosuch_policy'" \
  run "$EXP" --policies ecmp,nosuch_policy --duration 1 --build "$BUILD" --out "$T/unknown.dir"
check "unknown policy parameter: exit 2, names it" expect_error param "policy 'drill' has no parameter 'bogus'" \
  run "$EXP" --policies 'drill:bogus=1' --duration 1 --build "$BUILD" --out "$T/param.dir"
check "malformed --policies: exit 2" expect_error syntax "has no policy before it" \
  run "$EXP" --policies 'd=2,spray' --duration 1 --build "$BUILD" --out "$T/syntax.dir"
sed 's/^  group: uplinks$/  group: nosuch_group/' "$EXP" >"$T/bad_group.yaml"
check "experiment naming a missing group: exit 2, file:line: key: reason" expect_error badgroup \
  "bad_group.yaml:$(grep -n '^  group: nosuch_group' "$T/bad_group.yaml" | cut -d: -f1): experiment.group: no nexthop group 'nosuch_group'" \
  run "$T/bad_group.yaml" --policies ecmp --duration 1 --build "$BUILD" --out "$T/badgroup.dir"
grep -v '^experiment:\|^  name: uplink_skew\|^  duration_s:\|^  group: uplinks\|^  receivers:\|^  series_ms:' "$EXP" >"$T/no_exp.yaml"
check "config without an experiment: section: exit 2" expect_error noexp "experiment: missing" \
  run "$T/no_exp.yaml" --policies ecmp --duration 1 --build "$BUILD" --out "$T/noexp.dir"
check "missing build: exit 2, says how to build" expect_error nobuild "bash tools/build.sh build" \
  run "$EXP" --policies ecmp --duration 1 --build "$T/nobuild" --out "$T/nobuild.dir"

# --- the experiment ----------------------------------------------------------------------
POLICIES=ecmp,spray,drill,per_packet_quality
run_lab() {
  local n="$1" rc
  log "attempt $n: roceswitch-lab run uplink_skew.yaml --policies $POLICIES --duration 3 --json"
  set +e
  timeout 240 "$PY" "$LAB" run "$EXP" --policies "$POLICIES" --duration 3 --json --build "$BUILD" \
    --out "$T/out$n" >"$T/lab$n.json" 2>"$T/lab$n.err"
  rc=$?
  set -e
  sed 's/^/    | /' "$T/lab$n.err" | grep -v '^    | \[' | tail -n 12
  [ "$rc" -eq 0 ] || die "roceswitch-lab exited $rc (output in $T/lab$n.err)"
  RESULT="$T/lab$n.json"
  OUT="$T/out$n"
}
busy_reason() {  # why the last run's figures describe the machine more than the policies
  "$PY" - "$RESULT" "$CPU_MIN" "$REALTIME_MIN" <<'EOF'
import json, sys
runs = json.load(open(sys.argv[1]))['runs']
cpu_min, rt_min = float(sys.argv[2]), float(sys.argv[3])
why = ['%s: worker on a CPU %.0f%% of the time' % (r['policy'], 100 * r['worker_cpu_share'])
       for r in runs if r.get('worker_cpu_share') is not None and r['worker_cpu_share'] < cpu_min]
# None: every sender received PFC (spray on a loaded worker can be paused too), so none can
# say; the CPU share above still does.
why += ['%s: unpaused senders at %.0f%% of their rate' % (r['policy'], 100 * r['emulator_realtime'])
        for r in runs if r['policy'] == 'spray' and r.get('emulator_realtime') is not None
        and r['emulator_realtime'] < rt_min]
print('; '.join(why))
EOF
}

run_lab 1
WHY="$(busy_reason)"
if [ -n "$WHY" ]; then
  log "busy machine ($WHY): waiting 10 s and running again"
  sleep 10
  run_lab 2
  WHY="$(busy_reason)"
fi
BUSY=0
[ -z "$WHY" ] || BUSY=1

# claims RESULT BUSY: every check on the --json output, one line each; exit 1 if one failed.
claims() {
  "$PY" - "$RESULT" "$BUSY" <<'EOF'
import json, math, sys
doc = json.load(open(sys.argv[1]))
busy = sys.argv[2] == '1'
runs = {r['policy']: r for r in doc['runs']}
from claims import check, done, fail, num

check(sorted(runs) == sorted(['ecmp', 'spray', 'drill', 'per_packet_quality']), 'one run per policy')
for p, r in sorted(runs.items()):
    check('error' not in r, '%s ran (%s)' % (p, r.get('error', 'ok')))
    for k in ('goodput_fraction', 'out_of_order_fraction', 'max_queue_bytes', 'drops'):
        check(num(r.get(k)), '%s: %s is a number (%s)' % (p, k, r.get(k)))
    share = r.get('member_share') or []
    check(len(share) == 8 and abs(sum(share) - 1) < 1e-4, '%s: member_share has 8 shares summing to 1' % p)
    check(r.get('drops') == 0 and r.get('lossless_drops') == 0,
          '%s: lossless, no drops (drops %s, lossless_drops %s, by reason %s)'
          % (p, r.get('drops'), r.get('lossless_drops'), r.get('drops_by_reason')))
    check(r.get('balanced') is True, '%s: the switch\'s counters balance' % p)
e = runs['ecmp']
others = [runs[p] for p in ('spray', 'drill', 'per_packet_quality')]
check(e['out_of_order_fraction'] == 0 and e['late'] == 0,
      'ecmp: every flow in order (out_of_order_fraction %s, late %s)' % (e['out_of_order_fraction'], e['late']))
check(min(e['member_share']) == 0, 'ecmp: hash collisions leave an uplink idle (shares %s)'
      % ['%.3f' % s for s in e['member_share']])
check(e['pfc_frames_sent'] > 0, 'ecmp: collisions cost PFC pauses (%d frames)' % e['pfc_frames_sent'])
best = max(r['goodput_fraction'] for r in others)
check(e['goodput_fraction'] <= best - 0.10,
      'ecmp (%.3f) at least 0.10 below the best per-packet policy (%.3f)' % (e['goodput_fraction'], best))
if busy:
    print('    SKIP goodput thresholds: the machine is too busy for the emulator to keep real time')
else:
    for r in others:
        check(r['goodput_fraction'] >= 0.90, '%s: goodput_fraction %.3f >= 0.90' % (r['policy'], r['goodput_fraction']))
    low = min(r['goodput_fraction'] for r in others)
    check(e['goodput_fraction'] <= 0.85 and e['goodput_fraction'] <= low - 0.10,
          'ecmp: goodput_fraction %.3f <= 0.85 and >= 0.10 below the lowest other (%.3f)'
          % (e['goodput_fraction'], low))
print('    goodput: ' + ', '.join('%s %.3f' % (p, r['goodput_fraction']) for p, r in runs.items()))
done()
EOF
}
check "the experiment's claims (ordering, losslessness, ecmp below per-packet policies)" claims

files_ok() {
  local f
  for f in summary.csv summary.json 01-ecmp.series.csv 02-spray.series.csv 03-drill.series.csv \
           04-per_packet_quality.series.csv 01-ecmp.yaml 01-ecmp.json 01-ecmp.series.jsonl; do
    [ -s "$OUT/$f" ] || { echo "    missing: $OUT/$f" >&2; return 1; }
  done
  [ "$(wc -l <"$OUT/summary.csv")" -eq 5 ] || { echo "    summary.csv: not a header and 4 rows" >&2; return 1; }
  grep -q '^ *policy: spray' "$OUT/02-spray.yaml" || { echo "    02-spray.yaml does not set policy: spray" >&2; return 1; }
  if grep -q '^experiment' "$OUT/01-ecmp.yaml"; then echo "    the run config kept experiment:" >&2; return 1; fi
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    for f in throughput_per_member.png queue_depth_per_uplink.png flow_goodput.png; do
      [ -s "$OUT/$f" ] || { echo "    missing plot: $f" >&2; return 1; }
    done
  else
    log "python3-matplotlib missing: plots not checked"
  fi
}
check "summary CSV, per-run configs, series CSVs and plots written" files_ok

if [ "$FAILURES" -eq 0 ] && [ "$BUSY" -eq 1 ]; then
  log "SKIP (goodput thresholds only): the machine was busy twice ($WHY); all $CHECKS checks that hold under load passed"
  exit 77
fi
finish
