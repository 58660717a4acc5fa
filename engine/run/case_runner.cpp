// One test case: DUT and peer over the fabric in virtual time, plan steps as
// events, every frame on the DUT's wire recorded, then the assertions.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>

#include "core/units.h"
#include "fabric/fabric.h"
#include "fabric/stage.h"
#include "peer/craft.h"
#include "run/actions.h"
#include "run/runner.h"
#include "sim/drivers.h"

namespace mrct::run {

using core::nanos;
using namespace std::chrono_literals;

namespace {

const endpoint::address k_dut_addr{{0x02, 0, 0, 0, 0, 0x01}, {10, 0, 0, 1}};
const endpoint::address k_peer_addr{{0x02, 0, 0, 0, 0, 0x02}, {10, 0, 0, 2}};

std::string text(const plan::args& a, const std::string& k, const std::string& def = "") {
    auto it = a.find(k);
    return it == a.end() ? def : it->second.text;
}

nanos dur(const plan::args& a, const std::string& k, nanos def) {
    auto it = a.find(k);
    if (it == a.end()) return def;
    auto v = core::parse_duration_ns(it->second.text);
    return v ? nanos{*v} : def;
}

core::byte_buffer pattern(std::size_t n, std::uint64_t seed) {
    core::byte_buffer b(n);
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (std::size_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = static_cast<std::uint8_t>(x);
    }
    return b;
}

class case_exec {
public:
    case_exec(const plan::test_case& c, std::unique_ptr<dut::dut> d, std::uint64_t seed)
        : c_(c), dut_(std::move(d)), seed_(seed), tr_(std::make_shared<trace::trace>()), filters_(s_) {}

