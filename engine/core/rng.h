// Seeded random streams. xoshiro256** seeded through splitmix64, with our own
// bounded-integer mapping: std:: distributions are implementation-defined, and a
// run must replay bit for bit from its seed on any standard library.
#pragma once

#include <cstdint>
#include <string_view>

namespace mrct::core {

class rng {
    __extension__ using u128 = unsigned __int128;  // GCC/Clang extension, fine for both

public:
    explicit rng(std::uint64_t seed) { reseed(seed); }
    // A named sub-stream: the same (seed, name) always gives the same stream,
    // and adding a new stream never shifts the numbers of another.
    rng(std::uint64_t seed, std::string_view name) { reseed(seed ^ fnv1a(name)); }

    void reseed(std::uint64_t seed) {
        for (auto& w : s_) w = splitmix64(seed);
    }
    std::uint64_t next() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }
    // Uniform in [0, n); n > 0. Lemire's multiply-shift with rejection.
    std::uint64_t below(std::uint64_t n) {
        for (;;) {
            u128 m = static_cast<u128>(next()) * n;
            auto low = static_cast<std::uint64_t>(m);
            if (low >= n || low >= (-n) % n) return static_cast<std::uint64_t>(m >> 64);
        }
    }
    // Uniform in [lo, hi] inclusive.
    std::uint64_t between(std::uint64_t lo, std::uint64_t hi) {
        if (hi - lo == ~std::uint64_t{0}) return next();
        return lo + below(hi - lo + 1);
    }
    bool chance(double p) { return static_cast<double>(next() >> 11) * 0x1.0p-53 < p; }

    // The seed of sub-stream `name` of `seed`, and of its `index`-th member:
    // what each component derived from one run or case seed is given (a
    // case, the DUT, the peer, the k-th extra peer, a fabric, a message's
    // bytes). Components never share a stream, and neighbouring cases or
    // members do not get neighbouring seeds.
    static std::uint64_t sub_seed(std::uint64_t seed, std::string_view name, std::uint64_t index = 0) {
        std::uint64_t x = seed ^ fnv1a(name);
        std::uint64_t y = splitmix64(x) + index;
        return splitmix64(y);
    }

    static constexpr std::uint64_t fnv1a(std::string_view s) {
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (char c : s) h = (h ^ static_cast<std::uint8_t>(c)) * 0x100000001b3ull;
        return h;
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix64(std::uint64_t& x) {
        std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t s_[4]{};
};

}  // namespace mrct::core
