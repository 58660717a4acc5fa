// The execution of one test case (engine/run, internal): the class behind
// run_case(). case_runner.cpp sets a case up, runs it and judges it;
// case_steps.cpp moves frames (recording, step filters, triggers) and carries
// out plan actions.
#pragma once

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>
#include <unordered_map>
#include <memory>
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/units.h"
#include "fabric/fabric.h"
#include "run/actions.h"
#include "run/keys.h"
#include "run/program.h"
#include "run/runner.h"
#include "sim/drivers.h"
#include "sim/host_probe.h"
#include "assertions/ctrl_requests.h"

namespace mrct::run::detail {

using core::nanos;
using namespace std::chrono_literals;

// Real time: the shortest cap on a case's run (limits.duration below it is raised).
inline constexpr core::nanos k_realtime_min_duration{2'000'000'000};
// Real time: how long an ACK the engine sent may still be on its way to the
// DUT when the DUT sends a resend (trace::crossing, docs/adapters.md). Crossings
// seen on the test veths were 0-45 us apart; 200 us stays below a retransmission
// timer (rto_min 100 us doubles before a second expiry, and a first RTO is
// rto_initial, 1 ms), so a timer's resend of an acknowledged PPSN is still caught.
inline constexpr core::nanos k_realtime_crossing{200'000};
// Real time: how many times a case whose connection did not open is set up
// again with a fresh DUT before it ends as error (a busy host, not a clause).
inline constexpr unsigned k_setup_attempts = 3;


// Message bytes: xorshift64, eight bytes (little-endian) per step. In real
// time a case's posts are made while the DUT is already sending, and one step
// per byte took 3 ms for a 1 MiB message, during which the engine read nothing
// from the wire and the DUT's retransmission timers fired.
inline core::byte_buffer pattern(std::size_t n, std::uint64_t seed) {
    core::byte_buffer b(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    auto next = [&x] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        std::uint8_t w[8];
        for (int k = 0; k < 8; ++k) w[k] = static_cast<std::uint8_t>(x >> (8 * k));
        return std::to_array(w);
    };
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) std::memcpy(b.data() + i, next().data(), 8);
    if (i < n) std::memcpy(b.data() + i, next().data(), n - i);
    return b;
}

class case_exec {
public:
    // `p`: `c` compiled (run/program.h), without errors.
    case_exec(const plan::test_case& c, program p, std::unique_ptr<dut::dut> d, std::uint64_t seed)
        : c_(c), p_(std::move(p)), dut_(std::move(d)), seed_(seed), tr_(std::make_shared<trace::trace>()), filters_(s_) {}

    case_result run();
    // The case runs slowed down k times (run/time_scale.h): a DUT that refuses
    // the timer settings that takes skips it instead of erring.
    void set_time_scale(unsigned k) { time_scale_ = k; }

private:
    core::status setup();
    // Records a frame and passes it on. `age`: how long ago it reached the
    // engine's host (real time: the kernel's stamp); it is recorded then, but
    // never before the last recorded frame, so the trace stays in time order.
    void on_frame(trace::dir d, core::bytes_view fr, bool injected, nanos age = nanos{0});
    fabric::fabric* fabric_to(const trace::record& r);
    void to_dut(core::bytes_view fr, fabric::fabric* via);
    void forward(fabric::direction d, const filter_set::fate& fate, core::bytes_view bytes, fabric::fabric* fab);
    void pin_dut_port(const trace::record& r);
    void check_triggers(const trace::record& r);
    void run_step(int i);
    core::status post(const post_op& p);
    // Real time: the bytes of every message the setup posts, made before its
    // first post (by work request number). A later setup action's megabytes
    // made while the DUT already sends from the first would stall the engine:
    // 15 MiB took 18 ms, inside RNR-007's window (scaled).
    std::unordered_map<std::uint64_t, core::byte_buffer> premade_;
    void premake_setup_payloads();
    // Work request `wr`'s message bytes (a function of the seed and `wr`):
    // made now, or taken premade.
    core::byte_buffer make_payload(std::uint64_t wr, std::size_t size) const { return pattern(size, core::rng::sub_seed(seed_, "payload", wr)); }
    core::byte_buffer payload(std::uint64_t wr, std::size_t size);
    core::status act(const compiled_action& a, int step);
    static std::string describe(const std::map<std::string, std::string>& f);
    core::status execute();
    void drain();
    static trace::completion convert(const endpoint::completion& wc);
    bool all_done() const;
    void collect();
    void note_timing();
    void evaluate(case_result& r);
    // The connection did not open while `handshake:` filters were in force:
    // the DUT did not recover its handshake, a failure of the case's clauses.
    void fail_handshake(case_result& r, const std::string& why);
    struct handshake_evidence {
        std::string text;  // "from the DUT: 7 CONNECT; to the DUT: 3 ACCEPT (the first answer 6.1 ms after ...)"
        std::vector<std::size_t> frames;
        unsigned dropped = 0;
    };
    handshake_evidence handshake_seen() const;
    bool setup_failed_ = false;

public:
    // The connection did not open (set-up, not a clause): run_case may try again.
    bool setup_failed() const { return setup_failed_; }

private:
    // The scheduler outlives everything that holds timers on it (DUT, peer, fabric).
    sim::scheduler s_;
    sim::virtual_driver drv_{s_};
    std::unique_ptr<sim::realtime_driver> rt_;  // real-time DUTs
    std::unique_ptr<sim::host_probe> probe_;    // real time, a DUT on this host
    // Runs the case's time up to `t`: virtual time jumps, real time waits.
    void advance(nanos t) {
        if (rt_) rt_->run_until(t);
        else drv_.run_until(t);
    }
    endpoint::address dut_addr_, peer_addr_;
    std::size_t max_frames_ = 0;  // limits.max_frames (run/limits.h), set by setup()
    int rpc_depth_ = 0;         // > 0 while an agent call waits (real time)
    bool in_setup_ = false;     // real time: the setup is being posted
    std::vector<int> deferred_;  // steps that became due meanwhile
    void run_deferred_steps();
    // Real time: the engine's own lateness (trace::timing_figures).
    std::map<int, nanos> step_due_;  // when each step should run: its time, or its trigger frame's
    nanos step_late_max_{0}, rx_delay_max_{0};
    std::vector<trace::timing_figures::late_span> late_;  // steps and DUT frames handled late (above the floor)
    void note_late(nanos due, nanos late) {
        if (late > trace::timing_figures::k_late_floor && late_.size() < (1u << 18)) late_.push_back({due, late});
    }
    // The DUT's CTRL requests (§4): a case is not over while one may still be
    // repeated, that is, unanswered, under the retry limit, and its last copy
    // less than rto_max ago (the longest repeat interval §4 allows).
    assertions::ctrl_book ctrl_;
    std::size_t ctrl_fed_ = 0;  // trace records the book has taken
    bool ctrl_pending();
    const plan::test_case& c_;
    const program p_;
    std::unique_ptr<dut::dut> dut_;
    std::uint64_t seed_;
    std::shared_ptr<trace::trace> tr_;
    filter_set filters_;
    std::unique_ptr<fabric::fabric> fab_;
    std::unique_ptr<endpoint::endpoint> peer_;
    struct extra_peer {
        endpoint::address addr;
        std::unique_ptr<fabric::fabric> fab;
        std::unique_ptr<endpoint::endpoint> ep;
        std::uint32_t conn = 0;
    };
    std::vector<extra_peer> extra_;  // peers 1..N-1 (topology.peers)
    endpoint::config pcfg_, dut_cfg_;
    std::uint32_t dut_conn_ = 0, peer_conn_ = 0, dut_rkey_ = 0, peer_rkey_ = 0;
    std::size_t mem_size_ = 0;
    std::uint64_t dut_off_ = 0, peer_off_ = 0, next_wr_ = 1;
    nanos t0_{0};
    bool armed_ = false;
    std::vector<bool> fired_;
    std::vector<unsigned> trigger_count_;
    std::map<std::size_t, std::size_t> trigger_rec_;  // step -> the trace index of the frame that fired it
    std::map<unsigned, std::uint16_t> dut_pinned_;
    std::map<std::pair<bool, std::uint16_t>, std::vector<std::pair<std::uint64_t, std::uint32_t>>> recvs_;  // (on_dut, tag)
    std::map<std::pair<bool, std::uint16_t>, std::vector<std::pair<std::uint64_t, core::byte_buffer>>> sends_;  // (to dut, tag)
    std::vector<trace::memory_check> expected_;
    std::string error_;
    bool handshake_lost_ = false;  // set by setup(): see fail_handshake
    unsigned time_scale_ = 1;
    bool config_refused_ = false;  // set by setup(): the DUT refused a scaled case's settings
};

}  // namespace mrct::run::detail
