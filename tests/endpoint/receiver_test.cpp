// The reference endpoint as a receiver, driven by hand-built frames (what the
// scriptable peer will do): every answer is read back off the wire.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "endpoint/endpoint.h"
#include "sim/drivers.h"
#include "wire/build.h"
#include "wire/ctrl.h"
#include "wire/protocol.h"
#include "wire/samples.h"

using namespace mrct;
using namespace std::chrono_literals;
namespace ep = mrct::endpoint;
using namespace mrct::wire;

namespace {

struct raw_rig {
    sim::scheduler s;
    sim::virtual_driver d{s};
    std::vector<core::byte_buffer> out;  // frames the endpoint sent
    std::unique_ptr<ep::endpoint> b;
    ep::address self{{2, 0, 0, 0, 0, 2}, {10, 0, 0, 2}};
    static constexpr std::uint32_t k_peer_id = 0x00A0A0;
    std::vector<std::uint32_t> my_ppsn = {1000, 2000, 3000, 4000};
    std::uint32_t conn = 0;    // B's connection ID (from ACCEPT)
    std::uint32_t rkey = 0;

    explicit raw_rig(ep::config cfg = {}) {
        cfg.num_paths = 4;
        b = std::make_unique<ep::endpoint>(s, cfg, self, 5, [this](core::bytes_view f) { out.emplace_back(f.begin(), f.end()); });
        b->listen();
        inject(connect_frame());
        auto acc = take(opcode::ctrl);
        REQUIRE(acc.size() == 1);
        REQUIRE(acc[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept));
        conn = *read_ctrl_tlvs(acc[0].tlvs).src_conn_id;
        rkey = b->register_mr(1 << 20);
    }
    frame_spec base(opcode op) const {
        frame_spec f = base_spec(4);
        f.eth.dst = self.mac;
        f.ipv4.dst = self.ip;
        f.bth.opcode = static_cast<std::uint8_t>(op);
        return f;
    }
    frame_spec connect_frame(std::uint8_t major = 1) const {
        auto f = base(opcode::ctrl);
        f.bth.dest_qp = k_listener_qp;
        f.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::connect), 0};
        f.tlvs = {tlv::version(major, 2), tlv::num_paths(4), tlv::src_conn_id(k_peer_id), tlv::mtu(4096),
                  tlv::initial_ppsn(my_ppsn)};
        return f;
    }
    // A one-packet WRITE of `len` bytes at offset `off` of the region, on `path` with `ppsn`.
    frame_spec write(unsigned path, std::uint32_t ppsn, std::uint32_t len = 256, std::uint64_t off = 0,
                     std::uint16_t stream = 0, std::uint32_t seq = 0) const {
        auto f = base(opcode::write);
        f.bth.dest_qp = conn;
        f.bth.psn = ppsn;
        f.ipv4.ecn = k_ecn_ect0;
        f.udp.sport = static_cast<std::uint16_t>(0xC100 + path);
        f.mrh = mrh{1, 0, k_flag_som | k_flag_eom, static_cast<std::uint8_t>(path), 0, 0, stream, 0, seq, 0};
        f.reth = reth{b->mr_va(rkey) + off, rkey, len};
        f.payload.assign(len, 0x5A);
        return f;
    }
    // A one-packet SEND of 100 bytes (StreamSeq 0 of stream 4) to tag 7, which
    // has no receive unless a test posts one.
    frame_spec tag7_send(std::uint32_t ppsn = 1000) const {
        auto f = base(opcode::send);
        f.bth.dest_qp = conn;
        f.bth.psn = ppsn;
        f.mrh = mrh{1, 0, k_flag_som | k_flag_eom, 0, 0, 0, 4, 7, 0, 0};
        f.seth = seth{0, 100};
        f.payload.assign(100, 1);
        return f;
    }
    void inject(const frame_spec& f) {
        b->receive(build(f));
        d.run_until(s.now() + 1us);
    }
    std::vector<frame> decoded;  // keeps the bytes alive for the views
    std::vector<core::byte_buffer> kept;
    // Every frame sent since the last take, by opcode.
    std::map<std::uint8_t, std::vector<frame>> take_all() {
        std::map<std::uint8_t, std::vector<frame>> m;
        for (auto& bytes : out) {
            kept.push_back(std::move(bytes));
            auto dr = decode_ethernet(kept.back());
            REQUIRE(dr.ok());
            m[dr.f.bth.opcode].push_back(dr.f);
        }
        out.clear();
        return m;
    }
    std::vector<frame> take(opcode op) {
        std::vector<frame> v;
        for (auto& bytes : out) {
            kept.push_back(std::move(bytes));
            auto dr = decode_ethernet(kept.back());
            REQUIRE(dr.ok());
            if (dr.f.bth.opcode == static_cast<std::uint8_t>(op)) v.push_back(dr.f);
        }
        out.clear();
        return v;
    }
};

}  // namespace

