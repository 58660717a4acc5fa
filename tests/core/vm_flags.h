// The kernel's flags of the mapping holding an address: its "VmFlags:" line
// in /proc/self/smaps (proc(5): " hg" advised MADV_HUGEPAGE, " nh"
// MADV_NOHUGEPAGE), empty if no mapping holds it. For tests.
#pragma once

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

namespace mrct::test {

inline std::string vm_flags_of(const void* at) {
    std::ifstream smaps("/proc/self/smaps");
    std::string line;
    bool in = false;
    while (std::getline(smaps, line)) {
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2)  // a mapping's first line; its fields follow
            in = reinterpret_cast<std::uintptr_t>(at) >= lo && reinterpret_cast<std::uintptr_t>(at) < hi;
        if (in && line.rfind("VmFlags:", 0) == 0) return line;
    }
    return std::string();
}

}  // namespace mrct::test
