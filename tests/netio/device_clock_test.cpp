// device_clock (engine/netio/device_clock.h): a NIC clock's ticks mapped onto
// the host's, from samples read between two host clock readings. No NIC
// here offers receive timestamps (docs/adapters.md), so the arithmetic is
// shown on a simulated one.
#include <catch2/catch.hpp>

#include <cstdint>

#include "netio/device_clock.h"

using namespace mrct;

namespace {
// A device clock at 1.25 GHz (0.8 ns a tick) whose count started 7 s before
// the host's time origin.
constexpr double k_ns_per_tick = 0.8;
constexpr std::int64_t k_host0 = 1'700'000'000'000'000'000;
std::uint64_t ticks_at(std::int64_t host_ns) { return static_cast<std::uint64_t>((host_ns - k_host0 + 7'000'000'000) / k_ns_per_tick); }
}  // namespace

TEST_CASE("device_clock: no mapping before two samples far enough apart") {
    netio::device_clock c;
    CHECK_FALSE(c.ready());
    CHECK_FALSE(c.to_host(123).has_value());
    c.sample(ticks_at(k_host0), k_host0 - 500, k_host0 + 500);
    CHECK_FALSE(c.ready());
    const std::int64_t soon = k_host0 + netio::device_clock::k_min_span_ns - 1000;
    c.sample(ticks_at(soon), soon - 500, soon + 500);
    CHECK_FALSE(c.ready());  // under 5 ms: no rate yet
}

TEST_CASE("device_clock: the rate and origin from the samples put a stamp within the read windows") {
    netio::device_clock c;
    // Reads 2 us wide, the clock read at their middle.
    for (std::int64_t t = k_host0; t <= k_host0 + 200'000'000; t += 50'000'000) c.sample(ticks_at(t), t - 1000, t + 1000);
    REQUIRE(c.ready());
    CHECK(c.ns_per_tick() == Approx(k_ns_per_tick).epsilon(1e-6));
    CHECK(c.uncertainty_ns() == 1000);
    // A frame stamped 3 ms after the latest sample, and one 40 ms before it.
    for (std::int64_t when : {k_host0 + 203'000'000, k_host0 + 160'000'000}) {
        const auto h = c.to_host(ticks_at(when));
        REQUIRE(h.has_value());
        CHECK(std::llabs(*h - when) <= 2);  // the tick's own rounding
    }
}

TEST_CASE("device_clock: a sample's time is the middle of its read window; a clock going back is not used") {
    netio::device_clock c;
    // The device read 300 ns into a 1 us window each time: the mapping is
    // off by 200 ns, within the window's half (uncertainty).
    for (std::int64_t t = k_host0; t <= k_host0 + 20'000'000; t += 10'000'000) c.sample(ticks_at(t), t - 300, t + 700);
    REQUIRE(c.ready());
    const auto h = c.to_host(ticks_at(k_host0 + 25'000'000));
    REQUIRE(h.has_value());
    CHECK(std::llabs(*h - (k_host0 + 25'000'000 + 200)) <= 2);
    CHECK(c.uncertainty_ns() == 500);
    const auto before = c.last_sample_ns();
    c.sample(ticks_at(k_host0), k_host0 + 30'000'000, k_host0 + 30'001'000);  // ticks behind the latest: a reset
    CHECK(c.last_sample_ns() == before);
    CHECK(c.ns_per_tick() == Approx(k_ns_per_tick).epsilon(1e-6));
}
