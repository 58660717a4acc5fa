#include "assertions/ctrl_requests.h"

#include "assertions/assertion.h"
#include "wire/ctrl.h"

namespace mrct::assertions {

using namespace wire;

namespace {

// The request a DUT's CTRL frame makes, or the one a CTRL frame to the DUT
// answers (ACCEPT/REJECT to the SRC_CONN_ID, CLOSE_ACK, RNR_SYNC,
// PATH_RESET_ACK echoing both fields); nullopt for any other CTRL.
std::optional<ctrl_request> request_of(const trace::record& r) {
    const auto& f = r.f();
    const bool from_dut = r.d == trace::dir::from_dut;
    const auto t = static_cast<ctrl_type>(f.ctrlh.type);
    std::optional<ctrl_type> req;  // the request type this frame makes or answers
    if (from_dut) {
        if (t == ctrl_type::connect || t == ctrl_type::close || t == ctrl_type::rnr_query || t == ctrl_type::path_reset) req = t;
    } else {
        switch (t) {
        case ctrl_type::accept:
        case ctrl_type::reject: req = ctrl_type::connect; break;
        case ctrl_type::close_ack: req = ctrl_type::close; break;
        case ctrl_type::rnr_sync: req = ctrl_type::rnr_query; break;
        case ctrl_type::path_reset_ack: req = ctrl_type::path_reset; break;
        default: break;
        }
    }
    if (!req) return std::nullopt;
    const auto v = read_ctrl_tlvs(f.tlvs);
    ctrl_request k{far_end(r), *req};
    if (*req == ctrl_type::connect) k.disc = from_dut ? v.src_conn_id.value_or(0) : f.bth.dest_qp;
    if (*req == ctrl_type::path_reset) {
        const bool full = v.path_id && v.initial_ppsn && !v.initial_ppsn->empty();
        if (!from_dut && !full) return std::nullopt;  // an ACK echoing nothing ends nothing
        k.disc = (std::uint64_t{v.path_id.value_or(0)} << 32) | (full ? v.initial_ppsn->front() : 0);
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

}  // namespace mrct::assertions
