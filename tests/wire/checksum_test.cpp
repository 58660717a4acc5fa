#include <catch2/catch.hpp>

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