TEST_CASE("REJECT for a different major version; CONNECT fields are negotiated (MR-CONN-1)") {
    raw_rig r;
    auto f = r.connect_frame(2);
    f.tlvs[2] = tlv::src_conn_id(0x00B0B0);
    r.inject(f);
    auto rej = r.take(opcode::ctrl);
    REQUIRE(rej.size() == 1);
    CHECK(rej[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::reject));
    CHECK(*read_ctrl_tlvs(rej[0].tlvs).reject_reason == 1);
    CHECK(rej[0].bth.dest_qp == 0x00B0B0);
    CHECK(rej[0].udp.sport == f.udp.sport);  // REJECT leaves from the CONNECT's source port
    auto bad = r.connect_frame();
    bad.tlvs[1] = tlv_spec{2, {0x00}, {}};  // NUM_PATHS with 1 byte: invalid CTRL
    r.inject(bad);
    rej = r.take(opcode::ctrl);
    REQUIRE(rej.size() == 1);
    CHECK(*read_ctrl_tlvs(rej[0].tlvs).reject_reason == 3);
}

TEST_CASE("ACCEPT carries VERSION 1 with the smaller minor (§4, MR-CONN-1)") {
    raw_rig r;  // the rig's CONNECT says 1.2: answered 1.2
    for (const auto& [minor, want] : {std::pair{0, 0}, {1, 1}, {2, 2}, {7, 2}}) {
        INFO("CONNECT minor " << minor);
        auto f = r.connect_frame();
        f.tlvs[0] = tlv::version(1, static_cast<std::uint8_t>(minor));
        f.tlvs[2] = tlv::src_conn_id(0x00D000 + static_cast<std::uint32_t>(minor));
        r.inject(f);
        auto acc = r.take(opcode::ctrl);
        REQUIRE(acc.size() == 1);
        CHECK(acc[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept));
        const auto v = read_ctrl_tlvs(acc[0].tlvs);
        CHECK(*v.version_major == 1);
        CHECK(*v.version_minor == want);
        r.inject(f);  // a repeated CONNECT (the ACCEPT lost) is answered the same
        auto again = r.take(opcode::ctrl);
        REQUIRE(again.size() == 1);
        CHECK(*read_ctrl_tlvs(again[0].tlvs).version_minor == want);
    }
}

TEST_CASE("accept-own-minor: ACCEPT says 1.2 whatever the CONNECT's minor (MR-CONN-1)") {
    auto answered = [](ep::bug b) {
        ep::config cfg;
        cfg.bug_profile = b;
        raw_rig r(cfg);
        auto f = r.connect_frame();
        f.tlvs[0] = tlv::version(1, 0);
        f.tlvs[2] = tlv::src_conn_id(0x00D000);
        r.inject(f);
        auto acc = r.take(opcode::ctrl);
        REQUIRE(acc.size() == 1);
        REQUIRE(acc[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::accept));
        return int{*read_ctrl_tlvs(acc[0].tlvs).version_minor};
    };
    CHECK(answered(ep::bug::none) == 0);
    CHECK(answered(ep::bug::accept_own_minor) == 2);
}

TEST_CASE("a PATH_RESET already applied changes nothing, even after data on the restarted path (§4)") {
    raw_rig r;
    auto reset = r.base(opcode::ctrl);
    reset.bth.dest_qp = r.conn;
    reset.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::path_reset), 0};
    reset.tlvs = {tlv::path_id(1), tlv::initial_ppsn({5000})};
    r.inject(reset);
    auto ack = r.take(opcode::ctrl);
    REQUIRE(ack.size() == 1);
    CHECK(ack[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset_ack));
    for (std::uint32_t i = 0; i < 3; ++i) {  // data on the restarted path: CumAck 5000 -> 5003
        auto w = r.write(1, 5000 + i, 256, 256 * i, 0, i);
        w.bth.ack_req = true;
        r.inject(w);
    }
    auto acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 3);
    CHECK(acks.back().bth.psn == 5003);
    r.inject(reset);  // a late duplicate of the same PATH_RESET: answered, not applied again
    ack = r.take(opcode::ctrl);
    REQUIRE(ack.size() == 1);
    CHECK(ack[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::path_reset_ack));
    auto w = r.write(1, 5003, 256, 256 * 3, 0, 3);
    w.bth.ack_req = true;
    r.inject(w);
    acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 5004);  // the path's sequence went on
    CHECK(r.b->stats().duplicates == 0);
    auto other = reset;  // a new INITIAL_PPSN restarts the path again
    other.tlvs = {tlv::path_id(1), tlv::initial_ppsn({9000})};
    r.inject(other);
    (void)r.take(opcode::ctrl);
    // The restarted path's first packet is in order: no "new gap", so no
    // immediate ACK (the ACK interval answers it); a real gap still is one.
    r.inject(r.write(1, 9000, 256, 256 * 4, 0, 4));
    CHECK(r.take(opcode::ack).empty());
    r.d.run_until(r.s.now() + 25us);
    acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 9001);
    r.inject(r.write(1, 9002, 256, 256 * 5, 0, 5));
    acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 9001);
    CHECK(acks[0].ackh.sack.test(1));
}

