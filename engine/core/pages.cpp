#include "core/pages.h"

#include <sys/mman.h>

#include <cerrno>
#include <cstdint>

namespace mrct::core {

bool make_resident(void* p, std::size_t n) {
    constexpr std::uintptr_t k_page = 4096;
    const auto from = (reinterpret_cast<std::uintptr_t>(p) + k_page - 1) & ~(k_page - 1);
    const auto to = (reinterpret_cast<std::uintptr_t>(p) + n) & ~(k_page - 1);
    if (to <= from) return true;
    if (::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE) == 0) return true;
    if (errno != EINVAL) return false;  // ENOMEM, EFAULT, ...: no memory for them
    // Before Linux 5.14 (EINVAL: an advice it does not know): a write per
    // page faults each in, and writing a byte back unchanged keeps the bytes.
    for (auto at = from; at < to; at += k_page) {
        auto* b = reinterpret_cast<volatile std::uint8_t*>(at);
        *b = *b;
    }
    return true;
}

}  // namespace mrct::core
