// The parts of a case's execution, each alone (engine/run/case_wiring.h,
// wire_tap.h, step_exec.h): the topology a program sets up, the tap's
// recording and filtering, and the step executor's triggers and timed steps.
// Whole cases through all three: runner_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>


#include "run/case_exec.h"
#include "run/mini_plan.h"
#include "wire/build.h"
#include "wire/samples.h"

using namespace mrct;
using namespace mrct::run::detail;
using core::nanos;

namespace {

run::program compiled(const std::string& text) {
    auto s = test::load_plan_text("case_parts_files", "p.yaml", text);
    REQUIRE(s.ok());
    REQUIRE(s->cases.size() == 1);
    std::vector<std::string> errors;
    auto p = run::compile(s->cases[0], 1ull << 30, [&](const plan::loc& at, const std::string& m) { errors.push_back(at.str() + ": " + m); });
    for (const auto& e : errors) INFO(e);
    REQUIRE(errors.empty());
    return p;
}

std::unique_ptr<dut::dut> sim_dut() {
    auto make = run::parse_dut("sim");
    REQUIRE(make.ok());
    auto d = (*make)();
    REQUIRE(d.ok());
    return std::move(*d);
}

core::byte_buffer ack(std::uint32_t cum) { return wire::build(wire::ack_spec(wire::ackh{}, cum)); }
core::byte_buffer write_on(unsigned path, std::uint16_t sport) {
    wire::mrh m{};
    m.path_id = static_cast<std::uint8_t>(path);
    auto spec = wire::data_spec(wire::opcode::write, m, core::byte_buffer(64, 1));
    spec.udp.sport = sport;
    return wire::build(spec);
}

// The parts as case_exec holds them, set up to the peers (no connection:
// frames that reach the DUT or a peer meet an endpoint that has none, and
// are ignored).
struct parts {
    run::program p;
    sim::scheduler s;
    std::unique_ptr<dut::dut> d = sim_dut();
    trace::trace tr;
    lateness late;
    first_error err;
    case_wiring w{p, s, *d, 7};
    wire_tap tap{s, tr, *d, w, late, err};
    step_exec steps{p, s, tr, *d, w, tap, late, err, 7};
    explicit parts(const std::string& plan) : p(compiled(plan)) {
        bool refused = false;
        REQUIRE(w.configure(refused).ok());
        REQUIRE(w.make_fabric([this](core::bytes_view fr) { tap.arrive(fr); }).ok());
        tap.set_max_frames(p.limits.max_frames);
        REQUIRE(d->start(s, w.dut_addr, 1, [this](core::bytes_view fr, nanos age) { tap.from_dut(fr, age); }).ok());
        REQUIRE(w.make_peers([this](core::bytes_view fr, fabric::fabric* via) { tap.from_peer(fr, via); },
                             [this](core::bytes_view fr) { tap.arrive(fr); })
                    .ok());
    }
};

const char* k_three_peers = R"(cases:
  - id: A
    clauses: [MR-PATH-1]
    topology: {paths: 2, peers: 3}
    role: sender
    dut: {num_paths: 4}
    expect: [wire_format: {}]
)";

}  // namespace

TEST_CASE("case_wiring: settings from the program, a fabric as wide as the larger side, a fabric per peer") {
    parts x(k_three_peers);
    CHECK(x.w.dut_cfg.num_paths == 4);
    CHECK(x.w.peer_cfg.num_paths == 2);
    CHECK(x.w.fab->size() == 4);
    REQUIRE(x.w.extra.size() == 2);
    CHECK(x.w.extra[0].addr.ip != x.w.extra[1].addr.ip);
    CHECK(x.w.extra[0].addr.ip != x.w.peer_addr.ip);
    // A DUT frame goes over the fabric towards the peer it is addressed to.
    wire::frame_spec to_extra = wire::ack_spec(wire::ackh{}, 1);
    to_extra.ipv4.dst = x.w.extra[1].addr.ip;
    auto& rec = x.tr.add(nanos{0}, trace::dir::from_dut, wire::build(to_extra));
    CHECK(x.w.fabric_to(rec) == x.w.extra[1].fab.get());
    auto& other = x.tr.add(nanos{0}, trace::dir::from_dut, ack(1));
    CHECK(x.w.fabric_to(other) == x.w.fab.get());
}

