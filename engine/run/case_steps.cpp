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
    for (std::size_t i = 0; i < c_.steps.size(); ++i) {
        const auto& st = c_.steps[i];
        if (!armed_ || !st.on || fired_[i]) continue;
        if ((st.on->dir == "from_dut") != (r.d == trace::dir::from_dut)) continue;
        if (!filter_set::matches(st.on->match, r)) continue;
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
    const auto& actions = c_.steps[static_cast<std::size_t>(i)].actions;
    auto agent = [&] { return std::any_of(actions.begin(), actions.end(), [this](const plan::action& a) { return needs_agent(a); }); };
    if (in_setup_ || (rpc_depth_ > 0 && (!deferred_.empty() || agent()))) {
        deferred_.push_back(i);
        rt_->stop();  // the running slice ends soon; execute() runs it
        return;
    }
    tr_->step_times[i] = s_.now();
    if (auto due = step_due_.find(i); due != step_due_.end()) {
        step_late_max_ = std::max(step_late_max_, s_.now() - due->second);
        note_late(due->second, s_.now() - due->second);
    }
    for (const auto& a : c_.steps[static_cast<std::size_t>(i)].actions)
        if (auto st = act(a, i); !st && error_.empty()) error_ = a.at.str() + ": " + st.err().message;
}

// An action that makes an agent call (the DUT's posts, closing its connection);
// the rest act on the engine's side of the wire. Sides as post() and act() take them.
bool case_exec::needs_agent(const plan::action& a) const {
    const bool recv = a.name == "post_recv";
    if (recv || a.name == "post_send" || a.name == "post_write" || a.name == "close") return dut_side(a, !recv);
    return false;
}

// Default side of a post: the data sender for Sends and Writes, the data
// receiver for receives. With role `both`, the DUT sends and the peer receives
// unless `side` says otherwise.
bool case_exec::dut_side(const plan::action& a, bool sender_default) const {
    auto side = text(a.a, "side", "");
    if (side.empty()) return sender_default ? c_.role != "sender" : c_.role == "sender";
    return side == "dut";
}

