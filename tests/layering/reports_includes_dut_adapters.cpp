// Must NOT compile with mrct_reports's include roots: the reports describe a
// run's results and never see the DUT adapters (reports::dut_desc carries
// what they print of the DUT).
#include "dut_adapters/dut.h"