TEST_CASE("wire_tap: a DUT frame is recorded, then filtered; triggers see it with its fate; a flood is the case's error") {
    parts x(k_three_peers);
    std::vector<std::size_t> seen;
    std::vector<bool> seen_dropped;
    x.tap.on_record([&](const trace::record& r) {
        seen.push_back(r.index);
        seen_dropped.push_back(r.dropped);  // after the filters (D131): a step set here acts from the next frame
    });
    run::filter_op drop{run::filter_op::kind::drop};
    drop.match = {{"opcode", "ACK"}};
    x.tap.filters().add(drop, -2, {});
    x.tap.from_dut(ack(1), nanos{0});
    x.tap.from_dut(ack(2), nanos{0});  // the filter's count was 1: passed on
    REQUIRE(x.tr.frames.size() == 2);
    CHECK(x.tr.frames[0].dropped);
    CHECK(x.tr.frames[0].action == "dropped by handshake");
    CHECK_FALSE(x.tr.frames[1].dropped);
    CHECK(seen == std::vector<std::size_t>{0, 1});
    CHECK(seen_dropped == std::vector<bool>{true, false});  // a dropped frame still triggers
    // Real time: a frame stamped 3 ms ago is late by that much.
    x.tap.from_dut(ack(3), nanos{3'000'000});
    CHECK(x.late.rx_delay_max == nanos{3'000'000});
    CHECK_FALSE(x.late.spans.empty());
    // The DUT's data on PathID 2 pins its port to fabric path 2.
    x.tap.from_dut(write_on(2, 0xC123), nanos{0});
    CHECK(x.w.fab->path_of(0xC123) == 2);
    CHECK(x.err.what.empty());
    x.tap.set_max_frames(x.tr.frames.size());
    x.tap.from_dut(ack(4), nanos{0});
    CHECK_THAT(x.err.what, Catch::Contains("the DUT flooded the wire (more than 4 frames recorded)"));
    CHECK(x.tr.frames.size() == 4);  // not recorded
    // An injected frame goes straight to the DUT's wire, marked.
    x.tap.inject(ack(5), 1, "injected by step 1 (template=ack)");
    CHECK(x.tr.frames.back().injected);
    CHECK(x.tr.frames.back().d == trace::dir::to_dut);
    CHECK(x.tr.frames.back().step == 1);
}

