// Must compile with mrct_trace's include roots (the control).
#include "trace/trace.h"
#include "wire/frame.h"
