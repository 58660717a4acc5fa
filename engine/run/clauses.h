// Clause IDs of the spec model, with level and text.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mrct::run {

struct clause {
    std::string id, level, text;
};
const std::vector<clause>& clauses();
const clause* find_clause(std::string_view id);

}  // namespace mrct::run
