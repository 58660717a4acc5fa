#include "wire/crc32.h"

#include <algorithm>
#include <array>
#include <memory>
#include <unordered_map>
#include <vector>

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

namespace {
// Appending n zero bytes to a stream maps its CRC linearly (zlib's
// crc32_combine_op: a GF(2) product with x^(8n) mod P, then the CRC of n
// zeros XORed in). zlib computes the product bit by bit, which was 5 % of
// the instructions of a simulation with described payloads (issue 21). The
// map of a length used often is kept as four tables, one per byte of the
// CRC: four lookups. The first k_tabled lengths a thread meets get tables
// (4 KiB each); any other length takes zlib's product.
struct zeros_op {
    std::uint32_t zeros_crc = 0;  // the CRC of n zero bytes
    uLong op = 0;                 // zlib's operator for n bytes
};
zeros_op make_zeros_op(std::size_t n) {
    static constexpr std::uint8_t k_zero_block[4096] = {};
    uLong z = 0;
    for (std::size_t left = n; left;) {
        const std::size_t k = std::min(left, sizeof k_zero_block);
        z = ::crc32(z, k_zero_block, static_cast<uInt>(k));
        left -= k;
    }
    return {static_cast<std::uint32_t>(z), ::crc32_combine_gen(static_cast<z_off_t>(n))};
}
struct zeros_table {
    std::size_t n = 0;
    std::uint32_t zeros_crc = 0;
    std::array<std::array<std::uint32_t, 256>, 4> by_byte{};  // the product of each byte value in each position
    std::uint32_t apply(std::uint32_t crc) const {
        return by_byte[0][crc & 0xFF] ^ by_byte[1][(crc >> 8) & 0xFF] ^ by_byte[2][(crc >> 16) & 0xFF] ^
               by_byte[3][crc >> 24] ^ zeros_crc;
    }
};
constexpr std::size_t k_tabled = 16;
}  // namespace

std::uint32_t crc32_zeros(std::uint32_t crc, std::size_t n) {
    if (n == 0) return crc;
    thread_local std::vector<std::unique_ptr<zeros_table>> tables;
    thread_local const zeros_table* last = nullptr;
    if (last && last->n == n) return last->apply(crc);
    for (const auto& t : tables)
        if (t->n == n) return (last = t.get())->apply(crc);
    if (tables.size() < k_tabled) {
        const auto o = make_zeros_op(n);
        auto t = std::make_unique<zeros_table>();
        t->n = n;
        t->zeros_crc = o.zeros_crc;
        for (unsigned k = 0; k < 4; ++k)
            for (unsigned b = 0; b < 256; ++b)
                t->by_byte[k][b] = static_cast<std::uint32_t>(::crc32_combine_op(uLong{b} << (8 * k), 0, o.op));
        tables.push_back(std::move(t));
        return (last = tables.back().get())->apply(crc);
    }
    thread_local std::unordered_map<std::size_t, zeros_op> others;
    auto it = others.find(n);
    if (it == others.end()) it = others.emplace(n, make_zeros_op(n)).first;
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
