// The 256-bit SACK bitmap of ACKH (§4).
//
// Bit i (0..255) set <=> PPSN CumAck+i received. On the wire: four big-endian
// 64-bit words, word 0 first; bit i lives in word i/64 at bit position i%64
// (bit 0 = least significant bit of word 0). Bit 0 is always 0 when sent.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace mrct::wire {

class sack256 {
public:
    static constexpr unsigned k_bits = 256;
    static constexpr std::size_t k_wire_len = 32;

    bool test(unsigned i) const { return (words_[i >> 6] >> (i & 63)) & 1u; }
    void set(unsigned i) { words_[i >> 6] |= std::uint64_t{1} << (i & 63); }
    void clear(unsigned i) { words_[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }
    void reset() { words_ = {}; }
    bool none() const { return (words_[0] | words_[1] | words_[2] | words_[3]) == 0; }
    unsigned count() const;
    // Highest set bit, or -1 if none.
    int highest() const;
    // Index of the first set (or clear) bit at or after `from`, or 256 if none.
    unsigned next_set(unsigned from) const;
    unsigned next_clear(unsigned from) const;
    // Calls f(i) for every clear bit below the highest set bit: the holes a
    // receiver reports (offsets from CumAck). Bit 0 is a hole whenever any bit is set.
    template <typename F>
    void for_each_gap(F&& f) const {
        int hi = highest();
        for (unsigned i = next_clear(0); static_cast<int>(i) < hi; i = next_clear(i + 1)) f(i);
    }

    // Drops the lowest n bits (bit i becomes bit i-n): what sliding CumAck by n does.
    void shift_down(unsigned n);

    std::uint64_t word(unsigned w) const { return words_[w]; }
    void set_word(unsigned w, std::uint64_t v) { words_[w] = v; }

    void to_wire(std::span<std::uint8_t, k_wire_len> out) const;
    static sack256 from_wire(std::span<const std::uint8_t, k_wire_len> in);

    bool operator==(const sack256&) const = default;

private:
    std::array<std::uint64_t, 4> words_{};
};

}  // namespace mrct::wire
