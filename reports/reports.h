// What a run hands over (docs/reports.md): results JSON (schema mrct-results/1,
// docs/results.md), JUnit XML, and one self-contained HTML report. The JSON
// carries everything the other two need (cases in plan order, clause table,
// per-case evidence: timelines and plot series), so JUnit and HTML are pure
// functions of it and `mrct report merge` of shard outputs gives the same
// reports as an unsharded run.
//
// A run's memory does not grow with its cases: each case's entry goes to a
// case_spool on disk as the case ends, and write_all streams the three files
// from it, one entry in memory at a time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "plan/plan.h"
#include "run/results.h"

namespace mrct::reports {

using json = nlohmann::ordered_json;

// The DUT as the reports name it (the app fills it from dut::info: the
// reports do not see dut_adapters, docs/architecture.md).
struct dut_desc {
    std::string name, version, bug;
};

struct run_meta {
    std::string dut_spec;
    dut_desc dut;
    std::uint64_t seed = 1;
    std::string shard;  // "K/N" or empty
    bool interrupted = false;
    std::string host;   // where the run ran (empty: this machine's name)
    std::string priority;  // the engine's scheduling in real time (sim/priority.h); empty: not real time
    std::string stopped;   // why the run stopped before its planned cases (--max-errors); empty: it did not
};

// One case as JSON, with evidence taken from its trace (if kept).
json case_json(const run::case_result& r, std::size_t order);
// The whole results document. `cases` are case_json() objects in plan order.
json results(const plan::suite& s, const run_meta& m, std::vector<json> cases, std::size_t planned);

// The cases of a results document in plan order: each one's digest (the
// fields the summaries need: order, id, title, area, level, verdict, clauses,
// reason, wall_s) at hand, the whole entry (assertions, evidence) fetched
// when it is written.
class case_source {
public:
    virtual ~case_source() = default;
    virtual std::size_t size() const = 0;
    virtual const json& digest(std::size_t i) const = 0;
    virtual core::result<json> entry(std::size_t i) const = 0;
};

// A run's case entries on disk as the cases end: one line of JSON each in a
// file of the output folder that is unlinked as soon as it is made (a killed
// run leaves nothing behind), with only the digests in memory. Entries are
// made valid UTF-8 (valid_utf8) as they are added.
class case_spool final : public case_source {
public:
    static core::result<case_spool> create(const std::string& dir);
    case_spool(case_spool&& o) noexcept;
    case_spool& operator=(case_spool&&) = delete;
    case_spool(const case_spool&) = delete;
    ~case_spool() override;

    core::status add(json entry);
    std::size_t size() const override { return items_.size(); }
    const json& digest(std::size_t i) const override { return items_[i].digest; }
    core::result<json> entry(std::size_t i) const override;

private:
    struct item {
        std::uint64_t offset = 0, length = 0;
        json digest;
    };
    case_spool(std::string dir, int fd) : dir_(std::move(dir)), fd_(fd) {}
    std::string dir_;
    int fd_ = -1;
    std::uint64_t end_ = 0;
    std::vector<item> items_;  // in plan order
};

std::string junit(const json& results);
std::string html(const json& results);

// Reads results.json files of shards and merges them into one document.
core::result<json> merge(const std::vector<std::string>& dirs);
// Writes results.json, junit.xml and report.html into `dir`, each atomically.
core::status write_all(const std::string& dir, json results);
// The same from a document without its cases (`head`, as results() makes it
// from no cases) and the cases from `cases`; the summary is counted from them.
core::status write_all(const std::string& dir, json head, const case_source& cases);

// Every string (values and keys) made valid UTF-8 (core::valid_utf8: stray
// bytes become \xHH): what write_all writes, so that bytes from a plan or an
// agent never leave a run without its reports.
json valid_utf8(json j);

// Removes wall-clock fields (approval tests, shard comparison).
json strip_times(json j);

}  // namespace mrct::reports