void case_exec::premake_setup_payloads() {
    // Work requests are numbered in post order (post() below): count per post
    // action, once per peer for `peer: all`. An action whose numbers do not
    // parse is left to post(), which reports it; the bytes of the rest are
    // the same as post() would make.
    constexpr std::uint64_t k_budget = 1ull << 30;  // beyond this, post() makes them
    std::uint64_t wr = next_wr_, bytes = 0;
    for (const auto& a : c_.setup) {
        if (a.name != "post_send" && a.name != "post_write" && a.name != "post_recv") continue;
        const auto count = core::parse_count(text(a.a, "count", "1"));
        const auto size = core::parse_count(text(a.a, "size", "4096"));
        if (!count || !size) return;
        const std::uint64_t reps = a.name == "post_write" && text(a.a, "peer") == "all" ? extra_.size() + 1 : 1;
        for (std::uint64_t r = 0; r < reps; ++r)
            for (std::uint64_t k = 0; k < *count; ++k, ++wr) {
                if (a.name == "post_recv") continue;
                if (bytes + *size > k_budget) return;
                bytes += *size;
                premade_.emplace(wr, make_payload(wr, *size));
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

core::status case_exec::post(const plan::action& a) {
    if (a.name == "post_write" && text(a.a, "peer") == "all") {  // the same WRITEs from every peer
        for (unsigned k = 0; k <= extra_.size(); ++k) {
            plan::action one = a;
            one.a["peer"].text = std::to_string(k);
            if (auto st = post(one); !st) return st;
        }
        return core::ok_status();
    }
    const bool is_recv = a.name == "post_recv";
    const bool on_dut = dut_side(a, !is_recv);
    const auto count = std::stoul(text(a.a, "count", "1"));
    const auto size = static_cast<std::uint32_t>(std::stoul(text(a.a, "size", "4096")));
    const auto stream = static_cast<std::uint16_t>(std::stoul(text(a.a, "stream", "0")));
    const auto tag = static_cast<std::uint16_t>(std::stoul(text(a.a, "tag", "1")));
    std::optional<std::uint32_t> imm;
    if (a.a.count("imm")) imm = static_cast<std::uint32_t>(std::stoul(text(a.a, "imm"), nullptr, 0));
    auto& obs = on_dut ? tr_->dut : tr_->peer;
    // Every message's bytes are made before the first post: in real time the
    // DUT starts sending on the first, and the engine reads nothing from the
    // wire while it fills megabytes.
    std::vector<core::byte_buffer> payloads;
    if (!is_recv)
        for (unsigned long k = 0; k < count; ++k) payloads.push_back(payload(next_wr_ + k, size));
    for (unsigned long k = 0; k < count; ++k) {
        const std::uint64_t wr = next_wr_++;
        trace::posted_wr p{wr, is_recv ? "recv" : a.name == "post_send" ? "send" : "write", stream, tag, size, s_.now()};
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
            if (a.name == "post_write" && a.a.count("offset")) {
                // At an explicit offset of the other side's region, possibly
                // out of bounds (MR-OOO-4): no memory expectation.
                const std::uint64_t o = std::stoull(text(a.a, "offset"));
                st = on_dut ? dut_->post_write(dut_conn_, stream, data, peer_->mr_va(peer_rkey_) + o, peer_rkey_, wr, imm)
                            : peer_->post_write(peer_conn_, stream, data, dut_->mr_va(dut_rkey_) + o, dut_rkey_, wr, imm);
            } else if (a.name == "post_write") {
                // Into the other side's region, at its next free offset.
                auto& off = on_dut ? peer_off_ : dut_off_;
                if (off + size > mem_size_) return core::error{"post_write: memory exhausted (add a `memory` setup action)"};
                // Which peer writes (topology.peers > 1): `peer: K`, or `all` (one message each per count).
                endpoint::endpoint* ep = peer_.get();
                std::uint32_t conn = peer_conn_;
                if (!on_dut && a.a.count("peer")) {
                    const auto who = text(a.a, "peer");
                    const auto k = static_cast<unsigned>(std::stoul(who));
                    if (k > extra_.size()) return core::error{"post_write: no peer " + who};
                    if (k > 0) ep = extra_[k - 1].ep.get(), conn = extra_[k - 1].conn;
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

core::status case_exec::act(const plan::action& a, int step) {
    if (a.name == "post_send" || a.name == "post_write" || a.name == "post_recv") return post(a);
    if (a.name == "memory") return core::ok_status();
    if (a.name == "close") {
        return dut_side(a, true) ? dut_->close(dut_conn_) : peer_->close(peer_conn_);
    }
    if (a.name == "fail_path" || a.name == "restore_path") {
        const auto p = static_cast<unsigned>(std::stoul(text(a.a, "path")));
        if (p >= fab_->size()) return core::error{a.name + ": no fabric path " + std::to_string(p)};
        const auto dir = text(a.a, "dir", "both");
        const bool f = a.name == "fail_path";
        if (dir != "to_dut") fab_->at(fabric::direction::a_to_b, p).set_failed(f);
        if (dir != "to_peer") fab_->at(fabric::direction::b_to_a, p).set_failed(f);
        return core::ok_status();
    }
    if (a.name == "lift") {
        // Ends the wire filters an earlier step installed (a drop that lasts
        // until a frame is seen).
        const auto n = std::stoi(text(a.a, "step"));
        if (n < 0 || n >= static_cast<int>(c_.steps.size()) || n == step)
            return core::error{"lift: no other step " + std::to_string(n) + " (steps are numbered from 0)"};
        filters_.lift(n);
        return core::ok_status();
    }
    if (a.name == "move_port") {
        // The peer changes its own entropy on path N (PathEpoch + 1).
        return peer_->move_port(peer_conn_, static_cast<unsigned>(std::stoul(text(a.a, "path", "0"))));
    }
    if (a.name == "inject") {
        std::map<std::string, std::string> fields;
        for (const auto& [k, v] : a.a) fields[k] = v.text;
        const wire::frame* trig = nullptr;
        if (step >= 0)
            if (auto it = trigger_rec_.find(step); it != trigger_rec_.end()) trig = &tr_->frames[it->second].f();
        auto fr = peer::craft(*peer_, peer_conn_, fields, {dut_->mr_va(dut_rkey_), dut_rkey_, dut_addr_}, trig);
        if (!fr) return fr.err();
        // Injected frames bypass filters and fabric: straight onto the DUT's wire.
        auto& rec = tr_->add(s_.now(), trace::dir::to_dut, *fr);
        rec.injected = true;
        rec.step = step;
        rec.action = "injected by step " + std::to_string(step) + " (" + describe(fields) + ")";
        dut_->receive(rec.bytes);
        return core::ok_status();
    }
    return filters_.add(a, step);
}

std::string case_exec::describe(const std::map<std::string, std::string>& f) {
    std::string s;
    for (const auto& [k, v] : f) s += (s.empty() ? "" : ", ") + k + "=" + v;
    return s;
}

}  // namespace mrct::run::detail
