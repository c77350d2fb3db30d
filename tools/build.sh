#!/usr/bin/env bash
# Configures (first time) and builds one build directory. Usage: tools/build.sh [DIR] [meson options...]
set -euo pipefail
top="$(cd "$(dirname "$0")/.." && pwd)"
dir="${1:-build}"
shift || true
cd "$top"
if [ ! -f "$dir/build.ninja" ]; then
  echo "build: configuring $dir $*"
  meson setup "$dir" "$@" >/dev/null
fi
echo "build: compiling $dir"
ninja -C "$dir" | tail -n 1
