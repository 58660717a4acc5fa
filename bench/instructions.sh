#!/usr/bin/env bash
# Instructions per event of the event-rate benchmark, counted by valgrind
# (cachegrind): deterministic, so two builds compare on a noisy host where
# wall-clock rates move by 10 % or more from run to run (docs/performance.md).
# Marginal cost: the 64 senders x 8 paths incast at two message counts, and
# the difference in instructions over the difference in events, so set-up
# (connections, fabrics, memory) cancels out. Run on demand (not in CI):
#   bench/instructions.sh [--cache] [build-rel/mrct [OTHER_BUILD/mrct]]
# --cache also simulates the caches (D1 32 KiB; the last level modelled as
# this machine's 512 KiB L2 per core) and the branch predictor, and prints
# misses and mispredictions per event: also deterministic, and what decides
# most of the wall clock here (about 3 times slower).
set -euo pipefail
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
cache=0
if [ "${1:-}" = "--cache" ]; then cache=1; shift; fi
sim=(--cache-sim=no)
[ $cache = 1 ] && sim=(--cache-sim=yes --branch-sim=yes --D1=32768,8,64 --LL=524288,8,64)
count() {  # count BIN MESSAGES -> "instructions D1-misses LL-misses mispredicts events frames"
  local err json
  err=$(mktemp) json=$(mktemp)
  valgrind --tool=cachegrind "${sim[@]}" --cachegrind-out-file=/dev/null "$1" simulate --senders 64 --paths 8 \
    --messages "$2" --size 262144 2>"$err" >"$json"
  num() { grep "$1" "$err" | head -1 | sed 's/.*: *\([0-9,]*\).*/\1/' | tr -d , || true; }
  local ir d1 ll mp
  ir=$(grep "I *refs" "$err" | awk '{print $NF}' | tr -d ,)
  d1=$(num "D1  misses") ll=$(num "LLd misses") mp=$(num "Mispredicts:")
  /usr/bin/python3 -c "import json; j=json.load(open('$json')); print($ir, ${d1:-0}, ${ll:-0}, ${mp:-0}, j['events'], j['frames'])"
  rm -f "$err" "$json"
}
if [ $cache = 1 ]; then
  echo "| build | instructions (32 msgs) | per event | D1 misses / event | last-level (512 KiB) misses / event | mispredictions / event |"
  echo "|---|---|---|---|---|---|"
else
  echo "| build | instructions (32 msgs) | events | per event (marginal, 16 -> 32 msgs) | per frame (marginal) |"
  echo "|---|---|---|---|---|"
fi
for bin in "${@:-build-rel/mrct}"; do
  read -r i16 d16 l16 m16 e16 f16 < <(count "$bin" 16)
  read -r i32 d32 l32 m32 e32 f32 < <(count "$bin" 32)
  if [ $cache = 1 ]; then
    /usr/bin/python3 -c "e=$e32-$e16; print(f'| $bin | {$i32/1e6:.0f} M | {($i32-$i16)/e:.0f} | {($d32-$d16)/e:.1f} | {($l32-$l16)/e:.1f} | {($m32-$m16)/e:.1f} |')"
  else
    /usr/bin/python3 -c "print(f'| $bin | {$i32/1e6:.0f} M | {$e32} | {($i32-$i16)/($e32-$e16):.0f} | {($i32-$i16)/($f32-$f16):.0f} |')"
  fi
done