    case_result run() {
        case_result r;
        r.id = c_.id;
        r.title = c_.title;
        r.level = c_.level;
        r.area = c_.area;
        r.role = c_.role;
        r.clauses = c_.clauses;
        r.seed = seed_;
        const auto info = dut_->hello();
        for (const auto& cap : c_.needs)
            if (std::find(info.capabilities.begin(), info.capabilities.end(), cap) == info.capabilities.end()) {
                r.v = verdict::skipped;
                r.reason = "the DUT lacks capability '" + cap + "'";
                return r;
            }
        auto wall0 = std::chrono::steady_clock::now();
        if (auto st = setup(); !st) {
            r.v = verdict::error;
            r.reason = st.err().message;
            return r;
        }
        if (auto st = execute(); !st) {
            r.v = verdict::error;
            r.reason = st.err().message;
            return r;
        }
        collect();
        r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
        r.sim_time = tr_->end;
        r.frames = tr_->frames.size();
        r.events = s_.events_run();
        evaluate(r);
        r.tr = tr_;
        return r;
    }

private:
    // ------------------------------------------------------------ set-up
    core::status setup() {
        // Endpoint configuration: topology.paths sets both, dut/peer maps override.
        std::map<std::string, std::string> dcfg, pcfg;
        const auto paths = text(c_.topology, "paths", "4");
        dcfg["num_paths"] = pcfg["num_paths"] = paths;
        for (const auto& [k, v] : c_.dut) dcfg[k] = v.text;
        for (const auto& [k, v] : c_.peer) pcfg[k] = v.text;
        if (auto st = dut_->configure(dcfg); !st) return core::error{"configuring the DUT: " + st.err().message};
        for (const auto& [k, v] : pcfg)
            if (auto st = endpoint::config_set(pcfg_, k, v); !st) return core::error{"peer: " + st.err().message};
        for (const auto& [k, v] : dcfg)
            if (k != "bug")
                if (auto st = endpoint::config_set(dut_cfg_, k, v); !st) return core::error{"dut: " + st.err().message};

        // Fabric: DUT = A, peer = B.
        fabric::fabric_config fc;
        fc.paths = std::max({dut_cfg_.num_paths, pcfg_.num_paths, 1u});
        fc.seed = seed_;
        const auto delay = text(c_.topology, "delay", "2us");
        fc.default_stages = {{"delay", {{"delay", delay}}}};
        if (c_.topology.count("rate"))
            fc.default_stages.push_back({"queue", {{"rate", text(c_.topology, "rate")}}});
        for (unsigned p = 0; p < fc.paths; ++p) {
            auto base = core::parse_duration_ns(delay).value_or(0);
            auto extra = core::parse_duration_ns(text(c_.topology, "path_delay." + std::to_string(p), "0")).value_or(0);
            std::vector<fabric::stage_spec> st = {{"delay", {{"delay", std::to_string(base + extra) + "ns"}}}};
            if (c_.topology.count("rate")) st.push_back({"queue", {{"rate", text(c_.topology, "rate")}}});
            fc.path_stages_ab[p] = st;
            fc.path_stages_ba[p] = st;
        }
        for (const auto& imp : c_.impair) {
            fabric::stage_spec spec{imp.name, {}};
            for (const auto& [k, v] : imp.a)
                if (k != "path" && k != "dir") spec.params[k] = v.text;
            const auto dir = text(imp.a, "dir", "to_peer");
            const auto which = text(imp.a, "path", "all");
            for (unsigned p = 0; p < fc.paths; ++p) {
                if (which != "all" && std::to_string(p) != which) continue;
                if (dir == "to_peer" || dir == "both") fc.path_stages_ab[p].push_back(spec);
                if (dir == "to_dut" || dir == "both") fc.path_stages_ba[p].push_back(spec);
            }
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

        if (auto st = dut_->start(s_, k_dut_addr, seed_ * 7919 + 11, [this](core::bytes_view fr) {
                on_frame(trace::dir::from_dut, fr, false);
            });
            !st)
            return core::error{"starting the DUT: " + st.err().message};
        peer_ = std::make_unique<endpoint::endpoint>(s_, pcfg_, k_peer_addr, seed_ * 104729 + 7,
                                                     [this](core::bytes_view fr) { to_dut(fr, fab_.get()); });

        // More peers (topology.peers, e.g. fair-share grants, MR-GR-3): each a
        // reference endpoint with its own address and its own fabric, like
        // senders behind different switches. They connect to the DUT.
        const unsigned npeers = static_cast<unsigned>(std::stoul(text(c_.topology, "peers", "1")));
        extra_.resize(npeers - 1);
        for (unsigned k = 0; k + 1 < npeers; ++k) {
            auto& x = extra_[k];
            x.addr = k_peer_addr;
            x.addr.mac[5] = static_cast<std::uint8_t>(3 + k);
            x.addr.ip[3] = static_cast<std::uint8_t>(3 + k);
            auto xfc = fc;
            xfc.seed = seed_ + 1000 + k;
            auto xf = fabric::fabric::create(s_, xfc);
            if (!xf) return core::error{"fabric: " + xf.err().message};
            x.fab = std::move(*xf);
            x.fab->set_receiver(fabric::direction::a_to_b, [this, k](core::bytes_view fr, const fabric::packet_meta&) {
                extra_[k].ep->receive(fr);
            });
            x.fab->set_receiver(fabric::direction::b_to_a, [this](core::bytes_view fr, const fabric::packet_meta&) {
                on_frame(trace::dir::to_dut, fr, false);
            });
            x.ep = std::make_unique<endpoint::endpoint>(s_, pcfg_, x.addr, seed_ * 104729 + 101 * (k + 1),
                                                        [this, k](core::bytes_view fr) { to_dut(fr, extra_[k].fab.get()); });
        }

        // Connection: the data sender opens it (with `both`, the DUT).
        const bool dut_sends = c_.role != "sender";
        if (dut_sends) {
            peer_->listen();
            dut_conn_ = dut_->connect(k_peer_addr);
        } else {
            dut_->listen();
            peer_conn_ = peer_->connect(k_dut_addr);
        }
        for (auto& x : extra_) x.conn = x.ep->connect(k_dut_addr);
        auto extras_up = [&] {
            for (const auto& x : extra_)
                if (!x.ep->established(x.conn)) return false;
            return dut_->accepted().size() >= extra_.size() + (dut_sends ? 0 : 1);
        };
        const nanos deadline = s_.now() + 20ms;
        while (s_.now() < deadline) {
            drv_.run_until(s_.now() + 10us);
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
        if (!extras_up()) return core::error{"not every peer connected to the DUT within 20 ms"};
        for (auto& x : extra_)
            if (auto w = x.ep->conn_wire(x.conn))
                for (unsigned i = 0; i < w->paths.size(); ++i) x.fab->pin(w->paths[i].port, i);
        if (!(dut_->established(dut_conn_) || (!dut_sends && !dut_->accepted().empty())))
            return core::error{"the connection between DUT and peer was not established within 20 ms"};
        // Fabric path i carries each side's path i at its first port.
        if (auto w = peer_->conn_wire(peer_conn_))
            for (unsigned i = 0; i < w->paths.size(); ++i) fab_->pin(w->paths[i].port, i);

        // Memory on both sides.
        std::size_t mem = 8u << 20;
        for (const auto& a : c_.setup)
            if (a.name == "memory") mem = static_cast<std::size_t>(std::stoull(text(a.a, "size", "8388608")));
        dut_rkey_ = dut_->register_mr(mem);
        peer_rkey_ = peer_->register_mr(mem);
        mem_size_ = mem;
        t0_ = s_.now();
        tr_->step_times[-1] = t0_;
        return core::ok_status();
    }

    // Frames: recording, step filters, triggers.
    void on_frame(trace::dir d, core::bytes_view fr, bool injected) {
        auto& rec = tr_->add(s_.now(), d, fr);
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
    fabric::fabric* fabric_to(const trace::record& r) {
        if (!extra_.empty() && r.ok() && r.f().has(wire::has_ipv4))
            for (auto& x : extra_)
                if (r.f().ipv4.dst == x.addr.ip) return x.fab.get();
        return fab_.get();
    }

    void to_dut(core::bytes_view fr, fabric::fabric* via) {
        // The peer's frames meet the to_dut filters before the fabric; the
        // trace records them as they reach the DUT.
        core::byte_buffer b(fr.begin(), fr.end());
        trace::record probe;
        probe.d = trace::dir::to_dut;
        probe.bytes = b;
        probe.dec = wire::decode_ethernet(probe.bytes);
        auto fate = filters_.apply(probe);
        if (fate.dropped) {
            // Recorded, marked dropped, so the timeline shows it.
            auto& rec = tr_->add(s_.now(), trace::dir::to_dut, b);
            rec.dropped = true;
            rec.action = fate.action;
            rec.step = fate.step;
            return;
        }
        forward(fabric::direction::b_to_a, fate, probe.bytes, via);
    }

    void forward(fabric::direction d, const filter_set::fate& fate, const core::byte_buffer& bytes, fabric::fabric* fab) {
        core::byte_buffer b = bytes;
        if (fate.mark_ce) fabric::mark_ce(b);
        const unsigned copies = fate.duplicate ? 2 : 1;
        for (unsigned i = 0; i < copies; ++i) {
            if (fate.delay.count() > 0) {
                auto keep = std::make_shared<core::byte_buffer>(b);
                s_.after(fate.delay, [d, keep, fab] { fab->send(d, *keep); });
            } else {
                fab->send(d, b);
            }
        }
    }

    void pin_dut_port(const trace::record& r) {
        if (!r.data()) return;
        const unsigned p = r.f().mrh.path_id;
        if (dut_pinned_.count(p) || p >= fab_->size()) return;
        dut_pinned_[p] = r.f().udp.sport;
        fab_->pin(r.f().udp.sport, p);
    }

    void check_triggers(const trace::record& r) {
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
            s_.after(0ns, [this, i] { run_step(static_cast<int>(i)); });
        }
    }

    // ------------------------------------------------------------ steps
    void run_step(int i) {
        tr_->step_times[i] = s_.now();
        for (const auto& a : c_.steps[static_cast<std::size_t>(i)].actions)
            if (auto st = act(a, i); !st && error_.empty()) error_ = a.at.str() + ": " + st.err().message;
    }

    // Default side of a post: the data sender for Sends and Writes, the data
    // receiver for receives. With role `both`, the DUT sends and the peer receives
    // unless `side` says otherwise.
    bool dut_side(const plan::action& a, bool sender_default) const {
        auto side = text(a.a, "side", "");
        if (side.empty()) return sender_default ? c_.role != "sender" : c_.role == "sender";
        return side == "dut";
    }

    core::status post(const plan::action& a) {
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
                auto data = pattern(size, seed_ * 1000003 + wr);
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
                    st = on_dut ? dut_->post_write(dut_conn_, stream, data, peer_->mr_va(peer_rkey_) + off, peer_rkey_, wr, imm)
                                : ep->post_write(conn, stream, data, dut_->mr_va(dut_rkey_) + off, dut_rkey_, wr, imm);
                    expected_.push_back({on_dut ? "peer" : "dut", wr, off, data, {}});
                    off += size;
                } else {
                    st = on_dut ? dut_->post_send(dut_conn_, stream, tag, data, wr, imm)
                                : peer_->post_send(peer_conn_, stream, tag, data, wr, imm);
                    sends_[{!on_dut, tag}].push_back({wr, data});
                }
                if (!st) return st;
            }
            obs.posted.push_back(p);
        }
        return core::ok_status();
    }

