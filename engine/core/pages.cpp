#include "core/pages.h"

#include <sys/mman.h>
#include <sys/prctl.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

namespace mrct::core {

namespace {

constexpr std::uintptr_t k_page = 4096;

// The whole pages inside [p, p + n): [from, to), page-aligned.
std::pair<std::uintptr_t, std::uintptr_t> whole_pages(void* p, std::size_t n) {
    const auto from = (reinterpret_cast<std::uintptr_t>(p) + k_page - 1) & ~(k_page - 1);
    const auto to = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(k_page - 1);
    return {from, std::max(from, to)};
}

}  // namespace

bool make_resident(void* p, std::size_t n) {
    const auto [from, to] = whole_pages(p, n);
    if (to == from) return true;
    if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) == 0) return true;
    if (errno != EINVAL) return false;  // ENOMEM, EFAULT, ...: no memory for them
    // Before Linux 5.14 (EINVAL: an advice it does not know): a write per
    // page faults each in.
    touch_pages(p, n);
    return true;
}

bool prefer_huge_pages(void* p, std::size_t n) {
    const auto [from, to] = whole_pages(p, n);
    return to > from && ::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE) == 0;
}

bool no_transparent_huge_pages() { return ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0; }

void touch_pages(void* p, std::size_t n) {
    const auto [from, to] = whole_pages(p, n);
    // A byte written back unchanged keeps the bytes.
    for (auto at = from; at < to; at += k_page) {
        auto* b = reinterpret_cast<volatile std::uint8_t*>(at);
        *b = *b;
    }
}

}  // namespace mrct::core
