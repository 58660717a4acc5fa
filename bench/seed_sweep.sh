#!/usr/bin/env bash
# bench/seed_sweep.sh [REPEAT] [DUT] [FILTER...]: the plan REPEAT times (default 20)
# with fresh seeds (mrct run --repeat) against DUT (default sim, the
# reference), then every case whose verdict was not the same in all seeds,
# with counts and the first reason. On a real wire every run is a fresh draw
# of the fabric's randomness, so a case whose verdict against a conforming DUT
# depends on the seed fails the reference there sooner or later: this finds
# those in virtual time, where each is reproducible by its seed. For a bug
# profile (DUT sim:bug=NAME) it shows how often the profile escapes.
# On demand, not in CI (the whole plan x 100 seeds: about 85 s on an idle 2-core host).
# Figures go to docs/testplan.md.
set -euo pipefail
cd "$(dirname "$0")/.."
repeat=${1:-20}
dut=${2:-sim}
shift $(( $# > 2 ? 2 : $# ))
build=${BUILD:-build}
out=$(mktemp -d /tmp/mrct-seeds.XXXXXX)
filters=()
for f in "$@"; do filters+=(--filter "$f"); done
"$build/mrct" run testplans/metaroce-1.2/plan.yaml --dut "$dut" --repeat "$repeat" -j "$(nproc)" \
  --out "$out" --capture none "${filters[@]}" >"$out/log" 2>&1 || true
if [ ! -f "$out/results.json" ]; then  # a bad filter or DUT: say what mrct said
  cat "$out/log" >&2
  exit 2
fi
/usr/bin/python3 - "$out/results.json" "$repeat" "$dut" <<'PY'
import collections, json, re, sys
path, repeat, dut = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cases = json.load(open(path))["cases"]
by = collections.defaultdict(list)
for c in cases:
    by[re.sub(r"#\d+$", "", c["id"])].append(c)
print(f"{len(by)} cases x {repeat} seeds against {dut}: {len(cases)} runs")
totals = collections.Counter(c["verdict"] for c in cases)
print("  " + ", ".join(f"{v} {n}" for v, n in sorted(totals.items())))
mixed = 0
for cid, runs in sorted(by.items()):
    v = collections.Counter(c["verdict"] for c in runs)
    if len(v) == 1:
        continue
    mixed += 1
    odd = min(v, key=v.get)
    first = next(c for c in runs if c["verdict"] == odd)
    print(f"  {cid}: {dict(v)}; e.g. seed {first['seed']}: {first['reason'][:160]}")
print(f"{mixed} case(s) whose verdict depends on the seed; results: {path}")
PY
