#!/usr/bin/env bash
# bench/realtime_loaded.sh [RUNS] [LOAD]: the real-wire check (tests/tools/realtime_check.py,
# ctest realtime_wire) RUNS times in a row (default 10) with the host saturated
# beside it, first verdicts only (the script re-runs nothing; mrct's own
# --timing-retries stays on and its re-runs are counted), then the totals: false fails,
# errors, inconclusive verdicts (with and without measured reasons), bugs missed.
# LOAD: "stress" (default: stress-ng --cpu 2 beside it) or "twice" (a second
# plan run over another veth at the same time). On demand, as root; not in CI.
# Figures go to docs/testplan.md.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
load=${2:-stress}
build=${BUILD:-build}
work=$(mktemp -d /tmp/mrct-loaded.XXXXXX)
command -v stress-ng >/dev/null || apt-get install -y -qq stress-ng >/dev/null
check() {  # check OUT: one run of the real-wire check, first verdicts only
  /usr/bin/python3 tests/tools/realtime_check.py --mrct "$build/mrct" --refnic "$build/mrct-refnic" \
    --plan testplans/metaroce-1.2/plan.yaml --workdir "$1" --no-retry --no-dpdk --summary "$1/summary.json" \
    >"$1/log" 2>&1
}
for i in $(seq 1 "$runs"); do
  mkdir -p "$work/$i"
  if [ "$load" = stress ]; then
    stress-ng --cpu 2 --timeout 0 >/dev/null 2>&1 &
    lp=$!
  else
    mkdir -p "$work/$i-beside"
    check "$work/$i-beside" &
    lp=$!
  fi
  start=$(date +%s)
  check "$work/$i"
  echo "run $i: $(( $(date +%s) - start )) s, $(tail -1 "$work/$i/log")"
  kill "$lp" 2>/dev/null
  wait "$lp" 2>/dev/null
done
/usr/bin/python3 - "$work" "$runs" <<'PY'
import json, sys
work, runs = sys.argv[1], int(sys.argv[2])
tot = {"executed": 0, "runs": 0, "false_fail": [], "error": [], "inconclusive": [], "unexplained_inconclusive": [], "missed": [],
       "retried": []}
for i in range(1, runs + 1):
    try:
        s = json.load(open(f"{work}/{i}/summary.json"))
    except OSError:
        print(f"run {i}: no summary"); continue
    for name, c in s.items():
        tot["runs"] += c["runs"]; tot["executed"] += c["executed"]
        for k in ("false_fail", "error", "inconclusive", "unexplained_inconclusive", "missed", "retried"):
            tot[k] += [f"{i}:{name}:{x}" for x in c.get(k, [])]
print(f"{runs} loaded runs: {tot['executed']} of {tot['runs']} case runs executed")
# Against the reference (wires named *-ref, *-ipv6, *-ref-scaled: the
# fine_timing cases 64 times slower) a failure is a false fail;
# against a bug profile, a failure the simulation does not have is collateral
# of the bug meeting real timing, counted apart.
ref = lambda x: x.split(":")[1].endswith(("-ref", "-ipv6", "-ref-scaled"))
print(f"  false fails against the reference: {sum(map(ref, tot['false_fail']))} "
      f"{[x for x in tot['false_fail'] if ref(x)][:20]}")
print(f"  extra failures against bug profiles: {sum(not ref(x) for x in tot['false_fail'])} "
      f"{[x for x in tot['false_fail'] if not ref(x)][:20]}")
for k in ("error", "unexplained_inconclusive", "missed"):
    print(f"  {k}: {len(tot[k])} {tot[k][:20]}")
n = len(tot["inconclusive"])
print(f"  inconclusive: {n} ({100 * n / max(1, tot['executed']):.1f} % of executed) {tot['inconclusive'][:20]}")
n = len(tot["retried"])
print(f"  run again after attempts inconclusive on timing (mrct --timing-retries): {n} "
      f"({100 * n / max(1, tot['executed']):.1f} % of executed) {tot['retried'][:20]}")
PY
echo "work: $work"
