// Plans: shape, variables, sweeps, fragments, includes, and errors that carry
// file:line:col.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "plan/plan.h"

using namespace mrct;

namespace {

std::string write(const std::string& name, const std::string& text) {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "plan_test_files";
    std::filesystem::create_directories(dir);
    const auto p = (dir / name).string();
    std::ofstream(p) << text;
    return p;
}

// The error a plan of this text gives (it must give one).
std::string load_error(const std::string& name, const std::string& text) {
    auto s = plan::load(write(name, text));
    REQUIRE_FALSE(s.ok());
    return s.err().message;
}

const char* k_minimal = R"(suite: {name: S, version: "1"}
cases:
  - id: A-001
    title: t
    clauses: [MR-HDR-1]
    expect:
      - wire_format: {}
)";

}  // namespace

TEST_CASE("a minimal plan loads with defaults") {
    auto s = plan::load(write("min.yaml", k_minimal));
    REQUIRE(s.ok());
    REQUIRE(s->cases.size() == 1);
    const auto& c = s->cases[0];
    CHECK(c.id == "A-001");
    CHECK(c.level == "MUST");
    CHECK(c.role == "receiver");
    CHECK(c.area == "A");
    CHECK(c.expect.at(0).name == "wire_format");
    CHECK(c.expect.at(0).at.line == 7);
    CHECK(c.expect.at(0).at.col == 9);
}

