#include <catch2/catch.hpp>

#include "core/rng.h"
#include "wire/crc32.h"

using namespace mrct;

TEST_CASE("CRC-32 check value (IEEE 802.3 / zlib)") {
    const std::string s = "123456789";
    core::bytes_view v(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
    CHECK(wire::crc32_zlib(0, v) == 0xCBF43926u);
    CHECK(wire::crc32_isal(0, v) == 0xCBF43926u);
    CHECK(wire::crc32_update(0, v) == 0xCBF43926u);
}

TEST_CASE("isa-l and zlib backends agree, including chaining") {
    core::rng r(3);
    core::byte_buffer buf(9000);
    for (auto& b : buf) b = static_cast<std::uint8_t>(r.next());
    for (int i = 0; i < 300; ++i) {
        auto len = r.below(buf.size());
        auto cut = r.below(len + 1);
        core::bytes_view all(buf.data(), len);
        auto z = wire::crc32_zlib(0, all);
        REQUIRE(wire::crc32_isal(0, all) == z);
        REQUIRE(wire::crc32_isal(wire::crc32_isal(0, all.first(cut)), all.subspan(cut)) == z);
    }
}

TEST_CASE("crc32_zeros is the CRC over that many zero bytes, and flip deltas are linear") {
    core::rng r(7);
    for (std::size_t n : {0u, 1u, 3u, 4u, 100u, 4096u, 9216u, 70000u}) {
        std::vector<std::uint8_t> pre(37), zeros(n, 0);
        for (auto& b : pre) b = static_cast<std::uint8_t>(r.next());
        const auto head = wire::crc32_update(0, pre);
        CHECK(wire::crc32_zeros(head, n) == wire::crc32_update(head, zeros));
    }
    // Past the lengths given tables (16 a thread), zlib's product: the same.
    for (std::size_t n = 1; n <= 40; ++n) {
        std::vector<std::uint8_t> pre(1 + r.below(64)), zeros(n, 0);
        for (auto& b : pre) b = static_cast<std::uint8_t>(r.next());
        const auto head = wire::crc32_update(0, pre);
        INFO("n " << n);
        CHECK(wire::crc32_zeros(head, n) == wire::crc32_update(head, zeros));
        CHECK(wire::crc32_zeros(head, 4096) == wire::crc32_update(head, std::vector<std::uint8_t>(4096, 0)));
    }
    // Flipping bit b of the byte d from the end changes the CRC by the same
    // delta, whatever the bytes.
    for (int i = 0; i < 50; ++i) {
        std::vector<std::uint8_t> m(1 + r.below(5000));
        for (auto& b : m) b = static_cast<std::uint8_t>(r.next());
        const std::size_t d = 1 + r.below(m.size());
        const auto bit = static_cast<unsigned>(r.below(8));
        const auto before = wire::crc32_update(0, m);
        m[m.size() - d] ^= static_cast<std::uint8_t>(1u << bit);
        CHECK((before ^ wire::crc32_update(0, m)) == wire::crc32_flip_delta(d, bit));
    }
}
