// YAML test plans -> plain structs (docs/plan-format.md).
//
// This module knows YAML and the plan's *shape* only: which keys exist, what is
// a list or a map, variables, sweeps, fragments and includes. What a name
// means (an action, an assertion, a stage, a clause) is checked by the runner
// (engine/run/validate.cpp), which reports it at the same file:line:col kept
// here on every node.
#pragma once

#include <map>
#include <optional>
#include <string>
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

struct suite {
    std::string name, version, file;
    std::vector<test_case> cases;
};

// Loads a plan (and its includes); every error carries file:line:col.
core::result<suite> load(const std::string& path);

}  // namespace mrct::plan
