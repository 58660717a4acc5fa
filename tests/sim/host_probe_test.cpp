// The host probe: a thread that keeps the wake-ups the host delayed beyond
// its floor. Nothing here depends on how loaded the machine is: with a floor
// of zero every wake-up is late by something (it comes after its deadline),
// so every one is kept, in order.
#include <catch2/catch.hpp>

#include <thread>

#include "sim/host_probe.h"

using namespace mrct;
using namespace std::chrono_literals;

TEST_CASE("host_probe keeps each wake-up later than its floor, in order of deadline") {
    std::vector<sim::host_probe::hold> holds;
    std::uint64_t wakeups = 0;
    {
        sim::host_probe probe(100us, 0ns);
        CHECK(probe.period() == 100us);
        while (probe.wakeups() < 5) std::this_thread::sleep_for(1ms);
        holds = probe.holds();
        wakeups = probe.wakeups();
    }  // the destructor stops and joins the thread
    REQUIRE(holds.size() >= 5);
    CHECK(holds.size() <= wakeups + 1);
    for (std::size_t i = 0; i < holds.size(); ++i) {
        CHECK(holds[i].late > 0ns);
        if (i) CHECK(holds[i].due - holds[i - 1].due >= 100us);  // one record per hold, no catch-up run
    }
}

TEST_CASE("host_probe with a floor above any plausible hold keeps nothing") {
    sim::host_probe probe(100us, std::chrono::hours(1));
    while (probe.wakeups() < 3) std::this_thread::sleep_for(1ms);
    CHECK(probe.holds().empty());
}