TEST_CASE("ACK policy: every 8 packets, at once on AckReq, a new gap or CE, else within 20 us (MR-SACK-1/2, MR-CC-1)") {
    raw_rig r;
    for (std::uint32_t i = 0; i < 7; ++i) r.inject(r.write(0, 1000 + i, 256, i * 256, 0, i));
    CHECK(r.take(opcode::ack).empty());
    r.inject(r.write(0, 1007, 256, 7 * 256, 0, 7));
    auto acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 1008);           // CumAck
    CHECK(acks[0].ackh.trig_ppsn.ppsn() == 1007);
    CHECK(acks[0].ackh.grant_rate == 4000);   // MR-GR-1
    // A new gap (1009 missing 1008) gets an ACK at once, with the SACK bit.
    r.inject(r.write(0, 1009, 256, 9 * 256, 0, 9));
    acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 1008);
    CHECK(acks[0].ackh.sack.test(1));
    CHECK_FALSE(acks[0].ackh.sack.test(0));
    // CE: at once, ECE, TrigPPSN = that packet, CE_Count 1.
    auto ce = r.write(1, 2000, 256, 0, 1, 0);
    ce.ipv4.ecn = k_ecn_ce;
    r.inject(ce);
    acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].ackh.ece());
    CHECK(acks[0].ackh.path_id == 1);
    CHECK(acks[0].ackh.trig_ppsn.ppsn() == 2000);
    CHECK(acks[0].ackh.ce_count == 1);
    CHECK(acks[0].udp.sport == ce.udp.sport);  // ACK from the triggering packet's port
    // Otherwise within the 20 us ACK interval.
    r.inject(r.write(2, 3000, 256, 0, 2, 0));
    CHECK(r.take(opcode::ack).empty());
    r.d.run_until(r.s.now() + 20us);
    CHECK(r.take(opcode::ack).size() == 1);
}

namespace {
// CumAck of the ACKs for PPSN 1000 on path 0, then 1001 from a new source
// port (the same path after a port move).
std::vector<std::uint32_t> port_move_cum_acks(ep::config cfg = {}) {
    raw_rig r(cfg);
    r.take_all();
    auto a = r.write(0, 1000, 256, 0, 0, 0);
    a.bth.ack_req = true;
    r.inject(a);
    auto b = r.write(0, 1001, 256, 256, 0, 1);
    b.udp.sport = 0xFEED;
    b.bth.ack_req = true;
    r.inject(b);
    std::vector<std::uint32_t> cum;
    for (const auto& k : r.take(opcode::ack)) cum.push_back(k.bth.psn);
    return cum;
}
}  // namespace

TEST_CASE("paths are identified by PathID, never by source port (MR-PATH-3)") {
    CHECK(port_move_cum_acks() == std::vector<std::uint32_t>{1001, 1002});  // one sequence across both ports
}

TEST_CASE("NAK codes: 0x0E unknown connection (MR-CONN-2), 0x20 invalid PathID (MR-CONN-4), 0x0B outside the window, 0x0F mismatch (MR-HDR-5), 0x02 bounds (MR-OOO-4)") {
    raw_rig r;
    auto unknown = r.write(0, 1000);
    unknown.bth.dest_qp = 0x123456;
    r.inject(unknown);
    auto naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x0E);
    CHECK(naks[0].bth.dest_qp == 0x123456);  // echoes the offending DestQP

    auto bad_path = r.write(0, 1000);
    bad_path.mrh->path_id = 9;
    r.inject(bad_path);
    naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x20);

    r.inject(r.write(0, 1000 + 256));  // CumAck 1000: PPSN 1256 is outside the window
    naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x0B);
    CHECK(r.take(opcode::ack).empty());  // not acknowledged

    auto mismatch = r.write(0, 1000);
    mismatch.mrh->msg_offset = 16;  // SOM with a nonzero offset
    r.inject(mismatch);
    naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x0F);

    auto oob = r.write(1, 2000, 256, (1 << 20) - 100, 1, 0);  // runs past the region
    r.inject(oob);
    naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x02);
    CHECK(std::all_of(r.b->mr_bytes(r.rkey).end() - 100, r.b->mr_bytes(r.rkey).end(), [](auto x) { return x == 0; }));
}

