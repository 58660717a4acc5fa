// YAML read within bounds (engine/yaml/checked.h): every bound refused where
// it is crossed, with its place, before a node is built.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "yaml/checked.h"

using namespace mrct;

namespace {

const yaml::bounds k_small{4096, 50, 4, "the file"};
std::string no_hint(const char*) { return {}; }

std::string scan_error(const std::string& text, yaml::bounds b = k_small) {
    std::uint64_t nodes = 0;
    auto st = yaml::prescan("f.yaml", text, b, nodes, no_hint);
    REQUIRE_FALSE(st.ok());
    return st.err().message;
}

}  // namespace

TEST_CASE("yaml prescan: what a plain file takes passes, and nodes are counted across files") {
    std::uint64_t nodes = 0;
    REQUIRE(yaml::prescan("a.yaml", "a: 1\nb: [1, 2]\n", k_small, nodes, no_hint).ok());
    CHECK(nodes == 7);  // the map, keys a and b, the 1, the list and its two items
    REQUIRE(yaml::prescan("b.yaml", "c: 3\n", k_small, nodes, no_hint).ok());
    CHECK(nodes == 10);
    REQUIRE(yaml::prescan("c.yaml", "", k_small, nodes, no_hint).ok());  // an empty file: no document
}

TEST_CASE("yaml prescan: each bound refused at the node that crosses it") {
    // An alias counts as the nodes it repeats: billion laughs at its first alias too many.
    const std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n";
    CHECK_THAT(scan_error(laughs), Catch::StartsWith("f.yaml:2:") && Catch::Contains("the file holds more than 50 YAML nodes"));
    // An alias is as deep as what it repeats.
    CHECK_THAT(scan_error("a: &a [[[1]]]\nb: [*a]\n"), Catch::StartsWith("f.yaml:2:5: nested more than 4 levels deep"));
    CHECK_THAT(scan_error("a: [[[[[1]]]]]\n"), Catch::StartsWith("f.yaml:1:8: nested more than 4 levels deep"));
    CHECK_THAT(scan_error("a: 1\n---\nb: 2\n"), Catch::StartsWith("f.yaml:2:1: a second YAML document"));
    CHECK_THAT(scan_error("a: 1\nb: \"open\nc: 2\n"), Catch::StartsWith("f.yaml:2:4: a string opened with \" never ends"));
    CHECK_THAT(scan_error("a: [1, 2\n"), Catch::StartsWith("f.yaml:"));  // yaml-cpp's own error, placed
    // A hint follows the bound's message.
    std::uint64_t nodes = 0;
    auto st = yaml::prescan("f.yaml", "a: [[[[[1]]]]]\n", k_small, nodes, [](const char* b) { return std::string(" (raise ") + b + ")"; });
    CHECK_THAT(st.err().message, Catch::EndsWith("levels deep (raise nesting)"));
}

TEST_CASE("yaml read_file: regular files within the byte bound only") {
    const auto dir = std::filesystem::path(MRCT_TEST_TMP) / "yaml_checked_files";
    std::filesystem::create_directories(dir);
    const auto ok = (dir / "ok.yaml").string();
    std::ofstream(ok) << "a: 1\n";
    REQUIRE(yaml::read_file(ok, k_small, no_hint).ok());
    CHECK(*yaml::read_file(ok, k_small, no_hint) == "a: 1\n");
    const auto big = (dir / "big.yaml").string();
    std::ofstream(big) << std::string(5000, '#') << "\n";
    CHECK_THAT(yaml::read_file(big, k_small, no_hint).err().message,
               Catch::StartsWith(big + ":1:1: the file holds more than 4096 bytes (5001)"));
    CHECK_THAT(yaml::read_file(dir.string(), k_small, no_hint).err().message, Catch::Contains("not a regular file"));
    CHECK_THAT(yaml::read_file("/dev/zero", k_small, no_hint).err().message, Catch::Contains("not a regular file"));
    CHECK_THAT(yaml::read_file((dir / "none.yaml").string(), k_small, no_hint).err().message, Catch::Contains("no such file"));
}

TEST_CASE("yaml load and duplicate keys") {
    auto n = yaml::load("f.yaml", "a: {x: 1, y: 2, x: 3}\nb: [{k: 1, k: 2}]\na: 4\n", k_small, no_hint);
    REQUIRE(n.ok());
    std::vector<std::string> dups;
    yaml::each_duplicate_key(*n, [&](const YAML::Node& key) { dups.push_back(yaml::place("f.yaml", key) + key.Scalar()); });
    CHECK(dups == std::vector<std::string>{"f.yaml:1:17: x", "f.yaml:2:12: k", "f.yaml:3:1: a"});
    CHECK_THAT(yaml::load("f.yaml", std::string(5000, ' '), k_small, no_hint).err().message,
               Catch::StartsWith("f.yaml:1:1: the file holds more than 4096 bytes"));
}
