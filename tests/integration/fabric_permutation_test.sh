#!/bin/bash
# Permutation traffic over RoCE NICs on a leaf-spine of 4 spines and 4 leaves
# (configs/fabric_permutation.yaml, 3 ms of virtual time): ecmp's goodput, averaged over four
# permutations, lies between 50 % and 75 % of the ideal (hash collisions); spray and
# per_packet_quality keep 90 % or more with NICs that place out-of-order data, and far less with
# go-back-N NICs, whose retransmissions the reordering causes. Printed side by side.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
command -v "$PY" >/dev/null || { log "SKIP: no $PY"; exit 77; }

T="$(mktemp -d -t rs-fabperm.XXXXXX)"
trap 'rm -rf "$T"' EXIT
CFG="$REPO_ROOT/configs/fabric_permutation.yaml"

# run NAME POLICY REORDER SEED: one run, its stats in $T/NAME.json. No EAL options: the program
# picks its own (no hugepages here) and sizes the heap for 8 switches.
run() {
  sed -e "s/policy: ecmp/policy: $2/" -e "s/reorder: placement/reorder: $3/" -e "s/seed: 3}/seed: $4}/" "$CFG" >"$T/$1.yaml"
  timeout 120 "$ROCESWITCH" -- --config "$T/$1.yaml" --stats-json "$T/$1.json" --quiet >"$T/$1.log" 2>&1 ||
    { sed 's/^/    | /' "$T/$1.log" | tail -n 5; return 1; }
}

runs() {
  for s in 1 2 3 4; do run "ecmp$s" ecmp placement "$s" || return 1; done
  for p in spray per_packet_quality; do
    run "$p" "$p" placement 3 && run "$p-gbn" "$p" go_back_n 3 || return 1
  done
}
check "ten runs of the permutation fabric" runs

claims() {
  "$PY" - "$T" <<'PY'
import json, sys
d = sys.argv[1]
def run(name):
    j = json.load(open(f'{d}/{name}.json'))
    assert j['fabric']['totals']['balanced'], name + ': the books do not balance'
    assert all(s['lossless_drops'] == 0 for s in j['switches']), name + ': lossless drops'
    h = j['hosts']
    return h['goodput']['fraction'], sum(x['retransmitted'] for x in h['list']), sum(x['out_of_order'] for x in h['list'])
rows = {f'ecmp (seed {s})': run(f'ecmp{s}') for s in (1, 2, 3, 4)}
for p in ('spray', 'per_packet_quality'):
    rows[f'{p}, placement'] = run(p)
    rows[f'{p}, go-back-N'] = run(p + '-gbn')
print(f"    {'policy, NIC':<32} {'goodput':>8} {'retransmits':>12} {'out of order':>13}")
for k, (g, r, o) in rows.items():
    print(f'    {k:<32} {g:>8.3f} {r:>12} {o:>13}')
ecmp = sum(rows[f'ecmp (seed {s})'][0] for s in (1, 2, 3, 4)) / 4
print(f'    ecmp, mean of 4 permutations     {ecmp:>8.3f}   (1 - 1/e = 0.632)')
bad = []
if not 0.50 <= ecmp <= 0.75: bad.append(f'ecmp mean {ecmp:.3f} outside [0.50, 0.75]')
for p in ('spray', 'per_packet_quality'):
    g, gb = rows[f'{p}, placement'][0], rows[f'{p}, go-back-N'][0]
    if g < 0.90: bad.append(f'{p} with placement {g:.3f} < 0.90')
    if gb > 0.6 * g: bad.append(f'{p} with go-back-N {gb:.3f} is not far below placement {g:.3f}')
    if rows[f'{p}, go-back-N'][1] == 0: bad.append(f'{p} with go-back-N retransmitted nothing')
for b in bad: print('    ' + b)
sys.exit(1 if bad else 0)
PY
}
check "ecmp 50-75 % of ideal, spray and per_packet_quality >= 90 % with placement NICs, far less with go-back-N" claims
finish
