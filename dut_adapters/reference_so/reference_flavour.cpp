// The reference library's flavour (flavour.h): the endpoint's own units and
// its bug profiles, planted through its config.
#include "flavour.h"

namespace mrct::so_shell {

const flavour& this_flavour() {
    static const flavour f = [] {
        flavour r;
        r.name = "mrct-reference (so)";
        r.capabilities = "write,write_imm,send,send_imm,ipv4,fine_timing,virtual_time,raw_frames,raw_rx,wire_headers";
        for (const auto& b : endpoint::bug_profiles())
            r.bugs.push_back({std::string(b.name), std::string(b.clauses), std::string(b.description)});
        r.plant = [](endpoint::config& cfg, const std::string& bug) { (void)endpoint::config_set(cfg, "bug", bug); };
        return r;
    }();
    return f;
}

}  // namespace mrct::so_shell
