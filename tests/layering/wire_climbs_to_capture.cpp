// Must NOT compile with mrct_wire's include roots: ".." from wire's folder
// stays inside its root and does not reach engine/capture (issue 23).
// tests/CMakeLists.txt runs the compiler on this file and expects failure.
#include "wire/../capture/pcap_file.h"
