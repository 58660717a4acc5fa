// A case's steps in motion: triggers, timed steps, and the program's
// operations (posts, path failures, filters, injections).
#include "run/step_exec.h"

#include <algorithm>
#include <cstring>

#include "peer/craft.h"

namespace mrct::run::detail {

using core::nanos;
using namespace std::chrono_literals;

core::byte_buffer pattern(std::size_t n, std::uint64_t seed) {
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

// ------------------------------------------------------------ triggers
void step_exec::arm() {
    fired_.assign(p_.steps.size(), false);
    trigger_count_.assign(p_.steps.size(), 0);
    armed_ = true;
}

void step_exec::on_record(const trace::record& r) {
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
        const auto& st = p_.steps[i];
        if (!armed_ || !st.on || fired_[i]) continue;
        if (st.on->d != r.d) continue;
        if (!trace::matches(st.on->match, r)) continue;
        if (++trigger_count_[i] < st.on->nth) continue;
        fired_[i] = true;
        // Actions run right after this frame is handled (same time), or
        // `after` later; they may refer to it (inject template rnr). A step
        // that only sets filters, with no `after`, takes effect here, before
        // the next frame: scheduled for "now", it came after the frames the
        // peer or the DUT sent in the same turn, which passed the filter it
        // set (RTO-004 on a real wire: the ACK after the triggering one, sent
        // in the same turn, was to be withheld; D131). The triggering frame
        // has met the filters already (wire_tap::on_frame).
        trigger_rec_[i] = r.index;
        const nanos due = r.t + st.on->after;
        step_due_[static_cast<int>(i)] = due;
        if (st.on->after == nanos{0} && st.filters_only() && due <= s_.now()) {
            run_step(static_cast<int>(i));
            continue;
        }
        s_.at(std::max(s_.now(), due), [this, i] { run_step(static_cast<int>(i)); });
    }
}

bool step_exec::pending() const {
    if (!deferred_.empty()) return true;
    for (std::size_t i = 0; i < fired_.size(); ++i)
        if (fired_[i] && !tr_.step_times.count(static_cast<int>(i))) return true;
    return false;
}

std::vector<std::string> step_exec::steps_not_run() const {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
        if (tr_.step_times.count(static_cast<int>(i))) continue;
        const auto& st = p_.steps[i];
        std::string s = "step " + std::to_string(i) + " (";
        if (st.on) {
            const auto n = st.on->nth;
            const char* th = n % 100 / 10 == 1 ? "th" : n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
            s += "on the " + std::to_string(n) + th + " frame " + (st.on->d == trace::dir::from_dut ? "from" : "to") +
                 " the DUT" + (st.on->match.empty() ? "" : " matching " + fields_text(st.on->match));
            if (st.on->after.count()) s += ", after " + core::duration_text(st.on->after.count());
            if (i < trigger_count_.size()) s += "; " + std::to_string(trigger_count_[i]) + " matched";
        } else {
            s += "at " + core::duration_text(st.time.value_or(nanos{0}).count());
        }
        out.push_back(s + ")");
    }
    return out;
}

// ------------------------------------------------------------ steps
core::status step_exec::run_setup() {
    if (rt_) premake_setup_payloads();
    if (rt_) rt_->sync();  // local work (the peer's memory, the payloads) took wall time too
    in_setup_ = rt_ != nullptr;
    for (const auto& a : p_.setup)
        if (auto st = act(a, -1); !st) return core::error{a.at.str() + ": " + st.err().message};
    in_setup_ = false;
    return core::ok_status();
}

nanos step_exec::schedule_timed(nanos t0) {
    nanos last_timed = t0;
    for (std::size_t i = 0; i < p_.steps.size(); ++i) {
        const auto& st = p_.steps[i];
        if (!st.time) continue;
        last_timed = std::max(last_timed, t0 + *st.time);
        step_due_[static_cast<int>(i)] = t0 + *st.time;
        s_.at(t0 + *st.time, [this, i] {
            fired_[i] = true;
            run_step(static_cast<int>(i));
        });
    }
    return last_timed;
}

// Real time: a step that became due while an agent call was waiting runs
// here, after that call, never nested in it.
void step_exec::run_deferred() {
    while (!deferred_.empty()) {
        const int i = deferred_.front();
        deferred_.erase(deferred_.begin());
        run_step(i);
    }
}

void step_exec::run_step(int i) {
    // Real time (the header's re-entrancy rules): while the setup is being
    // posted nothing runs; during an agent call, steps that need the agent
    // wait for it, and what comes after them.
    const auto& step = p_.steps[static_cast<std::size_t>(i)];
    if (in_setup_ || (rpc_depth_ > 0 && (!deferred_.empty() || step.needs_agent))) {
        deferred_.push_back(i);
        rt_->stop();  // the running slice ends soon; the case's loop runs it
        return;
    }
    tr_.step_times[i] = s_.now();
    if (auto due = step_due_.find(i); due != step_due_.end()) {
        late_.step_late_max = std::max(late_.step_late_max, s_.now() - due->second);
        late_.note(due->second, s_.now() - due->second);
    }
    for (const auto& a : step.actions)
        if (auto st = act(a, i); !st) err_.set(a.at.str() + ": " + st.err().message);
}

