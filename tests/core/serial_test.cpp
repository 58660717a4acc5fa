#include <catch2/catch.hpp>

#include "core/serial.h"

using namespace mrct::core;

TEST_CASE("24-bit PPSN serial arithmetic wraps") {
    CHECK(psn24::add(0xFFFFFF, 1) == 0);
    CHECK(psn24::diff(2, 0xFFFFFE) == 4);
    CHECK(psn24::lt(0xFFFFFE, 2));
    CHECK_FALSE(psn24::lt(2, 0xFFFFFE));
    CHECK(psn24::le(5, 5));
    CHECK_FALSE(psn24::lt(5, 5));
    CHECK_FALSE(psn24::lt(0, 0x800000));  // exactly half apart: undefined, false both ways
    CHECK_FALSE(psn24::lt(0x800000, 0));
}

TEST_CASE("32- and 16-bit serial numbers") {
    CHECK(seq32::lt(0xFFFFFFFFu, 0));
    CHECK(seq32::add(0xFFFFFFFFu, 2) == 1);
    CHECK(seq16::lt(0xFFFF, 1));
    CHECK(seq16::diff(1, 0xFFFF) == 2);
}
