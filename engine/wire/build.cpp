#include "wire/build.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <cstring>

#include "wire/crc32.h"
#include "wire/icrc.h"
#include "wire/policy.h"
#include "wire/protocol.h"

namespace mrct::wire {

namespace {

// Writes a frame into a vector sized once up front: one cursor instead of a
// push_back (and its update of the vector's size in memory) per byte, which
// was most of the cost of building a frame's headers. The bound given is an
// upper bound; if it were ever short, the writer grows instead of failing.
// The vector's old bytes are overwritten, not zeroed first: a buffer reused
// for frame after frame would otherwise be zero-filled each time.
class frame_writer {
public:
    frame_writer(core::byte_buffer& out, std::size_t bound) : out_(out) {
        if (out_.size() < bound) out_.resize(bound);
        p_ = out_.data();
    }
    std::size_t size() const { return n_; }
    core::bytes_view written() const { return {p_, n_}; }
    void u8(std::uint8_t v) { *take(1) = v; }
    void u16(std::uint16_t v) { big_endian<2>(v); }
    void u24(std::uint32_t v) { big_endian<3>(v); }
    void u32(std::uint32_t v) { big_endian<4>(v); }
    void u64(std::uint64_t v) { big_endian<8>(v); }
    void bytes(core::bytes_view v) {
        if (!v.empty()) std::memcpy(take(v.size()), v.data(), v.size());
    }
    void zeros(std::size_t n) {
        if (n) std::memset(take(n), 0, n);
    }
    void patch_u16(std::size_t at, std::uint16_t v) {
        p_[at] = static_cast<std::uint8_t>(v >> 8);
        p_[at + 1] = static_cast<std::uint8_t>(v);
    }
    // Trims the vector to what was written.
    void finish() { out_.resize(n_); }

private:
    // Inlined: a field is one byte swap and one store. (Out of line, the
    // 2-byte writer and take() were 7 % of a simulation's instructions.)
    template <int N>
    [[gnu::always_inline]] void big_endian(std::uint64_t v) {
        std::uint8_t* q = take(N);
        if constexpr (std::endian::native != std::endian::little) {
            for (int i = 0; i < N; ++i) q[i] = static_cast<std::uint8_t>(v >> (8 * (N - 1 - i)));
        } else if constexpr (N == 2) {
            const auto be = __builtin_bswap16(static_cast<std::uint16_t>(v));
            std::memcpy(q, &be, 2);
        } else if constexpr (N == 4) {
            const auto be = __builtin_bswap32(static_cast<std::uint32_t>(v));
            std::memcpy(q, &be, 4);
        } else if constexpr (N == 8) {
            const auto be = __builtin_bswap64(v);
            std::memcpy(q, &be, 8);
        } else {
            for (int i = 0; i < N; ++i) q[i] = static_cast<std::uint8_t>(v >> (8 * (N - 1 - i)));
        }
    }
    [[gnu::always_inline]] std::uint8_t* take(std::size_t k) {
        if (n_ + k > out_.size()) [[unlikely]]
            grow(k);
        std::uint8_t* q = p_ + n_;
        n_ += k;
        return q;
    }
    [[gnu::noinline]] void grow(std::size_t k) {
        out_.resize(std::max(out_.size() * 2, n_ + k));
        p_ = out_.data();
    }
    core::byte_buffer& out_;
    std::uint8_t* p_;
    std::size_t n_ = 0;
};

void write_mrh(frame_writer& w, const struct mrh& m) {
    w.u8(static_cast<std::uint8_t>((m.ver << 4) | (m.path_epoch & 0xF)));
    w.u8(m.flags);
    w.u8(m.path_id);
    w.u8(static_cast<std::uint8_t>((m.attempt << 4) | (m.resv & 0xF)));
    w.u16(m.stream_id);
    w.u16(m.tag);
    w.u32(m.stream_seq);
    w.u32(m.msg_offset);
}

void write_ackh(frame_writer& w, const struct ackh& a) {
    w.u8(static_cast<std::uint8_t>((a.ver << 4) | (a.path_epoch & 0xF)));
    w.u8(a.flags);
    w.u8(a.path_id);
    w.u8(a.resv);
    w.u32(a.trig_ppsn.raw);
    std::array<std::uint8_t, sack256::k_wire_len> s;
    a.sack.to_wire(s);
    w.bytes(s);
    w.u16(a.ce_count);
    w.u16(a.grant_rate);
    w.u16(a.rnr_count);
    w.u16(a.resv2);
}

void write_nakh(frame_writer& w, const struct nakh& n) {
    w.u8(static_cast<std::uint8_t>((n.ver << 4) | (n.epoch & 0xF)));
    w.u8(n.code);
    w.u8(n.path_id);
    w.u8(n.resv);
    w.u32(n.nak_ppsn.raw);
    w.u16(n.stream_id);
    w.u16(n.tag);
    w.u32(n.stream_seq);
}

void write_rnrh(frame_writer& w, const struct rnrh& n) {
    w.u8(static_cast<std::uint8_t>((n.ver << 4) | (n.epoch & 0xF)));
    w.u8(static_cast<std::uint8_t>((n.timer_code << 3) | (n.resv_timer & 7)));
    w.u8(n.path_id);
    w.u8(static_cast<std::uint8_t>((n.attempt << 4) | (n.resv_attempt & 0xF)));
    w.u32(n.ppsn.raw);
    w.u16(n.stream_id);
    w.u16(n.tag);
    w.u32(n.stream_seq);
    w.u16(n.rnr_seq);
    w.u16(n.resv);
}

std::size_t tlv_bytes(const std::vector<tlv_spec>& tlvs) {
    std::size_t n = 0;
    for (const auto& t : tlvs) n += k_tlv_hdr_len + t.value.size();
    return n;
}

// Everything after the BTH except pad and ICRC, for computing PadCnt.
std::size_t after_bth_len(const frame_spec& s) {
    std::size_t n = 0;
    if (s.mrh) n += k_mrh_len;
    if (s.reth) n += k_reth_len;
    if (s.seth) n += k_seth_len;
    if (s.immdt) n += k_immdt_len;
    if (s.ackh) n += k_ackh_len;
    if (s.nakh) n += k_nakh_len;
    if (s.rnrh) n += k_rnrh_len;
    if (s.ctrlh) n += k_ctrlh_len + tlv_bytes(s.tlvs);
    return n + (s.payload_view.empty() ? s.payload.size() : s.payload_view.size()) + s.symbolic_payload;
}

}  // namespace

void build_into(const frame_spec& s, core::byte_buffer& out) {
    assert(s.ip_version == 4 || s.ip_version == 6);
    const auto& ov = s.ov;
    // Sized once, to the exact length (growth would double the capacity of
    // every frame in flight, and a size above the frame's would be trimmed
    // and zero-filled again on the buffer's next use).
    const std::size_t body = after_bth_len(s);
    const std::uint8_t pad = static_cast<std::uint8_t>((4 - body % 4) % 4);
    const std::size_t eth_len = s.with_ethernet ? 14 + (s.eth.has_vlan ? 4 : 0) : 0;
    const std::size_t ip_hlen = s.ip_version == 4 ? k_ipv4_min_len + s.ipv4_options.size() : k_ipv6_len;
    const std::size_t icrc_len = ov.omit_icrc ? 0 : k_icrc_len;
    assert(s.symbolic_payload == 0 ||
           (s.ip_version == 4 && s.symbolic_payload % 4 == 0 && pad == 0 && s.payload.empty() && s.payload_view.empty()));
    const std::size_t elided = s.symbolic_payload;  // counted in the lengths, not written
    frame_writer w(out, eth_len + ip_hlen + k_udp_len + k_bth_len + body - elided +
                            (ov.pad_bytes ? ov.pad_bytes->size() : pad) + icrc_len + ov.trailer.size());
    if (s.with_ethernet) {
        w.bytes(s.eth.dst);
        w.bytes(s.eth.src);
        if (s.eth.has_vlan) {
            w.u16(k_ethertype_vlan);
            w.u16(static_cast<std::uint16_t>((s.eth.vlan.pcp << 13) | (s.eth.vlan.dei ? 0x1000 : 0) |
                                             (s.eth.vlan.vid & 0xFFF)));
        }
        w.u16(ov.ethertype.value_or(s.ip_version == 4 ? k_ethertype_ipv4 : k_ethertype_ipv6));
    }
    const std::size_t ip_off = w.size();
    if (s.ip_version == 4) {
        const auto& h = s.ipv4;
        std::uint8_t ihl = ov.ipv4_ihl.value_or(static_cast<std::uint8_t>(ip_hlen / 4));
        w.u8(static_cast<std::uint8_t>(0x40 | (ihl & 0xF)));
        w.u8(static_cast<std::uint8_t>((h.dscp << 2) | (h.ecn & 3)));
        w.u16(0);  // total length, patched
        w.u16(h.identification);
        w.u16(static_cast<std::uint16_t>((h.flag_reserved ? 0x8000 : 0) | (h.df ? 0x4000 : 0) | (h.mf ? 0x2000 : 0) |
                                         (h.frag_offset & 0x1FFF)));
        w.u8(h.ttl);
        w.u8(h.protocol);
        w.u16(0);  // checksum, patched
        w.bytes(h.src);
        w.bytes(h.dst);
        w.bytes(s.ipv4_options);
    } else {
        const auto& h = s.ipv6;
        std::uint8_t tc = static_cast<std::uint8_t>((h.dscp << 2) | (h.ecn & 3));
        w.u32((6u << 28) | (std::uint32_t{tc} << 20) | (h.flow_label & 0xFFFFF));
        w.u16(0);  // payload length, patched
        w.u8(h.next_header);
        w.u8(h.hop_limit);
        w.bytes(h.src);
        w.bytes(h.dst);
    }
    const std::size_t udp_off = w.size();
    w.u16(s.udp.sport);
    w.u16(s.udp.dport);
    w.u16(0);  // length, patched
    w.u16(0);  // checksum, patched

    const auto& b = s.bth;
    w.u8(b.opcode);
    w.u8(static_cast<std::uint8_t>((b.se ? 0x80 : 0) | (b.m ? 0x40 : 0) | ((ov.pad_cnt.value_or(pad) & 3) << 4) |
                                   (b.tver & 0xF)));
    w.u16(b.p_key);
    w.u8(static_cast<std::uint8_t>((b.fecn ? 0x80 : 0) | (b.becn ? 0x40 : 0) | (b.resv6 & 0x3F)));
    w.u24(b.dest_qp);
    w.u8(static_cast<std::uint8_t>((b.ack_req ? 0x80 : 0) | (b.resv7 & 0x7F)));
    w.u24(b.psn);

    if (s.mrh) write_mrh(w, *s.mrh);
    if (s.reth) {
        w.u64(s.reth->va);
        w.u32(s.reth->r_key);
        w.u32(s.reth->dma_len);
    }
    if (s.seth) {
        w.u32(s.seth->recv_idx);
        w.u32(s.seth->msg_len);
    }
    if (s.immdt) w.u32(*s.immdt);
    if (s.ackh) write_ackh(w, *s.ackh);
    if (s.nakh) write_nakh(w, *s.nakh);
    if (s.rnrh) write_rnrh(w, *s.rnrh);
    if (s.ctrlh) {
        const auto& c = *s.ctrlh;
        w.u8(static_cast<std::uint8_t>((c.ver << 4) | (c.resv & 0xF)));
        w.u8(c.type);
        w.u16(ov.ctrl_tlv_length.value_or(static_cast<std::uint16_t>(tlv_bytes(s.tlvs))));
        for (const auto& t : s.tlvs) {
            w.u8(t.type);
            w.u16(t.length.value_or(static_cast<std::uint16_t>(t.value.size())));
            w.bytes(t.value);
        }
    }
    w.bytes(s.payload_view.empty() ? core::bytes_view(s.payload) : s.payload_view);
    if (ov.pad_bytes)
        w.bytes(*ov.pad_bytes);
    else
        w.zeros(pad);

    const std::size_t udp_len = w.size() - udp_off + elided + icrc_len;
    w.patch_u16(udp_off + 4, ov.udp_length.value_or(static_cast<std::uint16_t>(udp_len)));
    if (s.ip_version == 4) {
        w.patch_u16(ip_off + 2, ov.ip_total_length.value_or(static_cast<std::uint16_t>(ip_hlen + udp_len)));
        std::uint16_t ck = internet_checksum(w.written().subspan(ip_off, ip_hlen));
        w.patch_u16(ip_off + 10, ov.ipv4_checksum.value_or(ck));
    } else {
        w.patch_u16(ip_off + 4, ov.ipv6_payload_length.value_or(static_cast<std::uint16_t>(udp_len)));
    }
    if (!ov.omit_icrc) {
        std::uint32_t icrc = ov.icrc.value_or(
            crc32_zeros(icrc_compute(w.written().subspan(ip_off), s.ip_version, ip_hlen).value_or(0), elided));
        std::array<std::uint8_t, k_icrc_len> le;
        icrc_write(le.data(), icrc);
        w.bytes(le);
    }
    std::uint16_t udp_ck = 0;
    if (s.ip_version == 6 && policy::k_udp_checksum_ipv6) {
        // RFC 8200 §8.1 pseudo-header: src, dst, upper-layer length, next header.
        std::uint32_t sum = 0;
        for (std::size_t i = 0; i < 32; i += 2) sum += (w.written()[ip_off + 8 + i] << 8) | w.written()[ip_off + 9 + i];
        const std::size_t ulen = w.size() - udp_off;
        sum += static_cast<std::uint32_t>(ulen >> 16) + static_cast<std::uint32_t>(ulen & 0xFFFF) + k_ip_proto_udp;
        udp_ck = internet_checksum(w.written().subspan(udp_off), sum);
        if (udp_ck == 0) udp_ck = 0xFFFF;
    }
    w.patch_u16(udp_off + 6, ov.udp_checksum.value_or(udp_ck));
    w.bytes(ov.trailer);
    w.finish();
    if (ov.truncate_to && *ov.truncate_to < out.size()) out.resize(*ov.truncate_to);
}

core::byte_buffer build(const frame_spec& spec) {
    core::byte_buffer out;
    build_into(spec, out);
    return out;
}

void pause_frame_into(const mac_addr& src, std::uint16_t quanta, core::byte_buffer& out) {
    out.assign(60, 0);
    constexpr mac_addr k_pause_dst{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01};
    std::copy(k_pause_dst.begin(), k_pause_dst.end(), out.begin());
    std::copy(src.begin(), src.end(), out.begin() + 6);
    out[12] = k_ethertype_mac_control >> 8;
    out[13] = k_ethertype_mac_control & 0xFF;
    out[15] = 0x01;  // MAC Control opcode: PAUSE
    out[16] = static_cast<std::uint8_t>(quanta >> 8);
    out[17] = static_cast<std::uint8_t>(quanta);
}

frame_spec to_spec(const frame& f) {
    frame_spec s;
    s.with_ethernet = f.has(has_eth);
    s.eth = f.eth;
    s.ip_version = f.ip_version() == 6 ? 6 : 4;
    s.ipv4 = f.ipv4;
    s.ipv4_options.assign(f.ip_options.begin(), f.ip_options.end());
    s.ipv6 = f.ipv6;
    s.udp = f.udp;
    s.bth = f.bth;
    if (f.has(has_mrh)) s.mrh = f.mrh;
    if (f.has(has_reth)) s.reth = f.reth;
    if (f.has(has_seth)) s.seth = f.seth;
    if (f.has(has_immdt)) s.immdt = f.immdt;
    if (f.has(has_ackh)) s.ackh = f.ackh;
    if (f.has(has_nakh)) s.nakh = f.nakh;
    if (f.has(has_rnrh)) s.rnrh = f.rnrh;
    if (f.has(has_ctrlh)) {
        s.ctrlh = f.ctrlh;
        tlv_iterator it(f.tlvs);
        while (auto t = it.next()) s.tlvs.push_back({t->type, {t->value.begin(), t->value.end()}, {}});
    }
    s.payload.assign(f.payload.begin(), f.payload.end());
    s.symbolic_payload = f.symbolic_payload;
    for (auto b : f.pad) {
        if (b != 0) {
            s.ov.pad_bytes = core::byte_buffer(f.pad.begin(), f.pad.end());
            break;
        }
    }
    s.ov.trailer.assign(f.trailer.begin(), f.trailer.end());
    return s;
}

}  // namespace mrct::wire
