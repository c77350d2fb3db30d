#!/bin/bash
# tools/roceswitch-lab on fabric experiments (a fabric file plus experiment:, run by roceswitch
# on a virtual clock), short: experiments/leafspine_permutation.yaml with three of its runs
# (ecmp, spray, spray with go-back-N NICs), one permutation (seed 1) and 1.5 ms of virtual time,
# and experiments/fabric_incast.yaml with cc=none and cc=dcqcn over 5 ms. Checks, from
# `roceswitch-lab run --json`, the printed tables and the files:
#   - permutation: a row per run, in order, each with its one seed; every run's books balanced
#     (the lab's figure and the stats' fabric.totals.balanced), no lossless drops; spray keeps
#     >= 0.85 of the ideal (measured 0.933) with placement NICs, spray with go-back-N NICs less
#     (0.235) and retransmits; ecmp keeps every flow in order; the lab's PFC figure is the stats'
#     sum over every switch port; the files (summary.csv with a row per run, seeds.csv,
#     hosts.csv, pauses.csv, cables.csv, per-run YAML with the run's keys set and no
#     experiment:, stats, series, log) and, with matplotlib, goodput.png, pause_tree.png,
#     cables.png, host_goodput.png;
#   - determinism: the spray run once more (alone) gives the same stats, fabric.wall apart, and
#     the same time series;
#   - incast: the victim (leaf3.h2, from leaf1.h2 over a spine the incast shares) gets at least
#     1.5x more under DCQCN than with PFC alone (measured 21.3 against 5.9 Gb/s), the ports
#     pause at least 5x less (measured ~20x), with PFC alone the pause tree reaches from leaf2
#     through the spines to the victim's sender (leaf1.h2), which DCQCN pauses >= 20x less
#     (only in the first burst: 37 against 3338 us) with >= 5x fewer PFC frames (152, 1434);
#   - link failure: experiments/fabric_link_failure.yaml's spray, spray_4spines and
#     spray_4spines_never runs, the cut moved to 0.5 ms of 2: spray's failover (neither end
#     transmitting into the cut cable) within 1 ms of virtual time (measured: by the next 10 us
#     sample, nothing sent into the dead cable), the lab's figure checked against the series'
#     tx_bytes of both ends, the dead member carrying nothing while the others (and the group
#     the converged routes moved to) carry more, the goodput back at 90 %, nothing black-holed,
#     no lossless drops; the routes' convergence (fabric.convergence_ms, default 1): with one
#     cable per pair (spray_4spines) the routes converged at 1.5 ms as the stats say (15 host
#     routes on 4 switches), every black-holed packet (measured 36) before it and none after
#     (the last loss <= 1 ms + the series' period after the cut: measured 960 us), each a
#     lossless drop before any queue (lossless_drops_before_queue); with convergence_ms: never
#     no update, more black-holed (54) and the hole lasting to the end (1480 us after the cut);
#     the books balanced, the link-failure and routes tables, the CSV columns, members.csv,
#     goodput_series.csv and failover.png;
#   - allreduce: experiments/fabric_allreduce.yaml's ring of 4 on one leaf and one per leaf
#     (ecmp), 1 MiB over 1.5 ms: both done, busbw > 0 and at most the link's payload rate
#     (2 % allowed: measured 24.40 and 24.26 of 24.51 Gb/s), the collectives table,
#     collectives.csv and busbw.png;
#   - flow sizes: experiments/fabric_fct.yaml's dcqcn/ecmp run, one seed, 6 ms (~4 s): the
#     slowdown-by-size table printed, at least 3 size classes, each with messages, the lab's
#     classes the stats' own fct_by_size (one seed: the same merge), the large classes' (>= 1 MiB)
#     median slowdown >= 0.9 (measured 1.28 to 1.79), fct_by_size.csv a row per class,
#     fct_slowdown.png, the run's cdf_file made absolute;
# plus --help (the fabric experiment's keys) and bad input (exit 2, nothing run).
# Deterministic (virtual time): no retries for a busy machine. ~25 s on a quiet machine, ~50 s
# on a busy one.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=../integration/common.sh
source "$(dirname "$0")/../integration/common.sh"
# shellcheck source=lab_lib.sh
source "$(dirname "$0")/lab_lib.sh"
require_lab

