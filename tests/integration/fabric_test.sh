#!/bin/bash
# roceswitch on a fabric file (configs/fabric_leafspine.yaml: 2 spines, 2 leaves of 4 hosts,
# 25 Gb/s, leaf1's hosts to their twins on leaf2 plus an incast on leaf2.h1): it runs its
# virtual time and writes the stats; two runs give the same counters (only the real time
# differs); the books balance; every flow arrives; the incast's PFC reaches the spines and
# leaf1 with no lossless drop; both spines carry traffic; --check-config reads the fabric; a
# bad fabric file is refused with file:line and the key path.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
command -v "$PY" >/dev/null || { log "SKIP: no $PY"; exit 77; }

T="$(mktemp -d -t rs-fabric.XXXXXX)"
trap 'rm -rf "$T"' EXIT
CFG="$REPO_ROOT/configs/fabric_leafspine.yaml"

fabric_run() {
  local n="$1" rc
  set +e
  # shellcheck disable=SC2046
  timeout 120 "$ROCESWITCH" $(eal_args "fab$n") -- --config "$CFG" --stats-json "$T/s$n.json" >"$T/run$n.log" 2>&1
  rc=$?
  set -e
  sed 's/^/    | /' "$T/run$n.log" | tail -n 14 | cut -c1-160
  eq "exit code (run $n)" "$rc" 0
}

runs_ok() {
  fabric_run 1 && fabric_run 2 || return 1
  grep -q "balanced" "$T/run1.log" || { echo "    no books line" >&2; return 1; }
  "$PY" - "$T/s1.json" "$T/s2.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for j in (a, b):
    j['fabric'].pop('wall')
if a != b:
    print('    the two runs differ'); sys.exit(1)
print('    two runs: byte-identical counters')
PY
}
check "two runs of one fabric file give the same counters" runs_ok

J="$T/s1.json"
sw() { echo "next(s for s in j['switches'] if s['name'] == '$1')"; }
claims() {
  json_true "$J" "j['fabric']['totals']['balanced'] is True" || return 1
  json_true "$J" "abs(j['fabric']['virtual_s'] - 0.005) < 1e-9" || return 1
  # Every host of leaf2 receives: h1 its twin and the incast, h2..h4 their twins (ports 0..3).
  json_true "$J" "all($(sw leaf2)['ports'][p]['tx_packets'] > 1000 for p in range(4))" || return 1
  json_true "$J" "all(s['lossless_drops'] == 0 for s in j['switches'])" || return 1
  # The incast at leaf2.h1 pauses the spines' ports to leaf2 (down2), and a paused spine
  # pauses leaf1's uplink to it (up1 or up2, ports 4 and 5).
  json_true "$J" "sum(s['ports'][1]['pfc']['rx_xoff'][3] for s in j['switches'] if s['name'].startswith('spine')) > 0" || return 1
  json_true "$J" "sum($(sw leaf1)['ports'][p]['pfc']['rx_xoff'][3] for p in (4, 5)) > 0" || return 1
  json_true "$J" "all(c['directions'][0]['sent_frames'] > 0 for c in j['cables'] if c['name'].startswith('leaf1'))" || return 1
}
check "the books balance, every flow arrives, PFC crosses the spines losslessly, both spines carry traffic" claims

check_config() {
  "$ROCESWITCH" -- --config "$CFG" --check-config | grep -q "ok (fabric: 4 switches, 4 cables)"
}
check "--check-config reads a fabric file" check_config

bad_fabric() {
  sed 's/hosts_per_leaf: 4/hosts_per_leaf: 0/' "$CFG" >"$T/bad.yaml"
  local out rc
  set +e
  out="$("$ROCESWITCH" -- --config "$T/bad.yaml" --check-config 2>&1)"
  rc=$?
  set -e
  echo "    | $out"
  eq "exit code" "$rc" 2 && grep -q "bad.yaml:7: fabric.leaf_spine.hosts_per_leaf" <<<"$out"
}
check "a bad fabric file is refused with file:line and the key path" bad_fabric
finish
