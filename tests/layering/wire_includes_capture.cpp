// Must NOT compile with mrct_wire's include roots: wire may not use capture.
// tests/CMakeLists.txt runs the compiler on this file and expects failure.
#include "capture/pcap_file.h"
