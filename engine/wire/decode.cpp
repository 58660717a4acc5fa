// The strict, total decoder. Any byte string yields a frame or a drop, never an
// exception or an out-of-bounds read; the byte_reader refuses every short read.
//
// Check order, which decides the reason a doubly broken frame is counted under
// (docs/codec.md "Decoding order"): link/IP/UDP structure, ICRC, BTH TVer, opcode,
// op-header structure and versions, pad and TLV structure.
#include <array>

#include "wire/checksum.h"
#include "wire/crc32.h"
#include "wire/frame.h"
#include "wire/icrc.h"
#include "wire/policy.h"
#include "wire/protocol.h"

namespace mrct::wire {

namespace {

using core::byte_reader;
using core::bytes_view;

struct decoder {
    bytes_view all;
    const decode_options& opt;
    decode_result& res;  // the caller's, so that it is returned without a copy
    std::size_t elided = 0;  // payload bytes described, not carried (decode_options::symbolic_payload)

    decode_result& fail(drop_reason why, layer where, std::size_t off) {
        res.dropped = drop{why, where, off};
        return res;
    }

    decode_result& ethernet() {
        frame& f = res.f;
        byte_reader r(all);
        if (!r.can_read(k_eth_len)) return fail(drop_reason::truncated, layer::ethernet, 0);
        auto dst = *r.take(6), src = *r.take(6);
        std::copy(dst.begin(), dst.end(), f.eth.dst.begin());
        std::copy(src.begin(), src.end(), f.eth.src.begin());
        std::uint16_t type = *r.u16();
        if (type == k_ethertype_vlan) {
            if (!r.can_read(k_vlan_len)) return fail(drop_reason::truncated, layer::vlan, r.offset());
            std::uint16_t tci = *r.u16();
            f.eth.has_vlan = true;
            f.eth.vlan = {static_cast<std::uint8_t>(tci >> 13), bool(tci & 0x1000), static_cast<std::uint16_t>(tci & 0xFFF)};
            type = *r.u16();
        }
        f.eth.ethertype = type;
        f.layers |= has_eth;
        if (type == k_ethertype_ipv4) return ipv4(r.offset());
        if (type == k_ethertype_ipv6) return ipv6(r.offset());
        return fail(drop_reason::unsupported_ethertype, layer::ethernet, r.offset() - 2);
    }

    decode_result& ip(std::size_t off) {
        if (off >= all.size()) return fail(drop_reason::truncated, layer::ipv4, off);
        unsigned v = all[off] >> 4;
        if (v == 6) return ipv6(off);
        if (v == 4) return ipv4(off);
        return fail(drop_reason::bad_ip_version, layer::ipv4, off);
    }

    decode_result& ipv4(std::size_t off) {
        frame& f = res.f;
        f.ip_offset = off;
        byte_reader r(all.subspan(off));
        if (!r.can_read(k_ipv4_min_len)) return fail(drop_reason::truncated, layer::ipv4, off);
        std::uint8_t vihl = *r.u8();
        if ((vihl >> 4) != 4) return fail(drop_reason::bad_ip_version, layer::ipv4, off);
        auto& h = f.ipv4;
        h.ihl = vihl & 0x0F;
        std::uint8_t tos = *r.u8();
        h.dscp = tos >> 2;
        h.ecn = tos & 3;
        h.total_length = *r.u16();
        h.identification = *r.u16();
        std::uint16_t ff = *r.u16();
        h.flag_reserved = ff & 0x8000;
        h.df = ff & 0x4000;
        h.mf = ff & 0x2000;
        h.frag_offset = ff & 0x1FFF;
        h.ttl = *r.u8();
        h.protocol = *r.u8();
        h.checksum = *r.u16();
        auto s = *r.take(4), d = *r.take(4);
        std::copy(s.begin(), s.end(), h.src.begin());
        std::copy(d.begin(), d.end(), h.dst.begin());
        f.layers |= has_ipv4;
        const std::size_t hlen = std::size_t{h.ihl} * 4;
        if (h.ihl < 5) return fail(drop_reason::bad_header_length, layer::ipv4, off);
        if (!r.can_read(hlen - k_ipv4_min_len)) return fail(drop_reason::truncated, layer::ipv4, off);
        f.ip_options = *r.take(hlen - k_ipv4_min_len);
        if (h.total_length < hlen) return fail(drop_reason::bad_length, layer::ipv4, off);
        if (h.total_length > all.size() - off) {
            elided = h.total_length - (all.size() - off);
            if (!opt.symbolic_payload || elided % 4 != 0) return fail(drop_reason::truncated, layer::ipv4, off);
        }
        if (policy::k_verify_ipv4_checksum && internet_checksum(all.subspan(off, hlen)) != 0) return fail(drop_reason::bad_checksum, layer::ipv4, off);
        if (h.mf || h.frag_offset) return fail(drop_reason::fragmented, layer::ipv4, off);
        f.trailer = all.subspan(off + h.total_length - elided);
        if (h.protocol != k_ip_proto_udp) return fail(drop_reason::not_udp, layer::ipv4, off);
        return udp(off, hlen, h.total_length - hlen);
    }

