#include <catch2/catch.hpp>

#include "wire/rnr_timer.h"

using namespace mrct::wire;
using namespace std::chrono;

TEST_CASE("RNR timer table matches the spec model, code to time") {
    CHECK(rnr_timer_duration(0) == microseconds(655360));
    CHECK(rnr_timer_duration(1) == microseconds(10));
    CHECK(rnr_timer_duration(5) == microseconds(60));
    CHECK(rnr_timer_duration(14) == microseconds(1280));
    CHECK(rnr_timer_duration(20) == microseconds(10240));
    CHECK(rnr_timer_duration(31) == microseconds(491520));
    CHECK(rnr_timer_duration(32 + 14) == rnr_timer_duration(14));  // only 5 bits count
    for (unsigned c = 2; c < k_rnr_timer_codes; ++c)
        CHECK(rnr_timer_duration(static_cast<std::uint8_t>(c)) > rnr_timer_duration(static_cast<std::uint8_t>(c - 1)));
}

TEST_CASE("RNR timer table, time to the shortest code that covers it") {
    CHECK(rnr_timer_code_at_least(nanoseconds(0)) == 1);
    CHECK(rnr_timer_code_at_least(microseconds(10)) == 1);
    CHECK(rnr_timer_code_at_least(microseconds(11)) == 2);
    CHECK(rnr_timer_code_at_least(microseconds(50)) == 5);
    CHECK(rnr_timer_code_at_least(microseconds(1280)) == 14);
    CHECK(rnr_timer_code_at_least(microseconds(1281)) == 15);
    CHECK(rnr_timer_code_at_least(microseconds(491520)) == 31);
    CHECK(rnr_timer_code_at_least(microseconds(500000)) == 0);
    CHECK(rnr_timer_code_at_least(seconds(5)) == 0);
    for (unsigned c = 1; c < k_rnr_timer_codes; ++c)
        CHECK(rnr_timer_code_at_least(rnr_timer_duration(static_cast<std::uint8_t>(c))) == c);
}
