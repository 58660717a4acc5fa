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
#include "reports/writers.h"
#include "run/clauses.h"

namespace mrct::reports {

namespace {

std::string xml_escape(const std::string& s) { return markup_escape(s); }

std::string this_host() {
    char name[256] = {};
    if (gethostname(name, sizeof name - 1) != 0) return "unknown";
    return name;
}

}  // namespace

json results(const plan::suite& s, const run_meta& m, std::vector<json> cases, std::size_t planned) {
    std::sort(cases.begin(), cases.end(), [](const json& a, const json& b) { return a["order"] < b["order"]; });
    json cases_doc(std::move(cases));
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
    j["summary"] = detail::summary(detail::memory_cases(cases_doc));
    json cl = json::array();
    for (const auto& c : run::clauses()) cl.push_back({{"id", c.id}, {"level", c.level}, {"text", c.text}});
    j["clauses"] = cl;
    j["cases"] = std::move(cases_doc);
    return j;
}

namespace detail {

json summary(const case_source& cases) {
    std::map<std::string, int> counts;
    for (std::size_t i = 0; i < cases.size(); ++i) counts[cases.digest(i)["verdict"].get<std::string>()]++;
    json s = json::object();
    for (const char* v : {"pass", "fail", "inconclusive", "error", "skipped"})
        if (counts.count(v)) s[v] = counts[v];
    return s;
}

namespace {

std::string seconds(double t) {
    char b[40];
    std::snprintf(b, sizeof b, "%.3f", t);
    return b;
}

}  // namespace

std::string junit_head(const json& r, const case_source& cases) {
    int fails = 0, errors = 0, skipped = 0;
    double t = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& c = cases.digest(i);
        const auto v = c["verdict"].get<std::string>();
        fails += v == "fail";
        errors += v == "error";
        skipped += v == "skipped" || v == "inconclusive";
        t += c.value("wall_s", 0.0);
    }
    const std::string name = r["plan"]["name"].get<std::string>().empty() ? r["plan"]["file"].get<std::string>()
                                                                          : r["plan"]["name"].get<std::string>();
    const std::string counts = "\" tests=\"" + std::to_string(cases.size()) + "\" failures=\"" + std::to_string(fails) +
                               "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" + std::to_string(skipped) +
                               "\" time=\"" + seconds(t) + "\">\n";
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    o += "<testsuites name=\"" + xml_escape(name) + counts;
    o += "  <testsuite name=\"" + xml_escape(name) + counts;
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
    return o;
}

std::string junit_case(const json& c) {
    std::string o = "    <testcase classname=\"" + xml_escape(c["area"].get<std::string>()) + "\" name=\"" +
                    xml_escape(c["id"].get<std::string>() + " " + c["title"].get<std::string>()) + "\" time=\"" +
                    seconds(c.value("wall_s", 0.0)) + "\">\n";
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
                detail += a["verdict"].get<std::string>() + " " + a["name"].get<std::string>() + " (" + a["at"].get<std::string>() +
                          "): " + a["message"].get<std::string>() +
                          (a.contains("expected") ? "\n  expected: " + a["expected"].get<std::string>() +
                                                        "\n  actual:   " + a.value("actual", std::string())
                                                  : std::string()) +
                          "\n";
        o += "      <failure message=\"" + xml_escape(c["reason"].get<std::string>()) + "\" type=\"fail\">" + xml_escape(detail) +
             "</failure>\n";
    }
    o += "      <properties>\n        <property name=\"clauses\" value=\"" + xml_escape(clauses) +
         "\"/>\n        <property name=\"level\" value=\"" + xml_escape(c["level"].get<std::string>()) +
         "\"/>\n        <property name=\"seed\" value=\"" + std::to_string(c["seed"].get<std::uint64_t>()) +
         "\"/>\n        <property name=\"verdict\" value=\"" + xml_escape(v) + "\"/>\n" +
         (c.contains("time_scale") && c["time_scale"].is_number_unsigned()
              ? "        <property name=\"time_scale\" value=\"" + std::to_string(c["time_scale"].get<unsigned>()) + "\"/>\n"
              : std::string()) +
         (c.contains("attempts") && c["attempts"].is_number_unsigned()
              ? "        <property name=\"attempts\" value=\"" + std::to_string(c["attempts"].get<unsigned>()) + "\"/>\n"
              : std::string()) +
         "      </properties>\n";
    o += "    </testcase>\n";
    return o;
}

std::string junit_tail() { return "  </testsuite>\n</testsuites>\n"; }

}  // namespace detail

std::string junit(const json& r) {
    const detail::memory_cases cases(r["cases"]);
    std::string o = detail::junit_head(r, cases);
    for (const auto& c : r["cases"]) o += detail::junit_case(c);
    return o + detail::junit_tail();
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
    out["cases"] = std::move(cases);
    out["summary"] = detail::summary(detail::memory_cases(out["cases"]));
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
    json r = valid_utf8(std::move(raw));
    json cases = std::move(r["cases"]);
    const detail::memory_cases source(cases);
    return write_all(dir, std::move(r), source);
}

core::status write_all(const std::string& dir, json raw_head, const case_source& cases) {
    json head = valid_utf8(std::move(raw_head));
    head["summary"] = detail::summary(cases);
    head["cases"] = json::array();  // last, as results() puts it; filled below
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return core::error{"cannot create " + dir + ": " + ec.message()};
    auto results_json = run::atomic_file::open(dir + "/results.json");
    if (!results_json) return results_json.err();
    auto junit_xml = run::atomic_file::open(dir + "/junit.xml");
    if (!junit_xml) return junit_xml.err();
    auto report_html = run::atomic_file::open(dir + "/report.html");
    if (!report_html) return report_html.err();
    // results.json as head.dump(2) would write the whole document: the head
    // with an empty "cases" at its end, opened up, each case indented in.
    std::string top = head.dump(2);
    const std::string empty_cases = "\"cases\": []\n}";
    if (top.size() < empty_cases.size() || top.compare(top.size() - empty_cases.size(), empty_cases.size(), empty_cases) != 0)
        return core::error{"results.json: the document does not end with its cases"};  // head.dump(2) always does
    if (cases.size()) top.resize(top.size() - 3);  // keep `"cases": [`
    else top += "\n";
    if (auto st = results_json->write(top); !st) return st;
    if (auto st = junit_xml->write(detail::junit_head(head, cases)); !st) return st;
    if (auto st = report_html->write(detail::html_head(head, cases)); !st) return st;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        auto raw = cases.entry(i);
        if (!raw) return raw.err();
        const json c = valid_utf8(std::move(*raw));
        std::string text = i ? ",\n" : "\n";
        const std::string d = c.dump(2);
        // Four spaces before each line: strings hold no raw newline (JSON escapes them).
        std::size_t from = 0;
        while (from < d.size()) {
            const auto nl = d.find('\n', from);
            const auto to = nl == std::string::npos ? d.size() : nl + 1;
            text.append("    ").append(d, from, to - from);
            from = to;
        }
        if (i + 1 == cases.size()) text += "\n  ]\n}\n";
        if (auto st = results_json->write(text); !st) return st;
        if (auto st = junit_xml->write(detail::junit_case(c)); !st) return st;
        if (auto st = report_html->write(detail::html_case(c)); !st) return st;
    }
    if (auto st = junit_xml->write(detail::junit_tail()); !st) return st;
    if (auto st = report_html->write(detail::html_tail()); !st) return st;
    for (auto* f : {&*results_json, &*junit_xml, &*report_html})
        if (auto st = f->commit(); !st) return st;
    return core::ok_status();
}

}  // namespace mrct::reports
