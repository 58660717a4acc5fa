// core/heap_pages.h: after heap_on_huge_pages(), large blocks come from the
// main heap and the kernel takes that heap as eligible for huge pages.
#include <catch2/catch.hpp>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/heap_pages.h"

namespace {

struct mapping {
    unsigned long lo = 0, hi = 0;
    std::string smaps;  // the mapping's lines in /proc/self/smaps
};

mapping heap() {
    std::ifstream f("/proc/self/smaps");
    std::string line;
    mapping m;
    bool in = false;
    while (std::getline(f, line)) {
        // A mapping's header starts with its address range ("55d3...-55d3... rw-p ..."),
        // its fields with a capitalised name ("Rss:", "VmFlags:").
        if (!line.empty() && !std::isupper(static_cast<unsigned char>(line[0]))) {
            in = line.find("[heap]") != std::string::npos;
            if (in) std::sscanf(line.c_str(), "%lx-%lx", &m.lo, &m.hi);
            continue;
        }
        if (in) m.smaps += line + "\n";
    }
    return m;
}

bool thp_possible() {
    std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string s;
    std::getline(f, s);
    return !s.empty() && s.find("[never]") == std::string::npos;
}

}  // namespace

TEST_CASE("heap_on_huge_pages: large blocks come from one heap the kernel may back with huge pages") {
    const std::string what = mrct::core::heap_on_huge_pages();
    INFO(what);
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's allocator replaces glibc's and refuses mallopt: the
    // heap is left alone, and said so.
    CHECK(what == "mallopt refused; heap left as it was");
    return;
#endif
    if (!thp_possible()) {
        WARN("transparent huge pages are off on this kernel: " << what);
        return;
    }
    REQUIRE(what.rfind("heap of ", 0) == 0);
    const auto h = heap();
    CHECK(h.hi - h.lo >= (1ul << 30));  // grown once by the pad
    // "hg": the mapping is advised MADV_HUGEPAGE (proc(5), VmFlags).
    const auto flags = h.smaps.substr(h.smaps.find("VmFlags:"));
    CHECK(flags.find(" hg") != std::string::npos);
    std::vector<char> big(16 << 20);  // below the 64 MiB threshold: from the heap, not its own mapping
    const auto at = reinterpret_cast<unsigned long>(big.data());
    CHECK(at >= h.lo);
    CHECK(at + big.size() <= h.hi);
}
