// The results document, JUnit from it, shard merging, atomic writing.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include <libxml/xmlwriter.h>

#include "core/text.h"
#include "reports/reports.h"
#include "reports/writers.h"
#include "run/clauses.h"

namespace mrct::reports {

namespace {

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

namespace {

// XML 1.0 allows no C0 control character but tab, line feed and carriage
// return: the others (a DUT's reason may carry them) become spaces. The text
// is valid UTF-8 already (valid_utf8, as the document is built).
std::string xml_chars(const std::string& s) {
    std::string o = s;
    for (auto& c : o)
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r') c = ' ';
    return o;
}

// One piece of the streamed JUnit document, written by libxml2's writer
// (escaping and well-formedness are its job); the layout between elements
// (line breaks, indentation) is written raw, so the pieces join into one
// indented document.
class xml_piece {
public:
    xml_piece() : buf_(xmlBufferCreate()), w_(buf_ ? xmlNewTextWriterMemory(buf_, 0) : nullptr) {
        if (!w_) {
            if (buf_) xmlBufferFree(buf_);
            throw std::bad_alloc();
        }
    }
    ~xml_piece() {
        xmlFreeTextWriter(w_);
        xmlBufferFree(buf_);
    }
    xml_piece(const xml_piece&) = delete;
    xml_piece& operator=(const xml_piece&) = delete;

    xml_piece& declaration() { return check(xmlTextWriterStartDocument(w_, nullptr, "UTF-8", nullptr)); }
    xml_piece& raw(const char* layout) { return check(xmlTextWriterWriteRaw(w_, BAD_CAST layout)); }
    xml_piece& open(const char* name) { return check(xmlTextWriterStartElement(w_, BAD_CAST name)); }
    xml_piece& attr(const char* name, const std::string& v) {
        return check(xmlTextWriterWriteAttribute(w_, BAD_CAST name, BAD_CAST xml_chars(v).c_str()));
    }
    xml_piece& text(const std::string& v) { return check(xmlTextWriterWriteString(w_, BAD_CAST xml_chars(v).c_str())); }
    xml_piece& close() { return check(xmlTextWriterEndElement(w_)); }
    // <property name="NAME" value="VALUE"/> on its own line at `indent`.
    xml_piece& property(const char* indent, const std::string& name, const std::string& value) {
        return raw(indent).open("property").attr("name", name).attr("value", value).close();
    }
    std::string str() {
        check(xmlTextWriterFlush(w_));
        return std::string(reinterpret_cast<const char*>(xmlBufferContent(buf_)), static_cast<std::size_t>(xmlBufferLength(buf_)));
    }

private:
    xml_piece& check(int rc) {
        if (rc < 0) throw std::runtime_error("junit.xml: libxml2's writer failed");
        return *this;
    }
    xmlBufferPtr buf_;
    xmlTextWriterPtr w_;
};

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
    xml_piece x;
    auto counts = [&](xml_piece& p) -> xml_piece& {
        return p.attr("name", name)
            .attr("tests", std::to_string(cases.size()))
            .attr("failures", std::to_string(fails))
            .attr("errors", std::to_string(errors))
            .attr("skipped", std::to_string(skipped))
            .attr("time", seconds(t));
    };
    x.declaration();
    counts(x.open("testsuites"));
    counts(x.raw("\n  ").open("testsuite"));
    x.raw("\n    ").open("properties");
    const auto& d = r["dut"];
    for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
             {"dut", d["spec"].get<std::string>()},
             {"dut_name", d["name"].get<std::string>()},
             {"dut_version", d["version"].get<std::string>()},
             {"dut_bug", d["bug"].get<std::string>()},
             {"plan_version", r["plan"]["version"].get<std::string>()},
             {"seed", std::to_string(r["seed"].get<std::uint64_t>())}})
        x.property("\n      ", k, v);
    x.raw("\n    ").close().raw("\n");
    return x.str();  // testsuites and testsuite stay open: the cases follow, then junit_tail()
}

std::string junit_case(const json& c) {
    xml_piece x;
    x.raw("    ")
        .open("testcase")
        .attr("classname", c["area"].get<std::string>())
        .attr("name", c["id"].get<std::string>() + " " + c["title"].get<std::string>())
        .attr("time", seconds(c.value("wall_s", 0.0)));
    std::string clauses;
    for (const auto& cl : c["clauses"]) clauses += (clauses.empty() ? "" : " ") + cl.get<std::string>();
    const auto v = c["verdict"].get<std::string>();
    const auto reason = c["reason"].get<std::string>();
    // Skipped and inconclusive both map to <skipped>; the message and the
    // verdict property keep them apart.
    if (v == "skipped" || v == "inconclusive") {
        x.raw("\n      ").open("skipped").attr("message", v + ": " + reason).close();
    } else if (v == "error") {
        x.raw("\n      ").open("error").attr("message", reason).attr("type", "error").close();
    } else if (v == "fail") {
        std::string detail;
        for (const auto& a : c["assertions"])
            if (a["verdict"] != "pass")
                detail += a["verdict"].get<std::string>() + " " + a["name"].get<std::string>() + " (" + a["at"].get<std::string>() +
                          "): " + a["message"].get<std::string>() +
                          (a.contains("expected") ? "\n  expected: " + a["expected"].get<std::string>() +
                                                        "\n  actual:   " + a.value("actual", std::string())
                                                  : std::string()) +
                          "\n";
        x.raw("\n      ").open("failure").attr("message", reason).attr("type", "fail").text(detail).close();
    }
    x.raw("\n      ").open("properties");
    x.property("\n        ", "clauses", clauses).property("\n        ", "level", c["level"].get<std::string>());
    x.property("\n        ", "seed", std::to_string(c["seed"].get<std::uint64_t>())).property("\n        ", "verdict", v);
    if (c.contains("time_scale") && c["time_scale"].is_number_unsigned())
        x.property("\n        ", "time_scale", std::to_string(c["time_scale"].get<unsigned>()));
    if (c.contains("attempts") && c["attempts"].is_number_unsigned())
        x.property("\n        ", "attempts", std::to_string(c["attempts"].get<unsigned>()));
    if (c.contains("interrupted") && c["interrupted"].is_boolean() && c["interrupted"].get<bool>()) x.property("\n        ", "interrupted", "true");
    x.raw("\n      ").close().raw("\n    ").close().raw("\n");
    return x.str();
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
    // results.json and junit.xml first, committed before report.html is
    // begun: what CI reads is on disk sooner, and survives a kill while the
    // larger report is written (a run stopped twice, D143, then SIGKILLed).
    auto results_json = run::atomic_file::open(dir + "/results.json");
    if (!results_json) return results_json.err();
    auto junit_xml = run::atomic_file::open(dir + "/junit.xml");
    if (!junit_xml) return junit_xml.err();
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
    }
    if (auto st = junit_xml->write(detail::junit_tail()); !st) return st;
    for (auto* f : {&*results_json, &*junit_xml})
        if (auto st = f->commit(); !st) return st;
    auto report_html = run::atomic_file::open(dir + "/report.html");
    if (!report_html) return report_html.err();
    if (auto st = report_html->write(detail::html_head(head, cases)); !st) return st;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        auto raw = cases.entry(i);
        if (!raw) return raw.err();
        if (auto st = report_html->write(detail::html_case(valid_utf8(std::move(*raw)))); !st) return st;
    }
    if (auto st = report_html->write(detail::html_tail()); !st) return st;
    return report_html->commit();
}

}  // namespace mrct::reports
