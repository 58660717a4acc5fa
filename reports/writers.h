// The three writers in pieces, so that write_all can stream a run's cases one
// at a time (reports.h): a head from the document without its cases and the
// cases' digests, one piece per case from its whole entry, a tail.
#pragma once

#include <string>

#include "reports/reports.h"

namespace mrct::reports::detail {

// `head` is a results document whose "cases" are left out.
std::string junit_head(const json& head, const case_source& cases);
std::string junit_case(const json& c);
std::string junit_tail();

std::string html_head(const json& head, const case_source& cases);
std::string html_case(const json& c);
std::string html_tail();

// The summary by verdict, from the digests.
json summary(const case_source& cases);

// Cases held in memory (a document from results() or merge()).
class memory_cases final : public case_source {
public:
    explicit memory_cases(const json& cases) : cases_(cases) {}
    std::size_t size() const override { return cases_.size(); }
    const json& digest(std::size_t i) const override { return cases_[i]; }
    core::result<json> entry(std::size_t i) const override { return cases_[i]; }

private:
    const json& cases_;
};

}  // namespace mrct::reports::detail