    decode_result& ipv6(std::size_t off) {
        frame& f = res.f;
        f.ip_offset = off;
        byte_reader r(all.subspan(off));
        if (!r.can_read(k_ipv6_len)) return fail(drop_reason::truncated, layer::ipv6, off);
        std::uint32_t vtf = *r.u32();
        if ((vtf >> 28) != 6) return fail(drop_reason::bad_ip_version, layer::ipv6, off);
        auto& h = f.ipv6;
        std::uint8_t tc = static_cast<std::uint8_t>(vtf >> 20);
        h.dscp = tc >> 2;
        h.ecn = tc & 3;
        h.flow_label = vtf & 0xFFFFF;
        h.payload_length = *r.u16();
        h.next_header = *r.u8();
        h.hop_limit = *r.u8();
        auto s = *r.take(16), d = *r.take(16);
        std::copy(s.begin(), s.end(), h.src.begin());
        std::copy(d.begin(), d.end(), h.dst.begin());
        f.layers |= has_ipv6;
        if (h.payload_length > all.size() - off - k_ipv6_len) return fail(drop_reason::truncated, layer::ipv6, off);
        f.trailer = all.subspan(off + k_ipv6_len + h.payload_length);
        if (h.next_header != k_ip_proto_udp) return fail(drop_reason::not_udp, layer::ipv6, off);
        return udp(off, k_ipv6_len, h.payload_length);
    }

    decode_result& udp(std::size_t ip_off, std::size_t ip_hlen, std::size_t ip_payload) {
        frame& f = res.f;
        const std::size_t off = ip_off + ip_hlen;
        f.udp_offset = off;
        byte_reader r(all.subspan(off, ip_payload - elided));
        if (!r.can_read(k_udp_len)) return fail(drop_reason::truncated, layer::udp, off);
        f.udp = {*r.u16(), *r.u16(), *r.u16(), *r.u16()};
        f.layers |= has_udp;
        if (f.udp.length != ip_payload) return fail(drop_reason::bad_length, layer::udp, off);
        if (f.udp.dport != k_udp_port) return fail(drop_reason::not_roce_port, layer::udp, off);
        const std::size_t roce_len = ip_payload - k_udp_len;
        const std::size_t bth_off = off + k_udp_len;
        f.bth_offset = bth_off;
        if (roce_len < elided + k_bth_len + k_icrc_len) return fail(drop_reason::truncated, layer::bth, bth_off);
        const std::size_t icrc_off = bth_off + roce_len - elided - k_icrc_len;  // in the frame's bytes
        f.icrc = icrc_read(all.data() + icrc_off);
        f.layers |= has_icrc;
        if (opt.verify_icrc) {
            auto c = icrc_compute(all.subspan(ip_off, icrc_off - ip_off), f.ip_version(), ip_hlen);
            if (c && elided) c = crc32_zeros(*c, elided);  // the described payload's zero bytes
            f.icrc_computed = c.value_or(0);
            f.icrc_checked = c.has_value();
            if (!f.icrc_ok()) return fail(drop_reason::bad_icrc, layer::icrc, icrc_off);
        }
        return roce(bth_off, all.subspan(bth_off, roce_len - elided - k_icrc_len));
    }

    static bool read_bth(byte_reader& r, struct bth& b) {
        if (!r.can_read(k_bth_len)) return false;
        b.opcode = *r.u8();
        std::uint8_t x = *r.u8();
        b.se = x & 0x80;
        b.m = x & 0x40;
        b.pad_cnt = (x >> 4) & 3;
        b.tver = x & 0x0F;
        b.p_key = *r.u16();
        std::uint8_t y = *r.u8();
        b.fecn = y & 0x80;
        b.becn = y & 0x40;
        b.resv6 = y & 0x3F;
        b.dest_qp = *r.u24();
        std::uint8_t z = *r.u8();
        b.ack_req = z & 0x80;
        b.resv7 = z & 0x7F;
        b.psn = *r.u24();
        return true;
    }

