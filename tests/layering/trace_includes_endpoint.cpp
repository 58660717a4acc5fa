// Must NOT compile with mrct_trace's include roots: the trace never uses the endpoint.
#include "endpoint/endpoint.h"
