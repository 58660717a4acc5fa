#!/usr/bin/env bash
# A case that fails against the RTL DUT gets an FST of the RTL core, written
# beside its pcap and linked from results.json and report.html; GTKWave's
# fst2vcd reads it and finds the core's signals. A passing case gets none
# (issue 20, item 4; docs/rtl.md).
#   tests/tools/rtl_waveform.sh MRCT PLAN WORKDIR
set -euo pipefail
mrct=$1 plan=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
fail() { echo "rtl_waveform: $*" >&2; exit 1; }

# sack-word breaks MR-SACK-1: SACK-005 fails (selftest --dut rtl shows it).
rc=0
"$mrct" run "$plan" --dut rtl:bug=sack-word --filter SACK-005 --out "$work/fail" >"$work/fail.log" 2>&1 || rc=$?
[ "$rc" = 1 ] || { cat "$work/fail.log"; fail "expected exit 1 (a failing case), got $rc"; }
fst=$work/fail/pcap/SACK-005.fst
[ -s "$fst" ] || fail "no waveform at $fst"
grep -q '"waveform": "pcap/SACK-005.fst"' "$work/fail/results.json" || fail "results.json does not link the waveform"
grep -q 'href="pcap/SACK-005.fst"' "$work/fail/report.html" || fail "report.html does not link the waveform"
command -v fst2vcd >/dev/null || fail "fst2vcd (Debian's gtkwave) is missing: scripts/setup.sh installs it"
fst2vcd -f "$fst" -o "$work/SACK-005.vcd" >/dev/null 2>&1 || fail "fst2vcd cannot read $fst"
for sig in clk now rx_cmd_valid rx_cmd_ppsn rx_rd_sack rto_exp_valid rnr_res_valid; do
    grep -qE "\\\$var wire [0-9]+ \S+ $sig( |\\\$)" "$work/SACK-005.vcd" || fail "the waveform lacks signal $sig"
done
changes=$(grep -c '^#' "$work/SACK-005.vcd")
[ "$changes" -gt 100 ] || fail "the waveform has only $changes time steps"

# The clean core passes the same case: no waveform.
"$mrct" run "$plan" --dut rtl --filter SACK-005 --capture all --out "$work/pass" >"$work/pass.log" 2>&1 || { cat "$work/pass.log"; fail "the clean RTL failed SACK-005"; }
[ ! -e "$work/pass/pcap/SACK-005.fst" ] || fail "a passing case got a waveform"
echo "rtl_waveform: $fst ($changes time steps) linked and readable"
