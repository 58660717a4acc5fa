// Builds synthetic traces for assertion tests: frames as a DUT and a peer
// would put them on the wire, at chosen times.
#pragma once

#include <catch2/catch.hpp>

#include "assertions/assertion.h"
#include "trace/trace.h"
#include "wire/build.h"
#include "wire/protocol.h"

namespace mrct::test {

using namespace std::chrono_literals;
using core::nanos;

struct pkt {
    unsigned path = 0;
    std::uint32_t ppsn = 100;
    std::uint8_t epoch = 0;
    std::uint16_t sport = 0;  // 0: 0xC000 + path
    bool retx = false, rnr_resend = false, ack_req = false, ce = false;
    std::uint8_t opcode = 0xC0;
    std::uint16_t tag = 0, stream = 0;
    std::uint32_t seq = 0, offset = 0, len = 1024, msg_len = 0;
    std::uint8_t attempt = 0;
    std::uint8_t src_host = 1;  // last byte of the source IPv4 address (several senders)
};

class trace_builder {
public:
    trace::trace tr;

    trace::record& data(nanos t, trace::dir d, const pkt& p) {
        wire::frame_spec s = base(p.sport ? p.sport : static_cast<std::uint16_t>(0xC000 + p.path));
        s.ipv4.src[3] = p.src_host;
        s.bth.opcode = p.opcode;
        s.bth.psn = p.ppsn;
        s.bth.ack_req = p.ack_req;
        s.ipv4.ecn = p.ce ? 3 : 2;
        std::uint8_t flags = 0;
        if (p.offset == 0) flags |= wire::k_flag_som;
        const std::uint32_t total = p.msg_len ? p.msg_len : p.offset + p.len;
        if (p.offset + p.len == total) flags |= wire::k_flag_eom;
        if (p.retx) flags |= wire::k_flag_retx;
        if (p.rnr_resend) flags |= wire::k_flag_rnr_resend;
        s.mrh = wire::mrh{1, p.epoch, flags, static_cast<std::uint8_t>(p.path), p.attempt, 0, p.stream, p.tag, p.seq, p.offset};
        if (wire::is_send_opcode(p.opcode)) s.seth = wire::seth{0, total};
        else s.reth = wire::reth{0x1000 + p.offset, 0x100, total};
        s.payload.assign(p.len, 0x5A);
        return add(t, d, s);
    }
    // An ACK on `path`: CumAck `cum`, SACK bits for the listed PPSNs.
    trace::record& ack(nanos t, trace::dir d, unsigned path, std::uint32_t cum, std::vector<std::uint32_t> sacked = {},
                       std::uint32_t trig = 0, bool ece = false, std::uint16_t grant = 0xFFFF, std::uint16_t rnr_count = 0,
                       std::uint16_t ce_count = 0, std::uint8_t dst_host = 2) {
        wire::frame_spec s = base(static_cast<std::uint16_t>(0xC000 + path));
        s.ipv4.dst[3] = dst_host;  // an ACK of the DUT goes to its sender (several senders: pkt::src_host)
        s.bth.opcode = 0xD0;
        s.bth.psn = cum;
        wire::ackh a;
        a.path_id = static_cast<std::uint8_t>(path);
        a.flags = ece ? wire::k_ack_flag_ece : 0;
        a.trig_ppsn = wire::ppsn32::of(trig ? trig : cum - 1);
        for (auto x : sacked) a.sack.set(x - cum);
        a.grant_rate = grant;
        a.rnr_count = rnr_count;
        a.ce_count = ce_count;
        s.ackh = a;
        return add(t, d, s);
    }
    trace::record& nak(nanos t, trace::dir d, std::uint8_t code, unsigned path, std::uint32_t ppsn) {
        wire::frame_spec s = base(static_cast<std::uint16_t>(0xC000 + path));
        s.bth.opcode = 0xD1;
        s.nakh = wire::nakh{1, 0, code, static_cast<std::uint8_t>(path), 0, wire::ppsn32::of(ppsn), 0, 0, 0};
        return add(t, d, s);
    }
    trace::record& rnr(nanos t, trace::dir d, std::uint16_t tag, std::uint16_t stream, std::uint32_t seq, std::uint8_t attempt,
                       std::uint8_t code, std::uint32_t ppsn = 100, std::uint16_t rnr_seq = 1, unsigned path = 0) {
        wire::frame_spec s = base(static_cast<std::uint16_t>(0xC000 + path));
        s.bth.opcode = 0xD2;
        s.rnrh = wire::rnrh{1, 0, code, 0, static_cast<std::uint8_t>(path), attempt, 0, wire::ppsn32::of(ppsn), stream, tag, seq, rnr_seq, 0};
        return add(t, d, s);
    }
    trace::record& ctrl(nanos t, trace::dir d, wire::ctrl_type type, std::vector<wire::tlv_spec> tlvs = {}) {
        wire::frame_spec s = base(0xC000);
        s.bth.opcode = 0xD3;
        s.ctrlh = wire::ctrlh{1, 0, static_cast<std::uint8_t>(type), 0};
        s.tlvs = std::move(tlvs);
        if (d == trace::dir::to_dut) std::swap(s.ipv4.src, s.ipv4.dst);  // from the peer's address, as answers come
        return add(t, d, s);
    }
    trace::record& add(nanos t, trace::dir d, const wire::frame_spec& s) {
        auto& r = tr.add(t, d, wire::build(s));
        tr.end = std::max(tr.end, t + 1ms);
        return r;
    }

    assertions::outcome check(const std::string& name, std::map<std::string, std::string> args = {}) {
        const auto* def = assertions::find(name);
        REQUIRE(def);
        REQUIRE(assertions::check_args(*def, args).ok());
        return assertions::evaluate(*def, tr, args);
    }

private:
    static wire::frame_spec base(std::uint16_t sport) {
        wire::frame_spec s;
        s.eth.src = {2, 0, 0, 0, 0, 1};
        s.eth.dst = {2, 0, 0, 0, 0, 2};
        s.ipv4.src = {10, 0, 0, 1};
        s.ipv4.dst = {10, 0, 0, 2};
        s.ipv4.df = true;
        s.udp.sport = sport;
        s.udp.dport = wire::k_udp_port;
        s.bth.dest_qp = 0x42;
        return s;
    }
};

inline const char* name(assertions::verdict v) { return assertions::verdict_name(v).data(); }

}  // namespace mrct::test
