#include <algorithm>
#include <cctype>
#include <filesystem>
#include <functional>
#include <set>

#include <yaml-cpp/yaml.h>

#include "core/units.h"
#include "plan/plan.h"

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

class loader {
public:
    core::result<suite> run(const std::string& path) {
        suite s;
        s.file = path;
        try {
            load_file(path, s, true);
        } catch (const plan_error& e) {
            return core::error{e.message};
        } catch (const YAML::Exception& e) {
            return core::error{(current_.empty() ? path : current_) + ":" + std::to_string(e.mark.line + 1) + ":" +
                               std::to_string(e.mark.column + 1) + ": " + e.msg};
        }
        if (!errors_.empty()) {
            std::string all;
            for (const auto& e : errors_) all += (all.empty() ? "" : "\n") + e;
            return core::error{all};
        }
        std::set<std::string> ids;
        for (const auto& c : s.cases)
            if (!ids.insert(c.id).second) return core::error{c.at.str() + ": duplicate case id '" + c.id + "'"};
        return s;
    }

private:
    loc at(const YAML::Node& n) const { return {current_, n.Mark().line + 1, n.Mark().column + 1}; }
    [[noreturn]] void die(const YAML::Node& n, const std::string& msg) const { throw plan_error{at(n).str() + ": " + msg}; }
    void err(const YAML::Node& n, const std::string& msg) { errors_.push_back(at(n).str() + ": " + msg); }

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
        std::string s = n.Scalar();
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
                out += it->second;
                i = j + 1;
            } else {
                out += s[i++];
            }
        }
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
        if (n["level"]) c.level = subst(n["level"], v);
        if (c.level != "MUST" && c.level != "SHOULD") err(n["level"], "level must be MUST or SHOULD, not '" + c.level + "'");
        if (n["role"]) c.role = subst(n["role"], v);
        if (c.role != "sender" && c.role != "receiver" && c.role != "both")
            err(n["role"] ? n["role"] : n, "role (the peer's) must be sender, receiver or both, not '" + c.role + "'");
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
            only_keys(t, "topology", {"paths", "peers", "delay", "path_delay", "rate", "impair"});
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
                    only_keys(o, "on", {"dir", "match", "nth"});
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
                    for (const auto& p : points)
                        for (const auto& val : values) {
                            auto q = p;
                            q[it->first.Scalar()] = subst(val, v);
                            next.push_back(q);
                        }
                    points = next;
                }
            }
            for (const auto& p : points) {
                vars pv = v;
                for (const auto& [k, val] : p) pv[k] = val;
                out_->cases.push_back(parse_case(n, pv, p));
            }
        }
    }

    // YAML lets a map repeat a key and keeps one of the values: in a plan
    // that silently drops what the other said (a second `cases:` list).
    // Every map of the file, at any depth, is checked; nesting deeper than a
    // plan needs is refused where it starts (issue 23).
    void check_keys(const YAML::Node& n, int depth) {
        if (depth > k_max_nesting) die(n, "nested more than " + std::to_string(k_max_nesting) + " levels deep");
        if (n.IsMap()) {
            std::set<std::string> seen;
            for (auto it = n.begin(); it != n.end(); ++it) {
                if (it->first.IsScalar() && !seen.insert(it->first.Scalar()).second)
                    err(it->first, "duplicate key '" + it->first.Scalar() + "' (YAML would keep only one of them)");
                check_keys(it->second, depth + 1);
            }
        } else if (n.IsSequence()) {
            for (const auto& x : n) check_keys(x, depth + 1);
        }
    }
    static constexpr int k_max_nesting = 64;

    void load_file(const std::string& path, suite& s, bool top) {
        const auto canon = fs::weakly_canonical(path).string();
        if (loading_.count(canon)) throw plan_error{path + ": included recursively"};
        if (!fs::exists(path)) throw plan_error{path + ": no such file"};
        if (!fs::is_regular_file(path)) throw plan_error{path + ": not a plan file (a folder or a device)"};
        if (top) root_ = fs::weakly_canonical(fs::path(path)).parent_path();
        loading_.insert(canon);
        const auto saved = current_;
        current_ = path;
        out_ = &s;
        YAML::Node root = YAML::LoadFile(path);
        check_keys(root, 0);
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
            if (d["level"]) defaults_.level = subst(d["level"], vars_);
            if (d["role"]) defaults_.role = subst(d["role"], vars_);
            if (auto t = d["topology"]) {
                // The same keys as a case's topology, less impair: stages belong to a case (issue 23).
                only_keys(t, "defaults.topology", {"paths", "peers", "delay", "path_delay", "rate"});
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
        }
        if (auto inc = root["include"]) {
            if (!inc.IsSequence()) die(inc, "include: expected a list of files");
            for (const auto& x : inc) {
                auto rel = subst(x, vars_);
                auto p = (fs::path(path).parent_path() / rel).string();
                if (!fs::exists(p)) die(x, "included file '" + rel + "' not found");
                // Confined to the top plan's folder, regular files only: a
                // plan from elsewhere must not open /etc/passwd or read
                // /dev/zero for ever (issue 23; not yet widened by an option).
                const auto target = fs::weakly_canonical(p);
                const auto [r_end, t_at] = std::mismatch(root_.begin(), root_.end(), target.begin(), target.end());
                if (r_end != root_.end())
                    die(x, "included file '" + rel + "' is outside the plan's folder " + root_.string());
                if (!fs::is_regular_file(target)) die(x, "included file '" + rel + "' is not a regular file");
                load_file(p, s, false);
                current_ = path;
            }
        }
        if (root["cases"]) parse_cases(root["cases"], vars_);
        current_ = saved;
        loading_.erase(canon);
    }

    std::string current_;
    suite* out_ = nullptr;
    vars vars_;
    std::map<std::string, fragment> fragments_;
    test_case defaults_;
    std::set<std::string> loading_;
    fs::path root_;  // the top plan's folder: includes stay inside it
    std::vector<std::string> errors_;
    int depth_ = 0;
};

}  // namespace

core::result<suite> load(const std::string& path) { return loader().run(path); }

}  // namespace mrct::plan
