// rx_waits: runs of frames that waited in the host, with the thread's CPU.
#include <catch2/catch.hpp>

#include <functional>

#include "netio/rx_waits.h"

using namespace mrct;
using core::nanos;

namespace {
constexpr nanos us(long long v) { return nanos{v * 1000}; }
constexpr nanos base{1'700'000'000'000'000'000LL};  // some wall-clock instant
// A CPU clock that reads `v`.
std::function<nanos()> cpu(nanos v) {
    return [v] { return v; };
}
}  // namespace

TEST_CASE("rx_waits: frames taken in promptly make no run") {
    netio::rx_waits w(us(1000));
    for (int i = 0; i < 10; ++i) CHECK_FALSE(w.on_frame(base + us(100 * i + 20), base + us(100 * i), cpu(us(5 * i))));
    CHECK_FALSE(w.finish());
    CHECK(w.runs() == 0);
}

TEST_CASE("rx_waits: frames that waited past the threshold make one run, ended by the next prompt frame") {
    netio::rx_waits w(us(1000));
    CHECK_FALSE(w.on_frame(base + us(100), base + us(90), cpu(us(50))));  // prompt: the span starts here
    // Three frames arrived from 200 us on and were taken in at 4.3 ms, the
    // thread having run 0.2 ms meanwhile: it did not run.
    CHECK_FALSE(w.on_frame(base + us(4300), base + us(200), cpu(us(240))));
    CHECK_FALSE(w.on_frame(base + us(4310), base + us(250), cpu(us(245))));
    CHECK_FALSE(w.on_frame(base + us(4320), base + us(3000), cpu(us(250))));
    const auto r = w.on_frame(base + us(4400), base + us(4380), cpu(us(260)));
    REQUIRE(r);
    CHECK(r->first_arrival == base + us(200));
    CHECK(r->longest == us(4100));
    CHECK(r->frames == 3);  // the prompt frame is not in it
    CHECK(r->wall == us(4300));  // 100 us to the prompt intake at 4400 us
    CHECK(r->cpu == us(210));
    CHECK(w.runs() == 1);
    CHECK(r->text().find("frames waited up to 4.100 ms") == 0);
    CHECK(r->text().find("(3 frames") != std::string::npos);
    CHECK(r->text().find("the thread ran 0.210 ms of the 4.300 ms") != std::string::npos);
    CHECK_FALSE(w.on_frame(base + us(4500), base + us(4490), cpu(us(270))));  // a second prompt frame: no run again
}

TEST_CASE("rx_waits: a wait at the threshold is prompt; a run still open at the end is given by finish; no stamp is ignored") {
    netio::rx_waits w(us(1000));
    CHECK_FALSE(w.on_frame(base + us(1000), base, cpu(us(0))));  // exactly the threshold
    CHECK_FALSE(w.on_frame(base + us(9000), nanos{0}, cpu(us(1))));  // no kernel stamp: nothing known
    CHECK_FALSE(w.finish());
    CHECK_FALSE(w.on_frame(base + us(5000), base + us(2000), cpu(us(3000))));  // 3 ms: opens a run
    const auto r = w.finish();
    REQUIRE(r);
    CHECK(r->frames == 1);
    CHECK(r->cpu == us(3000));  // from the prompt frame at 1 ms: busy all along
    CHECK(r->wall == us(4000));
    CHECK_FALSE(w.finish());
}

TEST_CASE("rx_waits: without a prompt frame before it, a run's span starts at its first intake") {
    netio::rx_waits w(us(500));
    CHECK_FALSE(w.on_frame(base + us(2000), base, cpu(us(100))));
    CHECK_FALSE(w.on_frame(base + us(2600), base + us(100), cpu(us(700))));
    const auto r = w.finish();
    REQUIRE(r);
    CHECK(r->wall == us(600));
    CHECK(r->cpu == us(600));
}

TEST_CASE("rx_waits: the CPU clock is read at most once per k_refresh, prompt or waiting, and once when a run ends") {
    netio::rx_waits w(us(1000));
    int reads = 0;
    nanos clock_now{0};
    const std::function<nanos()> counted = [&] {
        ++reads;
        return clock_now;
    };
    CHECK_FALSE(w.on_frame(base + us(10), base, counted));  // the first: a span start
    CHECK(reads == 1);
    for (int i = 1; i < 19; ++i) CHECK_FALSE(w.on_frame(base + us(10 + 10 * i), base + us(10 * i), counted));
    CHECK(reads == 1);  // 190 us on: the start kept
    CHECK_FALSE(w.on_frame(base + us(210), base + us(200), counted));  // 200 us: refreshed
    CHECK(reads == 2);
    clock_now = us(100);
    CHECK_FALSE(w.on_frame(base + us(2300), base + us(250), counted));  // waited, opens a run: read
    CHECK(reads == 3);
    // A backlog: 999 frames 0.2 us apart, each waited: read every 200 us.
    for (int i = 1; i < 1000; ++i) CHECK_FALSE(w.on_frame(base + us(2300) + nanos{200 * i}, base + us(260), counted));
    CHECK(reads == 3);  // 200 us on: the first reading kept
    CHECK_FALSE(w.on_frame(base + us(2500), base + us(270), counted));
    CHECK(reads == 4);
    clock_now = us(150);
    const auto r = w.on_frame(base + us(2530), base + us(2520), counted);  // prompt, ends the run: read
    CHECK(reads == 5);
    REQUIRE(r);
    CHECK(r->frames == 1001);
    CHECK(r->wall == us(2320));  // from the span start at 210 us to the intake that ended it
    CHECK(r->cpu == us(150));
    CHECK_FALSE(w.on_frame(base + us(2600), base + us(2590), counted));  // prompt: 70 us after the last reading
    CHECK(reads == 5);
}

TEST_CASE("rx_waits: the thread's CPU clock advances while it works") {
    const auto a = netio::thread_cpu_now();
    volatile unsigned long x = 0;
    for (unsigned long i = 0; i < 2'000'000; ++i) x = x + i;
    CHECK(netio::thread_cpu_now() > a);
}
