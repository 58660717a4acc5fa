// The emulator's YAML configuration (docs/emulator.md "Configuration"): the
// plan's topology syntax for paths and stages, every error at file:line:col.

#include <yaml-cpp/yaml.h>

#include "core/units.h"
#include "emulate/emulate.h"
#include "yaml/checked.h"
#include "fabric/stage.h"

namespace mrct::emulate {

namespace {

std::string at(const std::string& name, const YAML::Node& n) {
    const auto m = n.Mark();
    return name + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

core::result<std::uint64_t> unsigned_of(const std::string& name, const YAML::Node& n, std::uint64_t lo, std::uint64_t hi,
                                        const std::string& what) {
    if (!n.IsScalar()) return core::error{at(name, n) + what + " must be a number"};
    const auto& t = n.Scalar();
    std::uint64_t v = 0;
    if (t.empty() || t.size() > 19 || t.find_first_not_of("0123456789") != std::string::npos)
        return core::error{at(name, n) + what + " must be an integer in " + std::to_string(lo) + ".." + std::to_string(hi) +
                           ", not '" + t + "'"};
    v = std::stoull(t);
    if (v < lo || v > hi)
        return core::error{at(name, n) + what + " must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", not " + t};
    return v;
}

core::result<std::int64_t> duration_of(const std::string& name, const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) return core::error{at(name, n) + what + " must be a duration (e.g. 20us)"};
    auto d = core::parse_duration_ns(n.Scalar());
    if (!d || *d < 0) return core::error{at(name, n) + what + ": '" + n.Scalar() + "' is not a duration (e.g. 20us, 1.5ms)"};
    return *d;
}

}  // namespace

config plain_config(unsigned paths) {
    config c;
    c.fabric.paths = paths;
    c.fabric.default_stages.clear();
    for (unsigned p = 0; p < paths; ++p) c.fabric.path_stages_ab[p] = c.fabric.path_stages_ba[p] = {};
    return c;
}

namespace {
core::result<config> parse(const std::string& text, const std::string& name);
}

core::result<config> parse_config(const std::string& text, const std::string& name) {
    try {
        return parse(text, name);
    } catch (const YAML::Exception& e) {  // a key that is not a scalar, ...
        return core::error{name + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " +
                           e.msg};
    }
}

namespace {

const auto& k_bounds = yaml::k_config_bounds;
std::string bounds_hint(const char*) { return " (an emulator configuration is a small map, docs/emulator.md)"; }

core::result<config> parse(const std::string& text, const std::string& name) {
    auto loaded = yaml::load(name, text, k_bounds, bounds_hint);
    if (!loaded) return loaded.err();
    const YAML::Node root = *loaded;
    if (auto st = yaml::no_duplicate_keys(name, root); !st) return st.err();
    if (root.IsNull()) return plain_config();
    if (!root.IsMap()) return core::error{at(name, root) + "the configuration must be a map (docs/emulator.md)"};
    static const std::set<std::string> known = {"paths", "seed", "select", "pin", "delay", "path_delay", "rate", "impair"};
    for (const auto& kv : root) {
        const auto key = kv.first.as<std::string>();
        if (!known.count(key))
            return core::error{at(name, kv.first) + "unknown key '" + key +
                               "' (paths, seed, select, pin, delay, path_delay, rate, impair)"};
    }
    unsigned paths = 8;
    if (root["paths"]) {
        auto v = unsigned_of(name, root["paths"], 1, 256, "paths");
        if (!v) return v.err();
        paths = static_cast<unsigned>(*v);
    }
    config c = plain_config(paths);
    if (root["seed"]) {
        auto v = unsigned_of(name, root["seed"], 0, ~std::uint64_t{0} >> 1, "seed");
        if (!v) return v.err();
        c.fabric.seed = *v;
    }
    if (const auto n = root["select"]) {
        const auto t = n.IsScalar() ? n.Scalar() : std::string();
        if (t == "hash") c.select = select_mode::hash;
        else if (t == "learn") c.select = select_mode::learn;
        else return core::error{at(name, n) + "select must be hash or learn, not '" + t + "'"};
    }
    if (const auto n = root["pin"]) {
        if (!n.IsMap()) return core::error{at(name, n) + "pin must map source ports to paths: {49152: 0}"};
        for (const auto& kv : n) {
            auto port = unsigned_of(name, kv.first, 1, 65535, "a pinned source port");
            if (!port) return port.err();
            auto path = unsigned_of(name, kv.second, 0, paths - 1, "the path of port " + kv.first.Scalar());
            if (!path) return path.err();
            c.pins[static_cast<std::uint16_t>(*port)] = static_cast<unsigned>(*path);
        }
    }
    std::int64_t delay = 0;
    if (root["delay"]) {
        auto d = duration_of(name, root["delay"], "delay");
        if (!d) return d.err();
        delay = *d;
    }
    std::map<unsigned, std::int64_t> extra;
    if (const auto n = root["path_delay"]) {
        if (!n.IsMap()) return core::error{at(name, n) + "path_delay must map paths to durations: {3: 200us}"};
        for (const auto& kv : n) {
            auto p = unsigned_of(name, kv.first, 0, paths - 1, "a path_delay path");
            if (!p) return p.err();
            auto d = duration_of(name, kv.second, "path_delay of path " + kv.first.Scalar());
            if (!d) return d.err();
            extra[static_cast<unsigned>(*p)] = *d;
        }
    }
    std::string rate;
    if (const auto n = root["rate"]) {
        if (!n.IsScalar() || !core::parse_rate_bps(n.Scalar()))
            return core::error{at(name, n) + "rate must be a rate (e.g. 10Gbps)"};
        rate = n.Scalar();
    }
    for (unsigned p = 0; p < paths; ++p) {
        std::vector<fabric::stage_spec> st;
        const auto d = delay + (extra.count(p) ? extra[p] : 0);
        if (d > 0) st.push_back({"delay", {{"delay", std::to_string(d) + "ns"}}});
        if (!rate.empty()) st.push_back({"queue", {{"rate", rate}}});
        c.fabric.path_stages_ab[p] = c.fabric.path_stages_ba[p] = st;
    }
    if (const auto n = root["impair"]) {
        if (!n.IsSequence()) return core::error{at(name, n) + "impair must be a list of stages: - loss: {p: 0.01}"};
        for (const auto& item : n) {
            if (!item.IsMap() || item.size() != 1)
                return core::error{at(name, item) + "each impair item is one stage: - KIND: {parameters}"};
            const auto kind = item.begin()->first.as<std::string>();
            const auto args = item.begin()->second;
            if (!args.IsNull() && !args.IsMap())
                return core::error{at(name, args) + "the parameters of '" + kind + "' must be a map"};
            fabric::param_map pm;
            std::string dir = "both", which = "all";
            YAML::Node path_node;
            for (const auto& kv : args) {
                const auto k = kv.first.as<std::string>();
                if (!kv.second.IsScalar()) return core::error{at(name, kv.second) + "'" + k + "' must be a single value"};
                if (k == "dir") dir = kv.second.Scalar();
                else if (k == "path") {
                    which = kv.second.Scalar();
                    path_node = kv.second;
                } else pm[k] = kv.second.Scalar();
            }
            if (dir != "a_to_b" && dir != "b_to_a" && dir != "both")
                return core::error{at(name, args["dir"]) + "dir must be a_to_b, b_to_a or both, not '" + dir + "'"};
            std::optional<unsigned> only;
            if (which != "all") {
                auto p = unsigned_of(name, path_node, 0, paths - 1, "path");
                if (!p) return p.err();
                only = static_cast<unsigned>(*p);
            }
            if (auto r = fabric::stage_recipe_of(kind, pm); !r) return core::error{at(name, item) + r.err().message};
            for (unsigned p = 0; p < paths; ++p) {
                if (only && *only != p) continue;
                if (dir != "b_to_a") c.fabric.path_stages_ab[p].push_back({kind, pm});
                if (dir != "a_to_b") c.fabric.path_stages_ba[p].push_back({kind, pm});
            }
        }
    }
    return c;
}

}  // namespace

core::result<config> load_config(const std::string& path) {
    auto text = yaml::read_file(path, k_bounds, bounds_hint);
    if (!text) return text.err();
    return parse_config(*text, path);
}

}  // namespace mrct::emulate
