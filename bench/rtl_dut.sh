#!/usr/bin/env bash
# The RTL DUT's speed (docs/rtl.md, docs/performance.md): the whole 1.2 plan
# against the Verilated core (`--dut rtl`, a child process per case, and
# `rtl:isolate=none`, in the engine's process) beside `sim`, --jobs 2. Wall
# and CPU seconds (median of N interleaved runs), the clock edges the cores
# took (one per command) and model evaluations, and edges per second of wall
# and of CPU time (the whole run's CPU: engine, shell and RTL together).
#
#   bench/rtl_dut.sh [N]        (BUILD=build by default)
set -euo pipefail
n=${1:-3}
build=${BUILD:-build}
plan=testplans/metaroce-1.2/plan.yaml
out=$(mktemp -d)
for ((i = 0; i < n; i++)); do
    for d in sim rtl rtl-inproc; do
        spec=$d
        case $d in
        rtl) spec="rtl:stats=$out/stats.$d.$i" ;;
        rtl-inproc) spec="rtl:isolate=none,stats=$out/stats.$d.$i" ;;
        esac
        /usr/bin/time -f "%e %U %S" -o "$out/t" "$build/mrct" run "$plan" --dut "$spec" --jobs 2 --out "$out/run" > /dev/null
        echo "$d $i $(cat "$out/t")" >> "$out/all"
        cp "$out/run/results.json" "$out/results.$d.json"
    done
done
/usr/bin/python3 - "$out" <<'PY'
import json, os, sys, statistics
out = sys.argv[1]
def cases(d):
    r = json.load(open(os.path.join(out, f"results.{d}.json")))
    return r["cases"] if isinstance(r, dict) and "cases" in r else r
rows = {}
for line in open(os.path.join(out, "all")):
    d, i, wall, user, sys_ = line.split()
    edges = evals = cores = ns = 0
    stats = os.path.join(out, f"stats.{d}.{i}")
    if os.path.exists(stats):
        for s in open(stats):
            e, v, c, t = map(int, s.split())
            edges, evals, cores, ns = edges + e, evals + v, cores + c, ns + t
    rows.setdefault(d, []).append((float(wall), float(user) + float(sys_), edges, evals, cores, ns))
for d, v in rows.items():
    wall = statistics.median(x[0] for x in v)
    cpu = statistics.median(x[1] for x in v)
    edges, evals, cores = v[0][2], v[0][3], v[0][4]
    rtl_s = statistics.median(x[5] for x in v) / 1e9
    line = f"{d:11s} wall {wall:6.2f} s  cpu {cpu:6.2f} s"
    if edges:
        line += (f"  | {cores} cores, {edges} edges, {evals} evaluations, {rtl_s:.3f} s in the RTL:"
                 f" {edges / rtl_s / 1e6:.2f} M edges/s, {evals / rtl_s / 1e6:.2f} M evaluations/s")
    print(line)
    if edges:
        virt = sum(c.get("sim_time_us", 0) for c in cases(d)) * 1e3  # ns
        print(f"{'':11s} the plan covers {virt / 1e6:.1f} ms of virtual time, {virt:.3g} cycles of a 1 GHz clock:"
              f" {virt / wall / 1e6:.1f} M cycles per second of wall (idle cycles skipped)")
PY
rm -rf "$out"
