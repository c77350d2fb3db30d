#!/usr/bin/env bash
# Every test: installs what is missing, builds a release tree and an AddressSanitizer +
# UndefinedBehaviorSanitizer tree (clang, with the libFuzzer targets) from scratch when absent,
# runs all suites (unit, integration, e2e, lab, soak) in the first and unit + integration +
# fuzz in the second, and ends with one summary line.
set -uo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
cd "$top"
bash tools/deps.sh || exit 1
bash tools/build.sh build || exit 1
# The sanitizer tree is clang's: it also carries libFuzzer's coverage and the fuzz targets
# (tests/fuzz), so one tree serves both. -O1 -g1 (line tables, enough for sanitizer stack
# traces): full -g at -O2 made this tree's compile three times as long.
# A build-asan from before (GCC, no fuzz targets) is made again: build.sh keeps a tree's setup.
if [ -f build-asan/build.ninja ] && ! grep -q 'fuzz_frames' build-asan/build.ninja; then
  echo "test: build-asan predates the clang tree with fuzz targets; building it again"
  rm -rf build-asan
fi
CC=clang CXX=clang++ bash tools/build.sh build-asan -Db_sanitize=address,undefined -Db_lundef=false \
  -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 -Dperf=false -Dfuzz=true || exit 1

status=0
echo "test: release build, all suites"
meson test -C build --print-errorlogs --num-processes 2 || status=1
echo "test: sanitizer build, unit + integration + fuzz (each target's corpus, then 20 s)"
ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  meson test -C build-asan --suite unit --suite integration --suite fuzz --print-errorlogs --num-processes 2 \
  --timeout-multiplier 3 || status=1

# One closing line over both runs, counted from meson's own logs.
/usr/bin/python3 - build/meson-logs/testlog.json build-asan/meson-logs/testlog.json <<'PY'
import json, sys
ok = bad = skip = 0
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line).get("result")
        if r in ("OK", "EXPECTEDFAIL"): ok += 1
        elif r == "SKIP": skip += 1
        else: bad += 1
print(f"tests: {ok} passed, {bad} failed, {skip} skipped")
PY
exit $status
