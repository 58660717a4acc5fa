// Must compile with mrct_interop's include roots (the control): a declared
// dependency.
#include "agent/client.h"
#include "interop/interop.h"
