#include "wire/samples.h"

namespace mrct::wire {

frame_spec base_spec(unsigned ip_version) {
    frame_spec s;
    s.eth.dst = {0x02, 0, 0, 0, 0, 0x02};
    s.eth.src = {0x02, 0, 0, 0, 0, 0x01};
    s.ip_version = ip_version;
    s.ipv4.src = {10, 0, 0, 1};
    s.ipv4.dst = {10, 0, 0, 2};
    s.ipv4.df = true;
    s.ipv4.identification = 0;
    s.ipv6.src = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    s.ipv6.dst = {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
    s.udp.sport = 0xC000 | 0x0123;
    s.udp.dport = k_udp_port;
    s.bth.p_key = k_default_pkey;
    return s;
}

frame_spec data_spec(opcode op, const struct mrh& m, core::byte_buffer payload, unsigned ip_version) {
    frame_spec s = base_spec(ip_version);
    s.ipv4.ecn = s.ipv6.ecn = k_ecn_ect0;
    s.bth.opcode = static_cast<std::uint8_t>(op);
    s.mrh = m;
    const auto len = static_cast<std::uint32_t>(payload.size());
    if (is_write_opcode(s.bth.opcode)) s.reth = reth{0x10000000ull + m.msg_offset, 0x1234, m.msg_offset + len};
    if (is_send_opcode(s.bth.opcode)) s.seth = seth{0, m.msg_offset + len};
    if (is_imm_opcode(s.bth.opcode)) s.immdt = 0xC0FFEE00u;
    s.payload = std::move(payload);
    return s;
}

frame_spec ack_spec(const struct ackh& a, std::uint32_t cum_ack, unsigned ip_version) {
    frame_spec s = base_spec(ip_version);
    s.bth.opcode = static_cast<std::uint8_t>(opcode::ack);
    s.bth.psn = cum_ack & 0xFFFFFF;
    s.ackh = a;
    return s;
}

frame_spec nak_spec(const struct nakh& n, unsigned ip_version) {
    frame_spec s = base_spec(ip_version);
    s.bth.opcode = static_cast<std::uint8_t>(opcode::nak);
    s.nakh = n;
    return s;
}

frame_spec rnr_spec(const struct rnrh& r, unsigned ip_version) {
    frame_spec s = base_spec(ip_version);
    s.bth.opcode = static_cast<std::uint8_t>(opcode::rnr);
    s.rnrh = r;
    return s;
}

frame_spec ctrl_spec(ctrl_type type, std::vector<tlv_spec> tlvs, unsigned ip_version) {
    frame_spec s = base_spec(ip_version);
    s.bth.opcode = static_cast<std::uint8_t>(opcode::ctrl);
    s.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(type), 0};
    s.tlvs = std::move(tlvs);
    return s;
}

namespace {
core::byte_buffer pattern(std::size_t n, std::uint8_t seed) {
    core::byte_buffer b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7);
    return b;
}
}  // namespace

