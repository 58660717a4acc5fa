#!/usr/bin/env bash
# Every RTL unit is clean under `verilator --lint-only -Wall`, as written and
# with each bug define planted in it (issue 20; docs/rtl.md).
#   tests/tools/rtl_lint.sh HDL_DIR
set -euo pipefail
hdl=$1
status=0
lint() {  # UNIT [DEFINE]
    local unit=$1 define=${2:-}
    local files=("$hdl/mr_earliest.sv")  # the deadline finder every timer unit uses
    case $unit in
    mr_earliest) ;;
    mr_core) files+=("$hdl/mr_rto.sv" "$hdl/mr_rx_path.sv" "$hdl/mr_rnr.sv" "$hdl/mr_core.sv") ;;  # the three units on one clock
    *) files+=("$hdl/$unit.sv") ;;
    esac
    if out=$(verilator --lint-only -Wall $define "${files[@]}" --top-module "$unit" 2>&1); then
        echo "clean: $unit $define"
    else
        echo "NOT CLEAN: $unit $define"
        echo "$out"
        status=1
    fi
}
lint mr_earliest
lint mr_rto
lint mr_rto -DMR_BUG_SHARED_RTO
lint mr_rto -DMR_BUG_NO_BACKOFF
lint mr_rto -DMR_BUG_KARN_VIOLATION
lint mr_rnr
lint mr_rnr -DMR_BUG_FROZEN_RNR
lint mr_rnr -DMR_BUG_RNR_PAUSES_ALL
lint mr_rx_path
lint mr_rx_path -DMR_BUG_SACK_WORD
lint mr_rx_path -DMR_BUG_CE_SATURATES
lint mr_rx_path -DMR_BUG_NO_SACK
lint mr_rx_path -DMR_BUG_LAZY_ACK
lint mr_core
for define in SHARED_RTO NO_BACKOFF KARN_VIOLATION FROZEN_RNR RNR_PAUSES_ALL SACK_WORD CE_SATURATES NO_SACK LAZY_ACK; do lint mr_core -DMR_BUG_$define; done
exit $status
