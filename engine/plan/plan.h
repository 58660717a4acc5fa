// YAML test plans -> plain structs (docs/plan-format.md).
//
// This module knows YAML and the plan's *shape* only: which keys exist, what is
// a list or a map, variables, sweeps, fragments and includes. What a name
// means (an action, an assertion, a stage, a clause) is checked by the runner
// (engine/run/validate.cpp), which reports it at the same file:line:col kept
// here on every node.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/result.h"

namespace mrct::plan {

struct loc {
    std::string file;
    int line = 0, col = 0;  // 1-based
    std::string str() const { return file + ":" + std::to_string(line) + ":" + std::to_string(col); }
};

// A scalar argument (nested maps are flattened with '.', lists joined with ',').
struct arg {
    std::string text;
    loc at;
};
using args = std::map<std::string, arg>;

// The entries of `a` in the order they stand in the plan (line, then column),
// not by name: errors about them are reported in the order a reader meets
// them, and the first shown is the first to fix.
inline std::vector<const args::value_type*> in_file_order(const args& a) {
    std::vector<const args::value_type*> v;
    v.reserve(a.size());
    for (const auto& e : a) v.push_back(&e);
    std::stable_sort(v.begin(), v.end(), [](const auto* x, const auto* y) {
        return std::tie(x->second.at.line, x->second.at.col) < std::tie(y->second.at.line, y->second.at.col);
    });
    return v;
}

// One thing to do: `{post_send: {tag: 7, size: 64KiB}}`.
struct action {
    std::string name;
    loc at;
    args a;
};

struct trigger {
    std::string dir = "from_dut";  // from_dut or to_dut
    args match;                   // field -> value
    unsigned nth = 1;
    std::optional<arg> after;  // `after: 2ms`: the step runs this long after the frame
    loc at;
};

struct step {
    loc at;
    std::optional<arg> time;  // `at: 200us`
    std::optional<trigger> on;
    std::vector<action> actions;
};

struct expectation {
    std::string name;
    loc at;
    args a;
};

struct test_case {
    std::string id, title, level = "MUST", role = "receiver", area;
    loc at;
    std::vector<std::string> clauses;
    std::vector<loc> clause_locs;
    std::vector<std::string> needs;  // `requires:` capabilities
    std::string description;
    args topology;                // paths, delay, path_delay.N, rate
    std::vector<action> impair;   // topology.impair: fabric stages
    args dut, peer;               // endpoint configuration
    std::vector<action> handshake;  // wire filters in force before the connection opens
    std::vector<action> setup;
    std::vector<step> steps;
    std::vector<expectation> expect;
    args limits;                  // duration, settle
    std::map<std::string, std::string> sweep_point;  // the sweep values of this instance
};

// What a plan may ask of the tool, checked before anything is allocated for
// it: a plan that asks for more is refused where it does, naming the limit
// (docs/plan-format.md "Limits"; `--plan-limit NAME=VALUE` raises one). The
// defaults keep any plan within 256 MiB and 2 s to load and validate, and are
// several times what the official plan uses.
struct limits {
    std::uint64_t plan_bytes = std::uint64_t{4} << 20;  // the plan's files together
    std::uint64_t nodes = 200'000;     // YAML nodes, each alias counted as what it repeats
    std::uint64_t nesting = 64;        // levels of maps and lists
    std::uint64_t cases = 10'000;      // after sweeps
    std::uint64_t expanded_bytes = std::uint64_t{32} << 20;  // what the plan expands to: variables, sweeps, fragments, defaults
    std::uint64_t action_bytes = std::uint64_t{1} << 30;     // what one action moves or takes (run::validate)
    // Folders includes may come from besides the top plan's own (and their
    // subfolders): `--plan-include-root DIR`.
    std::vector<std::string> include_roots;
};

struct limit_info {
    const char* name;
    std::uint64_t limits::*field;
    const char* help;
};
// Every limit, in the order the docs list them.
const std::vector<limit_info>& limit_table();
// Applies "NAME=VALUE" (VALUE a count, or bytes with a KiB/MiB/GiB suffix).
core::status set_limit(limits& l, const std::string& name_eq_value);

struct suite {
    std::string name, version, file;
    std::vector<test_case> cases;
    limits lim;  // those it was loaded under (run::validate checks action_bytes)
};

// Loads a plan (and its includes); every error carries file:line:col.
core::result<suite> load(const std::string& path, const limits& lim = {});

}  // namespace mrct::plan