TEST_CASE("variables, sweeps, fragments, defaults and includes") {
    write("inc.yaml", R"(fragments:
  two: [{post_write: {size: "${size}", count: 2}}]
cases:
  - id: B-001
    title: swept
    clauses: [MR-PATH-1]
    sweep: {paths: [1, 8], op: [a, b]}
    topology: {paths: "${paths}", path_delay: {1: 5us}}
    setup:
      - use: two
    expect:
      - distinct_entropy: {}
)");
    auto s = plan::load(write("top.yaml", R"(suite: {name: S}
vars: {size: 4096}
defaults:
  topology: {delay: 3us}
  expect: [{wire_format: {}}]
include: [inc.yaml]
)"));
    REQUIRE(s.ok());
    REQUIRE(s->cases.size() == 4);
    CHECK(s->cases[0].id == "B-001[op=a][paths=1]");
    CHECK(s->cases[3].id == "B-001[op=b][paths=8]");
    const auto& c = s->cases[3];
    CHECK(c.topology.at("paths").text == "8");
    CHECK(c.topology.at("delay").text == "3us");           // from defaults
    CHECK(c.topology.at("path_delay.1").text == "5us");    // nested maps flatten with '.'
    REQUIRE(c.setup.size() == 1);                          // the fragment, spliced
    CHECK(c.setup[0].name == "post_write");
    CHECK(c.setup[0].a.at("size").text == "4096");         // variable substituted
    CHECK(c.setup[0].at.file.ends_with("inc.yaml"));
    REQUIRE(c.expect.size() == 2);                         // defaults first, then the case's
    CHECK(c.expect[0].name == "wire_format");
    CHECK(c.expect[1].name == "distinct_entropy");
}

TEST_CASE("plan errors name file, line and column") {
    const auto err = load_error;
    SECTION("unknown key in a case") {
        auto m = err("e1.yaml", "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    expct: []\n    expect: [{wire_format: {}}]\n");
        CHECK_THAT(m, Catch::Contains("e1.yaml:4:5: unknown key 'expct' in case"));
    }
    SECTION("unknown variable") {
        auto m = err("e2.yaml",
                     "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    setup: [{post_write: {size: \"${nope}\"}}]\n"
                     "    expect: [{wire_format: {}}]\n");
        CHECK_THAT(m, Catch::Contains("e2.yaml:4:33: unknown variable 'nope'"));
    }
    SECTION("a case without clauses or expectations") {
        auto m = err("e3.yaml", "cases:\n  - id: X\n    title: t\n");
        CHECK_THAT(m, Catch::Contains("e3.yaml:2:5: case 'X' cites no clauses"));
        CHECK_THAT(m, Catch::Contains("case 'X' expects nothing"));
    }
    SECTION("wrong type") {
        auto m = err("e4.yaml", "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    steps: {at: 1us}\n    expect: [{wire_format: {}}]\n");
        CHECK_THAT(m, Catch::Contains("e4.yaml:4:12: steps: expected a list"));
    }
    SECTION("a step with both at and on") {
        auto m = err("e5.yaml",
                     "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    steps:\n      - {at: 1us, on: {match: {opcode: ACK}}, do: []}\n"
                     "    expect: [{wire_format: {}}]\n");
        CHECK_THAT(m, Catch::Contains("e5.yaml:5:9: a step needs exactly one of 'at' and 'on'"));
    }
    SECTION("a trigger's nth counts from 1") {
        for (const char* nth : {"0", "x", "-1", "4294967297", "18446744073709551617"}) {
            auto m = err("e10.yaml", std::string("cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    steps:\n"
                                                 "      - {on: {match: {opcode: ACK}, nth: ") +
                                         nth + "}, do: []}\n    expect: [{wire_format: {}}]\n");
            CHECK_THAT(m, Catch::Contains("e10.yaml:5:42: nth: expected a positive integer"));
        }
    }
    SECTION("duplicate ids") {
        auto m = err("e6.yaml",
                     "cases:\n  - {id: X, clauses: [MR-HDR-1], expect: [{wire_format: {}}]}\n"
                     "  - {id: X, clauses: [MR-HDR-1], expect: [{wire_format: {}}]}\n");
        CHECK_THAT(m, Catch::Contains("duplicate case id 'X'"));
    }
    SECTION("YAML syntax") {
        auto m = err("e7.yaml", "cases:\n  - id: [unclosed\n");
        CHECK_THAT(m, Catch::Contains("e7.yaml:"));
    }
    SECTION("missing include and unknown fragment") {
        CHECK_THAT(err("e8.yaml", "include: [nowhere.yaml]\n"), Catch::Contains("e8.yaml:1:11: included file 'nowhere.yaml' not found"));
        auto m = err("e9.yaml", "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    setup: [{use: ghost}]\n    expect: [{wire_format: {}}]\n");
        CHECK_THAT(m, Catch::Contains("e9.yaml:4:19: unknown fragment 'ghost'"));
    }
}

// Hostile plans, by class (issue 23 item 3).
TEST_CASE("hostile plans: duplicate keys, includes outside the plan's folder or not files, deep nesting") {
    const auto err = load_error;
    SECTION("a repeated key anywhere is an error where it repeats") {
        auto m = err("h1.yaml", std::string(k_minimal) + "cases: []\n");
        CHECK_THAT(m, Catch::Contains("h1.yaml:8:1: duplicate key 'cases'"));
        auto n = err("h2.yaml", "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    limits: {duration: 1ms, duration: 2ms}\n"
                                "    expect: [{wire_format: {}}]\n");
        CHECK_THAT(n, Catch::Contains("h2.yaml:4:29: duplicate key 'duration'"));
    }
    SECTION("includes stay in the plan's folder and are regular files") {
        CHECK_THAT(err("h3.yaml", "include: [/etc/passwd]\n"), Catch::Contains("h3.yaml:1:11: included file '/etc/passwd' is outside the plan's folder"));
        CHECK_THAT(err("h4.yaml", "include: [../../../../../../../../etc/hostname]\n"), Catch::Contains("is outside the plan's folder"));
        std::filesystem::create_directories(std::filesystem::path(MRCT_TEST_TMP) / "plan_test_files" / "adir");
        CHECK_THAT(err("h5.yaml", "include: [adir]\n"), Catch::Contains("h5.yaml:1:11: included file 'adir' is not a regular file"));
        auto dir = (std::filesystem::path(MRCT_TEST_TMP) / "plan_test_files" / "adir").string();
        auto s = plan::load(dir);
        REQUIRE_FALSE(s.ok());
        CHECK_THAT(s.err().message, Catch::Contains("not a plan file"));
    }
    SECTION("an include root widens where includes may come from") {
        namespace fs = std::filesystem;
        const auto base = fs::path(MRCT_TEST_TMP) / "plan_test_files";
        fs::create_directories(base / "top");
        fs::create_directories(base / "shared");
        std::ofstream((base / "shared" / "common.yaml").string()) << std::string("cases:\n") + (std::strchr(k_minimal, '\n') + 8);
        const auto top = (base / "top" / "plan.yaml").string();
        std::ofstream(top) << "suite: {name: S}\ninclude: [../shared/common.yaml]\n";
        auto refused = plan::load(top);
        REQUIRE_FALSE(refused.ok());
        CHECK_THAT(refused.err().message, Catch::Contains("plan.yaml:2:11: included file '../shared/common.yaml' is outside the "
                                                          "plan's folder"));
        CHECK_THAT(refused.err().message, Catch::Contains("--plan-include-root DIR allows another"));
        plan::limits lim;
        lim.include_roots = {(base / "shared").string()};
        auto s = plan::load(top, lim);
        REQUIRE(s.ok());
        CHECK(s->cases.at(0).id == "A-001");
    }
    SECTION("defaults.topology takes a case's topology keys, not impair") {
        CHECK_THAT(err("h7.yaml", "defaults:\n  topology: {paths: 2, impair: [], bananas: 3}\n"),
                   Catch::Contains("h7.yaml:2:24: unknown key 'impair' in defaults.topology"));
    }
    SECTION("nesting deeper than a plan needs") {
        std::string deep = "cases:\n  - id: X\n    clauses: [MR-HDR-1]\n    expect: [{wire_format: {}}]\n    description: ";
        for (int i = 0; i < 100; ++i) deep += "[";
        for (int i = 0; i < 100; ++i) deep += "]";
        CHECK_THAT(err("h6.yaml", deep + "\n"), Catch::Contains("nested more than 64 levels deep"));
    }
}

namespace {
// The error a plan of this text gives under `lim` (it must give one).
std::string limit_error(const std::string& name, const std::string& text, const plan::limits& lim) {
    auto s = plan::load(write(name, text), lim);
    REQUIRE_FALSE(s.ok());
    return s.err().message;
}
bool loads(const std::string& name, const std::string& text, const plan::limits& lim) {
    return plan::load(write(name, text), lim).ok();
}
}  // namespace

TEST_CASE("limits: each refuses where it is crossed, names itself, and raising it lets the plan load") {
    SECTION("set_limit takes NAME=VALUE, bytes with a suffix, and refuses the rest") {
        plan::limits l;
        CHECK(plan::set_limit(l, "nodes=5").ok());
        CHECK(l.nodes == 5);
        CHECK(plan::set_limit(l, "plan_bytes=3MiB").ok());
        CHECK(l.plan_bytes == 3u << 20);
        CHECK(plan::set_limit(l, "action_bytes=2GiB").ok());
        CHECK(l.action_bytes == std::uint64_t{2} << 30);
        CHECK(plan::set_limit(l, "expanded_bytes=64KiB").ok());
        CHECK(l.expanded_bytes == 64u << 10);
        CHECK_THAT(plan::set_limit(l, "bananas=1").err().message, Catch::Contains("NAME one of plan_bytes, nodes"));
        CHECK_THAT(plan::set_limit(l, "nodes").err().message, Catch::Contains("NAME=VALUE"));
        for (const char* bad : {"nodes=0", "nodes=-1", "nodes=1.5", "nodes=", "cases=18446744073709551616",
                                "plan_bytes=17179869184GiB"})
            CHECK_THAT(plan::set_limit(l, bad).err().message, Catch::Contains("expected a positive count"));
        CHECK(plan::limit_table().size() == 6);
    }
    // Five cases from a sweep, each with a fragment of 2 actions; a second
    // fragment is an alias of the first.
    const std::string swept = R"(suite: {name: S}
fragments:
  two: &two [{post_write: {size: 8}}, {post_write: {size: 16}}]
  again: *two
cases:
  - id: A
    clauses: [MR-HDR-1]
    sweep: {paths: [1, 2, 3, 4, 5]}
    setup: [{use: again}]
    expect: [{wire_format: {}}]
)";
    REQUIRE(loads("l0.yaml", swept, {}));
    // Set to `over`, the limit refuses the plan saying `says`; set to `enough`, it loads.
    auto crossing = [&](std::uint64_t plan::limits::*field, std::uint64_t over, const std::string& says, std::uint64_t enough) {
        plan::limits lim;
        lim.*field = over;
        CHECK_THAT(limit_error("l1.yaml", swept, lim), Catch::Contains(says));
        lim.*field = enough;
        CHECK(loads("l1.yaml", swept, lim));
    };
    SECTION("cases, counted before a sweep is expanded") {
        crossing(&plan::limits::cases, 4,
                 "l1.yaml:8:13: the sweep makes 5 instances of this case: the plan would hold more than 4 cases "
                 "(--plan-limit cases=N raises it)",
                 5);
    }
    SECTION("nodes, an alias counted as what it repeats") {
        // 48 nodes written; the alias at 4:10 stands for the 11 of the list it
        // repeats, so the plan holds 58, and crosses 30 at the alias.
        crossing(&plan::limits::nodes, 30, "l1.yaml:4:10: the plan holds more than 30 YAML nodes", 58);
        crossing(&plan::limits::nodes, 50, "the plan holds more than 50 YAML nodes", 58);
        crossing(&plan::limits::nodes, 57, "the plan holds more than 57 YAML nodes", 58);
    }
    SECTION("nesting (an alias as deep as what it repeats: tests/tools/hostile_plans.py deep_alias)") {
        // The deepest node, 5 levels below the root: `size` in the fragment.
        crossing(&plan::limits::nesting, 4, "l1.yaml:3:28: nested more than 4 levels deep", 5);
    }
    SECTION("plan bytes, before the file is parsed") {
        crossing(&plan::limits::plan_bytes, swept.size() - 1, "l1.yaml:1:1: the plan's files hold more than", swept.size());
    }
    SECTION("expanded bytes: every instance of a sweep pays for its strings") {
        crossing(&plan::limits::expanded_bytes, 4096, "the plan expands to more than 4096 bytes", 64 << 10);
    }
}

