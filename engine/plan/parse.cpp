#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/yaml.h>

#include "core/units.h"
#include "plan/errors.h"
#include "plan/plan.h"
#include "yaml/checked.h"

namespace mrct::plan {

namespace {

namespace fs = std::filesystem;
using vars = std::map<std::string, std::string>;

struct fragment {
    YAML::Node node;
    std::string file;
};

struct plan_error {
    std::string message;
};

std::string limit_hint(const char* name) { return std::string(" (--plan-limit ") + name + "=N raises it)"; }


class loader {
public:
    explicit loader(const limits& lim) : lim_(lim) {}

    core::result<suite> run(const std::string& path) {
        suite s;
        s.file = path;
        s.lim = lim_;
        try {
            load_file(path, s, true, nullptr);
            if (s.cases.empty() && errors_.empty())
                throw plan_error{(cases_at_.file.empty() ? path + ":1:1" : cases_at_.str()) +
                                 ": the plan has no cases (cases: a list of at least one)"};
        } catch (const plan_error& e) {
            return core::error{e.message};
        } catch (const YAML::DeepRecursion& e) {
            return core::error{(current_.empty() ? path : current_) + ":" + std::to_string(e.mark.line + 1) + ":" +
                               std::to_string(e.mark.column + 1) + ": nested more than " +
                               std::to_string(e.depth()) + " levels deep (the YAML parser's own limit)"};
        } catch (const YAML::Exception& e) {
            return core::error{(current_.empty() ? path : current_) + ":" + std::to_string(e.mark.line + 1) + ":" +
                               std::to_string(e.mark.column + 1) + ": " + e.msg};
        }
        if (!errors_.empty()) return core::error{errors_.text()};
        std::set<std::string> ids;
        for (const auto& c : s.cases)
            if (!ids.insert(c.id).second) return core::error{c.at.str() + ": duplicate case id '" + c.id + "'"};
        return s;
    }

private:
    loc at(const YAML::Node& n) const { return {current_, n.Mark().line + 1, n.Mark().column + 1}; }
    [[noreturn]] void die(const YAML::Node& n, const std::string& msg) const { throw plan_error{at(n).str() + ": " + msg}; }
    // Errors are collected (plan/errors.h), not thrown at the first.
    void err(const YAML::Node& n, const std::string& msg) { errors_.add(at(n).str() + ": " + msg); }

    // What the plan expands to (strings made by variables, sweeps, fragments
    // and defaults, plus a fixed cost per item) is charged before it is made.
    static constexpr std::uint64_t k_item_cost = 256;
    void spend(const YAML::Node& n, std::uint64_t bytes) {
        spent_ += bytes;
        if (spent_ > lim_.expanded_bytes)
            die(n, "the plan expands to more than " + std::to_string(lim_.expanded_bytes) +
                       " bytes (variables, sweeps, fragments and defaults repeated into its cases)" +
                       limit_hint("expanded_bytes"));
    }

    void only_keys(const YAML::Node& n, const std::string& what, std::initializer_list<std::string_view> keys) {
        if (!n.IsMap()) die(n, what + ": expected a map");
        for (auto it = n.begin(); it != n.end(); ++it) {
            const auto k = it->first.Scalar();
            bool ok = false;
            for (auto want : keys) ok = ok || k == want;
            if (!ok) {
                std::string list;
                for (auto want : keys) list += (list.empty() ? "" : ", ") + std::string(want);
                err(it->first, "unknown key '" + k + "' in " + what + " (expected one of: " + list + ")");
            }
        }
    }

