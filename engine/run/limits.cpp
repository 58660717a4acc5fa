#include "run/limits.h"

#include <limits>

namespace mrct::run {

namespace {
constexpr std::uint64_t k_ns_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

const std::vector<limit_decl>& limit_decls() {
    using k = limit_decl::kind;
    static const std::vector<limit_decl> t{
        {"duration", k::duration, "20ms", 1, k_ns_max, true,
         "The case stops then at the latest. It stops earlier once every Send and Write posted on both sides has "
         "completed, every timed step has run and `settle` has passed since, or when nothing is left to happen. Real "
         "time: never below 2s (a cap, not a wait)"},
        {"settle", k::duration, "1ms", 0, k_ns_max, true,
         "How long the wire must stay quiet after the last completion and step before the case ends (500us in the 1.2 "
         "plan's defaults)"},
        {"max_frames", k::count, "4000000", 1, 999'999'999'999, false,
         "The most frames the case records. A DUT that sends more (a flood) ends the case as `error`, \"the DUT flooded "
         "the wire\"; frames beyond the limit are not processed, so the engine keeps running its timers and the run "
         "goes on with the next case"},
        {"step_late", k::duration, "", 0, k_ns_max, true,
         "Real time only: how late the case's steps may run for its scenario to hold. Where they ran later "
         "(`step_late_max_us`, docs/timing.md), every assertion that passed is `inconclusive` instead, saying so: the "
         "rule may not have bound. Failures stand. RNR-013 sets 10ms: its RNR_QUERY must reach the DUT while the held "
         "message is still held"},
    };
    return t;
}

namespace {

const limit_decl* find(std::string_view name) {
    for (const auto& d : limit_decls())
        if (d.name == name) return &d;
    return nullptr;
}

// The value of `d` in `a` (or its default), as a number: ns or a count.
std::optional<std::uint64_t> value(const limit_decl& d, const std::string& text) {
    if (d.type == limit_decl::kind::count) return core::parse_uint(text, d.max);
    const auto ns = core::parse_duration_ns(text);
    if (!ns || *ns < 0) return std::nullopt;
    return static_cast<std::uint64_t>(*ns);
}

std::uint64_t get(const plan::args& a, std::string_view name) {
    const auto& d = *find(name);
    const auto it = a.find(std::string(name));
    const auto v = value(d, it == a.end() ? std::string(d.def) : it->second.text);
    return v.value_or(0);  // validate_limits refused anything else
}

}  // namespace

case_limits read_limits(const plan::args& a) {
    case_limits l;
    l.duration = core::nanos{static_cast<std::int64_t>(get(a, "duration"))};
    l.settle = core::nanos{static_cast<std::int64_t>(get(a, "settle"))};
    l.max_frames = static_cast<std::size_t>(get(a, "max_frames"));
    if (a.count("step_late")) l.step_late = core::nanos{static_cast<std::int64_t>(get(a, "step_late"))};
    return l;
}

void validate_limits(const plan::args& a, const std::function<void(const plan::loc&, const std::string&)>& error) {
    std::string names;
    for (const auto& d : limit_decls()) names += (names.empty() ? "" : ", ") + std::string(d.name);
    for (const auto& [k, v] : a) {
        const auto* d = find(k);
        if (!d) {
            error(v.at, "unknown limit '" + k + "' (expected " + names + ")");
            continue;
        }
        const auto n = value(*d, v.text);
        const std::string what = "limits." + k;
        if (d->type == limit_decl::kind::duration) {
            if (!n) error(v.at, what + " expects a duration");
            else if (*n < d->min) error(v.at, what + " must be longer than 0 (the case would end before it starts)");
        } else if (!n || *n < d->min) {
            error(v.at, what + " expects a positive integer up to " + std::to_string(d->max));
        }
    }
}

std::string limits_markdown() {
    std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const auto& d : limit_decls())
        out += "| `" + std::string(d.name) + "` | " + (d.type == limit_decl::kind::duration ? "duration" : "count") + " | " +
               (d.def.empty() ? std::string("none") : "`" + std::string(d.def) + "`") + " | " + std::string(d.doc) +
               (d.scaled ? " (scaled by `--time-scale`)" : "") + " |\n";
    return out;
}

}  // namespace mrct::run
