// Splitting the short lists of options and names that specs and tables use.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mrct::core {

// The non-empty pieces of `s` between the characters in `seps`:
// split("bug=x,,mode=y", ",") -> {"bug=x", "mode=y"};
// split("MR-RNR-2, MR-RNR-3", ", ") -> {"MR-RNR-2", "MR-RNR-3"}.
inline std::vector<std::string> split(std::string_view s, std::string_view seps) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < s.size()) {
        auto end = s.find_first_of(seps, pos);
        if (end == std::string_view::npos) end = s.size();
        if (end > pos) out.emplace_back(s.substr(pos, end - pos));
        pos = end + 1;
    }
    return out;
}

}  // namespace mrct::core