    std::string subst(const YAML::Node& n, const vars& v) {
        if (!n.IsScalar()) die(n, "expected a scalar value");
        const std::string& s = n.Scalar();
        std::string out;
        for (std::size_t i = 0; i < s.size();) {
            if (s.compare(i, 2, "${") == 0) {
                auto j = s.find('}', i);
                if (j == std::string::npos) die(n, "unterminated ${ in '" + s + "'");
                auto name = s.substr(i + 2, j - i - 2);
                auto it = v.find(name);
                if (it == v.end()) {
                    std::string known;
                    for (const auto& [k, _] : v) known += (known.empty() ? "" : ", ") + k;
                    die(n, "unknown variable '" + name + "' (defined: " + (known.empty() ? "none" : known) + ")");
                }
                spend(n, it->second.size());
                out += it->second;
                i = j + 1;
            } else {
                const auto c = static_cast<unsigned char>(s[i]);
                // NUL and the other C0 controls (but tab, line feed, carriage
                // return) have no place in a plan: an ID or a name holding one
                // would reach file names and reports cut or garbled.
                if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
                    char hex[8];
                    std::snprintf(hex, sizeof hex, "\\x%02x", c);
                    die(n, std::string("control character ") + hex + " in a plan string");
                }
                out += s[i++];
            }
        }
        spend(n, s.size() + k_item_cost);
        return out;
    }

    // Flattens a scalar, list of scalars, or map into args.
    void flatten(const YAML::Node& n, const std::string& prefix, const vars& v, args& out) {
        if (n.IsMap()) {
            for (auto it = n.begin(); it != n.end(); ++it)
                flatten(it->second, prefix.empty() ? it->first.Scalar() : prefix + "." + it->first.Scalar(), v, out);
        } else if (n.IsSequence()) {
            std::string joined;
            for (const auto& x : n) {
                if (!x.IsScalar()) die(x, "expected a list of scalars for '" + prefix + "'");
                joined += (joined.empty() ? "" : ",") + subst(x, v);
            }
            out[prefix] = {joined, at(n)};
        } else if (n.IsNull()) {
            out[prefix] = {"", at(n)};
        } else {
            out[prefix] = {subst(n, v), at(n)};
        }
    }

    // `{name: {args}}` or `{use: fragment}` (spliced).
    void actions(const YAML::Node& list, const vars& v, std::vector<action>& out, const std::string& what) {
        if (!list.IsSequence()) die(list, what + ": expected a list");
        for (const auto& item : list) {
            if (!item.IsMap() || item.size() != 1) die(item, what + ": each item is a map with one key (the action's name)");
            const auto name = item.begin()->first.Scalar();
            const YAML::Node body = item.begin()->second;
            if (name == "use") {
                const auto fname = subst(body, v);
                auto it = fragments_.find(fname);
                if (it == fragments_.end()) die(body, "unknown fragment '" + fname + "'");
                if (depth_ > 8) die(body, "fragments nested too deeply");
                const auto saved = current_;
                current_ = it->second.file;
                ++depth_;
                actions(it->second.node, v, out, what);
                --depth_;
                current_ = saved;
                continue;
            }
            spend(item, k_item_cost + name.size());  // an action with no arguments costs too
            action a;
            a.name = name;
            a.at = at(item.begin()->first);
            if (!body.IsNull()) {
                if (!body.IsMap()) die(body, what + " '" + name + "': expected a map of arguments");
                flatten(body, "", v, a.a);
            }
            out.push_back(std::move(a));
        }
    }

    void merge(const YAML::Node& n, const vars& v, args& out) {
        if (!n) return;
        if (!n.IsMap()) die(n, "expected a map");
        flatten(n, "", v, out);
    }