TEST_CASE("hostile plans: positions for every error, no cases, strings that never end or hold controls") {
    const auto err = load_error;
    CHECK_THAT(err("p1.yaml", ""), Catch::StartsWith(write("p1.yaml", "") + ":1:1: the file is empty"));
    CHECK_THAT(err("p2.yaml", "suite: {name: S}\ncases: []\n"), Catch::Contains("p2.yaml:2:8: the plan has no cases"));
    CHECK_THAT(err("p3.yaml", "defaults: {level: MAY}\ncases: []\n"), Catch::Contains("p3.yaml:1:19: level must be MUST or SHOULD, not 'MAY'"));
    CHECK_THAT(err("p4.yaml", "suite: {name: S}\ncases:\n  - id: X\n    title: \"never closed\n    clauses: [MR-HDR-1]\n"),
               Catch::Contains("p4.yaml:4:12: a string opened with \" never ends"));
    // A closed string with an escaped quote and a doubled single quote is fine.
    CHECK(plan::load(write("p5.yaml", std::string(k_minimal) + "    description: \"say \\\"hi\\\"\"\n")).ok());
    CHECK(plan::load(write("p6.yaml", std::string(k_minimal) + "    description: 'it''s'\n")).ok());
    CHECK_THAT(err("p7.yaml", "suite: {name: \"a\\x07b\"}\ncases:\n  - id: X\n    clauses: [MR-HDR-1]\n"),
               Catch::Contains("p7.yaml:1:15: control character \\x07 in a plan string"));
    CHECK_THAT(err("p8.yaml", std::string(k_minimal) + "---\ncases: []\n"), Catch::Contains("p8.yaml:8:1: a second YAML document"));
    write("cy_b.yaml", "include: [cy_a.yaml]\n");
    CHECK_THAT(err("cy_a.yaml", "include: [cy_b.yaml]\n"), Catch::Contains("cy_b.yaml:1:11: include cycle: "));
}
