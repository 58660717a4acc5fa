// Tolerances written in protocol terms: "rnr_time + 10%", "3 * srtt(p0)",
// "rto_min + 4 * rtt(p1) + 20us". A small expression language over durations
// (ns) and plain numbers:
//
//   expr   := term (('+' | '-') (term | NUMBER '%'))*     "x + 10%" is x * 1.10
//   term   := factor ('*' factor | '/' factor)*
//   factor := NUMBER [ns|us|ms|s] | NAME | NAME '(' ARG ')' | '(' expr ')'
//
// Names are resolved by the caller (spec parameters such as rto_min, measured
// values such as srtt(p0)), so the grammar stays one edit away from new terms.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace mrct::assertions {

// Resolves NAME or NAME(ARG) to a value in ns (or a plain number); nullopt if unknown.
using name_resolver = std::function<std::optional<double>(std::string_view name, std::string_view arg)>;

core::result<double> eval_expr(std::string_view text, const name_resolver& names);

// Syntax and name check without values (plan validation): every name is looked
// up in `known` (NAME or NAME(...)).
core::status check_expr(std::string_view text, const std::function<bool(std::string_view)>& known);

}  // namespace mrct::assertions
