// Results as JSON (schema "mrct-results/1", docs/results.md) and JUnit XML.
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "run/runner.h"

namespace mrct::run {

namespace {

std::string xml_escape(const std::string& s) {
    std::string o;
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') o += ' ';
            else o += c;
        }
    }
    return o;
}

}  // namespace

std::string results_json(const plan::suite& s, const std::vector<case_result>& r, const std::string& dut_spec,
                         std::uint64_t seed, const dut::info& info) {
    nlohmann::ordered_json j;
    j["schema"] = "mrct-results/1";
    j["plan"] = {{"name", s.name}, {"version", s.version}, {"file", s.file}};
    j["dut"] = {{"spec", dut_spec}, {"name", info.name}, {"version", info.version}, {"bug", info.bug}};
    j["seed"] = seed;
    std::map<std::string, int> counts;
    for (const auto& c : r) counts[std::string(assertions::verdict_name(c.v))]++;
    j["summary"] = counts;
    auto& cases = j["cases"] = nlohmann::ordered_json::array();
    for (const auto& c : r) {
        nlohmann::ordered_json cj;
        cj["id"] = c.id;
        cj["title"] = c.title;
        cj["area"] = c.area;
        cj["level"] = c.level;
        cj["clauses"] = c.clauses;
        cj["verdict"] = assertions::verdict_name(c.v);
        cj["reason"] = c.reason;
        cj["seed"] = c.seed;
        cj["sim_time_us"] = core::to_micros(c.sim_time);
        cj["frames"] = c.frames;
        cj["wall_s"] = c.wall_s;
        auto& as = cj["assertions"] = nlohmann::ordered_json::array();
        for (const auto& a : c.asserts) {
            nlohmann::ordered_json aj;
            aj["name"] = a.name;
            aj["clauses"] = a.clauses;
            aj["at"] = a.at.str();
            aj["verdict"] = assertions::verdict_name(a.o.v);
            aj["message"] = a.o.message;
            if (!a.o.expected.empty()) aj["expected"] = a.o.expected;
            if (!a.o.actual.empty()) aj["actual"] = a.o.actual;
            if (!a.o.frames.empty()) aj["frames"] = a.o.frames;
            if (!a.o.measured.empty()) aj["measured"] = a.o.measured;
            as.push_back(aj);
        }
        cases.push_back(cj);
    }
    return j.dump(2) + "\n";
}

std::string results_junit(const plan::suite& s, const std::vector<case_result>& r, const std::string& dut_spec,
                          std::uint64_t seed) {
    int fails = 0, errors = 0, skipped = 0;
    double t = 0;
    for (const auto& c : r) {
        fails += c.v == verdict::fail;
        errors += c.v == verdict::error;
        skipped += c.v == verdict::skipped || c.v == verdict::inconclusive;
        t += c.wall_s;
    }
    std::string o = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    char buf[512];
    std::snprintf(buf, sizeof buf, "<testsuites tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                  r.size(), fails, errors, skipped, t);
    o += buf;
    std::snprintf(buf, sizeof buf, "  <testsuite name=\"%s\" tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\">\n",
                  xml_escape(s.name.empty() ? s.file : s.name).c_str(), r.size(), fails, errors, skipped, t);
    o += buf;
    o += "    <properties>\n      <property name=\"dut\" value=\"" + xml_escape(dut_spec) + "\"/>\n      <property name=\"seed\" value=\"" +
         std::to_string(seed) + "\"/>\n    </properties>\n";
    for (const auto& c : r) {
        std::snprintf(buf, sizeof buf, "%.3f", c.wall_s);
        o += "    <testcase classname=\"" + xml_escape(c.area) + "\" name=\"" + xml_escape(c.id + " " + c.title) + "\" time=\"" +
             buf + "\">\n";
        std::string clauses;
        for (const auto& cl : c.clauses) clauses += (clauses.empty() ? "" : " ") + cl;
        o += "      <properties>\n        <property name=\"clauses\" value=\"" + xml_escape(clauses) +
             "\"/>\n        <property name=\"level\" value=\"" + c.level + "\"/>\n        <property name=\"seed\" value=\"" +
             std::to_string(c.seed) + "\"/>\n        <property name=\"verdict\" value=\"" +
             std::string(assertions::verdict_name(c.v)) + "\"/>\n      </properties>\n";
        std::string detail;
        for (const auto& a : c.asserts)
            if (a.o.v != verdict::pass)
                detail += std::string(assertions::verdict_name(a.o.v)) + " " + a.name + " (" + a.at.str() + "): " + a.o.message +
                          (a.o.expected.empty() ? "" : "\n  expected: " + a.o.expected + "\n  actual:   " + a.o.actual) + "\n";
        if (c.v == verdict::fail)
            o += "      <failure message=\"" + xml_escape(c.reason) + "\" type=\"fail\">" + xml_escape(detail) + "</failure>\n";
        else if (c.v == verdict::error)
            o += "      <error message=\"" + xml_escape(c.reason) + "\" type=\"error\"/>\n";
        else if (c.v == verdict::skipped)
            o += "      <skipped message=\"skipped: " + xml_escape(c.reason) + "\"/>\n";
        else if (c.v == verdict::inconclusive)
            o += "      <skipped message=\"inconclusive: " + xml_escape(c.reason) + "\"/>\n";
        o += "    </testcase>\n";
    }
    o += "  </testsuite>\n</testsuites>\n";
    return o;
}

core::status write_file_atomic(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) return core::error{"cannot write " + tmp};
        f << text;
        f.flush();
        if (!f) return core::error{"write failed: " + tmp};
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) return core::error{"cannot rename " + tmp + " to " + path + ": " + ec.message()};
    return core::ok_status();
}

}  // namespace mrct::run
