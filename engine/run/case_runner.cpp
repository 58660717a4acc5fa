// One test case: DUT and peer over the fabric in virtual time (or on a real
// wire), plan steps as events, every frame on the DUT's wire recorded, then
// the assertions. Here: the case set up (case_wiring), run until its work is
// done and the wire has settled, and run_case's attempts; the parts are
// case_wiring.cpp, wire_tap.cpp and step_exec.cpp, the judging case_judge.cpp.
#include <algorithm>
#include <chrono>
#include <limits>
#include <variant>

#include "core/pages.h"
#include "run/case_exec.h"
#include "run/time_scale.h"

namespace mrct::run {

trace::params protocol_params(const endpoint::config& c) {
    trace::params p;
    p.num_paths = c.num_paths;
    p.mtu = c.mtu;
    p.rto_initial = c.rto_initial;
    p.rto_min = c.rto_min;
    p.rto_max = c.rto_max;
    p.retry_limit = c.retry_limit;
    p.ack_every = c.ack_every;
    p.ack_delay = c.ack_delay;
    p.cwnd_initial = c.cwnd_initial;
    p.max_inflight = c.max_inflight;
    p.moves_after = c.moves_after;
    p.grant_idle = c.grant_idle;
    p.inbound_rate_bps = c.inbound_rate_bps;
    return p;
}

namespace detail {

// A result that names its case, before anything is known about it.
case_result named(const plan::test_case& c, std::uint64_t seed) {
    case_result r;
    r.id = c.id;
    r.title = c.title;
    r.level = c.level;
    r.area = c.area;
    r.role = c.role;
    r.clauses = c.clauses;
    r.seed = seed;
    return r;
}

unsigned case_time_scale(const plan::test_case& c, const dut::info& dut, unsigned requested) {
    if (std::find(c.needs.begin(), c.needs.end(), "fine_timing") == c.needs.end()) return 1;
    if (requested > 0) return requested;
    const bool fine = std::find(dut.capabilities.begin(), dut.capabilities.end(), "fine_timing") != dut.capabilities.end();
    return fine ? 1 : k_auto_time_scale;
}

case_result case_exec::run() {
    case_result r = named(c_, seed_);
    const auto info = dut_->hello();
    for (const auto& cap : c_.needs)
        if (std::find(info.capabilities.begin(), info.capabilities.end(), cap) == info.capabilities.end()) {
            r.v = verdict::skipped;
            r.reason = "the DUT lacks capability '" + cap + "'";
            for (const auto& [n, what] : capabilities())
                if (n == cap) r.reason += " (" + what + ")";
            return r;
        }
    const unsigned npeers = p_.topology.peers;
    if (dut_->realtime() && npeers > 1) {
        unsigned have = 1;
        while (have < npeers && dut_->further_peer_address(have)) ++have;
        if (have < npeers) {
            r.v = verdict::skipped;
            r.reason = "the case needs " + std::to_string(npeers) + " peer addresses; the adapter has " + std::to_string(have) +
                       " (local=IP+IP+... in the DUT spec gives one per peer, docs/adapters.md)";
            return r;
        }
    }
    auto wall0 = std::chrono::steady_clock::now();
    // What the case saw so far: an error keeps its frames (pcap, timeline)
    // as evidence of what the DUT did before it went wrong.
    auto observed = [&] {
        if (tr_->end < s_.now()) tr_->end = s_.now();
        note_timing();
        r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        r.sim_time = tr_->end;
        r.frames = tr_->frames.size();
        r.events = s_.events_run();
        r.tr = tr_;
    };
    if (auto st = setup(); !st) {
        observed();
        if (mark_interrupted(r)) return r;
        if (handshake_lost_) {
            fail_handshake(r, st.err().message);
            return r;
        }
        if (config_refused_) {
            r.v = verdict::skipped;
            r.reason = "the case requires fine_timing; run " + std::to_string(time_scale_) +
                       " times slower it needs the DUT to take its timers scaled (docs/timing.md), and " +
                       st.err().message;
            return r;
        }
        r.v = verdict::error;
        r.reason = st.err().message;
        if (rt_ && setup_failed_)
            if (auto held = detail::setup_held(tr_->timing, connect_from_, s_.now(), protocol_params(wiring_.dut_cfg),
                                                 protocol_params(wiring_.peer_cfg))) {
                setup_held_ = true;
                r.reason += "; " + *held;
            }
        agent_held(r);
        return r;
    }
    running_ = true;
    if (auto st = execute(); !st) {
        r.v = verdict::error;
        r.reason = st.err().message;
        observed();
        if (mark_interrupted(r)) return r;
        agent_held(r);
        refused_held(r);
        return r;
    }
    collect();
    await_counted_frames();
    observed();
    if (mark_interrupted(r)) return r;
    if (auto f = dut_->fault(); !f.empty()) {
        r.v = verdict::error;
        r.reason = "DUT: " + f;
        agent_held(r);
        return r;
    }
    evaluate(r);
    return r;
}

bool case_exec::cut_seen() {
    if (cut_ && cut_->load()) cut_seen_ = true;
    return cut_seen_;
}

void set_interrupted(case_result& r, const std::string& why) {
    r.v = verdict::skipped;
    r.interrupted = true;
    r.reason = "interrupted: " + why;
}

bool case_exec::mark_interrupted(case_result& r) const {
    if (!cut_seen_ && !(rt_ && rt_->aborted())) return false;
    set_interrupted(r, "the run was stopped a second time " + std::string(running_ ? "while the case ran" : "in its set-up") +
                           ", " + assertions::fmt_time(tr_->end) + " into it; not judged (its capture shows what the DUT did so far)");
    return true;
}

// ------------------------------------------------------------ set-up
case_exec::case_exec(const plan::test_case& c, program p, std::unique_ptr<dut::dut> d, std::uint64_t seed)
    : c_(c),
      p_(std::move(p)),
      dut_(std::move(d)),
      seed_(seed),
      tr_(std::make_shared<trace::trace>()),
      wiring_(p_, s_, *dut_, seed),
      tap_(s_, *tr_, *dut_, wiring_, late_, error_),
      steps_(p_, s_, *tr_, *dut_, wiring_, tap_, late_, error_, seed) {
    tap_.on_record([this](const trace::record& r) { steps_.on_record(r); });
}

core::status case_exec::setup() {
    if (auto st = wiring_.configure(config_refused_); !st) {
        config_refused_ = config_refused_ && time_scale_ > 1;
        return st;
    }
    // Fabric: DUT = A, peer = B.
    if (auto st = wiring_.make_fabric([this](core::bytes_view fr) { tap_.arrive(fr); }); !st) return st;
    tap_.set_max_frames(p_.limits.max_frames);
    if (dut_->realtime()) start_realtime();
    if (auto st = dut_->start(s_, wiring_.dut_addr, core::rng::sub_seed(seed_, "dut"),
                              [this](core::bytes_view fr, nanos age) {
                                  if (rt_) rt_->sync();
                                  tap_.from_dut(fr, age);
                              });
        !st)
        return core::error{"starting the DUT: " + st.err().message};
    if (auto st = wiring_.make_peers([this](core::bytes_view fr, fabric::fabric* via) { tap_.from_peer(fr, via); },
                                     [this](core::bytes_view fr) { tap_.arrive(fr); });
        !st)
        return st;
    // `handshake:` filters act on the wire from before the connection opens
    // (a lost ACCEPT, a delayed CONNECT); the setup's filters start after it.
    for (const auto& a : p_.handshake) tap_.filters().add(std::get<filter_op>(a.o), -2, a.at);
    if (auto st = connect(); !st) return st;
    wiring_.pin_peer_paths();
    wiring_.register_memory();
    t0_ = s_.now();
    tr_->step_times[-1] = t0_;
    return core::ok_status();
}

namespace {

// The message bytes a case posts, both ways (setup and steps): about what
// its trace's frames will hold, less headers, ACKs and resends.
std::uint64_t posted_bytes(const program& p) {
    std::uint64_t n = 0;
    auto add = [&](const compiled_action& a) {
        const auto* o = std::get_if<post_op>(&a.o);
        if (!o || o->k == post_op::kind::recv) return;
        n += std::uint64_t{o->size} * o->count * (o->all_peers ? p.topology.peers : 1);
    };
    for (const auto& a : p.setup) add(a);
    for (const auto& st : p.steps)
        for (const auto& a : st.actions) add(a);
    return n;
}

}  // namespace

// Real time: the driver that waits on the wire, the host probe, and the
// agent's clock and waits (an agent call keeps the wire moving, step_exec).
void case_exec::start_realtime() {
    // Room for the case's frames up front, records and bytes: the messages'
    // and a quarter more (headers, ACKs, resends), touched now rather than
    // under the traffic (growing the trace there moves every record).
    const std::uint64_t posted = posted_bytes(p_);
    // Out of khugepaged's reach before the trace's memory is touched: where
    // THP is "always" it may hold the process's memory map for seconds
    // beside a load (D128). For the rest of the process: a run with a
    // real-time DUT is real time throughout.
    (void)core::no_transparent_huge_pages();
    tr_->prepare(static_cast<std::size_t>(posted + posted / 4));  // prepare caps it
    late_.prepare(tr_->frames.capacity());  // a span per frame at most, as a backlog of the DUT's makes
    rt_ = std::make_unique<sim::realtime_driver>(s_);
    rt_->set_busy_poll(dut_->busy_poll());
    rt_->set_abort(cut_);
    rt_->anchor();
    steps_.set_realtime(rt_.get());
    if (dut_->shares_host())
        // Without the DUT's process named, the host's CPU pressure stands
        // for its waits (D95).
        probe_ = std::make_unique<sim::host_probe>(sim::host_probe::k_period, sim::host_probe::k_floor, dut_->host_pid(),
                                                   dut_->host_pid() <= 0);
    // What a turn of events sent leaves at its end, where the driver times it (D137).
    rt_->set_turn_end([this] { dut_->flush_wire(); });
    dut_->attach(
        rt_->io(),
        [this] {
            rt_->sync();
            return s_.now();
        },
        [this](const bool& done, std::chrono::milliseconds timeout) {
            steps_.agent_call_begins();
            const bool ok = rt_->run_while_waiting(done, timeout);
            steps_.agent_call_ends();
            return ok;
        });
}

// The connection: the data sender opens it (with `both`, the DUT); the other
// peers connect to the DUT.
core::status case_exec::connect() {
    wiring_.open();
    connect_from_ = s_.now();
    // Real time: a DUT on a wire gets 2 s to connect, polled every millisecond.
    // A case run slowed down gets its time scale times 20 ms at least.
    const nanos deadline = s_.now() + std::max(rt_ ? nanos{2s} : nanos{0}, nanos{20ms} * time_scale_);
    const nanos tick = rt_ ? nanos{1ms} : nanos{10us};
    bool open = false;
    while (s_.now() < deadline) {
        advance(s_.now() + tick);
        if (cut_seen()) return core::error{"interrupted"};
        if (auto f = dut_->fault(); !f.empty()) return core::error{"DUT: " + f};
        if (!wiring_.extras_up()) continue;
        if ((open = wiring_.opened())) break;
    }
    if (!wiring_.extras_up()) {
        setup_failed_ = true;  // set up again, as a connection that did not open (GR-052 with the DUT held 95 ms at a time)
        return core::error{"not every peer connected to the DUT within " + std::string(rt_ ? "2 s" : "20 ms")};
    }
    wiring_.pin_extra_paths();
    // Both sides must be open: a DUT that accepted after the peer's CONNECTs
    // ran out (its host held it longer than the retry limit's span) has a
    // connection the peer does not (seen beside stress-ng: the steps then
    // named no connection the DUT knew, and the case ended in error).
    if (!open) {
        handshake_lost_ = !p_.handshake.empty();
        setup_failed_ = true;
        // The cause as far as the wire shows it: what each side sent, how long
        // the engine took to answer, whether the DUT gave up.
        std::string why = "the connection between DUT and peer was not established within " + std::string(rt_ ? "2 s" : "20 ms");
        if (p_.handshake.empty()) {
            why += ": " + handshake_seen().text;
            if (p_.dut_sends && dut_->in_error(wiring_.dut_conn)) why += "; the DUT gave up on its CONNECT (connection in error)";
            if (!p_.dut_sends && wiring_.peer->in_error(wiring_.peer_conn))
                why += "; the engine gave up on its CONNECT after " + std::to_string(wiring_.peer_cfg.retry_limit) +
                       " transmissions (the retry limit)" + (wiring_.dut_side_open() ? ", before the DUT's ACCEPT came" : "");
            if (rt_) why += "; the engine ran up to " + assertions::fmt_time(rt_->lateness_since().max) + " late";
        }
        return core::error{why};
    }
    return core::ok_status();
}

core::status case_exec::execute() {
    // Triggers see every frame from time 0, setup's own included.
    steps_.arm();
    if (auto st = steps_.run_setup(); !st) return st;
    // Real time: posting through the agent took wall time; the case's clock
    // (timed steps, the duration limit) starts once the setup is posted.
    if (rt_) {
        rt_->sync();
        t0_ = s_.now();
        steps_.run_deferred();  // triggered by the setup's frames
    }
    const nanos last_timed = steps_.schedule_timed(t0_);
    // Real time: the duration is a cap, not a schedule (a case ends when its
    // work is done and the wire has settled); a userspace stack on a veth
    // moves far fewer bits per second than the simulation, so the cap is at
    // least k_realtime_min_duration.
    const auto& lim = p_.limits;
    nanos limit = t0_ + lim.duration;
    if (rt_) limit = std::max(limit, t0_ + k_realtime_min_duration);
    // Real time: the cap is time the host let the engine and the DUT run.
    // A DUT held by its host (or a CPU quota) for part of it has the cap
    // stretched by the holds, up to k_realtime_cap_stretch times; work still
    // pending after that is judged against the time it had (D111).
    const nanos budget = limit - t0_;
    const nanos settle = lim.settle;
    constexpr nanos k_not_quiet{-1};
    nanos quiet_since = k_not_quiet;  // since when the case's work is done (a plain value: GCC -O3 took the optional for uninitialized)
    // Real time: completions are polled over TCP every millisecond.
    const nanos slice = rt_ ? nanos{1ms} : nanos{50us};
    for (bool finished = false; !finished;) {
        while (s_.now() < limit) {
            advance(std::min(limit, s_.now() + slice));
            steps_.run_deferred();
            drain();
            if (cut_seen()) return core::error{"interrupted"};
            if (!error_.what.empty()) return core::error{error_.what};
            if (auto f = dut_->fault(); !f.empty()) return core::error{"DUT: " + f};
            const bool done = s_.now() >= last_timed && all_done() && !ctrl_pending() && !steps_.pending();
            if (!done) quiet_since = k_not_quiet;
            else if (quiet_since == k_not_quiet) quiet_since = s_.now();
            // Real time: the settle is time the host let the engine and the
            // DUT run (D155): the holds seen since the work was done add to it,
            // so a DUT held then still has the settle to answer.
            if (quiet_since != k_not_quiet && s_.now() >= quiet_since + settle &&
                (!rt_ || s_.now() >= quiet_since + settle + held_since(quiet_since)))
                finished = true;
            if (!rt_ && s_.size() == 0 && s_.now() >= last_timed) finished = true;  // real time: the DUT may still send
            if (finished) break;
        }
        if (finished || !rt_) break;
        const nanos most = t0_ + budget * k_realtime_cap_stretch;
        const nanos stretched = std::min(t0_ + budget + held_since(t0_), most);
        if (stretched <= s_.now()) {
            tr_->timing.work_capped = s_.now() >= most;
            break;
        }
        limit = stretched;
    }
    if (rt_) {
        tr_->timing.work_from = t0_;
        tr_->timing.work_budget = budget;
    }
    drain();
    tr_->end = s_.now();
    return core::ok_status();
}

bool case_exec::ctrl_pending() {
    for (; ctrl_fed_ < tr_->frames.size(); ++ctrl_fed_) (void)ctrl_.take(tr_->frames[ctrl_fed_]);
    const auto& dut_cfg = wiring_.dut_cfg;
    const auto last = ctrl_.may_repeat(dut_cfg.retry_limit);
    return last && s_.now() < *last + dut_cfg.rto_max;
}

void case_exec::drain() {
    for (auto& wc : dut_->poll()) tr_->dut.completions.push_back(convert(wc));
    for (auto& wc : wiring_.peer->poll()) tr_->peer.completions.push_back(convert(wc));
    for (auto& x : wiring_.extra)
        for (auto& wc : x.ep->poll()) tr_->peer.completions.push_back(convert(wc));
}

trace::completion case_exec::convert(const endpoint::completion& wc) {
    return {wc.wr_id, std::string(endpoint::wc_kind_name(wc.kind)), std::string(endpoint::wc_status_name(wc.status)), wc.stream,
            wc.tag, wc.stream_seq, wc.length, wc.time, wc.time_err};
}

bool case_exec::all_done() const {
    auto side_done = [](const trace::side_obs& o) {
        std::size_t want = 0, got = 0;
        for (const auto& p : o.posted) want += p.kind != "recv";
        for (const auto& c : o.completions) got += c.kind == "send" || c.kind == "write";
        return got >= want;
    };
    return side_done(tr_->dut) && side_done(tr_->peer);
}

}  // namespace detail

using detail::case_exec;


namespace {

// `coarser`: under --time-scale auto, a scaled case runs that many times
// slower again (a timing retry, D69); the largest scale it maps to, up to
// k_max_time_scale.
case_result run_once(const plan::test_case& c, const dut_factory& make, std::uint64_t seed, unsigned time_scale,
                     const run_control& ctl, unsigned coarser = 1) {
    auto error = [&](std::string why) {
        case_result r = detail::named(c, seed);
        r.v = verdict::error;
        r.reason = std::move(why);
        return r;
    };
    // Real time: a connection that did not open (an engine or DUT stalled
    // on a busy host while the DUT's CONNECTs ran out) is set up again with a
    // fresh DUT, at most k_setup_attempts times; each attempt's cause is kept.
    std::string earlier;
    bool every_attempt_held = true;  // D113
    for (unsigned attempt = 1;; ++attempt) {
        auto d = make();
        if (!d) return error("DUT: " + d.err().message);
        const bool realtime = (*d)->realtime();
        // Coarse time (run/time_scale.h): a fine_timing case on a DUT that
        // cannot hold its tolerances runs slowed down instead of skipped.
        unsigned k = detail::case_time_scale(c, (*d)->hello(), time_scale);
        if (k > 1 && time_scale == 0) k = std::min(k * coarser, k_max_time_scale);
        std::optional<plan::test_case> scaled;
        if (k > 1) {
            auto sc = scale_case(c, k);
            // auto: the largest scale the case allows (a TimerCode near the
            // table's end maps only to a code fewer doublings away).
            for (unsigned j = k / 2; !sc && time_scale == 0 && j > 1; j /= 2)
                if (auto sj = scale_case(c, j)) {
                    sc = std::move(sj);
                    k = j;
                }
            if (!sc) {
                case_result r = detail::named(c, seed);
                r.v = verdict::skipped;
                r.reason = k_unscalable_reason + std::to_string(k) + " times coarser: " + sc.err().message;
                return r;
            }
            scaled = std::move(*sc);
            std::erase(scaled->needs, std::string("fine_timing"));
        }
        // The case compiled (run/program.h); a case that did not pass
        // validate ends here as error, with every problem and its place.
        const plan::test_case& to_run = scaled ? *scaled : c;
        std::string problems;
        auto prog = compile(to_run, std::numeric_limits<std::uint64_t>::max(), [&](const plan::loc& at, const std::string& m) {
            problems += (problems.empty() ? "" : "; ") + at.str() + ": " + m;
        });
        if (!problems.empty()) return error("the case does not compile: " + problems);
        try {
            case_exec x(to_run, std::move(prog), std::move(*d), seed);
            x.set_time_scale(k);
            x.set_cut(ctl.cut);
            auto r = x.run();
            r.time_scale = k;
            const bool unopened = realtime && x.setup_failed() && r.v == verdict::error;
            every_attempt_held = every_attempt_held && unopened && x.setup_held();
            if (!(unopened && attempt < detail::k_setup_attempts) || ctl.stopping()) {
                if (!earlier.empty()) r.reason += " (set-up attempts before: " + earlier + ")";
                if (unopened && attempt < detail::k_setup_attempts) {
                    // It would have been set up again: not judged, as a case cut short.
                    detail::set_interrupted(r, "the run was stopped before the case's set-up could be tried again (" + r.reason + ")");
                    return r;
                }
                if (unopened) detail::settle_setup(r, every_attempt_held, attempt);
                return r;
            }
            earlier += (earlier.empty() ? "" : "; ") + std::to_string(attempt) + ": " + r.reason;
        } catch (const std::exception& e) {
            return error(std::string("internal error: ") + e.what());
        }
    }
}

}  // namespace

bool timing_doubted(const case_result& r) {
    if (r.v != verdict::inconclusive) return false;
    bool any = false;
    for (const auto& a : r.asserts)
        if (a.o.v == verdict::inconclusive) {
            if (!a.o.timing_doubt) return false;
            any = true;
        }
    return any;
}

void name_earlier_doubt(case_result& r, const std::vector<std::string>& before) {
    if (!before.empty() && r.v == verdict::inconclusive && !timing_doubted(r))
        r.reason += " (the attempt before was doubted for timing: " + before.back() + ")";
}

case_result run_case(const plan::test_case& c, const dut_factory& make, std::uint64_t seed, unsigned time_scale,
                     unsigned timing_retries, run_control ctl) {
    auto r = run_once(c, make, seed, time_scale, ctl);
    // Real time (only there is a verdict doubted for timing): a case that
    // judged and was doubted only because the engine or its host ran late
    // runs again on a fresh DUT. A failure is never run again, and the
    // earlier attempts' reasons stay in the result (D66).
    // A case run slowed down (--time-scale auto) runs again twice as slow
    // (D69): what doubted it was the host's lateness against needs that
    // scale with the time base.
    std::vector<std::string> before;
    double wall = 0;
    unsigned coarser = 1;
    // A run being stopped makes no further attempt: the doubted one stands.
    while (before.size() < timing_retries && timing_doubted(r) && !ctl.stopping()) {
        before.push_back(r.time_scale > 1 ? "at " + std::to_string(r.time_scale) + " times slower: " + r.reason : r.reason);
        wall += r.wall_s;
        if (time_scale == 0 && r.time_scale > 1) coarser *= 2;
        r = case_result{};  // the doubted attempt's trace goes before the next one makes its own
        r = run_once(c, make, seed, time_scale, ctl, coarser);
    }
    name_earlier_doubt(r, before);
    r.wall_s += wall;
    r.attempts = static_cast<unsigned>(before.size()) + 1;
    r.doubted_before = std::move(before);
    return r;
}

}  // namespace mrct::run