    test_case parse_case(const YAML::Node& n, const vars& v, const std::map<std::string, std::string>& point) {
        only_keys(n, "case", {"id", "title", "description", "clauses", "level", "requires", "role", "topology", "dut",
                              "peer", "handshake", "setup", "steps", "expect", "limits", "sweep", "vars", "area"});
        spend(n, defaults_cost_);  // every case holds a copy of the defaults
        test_case c = defaults_;
        c.at = at(n);
        c.sweep_point = point;
        if (!n["id"]) die(n, "case without an id");
        c.id = subst(n["id"], v);
        for (const auto& [k, val] : point) c.id += "[" + k + "=" + val + "]";
        if (n["title"]) c.title = subst(n["title"], v);
        if (n["description"]) {
            c.description = subst(n["description"], v);
            while (!c.description.empty() && std::isspace(static_cast<unsigned char>(c.description.back()))) c.description.pop_back();
        }
        if (n["area"]) c.area = subst(n["area"], v);
        if (c.area.empty()) {
            auto dash = c.id.find('-');
            c.area = dash == std::string::npos ? c.id : c.id.substr(0, dash);
        }
        if (n["level"]) {
            c.level = subst(n["level"], v);
            if (c.level != "MUST" && c.level != "SHOULD") err(n["level"], "level must be MUST or SHOULD, not '" + c.level + "'");
        }
        if (n["role"]) {
            c.role = subst(n["role"], v);
            if (c.role != "sender" && c.role != "receiver" && c.role != "both")
                err(n["role"], "role (the peer's) must be sender, receiver or both, not '" + c.role + "'");
        }
        if (!n["clauses"] || !n["clauses"].IsSequence() || n["clauses"].size() == 0)
            err(n, "case '" + c.id + "' cites no clauses (clauses: [MR-...])");
        else
            for (const auto& x : n["clauses"]) {
                c.clauses.push_back(subst(x, v));
                c.clause_locs.push_back(at(x));
            }
        if (n["requires"]) {
            if (!n["requires"].IsSequence()) die(n["requires"], "requires: expected a list of capabilities");
            for (const auto& x : n["requires"]) c.needs.push_back(subst(x, v));
        }
        if (auto t = n["topology"]) {
            // Its keys are engine/run's (run/keys.h, checked by validate);
            // impair is a list of stages, read here.
            if (!t.IsMap()) die(t, "topology: expected a map");
            for (auto it = t.begin(); it != t.end(); ++it)
                if (it->first.Scalar() != "impair") flatten(it->second, it->first.Scalar(), v, c.topology);
            if (t["impair"]) actions(t["impair"], v, c.impair, "impair");
        }
        merge(n["dut"], v, c.dut);
        merge(n["peer"], v, c.peer);
        merge(n["limits"], v, c.limits);
        if (n["handshake"]) actions(n["handshake"], v, c.handshake, "handshake");
        if (n["setup"]) actions(n["setup"], v, c.setup, "setup");
        if (auto s = n["steps"]) {
            if (!s.IsSequence()) die(s, "steps: expected a list");
            for (const auto& x : s) {
                only_keys(x, "step", {"at", "on", "do"});
                step st;
                st.at = at(x);
                if (x["at"]) st.time = arg{subst(x["at"], v), at(x["at"])};
                if (auto o = x["on"]) {
                    only_keys(o, "on", {"dir", "match", "nth", "after"});
                    trigger tg;
                    tg.at = at(o);
                    if (o["dir"]) tg.dir = subst(o["dir"], v);
                    if (tg.dir != "from_dut" && tg.dir != "to_dut") err(o["dir"], "dir must be from_dut or to_dut");
                    if (o["match"]) merge(o["match"], v, tg.match);
                    if (o["nth"]) {
                        const auto n = core::parse_uint(subst(o["nth"], v), 0xFFFFFFFF);
                        tg.nth = n ? static_cast<unsigned>(*n) : 0;
                        if (tg.nth == 0) err(o["nth"], "nth: expected a positive integer up to 4294967295");
                    }
                    if (o["after"]) tg.after = arg{subst(o["after"], v), at(o["after"])};
                    st.on = tg;
                }
                if (st.time.has_value() == st.on.has_value()) err(x, "a step needs exactly one of 'at' and 'on'");
                if (!x["do"]) err(x, "a step needs 'do' (a list of actions)");
                else actions(x["do"], v, st.actions, "do");
                c.steps.push_back(std::move(st));
            }
        }
        if (n["expect"]) {
            std::vector<action> ex;
            actions(n["expect"], v, ex, "expect");
            for (auto& a : ex) c.expect.push_back({a.name, a.at, std::move(a.a)});
        }
        if (c.expect.empty()) err(n, "case '" + c.id + "' expects nothing");
        return c;
    }

