#include "peer/craft.h"

#include <charconv>

#include "wire/build.h"
#include "wire/icrc.h"
#include "wire/protocol.h"

namespace mrct::peer {

using namespace wire;

namespace {

// Ethernet/IPv4/UDP of a frame from the peer to `dst`, from `sport`.
frame_spec from_peer(const endpoint::endpoint& peer, const endpoint::address& dst, std::uint16_t sport) {
    frame_spec s;
    s.eth.src = peer.self().mac;
    s.eth.dst = dst.mac;
    endpoint::set_ip(s, peer.self(), dst);  // DF, ID 0 (MR-HDR-6), like the peer's own frames
    s.udp.sport = sport;
    s.udp.dport = k_udp_port;
    return s;
}

}  // namespace

const std::vector<std::string>& craft_fields() {
    static const std::vector<std::string> k = {"template", "path", "ppsn", "size", "va_offset", "rkey", "tag", "stream",
                                               "seq", "recv_idx", "msg_len", "msg_offset", "attempt", "flags", "icrc",
                                               "tver", "mrh_ver", "opcode", "dest_qp", "path_id", "pad_cnt", "truncate",
                                               "ack_req", "dir", "version_major", "version_minor", "num_paths", "mtu", "conn_id", "cum", "sack", "trig", "ece", "grant", "rnr_count", "ce_count", "code", "rnr_seq"};
    return k;
}

core::result<core::byte_buffer> craft(const endpoint::endpoint& peer, std::uint32_t conn,
                                      const std::map<std::string, std::string>& f, const craft_target& target,
                                      const wire::frame* trigger) {
    auto w = peer.conn_wire(conn);
    if (!w) return core::error{"inject: the peer has no connection"};
    auto num = [&](const std::string& k, std::uint64_t def) -> core::result<std::uint64_t> {
        auto it = f.find(k);
        if (it == f.end()) return def;
        std::uint64_t v = 0;
        const auto& s = it->second;
        int base = 10;
        std::size_t skip = 0;
        if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            base = 16;
            skip = 2;
        }
        auto [p, ec] = std::from_chars(s.data() + skip, s.data() + s.size(), v, base);
        if (ec != std::errc{} || p != s.data() + s.size()) return core::error{"inject: '" + k + "' = '" + s + "': expected a number"};
        return v;
    };
    auto get = [&](const std::string& k, std::uint64_t def) {
        auto v = num(k, def);
        return v ? *v : def;
    };
    for (const auto& [k, v] : f) {
        bool known = false;
        for (const auto& n : craft_fields()) known |= n == k;
        if (!known) return core::error{"inject: unknown field '" + k + "'"};
        if (k != "template" && k != "ppsn" && k != "icrc" && k != "dir" && k != "ack_req" && k != "cum" && k != "sack" &&
            k != "ece" && !num(k, 0))
            return num(k, 0).err();
    }
    const auto tmpl = f.count("template") ? f.at("template") : std::string("write");
    if (tmpl != "write" && tmpl != "send" && tmpl != "connect" && tmpl != "ack" && tmpl != "rnr" && tmpl != "nak" &&
        tmpl != "rnr_query")
        return core::error{"inject: template must be write, send, connect, ack, rnr, nak or rnr_query"};
    if (tmpl == "nak") {
        // A NAK for the DUT's data packet that triggered the step.
        if (!trigger || !trigger->has(has_mrh) || !is_data_opcode(trigger->bth.opcode))
            return core::error{"inject: template nak answers the data packet that triggered the step (use `on:` with a data match)"};
        if (!f.count("code")) return core::error{"inject: template nak needs `code` (e.g. 0x02)"};
        const auto& m = trigger->mrh;
        frame_spec s = from_peer(peer, w->peer, trigger->udp.sport);
        s.bth.opcode = static_cast<std::uint8_t>(opcode::nak);
        s.bth.dest_qp = static_cast<std::uint32_t>(get("dest_qp", w->remote_id));
        s.nakh = nakh{1, m.path_epoch, static_cast<std::uint8_t>(get("code", 0)), m.path_id, 0, ppsn32::of(trigger->bth.psn),
                      m.stream_id, m.tag, m.stream_seq};
        return build(s);
    }
    if (tmpl == "rnr") {
        if (!trigger || !trigger->has(has_mrh) || !is_send_opcode(trigger->bth.opcode))
            return core::error{"inject: template rnr answers the SEND that triggered the step (use `on:` with a SEND match)"};
        const auto& m = trigger->mrh;
        frame_spec s = from_peer(peer, w->peer, trigger->udp.sport);  // from the triggering packet's port, as RNRs go
        s.bth.opcode = static_cast<std::uint8_t>(opcode::rnr);
        s.bth.dest_qp = static_cast<std::uint32_t>(get("dest_qp", w->remote_id));
        rnrh r;
        r.epoch = m.path_epoch;
        r.timer_code = static_cast<std::uint8_t>(get("code", k_rnr_code_default) & 0x1F);
        r.path_id = m.path_id;
        r.attempt = m.attempt;
        r.ppsn = ppsn32::of(trigger->bth.psn);
        r.stream_id = m.stream_id;
        r.tag = m.tag;
        r.stream_seq = m.stream_seq;
        r.rnr_seq = static_cast<std::uint16_t>(get("rnr_seq", static_cast<std::uint16_t>(w->rnr_count + 1)));
        s.rnrh = r;
        return build(s);
    }
    if (tmpl == "connect") {
        frame_spec s = from_peer(peer, target.dut, static_cast<std::uint16_t>(k_entropy_base | 0x2A2A));
        s.bth.opcode = static_cast<std::uint8_t>(opcode::ctrl);
        s.bth.dest_qp = k_listener_qp;
        s.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::connect), 0};
        const auto paths = static_cast<std::uint16_t>(get("num_paths", 4));
        s.tlvs = {tlv::version(static_cast<std::uint8_t>(get("version_major", 1)), static_cast<std::uint8_t>(get("version_minor", 2))),
                  tlv::num_paths(paths), tlv::src_conn_id(static_cast<std::uint32_t>(get("conn_id", 0x4242))),
                  tlv::mtu(static_cast<std::uint16_t>(get("mtu", 4096))), tlv::initial_ppsn(std::vector<std::uint32_t>(paths, 1000))};
        return build(s);
    }
    const auto path = static_cast<unsigned>(get("path", 0));
    if (path >= w->paths.size()) return core::error{"inject: the peer has no path " + std::to_string(path)};
    const auto& pp = w->paths[path];

    std::uint32_t ppsn = (pp.next_ppsn + 64) & 0xFFFFFF;
    if (auto it = f.find("ppsn"); it != f.end()) {
        const auto& s = it->second;
        if (s == "next") ppsn = pp.next_ppsn;
        else if (s.rfind("next+", 0) == 0) ppsn = (pp.next_ppsn + static_cast<std::uint32_t>(std::stoul(s.substr(5)))) & 0xFFFFFF;
        else ppsn = static_cast<std::uint32_t>(std::stoul(s, nullptr, 0)) & 0xFFFFFF;
    }
    const auto size = static_cast<std::uint32_t>(get("size", 256));

    if (tmpl == "rnr_query") {
        // An RNR_QUERY, as the peer's sender sends it (from the path's port, no TLVs):
        // the DUT must answer with the RNR of every rejection it keeps, then RNR_SYNC (§4).
        frame_spec s = from_peer(peer, w->peer, pp.port);
        s.bth.opcode = static_cast<std::uint8_t>(opcode::ctrl);
        s.bth.dest_qp = static_cast<std::uint32_t>(get("dest_qp", w->remote_id));
        s.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::rnr_query), 0};
        return build(s);
    }

    if (tmpl == "ack") {
        // A forged ACK, as if from the peer's receive side of `path`.
        std::uint32_t cum = pp.recv_cum_ack;
        if (auto it = f.find("cum"); it != f.end()) {
            const auto& v = it->second;
            if (v == "cum") cum = pp.recv_cum_ack;
            else if (v.rfind("cum+", 0) == 0) cum = (pp.recv_cum_ack + static_cast<std::uint32_t>(std::stoul(v.substr(4)))) & 0xFFFFFF;
            else if (v.rfind("cum-", 0) == 0) cum = (pp.recv_cum_ack - static_cast<std::uint32_t>(std::stoul(v.substr(4)))) & 0xFFFFFF;
            else cum = static_cast<std::uint32_t>(std::stoul(v, nullptr, 0)) & 0xFFFFFF;
        }
        frame_spec s = from_peer(peer, w->peer, pp.port);
        s.bth.opcode = static_cast<std::uint8_t>(opcode::ack);
        s.bth.dest_qp = static_cast<std::uint32_t>(get("dest_qp", w->remote_id));
        s.bth.psn = cum;
        ackh a;
        a.path_epoch = pp.recv_epoch & 0xF;
        a.path_id = static_cast<std::uint8_t>(get("path_id", path));
        a.flags = f.count("ece") && f.at("ece") == "true" ? k_ack_flag_ece : 0;
        a.trig_ppsn = ppsn32::of(static_cast<std::uint32_t>(get("trig", (cum - 1) & 0xFFFFFF)));
        if (auto it = f.find("sack"); it != f.end()) {
            std::string list = it->second;
            std::size_t i = 0;
            while (i < list.size()) {
                std::size_t j = list.find(',', i);
                if (j == std::string::npos) j = list.size();
                const auto bit = std::stoul(list.substr(i, j - i));
                if (bit < 1 || bit > 255) return core::error{"inject: sack offsets are 1..255"};
                a.sack.set(static_cast<unsigned>(bit));
                i = j + 1;
            }
        }
        a.grant_rate = static_cast<std::uint16_t>(get("grant", k_grant_unlimited));
        a.rnr_count = static_cast<std::uint16_t>(get("rnr_count", 0));
        a.ce_count = static_cast<std::uint16_t>(get("ce_count", 0));
        s.ackh = a;
        return build(s);
    }

    frame_spec s = from_peer(peer, w->peer, pp.port);
    s.ipv4.ecn = s.ipv6.ecn = 2;  // ECT(0), MR-HDR-4
    const bool send = tmpl == "send";
    s.bth.opcode = static_cast<std::uint8_t>(get("opcode", send ? 0xC2 : 0xC0));
    s.bth.dest_qp = static_cast<std::uint32_t>(get("dest_qp", w->remote_id));
    s.bth.psn = ppsn;
    s.bth.ack_req = f.count("ack_req") ? f.at("ack_req") == "true" : true;
    s.bth.tver = static_cast<std::uint8_t>(get("tver", 0));
    struct mrh m;
    m.ver = static_cast<std::uint8_t>(get("mrh_ver", 1));
    m.path_epoch = pp.epoch;
    m.flags = static_cast<std::uint8_t>(get("flags", k_flag_som | k_flag_eom));
    m.path_id = static_cast<std::uint8_t>(get("path_id", path));
    m.attempt = static_cast<std::uint8_t>(get("attempt", 0));
    m.stream_id = static_cast<std::uint16_t>(get("stream", 0x7FFF));
    m.tag = static_cast<std::uint16_t>(get("tag", send ? 1 : 0));
    m.stream_seq = static_cast<std::uint32_t>(get("seq", 0));
    m.msg_offset = static_cast<std::uint32_t>(get("msg_offset", 0));
    s.mrh = m;
    const auto msg_len = static_cast<std::uint32_t>(get("msg_len", size));
    if (send) s.seth = seth{static_cast<std::uint32_t>(get("recv_idx", 0)), msg_len};
    else s.reth = reth{target.dut_va + get("va_offset", 0), static_cast<std::uint32_t>(get("rkey", target.dut_rkey)), msg_len};
    s.payload.assign(size, 0xA5);
    if (f.count("pad_cnt")) s.ov.pad_cnt = static_cast<std::uint8_t>(get("pad_cnt", 0));
    if (f.count("truncate")) s.ov.truncate_to = static_cast<std::size_t>(get("truncate", 0));
    auto bytes = build(s);
    if (f.count("icrc")) {
        if (f.at("icrc") != "bad") return core::error{"inject: icrc must be 'bad'"};
        if (bytes.size() >= 4 && !f.count("truncate")) {
            // Built again with the wrong ICRC, so that everything computed after
            // it (the UDP checksum over IPv6) is right: only the ICRC is bad.
            s.ov.icrc = wire::icrc_read(bytes.data() + bytes.size() - 4) ^ 0x5A000000u;
            bytes = build(s);
        }
    }
    return bytes;
}

}  // namespace mrct::peer
