// Units in plans and options: durations ("150ns", "10us", "1.5ms", "2s",
// "never") and rates ("100Gbps", "400G", "25Mbps"). A bare number is ns or bit/s.
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

namespace mrct::core {

// The number at the start of `t`; the rest goes to `unit`.
inline std::optional<double> number_prefix(const std::string& t, std::string& unit) {
    if (t.empty()) return std::nullopt;
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
    unit.assign(end);
    return v;
}

// A count written as plain decimal digits (a path, a sender, a peer): at
// most 9 of them, so it always fits; nullopt for anything else.
inline std::optional<unsigned> parse_count(const std::string& t) {
    if (t.empty() || t.size() > 9 || t.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    return static_cast<unsigned>(std::stoul(t));
}

inline std::optional<std::int64_t> parse_duration_ns(const std::string& text) {
    if (text == "never") return std::numeric_limits<std::int64_t>::max();
    std::string unit;
    auto v = number_prefix(text, unit);
    if (!v || *v < 0) return std::nullopt;
    double scale;
    if (unit.empty() || unit == "ns") scale = 1;
    else if (unit == "us") scale = 1e3;
    else if (unit == "ms") scale = 1e6;
    else if (unit == "s") scale = 1e9;
    else return std::nullopt;
    double ns = *v * scale;
    if (ns > 9.2e18) return std::nullopt;
    return static_cast<std::int64_t>(std::llround(ns));
}

inline std::optional<double> parse_rate_bps(const std::string& text) {
    std::string unit;
    auto v = number_prefix(text, unit);
    if (!v || *v < 0) return std::nullopt;
    if (unit.ends_with("bps")) unit.resize(unit.size() - 3);
    if (unit.empty()) return *v;
    if (unit == "K" || unit == "k") return *v * 1e3;
    if (unit == "M") return *v * 1e6;
    if (unit == "G") return *v * 1e9;
    if (unit == "T") return *v * 1e12;
    return std::nullopt;
}


}  // namespace mrct::core