    void parse_cases(const YAML::Node& list, const vars& base) {
        if (!list.IsSequence()) die(list, "cases: expected a list");
        for (const auto& n : list) {
            vars v = base;
            if (auto cv = n["vars"]) {
                if (!cv.IsMap()) die(cv, "vars: expected a map");
                for (auto it = cv.begin(); it != cv.end(); ++it) v[it->first.Scalar()] = subst(it->second, v);
            }
            std::vector<std::map<std::string, std::string>> points{{}};
            if (auto sw = n["sweep"]) {
                if (!sw.IsMap()) die(sw, "sweep: expected a map of variable -> list of values");
                for (auto it = sw.begin(); it != sw.end(); ++it) {
                    if (!it->second.IsSequence() || it->second.size() == 0)
                        die(it->second, "sweep '" + it->first.Scalar() + "': expected a non-empty list");
                    std::vector<std::map<std::string, std::string>> next;
                    const YAML::Node values = it->second;  // not a view into the iterator's temporary
                    if (out_->cases.size() + points.size() * values.size() > lim_.cases)
                        die(it->first, "the sweep makes " + std::to_string(points.size() * values.size()) +
                                           " instances of this case: the plan would hold more than " +
                                           std::to_string(lim_.cases) + " cases" + limit_hint("cases"));
                    for (const auto& p : points)
                        for (const auto& val : values) {
                            auto q = p;
                            q[it->first.Scalar()] = subst(val, v);
                            next.push_back(q);
                        }
                    points = next;
                }
            }
            if (out_->cases.size() + points.size() > lim_.cases)
                die(n, "the plan holds more than " + std::to_string(lim_.cases) + " cases" + limit_hint("cases"));
            for (const auto& p : points) {
                vars pv = v;
                for (const auto& [k, val] : p) pv[k] = val;
                out_->cases.push_back(parse_case(n, pv, p));
            }
        }
    }

    // YAML lets a map repeat a key and keeps one of the values: in a plan
    // that silently drops what the other said (a second `cases:` list).
    // Every map of the file, at any depth, is checked (the prescan has bounded
    // depth and nodes, aliases expanded, before this walk).
    void check_keys(const YAML::Node& n) {
        yaml::each_duplicate_key(n, [this](const YAML::Node& key) {
            err(key, "duplicate key '" + key.Scalar() + "' (YAML would keep only one of them)");
        });
    }

    // The file's text, within what is left of the plan's bytes, checked by
    // the prescan before YAML::Load builds a node of it.
    std::string read_checked(const std::string& path, const YAML::Node* from) {
        std::error_code ec;
        const auto size = fs::file_size(path, ec);
        if (ec) throw plan_error{path + ": cannot read: " + ec.message()};
        bytes_ += size;
        if (bytes_ > lim_.plan_bytes) {
            const auto msg = "the plan's files hold more than " + std::to_string(lim_.plan_bytes) + " bytes (" + path +
                             ": " + std::to_string(size) + ")" + limit_hint("plan_bytes");
            if (from) die(*from, msg);
            throw plan_error{path + ":1:1: " + msg};
        }
        std::ifstream in(path, std::ios::binary);
        std::string text(size, '\0');
        if (!in.read(text.data(), static_cast<std::streamsize>(size)))
            throw plan_error{path + ": cannot read"};
        const yaml::bounds b{lim_.plan_bytes, lim_.nodes, lim_.nesting, "the plan"};
        if (auto st = yaml::prescan(path, text, b, nodes_, [](const char* bound) { return limit_hint(bound); }); !st)
            throw plan_error{st.err().message};
        return text;
    }

