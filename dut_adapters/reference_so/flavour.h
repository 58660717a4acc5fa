// What a library built on the reference endpoint's ABI glue
// (reference_dut.cpp) makes its own: its name, the bugs it can plant and how,
// the create options it takes, and the units it installs. The reference
// library (reference_flavour.cpp) plants the endpoint's bug profiles and
// installs nothing; the RTL DUT (dut_adapters/rtl/shell) plants its RTL
// defines and installs its Verilated units (docs/rtl.md).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "endpoint/endpoint.h"

namespace mrct::so_shell {

struct bug_entry {
    std::string name, clauses, description;
};

struct flavour {
    std::string name;          // mrct_dut_describe's name
    std::string capabilities;  // mrct_dut_describe's capabilities
    std::vector<bug_entry> bugs;
    // Create options besides bug=NAME, with a line of help each.
    std::map<std::string, std::string> options;
    // Plants bug=NAME (known: one of `bugs`) in the instance's config.
    void (*plant)(endpoint::config& cfg, const std::string& bug) = nullptr;
    // At start: what the instance installs on its endpoint, given bug=NAME
    // and the create options.
    void (*attach)(endpoint::endpoint& ep, const std::string& bug, const std::map<std::string, std::string>& options) =
        nullptr;
};

// The library's flavour: one definition per library.
const flavour& this_flavour();

}  // namespace mrct::so_shell
