#include <catch2/catch.hpp>

#include "core/hex.h"

using namespace mrct::core;

TEST_CASE("hex round trip and parsing rules") {
    const byte_buffer b = {0x00, 0x7f, 0xAB, 0xff};
    CHECK(to_hex(b) == "007fabff");
    CHECK(*from_hex("007fabff") == b);
    CHECK(*from_hex("0x00:7F AB ff") == b);
    CHECK_FALSE(from_hex("abc").has_value());
    CHECK_FALSE(from_hex("zz").has_value());
    CHECK(from_hex("")->empty());
}
