// The errors of a plan, as the loader and run's validate collect them: each
// once (sweep instances repeat theirs at the same place), in the order they
// were found, and at most k_max of them, then how many more there were. A
// plan of 95,000 unknown keys needs its first fixed, not 28 MB of the same
// sentence.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace mrct::plan {

class error_list {
public:
    static constexpr std::size_t k_max = 100;

    void add(std::string e) {
        if (!seen_.insert(e).second) return;
        if (shown_.size() < k_max) shown_.push_back(std::move(e));
        else ++more_;
    }
    bool empty() const { return shown_.empty(); }
    // One per line, and a last line with the count of the rest.
    std::string text() const {
        std::string all;
        for (const auto& e : shown_) all += (all.empty() ? "" : "\n") + e;
        if (more_) all += "\n(" + std::to_string(more_) + " more errors not shown: fix these first)";
        return all;
    }

private:
    std::vector<std::string> shown_;
    std::set<std::string> seen_;
    std::size_t more_ = 0;
};

}  // namespace mrct::plan
