# The lab tests' common start (sourced after ../integration/common.sh): the binary, Debian's
# Python with yaml (else SKIP), LAB and BUILD (the lab runs BUILD/app/roceswitch), and the
# PYTHONPATH from which the snippets that judge a run's --json import claims.py.
require_lab() {
  require_binary
  command -v "$PY" >/dev/null || { log "SKIP: no $PY"; exit 77; }
  "$PY" -c 'import yaml' 2>/dev/null || { log "SKIP: $PY has no yaml (apt install python3-yaml)"; exit 77; }
  LAB="$REPO_ROOT/tools/roceswitch-lab"
  BUILD="$(cd "$(dirname "$ROCESWITCH")/.." && pwd)"
  [ "$BUILD/app/roceswitch" -ef "$ROCESWITCH" ] || die "$ROCESWITCH is not BUILD/app/roceswitch"
  export PYTHONPATH="$REPO_ROOT/tests/lab${PYTHONPATH:+:$PYTHONPATH}"
}
