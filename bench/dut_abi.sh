#!/usr/bin/env bash
# The cost of the DUT ABI (docs/dut-abi.md): the whole 1.2 plan against the
# reference as `sim`, as a library in-process (`so:...,isolate=none`) and
# isolated in a child process per case (`so:...`, the default). Wall and CPU
# seconds, median of N interleaved runs, --jobs 2.
#
#   bench/dut_abi.sh [N]        (BUILD=build by default)
set -euo pipefail
n=${1:-3}
build=${BUILD:-build}
plan=testplans/metaroce-1.2/plan.yaml
lib=$build/libmrct-reference-dut.so
duts=("sim" "so:$lib,isolate=none" "so:$lib")
out=$(mktemp -d)
for ((i = 0; i < n; i++)); do
    for d in "${duts[@]}"; do
        /usr/bin/time -f "%e %U %S" -o "$out/t" "$build/mrct" run "$plan" --dut "$d" --jobs 2 --out "$out/run" > /dev/null
        echo "$d $(cat "$out/t")" >> "$out/all"
    done
done
/usr/bin/python3 - "$out/all" <<'PY'
import sys, statistics
rows = {}
for line in open(sys.argv[1]):
    d, wall, user, sys_ = line.split()
    rows.setdefault(d, []).append((float(wall), float(user) + float(sys_)))
base = None
for d, v in rows.items():
    wall = statistics.median(x for x, _ in v)
    cpu = statistics.median(y for _, y in v)
    base = base or wall
    print(f"{d:60s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  ({wall / base:.1f}x sim's wall)")
PY
rm -rf "$out"
