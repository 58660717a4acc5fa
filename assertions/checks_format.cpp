#include <map>
#include <string>

#include "assertions/checks.h"
#include "assertions/sender_view.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"

namespace mrct::assertions::checks {

using namespace wire;

std::string frames_list(const std::vector<std::size_t>& frames) {
    std::string s;
    for (std::size_t i = 0; i < frames.size() && i < 8; ++i) s += (i ? ", #" : "#") + std::to_string(frames[i]);
    if (frames.size() > 8) s += ", ...";
    return s;
}

// MR-HDR-1, MR-HDR-4, MR-HDR-6, MR-CC-5: every frame the DUT sends.
outcome wire_format(const context& c) {
    std::vector<std::size_t> bad;
    std::string first;
    std::size_t checked = 0;
    for (const auto& r : c.tr().frames) {
        if (r.d != trace::dir::from_dut) continue;
        ++checked;
        std::string why;
        if (is_mac_control(r.bytes)) {
            why = "an Ethernet PAUSE/PFC frame (MR-CC-5)";
        } else if (!r.ok()) {
            why = "a frame that does not decode: " + std::string(drop_reason_name(r.dec.dropped->reason)) + " at " +
                  std::string(layer_name(r.dec.dropped->where)) + " (MR-HDR-1)";
        } else {
            const auto& f = r.f();
            if (f.udp.dport != k_udp_port) why = "UDP dport " + std::to_string(f.udp.dport) + " (MR-HDR-1)";
            else if (f.bth.tver != 0) why = "BTH TVer " + std::to_string(f.bth.tver) + " (MR-HDR-1)";
            else if (f.bth.resv6 || f.bth.resv7) why = "BTH reserved bits set (MR-HDR-1)";
            else if (f.has(has_mrh) && (f.mrh.ver != 1 || (f.mrh.flags & k_flag_reserved_mask) || f.mrh.resv))
                why = "MRH Ver or reserved bits (MR-HDR-1)";
            else if (f.has(has_ackh) && (f.ackh.ver != 1 || (f.ackh.flags & k_ack_flag_reserved_mask) || f.ackh.resv ||
                                         f.ackh.resv2 || f.ackh.trig_ppsn.resv()))
                why = "ACKH Ver or reserved bits (MR-HDR-1)";
            else if (f.has(has_nakh) && (f.nakh.ver != 1 || f.nakh.resv || f.nakh.nak_ppsn.resv()))
                why = "NAKH Ver or reserved bits (MR-HDR-1)";
            else if (f.has(has_rnrh) &&
                     (f.rnrh.ver != 1 || f.rnrh.resv_timer || f.rnrh.resv_attempt || f.rnrh.ppsn.resv() || f.rnrh.resv))
                why = "RNRH Ver or reserved bits (MR-HDR-1)";
            else if (f.has(has_ctrlh) && (f.ctrlh.ver != 1 || f.ctrlh.resv)) why = "CTRLH Ver or reserved bits (MR-HDR-1)";
            else if (is_data_opcode(f.bth.opcode) && f.ip_ecn() != 2)
                why = "data packet with IP ECN " + std::to_string(f.ip_ecn()) + ", not ECT(0) (MR-HDR-4)";
            else if (f.has(has_ipv4) && (!f.ipv4.df || f.ipv4.identification != 0))
                why = "IPv4 DF " + std::to_string(f.ipv4.df) + ", Identification " + std::to_string(f.ipv4.identification) +
                      " (MR-HDR-6)";
        }
        if (!why.empty()) {
            if (bad.empty()) first = "frame #" + std::to_string(r.index) + " is " + why;
            bad.push_back(r.index);
        }
    }
    if (!checked) return inconclusive("the DUT sent no frames");
    if (!bad.empty())
        return fail(std::to_string(bad.size()) + " of " + std::to_string(checked) + " DUT frames break the wire format; " + first,
                    "every DUT frame: dport 4791, TVer 0, Ver 1, reserved 0, data ECT(0), IPv4 DF=1 ID=0, no PAUSE",
                    first, bad);
    return pass(std::to_string(checked) + " DUT frames conform");
}

// MR-PATH-1
outcome distinct_entropy(const context& c) {
    std::map<unsigned, std::uint16_t> port;
    std::vector<std::size_t> bad;
    std::string first;
    for (const auto& r : c.tr().frames) {
        if (r.d != trace::dir::from_dut || !r.ok()) continue;
        const auto& f = r.f();
        if (f.bth.opcode == static_cast<std::uint8_t>(opcode::ctrl) &&
            f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset)) {
            if (auto id = read_ctrl_tlvs(f.tlvs).path_id) port.erase(*id);  // failed: no longer active
            continue;
        }
        if (!is_data_opcode(f.bth.opcode)) continue;
        const unsigned p = f.mrh.path_id;
        const std::uint16_t sp = f.udp.sport;
        std::string why;
        if (sp < k_entropy_base) why = "source port " + std::to_string(sp) + " is below 0xC000";
        for (const auto& [q, qp] : port)
            if (q != p && qp == sp)
                why = "path " + std::to_string(p) + " uses port " + std::to_string(sp) + ", already path " + std::to_string(q) + "'s";
        if (!why.empty()) {
            if (bad.empty()) first = "frame #" + std::to_string(r.index) + ": " + why;
            bad.push_back(r.index);
        }
        port[p] = sp;
    }
    std::size_t paths = 0;
    for (const auto& [p, pv] : c.sender().paths) paths += pv.ports.empty() ? 0 : 1;
    if (!bad.empty())
        return fail(first, "distinct UDP source ports in 0xC000-0xFFFF on active paths", first, bad);
    if (paths < 2) return inconclusive("fewer than two paths carried data");
    return pass(std::to_string(paths) + " paths, distinct source ports");
}

