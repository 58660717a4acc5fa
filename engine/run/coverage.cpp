// Clause coverage of a plan: every MUST cited by at least two cases, one of them
// a fault or negative case; every SHOULD by one.
#include <set>

#include "run/clauses.h"
#include "run/runner.h"

namespace mrct::run {

bool is_fault_case(const plan::test_case& c) {
    // Impairments on the fabric, or the peer departing from the reference.
    if (!c.impair.empty()) return true;
    static const std::set<std::string> k_faults = {"drop", "duplicate", "delay", "mark_ce", "inject",
                                                   "fail_path", "restore_path", "skew", "move_port"};
    auto any_fault = [&](const std::vector<plan::action>& v) {
        for (const auto& a : v)
            if (k_faults.count(a.name)) return true;
        return false;
    };
    if (any_fault(c.handshake) || any_fault(c.setup)) return true;
    for (const auto& st : c.steps)
        if (any_fault(st.actions)) return true;
    // Negative: a SEND at time 0 to a tag with no receive posted at time 0 (a
    // rejection, RNR).
    std::set<std::pair<std::string, std::string>> recvs;  // (side, tag)
    auto side_of = [&](const plan::action& a, bool sender) {
        auto it = a.a.find("side");
        if (it != a.a.end()) return it->second.text;
        return sender == (c.role != "sender") ? std::string("dut") : std::string("peer");
    };
    auto tag_of = [](const plan::action& a) {
        auto it = a.a.find("tag");
        return it == a.a.end() ? std::string("1") : it->second.text;
    };
    for (const auto& a : c.setup)
        if (a.name == "post_recv") recvs.insert({side_of(a, false), tag_of(a)});
    for (const auto& a : c.setup)
        if (a.name == "post_send") {
            const std::string receiver = side_of(a, true) == "dut" ? "peer" : "dut";
            if (!recvs.count({receiver, tag_of(a)})) return true;
        }
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