    core::status act(const plan::action& a, int step) {
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
            auto fr = peer::craft(*peer_, peer_conn_, fields, {dut_->mr_va(dut_rkey_), dut_rkey_, k_dut_addr}, trig);
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

    static std::string describe(const std::map<std::string, std::string>& f) {
        std::string s;
        for (const auto& [k, v] : f) s += (s.empty() ? "" : ", ") + k + "=" + v;
        return s;
    }

    core::status execute() {
        // Triggers see every frame from time 0, setup's own included.
        fired_.assign(c_.steps.size(), false);
        trigger_count_.assign(c_.steps.size(), 0);
        armed_ = true;
        for (const auto& a : c_.setup)
            if (auto st = act(a, -1); !st) return core::error{a.at.str() + ": " + st.err().message};
        nanos last_timed = t0_;
        for (std::size_t i = 0; i < c_.steps.size(); ++i) {
            const auto& st = c_.steps[i];
            if (!st.time) continue;
            auto t = core::parse_duration_ns(st.time->text);
            if (!t) return core::error{st.time->at.str() + ": bad time '" + st.time->text + "'"};
            last_timed = std::max(last_timed, t0_ + nanos{*t});
            s_.at(t0_ + nanos{*t}, [this, i] {
                fired_[i] = true;
                run_step(static_cast<int>(i));
            });
        }
        const nanos limit = t0_ + dur(c_.limits, "duration", 20ms);
        const nanos settle = dur(c_.limits, "settle", 1ms);
        std::optional<nanos> quiet_since;
        while (s_.now() < limit) {
            drv_.run_until(std::min(limit, s_.now() + 50us));
            drain();
            if (!error_.empty()) return core::error{error_};
            const bool done = s_.now() >= last_timed && all_done();
            if (done && !quiet_since) quiet_since = s_.now();
            if (!done) quiet_since.reset();
            if (quiet_since && s_.now() >= *quiet_since + settle) break;
            if (s_.size() == 0 && s_.now() >= last_timed) break;
        }
        drain();
        tr_->end = s_.now();
        return core::ok_status();
    }

    void drain() {
        for (auto& wc : dut_->poll()) tr_->dut.completions.push_back(convert(wc));
        for (auto& wc : peer_->poll()) tr_->peer.completions.push_back(convert(wc));
        for (auto& x : extra_)
            for (auto& wc : x.ep->poll()) tr_->peer.completions.push_back(convert(wc));
    }

    static trace::completion convert(const endpoint::completion& wc) {
        static const char* k_kind[] = {"send", "write", "recv", "recv_write_imm"};
        return {wc.wr_id, k_kind[static_cast<int>(wc.kind)], std::string(endpoint::wc_status_name(wc.status)), wc.stream,
                wc.tag, wc.stream_seq, wc.length, wc.time};
    }

    bool all_done() const {
        auto side_done = [](const trace::side_obs& o) {
            std::size_t want = 0, got = 0;
            for (const auto& p : o.posted) want += p.kind != "recv";
            for (const auto& c : o.completions) got += c.kind == "send" || c.kind == "write";
            return got >= want;
        };
        return side_done(tr_->dut) && side_done(tr_->peer);
    }

    // ------------------------------------------------------------ results
    void collect() {
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
        auto& p = tr_->p;
        p.num_paths = std::min(dut_cfg_.num_paths, pcfg_.num_paths);
        p.mtu = std::min(dut_cfg_.mtu, pcfg_.mtu);
        p.rto_initial = dut_cfg_.rto_initial;
        p.rto_min = dut_cfg_.rto_min;
        p.rto_max = dut_cfg_.rto_max;
        p.retry_limit = dut_cfg_.retry_limit;
        p.ack_every = dut_cfg_.ack_every;
        p.ack_delay = dut_cfg_.ack_delay;
        p.cwnd_initial = dut_cfg_.cwnd_initial;
        p.max_inflight = dut_cfg_.max_inflight;
        p.moves_after = dut_cfg_.moves_after;
        p.grant_idle = dut_cfg_.grant_idle;
        p.inbound_rate_bps = dut_cfg_.inbound_rate_bps;
    }

    void evaluate(case_result& r) {
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

    // The scheduler outlives everything that holds timers on it (DUT, peer, fabric).
    sim::scheduler s_;
    sim::virtual_driver drv_{s_};
    const plan::test_case& c_;
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
};

}  // namespace

case_result run_case(const plan::test_case& c, const dut_factory& make, std::uint64_t seed) {
    auto error = [&](std::string why) {
        case_result r;
        r.id = c.id;
        r.title = c.title;
        r.clauses = c.clauses;
        r.level = c.level;
        r.area = c.area;
        r.role = c.role;
        r.seed = seed;
        r.v = verdict::error;
        r.reason = std::move(why);
        return r;
    };
    auto d = make();
    if (!d) return error("DUT: " + d.err().message);
    try {
        return case_exec(c, std::move(*d), seed).run();
    } catch (const std::exception& e) {
        return error(std::string("internal error: ") + e.what());
    }
}

}  // namespace mrct::run
