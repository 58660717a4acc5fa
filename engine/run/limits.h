// The keys of a case's `limits:`, declared once (issue 23 item 1): validate
// checks a plan against these declarations, the runner reads the values
// typed through them, the time scale multiplies the durations they mark,
// and docs/plan-format.md's table is generated from them (`mrct docs
// limits`, kept in sync by ctest docs_generated_in_sync).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.h"
#include "plan/plan.h"

namespace mrct::run {

struct limit_decl {
    enum class kind { duration, count };
    std::string_view name;
    kind type;
    std::string_view def;    // the default as a plan would write it; empty: none
    std::uint64_t min, max;  // a duration in ns, a count
    bool scaled;             // a duration the time scale multiplies (run/time_scale.h)
    std::string_view doc;
};
const std::vector<limit_decl>& limit_decls();

// A case's limits, typed, defaults filled in (after validate_limits passed).
struct case_limits {
    core::nanos duration, settle;
    std::size_t max_frames;
    std::optional<core::nanos> step_late;
};
case_limits read_limits(const plan::args& limits);

// Every problem of a case's `limits:` (unknown key, wrong type, out of range),
// each with its position.
void validate_limits(const plan::args& limits, const std::function<void(const plan::loc&, const std::string&)>& error);

// The table of docs/plan-format.md, "limits".
std::string limits_markdown();

}  // namespace mrct::run
