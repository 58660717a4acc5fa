// Two reference endpoints, A and B, joined by a fabric in virtual time.
// Fabric path i carries endpoint path i (initial ports pinned), so per-path
// impairments hit the endpoint path of the same number; moved ports hash.
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include "endpoint/endpoint.h"
#include "fabric/fabric.h"
#include "sim/drivers.h"
#include "wire/build.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::test {

// Opcodes as the tapped frames' BTH carries them.
constexpr auto k_write = static_cast<std::uint8_t>(wire::opcode::write);
constexpr auto k_send = static_cast<std::uint8_t>(wire::opcode::send);
constexpr auto k_ack = static_cast<std::uint8_t>(wire::opcode::ack);

struct tapped {
    core::nanos t;
    fabric::direction dir;
    core::byte_buffer bytes;
    wire::frame f() const { return wire::decode_ethernet(bytes, {.verify_icrc = false}).f; }
};

inline core::byte_buffer pattern(std::size_t n, std::uint8_t seed = 1) {
    core::byte_buffer b(n);
    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 13 + (i >> 8));
    return b;
}

struct pair_rig {
    sim::scheduler s;
    sim::virtual_driver d{s};
    std::unique_ptr<fabric::fabric> fab;
    std::unique_ptr<endpoint::endpoint> a, b;
    std::uint32_t conn_a = 0, conn_b = 0;
    std::vector<tapped> tap;  // every frame as it entered the fabric

    endpoint::address addr_a{{2, 0, 0, 0, 0, 1}, {10, 0, 0, 1}, {}}, addr_b{{2, 0, 0, 0, 0, 2}, {10, 0, 0, 2}, {}};

