// One test case: DUT and peer over the fabric in virtual time, plan steps as
// events, every frame on the DUT's wire recorded, then the assertions.
// Setting up, running and judging; frames and actions: case_steps.cpp.
#include <algorithm>
#include <chrono>
#include <limits>

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
        r.v = verdict::skipped;
        r.reason = "the case needs " + std::to_string(npeers) + " peer addresses; a real-time adapter has one";
        return r;
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
        return r;
    }
    if (auto st = execute(); !st) {
        r.v = verdict::error;
        r.reason = st.err().message;
        observed();
        return r;
    }
    collect();
    observed();
    if (auto f = dut_->fault(); !f.empty()) {
        r.v = verdict::error;
        r.reason = "DUT: " + f;
        return r;
    }
    evaluate(r);
    return r;
}

// ------------------------------------------------------------ set-up
core::status case_exec::setup() {
    // Endpoint configuration: topology.paths sets both, dut/peer maps override.
    const auto& dcfg = p_.dut_config;
    const auto& pcfg = p_.peer_config;
    const auto& topo = p_.topology;
    if (auto st = dut_->configure(dcfg); !st) {
        config_refused_ = time_scale_ > 1;
        return core::error{"configuring the DUT: " + st.err().message};
    }
    for (const auto& [k, v] : pcfg)
        if (auto st = endpoint::config_set(pcfg_, k, v); !st) return core::error{"peer: " + st.err().message};
    for (const auto& [k, v] : dcfg)
        if (k != "bug")
            if (auto st = endpoint::config_set(dut_cfg_, k, v); !st) return core::error{"dut: " + st.err().message};

    // Fabric: DUT = A, peer = B.
    fabric::fabric_config fc;
    fc.paths = std::max({dut_cfg_.num_paths, pcfg_.num_paths, 1u});
    fc.seed = core::rng::sub_seed(seed_, "fabric");
    fc.default_stages = {{"delay", {{"delay", std::to_string(topo.delay.count()) + "ns"}}}};
    if (topo.rate) fc.default_stages.push_back({"queue", {{"rate", *topo.rate}}});
    for (unsigned p = 0; p < fc.paths; ++p) {
        const auto extra = topo.path_delay.count(p) ? topo.path_delay.at(p) : nanos{0};
        std::vector<fabric::stage_spec> st = {{"delay", {{"delay", std::to_string((topo.delay + extra).count()) + "ns"}}}};
        if (topo.rate) st.push_back({"queue", {{"rate", *topo.rate}}});
        fc.path_stages_ab[p] = st;
        fc.path_stages_ba[p] = st;
    }
    for (const auto& imp : p_.impair)
        for (unsigned p = 0; p < fc.paths; ++p) {
            if (imp.path && *imp.path != p) continue;
            if (imp.to_peer) fc.path_stages_ab[p].push_back(imp.spec);
            if (imp.to_dut) fc.path_stages_ba[p].push_back(imp.spec);
        }
    auto f = fabric::fabric::create(s_, fc);
    if (!f) return core::error{"fabric: " + f.err().message};
    fab_ = std::move(*f);
    fab_->set_receiver(fabric::direction::a_to_b, [this](core::bytes_view fr, const fabric::packet_meta&) {
        peer_->receive(fr);
    });
    fab_->set_receiver(fabric::direction::b_to_a, [this](core::bytes_view fr, const fabric::packet_meta&) {
        on_frame(trace::dir::to_dut, fr, false);
    });

    max_frames_ = p_.limits.max_frames;
    dut_addr_ = dut_->address();
    peer_addr_ = dut_->peer_address();
    if (dut_->realtime()) {
        // Room for the frames of a typical real-time case up front: growing
        // the trace moves every record, in the middle of the DUT's traffic.
        tr_->frames.reserve(1u << 15);
        rt_ = std::make_unique<sim::realtime_driver>(s_);
        rt_->set_busy_poll(dut_->busy_poll());
        rt_->anchor();
        if (dut_->shares_host())
            // Without the DUT's process named, the host's CPU pressure stands
            // for its waits (D95).
            probe_ = std::make_unique<sim::host_probe>(sim::host_probe::k_period, sim::host_probe::k_floor, dut_->host_pid(),
                                                       dut_->host_pid() <= 0);
        dut_->attach(
            rt_->io(),
            [this] {
                rt_->sync();
                return s_.now();
            },
            [this](const bool& done, std::chrono::milliseconds timeout) {
                ++rpc_depth_;
                const bool ok = rt_->run_while_waiting(done, timeout);
                --rpc_depth_;
                return ok;
            });
    }
    if (auto st = dut_->start(s_, dut_addr_, core::rng::sub_seed(seed_, "dut"), [this](core::bytes_view fr, nanos age) {
            if (rt_) rt_->sync();
            if (tr_->frames.size() >= max_frames_) {
                if (error_.empty())
                    error_ = "the DUT flooded the wire (more than " + std::to_string(max_frames_) + " frames recorded)";
                return;
            }
            on_frame(trace::dir::from_dut, fr, false, age);
        });
        !st)
        return core::error{"starting the DUT: " + st.err().message};
    peer_ = std::make_unique<endpoint::endpoint>(s_, pcfg_, peer_addr_, core::rng::sub_seed(seed_, "peer"),
                                                 [this](core::bytes_view fr) { to_dut(fr, fab_.get()); });

    // More peers (topology.peers, e.g. fair-share grants, MR-GR-3): each a
    // reference endpoint with its own address and its own fabric, like
    // senders behind different switches. They connect to the DUT.
    const unsigned npeers = p_.topology.peers;
    extra_.resize(npeers - 1);
    for (unsigned k = 0; k + 1 < npeers; ++k) {
        auto& x = extra_[k];
        x.addr = peer_addr_;
        x.addr.mac[5] = static_cast<std::uint8_t>(3 + k);
        x.addr.ip[3] = static_cast<std::uint8_t>(3 + k);
        auto xfc = fc;
        xfc.seed = core::rng::sub_seed(seed_, "fabric", k + 1);
        auto xf = fabric::fabric::create(s_, xfc);
        if (!xf) return core::error{"fabric: " + xf.err().message};
        x.fab = std::move(*xf);
        x.fab->set_receiver(fabric::direction::a_to_b, [this, k](core::bytes_view fr, const fabric::packet_meta&) {
            extra_[k].ep->receive(fr);
        });
        x.fab->set_receiver(fabric::direction::b_to_a, [this](core::bytes_view fr, const fabric::packet_meta&) {
            on_frame(trace::dir::to_dut, fr, false);
        });
        x.ep = std::make_unique<endpoint::endpoint>(s_, pcfg_, x.addr, core::rng::sub_seed(seed_, "peer", k + 1),
                                                    [this, k](core::bytes_view fr) { to_dut(fr, extra_[k].fab.get()); });
    }

    // `handshake:` filters act on the wire from before the connection opens
    // (a lost ACCEPT, a delayed CONNECT); the setup's filters start after it.
    for (const auto& a : p_.handshake) filters_.add(std::get<filter_op>(a.o), -2);
    // Connection: the data sender opens it (with `both`, the DUT).
    const bool dut_sends = p_.dut_sends;
    if (dut_sends) {
        peer_->listen();
        dut_conn_ = dut_->connect(peer_addr_);
    } else {
        dut_->listen();
        peer_conn_ = peer_->connect(dut_addr_);
    }
    for (auto& x : extra_) x.conn = x.ep->connect(dut_addr_);
    auto extras_up = [&] {
        for (const auto& x : extra_)
            if (!x.ep->established(x.conn)) return false;
        return dut_->accepted().size() >= extra_.size() + (dut_sends ? 0 : 1);
    };
    // Real time: a DUT on a wire gets 2 s to connect, polled every millisecond.
    // A case run slowed down gets its time scale times 20 ms at least.
    const nanos deadline = s_.now() + std::max(rt_ ? nanos{2s} : nanos{0}, nanos{20ms} * time_scale_);
    const nanos tick = rt_ ? nanos{1ms} : nanos{10us};
    while (s_.now() < deadline) {
        advance(s_.now() + tick);
        if (auto f = dut_->fault(); !f.empty()) return core::error{"DUT: " + f};
        if (!extras_up()) continue;
        if (dut_sends && dut_->established(dut_conn_) && !peer_->accepted().empty()) {
            peer_conn_ = peer_->accepted().back();
            break;
        }
        if (!dut_sends && peer_->established(peer_conn_) && !dut_->accepted().empty()) {
            dut_conn_ = dut_->accepted().front();  // peer 0 connected first
            break;
        }
    }
    if (!extras_up()) return core::error{"not every peer connected to the DUT within " + std::string(rt_ ? "2 s" : "20 ms")};
    for (auto& x : extra_)
        if (auto w = x.ep->conn_wire(x.conn))
            for (unsigned i = 0; i < w->paths.size(); ++i) x.fab->pin(w->paths[i].port, i);
    if (!(dut_->established(dut_conn_) || (!dut_sends && !dut_->accepted().empty()))) {
        handshake_lost_ = !p_.handshake.empty();
        setup_failed_ = true;
        // The cause as far as the wire shows it: what each side sent, how long
        // the engine took to answer, whether the DUT gave up.
        std::string why = "the connection between DUT and peer was not established within " + std::string(rt_ ? "2 s" : "20 ms");
        if (p_.handshake.empty()) {
            why += ": " + handshake_seen().text;
            if (dut_sends && dut_->in_error(dut_conn_)) why += "; the DUT gave up on its CONNECT (connection in error)";
            if (rt_) why += "; the engine ran up to " + assertions::fmt_time(rt_->lateness_since().max) + " late";
        }
        return core::error{why};
    }
    // Fabric path i carries each side's path i at its first port.
    if (auto w = peer_->conn_wire(peer_conn_))
        for (unsigned i = 0; i < w->paths.size(); ++i) fab_->pin(w->paths[i].port, i);

    // Memory on both sides.
    const auto mem = static_cast<std::size_t>(p_.memory);
    dut_rkey_ = dut_->register_mr(mem);
    peer_rkey_ = peer_->register_mr(mem);
    mem_size_ = mem;
    t0_ = s_.now();
    tr_->step_times[-1] = t0_;
    return core::ok_status();
}

