// Passive conformance (issue 24, docs/emulator.md "Passive check"): the
// assertions that judge a sender or a receiver from its own wire, run on a
// capture of two DUTs talking to each other (through `mrct emulate`, whose
// port-a.pcap and port-b.pcap are each DUT's own wire), instead of on a trace
// the engine recorded as one side of the conversation.
//
// For a DUT at address X, a capture becomes a trace: frames from X are the
// DUT's (from_dut), frames to X are what reached it (to_dut), at the
// capture's times. The passive profile (profile()) lists the checks that need
// nothing but that: no plan step, no posted work, no completion. Each becomes
// one case of the report, citing its clauses; a check whose premise the
// traffic never produced (no loss, no RNR) is inconclusive, never a pass.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "run/results.h"
#include "trace/trace.h"

namespace mrct::check {

// A check of the passive profile: an assertion, its arguments, and which side
// of the DUT it judges.
struct passive_check {
    std::string assertion;
    std::map<std::string, std::string> args;
    std::string role;  // "sender" or "receiver" (the DUT as that)
};
const std::vector<passive_check>& profile();

// One capture to judge, and which DUTs in it: empty = every address that sent
// MetaRoCE frames in it.
struct input {
    std::string capture;
    std::vector<std::string> duts;
    // Frames the capture and the wire disagree on: emulate.json's `lost_in`
    // for the port (frames its DUT sent that the capture buffer lost) and
    // `send_errors` (sends to the DUT that failed; a DPDK port's transmit
    // ring drops them after the capture wrote them), or what the user says
    // of a capture file (--capture-lost). With any, no pass or fail on this
    // capture stands: each becomes inconclusive, saying `lost_why`
    // (run::on_incomplete_record), as in a run (D120).
    std::uint64_t lost = 0;
    std::string lost_why;
};

struct options {
    std::vector<input> inputs;
    // The protocol parameters in force on the DUTs (the `configure` names of
    // docs/agent-protocol.md: rto_min, num_paths, ...); §5's defaults otherwise.
    std::map<std::string, std::string> params;
    // How long a frame the capture shows going to the DUT may still have been
    // on its way (trace::crossing): a capture point next to the DUT, as
    // `mrct emulate`'s port captures are, needs little.
    std::int64_t crossing_ns = 200'000;
    // How long the DUTs' host may have held them at any moment, unmeasured
    // (trace::timing_figures::assumed_hold): software DUTs sharing a host
    // with the emulator. 0 for DUTs that keep their own time (NICs): every
    // timing verdict then stands.
    std::int64_t max_hold_ns = 10'000'000;
};

// The inputs of an emulator's output folder (emulate.json): each port's
// capture with the DUT addresses seen on that port.
core::result<std::vector<input>> inputs_of_emulation(const std::string& folder);

// What one pass over a capture finds: every MetaRoCE source address, in
// order of first appearance, and the MAC addresses each one's frames came
// from (a PAUSE/PFC frame, which has no IP header, is a DUT's when it comes
// from one of them: MR-CC-5).
struct capture_survey {
    std::vector<std::string> addresses;
    std::map<std::string, std::vector<wire::mac_addr>> macs;
};
core::result<capture_survey> survey(const std::string& capture);
// The trace of DUT `dut` (an address, as text) in `capture`; `known`: the
// capture's survey, if made already (else it is made here: one more pass).
core::result<std::shared_ptr<trace::trace>> trace_of(const std::string& capture, const std::string& dut,
                                                     const trace::params& p, std::int64_t crossing_ns,
                                                     std::int64_t max_hold_ns = 0, const capture_survey* known = nullptr);
// Every MetaRoCE source address in a capture, in order of first appearance.
core::result<std::vector<std::string>> addresses_in(const std::string& capture);

// The protocol parameters a `params` map gives (errors name the bad one).
core::result<trace::params> params_of(const std::map<std::string, std::string>& given);

// Judges every input: one case per (DUT, check), in order.
core::result<std::vector<run::case_result>> judge(const options& o);

}  // namespace mrct::check
