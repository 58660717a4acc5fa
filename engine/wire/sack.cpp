#include "wire/sack.h"

#include <bit>

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

void sack256::to_wire(std::span<std::uint8_t, k_wire_len> out) const {
    for (unsigned w = 0; w < 4; ++w) {
        for (unsigned b = 0; b < 8; ++b) out[w * 8 + b] = static_cast<std::uint8_t>(words_[w] >> (56 - 8 * b));
    }
}

sack256 sack256::from_wire(std::span<const std::uint8_t, k_wire_len> in) {
    sack256 s;
    for (unsigned w = 0; w < 4; ++w) {
        std::uint64_t v = 0;
        for (unsigned b = 0; b < 8; ++b) v = (v << 8) | in[w * 8 + b];
        s.words_[w] = v;
    }
    return s;
}

}  // namespace mrct::wire