// Real time: a step that became due while an agent call was waiting runs
// here, after that call, never nested in it (the agent takes one call at a time).
void case_exec::run_deferred_steps() {
    while (!deferred_.empty()) {
        const int i = deferred_.front();
        deferred_.erase(deferred_.begin());
        run_step(i);
    }
}

core::status case_exec::execute() {
    // Triggers see every frame from time 0, setup's own included.
    fired_.assign(p_.steps.size(), false);
    trigger_count_.assign(p_.steps.size(), 0);
    armed_ = true;
    if (rt_) premake_setup_payloads();
    if (rt_) rt_->sync();  // local work (the peer's memory, the payloads) took wall time too
    in_setup_ = rt_ != nullptr;
    for (const auto& a : p_.setup)
        if (auto st = act(a, -1); !st) return core::error{a.at.str() + ": " + st.err().message};
    in_setup_ = false;
    // Real time: posting through the agent took wall time; the case's clock
    // (timed steps, the duration limit) starts once the setup is posted.
    if (rt_) {
        rt_->sync();
        t0_ = s_.now();
        run_deferred_steps();  // triggered by the setup's frames
    }
    nanos last_timed = t0_;
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
        const auto& st = p_.steps[i];
        if (!st.time) continue;
        last_timed = std::max(last_timed, t0_ + *st.time);
        step_due_[static_cast<int>(i)] = t0_ + *st.time;
        s_.at(t0_ + *st.time, [this, i] {
            fired_[i] = true;
            run_step(static_cast<int>(i));
        });
    }
    // Real time: the duration is a cap, not a schedule (a case ends when its
    // work is done and the wire has settled); a userspace stack on a veth
    // moves far fewer bits per second than the simulation, so the cap is at
    // least k_realtime_min_duration.
    const auto& lim = p_.limits;
    nanos limit = t0_ + lim.duration;
    if (rt_) limit = std::max(limit, t0_ + k_realtime_min_duration);
    const nanos settle = lim.settle;
    std::optional<nanos> quiet_since;
    // Real time: completions are polled over TCP every millisecond.
    const nanos slice = rt_ ? nanos{1ms} : nanos{50us};
    while (s_.now() < limit) {
        advance(std::min(limit, s_.now() + slice));
        run_deferred_steps();
        drain();
        if (!error_.empty()) return core::error{error_};
        if (auto f = dut_->fault(); !f.empty()) return core::error{"DUT: " + f};
        const bool done = s_.now() >= last_timed && all_done() && !ctrl_pending();
        if (done && !quiet_since) quiet_since = s_.now();
        if (!done) quiet_since.reset();
        if (quiet_since && s_.now() >= *quiet_since + settle) break;
        if (!rt_ && s_.size() == 0 && s_.now() >= last_timed) break;  // real time: the DUT may still send
    }
    drain();
    tr_->end = s_.now();
    return core::ok_status();
}