TEST_CASE("lateness: prepare makes room up front, so spans noted under a backlog move nothing; the cap holds") {
    run::detail::lateness late;
    late.prepare(1000);
    REQUIRE(late.spans.capacity() >= 1000);
    const auto* at = late.spans.data();
    for (int i = 0; i < 1000; ++i) late.note(nanos{i * 1000}, nanos{50'000});  // each above the 20 us floor
    late.note(nanos{0}, nanos{20'000});                                        // at the floor: not a span
    CHECK(late.spans.size() == 1000);
    CHECK(late.spans.data() == at);  // never grown: no move, no new pages
    late.prepare(std::size_t{1} << 30);
    CHECK(late.spans.capacity() >= run::detail::lateness::k_max_spans);
    CHECK(late.spans.capacity() < run::detail::lateness::k_max_spans + 1000);  // capped
    late.prepare(10);  // already room: nothing
    CHECK(late.spans.size() == 1000);
}

TEST_CASE("step_exec: a trigger fires on its nth matching record, a timed step at its time, each noting when it ran") {
    parts x(R"(cases:
  - id: A
    clauses: [MR-PATH-1]
    steps:
      - on: {dir: from_dut, match: {opcode: ACK}, nth: 2}
        do: [drop: {dir: to_dut, match: {opcode: ACK}}]
      - at: 1ms
        do: [mark_ce: {}]
    expect: [wire_format: {}]
)");
    sim::virtual_driver drv(x.s);
    x.tap.on_record([&](const trace::record& r) { x.steps.on_record(r); });
    x.steps.arm();
    CHECK(x.steps.schedule_timed(nanos{0}) == nanos{1'000'000});
    x.tr.add(nanos{0}, trace::dir::to_dut, ack(1));  // wrong direction: not counted
    x.steps.on_record(x.tr.frames.back());
    x.tr.add(nanos{0}, trace::dir::from_dut, ack(1));
    x.steps.on_record(x.tr.frames.back());
    drv.run_until(nanos{100});
    CHECK_FALSE(x.tr.step_times.count(0));  // one of two
    x.tr.add(nanos{0}, trace::dir::from_dut, ack(2));
    x.steps.on_record(x.tr.frames.back());
    drv.run_until(nanos{200});
    REQUIRE(x.tr.step_times.count(0));
    // Step 0's drop acts on the next frame towards the DUT.
    x.tap.from_peer(ack(9), x.w.fab.get());
    CHECK(x.tr.frames.back().dropped);
    CHECK(x.tr.frames.back().action == "dropped by step 0");
    drv.run_until(nanos{2'000'000});
    REQUIRE(x.tr.step_times.count(1));
    CHECK(x.tr.step_times.at(1) == nanos{1'000'000});
    CHECK(x.err.what.empty());
}

// RTO-004 on a real wire: the peer sent two ACKs on path 1 in one turn; the
// step the first one triggered was to withhold the next, but ran after the
// turn, when both had passed. A step that only sets filters, with no
// `after`, takes effect at once (D131); any other waits for the scheduler.
TEST_CASE("step_exec: a filters-only step takes effect before the next frame of the same turn") {
    parts x(R"(cases:
  - id: A
    clauses: [MR-PATH-1]
    topology: {delay: 0us}
    steps:
      - on: {dir: to_dut, match: {opcode: ACK}, nth: 1}
        do: [drop: {dir: to_dut, match: {opcode: ACK}, count: 0}]
      - on: {dir: to_dut, match: {opcode: ACK}, nth: 1, after: 0us}
        do: [mark_ce: {}]
      - on: {dir: from_dut, match: {opcode: ACK}, nth: 1}
        do: [drop: {match: {opcode: ACK}}]
    expect: [wire_format: {}]
)");
    sim::virtual_driver drv(x.s);
    x.tap.on_record([&](const trace::record& r) { x.steps.on_record(r); });
    x.steps.arm();
    // Two ACKs from the peer in one turn: nothing runs the scheduler between them.
    x.tap.from_peer(ack(1), x.w.fab.get());
    x.tap.from_peer(ack(2), x.w.fab.get());
    drv.run_until(nanos{0});
    std::vector<const trace::record*> to_dut;
    for (const auto& r : x.tr.frames)
        if (r.d == trace::dir::to_dut) to_dut.push_back(&r);
    REQUIRE(to_dut.size() == 2);
    CHECK_FALSE(to_dut[0]->dropped);  // the trigger itself passes
    CHECK(to_dut[1]->dropped);        // the next, in the same turn, is withheld
    CHECK(to_dut[1]->action == "dropped by step 0");
    REQUIRE(x.tr.step_times.count(0));
    // A DUT frame that triggers a drop is not dropped by it; the next one is.
    x.tap.from_dut(ack(3), nanos{0});
    x.tap.from_dut(ack(4), nanos{0});
    CHECK_FALSE(x.tr.frames[x.tr.frames.size() - 2].dropped);
    CHECK(x.tr.frames.back().dropped);
    CHECK(x.tr.frames.back().action == "dropped by step 2");
    CHECK(x.err.what.empty());
}

// RNR-003 with mrct-refnic at 5 % of a CPU (D111): the DUT's SEND came after
// the receive was posted, so no RNR was sent; rnr_pause says the premise did
// not arise, and the count of RNR resends falls short for the same reason.
TEST_CASE("counts_need_premise: a count falling short is inconclusive only where a check found the premise missing") {
    auto make = [](bool missing) {
        std::vector<run::assertion_result> a(4);
        a[0].name = "rnr_pause";
        a[0].o = missing ? assertions::premise_not_met("the DUT received no RNR") : assertions::pass("paused");
        a[1].name = "frame_count";
        a[1].o = assertions::fail("0 from_dut frames with opcode=SEND", ">= 2", "0");
        a[1].o.count_short = true;  // as frame_count sets it
        a[2].name = "frame_count";
        a[2].o = assertions::fail("9 from_dut frames with opcode=NAK", "<= 0", "9");  // at_most: not a count of the scenario
        a[3].name = "all_complete";
        a[3].o = assertions::fail("dut send wr_id 1 never completed", "success", "none");
        return a;
    };
    auto with = make(true);
    run::detail::counts_need_premise(with);
    CHECK(with[1].o.v == verdict::inconclusive);
    CHECK_THAT(with[1].o.message, Catch::StartsWith("the case's premise did not arise (rnr_pause: the case's premise did not "
                                                    "arise: the DUT received no RNR)"));
    CHECK_THAT(with[1].o.message, Catch::EndsWith("it would have said fail: 0 from_dut frames with opcode=SEND"));
    CHECK(with[2].o.v == verdict::fail);
    CHECK(with[3].o.v == verdict::fail);
    auto without = make(false);
    run::detail::counts_need_premise(without);
    CHECK(without[1].o.v == verdict::fail);
}

// STR-050 with the engine at 5 % of a CPU (D136): the engine, held 92 ms at a
// time, sent no ACKs; the DUT's retries ran out, its connection went into
// error, and its agent refused the setup's next post_send (code `failed`:
// dut::refused_call, tests/agent/client_test.cpp). A refusal after holds as
// long as the DUT's retries last at the least (data: 0.1 + 0.2 + ... + 3.2 =
// 6.3 ms at the defaults; CTRL: 6 x 1 ms = 6 ms; the shorter counts) is
// inconclusive; after shorter holds, or in virtual time, the error stands.
TEST_CASE("refusal_held: the DUT's agent refusing after holds as long as its retries last") {
    using namespace std::chrono_literals;
    trace::timing_figures tm;
    tm.realtime = true;
    trace::params dut;
    CHECK(dut.data_retries_span() == 6300us);
    CHECK(dut.ctrl_retries_span() == 6ms);
    tm.late = {{4ms, 5ms}};
    CHECK_FALSE(refusal_held(tm, 0ms, 100ms, dut));
    tm.late = {{4ms, 5ms}, {20ms, 1ms}};  // two longest: 6 ms
    auto held = refusal_held(tm, 0ms, 100ms, dut);
    REQUIRE(held);
    CHECK(*held == "the engine, the DUT or their host was held 6.000 ms before it (two longest holds), as long as the DUT's "
                   "retries last at the least (6.000 ms): its connection may have ended as the retry limit says");
    CHECK_FALSE(refusal_held(tm, 30ms, 100ms, dut));  // the holds came before the connection
    tm.realtime = false;
    CHECK_FALSE(refusal_held(tm, 0ms, 100ms, dut));
}

// CONN-007 with the engine at 5 % of a CPU (D139): the handshake drops the
// first ACCEPT; the DUT's 7 CONNECTs went out 1 ms apart from 0.57 ms, the
// engine was held 91 ms from 0.44 ms and answered all 7 at once after the DUT
// had given up. The handshake's fail is then inconclusive; held less than a
// CONNECT's retries last, it stands.
TEST_CASE("doubt_handshake: a handshake that failed while a side was held through the CONNECTs' retries") {
    using namespace std::chrono_literals;
    trace::timing_figures tm;
    tm.realtime = true;
    trace::params dut, peer;
    auto judged = [&](std::vector<trace::timing_figures::late_span> late) {
        tm.late = std::move(late);
        run::case_result r;
        r.v = verdict::fail;
        run::assertion_result ar;
        ar.name = "handshake";
        ar.o.v = verdict::fail;
        ar.o.message = "not established";
        if (auto held = setup_held(tm, 300us, 2092ms, dut, peer)) doubt_handshake(ar, r, *held);
        return std::pair{r.v, ar.o.message};
    };
    const auto [v, message] = judged({{440us, 91635us}});
    CHECK(v == verdict::inconclusive);
    CHECK(message == "the engine, the DUT or their host was held 91.635 ms while the CONNECTs went out (two longest "
                     "holds), as long as a CONNECT's retries last at the least (6.000 ms); this check needs the CONNECTs "
                     "answered while their sender still repeats them; it would have said fail: not established");
    CHECK(judged({{440us, 3ms}}).first == verdict::fail);     // shorter than the retries
    CHECK(judged({{500ms, 95ms}}).first == verdict::fail);    // long after the CONNECTs
    tm.realtime = false;
    CHECK(judged({{440us, 91635us}}).first == verdict::fail);  // virtual time: nothing is held
}

// D137: a turn of the engine's events stamps every frame at its start and
// sends them at its end; the turn is one of the engine's late spans, so a
// frame stamped in it may have reached the DUT as late as the turn's end
// (held_at). SACK-001 with the engine at 5 % of a CPU: a burst of ACKs left
// about 250 us after its stamp, and no_go_back_n failed the reference.
TEST_CASE("engine_spans: the driver's long turns are spans the engine ran behind") {
    using namespace std::chrono_literals;
    sim::scheduler s;
    sim::realtime_driver rt(s);
    rt.set_turn_end([] {});  // as case_exec's: the wire's flush
    nanos stamp{-1};
    s.at(2ms, [&] {
        stamp = s.now();
        const auto until = std::chrono::steady_clock::now() + 400us;  // building a burst of frames
        while (std::chrono::steady_clock::now() < until) {
        }
    });
    rt.run_for(6ms);
    REQUIRE(stamp >= 2ms);
    lateness late;
    late.note(1ms, 30us);
    trace::timing_figures tm;
    tm.late = engine_spans(late, rt);
    std::sort(tm.late.begin(), tm.late.end(), [](const auto& a, const auto& b) { return a.due < b.due; });
    // The tap's span, the turn's, and the event's own lateness if it ran
    // more than 20 us late (a span that ends at its stamp).
    REQUIRE(tm.late.size() >= 2);
    CHECK(tm.late[0].due == 1ms);
    CHECK(tm.held_at(stamp) >= 400us);  // a frame stamped in the turn may have left 400 us later
}

// GR-052 with mrct-refnic at 5 % of a CPU (D113): its peers' CONNECTs (7 x
// 1 ms) ran out while the DUT was held 95 ms at a time. A connection that did
// not open while held as long as a CONNECT's retries last is inconclusive
// after the last attempt; held less, or any attempt not held, an error.
TEST_CASE("setup_held and settle_setup: an unopened connection is inconclusive only where every attempt was held through its retries") {
    using namespace std::chrono_literals;
    trace::timing_figures tm;
    tm.realtime = true;
    trace::params dut, peer;  // rto_initial 1 ms, retry_limit 7: 6 ms
    peer.rto_initial = 2ms;   // the longer side's span counts: 12 ms
    tm.late = {{10ms, 11ms}};
    CHECK_FALSE(setup_held(tm, 0ms, 2s, dut, peer));
    tm.late = {{10ms, 11ms}, {22ms, 1ms}};  // two longest: 12 ms
    auto held = setup_held(tm, 0ms, 2s, dut, peer);
    REQUIRE(held);
    CHECK(*held == "the engine, the DUT or their host was held 12.000 ms while the CONNECTs went out (two longest holds), "
                   "as long as a CONNECT's retries last at the least (12.000 ms)");
    CHECK_FALSE(setup_held(tm, 100ms, 2s, dut, peer));  // outside the set-up
    CHECK_FALSE(setup_held(tm, -30ms, 2s, dut, peer));  // the holds came after the CONNECTs' window (24 ms from the start)
    // A busy host's short holds spread over the 2 s: two of them are as long
    // as the 6 ms the default retries last, but only one met the CONNECTs.
    peer.rto_initial = 1ms;
    tm.late = {{10ms, 4ms}, {500ms, 4ms}, {900ms, 4ms}};
    CHECK_FALSE(setup_held(tm, 0ms, 2s, dut, peer));
    tm.late = {{3ms, 4ms}, {9ms, 4ms}, {900ms, 4ms}};  // two while they went out: held
    CHECK(setup_held(tm, 0ms, 2s, dut, peer));
    tm.realtime = false;
    CHECK_FALSE(setup_held(tm, 0ms, 2s, dut, peer));

    // The DUT's own waits for a CPU (pid=) count in all in the CONNECTs'
    // window (D67): twelve of 0.5 ms, preempted in short spans.
    tm.realtime = true;
    tm.late.clear();
    tm.dut_waits_read = true;
    for (int i = 0; i < 12; ++i) tm.dut_waits.push_back({nanos{i * 1ms}, 500us});
    tm.late = tm.dut_waits;  // two longest: 1 ms
    auto waited = setup_held(tm, 0ms, 2s, dut, peer);
    REQUIRE(waited);
    CHECK(*waited == "the DUT's threads waited 6.250 ms in all for a CPU while the CONNECTs went out, as long as a "
                     "CONNECT's retries last at the least (6.000 ms)");
    tm.dut_waits.resize(10);  // 5.25 ms with the probe's resolution: short of 6 ms
    tm.late = tm.dut_waits;
    CHECK_FALSE(setup_held(tm, 0ms, 2s, dut, peer));

    auto unopened = [] {
        run::case_result r;
        r.v = verdict::error;
        r.reason = "the connection between DUT and peer was not established within 2 s";
        return r;
    };
    auto r = unopened();
    settle_setup(r, true, 3);
    CHECK(r.v == verdict::inconclusive);
    CHECK(r.reason == "the connection could not be set up in 3 attempts, each while the DUT or the engine was held as long "
                      "as a CONNECT's retries last; nothing was judged (D113): the connection between DUT and peer was "
                      "not established within 2 s");
    auto some = unopened();
    settle_setup(some, false, 3);
    CHECK(some.v == verdict::error);
    CHECK(some.reason == unopened().reason);
}

// mrct-refnic at 5 % of a CPU (D114): register_mr for RNR-015's regions got
// no answer within the agent's 2 s timeout while its threads waited for a
// CPU. A hung or dead agent waits for none: still an error.
TEST_CASE("agent_call_held: a timed-out agent call is the DUT's slowness only where its own threads waited half the timeout") {
    using namespace std::chrono_literals;
    trace::timing_figures tm;
    tm.realtime = true;
    tm.dut_waits_read = true;
    tm.dut_waits = {{100ms, 400ms}, {600ms, 500ms}};  // 900 ms in all, + 250 us resolution
    auto held = agent_call_held(tm, 0ms, 2s);
    CHECK_FALSE(held);  // 900.25 ms of 2 s: not half
    tm.dut_waits.push_back({1200ms, 200ms});
    held = agent_call_held(tm, 0ms, 2s);
    REQUIRE(held);
    CHECK(*held == "the DUT's own threads waited 1100.250 ms of its 2000.000 ms for a CPU (pid=)");
    CHECK_FALSE(agent_call_held(tm, 3s, 2s));  // the waits lay before the call
    tm.dut_waits_read = false;                  // host pressure only (no pid=): says nothing of the DUT
    CHECK_FALSE(agent_call_held(tm, 0ms, 2s));
    tm.dut_waits_read = true;
    tm.realtime = false;
    CHECK_FALSE(agent_call_held(tm, 0ms, 2s));
}

// A post hands the engine's endpoint the bytes its memory check keeps, not a
// copy: in real time a copy of a 64 MiB WRITE (its pages faulted in) held
// the wire 200 ms after the first packets left, and the engine's timers,
// started before it, resent the whole first window (bench/wire_rate.py).
TEST_CASE("step_exec: a WRITE the engine posts shares its bytes with the memory check, copying none") {
    parts x(R"(cases:
  - id: A
    clauses: [MR-OOO-1]
    role: sender
    setup:
      - memory: {size: 65536}
      - post_write: {size: 8192, count: 2}
    expect: [data_integrity: {}]
)");
    sim::virtual_driver drv(x.s);
    x.w.open();
    for (int i = 0; i < 2000 && !x.w.opened(); ++i) drv.run_until(x.s.now() + nanos{10'000});
    REQUIRE(x.w.opened());
    x.w.register_memory();
    REQUIRE(x.steps.run_setup().ok());
    auto expected = x.steps.memory_expectations();
    REQUIRE(expected.size() == 2);
    for (const auto& m : expected) {
        REQUIRE(m.expected_bytes);
        CHECK(m.expected().size() == 8192);
        // The check's reference and the peer's message in flight: one buffer.
        CHECK(m.expected_bytes.use_count() == 2);
    }
    CHECK(expected[0].offset == 0);
    CHECK(expected[1].offset == 8192);
    // Delivered and completed, the endpoint lets go; the check keeps the bytes.
    drv.run_until(x.s.now() + nanos{5'000'000});
    for (const auto& m : expected) CHECK(m.expected_bytes.use_count() == 1);
}
