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
