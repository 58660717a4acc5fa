// Streamed reports (reports.h: case_spool, write_all from a case source): the
// same bytes as the document written whole, cases in plan order whatever the
// order they end in, nothing left on disk, and a run's atomic outputs.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "reports/reports.h"
#include "run/runner.h"

using namespace mrct;

namespace {

std::string tmp_dir(const std::string& name) {
    const auto d = std::string(MRCT_TEST_TMP) + "/spool_test/" + name;
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
}

std::string slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

reports::json a_case(std::size_t order, assertions::verdict v, const std::string& reason) {
    run::case_result r;
    r.id = "C-" + std::to_string(order);
    r.title = "case " + std::to_string(order);
    r.level = "must";
    r.area = order % 2 ? "rnr" : "sack";
    r.clauses = {"MR-RNR-4", "MR-SACK-1"};
    r.v = v;
    r.reason = reason;
    r.seed = 1000 + order;
    r.frames = order;
    run::assertion_result a;
    a.name = "some_check";
    a.clauses = {"MR-RNR-4"};
    a.o.v = v;
    a.o.message = reason.empty() ? "held" : reason;
    if (v == assertions::verdict::fail) {
        a.o.expected = "resumed";
        a.o.actual = "never";
    }
    r.asserts.push_back(a);
    auto j = reports::case_json(r, order);
    // Evidence as a traced case carries it: a plot and a timeline.
    j["evidence"] = {{"plots", reports::json::array({{{"title", "window"}, {"x", "us"}, {"y", "bytes"},
                                                      {"series", reports::json::array({{{"name", "w"}, {"points", {{0, 1}, {1, 2}}}}})}}})},
                     {"timeline", reports::json::array({{{"i", 0}, {"t_us", 0.5}, {"dir", "peer->dut"}, {"frame", "WRITE psn 1"}, {"action", ""}}})}};
    return j;
}

plan::suite a_suite(const std::string& name) {
    plan::suite s;
    s.name = name;
    s.version = "1.2";
    s.file = "plan.yaml";
    return s;
}

const reports::run_meta k_meta{"sim", {"reference", "1", "none"}, 7, "", false, "host-a", {}, {}};

}  // namespace

TEST_CASE("write_all from a spool writes the bytes of the whole document, cases in plan order") {
    const auto s = a_suite("streamed");
    std::vector<reports::json> cases;
    for (std::size_t i = 0; i < 6; ++i)
        cases.push_back(a_case(i, i == 2 ? assertions::verdict::fail : i == 4 ? assertions::verdict::error : assertions::verdict::pass,
                               i == 2 ? "never resumed" : i == 4 ? "agent gone" : ""));
    const auto whole = reports::results(s, k_meta, cases, 8);
    const auto a = tmp_dir("whole"), b = tmp_dir("streamed");
    REQUIRE(reports::write_all(a, whole));
    auto spool = reports::case_spool::create(b);
    REQUIRE(spool);
    for (std::size_t i : {3, 0, 5, 1, 4, 2}) REQUIRE(spool->add(cases[i]));  // ended out of order (-j)
    REQUIRE(spool->size() == 6);
    CHECK(spool->digest(0)["id"] == "C-0");
    CHECK(spool->digest(5)["id"] == "C-5");
    CHECK_FALSE(spool->digest(2).contains("evidence"));  // digests stay small
    REQUIRE(reports::write_all(b, reports::results(s, k_meta, {}, 8), *spool));
    for (const char* f : {"results.json", "junit.xml", "report.html"}) {
        INFO(f);
        CHECK(slurp(a + "/" + f) == slurp(b + "/" + f));
    }
    // results.json is the document as nlohmann writes it whole.
    CHECK(slurp(b + "/results.json") == whole.dump(2) + "\n");
    const auto back = reports::json::parse(slurp(b + "/results.json"));
    CHECK(back["summary"] == reports::json({{"pass", 4}, {"fail", 1}, {"error", 1}}));
    CHECK(back["cases"][2]["assertions"][0]["expected"] == "resumed");
    CHECK(back["cases"][2]["evidence"]["timeline"][0]["frame"] == "WRITE psn 1");
    // The spool file was unlinked when made: only the three reports remain.
    CHECK(files_in(b) == std::vector<std::string>{"junit.xml", "report.html", "results.json"});
}

TEST_CASE("write_all commits results.json and junit.xml before it begins report.html (D143)") {
    // report.html cannot be written (its temporary name is taken by a
    // folder): the error is said, and what CI reads is already in place.
    const auto s = a_suite("ordered");
    const auto d = tmp_dir("ordered");
    std::filesystem::create_directories(d + "/report.html.tmp/x");
    const auto st = reports::write_all(d, reports::results(s, k_meta, {a_case(0, assertions::verdict::pass, "")}, 1));
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("report.html"));
    CHECK(reports::json::parse(slurp(d + "/results.json"))["cases"].size() == 1);
    CHECK(slurp(d + "/junit.xml").find("C-0") != std::string::npos);
    CHECK_FALSE(std::filesystem::exists(d + "/report.html"));
}