TEST_CASE("reserved opcodes (a RoCEv2 CNP among them), unknown versions and broken frames are dropped silently and counted (MR-HDR-3, MR-CC-5)") {
    raw_rig r;
    r.take_all();
    auto drops = [&r](drop_reason why) { return r.b->stats().drops[static_cast<int>(why)]; };

    auto cnp = r.base(static_cast<opcode>(0x81));  // RoCEv2 CNP: BTH and 16 reserved bytes
    cnp.bth.dest_qp = r.conn;
    cnp.payload.assign(16, 0);
    r.inject(cnp);
    auto reserved = r.write(0, 1000);
    reserved.bth.opcode = 0xC4;  // next to WRITE..SEND_IMM, not listed in §2
    r.inject(reserved);
    CHECK(drops(drop_reason::reserved_opcode) == 2);

    auto v2 = r.write(0, 1000);
    v2.mrh->ver = 2;
    r.inject(v2);
    CHECK(drops(drop_reason::bad_version) == 1);

    auto cut = build(r.write(0, 1000));
    cut.resize(60);  // ends inside the BTH
    r.b->receive(cut);
    r.d.run_until(r.s.now() + 1us);
    CHECK(drops(drop_reason::truncated) == 1);

    r.d.run_until(r.s.now() + 100us);  // past every ACK timer
    CHECK(r.take_all().empty());       // silently: no NAK, no ACK, nothing
    // None of them was placed or moved the window: PPSN 1000 is still new.
    CHECK(std::all_of(r.b->mr_bytes(r.rkey).begin(), r.b->mr_bytes(r.rkey).begin() + 256, [](auto x) { return x == 0; }));
    auto ok = r.write(0, 1000);
    ok.bth.ack_req = true;
    r.inject(ok);
    auto acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);
    CHECK(acks[0].bth.psn == 1001);  // CumAck: the next PPSN expected
    CHECK(r.b->mr_bytes(r.rkey)[0] == 0x5A);
}

TEST_CASE("reserved bits are ignored on receipt and sent as 0 (MR-HDR-1)") {
    raw_rig r;
    r.take_all();
    auto w = r.write(0, 1000);
    w.bth.ack_req = true;
    w.bth.resv6 = 0x3F;
    w.bth.resv7 = 0x7F;
    w.mrh->flags |= k_flag_reserved_mask;
    w.mrh->resv = 0xF;
    r.inject(w);
    auto acks = r.take(opcode::ack);
    REQUIRE(acks.size() == 1);  // taken like any WRITE
    CHECK(acks[0].bth.psn == 1001);
    CHECK(r.b->mr_bytes(r.rkey)[0] == 0x5A);
    const auto& a = acks[0];
    CHECK(a.bth.resv6 == 0);
    CHECK(a.bth.resv7 == 0);
    CHECK((a.ackh.flags & k_ack_flag_reserved_mask) == 0);
    CHECK(a.ackh.resv == 0);
    CHECK(a.ackh.resv2 == 0);
    CHECK(a.udp.dport == k_udp_port);
    CHECK(a.bth.tver == 0);
    CHECK(a.ackh.ver == 1);
}

TEST_CASE("RNR: one per rejected message and Attempt, counted in RnrCount before the ACK (MR-RNR-1/6)") {
    raw_rig r;
    auto send = r.base(opcode::send);
    send.bth.dest_qp = r.conn;
    send.bth.psn = 1000;
    send.bth.ack_req = true;
    send.udp.sport = 0xC100;
    send.mrh = mrh{1, 0, k_flag_som | k_flag_eom, 0, 0, 0, 4, 7, 0, 0};
    send.seth = seth{0, 100};
    send.payload.assign(100, 1);
    r.inject(send);
    auto rnr = r.take(opcode::rnr);
    // take() consumed the ACK too; rebuild the picture from the counters and the RNR.
    REQUIRE(rnr.size() == 1);
    CHECK(rnr[0].rnrh.tag == 7);
    CHECK(rnr[0].rnrh.rnr_seq == 1);
    CHECK(rnr[0].rnrh.attempt == 0);
    CHECK(rnr[0].rnrh.ppsn.ppsn() == 1000);
    CHECK(r.b->stats().acks_sent == 1);
    // The same message again, same Attempt: no new rejection.
    send.bth.psn = 1001;
    r.inject(send);
    send.bth.psn = 1002;
    send.mrh->attempt = 1;
    send.mrh->flags |= k_flag_rnr_resend;
    r.inject(send);  // a new Attempt: a new rejection, RnrSeq 2
    auto got = r.take_all();
    const auto& acks = got[static_cast<std::uint8_t>(opcode::ack)];
    const auto& rnrs = got[static_cast<std::uint8_t>(opcode::rnr)];
    REQUIRE(rnrs.size() == 1);
    CHECK(rnrs[0].rnrh.rnr_seq == 2);
    REQUIRE(acks.size() == 2);
    CHECK(acks[0].ackh.rnr_count == 1);
    CHECK(acks[1].ackh.rnr_count == 2);  // includes the rejection it acknowledges
    // RNR_QUERY: every kept rejection's RNR again, then RNR_SYNC with the count.
    // Attempt 1's rejection does not end Attempt 0's: both are kept until the
    // message arrives again in full (§4, D105). Had RNR 1 been lost, a sender
    // would otherwise never get RnrSeq 1 and would query until its retry limit.
    auto q = r.base(opcode::ctrl);
    q.bth.dest_qp = r.conn;
    q.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::rnr_query), 0};
    r.inject(q);
    auto again = r.take(opcode::rnr);
    REQUIRE(again.size() == 2);
    CHECK(again[0].rnrh.rnr_seq == 1);
    CHECK(again[0].rnrh.attempt == 0);
    CHECK(again[0].rnrh.ppsn.ppsn() == 1000);  // unchanged: the packet that made it (D54)
    CHECK(again[1].rnrh.rnr_seq == 2);
    CHECK(again[1].rnrh.attempt == 1);
    // A late packet of Attempt 0 (an Attempt other than the latest rejected)
    // makes a third rejection; the query then re-sends all three.
    send.bth.psn = 1003;
    send.mrh->attempt = 0;
    send.mrh->flags &= static_cast<std::uint8_t>(~k_flag_rnr_resend);
    r.inject(send);
    auto third = r.take(opcode::rnr);
    REQUIRE(third.size() == 1);
    CHECK(third[0].rnrh.rnr_seq == 3);
    r.inject(q);
    auto all = r.take(opcode::rnr);
    REQUIRE(all.size() == 3);
    CHECK(all[0].rnrh.rnr_seq == 1);
    CHECK(all[1].rnrh.rnr_seq == 2);
    CHECK(all[2].rnrh.rnr_seq == 3);
}

