#include <catch2/catch.hpp>

#include <vector>

#include "wire/checksum.h"

using namespace mrct;

TEST_CASE("internet checksum: RFC 1071 example and verification property") {
    // RFC 1071 §3 example words 0001 f203 f4f5 f6f7: sum 0xddf2, checksum 0x220d.
    const std::uint8_t words[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    CHECK(wire::internet_checksum(words) == 0x220d);
    // A header containing its own checksum sums to zero.
    std::uint8_t hdr[] = {0x45, 0x00, 0x00, 0x3c, 0x1c, 0x46, 0x40, 0x00, 0x40, 0x06,
                          0x00, 0x00, 0xac, 0x10, 0x0a, 0x63, 0xac, 0x10, 0x0a, 0x0c};
    auto ck = wire::internet_checksum(hdr);
    CHECK(ck == 0xb1e6);
    hdr[10] = static_cast<std::uint8_t>(ck >> 8);
    hdr[11] = static_cast<std::uint8_t>(ck);
    CHECK(wire::internet_checksum(hdr) == 0);
    const std::uint8_t odd[] = {0x01};  // odd length pads with a zero byte
    CHECK(wire::internet_checksum(odd) == static_cast<std::uint16_t>(~0x0100));
}

namespace {
// RFC 1071 word by word, as written in the RFC: the independent reference.
std::uint16_t reference(const std::vector<std::uint8_t>& d, std::uint32_t initial) {
    std::uint64_t sum = initial;
    for (std::size_t i = 0; i + 1 < d.size(); i += 2) sum += (d[i] << 8) | d[i + 1];
    if (d.size() & 1) sum += d.back() << 8;
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return static_cast<std::uint16_t>(~sum);
}
}  // namespace

TEST_CASE("internet checksum: equals the word-by-word RFC 1071 sum for every length, content and initial sum") {
    std::uint64_t x = 0x9E3779B97F4A7C15ull;  // xorshift: deterministic
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    for (int round = 0; round < 20000; ++round) {
        const std::size_t len = next() % 80;
        std::vector<std::uint8_t> d(len);
        const int kind = round % 4;  // random bytes, all 0xFF (carries), all zero, mostly 0xFF
        for (auto& b : d)
            b = kind == 0 ? static_cast<std::uint8_t>(next()) : kind == 1 ? 0xFF : kind == 2 ? 0 : (next() % 8 ? 0xFF : 0);
        const std::uint32_t initial = round % 3 == 0 ? 0 : static_cast<std::uint32_t>(next() % (1u << 20));
        INFO("length " << len << ", initial " << initial << ", kind " << kind);
        REQUIRE(wire::internet_checksum(d, initial) == reference(d, initial));
    }
    // 0 and 0xFFFF are both one's-complement zero; the sum keeps them apart as the RFC does.
    CHECK(wire::internet_checksum(std::vector<std::uint8_t>{}, 0) == 0xFFFF);
    CHECK(wire::internet_checksum(std::vector<std::uint8_t>{0xFF, 0xFF}, 0) == 0x0000);
}