// ------------------------------------------------------------ posts
core::byte_buffer step_exec::make_payload(std::uint64_t wr, std::size_t size) const {
    return pattern(size, core::rng::sub_seed(seed_, "payload", wr));
}

void step_exec::premake_setup_payloads() {
    // Work requests are numbered in post order (post() below): count per post
    // action, once per peer for `peer: all`; the bytes are the same as post()
    // would make.
    constexpr std::uint64_t k_budget = 1ull << 30;  // beyond this, post() makes them
    std::uint64_t wr = next_wr_, bytes = 0;
    for (const auto& a : p_.setup) {
        const auto* p = std::get_if<post_op>(&a.o);
        if (!p) continue;
        const std::uint64_t reps = p->all_peers ? w_.extra.size() + 1 : 1;
        for (std::uint64_t r = 0; r < reps; ++r)
            for (std::uint64_t k = 0; k < p->count; ++k, ++wr) {
                if (p->k == post_op::kind::recv) continue;
                if (bytes + p->size > k_budget) return;
                bytes += p->size;
                premade_.emplace(wr, make_payload(wr, p->size));
            }
    }
}

core::byte_buffer step_exec::payload(std::uint64_t wr, std::size_t size) {
    if (auto it = premade_.find(wr); it != premade_.end() && it->second.size() == size) {
        auto b = std::move(it->second);
        premade_.erase(it);
        return b;
    }
    return make_payload(wr, size);
}

core::status step_exec::post(const post_op& a) {
    if (a.all_peers) {  // the same WRITEs from every peer
        for (unsigned k = 0; k <= w_.extra.size(); ++k) {
            post_op one = a;
            one.all_peers = false;
            one.peer = k;
            if (auto st = post(one); !st) return st;
        }
        return core::ok_status();
    }
    const bool is_recv = a.k == post_op::kind::recv;
    const bool on_dut = a.on_dut;
    const std::uint32_t size = a.size;
    auto& obs = on_dut ? tr_.dut : tr_.peer;
    auto& peer = *w_.peer;
    // Every message's bytes are made before the first post: in real time the
    // DUT starts sending on the first, and the engine reads nothing from the
    // wire while it fills megabytes.
    std::vector<core::byte_buffer> payloads;
    if (!is_recv)
        for (std::uint32_t k = 0; k < a.count; ++k) payloads.push_back(payload(next_wr_ + k, size));
    for (std::uint32_t k = 0; k < a.count; ++k) {
        // Real time: the post starts at the wall clock, not when the step
        // began (making its payloads took time): its time in the trace, the
        // engine's first packets and its timers.
        if (rt_) rt_->sync();
        const std::uint64_t wr = next_wr_++;
        trace::posted_wr p{wr, is_recv ? "recv" : a.k == post_op::kind::send ? "send" : "write", a.stream, a.tag, size, s_.now()};
        if (is_recv) {
            auto& off = on_dut ? dut_off_ : peer_off_;
            if (off + size > w_.mem_size) return core::error{"post_recv: memory exhausted (add a `memory` setup action)"};
            auto st = on_dut ? dut_.post_recv(w_.dut_conn, a.tag, w_.dut_rkey, off, size, wr)
                             : peer.post_recv(w_.peer_conn, a.tag, w_.peer_rkey, off, size, wr);
            if (!st) return st;
            recvs_[{on_dut, a.tag}].push_back({off, size});
            off += size;
        } else {
            // Shared by the expectation and the engine's endpoint: a post
            // copies nothing (in real time a 64 MiB copy, its pages faulted
            // in, held the wire for 200 ms after the first packets left).
            auto data = std::make_shared<const core::byte_buffer>(std::move(payloads[k]));
            const core::bytes_view d = *data;
            core::status st = core::ok_status();
            if (a.k == post_op::kind::write && a.offset) {
                // At an explicit offset of the other side's region, possibly
                // out of bounds (MR-OOO-4): no memory expectation.
                const std::uint64_t o = *a.offset;
                st = on_dut ? dut_.post_write(w_.dut_conn, a.stream, d, peer.mr_va(w_.peer_rkey) + o, w_.peer_rkey, wr, a.imm)
                            : peer.post_write(w_.peer_conn, a.stream, data, dut_.mr_va(w_.dut_rkey) + o, w_.dut_rkey, wr, a.imm);
            } else if (a.k == post_op::kind::write) {
                // Into the other side's region, at its next free offset.
                auto& off = on_dut ? peer_off_ : dut_off_;
                if (off + size > w_.mem_size) return core::error{"post_write: memory exhausted (add a `memory` setup action)"};
                // Which peer writes (topology.peers > 1): `peer: K`, or `all` (one message each per count).
                endpoint::endpoint* ep = &peer;
                std::uint32_t conn = w_.peer_conn;
                if (!on_dut && a.peer > 0) {
                    if (a.peer > w_.extra.size()) return core::error{"post_write: no peer " + std::to_string(a.peer)};
                    ep = w_.extra[a.peer - 1].ep.get(), conn = w_.extra[a.peer - 1].conn;
                }
                // The expectation is stored before the post: in real time,
                // work after it would hold up the wire while the DUT is
                // already sending.
                expected_.push_back({on_dut ? "peer" : "dut", wr, off, data, {}});
                st = on_dut ? dut_.post_write(w_.dut_conn, a.stream, d, peer.mr_va(w_.peer_rkey) + off, w_.peer_rkey, wr, a.imm)
                            : ep->post_write(conn, a.stream, data, dut_.mr_va(w_.dut_rkey) + off, w_.dut_rkey, wr, a.imm);
                off += size;
            } else {
                sends_[{!on_dut, a.tag}].push_back({wr, data});
                st = on_dut ? dut_.post_send(w_.dut_conn, a.stream, a.tag, d, wr, a.imm)
                            : peer.post_send(w_.peer_conn, a.stream, a.tag, data, wr, a.imm);
            }
            if (!st) return st;
        }
        p.done = s_.now();
        obs.posted.push_back(p);
    }
    return core::ok_status();
}