TEST_CASE("a rejection is kept until its message arrives again in full, even if its completion waits (§4)") {
    // bug rnr-kept (MR-RNR-6) keeps it until the completion instead: the query re-sends it.
    for (const auto& [bug, resent] : {std::pair{ep::bug::none, 0u}, {ep::bug::rnr_kept, 1u}}) {
        INFO("bug profile " << ep::bug_name(bug));
        ep::config cfg;
        cfg.bug_profile = bug;
        raw_rig r(cfg);
        // Stream 4: a WRITE (StreamSeq 0) with only its first packet arrived, so
        // nothing after it completes yet; then a SEND (StreamSeq 1) on tag 7.
        auto w = r.write(0, 1000, 4096, 0, 4, 0);
        w.mrh->flags = k_flag_som;
        w.reth->dma_len = 8192;
        r.inject(w);
        auto send = r.base(opcode::send);
        send.bth.dest_qp = r.conn;
        send.bth.psn = 1001;
        send.udp.sport = 0xC100;
        send.mrh = mrh{1, 0, k_flag_som | k_flag_eom, 0, 0, 0, 4, 7, 1, 0};
        send.seth = seth{0, 100};
        send.payload.assign(100, 1);
        r.inject(send);  // no receive on tag 7: rejected, RnrSeq 1
        REQUIRE(r.take(opcode::rnr).size() == 1);
        REQUIRE(r.b->post_recv(r.conn, 7, r.rkey, 1 << 16, 100, 70).ok());
        send.bth.psn = 1002;
        send.mrh->attempt = 1;
        send.mrh->flags |= k_flag_rnr_resend;
        r.inject(send);  // arrives again in full: placed, its completion waits for StreamSeq 0
        CHECK(r.take(opcode::rnr).empty());
        CHECK(r.b->poll().empty());
        auto q = r.base(opcode::ctrl);
        q.bth.dest_qp = r.conn;
        q.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::rnr_query), 0};
        r.inject(q);
        auto got = r.take_all();
        const auto& ctrls = got[static_cast<std::uint8_t>(opcode::ctrl)];
        CHECK(got[static_cast<std::uint8_t>(opcode::rnr)].size() == resent);  // the reference keeps none
        REQUIRE(ctrls.size() == 1);
        CHECK(ctrls[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::rnr_sync));
        CHECK(*read_ctrl_tlvs(ctrls[0].tlvs).rnr_count == 1);
        auto w2 = r.write(0, 1003, 4096, 4096, 4, 0);  // the WRITE's last packet: both complete, in order
        w2.mrh->flags = k_flag_eom;
        w2.mrh->msg_offset = 4096;
        w2.reth->dma_len = 8192;
        r.inject(w2);
        auto wc = r.b->poll();
        REQUIRE(wc.size() == 1);  // the WRITE raises none; the SEND's receive completes
        CHECK(wc[0].wr_id == 70);
    }
}

TEST_CASE("an RNR_QUERY is answered with the kept rejections' RNRs, then RNR_SYNC; sync-first and sync-only break that (§4)") {
    // The answer's frames in the order they left: 'R' an RNR (RnrSeq), 'S' RNR_SYNC.
    auto answer = [](ep::bug bug) {
        ep::config cfg;
        cfg.bug_profile = bug;
        raw_rig r(cfg);
        r.inject(r.tag7_send());  // no receive on tag 7: rejected, RnrSeq 1
        REQUIRE(r.take(opcode::rnr).size() == 1);
        auto q = r.base(opcode::ctrl);
        q.bth.dest_qp = r.conn;
        q.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::rnr_query), 0};
        r.inject(q);
        std::string seen;
        for (auto& bytes : r.out) {
            auto dr = decode_ethernet(bytes);
            REQUIRE(dr.ok());
            if (dr.f.bth.opcode == static_cast<std::uint8_t>(opcode::rnr)) seen += "R" + std::to_string(dr.f.rnrh.rnr_seq);
            if (dr.f.bth.opcode == static_cast<std::uint8_t>(opcode::ctrl) &&
                dr.f.ctrlh.type == static_cast<std::uint8_t>(ctrl_type::rnr_sync))
                seen += "S" + std::to_string(*read_ctrl_tlvs(dr.f.tlvs).rnr_count);
        }
        r.out.clear();
        return seen;
    };
    CHECK(answer(ep::bug::none) == "R1S1");
    CHECK(answer(ep::bug::sync_first) == "S1R1");
    CHECK(answer(ep::bug::sync_only) == "S1");
}

