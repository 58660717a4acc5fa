// Must NOT compile with mrct_interop's include roots: interop declares agent,
// and agent depends on endpoint, but a module sees the roots it declares, not
// its dependencies' dependencies (issue 23 item 4).
#include "endpoint/endpoint.h"
