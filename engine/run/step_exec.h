// The step executor of one case (engine/run, internal): the program's setup
// actions, its timed steps and its triggered steps (a trigger fires on the
// nth matching record of the wire tap), each operation carried out: posts
// on either side with their message bytes, path failures, filters, port
// moves, injections. It also keeps what the posts expect to find in memory.
//
// Real-time re-entrancy: in real time an agent call waits for its answer
// while the driver keeps the wire moving, so a step may fall due in the
// middle of a call. Steps that need the agent then wait until the call
// returns, and so does everything after them (the agent takes one call at a
// time, and steps keep their order); steps that act only on the engine's
// side of the wire (an injection, a filter, a peer-side post) run at once,
// as in the simulation. While the setup is being posted nothing runs.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "run/program.h"
#include "run/wire_tap.h"
#include "sim/drivers.h"

namespace mrct::run::detail {

// Message bytes: xorshift64, eight bytes (little-endian) per step. In real
// time a case's posts are made while the DUT is already sending, and one step
// per byte took 3 ms for a 1 MiB message, during which the engine read nothing
// from the wire and the DUT's retransmission timers fired.
core::byte_buffer pattern(std::size_t n, std::uint64_t seed);

class step_exec {
public:
    step_exec(const program& p, sim::scheduler& s, trace::trace& tr, dut::dut& d, case_wiring& w, wire_tap& tap,
              lateness& late, first_error& err, std::uint64_t seed)
        : p_(p), s_(s), tr_(tr), dut_(d), w_(w), tap_(tap), late_(late), err_(err), seed_(seed) {}

    // Real time: the driver whose slice a deferred step ends early.
    void set_realtime(sim::realtime_driver* rt) { rt_ = rt; }
    // An agent call begins / has returned (real time).
    void agent_call_begins() { ++rpc_depth_; }
    void agent_call_ends() { --rpc_depth_; }

    // Triggers see every record from now on, the setup's own frames included.
    void arm();
    // A record of the wire tap: fires the steps it triggers.
    void on_record(const trace::record& r);
    // Carries out the setup's actions (an error names the action's place).
    core::status run_setup();
    // Schedules the timed steps from `t0`; the time of the last.
    core::nanos schedule_timed(core::nanos t0);
    // Real time: steps that fell due during an agent call, in order.
    void run_deferred();

    // A step whose trigger fired and that has not run yet (`after:`, or
    // deferred in real time): the case does not end before it runs.
    bool pending() const;
    // Steps that did not run by the end of the case (a trigger that never
    // fired, a time after the end), each described: "step 0 (on the 1st
    // frame from the DUT matching opcode=DATA, path=1, retx=true)". D101.
    std::vector<std::string> steps_not_run() const;

    // The bytes the posts expect in memory: WRITEs at their offsets, and
    // SENDs matched to the receives they consume (in post order per tag).
    std::vector<trace::memory_check> memory_expectations();

private:
    void run_step(int i);
    core::status act(const compiled_action& a, int step);
    core::status post(const post_op& p);
    // Real time: the bytes of every message the setup posts, made before its
    // first post (by work request number). A later setup action's megabytes
    // made while the DUT already sends from the first would stall the engine:
    // 15 MiB took 18 ms, inside RNR-007's window (scaled).
    void premake_setup_payloads();
    // Work request `wr`'s message bytes (a function of the seed and `wr`):
    // made now, or taken premade.
    core::byte_buffer make_payload(std::uint64_t wr, std::size_t size) const;
    core::byte_buffer payload(std::uint64_t wr, std::size_t size);

    const program& p_;
    sim::scheduler& s_;
    trace::trace& tr_;
    dut::dut& dut_;
    case_wiring& w_;
    wire_tap& tap_;
    lateness& late_;
    first_error& err_;
    std::uint64_t seed_;
    sim::realtime_driver* rt_ = nullptr;

    // Triggers and timing.
    bool armed_ = false;
    std::vector<bool> fired_;
    std::vector<unsigned> trigger_count_;
    std::map<std::size_t, std::size_t> trigger_rec_;  // step -> the trace index of the frame that fired it
    std::map<int, core::nanos> step_due_;             // when each step should run: its time, or its trigger frame's
    // Real-time re-entrancy.
    int rpc_depth_ = 0;          // > 0 while an agent call waits
    bool in_setup_ = false;      // the setup is being posted
    std::vector<int> deferred_;  // steps that became due meanwhile
    // Posts.
    std::unordered_map<std::uint64_t, core::byte_buffer> premade_;
    std::uint64_t dut_off_ = 0, peer_off_ = 0, next_wr_ = 1;
    std::map<std::pair<bool, std::uint16_t>, std::vector<std::pair<std::uint64_t, std::uint32_t>>> recvs_;  // (on_dut, tag)
    std::map<std::pair<bool, std::uint16_t>, std::vector<std::pair<std::uint64_t, std::shared_ptr<const core::byte_buffer>>>> sends_;  // (to dut, tag)
    std::vector<trace::memory_check> expected_;
};

}  // namespace mrct::run::detail
