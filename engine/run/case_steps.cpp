// A case in motion: frames recorded at the DUT's wire, step filters and
// triggers, and the plan's actions (posts, path failures, injections).
#include <algorithm>
#include <cctype>

#include "peer/craft.h"
#include "run/case_exec.h"

namespace mrct::run::detail {

// Frames: recording, step filters, triggers.
void case_exec::on_frame(trace::dir d, core::bytes_view fr, bool injected, nanos age) {
    nanos t = s_.now();
    rx_delay_max_ = std::max(rx_delay_max_, age);
    if (age > nanos{0}) {
        // Recorded at its stamp, but never before the last record: a frame
        // stamped before something the engine recorded meanwhile is moved up
        // to it, and its time is then late by that much (kept as lateness).
        const nanos stamped = t - age;
        t = std::max(stamped, tr_->frames.empty() ? nanos{0} : tr_->frames.back().t);
        note_late(stamped, t - stamped);
    }
    note_late(t, age);
    auto& rec = tr_->add(t, d, fr);
    rec.injected = injected;
    if (d == trace::dir::from_dut) pin_dut_port(rec);
    check_triggers(rec);
    if (d == trace::dir::from_dut) {
        auto fate = filters_.apply(rec);
        if (fate.dropped) {
            rec.dropped = true;
            rec.action = fate.action;
            rec.step = fate.step;
            return;
        }
        if (!fate.action.empty()) {
            rec.action = fate.action;
            rec.step = fate.step;
        }
        forward(fabric::direction::a_to_b, fate, rec.bytes, fabric_to(rec));
    } else {
        dut_->receive(rec.bytes);
    }
}

// The fabric towards the peer a DUT frame is addressed to.
fabric::fabric* case_exec::fabric_to(const trace::record& r) {
    if (!extra_.empty() && r.ok() && r.f().has(wire::has_ipv4))
        for (auto& x : extra_)
            if (r.f().ipv4.dst == x.addr.ip) return x.fab.get();
    return fab_.get();
}

void case_exec::to_dut(core::bytes_view fr, fabric::fabric* via) {
    // The peer's frames meet the to_dut filters before the fabric; the
    // trace records them as they reach the DUT.
    trace::record probe;  // views into `fr`, alive for this call
    probe.d = trace::dir::to_dut;
    probe.bytes = fr;
    probe.dec = wire::decode_ethernet(probe.bytes);
    auto fate = filters_.apply(probe);
    if (fate.dropped) {
        // Recorded, marked dropped, so the timeline shows it.
        auto& rec = tr_->add(s_.now(), trace::dir::to_dut, probe.bytes);
        rec.dropped = true;
        rec.action = fate.action;
        rec.step = fate.step;
        return;
    }
    forward(fabric::direction::b_to_a, fate, probe.bytes, via);
}

void case_exec::forward(fabric::direction d, const filter_set::fate& fate, core::bytes_view bytes, fabric::fabric* fab) {
    // The fabric copies a frame into its pool before anything else, so a
    // single send can use the caller's bytes (a trace record's are stable; a
    // probe's live for the call). A changed or duplicated frame gets a copy
    // of its own first.
    const bool own = fate.mark_ce || fate.duplicate;
    core::byte_buffer copy;
    if (own) copy.assign(bytes.begin(), bytes.end());
    if (fate.mark_ce) fabric::mark_ce(copy);
    const core::bytes_view out = own ? core::bytes_view(copy) : bytes;
    const unsigned copies = fate.duplicate ? 2 : 1;
    for (unsigned i = 0; i < copies; ++i) {
        if (fate.delay.count() > 0) {
            auto keep = std::make_shared<core::byte_buffer>(out.begin(), out.end());
            s_.after(fate.delay, [d, keep, fab] { fab->send(d, *keep); });
        } else {
            fab->send(d, out);
        }
    }
}

void case_exec::pin_dut_port(const trace::record& r) {
    if (!r.data()) return;
    const unsigned p = r.f().mrh.path_id;
    if (dut_pinned_.count(p) || p >= fab_->size()) return;
    dut_pinned_[p] = r.f().udp.sport;
    fab_->pin(r.f().udp.sport, p);
}

void case_exec::check_triggers(const trace::record& r) {
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
        const auto& st = p_.steps[i];
        if (!armed_ || !st.on || fired_[i]) continue;
        if (st.on->d != r.d) continue;
        if (!trace::matches(st.on->match, r)) continue;
        if (++trigger_count_[i] < st.on->nth) continue;
        fired_[i] = true;
        // Actions run right after this frame is handled (same time); they
        // may refer to it (inject template rnr).
        trigger_rec_[i] = r.index;
        step_due_[static_cast<int>(i)] = r.t;
        s_.after(0ns, [this, i] { run_step(static_cast<int>(i)); });
    }
}