PERM="$REPO_ROOT/experiments/leafspine_permutation.yaml"
INCAST="$REPO_ROOT/experiments/fabric_incast.yaml"

T="$(mktemp -d -t rs-fablab.XXXXXX)"
trap 'rm -rf "$T"' EXIT

# --- help and bad input ------------------------------------------------------------------
help_ok() {
  "$PY" "$LAB" --help >"$T/help.txt" 2>&1 || return 1
  local w
  for w in 'FABRIC EXPERIMENTS' 'duration_ms:' 'runs:' 'seeds:' 'seed_key:' 'victims:' 'goodput_lines:' \
           '--runs L1,L2' '--seeds N1,N2' '--duration-ms MS' 'fabric.policy' 'hosts.nic.reorder' \
           'pause_tree.png' 'cables.png' 'host_goodput.png' 'goodput.png' 'leafspine_permutation.yaml' \
           'goodput_window_ms:' 'failover.png' 'busbw.png' 'failover_us' 'busbw_gbps' 'fabric_link_failure.yaml' \
           'fabric_allreduce.yaml' 'fabric_fct.yaml' 'fct_by_size.csv' 'fct_slowdown.png' \
           'fabric.convergence_ms' 'converged_ms' 'blackholed_after' 'lossless_drops_before_queue'; do
    grep -qF -- "$w" "$T/help.txt" || { echo "    --help does not mention '$w'" >&2; return 1; }
  done
}
check "roceswitch-lab --help documents fabric experiments" help_ok

