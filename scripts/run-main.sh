#!/usr/bin/env bash
# The main job: install what is missing, build, run, print a summary and where
# the outputs are. Until the test-plan runner lands (issue 4), the main job
# writes a capture of every MetaRoCE packet type and decodes it.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
./scripts/build.sh build-release -DCMAKE_BUILD_TYPE=Release -DMRCT_TESTS=OFF
out=${MRCT_OUT:-out}
mkdir -p "$out"
mrct=build-release/mrct
$mrct samples -o "$out/samples.pcap"
$mrct decode "$out/samples.pcap" | tee "$out/samples.txt"
$mrct -q decode --json "$out/samples.pcap" >"$out/samples.jsonl"
echo
echo "mrct main job done: $(wc -l <"$out/samples.txt") frames decoded."
echo "  capture:   $out/samples.pcap (open in Wireshark with -X lua_script:tools/wireshark/metaroce.lua)"
echo "  summary:   $out/samples.txt"
echo "  JSON:      $out/samples.jsonl (fields: docs/decode-json.md)"
echo "  binary:    $mrct (mrct --help)"
