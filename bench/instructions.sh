#!/usr/bin/env bash
# Instructions per event of the event-rate benchmark, counted by valgrind
# (cachegrind): deterministic, so two builds compare on a noisy host where
# wall-clock rates move by 10 % or more from run to run (docs/performance.md).
# Marginal cost: the 64 senders x 8 paths incast at two message counts, and
# the difference in instructions over the difference in events, so set-up
# (connections, fabrics, memory) cancels out. Run on demand (not in CI):
#   bench/instructions.sh [build-rel/mrct [OTHER_BUILD/mrct]]
set -euo pipefail
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
count() {  # count BIN MESSAGES -> "instructions events frames"
  local err json
  err=$(mktemp) json=$(mktemp)
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null "$1" simulate --senders 64 --paths 8 \
    --messages "$2" --size 262144 2>"$err" >"$json"
  local ir
  ir=$(grep "I *refs" "$err" | awk '{print $NF}' | tr -d ,)
  /usr/bin/python3 -c "import json; j=json.load(open('$json')); print($ir, j['events'], j['frames'])"
  rm -f "$err" "$json"
}
echo "| build | instructions (32 msgs) | events | per event (marginal, 16 -> 32 msgs) | per frame (marginal) |"
echo "|---|---|---|---|---|"
for bin in "${@:-build-rel/mrct}"; do
  read -r i16 e16 f16 < <(count "$bin" 16)
  read -r i32 e32 f32 < <(count "$bin" 32)
  /usr/bin/python3 -c "print(f'| $bin | {$i32/1e6:.0f} M | {$e32} | {($i32-$i16)/($e32-$e16):.0f} | {($i32-$i16)/($f32-$f16):.0f} |')"
done
