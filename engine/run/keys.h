// The keys of a case's `topology:` and `limits:`, declared once (issue 23
// item 1): validate checks a plan against these declarations, the runner
// reads the values typed through them, the time scale multiplies the ones
// they mark, and docs/plan-format.md's tables are generated from them
// (`mrct docs topology`, `mrct docs limits`; ctest docs_generated_in_sync).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "plan/plan.h"

namespace mrct::run {

struct key_decl {
    enum class kind { duration, count, rate };
    std::string_view name;
    kind type;
    std::string_view def;    // the default as a plan would write it; empty: none
    std::uint64_t min, max;  // a duration in ns, a count (rates: unbounded)
    bool scaled;             // --time-scale multiplies it (a duration) or divides it (a rate): run/time_scale.h
    bool per_path;           // written `name: {N: value}`, N a path number (args: name.N)
    std::string_view doc;
    std::string_view below_min = {};  // why a value below `min` makes no sense
};
const std::vector<key_decl>& topology_decls();
const std::vector<key_decl>& limit_decls();

// A case's topology and limits, typed, defaults filled in (after validate).
struct case_topology {
    unsigned paths, peers;
    core::nanos delay;
    std::map<unsigned, core::nanos> path_delay;  // extra per fabric path
    std::optional<std::string> rate;             // a queue at this rate on every path
};
case_topology read_topology(const plan::args& topology);
struct case_limits {
    core::nanos duration, settle;
    std::size_t max_frames;
    std::optional<core::nanos> step_late;
};
case_limits read_limits(const plan::args& limits);

// Every problem of a case's `section:` (unknown key, wrong type, out of
// range) against `decls`, each with its position; `noun` names one of its
// keys in "unknown NOUN 'x'" ("topology key", "limit").
using key_error = std::function<void(const plan::loc&, const std::string&)>;
void validate_keys(const std::vector<key_decl>& decls, std::string_view section, std::string_view noun, const plan::args& a,
                   const key_error& error);

// A table of docs/plan-format.md.
std::string keys_markdown(const std::vector<key_decl>& decls);

}  // namespace mrct::run
