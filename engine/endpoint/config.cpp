
#include "core/text.h"
#include "core/units.h"
#include "endpoint/config.h"

namespace mrct::endpoint {

const std::vector<setting>& settings() {
    using k = setting::kind;
    static const std::vector<setting> t{
        {"mtu", k::count, 256, 4096, "payload bytes per packet", &config::mtu},
        {"num_paths", k::count, 1, 256, "paths offered (a plan's `topology.paths` sets both sides')", &config::num_paths},
        {"rto_initial", k::duration, 0, 0, "initial RTO", &config::rto_initial},
        {"rto_min", k::duration, 0, 0, "minimum RTO", &config::rto_min},
        {"rto_max", k::duration, 0, 0, "maximum RTO", &config::rto_max},
        {"retry_limit", k::count, 1, 255, "transmissions per packet", &config::retry_limit},
        {"ack_every", k::count, 1, 256, "ACK at the latest every N packets per path", &config::ack_every},
        {"ack_delay", k::duration, 0, 0, "ACK at the latest after this time", &config::ack_delay},
        {"cwnd_initial", k::count, 1, 256, "initial window per path in packets", &config::cwnd_initial},
        {"max_inflight", k::count, 1, 256, "packets in flight per path", &config::max_inflight},
        {"grant_idle", k::duration, 0, 0, "grant idle time", &config::grant_idle},
        {"inbound_rate", k::rate, 100'000'000, 0, "the receiver's inbound rate, for grants (e.g. `20Gbps`)",
         &config::inbound_rate_bps},
        {"rnr_timer_code", k::count, 0, 31, "TimerCode put in the RNRs this endpoint sends (14 = 1.28 ms)",
         &config::rnr_timer_code},
        {"bug", k::bug, 0, 0, "bug profile (the reference DUT only; docs/bug-profiles.md)", &config::bug_profile},
    };
    return t;
}

std::string setting_text(const config& c, const setting& s) {
    return std::visit(
        [&](auto field) -> std::string {
            const auto& v = c.*field;
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, nanos>) {
                return core::duration_text(v.count());
            } else if constexpr (std::is_same_v<T, double>) {
                return std::to_string(static_cast<std::uint64_t>(v / 1e9)) + "Gbps";
            } else if constexpr (std::is_same_v<T, bug>) {
                return std::string(bug_name(v));
            } else {
                return std::to_string(static_cast<unsigned>(v));
            }
        },
        s.field);
}

core::status config_set(config& c, std::string_view name, std::string_view value) {
    const std::string v(value);
    const setting* s = nullptr;
    for (const auto& x : settings())
        if (x.name == name) s = &x;
    if (!s) {
        std::vector<std::string> all;
        for (const auto& x : settings()) all.emplace_back(x.name);
        return core::error{"unknown parameter '" + std::string(name) + "' (expected one of: " + core::join(all) + ")"};
    }
    auto bad = [&](const std::string& what) {
        return core::error{"parameter '" + std::string(name) + "' = '" + v + "': expected " + what};
    };
    switch (s->type) {
    case setting::kind::count: {
        const auto x = core::parse_uint(v, s->max);
        if (!x || *x < s->min) return bad("an integer in " + std::to_string(s->min) + ".." + std::to_string(s->max));
        if (const auto* f = std::get_if<unsigned config::*>(&s->field)) c.**f = static_cast<unsigned>(*x);
        else c.*std::get<std::uint8_t config::*>(s->field) = static_cast<std::uint8_t>(*x);
        return core::ok_status();
    }
    case setting::kind::duration: {
        const auto d = core::parse_duration_ns(v);
        if (!d || *d <= 0) return bad("a duration such as 100us");
        c.*std::get<nanos config::*>(s->field) = nanos{*d};
        return core::ok_status();
    }
    case setting::kind::rate: {
        const auto r = core::parse_rate_bps(v);
        if (!r || *r < static_cast<double>(s->min)) return bad("a rate of at least 100Mbps, such as 100Gbps");
        c.*std::get<double config::*>(s->field) = *r;
        return core::ok_status();
    }
    case setting::kind::bug: {
        auto b = bug_by_name(v);
        if (!b) return b.err();
        c.*std::get<bug config::*>(s->field) = *b;
        return core::ok_status();
    }
    }
    return bad("a value");
}

std::string settings_markdown() {
    const config d;
    std::string out = "| setting | type | default | meaning |\n|---|---|---|---|\n";
    for (const auto& s : settings()) {
        std::string type;
        switch (s.type) {
        case setting::kind::count: type = "integer, " + std::to_string(s.min) + ".." + std::to_string(s.max); break;
        case setting::kind::duration: type = "duration, above 0"; break;
        case setting::kind::rate: type = "rate, at least 100Mbps"; break;
        case setting::kind::bug: type = "bug profile name"; break;
        }
        out += "| `" + std::string(s.name) + "` | " + type + " | `" + setting_text(d, s) + "` | " + std::string(s.doc) + " |\n";
    }
    return out;
}

}  // namespace mrct::endpoint
