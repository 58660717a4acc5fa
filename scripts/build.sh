#!/usr/bin/env bash
# build.sh DIR [--target T]... [cmake args...]: configure (once) and build
# with Ninja: everything, or only the named targets (and what they need).
set -euo pipefail
dir=$1
shift
targets=()
while [ $# -ge 2 ] && [ "$1" = --target ]; do
  targets+=(--target "$2")
  shift 2
done
cd "$(dirname "$0")/.."
if [ ! -f "$dir/build.ninja" ]; then
  cmake -S . -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1 || { cat "$dir.configure.log"; exit 1; }
fi
cmake --build "$dir" -j "$(nproc)" "${targets[@]}"