bool case_exec::ctrl_pending() {
    for (; ctrl_fed_ < tr_->frames.size(); ++ctrl_fed_) (void)ctrl_.take(tr_->frames[ctrl_fed_]);
    const auto last = ctrl_.may_repeat(dut_cfg_.retry_limit);
    return last && s_.now() < *last + dut_cfg_.rto_max;
}

void case_exec::drain() {
    for (auto& wc : dut_->poll()) tr_->dut.completions.push_back(convert(wc));
    for (auto& wc : peer_->poll()) tr_->peer.completions.push_back(convert(wc));
    for (auto& x : extra_)
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

// ------------------------------------------------------------ results
void case_exec::collect() {
    tr_->dut.counters = dut_->counters();
    tr_->peer.counters = dut::endpoint_counters(peer_->stats());
    tr_->dut.conn_error = dut_->in_error(dut_conn_);
    tr_->peer.conn_error = peer_->in_error(peer_conn_);
    tr_->dut.established = tr_->peer.established = true;
    // Expected memory: WRITEs, and SENDs matched to the receives they consume.
    for (const auto& [key, list] : sends_) {
        auto it = recvs_.find(key);
        if (it == recvs_.end()) continue;
        for (std::size_t k = 0; k < list.size() && k < it->second.size(); ++k)
            if (list[k].second.size() <= it->second[k].second)
                expected_.push_back({key.first ? "dut" : "peer", list[k].first, it->second[k].first, list[k].second, {}});
    }
    // Only messages that completed successfully at the sender are expected in memory.
    auto ok_at_sender = [&](const std::string& receiver, std::uint64_t wr) {
        const auto& o = receiver == "dut" ? tr_->peer : tr_->dut;
        for (const auto& wc : o.completions)
            if (wc.wr_id == wr) return wc.status == "success";
        return false;
    };
    for (auto& m : expected_) {
        if (!ok_at_sender(m.side, m.wr_id)) continue;
        if (m.side == "dut") {
            auto got = dut_->read_mem(dut_rkey_, m.offset, m.expected.size());
            if (got) m.actual = std::move(*got);
        } else {
            auto mem = peer_->mr_bytes(peer_rkey_);
            m.actual.assign(mem.begin() + static_cast<std::ptrdiff_t>(m.offset),
                            mem.begin() + static_cast<std::ptrdiff_t>(m.offset + m.expected.size()));
        }
        tr_->memory.push_back(std::move(m));
    }
    if (rt_) tr_->crossing = k_realtime_crossing;
    auto& p = tr_->p;
    p = protocol_params(dut_cfg_);
    p.num_paths = std::min(dut_cfg_.num_paths, pcfg_.num_paths);
    p.mtu = std::min(dut_cfg_.mtu, pcfg_.mtu);
}

// Real time: how well the engine kept time (trace::timing_figures, docs/timing.md).
void case_exec::note_timing() {
    if (!rt_) return;
    auto& tm = tr_->timing;
    tm.realtime = true;
    tm.rx_stamped = dut_->rx_stamped();
    tm.frames_lost = dut_->frames_lost();
    const auto late = rt_->lateness_since();
    tm.events = late.events;
    tm.event_late_max = late.max;
    tm.event_late_p99 = late.p99;
    tm.step_late_max = step_late_max_;
    tm.rx_delay_max = rx_delay_max_;
    const auto calls = dut_->agent_call_times();
    tm.agent_calls = calls.calls;
    tm.agent_call_max = calls.max;
    tm.agent_call_median = calls.median;
    tm.poll_rtt_max = calls.poll_max;
    tm.late = late_;
    for (const auto& [due, late] : rt_->late_events(trace::timing_figures::k_late_floor)) tm.late.push_back({due, late});
    // A poll answered later than usual: the agent, and with it the DUT it
    // serves on this host, was held for the difference (D59).
    if (!calls.polls.empty()) {
        std::vector<nanos> rtts;
        for (const auto& [_, r] : calls.polls) rtts.push_back(r);
        std::nth_element(rtts.begin(), rtts.begin() + static_cast<std::ptrdiff_t>(rtts.size() / 2), rtts.end());
        const nanos usual = rtts[rtts.size() / 2];
        for (const auto& [sent, r] : calls.polls)
            if (r - usual > trace::timing_figures::k_late_floor) tm.late.push_back({sent, r - usual});
    }
    // Where the DUT may share the host, every other call counts too: a
    // software DUT serving a 1 MiB post on its data path's thread reads no
    // frame meanwhile (mrct-refnic sent on an RNR-paused tag 1.2-4.5 ms
    // after the RNR left while it served RNR-050's posts beside stress-ng,
    // with no hold of the host the probe saw). Each may have held the DUT for
    // its round trip less the quickest call's (the wire and the least work
    // any call took), not less the median poll's: a DUT that reads its clock
    // when a call arrives and is held before it sends what the call asked for
    // is behind by all of it (D97: mrct-refnic's CONNECT left 740 us after
    // its repeat timer started, so the repeat came 60 us later on the wire;
    // RNR-014 beside stress-ng without pid=, a connect call of 813 us against
    // a median poll of 96 us).
    if (dut_->shares_host() && !calls.others.empty()) {
        nanos quickest = nanos::max();
        for (const auto* v : {&calls.polls, &calls.others})
            for (const auto& [_, r] : *v) quickest = std::min(quickest, r);
        for (const auto& [sent, r] : calls.others)
            if (r - quickest > trace::timing_figures::k_late_floor) tm.late.push_back({sent, r - quickest});
    }
    // A sleeping thread the host held: the DUT beside the engine was held too.
    if (probe_) {
        tm.host_probed = true;
        tm.host_wakeups = probe_->wakeups();
        tm.host_cpus = static_cast<unsigned>(probe_->cpus().size());
        tm.dut_waits_read = probe_->dut_sampled();
        tm.host_pressure_read = probe_->pressure_sampled();
        for (const auto& h : probe_->holds()) {
            const trace::timing_figures::late_span s{rt_->sim_time_of(h.due), h.late};
            tm.late.push_back(s);
            if (h.cpu == sim::host_probe::k_dut_wait) {
                tm.dut_waits.push_back(s);
                tm.dut_wait_max = std::max(tm.dut_wait_max, h.late);
            } else if (h.cpu == sim::host_probe::k_host_pressure) {
                tm.dut_waits.push_back(s);
                tm.pressure_wait_max = std::max(tm.pressure_wait_max, h.late);
            } else {
                tm.host_hold_max = std::max(tm.host_hold_max, h.late);
            }
        }
        probe_.reset();  // the traffic is over: no more wake-ups while the checks run
    }
    std::sort(tm.late.begin(), tm.late.end(), [](const auto& a, const auto& b) { return a.due < b.due; });
    tm.index_holds();
}

// What each side sent of the handshake, as evidence: CTRL frames by type, and
// how long the first answer took after the first request.
case_exec::handshake_evidence case_exec::handshake_seen() const {
    std::map<std::string, unsigned> from_dut, to_dut;
    handshake_evidence h;
    std::optional<nanos> first_out, first_in;
    for (const auto& rec : tr_->frames) {
        if (!rec.ok() || rec.f().bth.opcode != static_cast<std::uint8_t>(wire::opcode::ctrl)) continue;
        const bool out = rec.d == trace::dir::from_dut;
        ++(out ? from_dut : to_dut)[std::string(wire::ctrl_type_name(rec.f().ctrlh.type))];
        h.dropped += rec.dropped ? 1 : 0;
        h.frames.push_back(rec.index);
        if (!rec.dropped) (out ? first_out : first_in) = (out ? first_out : first_in).value_or(rec.t);
    }
    auto list = [](const std::map<std::string, unsigned>& m) {
        std::string s;
        for (const auto& [name, n] : m) s += (s.empty() ? "" : ", ") + std::to_string(n) + " " + name;
        return s.empty() ? std::string("no CTRL frame") : s;
    };
    h.text = "from the DUT: " + list(from_dut) + "; to the DUT: " + list(to_dut);
    if (first_out && first_in && *first_in > *first_out)
        h.text += " (the first answer " + assertions::fmt_time(*first_in - *first_out) + " after the first request)";
    return h;
}

void case_exec::fail_handshake(case_result& r, const std::string& why) {
    const auto h = handshake_seen();
    assertion_result ar;
    ar.o.frames = h.frames;
    ar.name = "handshake";
    ar.clauses = c_.clauses;
    ar.at = p_.handshake.front().at;
    ar.o.v = verdict::fail;
    ar.o.expected = "the connection opens despite the handshake's filters";
    ar.o.actual = h.text + " (" + std::to_string(h.dropped) + " dropped by the filters)";
    ar.o.message = why + " with the handshake's filters in force; " + ar.o.actual;
    r.asserts.push_back(ar);
    r.v = verdict::fail;
    r.reason = ar.name + ": " + ar.o.message;
}

void case_exec::evaluate(case_result& r) {
    r.v = verdict::pass;
    for (const auto& e : c_.expect) {
        const auto* def = assertions::find(e.name);
        assertion_result ar;
        ar.name = e.name;
        ar.at = e.at;
        if (!def) {
            ar.o = {verdict::error, "unknown assertion", {}, {}, {}, {}};
        } else {
            ar.clauses = def->clauses;
            std::map<std::string, std::string> args;
            for (const auto& [k, v] : e.a) args[k] = v.text;
            ar.o = assertions::evaluate(*def, *tr_, args);
        }
        r.asserts.push_back(ar);
    }
    // Real time: frames of the DUT the engine's receive path dropped unread
    // (a full socket or capture buffer on a loaded host) are missing from the
    // trace: no verdict on it stands.
    if (tr_->timing.realtime && tr_->timing.frames_lost)
        for (auto& a : r.asserts)
            if (a.o.v == verdict::pass || a.o.v == verdict::fail) {
                a.o.message = "the engine's receive path dropped " + std::to_string(tr_->timing.frames_lost) +
                              " of the DUT's frames unread (a full socket or capture buffer): the trace is incomplete; "
                              "it would have said " + std::string(assertions::verdict_name(a.o.v)) + ": " + a.o.message;
                a.o.v = verdict::inconclusive;
                a.o.timing_doubt = true;  // the host was too busy to read them: another attempt may
            }
    // Real time: a case whose scenario holds only if its steps ran on time
    // says how late they may run (limits.step_late). Later, the rule may not
    // have bound (RNR-013's RNR_QUERY after the held message arrived): no pass
    // stands. A failure still does: it is the DUT's frames against the check.
    if (const auto allowed_late = p_.limits.step_late; tr_->timing.realtime && allowed_late) {
        const nanos allowed = *allowed_late;
        if (tr_->timing.step_late_max > allowed)
            for (auto& a : r.asserts)
                if (a.o.v == verdict::pass) {
                    a.o.v = verdict::inconclusive;
                    a.o.timing_doubt = true;
                    a.o.message = "plan steps ran up to " + assertions::fmt_time(tr_->timing.step_late_max) +
                                  " late; this case's scenario needs them within " + assertions::fmt_time(allowed) +
                                  " (limits.step_late); it would have said pass: " + a.o.message;
                }
    }
    auto worst = [](verdict a, verdict b) {
        auto rank = [](verdict v) {
            switch (v) {
            case verdict::error: return 4;
            case verdict::fail: return 3;
            case verdict::inconclusive: return 2;
            default: return 0;
            }
        };
        return rank(b) > rank(a) ? b : a;
    };
    for (const auto& a : r.asserts) {
        const auto before = r.v;
        r.v = worst(r.v, a.o.v);
        if (r.v != before) r.reason = a.name + ": " + a.o.message;
    }
}

}  // namespace detail

