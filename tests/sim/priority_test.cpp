#include "sim/priority.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <thread>

using namespace mrct;

namespace {
int my_nice() { return ::getpriority(PRIO_PROCESS, static_cast<id_t>(::syscall(SYS_gettid))); }
}  // namespace

TEST_CASE("--priority values are parsed and bounded") {
    CHECK(sim::parse_priority("off")->k == sim::priority::kind::off);
    auto n = sim::parse_priority("nice:-10");
    REQUIRE(n.ok());
    CHECK(n->k == sim::priority::kind::nice);
    CHECK(n->value == -10);
    CHECK(sim::parse_priority("nice:19")->value == 19);
    CHECK(sim::parse_priority("nice:+5")->value == 5);
    CHECK(sim::parse_priority("fifo:1")->k == sim::priority::kind::fifo);
    for (const char* bad : {"", "auto", "nice", "nice:", "nice:-21", "nice:20", "nice:1x", "fifo:0", "fifo:100", "rr:5",
                            "nice:--1", "nice:+-1", "nice:-0010", "nice:99999"})
        CHECK_FALSE(sim::parse_priority(bad).ok());
    CHECK_THAT(sim::parse_priority("nice:-30").err().message, Catch::Contains("nice:N (N from -20 to 19)"));
}

TEST_CASE("apply_priority sets the calling thread's nice value; become_ordinary puts a thread back") {
    // In a thread of its own, so the test process keeps its priority. A
    // higher nice value (less priority) is allowed to anyone.
    std::string said;
    int raised = 0, child = 0, was = 0;
    std::thread t([&] {
        was = my_nice();
        said = sim::apply_priority({sim::priority::kind::nice, std::min(was + 5, 19)});
        raised = my_nice();
        std::thread c([&] {
            sim::become_ordinary();  // back to `was`: needs privilege when that is lower
            child = my_nice();
        });
        c.join();
    });
    t.join();
    CHECK(raised == std::min(was + 5, 19));
    CHECK_THAT(said, Catch::Contains("(was " + std::to_string(was) + ")"));
    if (::geteuid() == 0) CHECK(child == was);
    CHECK(sim::apply_priority({}).starts_with("ordinary (nice "));
}
