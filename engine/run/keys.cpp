#include "run/keys.h"

#include <limits>

#include "core/text.h"

namespace mrct::run {

namespace {
constexpr std::uint64_t k_ns_max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
using kind = key_decl::kind;
}  // namespace

const std::vector<key_decl>& topology_decls() {
    static const std::vector<key_decl> t{
        {"paths", kind::count, "4", 1, 256, false, false,
         "NumPaths offered by both sides (dut/peer `num_paths` override); also the fabric's path count"},
        {"peers", kind::count, "1", 1, 64, false, false,
         "How many peers (more than one needs `role: sender`): each a reference endpoint with its own address and "
         "fabric, all connected to the DUT (fair-share grants, MR-GR-3)"},
        {"delay", kind::duration, "2us", 0, k_ns_max, true, false, "One-way delay of every fabric path"},
        {"path_delay", kind::duration, "0", 0, k_ns_max, true, true,
         "Extra delay on fabric path N, both directions (skew): `path_delay: {N: 200us}`"},
        {"rate", kind::rate, "", 0, 0, true, false, "A FIFO queue at this rate on every path, both directions"},
    };
    return t;
}

const std::vector<key_decl>& limit_decls() {
    static const std::vector<key_decl> t{
        {"duration", kind::duration, "20ms", 1, k_ns_max, true, false,
         "The case stops then at the latest. It stops earlier once every Send and Write posted on both sides has "
         "completed, every timed step has run and `settle` has passed since, or when nothing is left to happen. Real "
         "time: never below 2s (a cap, not a wait)",
         "the case would end before it starts"},
        {"settle", kind::duration, "1ms", 0, k_ns_max, true, false,
         "How long a case runs on after its last completion and timed step: the DUT's time to answer them, a NAK or "
         "an RNR included (500us in the 1.2 plan's defaults). Real time: the host's holds seen meanwhile add to it "
         "(D155)"},
        {"max_frames", kind::count, "4000000", 1, 999'999'999'999, false, false,
         "The most frames the case records. A DUT that sends more (a flood) ends the case as `error`, \"the DUT flooded "
         "the wire\"; frames beyond the limit are not processed, so the engine keeps running its timers and the run "
         "goes on with the next case"},
        {"step_late", kind::duration, "", 0, k_ns_max, true, false,
         "Real time only: how late the case's steps may run for its scenario to hold. Where they ran later "
         "(`step_late_max_us`, docs/timing.md), every assertion that passed is `inconclusive` instead, saying so: the "
         "rule may not have bound. Failures stand. RNR-013 sets 10ms: its RNR_QUERY must reach the DUT while the held "
         "message is still held"},
    };
    return t;
}

namespace {

const key_decl* find(const std::vector<key_decl>& decls, std::string_view key) {
    for (const auto& d : decls)
        if (d.per_path ? key.rfind(std::string(d.name) + ".", 0) == 0 : key == d.name) return &d;
    return nullptr;
}

// A duration in ns or a count; a rate only parsed (its value stays text).
std::optional<std::uint64_t> value(const key_decl& d, const std::string& text) {
    switch (d.type) {
    case kind::count:
        return core::parse_uint(text, d.max);
    case kind::duration: {
        const auto ns = core::parse_duration_ns(text);
        if (!ns || *ns < 0) return std::nullopt;
        return static_cast<std::uint64_t>(*ns);
    }
    case kind::rate:
        return core::parse_rate_bps(text) ? std::optional<std::uint64_t>(0) : std::nullopt;
    }
    return std::nullopt;
}

std::uint64_t get(const std::vector<key_decl>& decls, const plan::args& a, const std::string& key) {
    const auto& d = *find(decls, key);
    const auto it = a.find(key);
    return value(d, it == a.end() ? std::string(d.def) : it->second.text).value_or(0);  // validate refused the rest
}
core::nanos ns(std::uint64_t v) { return core::nanos{static_cast<std::int64_t>(v)}; }

}  // namespace

case_topology read_topology(const plan::args& a) {
    const auto& t = topology_decls();
    case_topology c;
    c.paths = static_cast<unsigned>(get(t, a, "paths"));
    c.peers = static_cast<unsigned>(get(t, a, "peers"));
    c.delay = ns(get(t, a, "delay"));
    for (const auto& [k, v] : a)
        if (k.rfind("path_delay.", 0) == 0)
            if (const auto p = core::parse_uint(k.substr(11), 255)) c.path_delay[static_cast<unsigned>(*p)] = ns(get(t, a, k));
    if (const auto it = a.find("rate"); it != a.end()) c.rate = it->second.text;
    return c;
}

case_limits read_limits(const plan::args& a) {
    const auto& t = limit_decls();
    case_limits l;
    l.duration = ns(get(t, a, "duration"));
    l.settle = ns(get(t, a, "settle"));
    l.max_frames = static_cast<std::size_t>(get(t, a, "max_frames"));
    if (a.count("step_late")) l.step_late = ns(get(t, a, "step_late"));
    return l;
}

void validate_keys(const std::vector<key_decl>& decls, std::string_view section, std::string_view noun, const plan::args& a,
                   const key_error& error) {
    std::vector<std::string> all;
    for (const auto& d : decls) all.emplace_back(d.name);
    const auto names = core::join(all);
    const std::string sec(section);
    for (const auto& [k, v] : a) {
        const auto* d = find(decls, k);
        if (!d) {
            error(v.at, "unknown " + std::string(noun) + " '" + k + "' (expected " + names + ")");
            continue;
        }
        const std::string what = sec + "." + k;
        if (d->per_path && !core::parse_uint(k.substr(d->name.size() + 1), 255)) {
            error(v.at, sec + "." + std::string(d->name) + ": '" + k.substr(d->name.size() + 1) + "' is not a path number");
            continue;
        }
        const auto n = value(*d, v.text);
        switch (d->type) {
        case kind::duration:
            if (!n) error(v.at, what + " expects a duration such as 5us");
            else if (*n < d->min)
                error(v.at, what + " must be longer than 0" + (d->below_min.empty() ? "" : " (" + std::string(d->below_min) + ")"));
            break;
        case kind::count:
            if (!n || *n < d->min)
                error(v.at, what + " must be " + std::to_string(d->min) + ".." + std::to_string(d->max) + ", got '" + v.text + "'");
            break;
        case kind::rate:
            if (!n) error(v.at, what + " expects a rate such as 100Gbps");
            break;
        }
    }
}

std::string keys_markdown(const std::vector<key_decl>& decls) {
    std::string out = "| key | type | default | meaning |\n|---|---|---|---|\n";
    for (const auto& d : decls) {
        const char* type = d.type == kind::duration ? "duration" : d.type == kind::count ? "count" : "rate";
        std::string range;
        if (d.type == kind::count) range = ", " + std::to_string(d.min) + ".." + std::to_string(d.max);
        out += "| `" + std::string(d.name) + (d.per_path ? ".N" : "") + "` | " + type + range + " | " +
               (d.def.empty() ? std::string("none") : "`" + std::string(d.def) + "`") + " | " + std::string(d.doc) +
               (d.scaled ? (d.type == kind::rate ? " (divided by `--time-scale`)" : " (multiplied by `--time-scale`)") : "") +
               " |\n";
    }
    return out;
}

}  // namespace mrct::run
