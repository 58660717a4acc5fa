// Must compile with mrct_reports's include roots (the control): what reports
// reads of a run, its results and clause table.
#include "reports/reports.h"
#include "run/clauses.h"
#include "run/results.h"
