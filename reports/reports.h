// What a run hands over (docs/reports.md): results JSON (schema mrct-results/1,
// docs/results.md), JUnit XML, and one self-contained HTML report. The JSON
// carries everything the other two need (cases in plan order, clause table,
// per-case evidence: timelines and plot series), so JUnit and HTML are pure
// functions of it and `mrct report merge` of shard outputs gives the same
// reports as an unsharded run.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "dut_adapters/dut.h"
#include "plan/plan.h"
#include "run/runner.h"

namespace mrct::reports {

using json = nlohmann::ordered_json;

struct run_meta {
    std::string dut_spec;
    dut::info dut;
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

std::string junit(const json& results);
std::string html(const json& results);

// Reads results.json files of shards and merges them into one document.
core::result<json> merge(const std::vector<std::string>& dirs);
// Writes results.json, junit.xml and report.html into `dir`, each atomically.
core::status write_all(const std::string& dir, json results);

// Every string (values and keys) made valid UTF-8 (core::valid_utf8: stray
// bytes become \xHH): what write_all writes, so that bytes from a plan or an
// agent never leave a run without its reports.
json valid_utf8(json j);

// Removes wall-clock fields (approval tests, shard comparison).
json strip_times(json j);

}  // namespace mrct::reports
