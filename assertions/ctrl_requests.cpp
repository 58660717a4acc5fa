#include "assertions/ctrl_requests.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "assertions/assertion.h"
#include "assertions/checks.h"
#include "core/serial.h"
#include "wire/ctrl.h"

namespace mrct::assertions {

using namespace wire;

namespace {

// The request a CTRL frame of the requester's makes, or the one a CTRL
// frame of the other side answers (ACCEPT/REJECT to the SRC_CONN_ID,
// CLOSE_ACK, RNR_SYNC, PATH_RESET_ACK echoing both fields, PROBE_REPLY
// echoing PATH_ID and NONCE); nullopt for any other CTRL. `dut_requests`:
// the DUT is the requester (ctrl_book), else the engine (quickest_answer).
std::optional<ctrl_request> request_of(const trace::record& r, bool dut_requests = true) {
    const auto& f = r.f();
    const bool from_requester = (r.d == trace::dir::from_dut) == dut_requests;
    const auto t = static_cast<ctrl_type>(f.ctrlh.type);
    std::optional<ctrl_type> req;  // the request type this frame makes or answers
    if (from_requester) {
        if (t == ctrl_type::connect || t == ctrl_type::close || t == ctrl_type::rnr_query || t == ctrl_type::path_reset ||
            (!dut_requests && t == ctrl_type::probe))
            req = t;
    } else {
        switch (t) {
        case ctrl_type::accept:
        case ctrl_type::reject: req = ctrl_type::connect; break;
        case ctrl_type::close_ack: req = ctrl_type::close; break;
        case ctrl_type::rnr_sync: req = ctrl_type::rnr_query; break;
        case ctrl_type::path_reset_ack: req = ctrl_type::path_reset; break;
        case ctrl_type::probe_reply:
            if (!dut_requests) req = ctrl_type::probe;
            break;
        default: break;
        }
    }
    if (!req) return std::nullopt;
    const auto v = read_ctrl_tlvs(f.tlvs);
    ctrl_request k{far_end(r), *req};
    if (*req == ctrl_type::connect) k.disc = from_requester ? v.src_conn_id.value_or(0) : f.bth.dest_qp;
    if (*req == ctrl_type::path_reset) {
        const bool full = v.path_id && v.initial_ppsn && !v.initial_ppsn->empty();
        if (!from_requester && !full) return std::nullopt;  // an ACK echoing nothing ends nothing
        k.disc = (std::uint64_t{v.path_id.value_or(0)} << 32) | (full ? v.initial_ppsn->front() : 0);
    }
    if (*req == ctrl_type::probe) {
        if (!v.path_id || !v.nonce) return std::nullopt;
        k.disc = (std::uint64_t{*v.path_id} << 32) | *v.nonce;
    }
    return k;
}

}  // namespace

std::optional<ctrl_book::step> ctrl_book::take(const trace::record& r) {
    if (!r.is(opcode::ctrl)) return std::nullopt;
    if (r.d == trace::dir::to_dut) {
        if (!r.reached_dut()) return std::nullopt;  // an answer dropped on its way never ended anything
        if (r.f().ctrlh.type == static_cast<std::uint8_t>(ctrl_type::probe_reply)) {
            // After the retry limit a PATH_RESET waits for the next PROBE_REPLY, which
            // starts a new round of it (§4: "failed until the next PROBE_REPLY").
            const auto path = read_ctrl_tlvs(r.f().tlvs).path_id;
            if (!path) return std::nullopt;
            const auto far = far_end(r);
            std::erase_if(open_, [&](const auto& kv) {
                return kv.first.far == far && kv.first.type == ctrl_type::path_reset && (kv.first.disc >> 32) == *path;
            });
        } else if (auto k = request_of(r)) {
            open_.erase(*k);
        }
        return std::nullopt;
    }
    const auto k = request_of(r);
    if (!k) return std::nullopt;
    auto [it, fresh] = open_.try_emplace(*k);
    step st{k->type, !fresh, it->second, {}};
    auto& e = it->second;
    ++e.sent;
    e.last = r.t;
    e.last_rec = r.index;
    st.now = e;
    return st;
}

std::optional<core::nanos> ctrl_book::may_repeat(unsigned limit) const {
    std::optional<core::nanos> latest;
    for (const auto& [_, e] : open_)
        if (e.sent < limit && (!latest || e.last > *latest)) latest = e.last;
    return latest;
}

namespace {

// A frame of the engine's the DUT's own frames show it received, with the
// DUT's first answer to it (D146, D148).
struct answer {
    enum class kind { data, request, accept } what = kind::data;
    ctrl_type type = ctrl_type::connect;  // a request's
    bool again = false;                   // the same request answered before (it went out anew since)
    // The copies that reached the DUT before the answer: all of them, and
    // those the plan did not craft (injected); when the first of each went.
    unsigned copies = 0, plain_copies = 0;
    core::nanos first{0}, first_plain{0};
    core::nanos at{0};
};

// Walks the trace once, calling `on(answer)` for each of the engine's frames
// the DUT's frames show it received: a data packet at the first ACK naming
// it (TrigPPSN), a CTRL request of the engine's (CONNECT, CLOSE, RNR_QUERY,
// PATH_RESET, PROBE) at its answer (opened anew by a copy after that), an
// ACCEPT at the DUT's first frame to the connection it names (its own
// CONNECTs aside: a repeat may cross the ACCEPT). Frames that reached the
// DUT only (not dropped on the way), decoded.
template <class F>
void for_each_answer(const trace::trace& tr, F&& on) {
    struct sent_frame {
        answer a;
        bool answered = false;
        void add(const trace::record& r) {
            if (!a.copies++) a.first = r.t;
            if (r.injected) return;
            if (!a.plain_copies++) a.first_plain = r.t;
        }
        void answer_at(answer::kind k, core::nanos t, F& f) {
            a.what = k;
            a.at = t;
            f(a);
            answered = true;
        }
    };
    std::map<std::tuple<std::string, unsigned, std::uint32_t>, sent_frame> data;  // far end, path, PPSN
    std::map<ctrl_request, sent_frame> asked;
    std::set<ctrl_request> answered_before;
    std::map<std::pair<std::string, std::uint32_t>, sent_frame> accepted;  // far end, the engine's SRC_CONN_ID
    for (const auto& r : tr.frames) {
        if (r.d == trace::dir::to_dut) {
            if (!r.reached_dut() || !r.ok()) continue;
            if (r.data()) {
                data[{far_end(r), r.f().mrh.path_id, r.f().bth.psn}].add(r);
            } else if (r.is(opcode::ctrl)) {
                if (r.f().ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept)) {
                    if (auto id = read_ctrl_tlvs(r.f().tlvs).src_conn_id) accepted[{far_end(r), *id}].add(r);
                } else if (auto k = request_of(r, false)) {
                    asked[*k].add(r);
                }
            }
            continue;
        }
        if (!r.ok()) continue;
        if (r.is(opcode::ack)) {
            const auto& a = r.f().ackh;
            // A later ACK naming it says nothing more.
            if (auto it = data.find({far_end(r), a.path_id, a.trig_ppsn.ppsn()}); it != data.end() && !it->second.answered)
                it->second.answer_at(answer::kind::data, r.t, on);
        }
        const bool ctrl = r.is(opcode::ctrl);
        if (!(ctrl && r.f().ctrlh.type == static_cast<std::uint8_t>(ctrl_type::connect)))
            if (auto it = accepted.find({far_end(r), r.f().bth.dest_qp}); it != accepted.end() && !it->second.answered)
                it->second.answer_at(answer::kind::accept, r.t, on);
        if (!ctrl) continue;
        if (auto k = request_of(r, false))
            if (auto it = asked.find(*k); it != asked.end()) {
                it->second.a.type = k->type;
                it->second.a.again = !answered_before.insert(*k).second;
                it->second.answer_at(answer::kind::request, r.t, on);
                asked.erase(it);
            }
    }
}

}  // namespace