    // `from`: the include entry that names this file (none for the top plan).
    void load_file(const std::string& path, suite& s, bool top, const YAML::Node* from) {
        const auto canon = fs::weakly_canonical(path).string();
        if (loading_.count(canon)) {
            std::string chain;
            for (const auto& f : chain_) chain += f + " -> ";
            die(*from, "include cycle: " + chain + path);
        }
        if (!fs::exists(path)) throw plan_error{path + ": no such file"};
        if (!fs::is_regular_file(path)) throw plan_error{path + ": not a plan file (a folder or a device)"};
        if (top) root_ = fs::weakly_canonical(fs::path(path)).parent_path();
        loading_.insert(canon);
        chain_.push_back(path);
        const auto text = read_checked(path, from);
        const auto saved = current_;
        current_ = path;
        out_ = &s;
        YAML::Node root = YAML::Load(text);
        check_keys(root);
        if (root.IsNull() && root.Mark().line < 0) throw plan_error{path + ":1:1: the file is empty (a plan file is a map: suite, vars, fragments, defaults, include, cases)"};
        if (!root.IsMap()) die(root, "a plan file is a map (suite, vars, fragments, defaults, include, cases)");
        only_keys(root, top ? "suite file" : "included file",
                  {"suite", "vars", "fragments", "defaults", "include", "cases"});
        if (auto su = root["suite"]) {
            if (!top) err(su, "'suite' belongs in the top-level file only");
            only_keys(su, "suite", {"name", "version", "spec"});
            if (su["name"]) s.name = subst(su["name"], vars_);
            if (su["version"]) s.version = subst(su["version"], vars_);
        }
        if (auto v = root["vars"]) {
            if (!v.IsMap()) die(v, "vars: expected a map");
            for (auto it = v.begin(); it != v.end(); ++it) vars_[it->first.Scalar()] = subst(it->second, vars_);
        }
        if (auto f = root["fragments"]) {
            if (!f.IsMap()) die(f, "fragments: expected a map of name -> list of actions");
            for (auto it = f.begin(); it != f.end(); ++it) {
                if (fragments_.count(it->first.Scalar())) err(it->first, "fragment '" + it->first.Scalar() + "' defined twice");
                fragments_[it->first.Scalar()] = {it->second, current_};
            }
        }
        if (auto d = root["defaults"]) {
            only_keys(d, "defaults", {"topology", "dut", "peer", "limits", "expect", "level", "role"});
            const auto spent_before = spent_;
            if (d["level"]) {
                defaults_.level = subst(d["level"], vars_);
                if (defaults_.level != "MUST" && defaults_.level != "SHOULD")
                    err(d["level"], "level must be MUST or SHOULD, not '" + defaults_.level + "'");
            }
            if (d["role"]) {
                defaults_.role = subst(d["role"], vars_);
                if (defaults_.role != "sender" && defaults_.role != "receiver" && defaults_.role != "both")
                    err(d["role"], "role (the peer's) must be sender, receiver or both, not '" + defaults_.role + "'");
            }
            if (auto t = d["topology"]) {
                // A case's topology keys (run checks them in each case), less
                // impair: stages belong to a case (issue 23).
                if (!t.IsMap()) die(t, "defaults.topology: expected a map");
                if (t["impair"])
                    for (auto it = t.begin(); it != t.end(); ++it)
                        if (it->first.Scalar() == "impair")
                            err(it->first, "unknown key 'impair' in defaults.topology (impairments belong to a case)");
                for (auto it = t.begin(); it != t.end(); ++it)
                    if (it->first.Scalar() != "impair") flatten(it->second, it->first.Scalar(), vars_, defaults_.topology);
            }
            merge(d["dut"], vars_, defaults_.dut);
            merge(d["peer"], vars_, defaults_.peer);
            merge(d["limits"], vars_, defaults_.limits);
            if (d["expect"]) {
                std::vector<action> ex;
                actions(d["expect"], vars_, ex, "expect");
                for (auto& a : ex) defaults_.expect.push_back({a.name, a.at, std::move(a.a)});
            }
            defaults_cost_ += spent_ - spent_before;
        }
        if (auto inc = root["include"]) {
            if (!inc.IsSequence()) die(inc, "include: expected a list of files");
            for (const auto& x : inc) {
                auto rel = subst(x, vars_);
                auto p = (fs::path(path).parent_path() / rel).string();
                if (!fs::exists(p)) die(x, "included file '" + rel + "' not found");
                // Confined to the top plan's folder (and the folders
                // --plan-include-root adds), regular files only: a plan from
                // elsewhere must not open /etc/passwd or read /dev/zero for ever.
                const auto target = fs::weakly_canonical(p);
                auto inside = [&](const fs::path& r) {
                    return std::mismatch(r.begin(), r.end(), target.begin(), target.end()).first == r.end();
                };
                bool allowed = inside(root_);
                for (const auto& r : lim_.include_roots) allowed = allowed || inside(fs::weakly_canonical(r));
                if (!allowed)
                    die(x, "included file '" + rel + "' is outside the plan's folder " + root_.string() +
                               (lim_.include_roots.empty() ? " (--plan-include-root DIR allows another)" : " and the include roots given"));
                if (!fs::is_regular_file(target)) die(x, "included file '" + rel + "' is not a regular file");
                load_file(p, s, false, &x);
                current_ = path;
            }
        }
        if (root["cases"]) {
            if (cases_at_.file.empty()) cases_at_ = at(root["cases"]);
            parse_cases(root["cases"], vars_);
        }
        current_ = saved;
        loading_.erase(canon);
        chain_.pop_back();
    }