    // With connect_now false, A has not sent CONNECT yet: call connect().
    explicit pair_rig(fabric::fabric_config fc = {}, endpoint::config ca = {}, endpoint::config cb = {},
                      std::uint64_t seed = 1, bool ipv6 = false, bool connect_now = true) {
        fc.paths = std::max(fc.paths, std::max(ca.num_paths, cb.num_paths));
        auto f = fabric::fabric::create(s, fc);
        REQUIRE(f.ok());
        fab = std::move(*f);
        auto& aa = addr_a;
        auto& ab = addr_b;
        if (ipv6) {  // fd00::1 and fd00::2
            aa.ip6 = wire::ipv6_addr{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
            ab.ip6 = wire::ipv6_addr{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
        }
        a = std::make_unique<endpoint::endpoint>(s, ca, aa, seed, [this](core::bytes_view fr) {
            tap.push_back({s.now(), fabric::direction::a_to_b, {fr.begin(), fr.end()}});
            fab->send(fabric::direction::a_to_b, fr);
        });
        b = std::make_unique<endpoint::endpoint>(s, cb, ab, seed + 1, [this](core::bytes_view fr) {
            tap.push_back({s.now(), fabric::direction::b_to_a, {fr.begin(), fr.end()}});
            fab->send(fabric::direction::b_to_a, fr);
        });
        fab->set_receiver(fabric::direction::a_to_b, [this](core::bytes_view fr, const fabric::packet_meta&) { b->receive(fr); });
        fab->set_receiver(fabric::direction::b_to_a, [this](core::bytes_view fr, const fabric::packet_meta&) { a->receive(fr); });
        b->listen();
        if (connect_now) connect();
    }
    void connect() {
        if (!conn_a) conn_a = a->connect(addr_b);
        d.run_until(s.now() + std::chrono::milliseconds(1));
        pin_ports();
    }
    void pin_ports() {
        auto pa = a->path_info(conn_a);
        for (unsigned i = 0; i < pa.size(); ++i) fab->pin(pa[i].port, i);
        if (!b->accepted().empty()) {
            conn_b = b->accepted().back();
            auto pb = b->path_info(conn_b);
            for (unsigned i = 0; i < pb.size(); ++i) fab->pin(pb[i].port, i);
        }
    }
    void run_for(core::nanos t) { d.run_until(s.now() + t); }
    // An ACK as B would send it to A on path 0 (B's port, A's connection ID),
    // with CumAck `cum` and an empty ACKH: for tests that speak for B.
    wire::frame_spec forged_ack(std::uint32_t cum) const {
        auto wb = b->conn_wire(conn_b);
        REQUIRE(wb);
        wire::frame_spec f;
        f.eth.src = b->self().mac;
        f.eth.dst = a->self().mac;
        f.ipv4.src = b->self().ip;
        f.ipv4.dst = a->self().ip;
        f.ipv4.df = true;
        f.udp.sport = wb->paths[0].port;
        f.udp.dport = wire::k_udp_port;
        f.bth.opcode = static_cast<std::uint8_t>(wire::opcode::ack);
        f.bth.dest_qp = wb->remote_id;
        f.bth.psn = cum;
        f.ackh = wire::ackh{};
        return f;
    }
    // A's one 4 KiB WRITE to B done and acknowledged, then A closes with its
    // path 0 to B failed: the CLOSE goes unanswered (1-path rigs).
    void close_unanswered() {
        auto rk = b->register_mr(1 << 16);
        REQUIRE(a->post_write(conn_a, 0, pattern(4096), b->mr_va(rk), rk, 1).ok());
        run_for(std::chrono::microseconds(100));
        REQUIRE(a->poll().size() == 1);
        fab->at(fabric::direction::a_to_b, 0).set_failed(true);
        REQUIRE(a->close(conn_a).ok());
    }
    // A one-packet WRITE of 64 bytes as A's own on its path 0, at the path's
    // next PPSN, into B's region `rk`, with AckReq: for tests that speak for A
    // (a header field made wrong, a frame handed to B with its own arrival).
    wire::frame_spec crafted_write(std::uint32_t rk, std::uint8_t path_id = 0, std::uint16_t tag = 0) const {
        auto w = a->conn_wire(conn_a);
        REQUIRE(w);
        wire::frame_spec s;
        s.eth.src = a->self().mac;
        s.eth.dst = w->peer.mac;
        s.ipv4.src = a->self().ip;
        s.ipv4.dst = w->peer.ip;
        s.ipv4.df = true;
        s.udp.sport = w->paths[0].port;
        s.udp.dport = wire::k_udp_port;
        s.bth.opcode = static_cast<std::uint8_t>(wire::opcode::write);
        s.bth.dest_qp = w->remote_id;
        s.bth.psn = w->paths[0].next_ppsn;
        s.bth.ack_req = true;
        s.mrh = wire::mrh{1, 0, wire::k_flag_som | wire::k_flag_eom, path_id, 0, 0, 0, tag, 0, 0};
        s.reth = wire::reth{b->mr_va(rk), rk, 64};
        s.payload.assign(64, 1);
        return s;
    }
    // `n` late duplicate ACKs to A (nothing new acknowledged), `gap` apart.
    void late_acks(int n, core::nanos gap) {
        const auto w = a->conn_wire(conn_a);
        REQUIRE(w);
        for (int i = 0; i < n; ++i) {
            run_for(gap);
            a->receive(wire::build(forged_ack(w->paths[0].next_ppsn)));
        }
    }
    // When A sent each CTRL of type `type`.
    std::vector<core::nanos> ctrls(wire::ctrl_type type) const {
        std::vector<core::nanos> v;
        for (const auto& t : frames(fabric::direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::ctrl)))
            if (t.f().ctrlh.type == static_cast<std::uint8_t>(type)) v.push_back(t.t);
        return v;
    }
    std::vector<core::nanos> closes() const { return ctrls(wire::ctrl_type::close); }
    std::vector<tapped> frames(fabric::direction dir, std::uint8_t opcode) const {
        std::vector<tapped> v;
        for (const auto& t : tap)
            if (t.dir == dir && t.bytes.size() > 42 && t.f().bth.opcode == opcode) v.push_back(t);  // > Eth+IPv4+UDP
        return v;
    }
};

// One path, 2 us each way, the WRITE packet after the first `skip` lost once;
// an 8-packet WRITE from A (config `a_cfg`, one path) to B posted.
struct one_path_write {
    std::unique_ptr<pair_rig> r;
    std::uint32_t rk = 0, first = 0;
    core::byte_buffer data = pattern(8 * 4096);
    explicit one_path_write(const std::string& skip, endpoint::config a_cfg = {}) {
        fabric::fabric_config fc;
        fc.paths = 1;
        fc.default_stages = {{"delay", {{"delay", "2us"}}}, {"match_drop", {{"opcode", "WRITE"}, {"skip", skip}, {"count", "1"}}}};
        endpoint::config one;
        one.num_paths = 1;
        a_cfg.num_paths = 1;
        r = std::make_unique<pair_rig>(fc, a_cfg, one);
        rk = r->b->register_mr(1 << 16);
        auto w = r->a->conn_wire(r->conn_a);
        REQUIRE(w);
        first = w->paths[0].next_ppsn;
        REQUIRE(r->a->post_write(r->conn_a, 0, data, r->b->mr_va(rk), rk, 1).ok());
    }
    // With the sixth packet lost (skip "5"): two forged ACKs reach A first,
    // newest first, CumAck first + 3 then first + 1 (reordered behind it);
    // 5 ms later, whether A resent the lost packet (its PPSN, RETX set).
    bool reordered_acks_then_resent() {
        for (std::uint32_t cum : {first + 3, first + 1}) {
            auto s = r->forged_ack(cum & 0xFFFFFF);
            s.ackh->trig_ppsn = wire::ppsn32::of(cum - 1);
            r->a->receive(wire::build(s));
        }
        r->run_for(std::chrono::milliseconds(5));
        bool resent = false;
        for (const auto& t : r->frames(fabric::direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::write)))
            resent |= t.f().bth.psn == ((first + 5) & 0xFFFFFF) && (t.f().mrh.flags & wire::k_flag_retx);
        return resent;
    }
};

}  // namespace mrct::test
