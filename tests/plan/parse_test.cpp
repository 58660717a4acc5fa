// Plans: shape, variables, sweeps, fragments, includes, and errors that carry
// file:line:col.
#include <catch2/catch.hpp>

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