TEST_CASE("CTRL naming an unknown connection is ignored and counted; PROBE is answered from its port") {
    raw_rig r;
    auto p = r.base(opcode::ctrl);
    p.bth.dest_qp = 0x777777;
    p.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::probe), 0};
    p.tlvs = {tlv::path_id(1), tlv::nonce(42)};
    r.inject(p);
    CHECK(r.take(opcode::ctrl).empty());
    CHECK(r.b->stats().ctrl_ignored == 1);
    p.bth.dest_qp = r.conn;
    p.udp.sport = 0xC555;
    r.inject(p);
    auto rep = r.take(opcode::ctrl);
    REQUIRE(rep.size() == 1);
    CHECK(rep[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::probe_reply));
    CHECK(*read_ctrl_tlvs(rep[0].tlvs).nonce == 42);
    CHECK(rep[0].udp.sport == 0xC555);
}

namespace {
// A second connection, from another peer address (10.0.0.9): its ID at the DUT.
std::uint32_t connect_second(raw_rig& r) {
    auto c2 = r.connect_frame();
    c2.ipv4.src = {10, 0, 0, 9};
    c2.tlvs[2] = tlv::src_conn_id(0x00C0C0);
    r.inject(c2);
    auto acc = r.take(opcode::ctrl);
    REQUIRE(acc.size() == 1);
    return *read_ctrl_tlvs(acc[0].tlvs).src_conn_id;
}
}  // namespace

TEST_CASE("grants share the inbound rate among active senders (MR-GR-3)") {
    ep::config cfg;
    raw_rig r(cfg);
    const auto conn2 = connect_second(r);
    auto w1 = r.write(0, 1000);
    w1.bth.ack_req = true;
    r.inject(w1);
    CHECK(r.take(opcode::ack)[0].ackh.grant_rate == 4000);  // one active sender
    auto w2 = r.write(0, 1000);
    w2.ipv4.src = {10, 0, 0, 9};
    w2.bth.dest_qp = conn2;
    w2.bth.ack_req = true;
    r.inject(w2);
    CHECK(r.take(opcode::ack)[0].ackh.grant_rate == 2000);  // two within the idle time
    r.d.run_until(r.s.now() + 2ms);  // both idle past the grant idle time
    auto w3 = r.write(0, 1001, 256, 256, 0, 1);
    w3.bth.ack_req = true;
    r.inject(w3);
    CHECK(r.take(opcode::ack)[0].ackh.grant_rate == 4000);
}

TEST_CASE("GrantRate is rounded down, at least 1 and at most 0xFFFE (D52)") {
    for (const auto& [rate, want] : {std::pair{250e6, 2}, {10e6, 1}, {10e12, 0xFFFE}, {400e9, 4000}}) {
        INFO("inbound " << rate);
        ep::config cfg;
        cfg.inbound_rate_bps = rate;
        raw_rig r(cfg);
        auto w = r.write(0, 1000);
        w.bth.ack_req = true;
        r.inject(w);
        auto acks = r.take(opcode::ack);
        REQUIRE(acks.size() == 1);
        CHECK(acks[0].ackh.grant_rate == want);
    }
}

TEST_CASE("grants: each sender stops counting exactly grant_idle after its last data (MR-GR-3)") {
    ep::config cfg;  // grant_idle 1 ms
    raw_rig r(cfg);
    auto c2 = r.connect_frame();
    c2.ipv4.src = {10, 0, 0, 9};
    c2.tlvs[2] = tlv::src_conn_id(0x00C0C0);
    r.inject(c2);
    const auto conn2 = *read_ctrl_tlvs(r.take(opcode::ctrl)[0].tlvs).src_conn_id;
    // Each write is received at exactly the time set (no run after it); its ACK leaves at once.
    auto grant_at = [&](core::nanos t, bool second, std::uint32_t ppsn) {
        r.d.run_until(t);
        REQUIRE(r.s.now() == t);
        auto w = r.write(0, ppsn);
        if (second) {
            w.ipv4.src = {10, 0, 0, 9};
            w.bth.dest_qp = conn2;
        }
        w.bth.ack_req = true;
        r.b->receive(build(w));
        return r.take(opcode::ack).at(0).ackh.grant_rate;
    };
    const auto t0 = r.s.now() + 1us;
    CHECK(grant_at(t0, true, 1000) == 4000);           // conn 2 alone
    CHECK(grant_at(t0 + 600us, false, 1000) == 2000);  // both
    CHECK(grant_at(t0 + 1ms, false, 1001) == 2000);    // conn 2's data is exactly grant_idle old: still active
    CHECK(grant_at(t0 + 1ms + 1ns, false, 1002) == 4000);  // now it is not
    CHECK(grant_at(t0 + 1ms + 2ns, true, 1001) == 2000);   // back, counted at once
    CHECK(grant_at(t0 + 1500us, true, 1002) == 2000);
    CHECK(grant_at(t0 + 2ms + 1ns, true, 1003) == 2000);  // conn 1's last data was at 1 ms + 1 ns
    CHECK(grant_at(t0 + 2ms + 2ns, true, 1004) == 4000);
}

