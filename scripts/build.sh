#!/usr/bin/env bash
# build.sh DIR [cmake args...]: configure (once) and build with Ninja.
set -euo pipefail
dir=$1
shift
cd "$(dirname "$0")/.."
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
fi
cmake --build "$dir" -j "$(nproc)"
