// The results document, JUnit from it, shard merging, atomic writing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "core/text.h"
#include "reports/escape.h"
#include "reports/reports.h"
#include "run/clauses.h"

namespace mrct::reports {

namespace {

std::string xml_escape(const std::string& s) { return markup_escape(s); }

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

json summary(const json& cases) {
    std::map<std::string, int> counts;
    for (const auto& c : cases) counts[c["verdict"].get<std::string>()]++;
    json s = json::object();
    for (const char* v : {"pass", "fail", "inconclusive", "error", "skipped"})
        if (counts.count(v)) s[v] = counts[v];
    return s;
}

}  // namespace

json results(const plan::suite& s, const run_meta& m, std::vector<json> cases, std::size_t planned) {
    std::sort(cases.begin(), cases.end(), [](const json& a, const json& b) { return a["order"] < b["order"]; });
    json j;
    j["schema"] = "mrct-results/1";
    j["plan"] = {{"name", s.name}, {"version", s.version}, {"file", s.file}};
    j["dut"] = {{"spec", m.dut_spec}, {"name", m.dut.name}, {"version", m.dut.version}, {"bug", m.dut.bug}};
    j["seed"] = m.seed;
    j["host"] = m.host.empty() ? this_host() : m.host;
    j["shards"] = m.shard.empty() ? json::array() : json::array({m.shard});
    j["planned"] = planned;
    j["interrupted"] = m.interrupted;
    if (!m.stopped.empty()) j["stopped"] = m.stopped;
    if (!m.priority.empty()) j["priority"] = m.priority;
    j["summary"] = summary(json(cases));
    json cl = json::array();
    for (const auto& c : run::clauses()) cl.push_back({{"id", c.id}, {"level", c.level}, {"text", c.text}});
    j["clauses"] = cl;
    j["cases"] = std::move(cases);
    return j;
}

std::string junit(const json& r) {
    int fails = 0, errors = 0, skipped = 0;
    double t = 0;
    for (const auto& c : r["cases"]) {
        const auto v = c["verdict"].get<std::string>();
        fails += v == "fail";
        errors += v == "error";
        skipped += v == "skipped" || v == "inconclusive";
        t += c.value("wall_s", 0.0);
    }
    const std::string name = r["plan"]["name"].get<std::string>().empty() ? r["plan"]["file"].get<std::string>()
                                                                          : r["plan"]["name"].get<std::string>();
    const auto n = r["cases"].size();
    char buf[512];
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    std::snprintf(buf, sizeof buf, "<testsuites name=\"%s\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                  xml_escape(name).c_str(), n, fails, errors, skipped, t);
    o += buf;
    std::snprintf(buf, sizeof buf, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                  xml_escape(name).c_str(), n, fails, errors, skipped, t);
    o += buf;
    const auto& d = r["dut"];
    o += "    <properties>\n";
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"dut", d["spec"].get<std::string>()},
             {"dut_name", d["name"].get<std::string>()},
             {"dut_version", d["version"].get<std::string>()},
             {"dut_bug", d["bug"].get<std::string>()},
             {"plan_version", r["plan"]["version"].get<std::string>()},
             {"seed", std::to_string(r["seed"].get<std::uint64_t>())}})
        o += "      <property name=\"" + k + "\" value=\"" + xml_escape(v) + "\"/>\n";
    o += "    </properties>\n";
    for (const auto& c : r["cases"]) {
        std::snprintf(buf, sizeof buf, "%.3f", c.value("wall_s", 0.0));
        o += "    <testcase classname=\"" + xml_escape(c["area"].get<std::string>()) + "\" name=\"" +
             xml_escape(c["id"].get<std::string>() + " " + c["title"].get<std::string>()) + "\" time=\"" + buf + "\">\n";
        std::string clauses;
        for (const auto& cl : c["clauses"]) clauses += (clauses.empty() ? "" : " ") + cl.get<std::string>();
        const auto v = c["verdict"].get<std::string>();
        // Skipped and inconclusive both map to <skipped>; the message and the
        // verdict property keep them apart.
        if (v == "skipped")
            o += "      <skipped message=\"skipped: " + xml_escape(c["reason"].get<std::string>()) + "\"/>\n";
        else if (v == "inconclusive")
            o += "      <skipped message=\"inconclusive: " + xml_escape(c["reason"].get<std::string>()) + "\"/>\n";
        else if (v == "error")
            o += "      <error message=\"" + xml_escape(c["reason"].get<std::string>()) + "\" type=\"error\"/>\n";
        else if (v == "fail") {
            std::string detail;
            for (const auto& a : c["assertions"])
                if (a["verdict"] != "pass")
                    detail += a["verdict"].get<std::string>() + " " + a["name"].get<std::string>() + " (" +
                              a["at"].get<std::string>() + "): " + a["message"].get<std::string>() +
                              (a.contains("expected") ? "\n  expected: " + a["expected"].get<std::string>() +
                                                            "\n  actual:   " + a.value("actual", std::string())
                                                      : std::string()) +
                              "\n";
            o += "      <failure message=\"" + xml_escape(c["reason"].get<std::string>()) + "\" type=\"fail\">" +
                 xml_escape(detail) + "</failure>\n";
        }
        o += "      <properties>\n        <property name=\"clauses\" value=\"" + xml_escape(clauses) +
             "\"/>\n        <property name=\"level\" value=\"" + c["level"].get<std::string>() +
             "\"/>\n        <property name=\"seed\" value=\"" + std::to_string(c["seed"].get<std::uint64_t>()) +
             "\"/>\n        <property name=\"verdict\" value=\"" + v + "\"/>\n" +
             (c.contains("time_scale") && c["time_scale"].is_number_unsigned() ? "        <property name=\"time_scale\" value=\"" +
                                             std::to_string(c["time_scale"].get<unsigned>()) + "\"/>\n"
                                       : std::string()) +
             (c.contains("attempts") && c["attempts"].is_number_unsigned() ? "        <property name=\"attempts\" value=\"" +
                                             std::to_string(c["attempts"].get<unsigned>()) + "\"/>\n"
                                       : std::string()) +
             "      </properties>\n";
        o += "    </testcase>\n";
    }
    o += "  </testsuite>\n</testsuites>\n";
    return o;
}

