// Plan validation beyond shape: every case compiled (run/program.h), each
// error with its file:line:col.
#include "plan/errors.h"
#include "run/program.h"
#include "run/runner.h"

namespace mrct::run {


const std::vector<std::pair<std::string, std::string>>& capabilities() {
    static const std::vector<std::pair<std::string, std::string>> k = {
        {"write", "RDMA WRITE"},
        {"write_imm", "WRITE with immediate data"},
        {"send", "SEND"},
        {"send_imm", "SEND with immediate data"},
        {"ipv4", "MetaRoCE over IPv4"},
        {"fine_timing", "holds timing tolerances below about a millisecond (ACK delay, fast retransmit within "
                        "rto_min/2, RTO within 10% + 5 us, RNR resume within 50 us): the simulated DUT; not a "
                        "userspace stack driven in real time on a shared host"},
        {"virtual_time", "the engine and the DUT share one clock, so a step acts on the DUT's traffic at the exact "
                         "moment the plan gives (the simulated DUT; a DUT library through so:, an RTL DUT in simulation). Cases whose "
                         "scenario rests on that are not scaled for real wires (docs/timing.md, coarse time)"},
        {"raw_frames", "the engine's wire can send any frame (bad lengths, truncation): sim, so:, agent+pcap"},
        {"raw_rx", "the DUT sees frames the kernel's UDP stack would drop (truncated, bad lengths): sim, NICs"},
        {"wire_headers", "the engine sees Ethernet/IP headers as they were on the wire: sim, so:, agent+pcap"},
    };
    return k;
}

core::status validate(const plan::suite& s) {
    plan::error_list errs;
    const compile_error e = [&](const plan::loc& at, const std::string& msg) { errs.add(at.str() + ": " + msg); };
    for (const auto& c : s.cases) (void)compile(c, s.lim.action_bytes, e);
    if (errs.empty()) return core::ok_status();
    return core::error{errs.text()};
}

}  // namespace mrct::run