TEST_CASE("CLOSE is answered with CLOSE_ACK; data after close gets NAK 0x10 (MR-CONN-3)") {
    raw_rig r;
    auto cl = r.base(opcode::ctrl);
    cl.bth.dest_qp = r.conn;
    cl.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(ctrl_type::close), 0};
    r.inject(cl);
    auto ack = r.take(opcode::ctrl);
    REQUIRE(ack.size() == 1);
    CHECK(ack[0].ctrlh.type == static_cast<std::uint8_t>(ctrl_type::close_ack));
    CHECK(r.b->closed(r.conn));
    r.inject(r.write(0, 1000));
    auto naks = r.take(opcode::nak);
    REQUIRE(naks.size() == 1);
    CHECK(naks[0].nakh.code == 0x10);
}

// ---- receiver bug profiles: each scenario run on the reference and on the
// mutant, the observable compared (docs/bug-profiles.md).

namespace {
ep::config bugged(ep::bug b) {
    ep::config c;
    c.bug_profile = b;
    return c;
}
// Packet `i` of a 2-packet (8 KiB) message, `fill` bytes: a WRITE at the
// region's start, or a SEND to receive 0 of tag 3.
frame_spec half(const raw_rig& r, bool send, unsigned i, std::uint32_t ppsn, std::uint8_t fill) {
    auto f = r.write(0, ppsn, 4096, i * 4096u);
    f.mrh->flags = i == 0 ? k_flag_som : k_flag_eom;
    f.mrh->msg_offset = i * 4096u;
    f.reth->dma_len = 8192;
    if (send) {
        f.bth.opcode = static_cast<std::uint8_t>(opcode::send);
        f.reth.reset();
        f.seth = seth{0, 8192};
        f.mrh->tag = 3;
    }
    f.payload.assign(4096, fill);
    return f;
}
// The first byte of each 4 KiB half of the message's 8 KiB, after its two
// packets arrived in reverse order.
std::pair<std::uint8_t, std::uint8_t> reversed_halves(ep::bug b, bool send) {
    raw_rig r(bugged(b));
    if (send) REQUIRE(r.b->post_recv(r.conn, 3, r.rkey, 0, 8192, 7).ok());
    r.inject(half(r, send, 1, 1001, 0x22));
    r.inject(half(r, send, 0, 1000, 0x11));
    const auto mem = r.b->mr_bytes(r.rkey);
    return {mem[0], mem[4096]};
}
}  // namespace

TEST_CASE("write-arrival-order: WRITE packets land in arrival order, not at their RETH.VA (MR-OOO-1)") {
    CHECK(reversed_halves(ep::bug::none, false) == std::pair<std::uint8_t, std::uint8_t>{0x11, 0x22});
    CHECK(reversed_halves(ep::bug::write_arrival_order, false) == std::pair<std::uint8_t, std::uint8_t>{0x22, 0x11});
    CHECK(reversed_halves(ep::bug::write_arrival_order, true) == std::pair<std::uint8_t, std::uint8_t>{0x11, 0x22});  // SENDs untouched
}

TEST_CASE("send-arrival-order: SEND packets land in arrival order, not at MsgOffset (MR-OOO-2)") {
    CHECK(reversed_halves(ep::bug::none, true) == std::pair<std::uint8_t, std::uint8_t>{0x11, 0x22});
    CHECK(reversed_halves(ep::bug::send_arrival_order, true) == std::pair<std::uint8_t, std::uint8_t>{0x22, 0x11});
    CHECK(reversed_halves(ep::bug::send_arrival_order, false) == std::pair<std::uint8_t, std::uint8_t>{0x11, 0x22});  // WRITEs untouched
}

TEST_CASE("oob-write-silent and unknown-conn-silent: no NAK 0x02, no NAK 0x0E (MR-OOO-4, MR-CONN-2)") {
    auto answers = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        auto oob = r.write(1, 2000, 256, (1 << 20) - 100);  // runs past the region
        oob.bth.ack_req = true;
        r.inject(oob);
        auto unknown = r.write(0, 1000);
        unknown.bth.dest_qp = 0x123456;
        r.inject(unknown);
        std::vector<unsigned> codes;
        for (const auto& n : r.take(opcode::nak)) codes.push_back(n.nakh.code);
        CHECK(std::all_of(r.b->mr_bytes(r.rkey).end() - 100, r.b->mr_bytes(r.rkey).end(), [](auto x) { return x == 0; }));
        return codes;
    };
    CHECK(answers(ep::bug::none) == std::vector<unsigned>{0x02, 0x0E});
    CHECK(answers(ep::bug::oob_write_silent) == std::vector<unsigned>{0x0E});
    CHECK(answers(ep::bug::unknown_conn_silent) == std::vector<unsigned>{0x02});
}