    // `body`: BTH up to the ICRC.
    decode_result& roce(std::size_t base, bytes_view body) {
        frame& f = res.f;
        byte_reader r(body);
        read_bth(r, f.bth);
        f.layers |= has_bth;
        const std::uint8_t op = f.bth.opcode;
        if (policy::k_drop_nonzero_tver && f.bth.tver != k_bth_tver) return fail(drop_reason::bad_transport_version, layer::bth, base);
        if (!is_known_opcode(op)) return fail(drop_reason::reserved_opcode, layer::bth, base);
        // Only a data packet's payload is ever described instead of carried.
        if (elided && !is_data_opcode(op)) return fail(drop_reason::truncated, layer::bth, base);

        auto hdr = [&](std::size_t len, layer l) -> std::optional<bytes_view> {
            auto v = r.take(len);
            if (!v) fail(drop_reason::truncated, l, base + r.offset());
            return v;
        };
        auto bad_ver = [&](std::uint8_t ver, layer l, std::size_t len) -> bool {
            if (ver == k_mr_version) return false;
            if (l != layer::mrh && !policy::k_check_ver_on_all_mr_headers) return false;
            fail(drop_reason::bad_version, l, base + r.offset() - len);
            return true;
        };

        if (is_data_opcode(op)) {
            auto m = hdr(k_mrh_len, layer::mrh);
            if (!m) return res;
            read_mrh(*m, f.mrh);
            f.layers |= has_mrh;
            if (bad_ver(f.mrh.ver, layer::mrh, k_mrh_len)) return res;
            if (is_write_opcode(op)) {
                auto h = hdr(k_reth_len, layer::reth);
                if (!h) return res;
                byte_reader hr(*h);
                f.reth = {*hr.u64(), *hr.u32(), *hr.u32()};
                f.layers |= has_reth;
            } else {
                auto h = hdr(k_seth_len, layer::seth);
                if (!h) return res;
                byte_reader hr(*h);
                f.seth = {*hr.u32(), *hr.u32()};
                f.layers |= has_seth;
            }
            if (is_imm_opcode(op)) {
                auto h = hdr(k_immdt_len, layer::immdt);
                if (!h) return res;
                f.immdt = *byte_reader(*h).u32();
                f.layers |= has_immdt;
            }
            return tail(base, r, layer::payload);
        }
        switch (static_cast<opcode>(op)) {
        case opcode::ack: {
            auto h = hdr(k_ackh_len, layer::ackh);
            if (!h) return res;
            read_ackh(*h, f.ackh);
            f.layers |= has_ackh;
            if (bad_ver(f.ackh.ver, layer::ackh, k_ackh_len)) return res;
            return tail(base, r, layer::ackh);
        }
        case opcode::nak: {
            auto h = hdr(k_nakh_len, layer::nakh);
            if (!h) return res;
            byte_reader hr(*h);
            auto& n = f.nakh;
            std::uint8_t ve = *hr.u8();
            n.ver = ve >> 4;
            n.epoch = ve & 0xF;
            n.code = *hr.u8();
            n.path_id = *hr.u8();
            n.resv = *hr.u8();
            n.nak_ppsn.raw = *hr.u32();
            n.stream_id = *hr.u16();
            n.tag = *hr.u16();
            n.stream_seq = *hr.u32();
            f.layers |= has_nakh;
            if (bad_ver(n.ver, layer::nakh, k_nakh_len)) return res;
            return tail(base, r, layer::nakh);
        }
        case opcode::rnr: {
            auto h = hdr(k_rnrh_len, layer::rnrh);
            if (!h) return res;
            byte_reader hr(*h);
            auto& n = f.rnrh;
            std::uint8_t ve = *hr.u8();
            n.ver = ve >> 4;
            n.epoch = ve & 0xF;
            std::uint8_t tc = *hr.u8();
            n.timer_code = tc >> 3;
            n.resv_timer = tc & 7;
            n.path_id = *hr.u8();
            std::uint8_t at = *hr.u8();
            n.attempt = at >> 4;
            n.resv_attempt = at & 0xF;
            n.ppsn.raw = *hr.u32();
            n.stream_id = *hr.u16();
            n.tag = *hr.u16();
            n.stream_seq = *hr.u32();
            n.rnr_seq = *hr.u16();
            n.resv = *hr.u16();
            f.layers |= has_rnrh;
            if (bad_ver(n.ver, layer::rnrh, k_rnrh_len)) return res;
            return tail(base, r, layer::rnrh);
        }
        case opcode::ctrl: {
            auto h = hdr(k_ctrlh_len, layer::ctrlh);
            if (!h) return res;
            byte_reader hr(*h);
            std::uint8_t vr = *hr.u8();
            f.ctrlh.ver = vr >> 4;
            f.ctrlh.resv = vr & 0xF;
            f.ctrlh.type = *hr.u8();
            f.ctrlh.tlv_length = *hr.u16();
            f.layers |= has_ctrlh;
            if (bad_ver(f.ctrlh.ver, layer::ctrlh, k_ctrlh_len)) return res;
            return tail(base, r, layer::tlv);
        }
        default:
            return fail(drop_reason::reserved_opcode, layer::bth, base);  // unreachable: known opcodes
        }
    }

