#!/usr/bin/env bash
# The in-process DUT ABI is complete (issue 20, item 1): the reference
# endpoint built as a DUT library (libmrct-reference-dut.so) gives, through
# `--dut so:`, the verdicts, reasons and wire of `--dut sim` for the whole plan
# and a seed (every case's pcap byte for byte), and through `selftest --dut
# so:` the same kill matrix as the reference's bug profiles.
#
#   tests/tools/so_equivalence.sh MRCT LIBRARY PLAN WORKDIR [SIM_KILL_MATRIX]
#
# SIM_KILL_MATRIX: the kill-matrix.json of `mrct selftest` against sim for the
# same plan and build (ctest passes selftest_metaroce_1_2's, its fixture);
# without it the simulated selftest is run here.
set -euo pipefail
mrct=$1 lib=$2 plan=$3 work=$4 sim_matrix=${5:-}
rm -rf "$work"
mkdir -p "$work"
seed=20261203
for dut in sim "so:$lib"; do
    name=${dut%%:*}
    "$mrct" run "$plan" --dut "$dut" --seed $seed --jobs 2 --capture all --out "$work/$name" > "$work/$name.log" || true
done
/usr/bin/python3 - "$work" <<'PY'
import json, sys, filecmp, os
work = sys.argv[1]
a = json.load(open(f"{work}/sim/results.json"))["cases"]
b = json.load(open(f"{work}/so/results.json"))["cases"]
bad = []
if [c["id"] for c in a] != [c["id"] for c in b]:
    bad.append("the cases differ")
for x, y in zip(a, b):
    for k in ("verdict", "reason", "frames", "sim_time_us", "assertions"):
        if x.get(k) != y.get(k):
            bad.append(f"{x['id']}: {k}: sim {str(x.get(k))[:200]!r} so {str(y.get(k))[:200]!r}")
pa, pb = f"{work}/sim/pcap", f"{work}/so/pcap"
pcaps = sorted(os.listdir(pa))
if pcaps != sorted(os.listdir(pb)):
    bad.append("the pcap files differ in name")
same = [p for p in pcaps if os.path.exists(f"{pb}/{p}") and filecmp.cmp(f"{pa}/{p}", f"{pb}/{p}", shallow=False)]
for p in pcaps:
    if p not in same:
        bad.append(f"pcap {p} differs")
verdicts = {}
for c in a:
    verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
print(f"{len(a)} cases, verdicts {verdicts}; {len(same)} of {len(pcaps)} pcaps identical")
for m in bad[:40]:
    print("  DIFFERS:", m)
sys.exit(1 if bad or not a else 0)
PY
# The kill matrix through the library's own bug list, in-process (37 plan
# runs: a round trip per call to a child would make it 4 times slower; the
# plan above ran isolated, and dut_tests compares both modes).
if [ -z "$sim_matrix" ]; then
    "$mrct" selftest --plan "$plan" --jobs 2 --out "$work/ksim" > "$work/ksim.log"
    sim_matrix=$work/ksim/kill-matrix.json
fi
"$mrct" selftest --plan "$plan" --jobs 2 --dut "so:$lib,isolate=none" --out "$work/kso" > "$work/kso.log" ||
    { tail -40 "$work/kso.log"; exit 1; }
if ! cmp -s "$sim_matrix" "$work/kso/kill-matrix.json"; then
    echo "the kill matrices differ:"
    diff "$sim_matrix" "$work/kso/kill-matrix.json" | head -40
    exit 1
fi
echo "kill matrix through so: identical to sim's ($(grep -c '"caught": true' "$work/kso/kill-matrix.json") bugs caught)"
