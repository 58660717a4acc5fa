#include <catch2/catch.hpp>

#include "core/bytes.h"

using namespace mrct::core;

TEST_CASE("byte_reader reads big-endian and refuses short reads without advancing") {
    const std::uint8_t data[] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09};
    byte_reader r(data);
    CHECK(*r.u8() == 0x01);
    CHECK(*r.u16() == 0x0203);
    CHECK(*r.u24() == 0x040506);
    CHECK(r.offset() == 6);
    CHECK_FALSE(r.u32().has_value());
    CHECK(r.offset() == 6);  // no advance on failure
    CHECK_FALSE(r.take(4).has_value());
    CHECK(r.take(3)->size() == 3);
    CHECK(r.remaining() == 0);
    CHECK_FALSE(r.u8().has_value());
}

TEST_CASE("byte_reader u64 and rest") {
    const std::uint8_t data[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    byte_reader r(data);
    CHECK(*r.u64() == 0x0102030405060708ull);
    CHECK(r.rest().size() == 1);
}

TEST_CASE("byte_writer writes big-endian and patches") {
    byte_buffer b;
    byte_writer w(b);
    w.u8(0xAA);
    w.u16(0x0102);
    w.u24(0x030405);
    w.u32(0x06070809);
    w.u64(0x0A0B0C0D0E0F1011ull);
    w.zeros(2);
    w.patch_u16(0, 0xBEEF);
    const byte_buffer want = {0xBE, 0xEF, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A,
                              0x0B, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x11, 0x00, 0x00};
    CHECK(b == want);
}
