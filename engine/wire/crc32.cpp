#include "wire/crc32.h"

#include <algorithm>
#include <unordered_map>

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

std::uint32_t crc32_zeros(std::uint32_t crc, std::size_t n) {
    if (n == 0) return crc;
    struct entry {
        uLong zeros_crc = 0, op = 0;  // crc32 of n zero bytes; the operator that shifts a CRC by n bytes
    };
    thread_local std::unordered_map<std::size_t, entry> cache;
    auto it = cache.find(n);
    if (it == cache.end()) {
        entry e;
        static constexpr std::uint8_t k_zero_block[4096] = {};
        uLong z = 0;
        for (std::size_t left = n; left;) {
            const std::size_t k = std::min(left, sizeof k_zero_block);
            z = ::crc32(z, k_zero_block, static_cast<uInt>(k));
            left -= k;
        }
        e.zeros_crc = z;
        e.op = ::crc32_combine_gen(static_cast<z_off_t>(n));
        it = cache.emplace(n, e).first;
    }
    return static_cast<std::uint32_t>(::crc32_combine_op(crc, it->second.zeros_crc, it->second.op));
}

std::uint32_t crc32_flip_delta(std::size_t distance, unsigned bit) {
    if (distance == 0) return 0;
    const std::uint8_t one = static_cast<std::uint8_t>(1u << (bit & 7));
    const auto flipped = crc32_zeros(static_cast<std::uint32_t>(::crc32(0, &one, 1)), distance - 1);
    return flipped ^ crc32_zeros(0, distance);
}

#if defined(MRCT_CRC_BACKEND_ZLIB)
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_zlib(crc, data); }
const char* crc32_backend_name() { return "zlib"; }
#else
std::uint32_t crc32_update(std::uint32_t crc, core::bytes_view data) { return crc32_isal(crc, data); }
const char* crc32_backend_name() { return "isa-l"; }
#endif

}  // namespace mrct::wire