std::vector<named_spec> sample_catalog() {
    std::vector<named_spec> out;
    mrh m{1, 1, k_flag_som | k_flag_eom, 3, 0, 0, 7, 0, 42, 0};
    out.push_back({"write", data_spec(opcode::write, m, pattern(64, 1))});
    out.back().spec.bth.dest_qp = 0x000123;
    out.back().spec.bth.psn = 1000;
    m.flags = k_flag_som | k_flag_retx;
    m.path_id = 5;
    out.push_back({"write_imm", data_spec(opcode::write_imm, m, pattern(61, 2))});
    out.back().spec.bth.psn = 0xFFFFFF;
    m = mrh{1, 2, k_flag_som | k_flag_eom, 0, 0, 0, 2, 9, 5, 0};
    out.push_back({"send", data_spec(opcode::send, m, pattern(256, 3))});
    out.back().spec.seth->recv_idx = 4;
    out.back().spec.bth.ack_req = true;
    m = mrh{1, 15, k_flag_eom | k_flag_rnr_resend, 7, 3, 0, 2, 9, 6, 4096};
    out.push_back({"send_imm", data_spec(opcode::send_imm, m, pattern(1, 4))});

    ackh a{};
    a.path_epoch = 1;
    a.flags = k_ack_flag_ece;
    a.path_id = 3;
    a.trig_ppsn = ppsn32::of(1010);
    for (unsigned i : {3u, 5u, 64u, 200u, 255u}) a.sack.set(i);
    a.ce_count = 17;
    a.grant_rate = 4000;
    a.rnr_count = 2;
    out.push_back({"ack", ack_spec(a, 1000)});
    out.push_back({"nak", nak_spec(nakh{1, 1, 0x0F, 3, 0, ppsn32::of(1001), 7, 0, 42})});
    out.push_back({"rnr", rnr_spec(rnrh{1, 0, 14, 0, 2, 1, 0, ppsn32::of(77), 2, 9, 5, 3, 0})});

    const std::vector<std::uint32_t> ppsns = {100, 200, 300, 400, 500, 600, 700, 0xFFFFFE};
    auto connect_tlvs = [&] {
        return std::vector<tlv_spec>{tlv::version(1, 2), tlv::num_paths(8), tlv::src_conn_id(0x000456), tlv::mtu(4096),
                                     tlv::initial_ppsn(ppsns)};
    };
    out.push_back({"ctrl_connect", ctrl_spec(ctrl_type::connect, connect_tlvs())});
    out.back().spec.bth.dest_qp = k_listener_qp;
    out.push_back({"ctrl_accept", ctrl_spec(ctrl_type::accept,
                                            {tlv::version(1, 2), tlv::src_conn_id(0x000789), tlv::num_paths(4),
                                             tlv::mtu(1024), tlv::initial_ppsn({11, 22, 33, 44})})});
    out.push_back({"ctrl_reject", ctrl_spec(ctrl_type::reject, {tlv::reject_reason(1)})});
    out.push_back({"ctrl_close", ctrl_spec(ctrl_type::close, {})});
    out.push_back({"ctrl_close_ack", ctrl_spec(ctrl_type::close_ack, {})});
    out.push_back({"ctrl_probe", ctrl_spec(ctrl_type::probe, {tlv::path_id(6), tlv::nonce(0xDEADBEEF)})});
    out.push_back({"ctrl_probe_reply", ctrl_spec(ctrl_type::probe_reply, {tlv::path_id(6), tlv::nonce(0xDEADBEEF)})});
    out.push_back({"ctrl_rnr_query", ctrl_spec(ctrl_type::rnr_query, {})});
    out.push_back({"ctrl_rnr_sync", ctrl_spec(ctrl_type::rnr_sync, {tlv::rnr_count(3)})});
    out.push_back({"ctrl_path_reset", ctrl_spec(ctrl_type::path_reset, {tlv::path_id(6), tlv::initial_ppsn({9000})})});
    out.push_back(
        {"ctrl_path_reset_ack", ctrl_spec(ctrl_type::path_reset_ack, {tlv::path_id(6), tlv::initial_ppsn({9000})})});

    m = mrh{1, 0, k_flag_som, 1, 0, 0, 1, 0, 0, 0};
    out.push_back({"write_ipv6", data_spec(opcode::write, m, pattern(100, 5), 6)});
    out.back().spec.ipv6.flow_label = 0x12345;
    out.push_back({"ack_ipv6", ack_spec(a, 0xFFFFF0, 6)});
    out.push_back({"ctrl_connect_ipv6", ctrl_spec(ctrl_type::connect, connect_tlvs(), 6)});
    out.back().spec.bth.dest_qp = k_listener_qp;
    m = mrh{1, 0, k_flag_som | k_flag_eom, 2, 0, 0, 3, 0, 1, 0};
    out.push_back({"send_vlan", data_spec(opcode::send, m, pattern(32, 6))});
    out.back().spec.eth.has_vlan = true;
    out.back().spec.eth.vlan = vlan_tag{5, false, 100};
    return out;
}