// MR-PATH-2
outcome epoch_on_port_change(const context& c) {
    struct last {
        std::uint16_t sport;
        std::uint8_t epoch;
        std::uint64_t max_ppsn;
        std::uint32_t gen;
        std::size_t rec;
    };
    std::map<unsigned, last> st;
    unsigned changes = 0;
    for (const auto& e : c.sender().tx) {
        auto it = st.find(e.path);
        if (it == st.end() || it->second.gen != e.gen) {
            st[e.path] = {e.sport, e.epoch, e.ppsn, e.gen, e.rec};
            continue;
        }
        auto& l = it->second;
        if (e.sport != l.sport) {
            ++changes;
            const std::uint8_t want = static_cast<std::uint8_t>((l.epoch + 1) & 0xF);
            if (e.epoch != want)
                return fail("path " + std::to_string(e.path) + " moved from port " + std::to_string(l.sport) + " to " +
                                std::to_string(e.sport) + " without incrementing PathEpoch",
                            "PathEpoch " + std::to_string(want), "PathEpoch " + std::to_string(e.epoch), {l.rec, e.rec});
            if (e.ppsn > l.max_ppsn + 1)
                return fail("path " + std::to_string(e.path) + "'s PPSN sequence jumps at the port move",
                            "PPSN <= " + std::to_string((l.max_ppsn + 1) % (1u << 24)),
                            "PPSN " + std::to_string(e.ppsn % (1u << 24)), {l.rec, e.rec});
        } else if (e.epoch != l.epoch) {
            return fail("path " + std::to_string(e.path) + " changed PathEpoch without a port change",
                        "PathEpoch " + std::to_string(l.epoch), "PathEpoch " + std::to_string(e.epoch), {l.rec, e.rec});
        }
        l.sport = e.sport;
        l.epoch = e.epoch;
        l.max_ppsn = std::max(l.max_ppsn, e.ppsn);
        l.rec = e.rec;
    }
    if (!changes) {
        // What the DUT's wire shows instead: a port moves on the resend of a
        // path's moves_after-th consecutive expiry (MR-PATH-4).
        return premise_not_met("no path changed its source port (" +
                               std::to_string(st.size()) + " paths carried data; " + c.sender().expiry_figures() + ", a port moving after " +
                               std::to_string(c.tr().p.moves_after) + " in a row)");
    }
    return pass(std::to_string(changes) + " port changes, each with PathEpoch + 1 and a continuing PPSN sequence");
}

// MR-CONN-1: what the DUT uses after negotiation.
outcome negotiated(const context& c) {
    const auto paths = static_cast<unsigned>(c.integer("paths"));
    const auto mtu = static_cast<std::uint32_t>(c.integer("mtu"));
    std::map<unsigned, std::uint32_t> announced;  // DUT's INITIAL_PPSN per path
    bool saw_setup = false;  // a CONNECT or ACCEPT from the DUT
    std::map<unsigned, bool> first_seen;
    std::size_t data = 0;
    for (const auto& r : c.tr().frames) {
        if (r.d != trace::dir::from_dut || !r.ok()) continue;
        const auto& f = r.f();
        if (f.bth.opcode == static_cast<std::uint8_t>(opcode::ctrl) &&
            (f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::connect) ||
             f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept))) {
            auto t = read_ctrl_tlvs(f.tlvs);
            saw_setup = true;
            if (f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept)) {
                if (t.num_paths != paths)
                    return fail("the DUT's ACCEPT does not carry the minimum NUM_PATHS", std::to_string(paths),
                                t.num_paths ? std::to_string(*t.num_paths) : "absent", {r.index});
                if (t.mtu != mtu)
                    return fail("the DUT's ACCEPT does not carry the minimum MTU", std::to_string(mtu),
                                t.mtu ? std::to_string(*t.mtu) : "absent", {r.index});
            }
            if (t.initial_ppsn)
                for (unsigned i = 0; i < t.initial_ppsn->size(); ++i) announced[i] = (*t.initial_ppsn)[i] & 0xFFFFFF;
            continue;
        }
        if (!is_data_opcode(f.bth.opcode)) continue;
        ++data;
        if (f.mrh.path_id >= paths)
            return fail("the DUT sent on a PathID beyond the agreed paths", "PathID < " + std::to_string(paths),
                        "PathID " + std::to_string(f.mrh.path_id), {r.index});
        if (f.payload.size() > mtu)
            return fail("the DUT sent more payload than the agreed MTU", "<= " + std::to_string(mtu),
                        std::to_string(f.payload.size()) + " bytes", {r.index});
        if (!first_seen[f.mrh.path_id]) {
            first_seen[f.mrh.path_id] = true;
            auto it = announced.find(f.mrh.path_id);
            if (it != announced.end() && it->second != f.bth.psn)
                return fail("path " + std::to_string(f.mrh.path_id) + "'s first PPSN is not the one announced",
                            std::to_string(it->second), std::to_string(f.bth.psn), {r.index});
        }
    }
    if (!saw_setup) return inconclusive("the DUT sent no CONNECT or ACCEPT");
    return pass("agreed " + std::to_string(paths) + " paths, MTU " + std::to_string(mtu) + ", announced initial PPSNs used");
}

}  // namespace mrct::assertions::checks