TEST_CASE("a spool with no cases gives the empty document") {
    const auto s = a_suite("empty");
    const auto d = tmp_dir("empty");
    auto spool = reports::case_spool::create(d);
    REQUIRE(spool);
    REQUIRE(reports::write_all(d, reports::results(s, k_meta, {}, 3), *spool));
    CHECK(slurp(d + "/results.json") == reports::results(s, k_meta, {}, 3).dump(2) + "\n");
    CHECK_THAT(slurp(d + "/junit.xml"), Catch::Contains("tests=\"0\""));
    CHECK_THAT(slurp(d + "/report.html"), Catch::Contains("0 of 3 cases"));
}

TEST_CASE("spooled entries are made valid UTF-8 as they are added") {
    const auto d = tmp_dir("utf8");
    auto spool = reports::case_spool::create(d);
    REQUIRE(spool);
    REQUIRE(spool->add(a_case(0, assertions::verdict::error, std::string("agent said \xff\xfe"))));
    CHECK(spool->digest(0)["reason"] == "agent said \\xFF\\xFE");
    auto e = spool->entry(0);
    REQUIRE(e);
    CHECK((*e)["reason"] == "agent said \\xFF\\xFE");
    REQUIRE(reports::write_all(d, reports::results(a_suite("u"), k_meta, {}, 1), *spool));
    CHECK_NOTHROW(reports::json::parse(slurp(d + "/results.json")));
}

TEST_CASE("a spool cannot be made where nothing can be written") {
    auto spool = reports::case_spool::create(std::string(MRCT_TEST_TMP) + "/spool_test/no/such/folder");
    REQUIRE_FALSE(spool);
    CHECK_THAT(spool.err().message, Catch::Contains("No such file or directory"));
}

TEST_CASE("JUnit keeps a plan name of any length whole") {
    // Was written through a 512-byte buffer: a long name cut the XML short.
    const std::string name(2000, 'n');
    const auto r = reports::results(a_suite(name), k_meta, {a_case(0, assertions::verdict::pass, "")}, 1);
    const auto x = reports::junit(r);
    CHECK_THAT(x, Catch::Contains("<testsuites name=\"" + name + "\" tests=\"1\""));
    CHECK_THAT(x, Catch::Contains("<testsuite name=\"" + name + "\" tests=\"1\""));
    CHECK_THAT(x, Catch::EndsWith("</testsuites>\n"));
}

TEST_CASE("JUnit is written by libxml2's writer: any reason comes out well-formed, and back whole") {
    // Markup, quotes, line breaks and control characters a DUT's reason may
    // carry; the document must parse and give each reason back (control
    // characters, invalid in XML 1.0, as spaces).
    const std::string nasty = "a <b> & \"c\" 'd'\nsecond line\x01\x1f\tend ]]> --> <!--";
    const auto r = reports::results(a_suite("<plan & \"name\">"), k_meta,
                                    {a_case(0, assertions::verdict::fail, nasty), a_case(1, assertions::verdict::error, nasty),
                                     a_case(2, assertions::verdict::inconclusive, nasty)},
                                    3);
    const auto x = reports::junit(r);
    xmlDocPtr doc = xmlReadMemory(x.data(), static_cast<int>(x.size()), "junit.xml", nullptr, XML_PARSE_NONET);
    REQUIRE(doc != nullptr);
    const std::string back = "a <b> & \"c\" 'd'\nsecond line  \tend ]]> --> <!--";
    std::vector<std::string> messages, names;
    for (xmlNodePtr suite = xmlDocGetRootElement(doc)->children; suite; suite = suite->next) {
        if (suite->type != XML_ELEMENT_NODE) continue;
        if (xmlChar* n = xmlGetProp(suite, BAD_CAST "name")) {
            names.emplace_back(reinterpret_cast<const char*>(n));
            xmlFree(n);
        }
        for (xmlNodePtr tc = suite->children; tc; tc = tc->next)
            for (xmlNodePtr e = tc->children; e; e = e->next)
                if (e->type == XML_ELEMENT_NODE)
                    if (xmlChar* m = xmlGetProp(e, BAD_CAST "message")) {
                        messages.emplace_back(reinterpret_cast<const char*>(m));
                        xmlFree(m);
                    }
    }
    xmlFreeDoc(doc);
    CHECK(names == std::vector<std::string>{"<plan & \"name\">"});
    CHECK(messages == std::vector<std::string>{back, back, "inconclusive: " + back});
}

TEST_CASE("atomic_file: pieces appear at commit, an uncommitted file leaves nothing") {
    const auto d = tmp_dir("atomic");
    const auto path = d + "/out.txt";
    REQUIRE(run::write_file_atomic(path, "old\n"));
    {
        auto f = run::atomic_file::open(path);
        REQUIRE(f);
        REQUIRE(f->write("new "));
        REQUIRE(f->write("text\n"));
        CHECK(slurp(path) == "old\n");  // not yet
        REQUIRE(f->commit());
        CHECK_FALSE(f->write("more"));  // closed
    }
    CHECK(slurp(path) == "new text\n");
    {
        auto f = run::atomic_file::open(path);
        REQUIRE(f);
        REQUIRE(f->write("half"));
    }  // dropped without commit (an error on the way)
    CHECK(slurp(path) == "new text\n");
    CHECK(files_in(d) == std::vector<std::string>{"out.txt"});
    auto bad = run::atomic_file::open(d + "/no/such/out.txt");
    REQUIRE_FALSE(bad);
    CHECK_THAT(bad.err().message, Catch::Contains("cannot write " + d + "/no/such/out.txt"));
}
