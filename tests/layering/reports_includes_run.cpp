// Must compile with mrct_reports's include roots (the control).
#include "reports/reports.h"
#include "run/runner.h"