// ------------------------------------------------------------ steps
void case_exec::run_step(int i) {
    // Real time. While the setup is being posted nothing runs: in the
    // simulation the setup is posted at once, before any frame. Later, during
    // an agent call, only steps that need the agent wait for it (and what
    // comes after them, to keep the order): an injection, a filter or a
    // peer-side post triggered by a frame of the DUT runs at once, as in the
    // simulation.
    const auto& step = p_.steps[static_cast<std::size_t>(i)];
    if (in_setup_ || (rpc_depth_ > 0 && (!deferred_.empty() || step.needs_agent))) {
        deferred_.push_back(i);
        rt_->stop();  // the running slice ends soon; execute() runs it
        return;
    }
    tr_->step_times[i] = s_.now();
    if (auto due = step_due_.find(i); due != step_due_.end()) {
        step_late_max_ = std::max(step_late_max_, s_.now() - due->second);
        note_late(due->second, s_.now() - due->second);
    }
    for (const auto& a : step.actions)
        if (auto st = act(a, i); !st && error_.empty()) error_ = a.at.str() + ": " + st.err().message;
}

void case_exec::premake_setup_payloads() {
    // Work requests are numbered in post order (post() below): count per post
    // action, once per peer for `peer: all`; the bytes are the same as post()
    // would make.
    constexpr std::uint64_t k_budget = 1ull << 30;  // beyond this, post() makes them
    std::uint64_t wr = next_wr_, bytes = 0;
    for (const auto& a : p_.setup) {
        const auto* p = std::get_if<post_op>(&a.o);
        if (!p) continue;
        const std::uint64_t reps = p->all_peers ? extra_.size() + 1 : 1;
        for (std::uint64_t r = 0; r < reps; ++r)
            for (std::uint64_t k = 0; k < p->count; ++k, ++wr) {
                if (p->k == post_op::kind::recv) continue;
                if (bytes + p->size > k_budget) return;
                bytes += p->size;
                premade_.emplace(wr, make_payload(wr, p->size));
            }
    }
}

core::byte_buffer case_exec::payload(std::uint64_t wr, std::size_t size) {
    if (auto it = premade_.find(wr); it != premade_.end() && it->second.size() == size) {
        auto b = std::move(it->second);
        premade_.erase(it);
        return b;
    }
    return make_payload(wr, size);
}

core::status case_exec::post(const post_op& a) {
    if (a.all_peers) {  // the same WRITEs from every peer
        for (unsigned k = 0; k <= extra_.size(); ++k) {
            post_op one = a;
            one.all_peers = false;
            one.peer = k;
            if (auto st = post(one); !st) return st;
        }
        return core::ok_status();
    }
    const bool is_recv = a.k == post_op::kind::recv;
    const bool on_dut = a.on_dut;
    const std::uint32_t count = a.count, size = a.size;
    const std::uint16_t stream = a.stream, tag = a.tag;
    const auto imm = a.imm;
    auto& obs = on_dut ? tr_->dut : tr_->peer;
    // Every message's bytes are made before the first post: in real time the
    // DUT starts sending on the first, and the engine reads nothing from the
    // wire while it fills megabytes.
    std::vector<core::byte_buffer> payloads;
    if (!is_recv)
        for (std::uint32_t k = 0; k < count; ++k) payloads.push_back(payload(next_wr_ + k, size));
    for (std::uint32_t k = 0; k < count; ++k) {
        const std::uint64_t wr = next_wr_++;
        trace::posted_wr p{wr, is_recv ? "recv" : a.k == post_op::kind::send ? "send" : "write", stream, tag, size, s_.now()};
        if (is_recv) {
            auto& off = on_dut ? dut_off_ : peer_off_;
            if (off + size > mem_size_) return core::error{"post_recv: memory exhausted (add a `memory` setup action)"};
            auto st = on_dut ? dut_->post_recv(dut_conn_, tag, dut_rkey_, off, size, wr)
                             : peer_->post_recv(peer_conn_, tag, peer_rkey_, off, size, wr);
            if (!st) return st;
            recvs_[{on_dut, tag}].push_back({off, size});
            off += size;
        } else {
            auto data = std::move(payloads[k]);
            core::status st = core::ok_status();
            if (a.k == post_op::kind::write && a.offset) {
                // At an explicit offset of the other side's region, possibly
                // out of bounds (MR-OOO-4): no memory expectation.
                const std::uint64_t o = *a.offset;
                st = on_dut ? dut_->post_write(dut_conn_, stream, data, peer_->mr_va(peer_rkey_) + o, peer_rkey_, wr, imm)
                            : peer_->post_write(peer_conn_, stream, data, dut_->mr_va(dut_rkey_) + o, dut_rkey_, wr, imm);
            } else if (a.k == post_op::kind::write) {
                // Into the other side's region, at its next free offset.
                auto& off = on_dut ? peer_off_ : dut_off_;
                if (off + size > mem_size_) return core::error{"post_write: memory exhausted (add a `memory` setup action)"};
                // Which peer writes (topology.peers > 1): `peer: K`, or `all` (one message each per count).
                endpoint::endpoint* ep = peer_.get();
                std::uint32_t conn = peer_conn_;
                if (!on_dut && a.peer > 0) {
                    if (a.peer > extra_.size()) return core::error{"post_write: no peer " + std::to_string(a.peer)};
                    ep = extra_[a.peer - 1].ep.get(), conn = extra_[a.peer - 1].conn;
                }
                // The expectation is stored (moved, not copied) before the
                // post: in real time, copying megabytes after it would hold
                // up the wire while the DUT is already sending.
                expected_.push_back({on_dut ? "peer" : "dut", wr, off, std::move(data), {}});
                const core::bytes_view d = expected_.back().expected;
                st = on_dut ? dut_->post_write(dut_conn_, stream, d, peer_->mr_va(peer_rkey_) + off, peer_rkey_, wr, imm)
                            : ep->post_write(conn, stream, d, dut_->mr_va(dut_rkey_) + off, dut_rkey_, wr, imm);
                off += size;
            } else {
                auto& list = sends_[{!on_dut, tag}];
                list.push_back({wr, std::move(data)});
                const core::bytes_view d = list.back().second;
                st = on_dut ? dut_->post_send(dut_conn_, stream, tag, d, wr, imm)
                            : peer_->post_send(peer_conn_, stream, tag, d, wr, imm);
            }
            if (!st) return st;
        }
        p.done = s_.now();
        obs.posted.push_back(p);
    }
    return core::ok_status();
}

