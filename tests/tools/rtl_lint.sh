#!/usr/bin/env bash
# Every RTL unit is clean under `verilator --lint-only -Wall`, as written and
# with each bug define planted in it (issue 20; docs/rtl.md).
#   tests/tools/rtl_lint.sh HDL_DIR
set -euo pipefail
hdl=$1
status=0
lint() {
    if out=$(verilator --lint-only -Wall "$@" 2>&1); then
        echo "clean: $*"
    else
        echo "NOT CLEAN: $*"
        echo "$out"
        status=1
    fi
}
lint "$hdl/mr_rto.sv"
lint -DMR_BUG_SHARED_RTO "$hdl/mr_rto.sv"
lint -DMR_BUG_NO_BACKOFF "$hdl/mr_rto.sv"
exit $status