// D146. The engine's requests that a conforming DUT answers at once:
// CONNECT, PATH_RESET and PROBE (not CLOSE, whose answer may wait for the
// connection's data, nor RNR_QUERY, whose answer waits for a receive). A
// request the plan crafted (injected) may rightly go unanswered: not taken.
// Where the DUT opened the connection, the engine's ACCEPT is the request
// and the DUT's first frame to the connection it names the answer: never
// sooner than the round trip, later where the DUT had nothing to send yet
// (a time too long only makes fewer failures stand). And a data packet the
// engine sent once to the DUT's ACK naming it (TrigPPSN): the quickest, as a
// conforming DUT acknowledges at once on AckReq (a slow one's ACKs are no
// quicker than its CONNECT's answer, so they lower nothing for it). Where a
// second copy went out before the answer, the answer may be the second's:
// the time from the first is not known to be the DUT's.
std::optional<core::nanos> quickest_answer(const trace::trace& tr) {
    std::optional<core::nanos> best;
    for_each_answer(tr, [&best](const answer& a) {
        std::optional<core::nanos> d;
        switch (a.what) {
        case answer::kind::data:  // sent once, crafted or not
            if (a.copies == 1) d = a.at - a.first;
            break;
        case answer::kind::request:  // the engine's own, its one copy
            if (a.type != ctrl_type::close && a.type != ctrl_type::rnr_query && a.copies == 1 && a.plain_copies == 1)
                d = a.at - a.first;
            break;
        case answer::kind::accept:  // its first copy of the engine's own: repeats invite the same
            if (a.plain_copies) d = a.at - a.first_plain;
            break;
        }
        if (d && *d >= core::nanos{0} && (!best || *d < *best)) best = *d;
    });
    return best;
}

