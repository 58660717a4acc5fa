#include "core/heap_pages.h"

#include "core/pages.h"

#include <malloc.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

namespace mrct::core {

namespace {
constexpr int k_mmap_threshold = 64 << 20;  // larger blocks still get their own mapping
constexpr int k_top_pad = 1 << 30;          // address space added to the heap when it grows
}  // namespace

std::string heap_on_huge_pages() {
    if (!mallopt(M_MMAP_THRESHOLD, k_mmap_threshold) || !mallopt(M_TOP_PAD, k_top_pad))
        return "mallopt refused; heap left as it was";
    // Make the heap grow now, by the pad, so that the advice below covers
    // what the run will allocate. (volatile: a malloc/free pair with nothing
    // between may otherwise be removed by the compiler.)
    void* volatile grow = std::malloc(4 << 20);
    std::free(grow);
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line)) {
        if (line.find("[heap]") == std::string::npos) continue;
        unsigned long lo = 0, hi = 0;
        if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2) break;
        errno = 0;
        if (!prefer_huge_pages(reinterpret_cast<void*>(lo), hi - lo))
            return std::string("madvise(MADV_HUGEPAGE) on the heap: ") +
                   (errno != 0 ? std::strerror(errno) : "no whole page in it");
        return "heap of " + std::to_string((hi - lo) >> 20) + " MiB advised MADV_HUGEPAGE";
    }
    return "no [heap] mapping found; heap left on small pages";
}

}  // namespace mrct::core
