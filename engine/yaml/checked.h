// YAML read within bounds, for every file mrct takes from a user (plans and
// their includes, `simulate --config`, `emulate --config`): before
// YAML::Load builds a node, a pass over the parser's events counts nodes (an
// alias as many as the node it repeats, so "billion laughs" is refused at its
// first alias too many) and nesting (an alias as deep as what it repeats),
// refuses a second document (YAML::Load would drop it) and a quoted string
// whose closing quote is missing (yaml-cpp runs it to the end of the file, and
// the error comes out elsewhere). After the load, duplicate keys (YAML keeps
// one of the values) can be found. Errors are "file:line:col: message".
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace mrct::yaml {

struct bounds {
    std::uint64_t bytes;    // of one file (read_file)
    std::uint64_t nodes;    // counted across the calls that share a counter
    std::uint64_t nesting;  // levels below the root
    const char* subject = "the file";  // "the plan holds more than N YAML nodes"
};
// What a message adds after crossing a bound, by the bound's name ("nodes",
// "nesting", "bytes"): how to raise it, or why it is what it is.
using bound_hint = std::function<std::string(const char* bound)>;

// Checks `text`, the file `file`, against `b`; `nodes` counts on from its value.
core::status prescan(const std::string& file, const std::string& text, const bounds& b, std::uint64_t& nodes,
                     const bound_hint& hint);

// A regular file's text, at most b.bytes of it (load() prescans it).
core::result<std::string> read_file(const std::string& path, const bounds& b, const bound_hint& hint);

// `text` loaded after its prescan (a single-file configuration): the root
// node, or the first problem with its place.
core::result<YAML::Node> load(const std::string& file, const std::string& text, const bounds& b, const bound_hint& hint);

// Each key a map of `n` (at any depth) repeats, after its first.
void each_duplicate_key(const YAML::Node& n, const std::function<void(const YAML::Node& key)>& f);
// The first repeated key of `n` as an error, "file:line:col: duplicate key".
core::status no_duplicate_keys(const std::string& file, const YAML::Node& n);

// The bounds of a configuration file (`simulate --config`, `emulate
// --config`): far above what one needs (a few dozen nodes, four levels), far
// below what hurts.
inline constexpr bounds k_config_bounds{1u << 20, 100'000, 32, "the configuration"};

// "file:line:col: " for a node.
std::string place(const std::string& file, const YAML::Node& n);

}  // namespace mrct::yaml
