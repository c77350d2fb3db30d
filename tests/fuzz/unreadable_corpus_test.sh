#!/bin/bash
# The fuzz harness's own bad input: a corpus file that cannot be read fails its target, naming
# the file (exit 1), and is never skipped in silence. Usage: unreadable_corpus_test.sh BUILD_DIR
set -euo pipefail
BUILD="$1"
TOP="$(cd "$(dirname "$0")/../.." && pwd)"
T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/regressions/mac_control"
ln -s "$T/does-not-exist" "$T/regressions/mac_control/dangling"
set +e
/usr/bin/python3 "$TOP/perf/fuzz_all" --build "$BUILD" --runs 0 --targets mac_control --regressions "$T/regressions" >"$T/out" 2>&1
rc=$?
set -e
if [ "$rc" -ne 1 ]; then
  echo "fuzz_all exited $rc with an unreadable corpus file, expected 1:"; cat "$T/out"; exit 1
fi
if ! grep -q "fuzz: mac_control: corpus file $T/regressions/mac_control/dangling: No such file or directory" "$T/out"; then
  echo "fuzz_all did not name the unreadable file:"; cat "$T/out"; exit 1
fi
# And the same target with its real corpus passes: the failure above was the file's.
/usr/bin/python3 "$TOP/perf/fuzz_all" --build "$BUILD" --runs 0 --targets mac_control >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
echo "ok: an unreadable corpus file fails its target and is named"
