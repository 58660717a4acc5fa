#include <catch2/catch.hpp>

#include <set>
#include <string>

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

TEST_CASE("sub_seed: the same (seed, name, index) gives the same seed; names, indexes and neighbouring seeds spread") {
    using mrct::core::rng;
    CHECK(rng::sub_seed(1, "dut") == rng::sub_seed(1, "dut"));
    CHECK(rng::sub_seed(1, "dut", 3) == rng::sub_seed(1, "dut", 3));
    CHECK(rng::sub_seed(1, "dut") != rng::sub_seed(1, "peer"));
    CHECK(rng::sub_seed(1, "peer", 0) != rng::sub_seed(1, "peer", 1));
    CHECK(rng::sub_seed(1, "dut") != rng::sub_seed(2, "dut"));
    // Neighbouring inputs (cases HDR-001 and HDR-002, members 0 and 1) give
    // seeds that differ in about half their bits, not in the last one.
    auto bits = [](std::uint64_t a, std::uint64_t b) { return __builtin_popcountll(a ^ b); };
    CHECK(bits(rng::sub_seed(1, "case HDR-001"), rng::sub_seed(1, "case HDR-002")) > 16);
    CHECK(bits(rng::sub_seed(1, "payload", 0), rng::sub_seed(1, "payload", 1)) > 16);
    CHECK(bits(rng::sub_seed(1, "dut"), rng::sub_seed(2, "dut")) > 16);
    // 10 000 members of one stream and 10 000 names: no two seeds alike.
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < 10000; ++i) seen.insert(rng::sub_seed(7, "peer", i));
    for (int i = 0; i < 10000; ++i) seen.insert(rng::sub_seed(7, "case C-" + std::to_string(i)));
    CHECK(seen.size() == 20000);
    // Pinned: a change of derivation changes every run's numbers, and must be
    // made on purpose (with the approved baselines regenerated).
    CHECK(rng::sub_seed(1, "dut") == 9339501586979859625ull);
    CHECK(rng::sub_seed(1, "case HDR-001") == 13642807735866946167ull);
}
