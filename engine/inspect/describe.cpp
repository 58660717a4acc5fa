#include "inspect/describe.h"

#include <arpa/inet.h>

#include <fmt/format.h>

#include "core/hex.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"
#include "wire/rnr_timer.h"

namespace mrct::inspect {

using nlohmann::ordered_json;
using namespace mrct::wire;

std::string ipv4_string(const ipv4_addr& a) { return fmt::format("{}.{}.{}.{}", a[0], a[1], a[2], a[3]); }
std::string ipv6_string(const ipv6_addr& a) {
    char buf[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, a.data(), buf, sizeof buf);
    return buf;
}

namespace {

std::string hex32(std::uint32_t v) { return fmt::format("0x{:08x}", v); }

std::string flag_names(std::uint8_t f) {
    std::string s;
    auto add = [&](std::uint8_t bit, const char* n) {
        if (f & bit) s += s.empty() ? n : std::string(",") + n;
    };
    add(k_flag_som, "SOM");
    add(k_flag_eom, "EOM");
    add(k_flag_retx, "RETX");
    add(k_flag_rnr_resend, "RNR_RESEND");
    return s;
}

ordered_json tlv_json(const tlv_view& t) {
    ordered_json j;
    j["type"] = t.type;
    j["name"] = tlv_type_name(t.type);
    j["length"] = t.length;
    j["value"] = core::to_hex(t.value);
    if (!is_known_tlv(t.type) || !tlv_length_ok(t.type, t.length)) {
        if (is_known_tlv(t.type)) j["length_ok"] = false;
        return j;
    }
    core::byte_reader r(t.value);
    switch (static_cast<tlv_type>(t.type)) {
    case tlv_type::version: j["major"] = *r.u8(); j["minor"] = *r.u8(); break;
    case tlv_type::num_paths: j["num_paths"] = *r.u16(); break;
    case tlv_type::src_conn_id: {
        std::uint32_t v = *r.u32();
        j["src_conn_id"] = v & 0xFFFFFF;
        j["src_conn_id_resv"] = v >> 24;
        break;
    }
    case tlv_type::mtu: j["mtu"] = *r.u16(); break;
    case tlv_type::initial_ppsn: {
        auto arr = ordered_json::array();
        while (auto p = r.u32()) arr.push_back(*p & 0xFFFFFF);
        j["initial_ppsn"] = arr;
        break;
    }
    case tlv_type::reject_reason: j["reject_reason"] = *r.u8(); break;
    case tlv_type::rnr_count: j["rnr_count"] = *r.u16(); break;
    case tlv_type::path_id: j["path_id"] = *r.u8(); break;
    case tlv_type::nonce: j["nonce"] = *r.u32(); break;
    }
    return j;
}

std::string addresses(const frame& f) {
    if (f.has(has_ipv4)) return fmt::format("{} → {}", ipv4_string(f.ipv4.src), ipv4_string(f.ipv4.dst));
    if (f.has(has_ipv6)) return fmt::format("{} → {}", ipv6_string(f.ipv6.src), ipv6_string(f.ipv6.dst));
    if (f.has(has_eth)) return fmt::format("{} → {}", mac_text(f.eth.src), mac_text(f.eth.dst));
    return "? → ?";
}

std::string info(const frame& f) {
    const auto& b = f.bth;
    std::string s = fmt::format("{} qp=0x{:06x} psn={}", opcode_name(b.opcode), b.dest_qp, b.psn);
    if (b.ack_req) s += " ackreq";
    if (f.has(has_mrh)) {
        const auto& m = f.mrh;
        s += fmt::format(" path={} ep={} stream={} seq={} tag={} off={} len={}", m.path_id, m.path_epoch, m.stream_id,
                         m.stream_seq, m.tag, m.msg_offset, f.payload.size());
        if (m.attempt) s += fmt::format(" att={}", m.attempt);
        if (auto fl = flag_names(m.flags); !fl.empty()) s += " [" + fl + "]";
        if (f.has(has_reth)) s += fmt::format(" va=0x{:x} rkey=0x{:x} dmalen={}", f.reth.va, f.reth.r_key, f.reth.dma_len);
        if (f.has(has_seth)) s += fmt::format(" recv={} msglen={}", f.seth.recv_idx, f.seth.msg_len);
        if (f.has(has_immdt)) s += fmt::format(" imm=0x{:08x}", f.immdt);
    }
    if (f.has(has_ackh)) {
        const auto& a = f.ackh;
        s += fmt::format(" path={} ep={} trig={} sacked={} ce={} grant={} rnrcnt={}", a.path_id, a.path_epoch,
                         a.trig_ppsn.ppsn(), a.sack.count(), a.ce_count, a.grant_rate, a.rnr_count);
        if (a.ece()) s += " [ECE]";
    }
    if (f.has(has_nakh)) {
        const auto& n = f.nakh;
        s += fmt::format(" {}(0x{:02x}) path={} nakpsn={} stream={} tag={} seq={}", nak_code_name(n.code), n.code,
                         n.path_id, n.nak_ppsn.ppsn(), n.stream_id, n.tag, n.stream_seq);
    }
    if (f.has(has_rnrh)) {
        const auto& n = f.rnrh;
        auto us = std::chrono::duration_cast<std::chrono::microseconds>(rnr_timer_duration(n.timer_code)).count();
        s += fmt::format(" path={} tag={} stream={} seq={} att={} rnrseq={} timer={}({}us)", n.path_id, n.tag,
                         n.stream_id, n.stream_seq, n.attempt, n.rnr_seq, n.timer_code, us);
    }
    if (f.has(has_ctrlh)) {
        s += fmt::format(" {}", ctrl_type_name(f.ctrlh.type));
        tlv_iterator it(f.tlvs);
        while (auto t = it.next()) s += fmt::format(" {}", tlv_type_name(t->type));
    }
    return s;
}

}  // namespace

std::string summary_line(const frame_meta& meta, std::int64_t first_ts_ns, const decode_result& d) {
    const frame& f = d.f;
    const std::int64_t rel = meta.ts_ns - first_ts_ns;
    std::string head = fmt::format("{:>6} {}.{:09d} {} {}", meta.number, rel / 1'000'000'000, rel % 1'000'000'000,
                                   addresses(f), meta.wirelen);
    if (!d.ok()) {
        std::string s = fmt::format("{} DROP {} at {} (offset {})", head, drop_reason_name(d.dropped->reason),
                                    layer_name(d.dropped->where), d.dropped->offset);
        if (f.has(has_bth)) s += " " + info(f);
        return s;
    }
    return fmt::format("{} MetaRoCE {}:{} {} icrc={}", head, f.udp.sport, f.udp.dport, info(f),
                       f.icrc_checked ? (f.icrc_ok() ? "ok" : "BAD") : "unchecked");
}

ordered_json to_json(const frame_meta& meta, const decode_result& d, const json_options& opt) {
    const frame& f = d.f;
    ordered_json j;
    j["frame"] = {{"number", meta.number}, {"ts_ns", meta.ts_ns}, {"caplen", meta.caplen}, {"len", meta.wirelen}};
    j["ok"] = d.ok();
    if (d.dropped) {
        j["drop"] = {{"reason", drop_reason_name(d.dropped->reason)},
                     {"layer", layer_name(d.dropped->where)},
                     {"offset", d.dropped->offset}};
    }
    if (f.has(has_eth)) {
        j["eth"] = {{"dst", mac_text(f.eth.dst)}, {"src", mac_text(f.eth.src)}, {"type", f.eth.ethertype}};
        if (f.eth.has_vlan) j["vlan"] = {{"pcp", f.eth.vlan.pcp}, {"dei", f.eth.vlan.dei}, {"vid", f.eth.vlan.vid}};
    }
    if (f.has(has_ipv4)) {
        const auto& h = f.ipv4;
        j["ipv4"] = {{"ihl", h.ihl}, {"dscp", h.dscp}, {"ecn", h.ecn}, {"total_length", h.total_length},
                     {"identification", h.identification}, {"flag_reserved", h.flag_reserved}, {"df", h.df},
                     {"mf", h.mf}, {"frag_offset", h.frag_offset}, {"ttl", h.ttl}, {"protocol", h.protocol},
                     {"checksum", h.checksum}, {"src", ipv4_string(h.src)}, {"dst", ipv4_string(h.dst)}};
        if (!f.ip_options.empty()) j["ipv4"]["options"] = core::to_hex(f.ip_options);
    }
    if (f.has(has_ipv6)) {
        const auto& h = f.ipv6;
        j["ipv6"] = {{"dscp", h.dscp}, {"ecn", h.ecn}, {"flow_label", h.flow_label},
                     {"payload_length", h.payload_length}, {"next_header", h.next_header},
                     {"hop_limit", h.hop_limit}, {"src", ipv6_string(h.src)}, {"dst", ipv6_string(h.dst)}};
    }
    if (f.has(has_udp)) {
        j["udp"] = {{"sport", f.udp.sport}, {"dport", f.udp.dport}, {"length", f.udp.length},
                    {"checksum", f.udp.checksum}};
    }
    if (f.has(has_bth)) {
        const auto& b = f.bth;
        j["bth"] = {{"opcode", b.opcode}, {"opcode_name", opcode_name(b.opcode)}, {"se", b.se}, {"m", b.m},
                    {"pad_cnt", b.pad_cnt}, {"tver", b.tver}, {"p_key", b.p_key}, {"fecn", b.fecn},
                    {"becn", b.becn}, {"resv6", b.resv6}, {"dest_qp", b.dest_qp}, {"ack_req", b.ack_req},
                    {"resv7", b.resv7}, {"psn", b.psn}};
    }
    if (f.has(has_mrh)) {
        const auto& m = f.mrh;
        j["mrh"] = {{"ver", m.ver}, {"path_epoch", m.path_epoch}, {"flags", m.flags},
                    {"som", bool(m.flags & k_flag_som)}, {"eom", bool(m.flags & k_flag_eom)},
                    {"retx", bool(m.flags & k_flag_retx)}, {"rnr_resend", bool(m.flags & k_flag_rnr_resend)},
                    {"flags_resv", m.flags & k_flag_reserved_mask}, {"path_id", m.path_id},
                    {"attempt", m.attempt}, {"resv", m.resv}, {"stream_id", m.stream_id}, {"tag", m.tag},
                    {"stream_seq", m.stream_seq}, {"msg_offset", m.msg_offset}};
    }
    if (f.has(has_reth)) j["reth"] = {{"va", f.reth.va}, {"r_key", f.reth.r_key}, {"dma_len", f.reth.dma_len}};
    if (f.has(has_seth)) j["seth"] = {{"recv_idx", f.seth.recv_idx}, {"msg_len", f.seth.msg_len}};
    if (f.has(has_immdt)) j["immdt"] = {{"data", f.immdt}};
    if (f.has(has_ackh)) {
        const auto& a = f.ackh;
        std::array<std::uint8_t, sack256::k_wire_len> sack;
        a.sack.to_wire(sack);
        j["ackh"] = {{"ver", a.ver}, {"path_epoch", a.path_epoch}, {"flags", a.flags}, {"ece", a.ece()},
                     {"flags_resv", a.flags & k_ack_flag_reserved_mask}, {"path_id", a.path_id},
                     {"resv", a.resv}, {"trig_ppsn", a.trig_ppsn.ppsn()}, {"trig_ppsn_resv", a.trig_ppsn.resv()},
                     {"sack", core::to_hex(sack)}, {"ce_count", a.ce_count}, {"grant_rate", a.grant_rate},
                     {"rnr_count", a.rnr_count}, {"resv2", a.resv2}};
    }
    if (f.has(has_nakh)) {
        const auto& n = f.nakh;
        j["nakh"] = {{"ver", n.ver}, {"epoch", n.epoch}, {"code", n.code}, {"code_name", nak_code_name(n.code)},
                     {"path_id", n.path_id}, {"resv", n.resv}, {"nak_ppsn", n.nak_ppsn.ppsn()},
                     {"nak_ppsn_resv", n.nak_ppsn.resv()}, {"stream_id", n.stream_id}, {"tag", n.tag},
                     {"stream_seq", n.stream_seq}};
    }
    if (f.has(has_rnrh)) {
        const auto& n = f.rnrh;
        j["rnrh"] = {{"ver", n.ver}, {"epoch", n.epoch}, {"timer_code", n.timer_code},
                     {"timer_ns", rnr_timer_duration(n.timer_code).count()}, {"resv_timer", n.resv_timer},
                     {"path_id", n.path_id}, {"attempt", n.attempt}, {"resv_attempt", n.resv_attempt},
                     {"ppsn", n.ppsn.ppsn()}, {"ppsn_resv", n.ppsn.resv()}, {"stream_id", n.stream_id},
                     {"tag", n.tag}, {"stream_seq", n.stream_seq}, {"rnr_seq", n.rnr_seq}, {"resv", n.resv}};
    }
    if (f.has(has_ctrlh)) {
        const auto& c = f.ctrlh;
        auto tlvs = ordered_json::array();
        tlv_iterator it(f.tlvs);
        while (auto t = it.next()) tlvs.push_back(tlv_json(*t));
        j["ctrlh"] = {{"ver", c.ver}, {"resv", c.resv}, {"type", c.type}, {"type_name", ctrl_type_name(c.type)},
                      {"tlv_length", c.tlv_length}, {"tlvs", tlvs}};
        if (d.ok()) j["ctrlh"]["tlvs_valid"] = read_ctrl_tlvs(f.tlvs).valid();
    }
    if (f.has(has_bth) && d.ok()) {
        j["payload"] = {{"length", f.payload.size()}, {"pad", core::to_hex(f.pad)}};
        if (opt.include_payload) j["payload"]["data"] = core::to_hex(f.payload);
    }
    if (f.has(has_icrc)) {
        j["icrc"] = hex32(f.icrc);
        if (f.icrc_checked) j["icrc_computed"] = hex32(f.icrc_computed);
        j["icrc_ok"] = f.icrc_ok();
    }
    if (!f.trailer.empty()) j["trailer"] = core::to_hex(f.trailer);
    return j;
}

}  // namespace mrct::inspect