TEST_CASE("no-sack: an ACK after a gap reports CumAck only (MR-SACK-1)") {
    auto ack_after_gap = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        r.inject(r.write(0, 1000, 256, 0, 0, 0));
        r.inject(r.write(0, 1002, 256, 512, 0, 2));  // 1001 missing: a new gap, answered at once
        auto acks = r.take(opcode::ack);
        REQUIRE(acks.size() == 1);
        CHECK(acks[0].bth.psn == 1001);
        return acks[0].ackh.sack.test(1);
    };
    CHECK(ack_after_gap(ep::bug::none));
    CHECK_FALSE(ack_after_gap(ep::bug::no_sack));
}

TEST_CASE("grant-zero-first: the connection's first ACK carries GrantRate 0 (MR-GR-1)") {
    auto grants = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        std::vector<unsigned> g;
        for (std::uint32_t i = 0; i < 2; ++i) {
            auto w = r.write(0, 1000 + i, 256, i * 256, 0, i);
            w.bth.ack_req = true;
            r.inject(w);
            for (const auto& a : r.take(opcode::ack)) g.push_back(a.ackh.grant_rate);
        }
        return g;
    };
    CHECK(grants(ep::bug::none) == std::vector<unsigned>{4000, 4000});
    CHECK(grants(ep::bug::grant_zero_first) == std::vector<unsigned>{0, 4000});
}

TEST_CASE("path-by-port: a port new to the path meets fresh state; CumAck goes back (MR-PATH-3)") {
    CHECK(port_move_cum_acks(bugged(ep::bug::path_by_port)) ==
          std::vector<std::uint32_t>{1001, 1000});  // back at the path's start, 1001 SACKed
}

TEST_CASE("nak-bad-version: an unknown MRH version is NAKed 0x0F, not dropped silently; still counted (MR-HDR-3)") {
    auto answers = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        auto v2 = r.write(0, 1000);
        v2.mrh->ver = 2;
        r.inject(v2);
        CHECK(r.b->stats().drops[static_cast<int>(drop_reason::bad_version)] == 1);
        r.d.run_until(r.s.now() + 100us);
        std::vector<unsigned> codes;
        for (const auto& n : r.take(opcode::nak)) codes.push_back(n.nakh.code);
        return codes;
    };
    CHECK(answers(ep::bug::none).empty());
    CHECK(answers(ep::bug::nak_bad_version) == std::vector<unsigned>{0x0F});
}

TEST_CASE("grant-not-shared: two active senders are each granted the whole inbound rate (MR-GR-3)") {
    auto grants = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        const auto conn2 = connect_second(r);
        std::vector<unsigned> g;
        auto w1 = r.write(0, 1000);
        w1.bth.ack_req = true;
        r.inject(w1);
        for (const auto& a : r.take(opcode::ack)) g.push_back(a.ackh.grant_rate);
        auto w2 = r.write(0, 1000);
        w2.ipv4.src = {10, 0, 0, 9};
        w2.bth.dest_qp = conn2;
        w2.bth.ack_req = true;
        r.inject(w2);
        for (const auto& a : r.take(opcode::ack)) g.push_back(a.ackh.grant_rate);
        return g;
    };
    CHECK(grants(ep::bug::none) == std::vector<unsigned>{4000, 2000});
    CHECK(grants(ep::bug::grant_not_shared) == std::vector<unsigned>{4000, 4000});
}

TEST_CASE("rnr-count-late: a rejected packet acknowledged before its rejection is counted (MR-RNR-6)") {
    // A one-packet SEND (no AckReq) to tag 7, which has no receive: the
    // reference sends the RNR (RnrSeq 1) and acknowledges at its interval,
    // RnrCount 1; the mutant acknowledges at once with RnrCount 0, then the RNR.
    auto answers = [](ep::bug b) {
        raw_rig r(bugged(b));
        r.take_all();
        r.inject(r.tag7_send());
        r.d.run_until(r.s.now() + 100us);
        std::vector<std::pair<std::string, unsigned>> out;  // RNR: its RnrSeq; ACK: its RnrCount
        for (const auto& bytes : r.out) {  // in the order sent
            const auto dr = decode_ethernet(bytes);
            REQUIRE(dr.ok());
            const auto& f = dr.f;
            if (f.bth.opcode == static_cast<std::uint8_t>(opcode::rnr)) out.push_back({"rnr", f.rnrh.rnr_seq});
            else if (f.bth.opcode == static_cast<std::uint8_t>(opcode::ack)) out.push_back({"ack", f.ackh.rnr_count});
        }
        return out;
    };
    using v = std::vector<std::pair<std::string, unsigned>>;
    CHECK(answers(ep::bug::none) == v{{"rnr", 1}, {"ack", 1}});
    CHECK(answers(ep::bug::rnr_count_late) == v{{"ack", 0}, {"rnr", 1}});
}
