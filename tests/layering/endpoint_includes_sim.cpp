// Must compile with mrct_endpoint's include roots (the control).
#include "endpoint/endpoint.h"
#include "sim/scheduler.h"
