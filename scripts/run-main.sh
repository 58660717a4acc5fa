#!/usr/bin/env bash
# The main job: install what is missing, build, run the full MetaRoCE 1.2 test
# plan against the built-in reference DUT, print a summary and where the
# reports are. Exit code: mrct run's (0 all passed, 1 a case failed, 2 plan or
# usage error, 3 infrastructure error).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DMRCT_TESTS=OFF
out=${MRCT_OUT:-out}
mrct=build-release/mrct
plan=testplans/metaroce-1.2/plan.yaml
rc=0
$mrct run "$plan" --dut sim --jobs "$(nproc)" --out "$out" --failures-only || rc=$?
echo
echo "mrct main job: the MetaRoCE 1.2 plan against the reference DUT (exit $rc)."
echo "  report:    $out/report.html (open in a browser)"
echo "  results:   $out/results.json (docs/results.md), $out/junit.xml"
echo "  captures:  $out/pcap/ (failed cases; --capture all for every case;"
echo "             Wireshark: -X lua_script:tools/wireshark/metaroce.lua)"
echo "  more:      $mrct run $plan --dut sim:bug=frozen-rnr   (a DUT with a bug)"
echo "             $mrct selftest                              (every bug profile: the kill matrix)"
echo "             $mrct explain $plan RNR-001                 (what a case does)"
exit $rc