expect_error() {  # NAME WANT_TEXT ARGS...: exit 2, the text on stderr, no run started
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
sed -n '/^fabric:/,$p' "$INCAST" >"$T/no_exp.yaml"
check "a fabric file without experiment: exit 2" expect_error noexp "experiment: missing" \
  run "$T/no_exp.yaml" --build "$BUILD" --out "$T/noexp.dir"
sed 's/hosts.nic.cc: none}/"traffic[5].seed": 1}/' "$INCAST" >"$T/bad_key.yaml"
check "a run's key that reaches nothing: exit 2, file:line: key" expect_error badkey \
  "bad_key.yaml:$(grep -n 'traffic\[5\]' "$T/bad_key.yaml" | cut -d: -f1): experiment.runs[0].set.traffic[5].seed: 'traffic[5].seed' reaches nothing" \
  run "$T/bad_key.yaml" --build "$BUILD" --out "$T/badkey.dir"
check "--runs naming no run: exit 2, lists the runs" expect_error badruns \
  "no run labelled 'nosuch' (experiment.runs: ecmp, spray," \
  run "$PERM" --runs ecmp,nosuch --build "$BUILD" --out "$T/badruns.dir"
check "a value the switch refuses (--set hosts.nic.cc=bogus): exit 2, roceswitch's reason" expect_error badcc \
  "expected 'dcqcn' or 'none'" \
  run "$PERM" --runs ecmp --seeds 1 --set hosts.nic.cc=bogus --build "$BUILD" --out "$T/badcc.dir"

# --- the runs ------------------------------------------------------------------------------
run_lab() {  # NAME ARGS...: roceswitch-lab run ARGS --json into $T/NAME.json, exit 0 wanted
  local name="$1" rc
  shift
  log "roceswitch-lab run $*"
  set +e
  timeout 100 "$PY" "$LAB" run "$@" --json --build "$BUILD" --out "$T/$name" >"$T/$name.json" 2>"$T/$name.err"
  rc=$?
  set -e
  grep -v '^  run ' "$T/$name.err" | sed 's/^/    | /' | tail -n 30
  [ "$rc" -eq 0 ] || die "roceswitch-lab exited $rc (output in $T/$name.err)"
}
run_lab perm "$PERM" --runs ecmp,spray,spray_gbn --seeds 1 --duration-ms 1.5

perm_claims() {
  "$PY" - "$T/perm.json" "$T/perm.err" <<'EOF'
import json, sys
from claims import check, done, fail, num
doc = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read().splitlines()
runs = {r['run']: r for r in doc['runs']}
check(list(runs) == ['ecmp', 'spray', 'spray_gbn'], 'one run per --runs label, in order (%s)' % list(runs))
check(doc.get('kind') == 'fabric' and doc.get('seeds') == [1] and doc.get('seed_key') == 'traffic[0].seed'
      and doc.get('duration_ms') == 1.5, 'kind fabric, seeds [1] over traffic[0].seed, 1.5 ms')
head = next((i for i, l in enumerate(printed) if l.startswith('run ') and 'of ideal' in l), None)
rows = [l.split()[0] for l in printed[head + 2:head + 5]] if head is not None else []
check(rows == ['ecmp', 'spray', 'spray_gbn'], 'the summary table has a row per run (%s)' % rows)
check(any(l.startswith('pause tree:') for l in printed), 'the pause tree was printed')
for n, r in runs.items():
    check('error' not in r, '%s ran (%s)' % (n, r.get('error', 'ok')))
    if 'error' in r:
        continue
    check([s['seed'] for s in r['seeds']] == [1], '%s: one seed, 1' % n)
    stats = json.load(open(r['seeds'][0]['files']['json']))
    check(r['balanced'] is True and stats['fabric']['totals']['balanced'] is True,
          '%s: the books balance (lab %s, stats fabric.totals.balanced %s)'
          % (n, r['balanced'], stats['fabric']['totals']['balanced']))
    check(r['lossless_drops'] == 0, '%s: no lossless drops (%s)' % (n, r['lossless_drops']))
    pfc = sum((p.get('pfc') or {}).get('frames_sent', 0) for s in stats['switches'] for p in s['ports'])
    check(r['pfc_frames_sent'] == pfc, '%s: PFC frames = the stats\' sum over switch ports (%s, %s)'
          % (n, r['pfc_frames_sent'], pfc))
    for k in ('goodput_gbps', 'goodput_fraction', 'retransmitted', 'out_of_order', 'pause_us', 'sim_ms',
              'wall_s', 'slowdown', 'frames_per_wall_s'):
        check(num(r.get(k)), '%s: %s is a number (%s)' % (n, k, r.get(k)))
    check(abs(r['sim_ms'] - 1.5) < 1e-6, '%s: 1.5 ms of virtual time (%s)' % (n, r['sim_ms']))
if not fail:
    e, s, g = runs['ecmp'], runs['spray'], runs['spray_gbn']
    check(s['goodput_fraction'] >= 0.85, 'spray: goodput %.3f >= 0.85 of the ideal' % s['goodput_fraction'])
    check(g['goodput_fraction'] < s['goodput_fraction'] and g['retransmitted'] > 0,
          'go-back-N spray %.3f < spray %.3f, and retransmits (%d)'
          % (g['goodput_fraction'], s['goodput_fraction'], g['retransmitted']))
    check(e['out_of_order'] == 0 and s['out_of_order'] > 0,
          'ecmp keeps flows in order (%d out of order), spray does not (%d)' % (e['out_of_order'], s['out_of_order']))
    print('    goodput: ' + ', '.join('%s %.3f' % (n, r['goodput_fraction']) for n, r in runs.items()))
done()
EOF
}
check "leafspine_permutation: the --json, the table and the claims" perm_claims

perm_files() {
  local f d="$T/perm"
  for f in summary.csv summary.json seeds.csv hosts.csv pauses.csv cables.csv \
           01-ecmp-seed1.yaml 01-ecmp-seed1.json 01-ecmp-seed1.series.jsonl 01-ecmp-seed1.log 03-spray_gbn-seed1.json; do
    [ -s "$d/$f" ] || { echo "    missing: $f" >&2; return 1; }
  done
  [ "$(wc -l <"$d/summary.csv")" -eq 4 ] || { echo "    summary.csv: not a header and 3 rows" >&2; return 1; }
  grep -q '^ *policy: spray' "$d/02-spray-seed1.yaml" || { echo "    02-spray-seed1.yaml does not set policy: spray" >&2; return 1; }
  grep -q 'reorder: go_back_n' "$d/03-spray_gbn-seed1.yaml" || { echo "    03-spray_gbn-seed1.yaml keeps placement" >&2; return 1; }
  grep -q 'seed: 1}' "$d/01-ecmp-seed1.yaml" || { echo "    01-ecmp-seed1.yaml does not set traffic[0].seed: 1" >&2; return 1; }
  if grep -q '^experiment' "$d/01-ecmp-seed1.yaml"; then echo "    the run's file kept experiment:" >&2; return 1; fi
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    for f in goodput.png pause_tree.png cables.png host_goodput.png; do
      [ -s "$d/$f" ] || { echo "    missing plot: $f" >&2; return 1; }
    done
  else
    log "python3-matplotlib missing: plots not checked"
  fi
}
check "leafspine_permutation: CSVs, per-run files and plots" perm_files

# --- determinism -----------------------------------------------------------------------------
run_lab again "$PERM" --runs spray --seeds 1 --duration-ms 1.5
same_stats() {
  "$PY" - "$T/perm/02-spray-seed1.json" "$T/again/01-spray-seed1.json" \
    "$T/perm/02-spray-seed1.series.jsonl" "$T/again/01-spray-seed1.series.jsonl" <<'EOF'
import json, sys
from claims import check, done
a, b = (json.load(open(p)) for p in sys.argv[1:3])
walls = [x['fabric'].pop('wall', None) for x in (a, b)]
check(all(walls), 'both stats have fabric.wall')
diff = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
check(not diff, 'the same config twice: identical stats but fabric.wall (differ: %s)' % (diff or 'none'))
check(open(sys.argv[3]).read() == open(sys.argv[4]).read(), 'and identical time series')
done()
EOF
}
check "determinism: a run repeated gives the same stats (fabric.wall apart) and series" same_stats

# --- the incast ------------------------------------------------------------------------------
run_lab incast "$INCAST" --runs cc=none,cc=dcqcn --duration-ms 5
incast_claims() {
  "$PY" - "$T/incast.json" <<'EOF'
import json, sys
from claims import check, done, fail
doc = json.load(open(sys.argv[1]))
runs = {r['run']: r for r in doc['runs']}
check(list(runs) == ['cc=none', 'cc=dcqcn'] and doc.get('victims') == ['leaf3.h2'],
      'two runs, victims [leaf3.h2] (%s, %s)' % (list(runs), doc.get('victims')))
for n, r in runs.items():
    check('error' not in r and r.get('balanced') is True and r.get('lossless_drops') == 0,
          '%s ran, books balanced, no lossless drops' % n)
if not fail:
    z, d = runs['cc=none'], runs['cc=dcqcn']
    check(d['victim_gbps'] >= 1.5 * z['victim_gbps'],
          'the victim gets >= 1.5x more under DCQCN (%.2f vs %.2f Gb/s)' % (d['victim_gbps'], z['victim_gbps']))
    check(d['pause_us'] * 5 <= z['pause_us'],
          'ports pause >= 5x less under DCQCN (%.0f vs %.0f us)' % (d['pause_us'], z['pause_us']))
    pz = {p['port'] for p in z['pauses']}
    check({'leaf2.up1', 'spine1.down1', 'leaf1.h2'} <= pz,
          'PFC alone: the tree runs leaf2.up1 -> spine1.down1 -> leaf1.h2, the victim\'s sender (%s)' % sorted(pz))
    # DCQCN's CNPs come after the first burst, which pauses every port a little (the victim's
    # sender too: the hash shares its uplink with an incast flow); after it nothing pauses.
    vz, vd = (sum(p['assert_ns'] for p in r['pauses'] if p['port'] == 'leaf1.h2') / 1e3 for r in (z, d))
    check(vd * 20 <= vz, 'DCQCN pauses the victim\'s sender >= 20x less (%.1f vs %.1f us)' % (vd, vz))
    check(d['pfc_frames_sent'] * 5 <= z['pfc_frames_sent'],
          'and sends >= 5x fewer PFC frames (%d vs %d)' % (d['pfc_frames_sent'], z['pfc_frames_sent']))
done()
EOF
}
check "fabric_incast: the victim's goodput and the pause tree, PFC alone against DCQCN" incast_claims

# --- link failure ------------------------------------------------------------------------------
run_lab linkfail "$REPO_ROOT/experiments/fabric_link_failure.yaml" --runs spray,spray_4spines,spray_4spines_never \
  --duration-ms 2 --set 'fabric.cable_events[0].at_ms=0.5'
linkfail_claims() {
  "$PY" - "$T/linkfail.json" "$T/linkfail.err" "$T/linkfail" <<'EOF'
import csv, json, os, sys
from claims import check, done, fail, num
doc = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read()
d = sys.argv[3]
runs = {r['run']: r for r in doc['runs']}
check(list(runs) == ['spray', 'spray_4spines', 'spray_4spines_never'], 'three runs (%s)' % list(runs))
for n, r in runs.items():
    check('error' not in r and 'failover_error' not in r and not r.get('routing_errors'),
          '%s ran (%s)' % (n, r.get('error', r.get('failover_error', r.get('routing_errors', 'ok')))))
    check(r.get('balanced') is True, '%s: the books balance' % n)
r = runs.get('spray', {})
if not fail:
    check(r['cut_cable'] == 'leaf1.up1-spine1.down1' and r['cut_ms'] == 0.5 and r['up_ms'] is None,
          'the cut: %s at %s ms, not back up within the run (%s)' % (r['cut_cable'], r['cut_ms'], r['up_ms']))
    check(num(r['failover_us']) and r['failover_us'] < 1000,
          'failover within 1 ms of virtual time (%s us, series every %s ms)' % (r['failover_us'], r['series_ms']))
    check(r['lost_link_down'] == 0, 'nothing sent into the dead cable (%s)' % r['lost_link_down'])
    check(r['lossless_drops'] == 0 and r['blackholed'] == 0,
          'no lossless drops (%s), nothing black-holed (%s): every switch keeps a way' % (r['lossless_drops'], r['blackholed']))
    # The failover from the series itself: both ends sent before the cut, neither after it.
    series = [json.loads(line) for line in open(r['seeds'][0]['files']['series'])]

    def tx(s, sw, port):
        return next(p['tx_bytes'] for x in s['switches'] if x['name'] == sw for p in x['ports'] if p['name'] == port)
    stop = 0.0005 + r['failover_us'] / 1e6
    for sw, port in (('leaf1', 'up1'), ('spine1', 'down1')):
        before = [tx(s, sw, port) for s in series if s['t_s'] <= 0.0005 + 1e-12]
        after = [tx(s, sw, port) for s in series if s['t_s'] >= stop - 1e-12]
        check(before[-1] > before[0] and len(set(after)) == 1,
              '%s.%s sent %d bytes before the cut and none from %.0f us after it'
              % (sw, port, before[-1] - before[0], r['failover_us']))
    dead = [m for m in r['members'] if m['dead'] and m['switch'] == 'leaf1']
    live = [m for m in r['members'] if not m['dead'] and m['switch'] == 'leaf1']
    check(len(dead) == 1 and dead[0]['port'] == 'up1' and dead[0]['before_gbps'] > 5 and dead[0]['down_gbps'] == 0,
          "leaf1's group: up1 carried %.1f Gb/s before the cut, 0 after" % (dead[0]['before_gbps'] if dead else -1))
    check(len(live) == 3 and r['survivors_gain_gbps'] > 0.8 * r['moved_gbps'] and live[0]['then'] == 'to_leaf2_2',
          'its other 3 members (then in %s, where the converged routes went) took it over (+%.1f of %.1f Gb/s)'
          % (live[0]['then'] if live else None, r['survivors_gain_gbps'], r['moved_gbps']))
    check(r['recover_us'] is not None and r['goodput_min_fraction'] > 0.5,
          'spray: the goodput keeps %.2f of before and is back at 90 %% (%s us)'
          % (r['goodput_min_fraction'], r['recover_us']))
    check('link failure (cable leaf1.up1-spine1.down1)' in printed, 'the link-failure table was printed')
    head = next(csv.reader(open(os.path.join(d, 'summary.csv'))))
    check({'failover_us', 'goodput_before_gbps', 'goodput_min_gbps', 'recover_us', 'steered_away',
           'converged_ms', 'routes_changed', 'blackholed_after', 'hole_end_us'} <= set(head),
          'summary.csv has the link-failure and convergence columns')
    for f in ('members.csv', 'goodput_series.csv'):
        check(os.path.getsize(os.path.join(d, f)) > 0, f + ' written')
    print('    spray: failover <= %g us, goodput %.1f -> min %.1f Gb/s' % (
        max(r['failover_us'], r['series_ms'] * 1e3), r['goodput_before_gbps'], r['goodput_min_gbps']))
    # Convergence (fabric.convergence_ms, default 1): every switch's routes recomputed 1 ms after
    # the cut. With one cable per leaf-spine pair spine1 has no way left to leaf1: the other
    # leaves' traffic to leaf1 through it (the ACKs) is black-holed until then, and not after.
    c, nv = runs['spray_4spines'], runs['spray_4spines_never']
    stats = json.load(open(c['seeds'][0]['files']['json']))
    ups = (stats['fabric'].get('routing') or {}).get('updates') or [{}]
    check(c['convergence_ms'] == 1 and c['converged_ms'] == 1.5 and [u.get('at_us') for u in ups] == [1500.0],
          'spray_4spines: routes converged at 1.5 ms, 1 ms after the cut (lab %s ms; stats updates at %s us)'
          % (c['converged_ms'], [u.get('at_us') for u in ups]))
    check(c['routes_changed'] == ups[0].get('routes') and c['routes_changed'] > 0
          and c['switches_changed'] == ups[0].get('switches') and c['routes_withdrawn'] == 0,
          'it changed %s host routes on %s switches, none withdrawn (the stats: %s on %s)'
          % (c['routes_changed'], c['switches_changed'], ups[0].get('routes'), ups[0].get('switches')))
    check(c['blackholed'] > 0 and c['blackholed_after'] == 0 and c['blackholed_split'] == 'exact'
          and c['blackholed_before'] == c['blackholed'],
          'spray_4spines: %d black-holed, all before the convergence (after: %s, split %s)'
          % (c['blackholed'], c['blackholed_after'], c['blackholed_split']))
    check(num(c['hole_end_us']) and c['hole_end_us'] <= 1000 + c['series_ms'] * 1e3,
          'the black hole ended by the convergence (its last loss %s us after the cut)' % c['hole_end_us'])
    lq = sum(s.get('lossless_drops_before_queue') or 0 for s in stats['switches'])
    check(c['lossless_drops'] == c['blackholed'] == lq and c['lossless_drops_before_queue'] == lq,
          'the black-holed ACKs (lossless priority) are lossless drops, before any queue (%s, %s, stats %s)'
          % (c['lossless_drops'], c['lossless_drops_before_queue'], lq))
    check(nv['convergence_ms'] == 'never' and nv['converged_ms'] is None
          and not json.load(open(nv['seeds'][0]['files']['json']))['fabric'].get('routing'),
          'spray_4spines_never: no routing update, none in the stats')
    check(nv['blackholed'] > c['blackholed'] and num(nv['hole_end_us']) and nv['hole_end_us'] > 1200,
          'without convergence the hole lasts to the end: %d black-holed (against %d), the last %s us after the cut'
          % (nv['blackholed'], c['blackholed'], nv['hole_end_us']))
    table = printed[printed.find('routes after the cut'):]
    row = next((ln.split() for ln in table.splitlines() if ln.startswith('spray_4spines ')), [])
    want = ['spray_4spines', '1', '1.5', str(c['switches_changed']), str(c['routes_changed']), '0',
            str(c['blackholed']), str(c['blackholed']), '0']
    check(row[:9] == want, 'the routes-after-the-cut table: %s' % ' '.join(row))
    print('    spray_4spines: converged at %s ms, %d black-holed, none after; never: %d, the last at +%.0f us' % (
        c['converged_ms'], c['blackholed'], nv['blackholed'], nv['hole_end_us'] or -1))
done()
EOF
}
check "fabric_link_failure: failover, members, goodput dip, convergence ending the black hole, books" linkfail_claims

# --- allreduce placement -------------------------------------------------------------------
run_lab allreduce "$REPO_ROOT/experiments/fabric_allreduce.yaml" --runs one_leaf/ecmp,one_per_leaf/ecmp \
  --duration-ms 1.5 --set 'collectives[0].size_bytes=1048576'
allreduce_claims() {
  "$PY" - "$T/allreduce.json" "$T/allreduce.err" "$T/allreduce" <<'EOF'
import json, os, sys
from claims import check, done, num
doc = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read()
runs = {r['run']: r for r in doc['runs']}
check(list(runs) == ['one_leaf/ecmp', 'one_per_leaf/ecmp'], 'two runs (%s)' % list(runs))
for n, r in runs.items():
    c = (r.get('collectives') or [{}])[0]
    check('error' not in r and r.get('collective_done') is True and c.get('done') is True,
          '%s: the allreduce finished' % n)
    check(num(r.get('busbw_gbps')) and 0 < r['busbw_gbps'] <= 1.02 * (r.get('link_payload_gbps') or 0),
          '%s: busbw %s Gb/s in (0, the link payload rate %s]' % (n, r.get('busbw_gbps'), r.get('link_payload_gbps')))
    check(num(c.get('time_us')) and c['time_us'] > 0 and c.get('size_bytes') == 1048576 and c.get('ranks') == 4,
          '%s: 4 ranks, 1 MiB in %s us' % (n, c.get('time_us')))
    check(r.get('lossless_drops') == 0 and r.get('balanced') is True, '%s: lossless, books balanced' % n)
hosts = [r['set'].get('collectives[0].hosts') for r in runs.values()]
check(hosts == [['leaf1.h1', 'leaf1.h2', 'leaf1.h3', 'leaf1.h4'], ['leaf1.h1', 'leaf2.h1', 'leaf3.h1', 'leaf4.h1']],
      'the placements: one leaf, one per leaf (%s)' % hosts)
check('collectives (stats collectives[]' in printed, 'the collectives table was printed')
check(os.path.getsize(os.path.join(sys.argv[3], 'collectives.csv')) > 0, 'collectives.csv written')
print('    busbw: ' + ', '.join('%s %.2f Gb/s' % (n, r.get('busbw_gbps') or 0) for n, r in runs.items()))
done()
EOF
}
check "fabric_allreduce: one leaf and one per leaf finish, busbw > 0" allreduce_claims

# --- flow sizes ------------------------------------------------------------------------------
run_lab fct "$REPO_ROOT/experiments/fabric_fct.yaml" --runs dcqcn/ecmp --seeds 1 --duration-ms 6
fct_claims() {
  "$PY" - "$T/fct.json" "$T/fct.err" "$T/fct" <<'EOF'
import csv, json, os, sys
from claims import check, done, fail
doc = json.load(open(sys.argv[1]))
printed = open(sys.argv[2]).read()
d = sys.argv[3]
runs = {r['run']: r for r in doc['runs']}
check(list(runs) == ['dcqcn/ecmp'], 'one run, dcqcn/ecmp (%s)' % list(runs))
r = runs.get('dcqcn/ecmp', {})
check('error' not in r, 'it ran (%s)' % r.get('error', 'ok'))
if not fail:
    rows = r.get('fct_by_size') or []
    check(len(rows) >= 3, 'at least 3 size classes (%d)' % len(rows))
    check(all(c['messages'] > 0 for c in rows), 'every class has messages (%s)' % [c['messages'] for c in rows])
    stats = json.load(open(r['seeds'][0]['files']['json']))
    keys = ('bytes_min', 'bytes_max', 'messages', 'fct_p50_us', 'fct_p99_us', 'slowdown_p50', 'slowdown_p99')
    check([{k: c[k] for k in keys} for c in rows] == [{k: c[k] for k in keys} for c in stats['fct_by_size']],
          "the lab's classes (merged from the hosts' histograms) are the stats' fct_by_size")
    large = [c for c in rows if c['bytes_min'] >= 1 << 20]
    check(large and all(c['slowdown_p50'] >= 0.9 for c in large),
          'classes >= 1 MiB: median slowdown >= 0.9 (%s)' % ', '.join(
              '%s %.2f' % (c['size_class'], c['slowdown_p50']) for c in large))
    check('completion-time slowdown by message size' in printed and 'dcqcn/ecmp msgs' in printed,
          'the slowdown-by-size table was printed')
    with open(os.path.join(d, 'fct_by_size.csv')) as fh:
        table = list(csv.DictReader(fh))
    check(len(table) == len(rows) and all(t['run'] == 'dcqcn/ecmp' and t['seed'] == '1' for t in table)
          and {'size_class', 'messages', 'fct_p50_us', 'fct_p99_us', 'slowdown_p50', 'slowdown_p99'} <= set(table[0]),
          'fct_by_size.csv: a row per class (%d), with run, seed and the figures' % len(table))
    conf = open(r['seeds'][0]['files']['config']).read()
    cdf = [l.split('cdf_file: ', 1)[1].split(',')[0] for l in conf.splitlines() if 'cdf_file: ' in l]
    check(len(cdf) == 1 and os.path.isabs(cdf[0]) and cdf[0].endswith('experiments/cdf/websearch.cdf'),
          "the run's cdf_file is made absolute (%s)" % cdf)
    print('    slowdown p50: ' + ', '.join('%s %.2f' % (c['size_class'], c['slowdown_p50']) for c in rows))
done()
EOF
  if "$PY" -c 'import matplotlib' 2>/dev/null; then
    [ -s "$T/fct/fct_slowdown.png" ] || { echo "    missing plot: fct/fct_slowdown.png" >&2; return 1; }
  else
    log "python3-matplotlib missing: fct_slowdown.png not checked"
  fi
}
check "fabric_fct: slowdown by message size (table, fct_by_size.csv, fct_slowdown.png)" fct_claims

new_plots() {
  "$PY" -c 'import matplotlib' 2>/dev/null || { log "python3-matplotlib missing: plots not checked"; return 0; }
  local f
  for f in linkfail/failover.png allreduce/busbw.png; do
    [ -s "$T/$f" ] || { echo "    missing plot: $f" >&2; return 1; }
  done
}
check "fabric_link_failure's failover.png, fabric_allreduce's busbw.png" new_plots

finish