using detail::case_exec;


namespace {

// `coarser`: under --time-scale auto, a scaled case runs that many times
// slower again (a timing retry, D69); the largest scale it maps to, up to
// k_max_time_scale.
case_result run_once(const plan::test_case& c, const dut_factory& make, std::uint64_t seed, unsigned time_scale,
                     unsigned coarser = 1) {
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
            auto r = x.run();
            r.time_scale = k;
            if (!(realtime && x.setup_failed() && r.v == verdict::error && attempt < detail::k_setup_attempts)) {
                if (!earlier.empty()) r.reason += " (set-up attempts before: " + earlier + ")";
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
                     unsigned timing_retries) {
    auto r = run_once(c, make, seed, time_scale);
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
    while (before.size() < timing_retries && timing_doubted(r)) {
        before.push_back(r.time_scale > 1 ? "at " + std::to_string(r.time_scale) + " times slower: " + r.reason : r.reason);
        wall += r.wall_s;
        if (time_scale == 0 && r.time_scale > 1) coarser *= 2;
        r = case_result{};  // the doubted attempt's trace goes before the next one makes its own
        r = run_once(c, make, seed, time_scale, coarser);
    }
    name_earlier_doubt(r, before);
    r.wall_s += wall;
    r.attempts = static_cast<unsigned>(before.size()) + 1;
    r.doubted_before = std::move(before);
    return r;
}

}  // namespace mrct::run