std::vector<trace::memory_check> step_exec::memory_expectations() {
    auto out = std::move(expected_);
    for (const auto& [key, list] : sends_) {
        auto it = recvs_.find(key);
        if (it == recvs_.end()) continue;
        for (std::size_t k = 0; k < list.size() && k < it->second.size(); ++k)
            if (list[k].second->size() <= it->second[k].second)
                out.push_back({key.first ? "dut" : "peer", list[k].first, it->second[k].first, list[k].second, {}});
    }
    return out;
}

// ------------------------------------------------------------ operations
core::status step_exec::act(const compiled_action& a, int step) {
    struct visitor {
        step_exec& x;
        int step;
        const plan::loc& at;
        core::status operator()(const post_op& p) { return x.post(p); }
        core::status operator()(const memory_op&) { return core::ok_status(); }  // the regions were registered at set-up
        core::status operator()(const close_op& c) {
            auto st = c.on_dut ? x.dut_.close(x.w_.dut_conn) : x.w_.peer->close(x.w_.peer_conn);
            auto& obs = c.on_dut ? x.tr_.dut : x.tr_.peer;
            if (st && !obs.close_done) obs.close_done = x.s_.now();
            return st;
        }
        core::status operator()(const path_op& p) {
            auto& fab = *x.w_.fab;
            if (p.path >= fab.size()) return core::error{"no fabric path " + std::to_string(p.path)};
            if (p.to_peer) fab.at(fabric::direction::a_to_b, p.path).set_failed(p.fail);
            if (p.to_dut) fab.at(fabric::direction::b_to_a, p.path).set_failed(p.fail);
            return core::ok_status();
        }
        core::status operator()(const filter_op& f) {
            x.tap_.filters().add(f, step, at);
            return core::ok_status();
        }
        core::status operator()(const skew_op& s) {
            x.tap_.filters().add(s, step);
            return core::ok_status();
        }
        // Ends the wire filters an earlier step installed (a drop that lasts
        // until a frame is seen).
        core::status operator()(const lift_op& l) {
            x.tap_.filters().lift(l.step);
            return core::ok_status();
        }
        // The peer changes its own entropy on path N (PathEpoch + 1).
        core::status operator()(const move_port_op& m) { return x.w_.peer->move_port(x.w_.peer_conn, m.path); }
        core::status operator()(const inject_op& j) {
            const wire::frame* trig = nullptr;
            if (step >= 0)
                if (auto it = x.trigger_rec_.find(static_cast<std::size_t>(step)); it != x.trigger_rec_.end())
                    trig = &x.tr_.frames[it->second].f();
            auto fr = peer::craft(*x.w_.peer, x.w_.peer_conn, j.fields,
                                  {x.dut_.mr_va(x.w_.dut_rkey), x.w_.dut_rkey, x.w_.dut_addr}, trig);
            if (!fr) return fr.err();
            x.tap_.inject(*fr, step, "injected by step " + std::to_string(step) + " (" + fields_text(j.fields) + ")");
            return core::ok_status();
        }
    };
    return std::visit(visitor{*this, step, a.at}, a.o);
}

}  // namespace mrct::run::detail
