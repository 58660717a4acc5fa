#include <catch2/catch.hpp>

#include "core/units.h"

using namespace mrct;

TEST_CASE("parse_count: plain decimal digits only, at most nine") {
    CHECK(core::parse_count("0") == 0u);
    CHECK(core::parse_count("7") == 7u);
    CHECK(core::parse_count("999999999") == 999999999u);
    CHECK_FALSE(core::parse_count("").has_value());
    CHECK_FALSE(core::parse_count("1000000000").has_value());  // ten digits
    CHECK_FALSE(core::parse_count("-1").has_value());
    CHECK_FALSE(core::parse_count("+1").has_value());
    CHECK_FALSE(core::parse_count("1e3").has_value());
    CHECK_FALSE(core::parse_count(" 1").has_value());
    CHECK_FALSE(core::parse_count("two").has_value());
    CHECK_FALSE(core::parse_count("all").has_value());
}
