// Declared stage parameters (STYLE habit 6): each parameter is declared once
// (name, type, default, range, meaning), and that declaration validates the
// values given in YAML plans and generates the fabric reference in docs/.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "core/time.h"

namespace mrct::fabric {

enum class param_type { integer, real, duration, rate, boolean, choice, int_list };

struct param_decl {
    std::string name;
    param_type type;
    std::string default_value;  // as written in a plan ("0", "10us", "1.5e-3", "false", "bernoulli")
    double min = 0, max = 0;    // inclusive range for integer/real/duration(ns)/rate(bit/s); max < min: none
    std::vector<std::string> choices;
    std::string doc;
};

// A parsed value: integers, durations (ns) and rates (bit/s) as numbers.
using param_value = std::variant<std::int64_t, double, bool, std::string, std::vector<std::int64_t>>;
using param_map = std::map<std::string, std::string>;  // name -> text as written

class params {
public:
    // Validates `given` against `decls`: unknown names, malformed values and
    // out-of-range values are errors naming the parameter and what was expected.
    static core::result<params> parse(const std::string& stage, const std::vector<param_decl>& decls,
                                      const param_map& given);
    std::int64_t integer(const std::string& n) const { return std::get<std::int64_t>(v_.at(n)); }
    double real(const std::string& n) const { return std::get<double>(v_.at(n)); }
    core::nanos duration(const std::string& n) const { return core::nanos{std::get<std::int64_t>(v_.at(n))}; }
    double rate_bps(const std::string& n) const { return std::get<double>(v_.at(n)); }
    bool boolean(const std::string& n) const { return std::get<bool>(v_.at(n)); }
    const std::string& choice(const std::string& n) const { return std::get<std::string>(v_.at(n)); }
    const std::vector<std::int64_t>& int_list(const std::string& n) const {
        return std::get<std::vector<std::int64_t>>(v_.at(n));
    }

private:
    std::map<std::string, param_value> v_;
};

// Text forms: durations "150ns", "10us", "1.5ms", "2s" (a bare number is ns), "never";
// rates "100Gbps", "400G", "25Mbps", "1e9" (bit/s); booleans true/false;
// integer lists "1,5,9".
using core::parse_duration_ns;  // core/units.h
using core::parse_rate_bps;

}  // namespace mrct::fabric