    std::string current_;
    suite* out_ = nullptr;
    vars vars_;
    std::map<std::string, fragment> fragments_;
    test_case defaults_;
    std::set<std::string> loading_;
    fs::path root_;  // the top plan's folder: includes stay inside it
    error_list errors_;
    int depth_ = 0;
    const limits& lim_;
    std::uint64_t bytes_ = 0, nodes_ = 0, spent_ = 0, defaults_cost_ = 0;  // against lim_
    std::vector<std::string> chain_;  // the files being loaded, the top plan first
    loc cases_at_;                    // the first `cases:` key seen
};

}  // namespace

const std::vector<limit_info>& limit_table() {
    static const std::vector<limit_info> t{
        {"plan_bytes", &limits::plan_bytes, "bytes in the plan's files together (read before they are parsed)"},
        {"nodes", &limits::nodes, "YAML nodes in the plan's files together, an alias counted as the nodes it repeats"},
        {"nesting", &limits::nesting, "levels of maps and lists, an alias counted as deep as what it repeats"},
        {"cases", &limits::cases, "cases after sweeps"},
        {"expanded_bytes", &limits::expanded_bytes,
         "bytes the plan expands to: every string made from variables, sweeps, fragments and defaults, plus 256 per item"},
        {"action_bytes", &limits::action_bytes,
         "bytes one action moves or takes: a post's count x size, a memory region's size (allocated before the case runs)"},
    };
    return t;
}

core::status set_limit(limits& l, const std::string& name_eq_value) {
    const auto eq = name_eq_value.find('=');
    const auto name = name_eq_value.substr(0, eq);
    std::string names;
    for (const auto& i : limit_table()) names += (names.empty() ? "" : ", ") + std::string(i.name);
    const limit_info* info = nullptr;
    for (const auto& i : limit_table())
        if (name == i.name) info = &i;
    if (eq == std::string::npos || !info)
        return core::error{"--plan-limit expects NAME=VALUE with NAME one of " + names + ", got '" + name_eq_value + "'"};
    auto text = name_eq_value.substr(eq + 1);
    std::uint64_t scale = 1;
    for (const auto& [suffix, k] : {std::pair<const char*, std::uint64_t>{"KiB", 1ull << 10}, {"MiB", 1ull << 20}, {"GiB", 1ull << 30}})
        if (text.size() > 3 && text.ends_with(suffix)) {
            scale = k;
            text.resize(text.size() - 3);
        }
    const auto v = core::parse_uint(text, ~std::uint64_t{0} / scale);
    if (!v || *v == 0)
        return core::error{"--plan-limit " + name + ": expected a positive count (bytes may end in KiB, MiB or GiB), got '" +
                           name_eq_value.substr(eq + 1) + "'"};
    l.*(info->field) = *v * scale;
    return core::ok_status();
}

core::result<suite> load(const std::string& path, const limits& lim) { return loader(lim).run(path); }

}  // namespace mrct::plan
