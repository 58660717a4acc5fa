#include "wire/sack.h"

#include <bit>
#include <cstring>

namespace mrct::wire {

unsigned sack256::count() const {
    unsigned n = 0;
    for (auto w : words_) n += static_cast<unsigned>(std::popcount(w));
    return n;
}

int sack256::highest() const {
    for (int w = 3; w >= 0; --w) {
        if (words_[w]) return w * 64 + 63 - std::countl_zero(words_[w]);
    }
    return -1;
}

unsigned sack256::next_set(unsigned from) const {
    while (from < k_bits) {
        std::uint64_t w = words_[from >> 6] >> (from & 63);
        if (w) return from + static_cast<unsigned>(std::countr_zero(w));
        from = (from | 63) + 1;
    }
    return k_bits;
}

unsigned sack256::next_clear(unsigned from) const {
    while (from < k_bits) {
        std::uint64_t w = ~words_[from >> 6] >> (from & 63);
        if (w) return from + static_cast<unsigned>(std::countr_zero(w));
        from = (from | 63) + 1;
    }
    return k_bits;
}

void sack256::shift_down(unsigned n) {
    if (n >= k_bits) {
        words_ = {};
        return;
    }
    const unsigned ws = n / 64, bs = n % 64;
    for (unsigned w = 0; w < 4; ++w) {
        const unsigned src = w + ws;
        std::uint64_t v = src < 4 ? words_[src] >> bs : 0;
        if (bs && src + 1 < 4) v |= words_[src + 1] << (64 - bs);
        words_[w] = v;
    }
}

// Words are big-endian on the wire (§4).
static std::uint64_t to_big(std::uint64_t v) {
    if constexpr (std::endian::native == std::endian::little) return __builtin_bswap64(v);
    return v;
}

void sack256::to_wire(std::span<std::uint8_t, k_wire_len> out) const {
    for (unsigned w = 0; w < 4; ++w) {
        std::uint64_t v = to_big(words_[w]);
        std::memcpy(out.data() + 8 * w, &v, 8);
    }
}

sack256 sack256::from_wire(std::span<const std::uint8_t, k_wire_len> in) {
    sack256 s;
    for (unsigned w = 0; w < 4; ++w) {
        std::uint64_t v;
        std::memcpy(&v, in.data() + 8 * w, 8);
        s.words_[w] = to_big(v);
    }
    return s;
}

}  // namespace mrct::wire
