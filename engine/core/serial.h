// Serial-number arithmetic (RFC 1982) for the protocol's wrapping counters:
// 24-bit PPSNs, 32-bit StreamSeq, 16-bit RnrSeq.
#pragma once

#include <cstdint>

namespace mrct::core {

template <unsigned Bits>
struct serial {
    static_assert(Bits > 0 && Bits <= 32);
    static constexpr std::uint32_t k_mask = Bits == 32 ? 0xFFFFFFFFu : ((1u << Bits) - 1u);
    static constexpr std::uint32_t k_half = 1u << (Bits - 1);

    static constexpr std::uint32_t add(std::uint32_t a, std::uint32_t n) { return (a + n) & k_mask; }
    // Distance from a forward to b, modulo 2^Bits.
    static constexpr std::uint32_t diff(std::uint32_t b, std::uint32_t a) { return (b - a) & k_mask; }
    // a < b in serial order (undefined pairs, exactly half apart, compare false both ways).
    static constexpr bool lt(std::uint32_t a, std::uint32_t b) {
        std::uint32_t d = diff(b, a);
        return d != 0 && d < k_half;
    }
    static constexpr bool le(std::uint32_t a, std::uint32_t b) { return a == b || lt(a, b); }
};

using psn24 = serial<24>;
using seq32 = serial<32>;
using seq16 = serial<16>;

}  // namespace mrct::core
