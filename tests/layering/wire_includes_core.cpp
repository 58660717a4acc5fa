// Must compile with mrct_wire's include roots (the control for the tests above:
// a core header, a wire header, and ".." that stays inside the root).
#include "core/bytes.h"
#include "wire/frame.h"
#include "wire/../wire/headers.h"
