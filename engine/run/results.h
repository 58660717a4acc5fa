// What a run gives: each case's result and each assertion's, and the files
// its outputs are written through. Apart from runner.h so that those who only
// read results (reports/, check/) need not see how cases are run or which
// DUTs exist (docs/architecture.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "assertions/assertion.h"
#include "core/result.h"
#include "plan/plan.h"
#include "trace/trace.h"

namespace mrct::run {

using assertions::verdict;

struct assertion_result {
    std::string name;
    std::vector<std::string> clauses;
    plan::loc at;
    assertions::outcome o;
};

// A record that is not the DUT's wire bears no verdict: one missing frames
// of the DUT's (dropped unread before they were recorded: the engine's full
// socket or capture buffer, a capturer's drops), or showing frames going to
// the DUT that never left (an emulator port's failed sends, D120). A pass or
// a fail becomes inconclusive, saying `lost` (what, and where) and what it
// would have said. Flagged as timing: a less busy attempt may judge.
void on_incomplete_record(assertion_result& a, const std::string& lost);

struct case_result {
    std::string id, title, level, area, role;
    std::vector<std::string> clauses;
    verdict v = verdict::pass;
    std::string reason;  // for error/skipped, or the first failure's message
    std::vector<assertion_result> asserts;
    std::uint64_t seed = 0;
    double wall_s = 0;
    core::nanos sim_time{0};
    std::size_t frames = 0, events = 0;
    std::shared_ptr<const trace::trace> tr;  // kept for pcaps and reports
    std::size_t order = 0;                   // position in the unsharded run (plan order x repetitions)
    // The time base the case ran at (run/time_scale.h): 1, or K when a
    // `fine_timing` case ran slowed down K times on a DUT without the capability.
    unsigned time_scale = 1;
    // Real time: attempts made, and the reason each earlier one ended
    // inconclusive on timing alone (run_case's timing retries, D66).
    unsigned attempts = 1;
    std::vector<std::string> doubted_before;
    // Cut short by a run stopped a second time (run_control::cut, D143):
    // not judged, verdict skipped; the reason says when, the trace what it saw.
    bool interrupted = false;
    // A failed or erred case re-run with the DUT's waveform on
    // (run_options::waveform): the file it wrote, else empty.
    std::string waveform;
};

// A file written piece by piece and made visible at once: the pieces go to
// `path`.tmp, commit() syncs it and renames it over `path`. Not committed (an
// error, an exception), the .tmp is removed and any earlier `path` kept.
// Errors name the file and the system's reason ("No space left on device").
class atomic_file {
public:
    static core::result<atomic_file> open(const std::string& path);
    atomic_file(atomic_file&& o) noexcept;
    atomic_file& operator=(atomic_file&&) = delete;
    atomic_file(const atomic_file&) = delete;
    ~atomic_file();
    core::status write(std::string_view text);
    core::status commit();

private:
    atomic_file(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
    core::error fail(const std::string& what);
    std::string path_;
    int fd_ = -1;
};
// Writes a file atomically (atomic_file in one piece). Results, JUnit and HTML: reports/.
core::status write_file_atomic(const std::string& path, const std::string& text);
// Before a run: the output folder exists (created if need be), is a folder,
// and takes a file; the error says which of these failed.
core::status check_output_dir(const std::string& dir);

}  // namespace mrct::run
