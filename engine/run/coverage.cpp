// Clause coverage of a plan: every MUST cited by at least two cases, one of them
// a fault or negative case; every SHOULD by one.
#include <algorithm>
#include <limits>
#include <set>

#include "run/clauses.h"
#include "run/program.h"
#include "run/runner.h"

namespace mrct::run {

bool is_fault_case(const plan::test_case& c) {
    // Read from the compiled case (run/program.h): sides and tags with the
    // runner's own defaults. A case that does not compile is no fault case
    // (validate reports it).
    bool bad = false;
    const auto p = compile(c, std::numeric_limits<std::uint64_t>::max(), [&](const plan::loc&, const std::string&) { bad = true; });
    if (bad) return false;
    // Impairments on the fabric, or the peer departing from the reference.
    if (!p.impair.empty()) return true;
    auto fault = [](const compiled_action& a) {
        return !std::holds_alternative<post_op>(a.o) && !std::holds_alternative<memory_op>(a.o) &&
               !std::holds_alternative<close_op>(a.o) && !std::holds_alternative<lift_op>(a.o);
    };
    auto any_fault = [&](const std::vector<compiled_action>& v) { return std::any_of(v.begin(), v.end(), fault); };
    if (any_fault(p.handshake) || any_fault(p.setup)) return true;
    for (const auto& st : p.steps)
        if (any_fault(st.actions)) return true;
    // Negative: a SEND at time 0 to a tag with no receive posted at time 0 (a
    // rejection, RNR).
    std::set<std::pair<bool, std::uint16_t>> recvs;  // (on the DUT, tag)
    for (const auto& a : p.setup)
        if (const auto* x = std::get_if<post_op>(&a.o); x && x->k == post_op::kind::recv) recvs.insert({x->on_dut, x->tag});
    for (const auto& a : p.setup)
        if (const auto* x = std::get_if<post_op>(&a.o); x && x->k == post_op::kind::send && !recvs.count({!x->on_dut, x->tag}))
            return true;
    return false;
}

coverage check_coverage(const plan::suite& s) {
    std::map<std::string, int> cited;
    std::set<std::string> with_fault;
    for (const auto& c : s.cases) {
        const bool fault = is_fault_case(c);
        for (const auto& cl : c.clauses) {
            cited[cl]++;
            if (fault) with_fault.insert(cl);
        }
    }
    coverage out;
    for (const auto& c : clauses()) {
        const bool must = c.level == "MUST";
        if (cited[c.id] < (must ? 2 : 1)) out.thin.push_back(c.id + " (" + std::to_string(cited[c.id]) + ")");
        if (must && !with_fault.count(c.id)) out.no_fault.push_back(c.id);
    }
    return out;
}

}  // namespace mrct::run
