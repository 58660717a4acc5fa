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

TEST_CASE("duration_text: the largest unit that divides, read back by parse_duration_ns") {
    CHECK(core::duration_text(1'000'000) == "1ms");
    CHECK(core::duration_text(5'000) == "5us");
    CHECK(core::duration_text(1'500) == "1500ns");
    CHECK(core::duration_text(0) == "0ns");
    for (std::int64_t ns : {0LL, 7LL, 5'000LL, 20'000'000LL, 123'456'789LL})
        CHECK(core::parse_duration_ns(core::duration_text(ns)) == ns);
}
