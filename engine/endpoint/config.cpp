#include <charconv>

#include "core/units.h"
#include "endpoint/config.h"

namespace mrct::endpoint {

const std::vector<std::pair<std::string_view, std::string_view>>& config_params() {
    static const std::vector<std::pair<std::string_view, std::string_view>> k = {
        {"mtu", "payload bytes per packet, 256..4096 (default 4096)"},
        {"num_paths", "paths offered, 1..256 (default 8)"},
        {"rto_initial", "initial RTO (default 1ms)"},
        {"rto_min", "minimum RTO (default 100us)"},
        {"rto_max", "maximum RTO (default 100ms)"},
        {"retry_limit", "transmissions per packet (default 7)"},
        {"ack_every", "ACK at the latest every N packets per path (default 8)"},
        {"ack_delay", "ACK at the latest after this time (default 20us)"},
        {"cwnd_initial", "initial window per path in packets (default 16)"},
        {"max_inflight", "packets in flight per path (default 256)"},
        {"grant_idle", "grant idle time (default 1ms)"},
        {"inbound_rate", "receiver inbound rate for grants (default 400Gbps)"},
        {"rnr_timer_code", "TimerCode put in the RNRs this endpoint sends, 0..31 (default 14 = 1.28 ms)"},
        {"bug", "bug profile (reference DUT only; see docs/bug-profiles.md)"},
    };
    return k;
}

core::status config_set(config& c, std::string_view name, std::string_view value) {
    const std::string v(value);
    auto bad = [&](const std::string& what) {
        return core::error{"parameter '" + std::string(name) + "' = '" + v + "': expected " + what};
    };
    auto integer = [&](unsigned lo, unsigned hi, auto& out) -> core::status {
        unsigned x = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
        if (ec != std::errc{} || p != v.data() + v.size() || x < lo || x > hi)
            return bad("an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
        out = static_cast<std::remove_reference_t<decltype(out)>>(x);
        return core::ok_status();
    };
    auto duration = [&](nanos& out) -> core::status {
        auto d = core::parse_duration_ns(v);
        if (!d || *d <= 0) return bad("a duration such as 100us");
        out = nanos{*d};
        return core::ok_status();
    };
    if (name == "mtu") return integer(256, 4096, c.mtu);
    if (name == "num_paths") return integer(1, 256, c.num_paths);
    if (name == "rto_initial") return duration(c.rto_initial);
    if (name == "rto_min") return duration(c.rto_min);
    if (name == "rto_max") return duration(c.rto_max);
    if (name == "retry_limit") return integer(1, 255, c.retry_limit);
    if (name == "ack_every") return integer(1, 256, c.ack_every);
    if (name == "ack_delay") return duration(c.ack_delay);
    if (name == "cwnd_initial") return integer(1, 256, c.cwnd_initial);
    if (name == "max_inflight") return integer(1, 256, c.max_inflight);
    if (name == "grant_idle") return duration(c.grant_idle);
    if (name == "rnr_timer_code") return integer(0, 31, c.rnr_timer_code);
    if (name == "inbound_rate") {
        auto r = core::parse_rate_bps(v);
        if (!r || *r < 1e8) return bad("a rate of at least 100Mbps, such as 100Gbps");
        c.inbound_rate_bps = *r;
        return core::ok_status();
    }
    if (name == "bug") {
        auto b = bug_by_name(v);
        if (!b) return b.err();
        c.bug_profile = *b;
        return core::ok_status();
    }
    std::string all;
    for (const auto& [n, _] : config_params()) all += (all.empty() ? "" : ", ") + std::string(n);
    return core::error{"unknown parameter '" + std::string(name) + "' (expected one of: " + all + ")"};
}

}  // namespace mrct::endpoint
