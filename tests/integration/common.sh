# shellcheck shell=bash
# Shared helpers for the integration and e2e scripts (sourced, not run). They drive the real
# roceswitch binary, so every helper here is about processes, files and JSON, not C++.
# The sourcing script sets `set -euo pipefail` and ROCESWITCH before sourcing.

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PY=/usr/bin/python3             # Debian's python: it has scapy, which the oracle needs
# The test oracle (tests/oracle/): generates and checks pcaps, and holds the pcap helpers
# (count, empty, split, merge, ecmp). Independent of the switch's code.
ROCE_PCAP="$REPO_ROOT/tests/oracle/roce_pcap.py"
TEST_NAME="$(basename "$0" .sh)"
FAILURES=0
CHECKS=0

log() { printf '[%s] %s\n' "$TEST_NAME" "$*"; }
die() { printf '[%s] FAIL: %s\n' "$TEST_NAME" "$*" >&2; exit 1; }

# check DESCRIPTION COMMAND...: run one assertion, keep going on failure so the summary shows them all.
check() {
  local what="$1"; shift
  CHECKS=$((CHECKS + 1))
  if "$@"; then
    log "ok   $what"
  else
    log "FAIL $what"
    FAILURES=$((FAILURES + 1))
  fi
}

finish() {
  if [ "$FAILURES" -ne 0 ]; then
    log "SUMMARY: $FAILURES of $CHECKS checks failed"
    exit 1
  fi
  log "SUMMARY: all $CHECKS checks passed"
}

require_binary() {
  [ -n "${ROCESWITCH:-}" ] || die "usage: $0 PATH/TO/roceswitch"
  [ -x "$ROCESWITCH" ] || die "roceswitch binary '$ROCESWITCH' is not executable"
}

# The pcap tests need Debian's python with scapy (tests/oracle/) and tshark (third opinion).
require_pcap_tools() {
  "$PY" -c 'import scapy' 2>/dev/null || { log "SKIP: $PY has no scapy (apt install python3-scapy)"; exit 77; }
  command -v tshark >/dev/null || { log "SKIP: tshark not installed (apt install tshark)"; exit 77; }
}

# EAL options for one run: no hugepages, no PCI scan, no shared config, and a file prefix unique to
# this script, its PID and the run's tag so parallel meson tests never share DPDK runtime files.
eal_args() {
  local tag="$1"
  echo "--no-huge -m 1024 --no-pci --no-shconf --file-prefix=rs-${TEST_NAME}-${tag}-$$"
}

# json_get FILE EXPR: print a Python expression evaluated on the parsed JSON `j`.
json_get() {
  "$PY" -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# json_true FILE EXPR: succeed when the Python expression on `j` is true; print it otherwise.
json_true() {
  "$PY" - "$1" "$2" <<'EOF'
import json, sys
j = json.load(open(sys.argv[1]))
ok = eval(sys.argv[2])
if not ok:
    print('    expected true: %s' % sys.argv[2], file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# pcap_count FILE: number of frames in a pcap (read by the oracle: independent of the switch).
pcap_count() {
  "$PY" "$ROCE_PCAP" count "$1"
}

# empty_pcap FILE: a valid pcap with no packets (an rx side that never delivers anything).
empty_pcap() {
  "$PY" "$ROCE_PCAP" empty "$1"
}

# eq NAME GOT WANT: numeric equality with a message.
eq() {
  if [ "$2" -eq "$3" ]; then return 0; fi
  echo "    $1: got $2, expected $3" >&2
  return 1
}

# Runs the switch on $T/switch.yaml for $1 seconds, writing $T/stats.json; its output is shown
# indented and its exit code left in RC for the caller to judge.
run_switch() {
  log "running roceswitch for $1 s"
  set +e
  # shellcheck disable=SC2046
  "$ROCESWITCH" $(eal_args run) -- --config "$T/switch.yaml" --duration "$1" --stats-json "$T/stats.json" \
    --quiet >"$T/run.log" 2>&1
  RC=$?
  set -e
  sed 's/^/    | /' "$T/run.log"
}
