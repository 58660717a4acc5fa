// Must compile with mrct_wire's include roots (the control for the test above).
#include "core/bytes.h"
#include "wire/frame.h"
