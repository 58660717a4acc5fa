#include "fabric/params.h"

#include "core/units.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace mrct::fabric {

using core::number_prefix;

core::result<params> params::parse(const std::string& stage, const std::vector<param_decl>& decls,
                                   const param_map& given) {
    params out;
    for (const auto& [name, text] : given) {
        bool known = false;
        for (const auto& d : decls) known |= d.name == name;
        if (!known) {
            std::string names;
            for (const auto& d : decls) names += (names.empty() ? "" : ", ") + d.name;
            return core::error{"stage '" + stage + "': unknown parameter '" + name + "' (expected one of: " + names + ")"};
        }
    }
    for (const auto& d : decls) {
        auto it = given.find(d.name);
        const std::string& text = it == given.end() ? d.default_value : it->second;
        auto bad = [&](const std::string& what) {
            return core::error{"stage '" + stage + "': parameter '" + d.name + "' = '" + text + "': " + what};
        };
        auto range_ok = [&](double v) { return d.max < d.min || (v >= d.min && v <= d.max); };
        // Formatted only for an error message: fabrics of many paths parse
        // thousands of stages, and formatting two doubles was most of it.
        auto range = [&] {
            std::ostringstream o;
            o << "[" << d.min << ", " << d.max << "]";
            return o.str();
        };
        switch (d.type) {
        case param_type::integer: {
            char* end = nullptr;
            long long v = std::strtoll(text.c_str(), &end, 10);
            if (text.empty() || *end) return bad("expected an integer");
            if (!range_ok(static_cast<double>(v))) return bad("out of range " + range());
            out.v_[d.name] = static_cast<std::int64_t>(v);
            break;
        }
        case param_type::real: {
            std::string unit;
            auto v = number_prefix(text, unit);
            if (!v || !unit.empty()) return bad("expected a number");
            if (!range_ok(*v)) return bad("out of range " + range());
            out.v_[d.name] = *v;
            break;
        }
        case param_type::duration: {
            auto v = parse_duration_ns(text);
            if (!v) return bad("expected a duration such as 150ns, 10us, 1.5ms, 2s");
            if (!range_ok(static_cast<double>(*v))) return bad("out of range " + range() + " ns");
            out.v_[d.name] = *v;
            break;
        }
        case param_type::rate: {
            auto v = parse_rate_bps(text);
            if (!v) return bad("expected a rate such as 100Gbps, 400G, 25Mbps");
            if (!range_ok(*v)) return bad("out of range " + range() + " bit/s");
            out.v_[d.name] = *v;
            break;
        }
        case param_type::boolean:
            if (text != "true" && text != "false") return bad("expected true or false");
            out.v_[d.name] = text == "true";
            break;
        case param_type::choice: {
            bool ok = false;
            std::string all;
            for (const auto& c : d.choices) {
                ok |= c == text;
                all += (all.empty() ? "" : ", ") + c;
            }
            if (!ok) return bad("expected one of: " + all);
            out.v_[d.name] = text;
            break;
        }
        case param_type::int_list: {
            std::vector<std::int64_t> list;
            std::stringstream ss(text);
            std::string item;
            while (std::getline(ss, item, ',')) {
                char* end = nullptr;
                long long v = std::strtoll(item.c_str(), &end, 0);
                if (item.empty() || *end) return bad("expected a comma-separated list of integers");
                list.push_back(v);
            }
            out.v_[d.name] = std::move(list);
            break;
        }
        }
    }
    return out;
}

}  // namespace mrct::fabric
