// A case's limits, declared once (engine/run/limits.cpp): the declarations
// give the runner's defaults, validate's checks and the docs' table.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "run/limits.h"

using namespace mrct;
using core::nanos;

namespace {
plan::args args(std::initializer_list<std::pair<std::string, std::string>> kv) {
    plan::args a;
    int col = 1;
    for (const auto& [k, v] : kv) a[k] = {v, {"p.yaml", 3, col++}};
    return a;
}
std::vector<std::string> problems(const plan::args& a) {
    std::vector<std::string> out;
    run::validate_limits(a, [&](const plan::loc& at, const std::string& m) { out.push_back(at.str() + ": " + m); });
    return out;
}
}  // namespace

TEST_CASE("limits: the defaults are the declarations'") {
    const auto l = run::read_limits({});
    CHECK(l.duration == nanos{20'000'000});
    CHECK(l.settle == nanos{1'000'000});
    CHECK(l.max_frames == 4'000'000);
    CHECK_FALSE(l.step_late.has_value());
    const auto m = run::read_limits(args({{"duration", "5ms"}, {"settle", "0"}, {"max_frames", "12"}, {"step_late", "10ms"}}));
    CHECK(m.duration == nanos{5'000'000});
    CHECK(m.settle == nanos{0});
    CHECK(m.max_frames == 12);
    CHECK(m.step_late == nanos{10'000'000});
}

TEST_CASE("limits: validate refuses unknown keys, wrong types and values out of range, where they are written") {
    CHECK(problems(args({{"duration", "1ns"}, {"settle", "0"}, {"max_frames", "1"}, {"step_late", "never"}})).empty());
    const auto p = problems(args({{"deadline", "1ms"}, {"duration", "0"}, {"max_frames", "lots"}, {"settle", "soon"}}));
    REQUIRE(p.size() == 4);
    // args are a map: keys in order deadline, duration, max_frames, settle
    CHECK(p[0] == "p.yaml:3:1: unknown limit 'deadline' (expected duration, settle, max_frames, step_late)");
    CHECK(p[1] == "p.yaml:3:2: limits.duration must be longer than 0 (the case would end before it starts)");
    CHECK(p[2] == "p.yaml:3:3: limits.max_frames expects a positive integer up to 999999999999");
    CHECK(p[3] == "p.yaml:3:4: limits.settle expects a duration");
    CHECK(problems(args({{"max_frames", "0"}})).size() == 1);
    CHECK(problems(args({{"max_frames", "1000000000000"}})).size() == 1);
    CHECK(problems(args({{"step_late", "-1ms"}})).size() == 1);
}

TEST_CASE("limits: the docs' table has a row per declaration, with its default and whether it scales") {
    const auto md = run::limits_markdown();
    for (const auto& d : run::limit_decls()) CHECK_THAT(md, Catch::Contains("| `" + std::string(d.name) + "` |"));
    CHECK_THAT(md, Catch::Contains("| `duration` | duration | `20ms` |"));
    CHECK_THAT(md, Catch::Contains("| `step_late` | duration | none |"));
    CHECK_THAT(md, Catch::Contains("(scaled by `--time-scale`)"));
}