core::status case_exec::act(const compiled_action& a, int step) {
    struct visitor {
        case_exec& x;
        int step;
        core::status operator()(const post_op& p) { return x.post(p); }
        core::status operator()(const memory_op&) { return core::ok_status(); }  // setup() registered the regions
        core::status operator()(const close_op& c) {
            return c.on_dut ? x.dut_->close(x.dut_conn_) : x.peer_->close(x.peer_conn_);
        }
        core::status operator()(const path_op& p) {
            if (p.path >= x.fab_->size()) return core::error{"no fabric path " + std::to_string(p.path)};
            if (p.to_peer) x.fab_->at(fabric::direction::a_to_b, p.path).set_failed(p.fail);
            if (p.to_dut) x.fab_->at(fabric::direction::b_to_a, p.path).set_failed(p.fail);
            return core::ok_status();
        }
        core::status operator()(const filter_op& f) {
            x.filters_.add(f, step);
            return core::ok_status();
        }
        core::status operator()(const skew_op& s) {
            x.filters_.add(s, step);
            return core::ok_status();
        }
        // Ends the wire filters an earlier step installed (a drop that lasts
        // until a frame is seen).
        core::status operator()(const lift_op& l) {
            x.filters_.lift(l.step);
            return core::ok_status();
        }
        // The peer changes its own entropy on path N (PathEpoch + 1).
        core::status operator()(const move_port_op& m) { return x.peer_->move_port(x.peer_conn_, m.path); }
        core::status operator()(const inject_op& j) {
            const wire::frame* trig = nullptr;
            if (step >= 0)
                if (auto it = x.trigger_rec_.find(static_cast<std::size_t>(step)); it != x.trigger_rec_.end())
                    trig = &x.tr_->frames[it->second].f();
            auto fr = peer::craft(*x.peer_, x.peer_conn_, j.fields, {x.dut_->mr_va(x.dut_rkey_), x.dut_rkey_, x.dut_addr_}, trig);
            if (!fr) return fr.err();
            // Injected frames bypass filters and fabric: straight onto the DUT's wire.
            auto& rec = x.tr_->add(x.s_.now(), trace::dir::to_dut, *fr);
            rec.injected = true;
            rec.step = step;
            rec.action = "injected by step " + std::to_string(step) + " (" + describe(j.fields) + ")";
            x.dut_->receive(rec.bytes);
            return core::ok_status();
        }
    };
    return std::visit(visitor{*this, step}, a.o);
}

std::string case_exec::describe(const std::map<std::string, std::string>& f) {
    std::string s;
    for (const auto& [k, v] : f) s += (s.empty() ? "" : ", ") + k + "=" + v;
    return s;
}

}  // namespace mrct::run::detail