// D148. Frames of the engine's the DUT's own frames show it received: each
// data packet an ACK of the DUT's names (TrigPPSN), each request of the
// engine's (CONNECT, CLOSE, RNR_QUERY, PATH_RESET, PROBE) the DUT answered,
// each ACCEPT of the engine's after which the DUT sent to the connection it
// names. Distinct frames: at least one copy of each reached the DUT.
std::uint64_t received_for_sure(const trace::trace& tr) {
    std::uint64_t n = 0;
    for_each_answer(tr, [&n](const answer& a) { n += !a.again; });
    return n;
}

// D150. The DUT's new data packets (no RETX) that reached the engine after a
// later one of the same flow: the same far end, connection, path, PathEpoch
// and UDP source port. A sender numbers a path's packets as it sends them
// (PPSN + 1 each), so in a flow's new packets a lower PPSN after a higher
// one was reordered on the way.
std::uint64_t reordered_from_dut(const trace::trace& tr) {
    std::map<std::tuple<std::string, std::uint32_t, unsigned, unsigned, std::uint16_t>, std::uint32_t> highest;
    std::uint64_t n = 0;
    for (const auto& r : tr.frames) {
        if (r.d != trace::dir::from_dut || !r.data()) continue;
        const auto& f = r.f();
        if (f.mrh.flags & k_flag_retx) continue;
        const auto k = std::make_tuple(far_end(r), f.bth.dest_qp, unsigned{f.mrh.path_id}, unsigned{f.mrh.path_epoch}, f.udp.sport);
        auto [it, fresh] = highest.try_emplace(k, f.bth.psn);
        if (fresh) continue;
        const std::uint32_t ahead = core::psn24::diff(f.bth.psn, it->second);
        if (ahead == 0) continue;  // the same packet again: a copy, not an inversion
        if (ahead >= core::psn24::k_half) ++n;
        else it->second = f.bth.psn;
    }
    return n;
}

// D150. The engine's data packets the DUT's ACKs show arrived after a later
// one of the same flow: an ACK triggered by packet u (TrigPPSN) leaves out
// t, sent before u on the same path and source port, and a later ACK covers
// t, each sent once, with nothing below t on that path sent again between
// the two ACKs. Arriving in order, t would have been in u's ACK. A DUT that
// leaves received packets out of its ACKs (no SACK bits) covers t later only
// through its CumAck, after what was missing below t came again: not
// counted.
std::uint64_t reordered_to_dut(const trace::trace& tr) {
    using flow = std::pair<std::string, unsigned>;  // far end, path
    struct sent_packet {
        std::size_t rec = 0;
        std::uint16_t sport = 0;
        unsigned copies = 0;
    };
    std::map<flow, std::map<std::uint32_t, sent_packet>> sent;
    std::map<flow, std::vector<std::pair<std::size_t, std::uint32_t>>> sends;  // every send: (record, PPSN)
    std::map<flow, std::map<std::uint32_t, std::size_t>> left_out;  // PPSN -> the ACK that left it out
    std::uint64_t n = 0;
    for (const auto& r : tr.frames) {
        if (r.reached_dut() && r.data()) {
            const flow fl{far_end(r), r.f().mrh.path_id};
            auto& e = sent[fl][r.f().bth.psn];
            if (!e.copies) e = {r.index, r.f().udp.sport, 0};
            ++e.copies;
            sends[fl].push_back({r.index, r.f().bth.psn});
            continue;
        }
        if (r.d != trace::dir::from_dut || !r.is(opcode::ack)) continue;
        const auto& a = r.f().ackh;
        const flow fl{far_end(r), a.path_id};
        auto fs = sent.find(fl);
        if (fs == sent.end()) continue;
        const std::uint32_t cum = r.f().bth.psn;
        // The packets left out before that this ACK now covers.
        if (auto lo = left_out.find(fl); lo != left_out.end()) {
            for (auto it = lo->second.begin(); it != lo->second.end();) {
                if (!checks::covers(r.f(), it->first)) {
                    ++it;
                    continue;
                }
                const auto& v = sends[fl];
                auto from = std::upper_bound(v.begin(), v.end(), std::make_pair(it->second, ~std::uint32_t{0}));
                bool again_below = false;
                for (; from != v.end() && !again_below; ++from) again_below = core::psn24::lt(from->second, it->first);
                if (!again_below && fs->second[it->first].copies == 1) ++n;
                it = lo->second.erase(it);
            }
        }
        const auto trig = fs->second.find(a.trig_ppsn.ppsn());
        if (trig == fs->second.end() || trig->second.copies != 1) continue;
        // What this ACK leaves out of the 256 PPSNs from its CumAck on that
        // went before its trigger on the same port.
        for (std::uint32_t d = 0; d < 256; ++d) {
            if (d > 0 && a.sack.test(d)) continue;
            const std::uint32_t t = core::psn24::add(cum, d);
            auto e = fs->second.find(t);
            if (e == fs->second.end() || e->second.copies != 1 || e->second.rec >= trig->second.rec ||
                e->second.sport != trig->second.sport)
                continue;
            left_out[fl].try_emplace(t, r.index);
        }
    }
    return n;
}

}  // namespace mrct::assertions
