#include <catch2/catch.hpp>

#include "core/rng.h"

using mrct::core::rng;

TEST_CASE("rng is reproducible from its seed and name") {
    rng a(7), b(7), c(8);
    for (int i = 0; i < 100; ++i) {
        auto x = a.next();
        CHECK(x == b.next());
        CHECK(x != c.next());
    }
    rng n1(7, "loss"), n2(7, "loss"), n3(7, "jitter");
    CHECK(n1.next() == n2.next());
    CHECK(n1.next() != n3.next());
}

TEST_CASE("rng known values pin the generator across platforms") {
    // xoshiro256** seeded by splitmix64(0): if these change, every recorded run changes.
    rng r(0);
    CHECK(r.next() == 0x99ec5f36cb75f2b4ull);
    CHECK(r.next() == 0xbf6e1f784956452aull);
}

TEST_CASE("rng below and between stay in range and cover it") {
    rng r(42);
    int seen[10] = {};
    for (int i = 0; i < 10000; ++i) {
        auto v = r.below(10);
        REQUIRE(v < 10);
        ++seen[v];
    }
    for (int s : seen) CHECK(s > 800);
    for (int i = 0; i < 1000; ++i) {
        auto v = r.between(5, 7);
        REQUIRE(v >= 5);
        REQUIRE(v <= 7);
    }
    int hits = 0;
    for (int i = 0; i < 10000; ++i) hits += r.chance(0.25);
    CHECK(hits > 2300);
    CHECK(hits < 2700);
}
