#!/usr/bin/env bash
# The main job on its embedded default: installs what is missing, builds, then runs roceswitch
# with no configuration (three emulated RoCE hosts incast into a fourth for ~10 s).
# Extra arguments go to roceswitch, e.g. tools/demo.sh -- --duration 30
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
bash "$top/tools/deps.sh"
bash "$top/tools/build.sh" build
exec "$top/build/app/roceswitch" "$@"
