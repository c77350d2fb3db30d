#!/bin/bash
# The embedded demo (no --config) keeps the lossless class lossless: for 4 s with one worker and
# with two, the PFC priority loses nothing while the lossy flow beside it is tail-dropped; the
# switch marks CE and sends PFC, the hosts receive it and every received ICRC is valid; the
# start-up lines show the buffer plan with the computed headroom, the live line the CE and PFC
# figures, and the summary says the lossless class held.
set -euo pipefail
ROCESWITCH="${1:-}"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
require_binary
command -v "$PY" >/dev/null || { log "SKIP: no $PY"; exit 77; }

T="$(mktemp -d -t rs-demo.XXXXXX)"
trap 'rm -rf "$T"' EXIT

demo_run() {
  local workers="$1" log="$T/demo$1.log" json="$T/demo$1.json" rc
  set +e
  # shellcheck disable=SC2046
  timeout 60 "$ROCESWITCH" $(eal_args "w$workers") -- --workers "$workers" --duration 4 --stats-json "$json" >"$log" 2>&1
  rc=$?
  set -e
  sed 's/^/    | /' "$log" | tail -n 9 | cut -c1-200
  eq "exit code (--workers $workers)" "$rc" 0 || return 1
  grep -q "computed minimum" "$log" || { echo "    no buffer plan with the computed headroom" >&2; return 1; }
  grep -q "|| CE +" "$log" || { echo "    the live line shows no CE/PFC figures" >&2; return 1; }
  grep -q "lossless held" "$log" || { echo "    the summary does not say the lossless class held" >&2; return 1; }
  json_true "$json" "j['lossless_drops'] == 0" || return 1
  json_true "$json" "j['totals']['balanced'] is True" || return 1
  # Priority 3 on h0 (port 0): marked, never dropped; the lossy queue 1 beside it is.
  json_true "$json" "j['ports'][0]['queues'][3]['ecn_marked'] > 0" || return 1
  json_true "$json" "set(j['ports'][0]['queues'][3]['drops']) <= {'shutdown_flush'}" || return 1
  json_true "$json" "j['ports'][0]['queues'][1]['drops'].get('tail_drop_bytes', 0) > 0" || return 1
  # PFC went out to each sender and each sender's host received it.
  json_true "$json" "all(j['ports'][p]['pfc']['pg'][3]['xoff_sent'] > 0 for p in (1, 2, 3))" || return 1
  json_true "$json" "all(j['ports'][p]['host']['rx_pfc_frames'] > 0 for p in (1, 2, 3))" || return 1
  json_true "$json" "all(p['host']['rx_icrc_bad'] == 0 for p in j['ports'])" || return 1
  log "workers $workers: h0 CE $(json_get "$json" "j['ports'][0]['queues'][3]['ecn_marked']"), PFC frames $(json_get "$json" "sum(p['pfc']['frames_sent'] for p in j['ports'])"), lossy drops $(json_get "$json" "j['ports'][0]['queues'][1]['drops'].get('tail_drop_bytes', 0)")"
}
check "demo, 1 worker: lossless class 0 drops, CE and PFC seen, lossy class dropped" demo_run 1
check "demo, 2 workers: the same across the handoff rings" demo_run 2
finish