json strip_times(json j) {
    for (auto& c : j["cases"]) c.erase("wall_s");
    j.erase("host");
    return j;
}

core::result<json> merge(const std::vector<std::string>& dirs) {
    if (dirs.empty()) return core::error{"report merge: no directories given"};
    json out;
    std::vector<json> cases;
    std::vector<std::string> shards;
    for (const auto& d : dirs) {
        const auto path = d + "/results.json";
        std::ifstream f(path);
        if (!f) return core::error{"report merge: cannot read " + path};
        json j;
        try {
            j = json::parse(f);
        } catch (const std::exception& e) {
            return core::error{"report merge: " + path + ": " + e.what()};
        }
        if (j.value("schema", "") != "mrct-results/1") return core::error{"report merge: " + path + " is not mrct-results/1"};
        if (out.is_null()) {
            out = j;
        } else {
            // Shards may run on different hosts (CI matrices); the first one's name stays.
            for (const char* k : {"plan", "dut", "seed", "planned"})
                if (j[k] != out[k])
                    return core::error{"report merge: " + path + " comes from another run (" + std::string(k) + " differs)"};
        }
        for (auto& c : j["cases"]) cases.push_back(c);
        for (auto& s : j["shards"]) shards.push_back(s.get<std::string>());
        if (j.value("interrupted", false)) out["interrupted"] = true;
        if (j.contains("stopped")) out["stopped"] = j["stopped"];
    }
    std::sort(cases.begin(), cases.end(), [](const json& a, const json& b) { return a["order"] < b["order"]; });
    for (std::size_t i = 1; i < cases.size(); ++i)
        if (cases[i]["order"] == cases[i - 1]["order"] && cases[i]["id"] == cases[i - 1]["id"])
            return core::error{"report merge: case " + cases[i]["id"].get<std::string>() + " appears in two shards"};
    // A complete merge reads like an unsharded run.
    out["shards"] = cases.size() == out["planned"].get<std::size_t>() ? json::array() : json(shards);
    out["summary"] = summary(json(cases));
    out["cases"] = std::move(cases);
    return out;
}

json valid_utf8(json j) {
    if (j.is_string()) {
        // Escaping lengthens (one byte, four characters): same size, unchanged.
        auto fixed = core::valid_utf8(j.get_ref<const std::string&>());
        if (fixed.size() != j.get_ref<const std::string&>().size()) j = std::move(fixed);
        return j;
    }
    if (j.is_array()) {
        for (auto& v : j) v = valid_utf8(std::move(v));
        return j;
    }
    if (!j.is_object()) return j;
    bool keys_ok = true;
    for (auto& [k, v] : j.items()) {
        v = valid_utf8(std::move(v));
        keys_ok = keys_ok && core::valid_utf8(k).size() == k.size();
    }
    if (keys_ok) return j;  // values mended in place; the object is rebuilt only for a bad key
    json out = json::object();
    for (auto& [k, v] : j.items()) out[core::valid_utf8(k)] = std::move(v);
    return out;
}

core::status write_all(const std::string& dir, json raw) {
    const json r = valid_utf8(std::move(raw));
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return core::error{"cannot create " + dir + ": " + ec.message()};
    for (const auto& [name, text] : std::vector<std::pair<std::string, std::string>>{
             {"results.json", r.dump(2) + "\n"}, {"junit.xml", junit(r)}, {"report.html", html(r)}}) {
        if (auto st = run::write_file_atomic(dir + "/" + name, text); !st) return st;
    }
    return core::ok_status();
}

}  // namespace mrct::reports
