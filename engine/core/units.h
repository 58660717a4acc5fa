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

// An unsigned integer written as decimal digits (or, with `hex`, also
// 0x followed by hex digits), at most `max`: nullopt for anything else, a
// sign, a space, an overflow included. What every integer a plan gives goes
// through, so that 2^32 + 1 is not 1 and -1 is not 4294967295.
inline std::optional<std::uint64_t> parse_uint(const std::string& t, std::uint64_t max, bool hex = false) {
    int base = 10;
    std::size_t from = 0;
    if (hex && t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        base = 16;
        from = 2;
    }
    const char* digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
    if (t.size() <= from || t.find_first_not_of(digits, from) != std::string::npos) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = from; i < t.size(); ++i) {
        const char c = t[i];
        const unsigned d = c <= '9' ? static_cast<unsigned>(c - '0') : static_cast<unsigned>((c | 0x20) - 'a' + 10);
        if (v > (std::numeric_limits<std::uint64_t>::max() - d) / static_cast<unsigned>(base)) return std::nullopt;
        v = v * static_cast<unsigned>(base) + d;
    }
    if (v > max) return std::nullopt;
    return v;
}

// A count written as plain decimal digits (a path, a sender, a peer): at
// most 9 of them, so it always fits; nullopt for anything else.
inline std::optional<unsigned> parse_count(const std::string& t) {
    if (t.size() > 9) return std::nullopt;
    const auto v = parse_uint(t, 999'999'999);
    return v ? std::optional<unsigned>(static_cast<unsigned>(*v)) : std::nullopt;
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

// A duration as a plan writes it, in the largest unit that divides it:
// 1000000 -> "1ms", 5000 -> "5us", 7 -> "7ns", 0 -> "0ns".
inline std::string duration_text(std::int64_t ns) {
    if (ns != 0 && ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + "ms";
    if (ns != 0 && ns % 1'000 == 0) return std::to_string(ns / 1'000) + "us";
    return std::to_string(ns) + "ns";
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
