// Must NOT compile with mrct_endpoint's include roots: the endpoint never uses the fabric.
#include "fabric/fabric.h"
