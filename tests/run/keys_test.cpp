// A case's topology and limits, declared once (engine/run/keys.cpp): the
// declarations give the runner's defaults, validate's checks and the docs'
// tables.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run/keys.h"

using namespace mrct;
using core::nanos;

namespace {
plan::args args(std::initializer_list<std::pair<std::string, std::string>> kv) {
    plan::args a;
    int col = 1;
    for (const auto& [k, v] : kv) a[k] = {v, {"p.yaml", 3, col++}};
    return a;
}
std::vector<std::string> problems(const plan::args& a, bool topology = false) {
    std::vector<std::string> out;
    run::validate_keys(topology ? run::topology_decls() : run::limit_decls(), topology ? "topology" : "limits",
                       topology ? "topology key" : "limit", a,
                       [&](const plan::loc& at, const std::string& m) { out.push_back(at.str() + ": " + m); });
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
    CHECK(p[2] == "p.yaml:3:3: limits.max_frames must be 1..999999999999, got 'lots'");
    CHECK(p[3] == "p.yaml:3:4: limits.settle expects a duration such as 5us");
    CHECK(problems(args({{"max_frames", "0"}})).size() == 1);
    CHECK(problems(args({{"max_frames", "1000000000000"}})).size() == 1);
    CHECK(problems(args({{"step_late", "-1ms"}})).size() == 1);
}

TEST_CASE("topology: defaults, per-path delays, and validate's messages") {
    const auto t = run::read_topology({});
    CHECK(t.paths == 4);
    CHECK(t.peers == 1);
    CHECK(t.delay == nanos{2000});
    CHECK(t.path_delay.empty());
    CHECK_FALSE(t.rate.has_value());
    const auto u = run::read_topology(args({{"paths", "8"}, {"path_delay.3", "1ms"}, {"rate", "10Gbps"}, {"delay", "0"}}));
    CHECK(u.paths == 8);
    CHECK(u.delay == nanos{0});
    CHECK(u.path_delay.at(3) == nanos{1'000'000});
    CHECK(u.rate == "10Gbps");
    const auto p = problems(args({{"paths", "0"}, {"path_delay.banana", "5us"}, {"peers", "65"}, {"rate", "fast"}}), true);
    REQUIRE(p.size() == 4);
    // args are a map: path_delay.banana sorts before paths
    CHECK(p[0] == "p.yaml:3:2: topology.path_delay: 'banana' is not a path number");
    CHECK(p[1] == "p.yaml:3:1: topology.paths must be 1..256, got '0'");
    CHECK(p[2] == "p.yaml:3:3: topology.peers must be 1..64, got '65'");
    CHECK(p[3] == "p.yaml:3:4: topology.rate expects a rate such as 100Gbps");
    CHECK(problems(args({{"delay", "soon"}}), true) == std::vector<std::string>{"p.yaml:3:1: topology.delay expects a duration such as 5us"});
}

TEST_CASE("keys: the docs' tables have a row per declaration, with its default and whether it scales") {
    const auto md = run::keys_markdown(run::limit_decls());
    for (const auto& d : run::limit_decls()) CHECK_THAT(md, Catch::Contains("| `" + std::string(d.name) + "` |"));
    CHECK_THAT(md, Catch::Contains("| `duration` | duration | `20ms` |"));
    CHECK_THAT(md, Catch::Contains("| `step_late` | duration | none |"));
    CHECK_THAT(md, Catch::Contains("(multiplied by `--time-scale`)"));
    const auto tm = run::keys_markdown(run::topology_decls());
    CHECK_THAT(tm, Catch::Contains("| `path_delay.N` | duration | `0` |"));
    CHECK_THAT(tm, Catch::Contains("| `paths` | count, 1..256 | `4` |"));
    CHECK_THAT(tm, Catch::Contains("(divided by `--time-scale`)"));
}

TEST_CASE("keys: the plan parser takes every declared topology and limits key, in a case and in defaults") {
    // engine/plan reads the shape of a plan below run, without a list of
    // topology keys of its own (run checks them): it must carry each one run
    // declares into the case, or a declared key could never be written.
    auto value = [](const run::key_decl& d) -> std::string {
        if (d.per_path) return "{1: 5us}";
        if (d.type == run::key_decl::kind::rate) return "10Gbps";
        return d.def.empty() ? "1ms" : std::string(d.def);
    };
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "keys_test_files";
    std::filesystem::create_directories(dir);
    for (const auto* decls : {&run::topology_decls(), &run::limit_decls()}) {
        const std::string section = decls == &run::topology_decls() ? "topology" : "limits";
        for (const auto& d : *decls) {
            const std::string kv = std::string(d.name) + ": " + value(d);
            const auto p = (dir / (section + "_" + std::string(d.name) + ".yaml")).string();
            std::ofstream(p) << "defaults:\n  " << section << ": {" << kv << "}\ncases:\n  - id: A\n    clauses: [MR-HDR-1]\n    "
                             << section << ": {" << kv << "}\n    expect: [{wire_format: {}}]\n";
            INFO(p);
            const auto s = plan::load(p);
            REQUIRE(s.ok());
            const auto& c = s->cases.at(0);
            CHECK((section == "topology" ? c.topology : c.limits).size() == 1);
        }
    }
}
