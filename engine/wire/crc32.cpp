#include "wire/crc32.h"

#include <algorithm>

#include <isa-l/crc.h>
#include <zlib.h>

namespace mrct::wire {

std::uint32_t crc32_zlib(std::uint32_t crc, core::bytes_view data) {
    // zlib takes uInt lengths; feed large inputs in chunks.
    uLong c = crc;
    while (!data.empty()) {
        auto n = static_cast<uInt>(std::min<std::size_t>(data.size(), 1u << 30));
        c = ::crc32(c, data.data(), n);
        data = data.subspan(n);
    }
    return static_cast<std::uint32_t>(c);
}

namespace {
// isa-l 2.30's AVX-512 CRC kernels (taken for inputs of 256 bytes and more)
// return with the upper halves of the vector registers dirty. Every legacy-SSE
// instruction after that pays a transition penalty: decode+ICRC of an ACK went
// from 43 ns to 178 ns after one 4 KiB CRC (docs/performance.md). VZEROUPPER
// after the call restores full speed; it is only valid on CPUs with AVX.
#if defined(__x86_64__)
const bool k_has_avx = [] {
    __builtin_cpu_init();  // required before __builtin_cpu_supports in static initialisers
    return __builtin_cpu_supports("avx") != 0;
}();
#endif
}  // namespace

std::uint32_t crc32_isal(std::uint32_t crc, core::bytes_view data) {
    std::uint32_t c = ::crc32_gzip_refl(crc, data.data(), data.size());
#if defined(__x86_64__)
    if (k_has_avx && data.size() >= 256) __asm__ volatile("vzeroupper");
#endif
    return c;
}

#if defined(MRCT_CRC_BACKEND_ZLIB)
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_zlib(crc, data); }
const char* crc32_backend_name() { return "zlib"; }
#else
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_isal(crc, data); }
const char* crc32_backend_name() { return "isa-l"; }
#endif

}  // namespace mrct::wire
