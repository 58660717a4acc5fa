// Must NOT compile with mrct_reports's include roots: run/runner.h declares
// the DUT factory (dut_adapters/dut.h), which reports does not declare, so
// reports cannot reach the adapters through run either.
#include "run/runner.h"