    // What follows the op headers: payload (data), TLVs (CTRL) or nothing
    // (ACK/NAK/RNR), then PadCnt pad bytes, 4-byte aligned in all.
    decode_result& tail(std::size_t base, byte_reader& r, layer what) {
        frame& f = res.f;
        const std::size_t at = base + r.offset();
        if (elided) {
            // The described payload ends the packet: nothing carried after the op headers, no pad.
            if (r.remaining() != 0 || f.bth.pad_cnt != 0) return fail(drop_reason::bad_length, what, at);
            f.symbolic_payload = static_cast<std::uint32_t>(elided);
            return res;
        }
        const std::size_t rest = r.remaining();
        if (f.bth.pad_cnt > rest) return fail(drop_reason::pad_overrun, what, at);
        if (policy::k_require_4byte_alignment && rest % 4 != 0) return fail(drop_reason::misaligned, what, at);
        const std::size_t body = rest - f.bth.pad_cnt;
        bytes_view content = *r.take(body);
        f.pad = *r.take(f.bth.pad_cnt);
        if (what == layer::payload) {
            f.payload = content;
        } else if (what == layer::tlv) {
            if (body != f.ctrlh.tlv_length) return fail(drop_reason::bad_length, layer::ctrlh, at);
            f.tlvs = content;
            tlv_iterator it(content);
            std::size_t consumed = 0;
            while (auto t = it.next()) consumed += k_tlv_hdr_len + t->length;
            if (consumed != content.size()) return fail(drop_reason::tlv_overrun, layer::tlv, at + consumed);
        } else if (body != 0) {
            // ACK, NAK and RNR headers have a fixed size: extra bytes are a length fault.
            return fail(drop_reason::bad_length, what, at);
        }
        return res;
    }

    static void read_mrh(bytes_view h, struct mrh& m) {
        byte_reader r(h);
        std::uint8_t ve = *r.u8();
        m.ver = ve >> 4;
        m.path_epoch = ve & 0xF;
        m.flags = *r.u8();
        m.path_id = *r.u8();
        std::uint8_t at = *r.u8();
        m.attempt = at >> 4;
        m.resv = at & 0xF;
        m.stream_id = *r.u16();
        m.tag = *r.u16();
        m.stream_seq = *r.u32();
        m.msg_offset = *r.u32();
    }

    static void read_ackh(bytes_view h, struct ackh& a) {
        byte_reader r(h);
        std::uint8_t ve = *r.u8();
        a.ver = ve >> 4;
        a.path_epoch = ve & 0xF;
        a.flags = *r.u8();
        a.path_id = *r.u8();
        a.resv = *r.u8();
        a.trig_ppsn.raw = *r.u32();
        a.sack = sack256::from_wire(r.take(sack256::k_wire_len)->first<sack256::k_wire_len>());
        a.ce_count = *r.u16();
        a.grant_rate = *r.u16();
        a.rnr_count = *r.u16();
        a.resv2 = *r.u16();
    }
};

}  // namespace

std::optional<tlv_view> tlv_iterator::next() {
    if (!r_.can_read(k_tlv_hdr_len)) return std::nullopt;
    byte_reader probe = r_;
    std::uint8_t type = *probe.u8();
    std::uint16_t len = *probe.u16();
    auto value = probe.take(len);
    if (!value) return std::nullopt;
    r_ = probe;
    return tlv_view{type, len, *value};
}

decode_result decode_ethernet(core::bytes_view bytes, const decode_options& opt) {
    decode_result res;
    decoder{bytes, opt, res}.ethernet();
    return res;
}

decode_result decode_ip(core::bytes_view bytes, const decode_options& opt) {
    decode_result res;
    decoder{bytes, opt, res}.ip(0);
    return res;
}

}  // namespace mrct::wire