frame_spec random_spec(core::rng& r, opcode op, unsigned ip_version) {
    auto u8 = [&] { return static_cast<std::uint8_t>(r.next()); };
    auto u16 = [&] { return static_cast<std::uint16_t>(r.next()); };
    auto u32 = [&] { return static_cast<std::uint32_t>(r.next()); };
    auto bytes = [&](std::size_t n) {
        core::byte_buffer b(n);
        for (auto& x : b) x = u8();
        return b;
    };
    frame_spec s = base_spec(ip_version);
    s.eth.has_vlan = r.chance(0.2);
    s.eth.vlan = {static_cast<std::uint8_t>(r.below(8)), r.chance(0.5), static_cast<std::uint16_t>(r.below(4096))};
    s.ipv4 = {5, static_cast<std::uint8_t>(r.below(64)), static_cast<std::uint8_t>(r.below(4)), 0, u16(),
              false, r.chance(0.5), false, 0, u8(), 17, 0, {u8(), u8(), u8(), u8()}, {u8(), u8(), u8(), u8()}};
    s.ipv6.dscp = static_cast<std::uint8_t>(r.below(64));
    s.ipv6.ecn = static_cast<std::uint8_t>(r.below(4));
    s.ipv6.flow_label = u32() & 0xFFFFF;
    s.ipv6.hop_limit = u8();
    for (auto& x : s.ipv6.src) x = u8();
    for (auto& x : s.ipv6.dst) x = u8();
    s.udp.sport = static_cast<std::uint16_t>(k_entropy_base | (u16() & 0x3FFF));  // §2: 0xC000 | 14-bit entropy
    s.bth.opcode = static_cast<std::uint8_t>(op);
    s.bth.se = r.chance(0.5);
    s.bth.m = r.chance(0.5);
    s.bth.p_key = u16();
    s.bth.fecn = r.chance(0.5);
    s.bth.becn = r.chance(0.5);
    s.bth.resv6 = u8() & 0x3F;
    s.bth.dest_qp = u32() & 0xFFFFFF;
    s.bth.ack_req = r.chance(0.5);
    s.bth.resv7 = u8() & 0x7F;
    s.bth.psn = u32() & 0xFFFFFF;
    const std::uint8_t o = s.bth.opcode;
    if (is_data_opcode(o)) {
        s.mrh = mrh{1, static_cast<std::uint8_t>(u8() & 0xF), u8(), u8(), static_cast<std::uint8_t>(u8() & 0xF),
                    static_cast<std::uint8_t>(u8() & 0xF), u16(), u16(), u32(), u32()};
        if (is_write_opcode(o)) s.reth = reth{r.next(), u32(), u32()};
        if (is_send_opcode(o)) s.seth = seth{u32(), u32()};
        if (is_imm_opcode(o)) s.immdt = u32();
        s.payload = bytes(r.below(2) ? r.below(1025) : r.below(33));
    } else if (op == opcode::ack) {
        ackh a{1, static_cast<std::uint8_t>(u8() & 0xF), u8(), u8(), u8(), {u32()}, {}, u16(), u16(), u16(), u16()};
        for (unsigned w = 0; w < 4; ++w) a.sack.set_word(w, r.next());
        s.ackh = a;
    } else if (op == opcode::nak) {
        s.nakh = nakh{1, static_cast<std::uint8_t>(u8() & 0xF), u8(), u8(), u8(), {u32()}, u16(), u16(), u32()};
    } else if (op == opcode::rnr) {
        s.rnrh = rnrh{1,    static_cast<std::uint8_t>(u8() & 0xF), static_cast<std::uint8_t>(u8() & 0x1F),
                      static_cast<std::uint8_t>(u8() & 7),        u8(), static_cast<std::uint8_t>(u8() & 0xF),
                      static_cast<std::uint8_t>(u8() & 0xF),      {u32()}, u16(), u16(), u32(), u16(), u16()};
    } else {
        s.ctrlh = ctrlh{1, static_cast<std::uint8_t>(u8() & 0xF), static_cast<std::uint8_t>(1 + r.below(11)), 0};
        const auto n = r.below(6);
        for (std::uint64_t i = 0; i < n; ++i) {
            switch (r.below(10)) {
            case 0: {
                // Two draws in a fixed order (argument evaluation order is unspecified).
                auto major = u8();
                s.tlvs.push_back(tlv::version(major, u8()));
                break;
            }
            case 1: s.tlvs.push_back(tlv::num_paths(u16())); break;
            case 2: s.tlvs.push_back(tlv::src_conn_id(u32())); break;
            case 3: s.tlvs.push_back(tlv::mtu(u16())); break;
            case 4: {
                std::vector<std::uint32_t> p(1 + r.below(16));
                for (auto& x : p) x = u32() & 0xFFFFFF;
                s.tlvs.push_back(tlv::initial_ppsn(p));
                break;
            }
            case 5: s.tlvs.push_back(tlv::reject_reason(u8())); break;
            case 6: s.tlvs.push_back(tlv::rnr_count(u16())); break;
            case 7: s.tlvs.push_back(tlv::path_id(u8())); break;
            case 8: s.tlvs.push_back(tlv::nonce(u32())); break;
            default: s.tlvs.push_back(tlv_spec{static_cast<std::uint8_t>(10 + r.below(246)), bytes(r.below(9)), {}});
            }
        }
    }
    return s;
}

}  // namespace mrct::wire
