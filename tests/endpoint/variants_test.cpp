// Every conforming variant (D153) makes its choice otherwise than the
// reference, exactly where documented: each scenario runs twice, reference
// and variant, and the choice's observable is compared. (That the whole plan
// passes against each is mrct selftest's; tests/CMakeLists.txt.)
#include <algorithm>
#include <set>

#include "core/serial.h"
#include "harness.h"
#include "wire/ctrl.h"

using namespace mrct;
using namespace mrct::test;
using namespace std::chrono_literals;
using fabric::direction;
namespace ep = mrct::endpoint;

namespace {

ep::config with(std::initializer_list<ep::variant> vs, unsigned paths = 8) {
    ep::config c;
    c.num_paths = paths;
    for (auto v : vs) c.variants |= ep::variant_bit(v);
    return c;
}

// A's WRITE of `bytes` to B over `paths` paths, 2 us each way, `rate` on
// A-to-B if given; run for 5 ms.
std::unique_ptr<pair_rig> write_run(const ep::config& ca, const ep::config& cb, std::size_t bytes,
                                    const char* rate = nullptr) {
    fabric::fabric_config fc;
    for (unsigned p = 0; p < std::max(ca.num_paths, cb.num_paths); ++p) {
        fc.path_stages_ab[p] = {{"delay", {{"delay", "2us"}}}};
        if (rate) fc.path_stages_ab[p].push_back({"queue", {{"rate", rate}}});
        fc.path_stages_ba[p] = {{"delay", {{"delay", "2us"}}}};
    }
    auto r = std::make_unique<pair_rig>(fc, ca, cb);
    auto rk = r->b->register_mr(4 << 20);
    REQUIRE(r->a->post_write(r->conn_a, 0, pattern(bytes), r->b->mr_va(rk), rk, 1).ok());
    r->run_for(5ms);
    REQUIRE(r->a->poll().size() == 1);
    return r;
}

// A's one-packet post to B (AckReq: its last packet) that B answers with
// an RNR (`send`: a SEND to a tag with no receive) or a NAK 0x02 (a WRITE
// past the region's end); run for 100 us.
std::unique_ptr<pair_rig> answered_post(const ep::config& cb, bool send) {
    auto r = std::make_unique<pair_rig>(fabric::fabric_config{}, with({}, 1), cb);
    auto rk = r->b->register_mr(4096);
    if (send) REQUIRE(r->a->post_send(r->conn_a, 0, 5, pattern(1000), 1).ok());
    else REQUIRE(r->a->post_write(r->conn_a, 0, pattern(1000), r->b->mr_va(rk) + 4000, rk, 1).ok());
    r->run_for(100us);
    return r;
}

}  // namespace

TEST_CASE("variant names parse, combine with +, and refuse the unknown") {
    REQUIRE(ep::variant_profiles().size() <= 32);  // config::variants is a 32-bit set
    for (const auto& v : ep::variant_profiles()) {
        auto s = ep::variants_by_name(v.name);
        REQUIRE(s.ok());
        CHECK(*s == ep::variant_bit(v.id));
        CHECK(ep::variants_text(*s) == v.name);
    }
    auto both = ep::variants_by_name("ack-each+path-random");
    REQUIRE(both.ok());
    CHECK(ep::variants_text(*both) == "ack-each+path-random");
    CHECK(*ep::variants_by_name("none") == 0);
    CHECK(ep::variants_text(0) == "none");
    CHECK_FALSE(ep::variants_by_name("").ok());
    CHECK_FALSE(ep::variants_by_name("ack-each+").ok());
    CHECK_FALSE(ep::variants_by_name("ack-each+frozen-rnr").ok());  // a bug profile is not a variant
}

TEST_CASE("ack-each: the receiver acknowledges every data packet at once") {
    // 16 packets on one path: the reference ACKs the 8th and the 16th (every
    // 8 packets; the last carries AckReq).
    auto ref = write_run(with({}, 1), with({}, 1), 16 * 4096);
    auto var = write_run(with({}, 1), with({ep::variant::ack_each}, 1), 16 * 4096);
    CHECK(ref->frames(direction::b_to_a, k_ack).size() == 2);
    CHECK(var->frames(direction::b_to_a, k_ack).size() == 16);
}

TEST_CASE("trig-first: an ACK the interval sends names the run's first packet") {
    // Three packets without AckReq on one path: the ACK interval sends the
    // one ACK, 20 us after the first packet. The reference names the third
    // (D53), the variant the first.
    const auto sender = with({ep::variant::ackreq_none}, 1);
    auto ref = write_run(sender, with({}, 1), 3 * 4096);
    auto var = write_run(sender, with({ep::variant::trig_first}, 1), 3 * 4096);
    const auto data = ref->frames(direction::a_to_b, k_write);
    REQUIRE(data.size() == 3);
    const auto acks_ref = ref->frames(direction::b_to_a, k_ack);
    const auto acks_var = var->frames(direction::b_to_a, k_ack);
    REQUIRE(acks_ref.size() == 1);
    REQUIRE(acks_var.size() == 1);
    CHECK(acks_ref[0].f().ackh.trig_ppsn.ppsn() == data[2].f().bth.psn);
    CHECK(acks_var[0].f().ackh.trig_ppsn.ppsn() == var->frames(direction::a_to_b, k_write)[0].f().bth.psn);
    CHECK(acks_var[0].f().udp.sport == var->frames(direction::a_to_b, k_write)[0].f().udp.sport);
    CHECK(acks_var[0].f().bth.psn == acks_ref[0].f().bth.psn - data[0].f().bth.psn +
                                         var->frames(direction::a_to_b, k_write)[0].f().bth.psn);  // CumAck past all three
}

TEST_CASE("ackreq-none and ackreq-each: the sender sets AckReq never, or on every packet") {
    auto ack_reqs = [](const pair_rig& r) {
        unsigned n = 0;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) n += t.f().bth.ack_req ? 1 : 0;
        return n;
    };
    auto ref = write_run(with({}, 2), with({}, 2), 10 * 4096);
    auto var = write_run(with({ep::variant::ackreq_none}, 2), with({}, 2), 10 * 4096);
    CHECK(ack_reqs(*ref) == 1);  // the last packet
    CHECK(ack_reqs(*var) == 0);
    auto each = write_run(with({ep::variant::ackreq_each}, 2), with({}, 2), 10 * 4096);
    CHECK(ack_reqs(*each) == 10);
    CHECK(each->frames(direction::b_to_a, k_ack).size() == 10);  // answered each at once
}

TEST_CASE("path-random: new packets take paths drawn among those with headroom") {
    auto paths = [](const pair_rig& r) {
        std::vector<unsigned> out;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) out.push_back(t.f().mrh.path_id);
        return out;
    };
    // 64 packets over 8 paths, each with a window of 16: the reference takes
    // turns (0, 1, .., 7, 0, ..); the variant draws, and every path is used.
    auto ref = paths(*write_run(with({}), with({}), 64 * 4096));
    auto var = paths(*write_run(with({ep::variant::path_random}), with({}), 64 * 4096));
    REQUIRE(ref.size() == 64);
    REQUIRE(var.size() == 64);
    for (unsigned i = 0; i < ref.size(); ++i) CHECK(ref[i] == i % 8);
    unsigned in_turn = 0;
    for (unsigned i = 0; i < var.size(); ++i) in_turn += var[i] == i % 8 ? 1 : 0;
    CHECK(in_turn < 32);
    CHECK(std::set<unsigned>(var.begin(), var.end()).size() == 8);  // MR-PATH-5
}

TEST_CASE("rtt-every: every packet sent once gives an RTT sample") {
    // B grants 1 Gb/s, so A's packets leave about 34 us apart after the first
    // ACK, and B ACKs each 8th at once (its interval 500 us): the first of
    // each 8 waits some 240 us for its ACK. The reference samples only the
    // ACK's TrigPPSN (answered at once); the variant samples all 8, and its
    // SRTT takes in the waits.
    auto srtt = [](const ep::config& ca) {
        auto cb = with({}, 1);
        cb.inbound_rate_bps = 1e9;
        cb.ack_delay = 500us;
        auto r = write_run(ca, cb, 64 * 4096);
        return r->a->path_info(r->conn_a)[0].srtt;
    };
    const auto ref = srtt(with({}, 1)), var = srtt(with({ep::variant::rtt_every}, 1));
    CHECK(ref < 20us);
    CHECK(var > 60us);
}

TEST_CASE("grant-under: the receiver grants 92 % of the fair share") {
    auto grant = [](const ep::config& cb) {
        auto r = write_run(with({}, 1), cb, 4096);
        const auto acks = r->frames(direction::b_to_a, k_ack);
        REQUIRE_FALSE(acks.empty());
        return acks.back().f().ackh.grant_rate;
    };
    CHECK(grant(with({}, 1)) == 4000);  // 400 Gb/s, one sender, in 100 Mb/s
    CHECK(grant(with({ep::variant::grant_under}, 1)) == 3680);
    auto small = with({ep::variant::grant_under}, 1);
    small.inbound_rate_bps = 1.56e9;  // 15.6 units: 92 % is 14.35, rounded up to 15 (14 would be 10.4 % under)
    CHECK(grant(small) == 15);
}

TEST_CASE("grant-over: the receiver grants 108 % of the fair share, rounded down") {
    auto grant = [](const ep::config& cb) {
        auto r = write_run(with({}, 1), cb, 4096);
        return r->frames(direction::b_to_a, k_ack).back().f().ackh.grant_rate;
    };
    CHECK(grant(with({ep::variant::grant_over}, 1)) == 4320);
    auto small = with({ep::variant::grant_over}, 1);
    small.inbound_rate_bps = 1.56e9;  // 15.6 units: 108 % is 16.85, rounded down to 16 (2.6 % over)
    CHECK(grant(small) == 16);
}

TEST_CASE("wrap-soon: first PPSNs just below the 24-bit wrap, connection IDs at the top; a transfer crosses the wrap") {
    // 300 packets on one path from at most 256 below the wrap: they cross it.
    auto r = write_run(with({ep::variant::wrap_soon}, 1), with({ep::variant::wrap_soon}, 1), 300 * 4096);
    CHECK(r->conn_a >= 0xFFFFFEu - 255);
    CHECK(r->conn_b >= 0xFFFFFEu - 255);
    CHECK(r->conn_a != 0xFFFFFFu);
    bool wrapped = false;
    for (const auto& t : r->frames(direction::a_to_b, k_write)) {
        const auto psn = t.f().bth.psn;
        CHECK((psn >= 0xFFFFFFu - 255 || psn < 300));
        wrapped |= psn < 300;
    }
    CHECK(wrapped);
}

TEST_CASE("ip-fields: DSCP 26, TTL 255 and a flow label; ECN, DF, ID and the ICRC as the model asks") {
    auto check = [](bool ipv6) {
        fabric::fabric_config fc;
        pair_rig r(fc, with({ep::variant::ip_fields}, 2), with({ep::variant::ip_fields}, 2), 1, ipv6);
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(3 * 4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        REQUIRE(r.a->poll().size() == 1);  // the receiver took them: the ICRC masks what changed
        unsigned data = 0, acks = 0;
        for (const auto& t : r.tap) {
            const auto d = wire::decode_ethernet(t.bytes, {.verify_icrc = true});
            REQUIRE(d.ok());
            const auto& f = d.f;
            if (ipv6) {
                CHECK(f.ipv6.dscp == 26);
                CHECK(f.ipv6.hop_limit == 255);
                CHECK(f.ipv6.flow_label == (0x80000u | f.udp.sport));
            } else {
                CHECK(f.ipv4.dscp == 26);
                CHECK(f.ipv4.ttl == 255);
                CHECK(f.ipv4.df);
                CHECK(f.ipv4.identification == 0);
            }
            CHECK(f.ip_ecn() == wire::k_ecn_ect0);  // data as MR-HDR-4 asks; the rest too
            if (f.bth.opcode == k_write) ++data;
            acks += f.bth.opcode == k_ack ? 1 : 0;
        }
        CHECK(data == 3);
        CHECK(acks >= 1);
    };
    SECTION("IPv4") { check(false); }
    SECTION("IPv6") { check(true); }
}

TEST_CASE("vlan: every frame 802.1Q-tagged; the peer still takes them") {
    pair_rig r({}, with({ep::variant::vlan}, 2), with({}, 2));
    auto rk = r.b->register_mr(1 << 16);
    REQUIRE(r.a->post_write(r.conn_a, 0, pattern(2 * 4096), r.b->mr_va(rk), rk, 1).ok());
    r.run_for(1ms);
    REQUIRE(r.a->poll().size() == 1);
    unsigned tagged = 0, from_a = 0;
    for (const auto& t : r.tap) {
        if (t.dir != direction::a_to_b) continue;
        ++from_a;
        const auto f = t.f();
        if (f.eth.has_vlan && f.eth.vlan.vid == 100 && f.eth.vlan.pcp == 3) ++tagged;
    }
    CHECK(from_a >= 3);  // CONNECT and the data
    CHECK(tagged == from_a);
    for (const auto& t : r.frames(direction::b_to_a, k_ack)) CHECK_FALSE(t.f().eth.has_vlan);
}

TEST_CASE("stream-rr: first transmissions take turns among the streams") {
    auto streams = [](const ep::config& ca) {
        // Both posted before the connection opens, so that both wait.
        pair_rig r({}, ca, with({}, 1), 1, false, false);
        auto rk = r.b->register_mr(1 << 20);
        r.conn_a = r.a->connect(r.addr_b);
        REQUIRE(r.a->post_write(r.conn_a, 1, pattern(8 * 4096), r.b->mr_va(rk), rk, 1).ok());
        REQUIRE(r.a->post_write(r.conn_a, 2, pattern(8 * 4096), r.b->mr_va(rk) + (1 << 16), rk, 2).ok());
        r.connect();
        REQUIRE(r.a->poll().size() == 2);
        std::vector<unsigned> out;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) out.push_back(t.f().mrh.stream_id);
        return out;
    };
    const auto ref = streams(with({}, 1)), var = streams(with({ep::variant::stream_rr}, 1));
    REQUIRE(ref.size() == 16);
    REQUIRE(var.size() == 16);
    for (unsigned i = 0; i < 16; ++i) {
        CHECK(ref[i] == (i < 8 ? 1u : 2u));  // posting order
        CHECK(var[i] == 1u + i % 2);         // turns
    }
}

TEST_CASE("close-late: the first CLOSE waits after everything is acknowledged") {
    auto gap = [](const ep::config& ca) {
        pair_rig r({}, ca, with({}, 1));
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        REQUIRE(r.a->close(r.conn_a).ok());
        r.run_for(2ms);
        const auto acks = r.frames(direction::b_to_a, k_ack);
        const auto closes = r.closes();
        REQUIRE(acks.size() == 1);
        REQUIRE(closes.size() == 1);  // answered: not repeated
        return closes[0] - acks[0].t;  // from the ACK leaving B (the fabric's delay is the same in both)
    };
    const auto ref = gap(with({}, 1)), var = gap(with({ep::variant::close_late}, 1));
    CHECK(var - ref == ep::k_close_late);
}

TEST_CASE("ack-first: the ACK a packet draws at once leaves before its RNR or NAK") {
    constexpr auto k_rnr = static_cast<std::uint8_t>(wire::opcode::rnr);
    constexpr auto k_nak = static_cast<std::uint8_t>(wire::opcode::nak);
    // The opcodes of B's frames to A, in order, after answered_post's.
    auto order = [&](const ep::config& cb, bool send) {
        auto r = answered_post(cb, send);
        std::vector<std::uint8_t> out;
        for (const auto& t : r->tap)
            if (t.dir == direction::b_to_a) {
                const auto op = t.f().bth.opcode;
                if (op == k_ack || op == k_rnr || op == k_nak) out.push_back(op);
            }
        return out;
    };
    CHECK(order(with({}, 1), true) == std::vector<std::uint8_t>{k_rnr, k_ack});
    // The ACK's RnrCount names a rejection A has not seen yet: A holds and asks
    // (RNR_QUERY, MR-RNR-6), and B re-sends the RNR: the order is covered.
    CHECK(order(with({ep::variant::ack_first}, 1), true) == std::vector<std::uint8_t>{k_ack, k_rnr, k_rnr});
    CHECK(order(with({}, 1), false) == std::vector<std::uint8_t>{k_nak, k_ack});
    CHECK(order(with({ep::variant::ack_first}, 1), false) == std::vector<std::uint8_t>{k_ack, k_nak});
}

namespace {

// A's 4 MiB WRITE to B while every route drops path 3's data after its first
// 40 packets, whatever port it moves to (CTRL passes): path 3 expires four
// times, moves twice and fails; run long enough for PROBE and PATH_RESET_ACK
// to bring it back (RTO max, 100 ms).
std::unique_ptr<pair_rig> path3_fails(const ep::config& ca) {
    fabric::fabric_config fc;
    fc.default_stages = {{"delay", {{"delay", "2us"}}},
                         {"match_drop", {{"opcode", "WRITE"}, {"path_id", "3"}, {"count", "0"}}}};
    fc.path_stages_ab[3] = {{"delay", {{"delay", "2us"}}},
                            {"match_drop", {{"opcode", "WRITE"}, {"path_id", "3"}, {"skip", "40"}, {"count", "0"}}}};
    auto r = std::make_unique<pair_rig>(fc, ca);
    auto rk = r->b->register_mr(4 << 20);
    REQUIRE(r->a->post_write(r->conn_a, 0, pattern(4 << 20), r->b->mr_va(rk), rk, 1).ok());
    r->run_for(150ms);
    const auto wc = r->a->poll();
    REQUIRE(wc.size() == 1);
    CHECK(wc[0].status == ep::wc_status::success);
    const auto p3 = r->a->path_info(r->conn_a)[3];
    CHECK(p3.moves == 2);
    CHECK_FALSE(p3.failed);  // back in service
    return r;
}

}  // namespace

TEST_CASE("reset-next: a failed path's PATH_RESET continues its PPSN sequence") {
    auto reset_ppsn = [](const ep::config& ca) {
        auto r = path3_fails(ca);
        std::optional<std::uint32_t> initial, next;
        for (const auto& t : r->tap) {
            if (t.dir != direction::a_to_b) continue;
            const auto& f = t.f();
            if (f.bth.opcode == k_write && f.mrh.path_id == 3 && !initial)
                next = next && core::psn24::lt(f.bth.psn, *next) ? *next : core::psn24::add(f.bth.psn, 1);
            if (f.bth.opcode == static_cast<std::uint8_t>(wire::opcode::ctrl) &&
                f.ctrlh.type == static_cast<std::uint8_t>(wire::ctrl_type::path_reset) && !initial) {
                const auto tlvs = wire::read_ctrl_tlvs(f.tlvs);
                REQUIRE(tlvs.initial_ppsn);
                initial = tlvs.initial_ppsn->front();
            }
        }
        REQUIRE(initial);
        REQUIRE(next);
        return std::make_pair(*initial, *next);  // the reset's PPSN, and one past the highest sent before it
    };
    const auto [ref, ref_next] = reset_ppsn(with({}));
    CHECK(ref != ref_next);
    const auto [var, var_next] = reset_ppsn(with({ep::variant::reset_next}));
    CHECK(var == var_next);
}

TEST_CASE("port-reuse: a path moved twice goes back to its first port") {
    auto ports = [](const ep::config& ca) {
        auto r = path3_fails(ca);
        // Path 3's ports in order of use: its data, then its PROBEs (which
        // leave from the port the failing expiry moved it to, §2).
        std::vector<std::uint16_t> seen;
        for (const auto& t : r->tap) {
            if (t.dir != direction::a_to_b) continue;
            const auto& f = t.f();
            const bool probe = f.bth.opcode == static_cast<std::uint8_t>(wire::opcode::ctrl) &&
                               f.ctrlh.type == static_cast<std::uint8_t>(wire::ctrl_type::probe) &&
                               wire::read_ctrl_tlvs(f.tlvs).path_id == 3;
            if ((probe || (f.bth.opcode == k_write && f.mrh.path_id == 3)) && (seen.empty() || seen.back() != f.udp.sport))
                seen.push_back(f.udp.sport);
        }
        return seen;
    };
    const auto ref = ports(with({}));
    REQUIRE(ref.size() >= 3);
    CHECK(ref[2] != ref[0]);
    const auto var = ports(with({ep::variant::port_reuse}));
    REQUIRE(var.size() >= 3);
    CHECK(var[1] != var[0]);
    CHECK(var[2] == var[0]);  // back to the port before last: no other path holds it
}

TEST_CASE("nak-psn: a NAK's and an RNR's BTH.PSN carry the PPSN they answer") {
    constexpr auto k_rnr = static_cast<std::uint8_t>(wire::opcode::rnr);
    constexpr auto k_nak = static_cast<std::uint8_t>(wire::opcode::nak);
    // answered_post's RNR (send) or NAK, against the packet it answers.
    auto psns = [&](const ep::config& cb, bool send) {
        auto r = answered_post(cb, send);
        const auto data = r->frames(direction::a_to_b, send ? static_cast<std::uint8_t>(wire::opcode::send) : k_write);
        const auto answers = r->frames(direction::b_to_a, send ? k_rnr : k_nak);
        REQUIRE_FALSE(data.empty());
        REQUIRE_FALSE(answers.empty());
        const auto& a = answers.front().f();
        CHECK((send ? a.rnrh.ppsn.raw : a.nakh.nak_ppsn.raw) == data.front().f().bth.psn);  // the answered packet
        return std::make_pair(a.bth.psn, data.front().f().bth.psn);
    };
    for (bool send : {true, false}) {
        CHECK(psns(with({}, 1), send).first == 0);
        const auto [bth, ppsn] = psns(with({ep::variant::nak_psn}, 1), send);
        CHECK(ppsn != 0);
        CHECK(bth == ppsn);
    }
}

TEST_CASE("timer-tick: not-before timers fire on the next tick, the ACK interval on the last") {
    constexpr auto tick = ep::k_timer_tick.count();
    // RTO: one path that drops every data packet; no ACK, so no pacing. The
    // first expiry resends rto_initial after the first send, on the grid
    // with the variant.
    auto first_resend = [](const ep::config& ca) {
        fabric::fabric_config fc;
        fc.path_stages_ab[0] = {{"delay", {{"delay", "1234ns"}}}, {"blackhole", {{"fail_at", "0"}, {"restore_at", "never"}}}};
        pair_rig r(fc, ca, with({}, 1));
        r.run_for(37us);  // set-up off the grid
        auto rk = r.b->register_mr(4096);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(3ms);
        const auto data = r.frames(direction::a_to_b, k_write);
        REQUIRE(data.size() >= 2);
        return std::make_pair(data[0].t, data[1].t);
    };
    const auto [ref0, ref1] = first_resend(with({}, 1));
    CHECK(ref1 - ref0 == 1ms);
    const auto [var0, var1] = first_resend(with({ep::variant::timer_tick}, 1));
    CHECK(var1.count() % tick == 0);
    CHECK(var1 - var0 >= 1ms);
    CHECK(var1 - var0 < 1ms + ep::k_timer_tick);
    CHECK(var0.count() % tick != 0);  // the send itself is not on the grid: the test is not vacuous

    // ACK interval: three packets without AckReq; the interval's ACK leaves
    // 20 us after the first arrives (reference), at the last tick before it
    // (variant).
    auto ack_after_first = [](const ep::config& cb) {
        auto r = write_run(with({ep::variant::ackreq_none}, 1), cb, 3 * 4096);
        const auto data = r->frames(direction::a_to_b, k_write);
        const auto acks = r->frames(direction::b_to_a, k_ack);
        REQUIRE(acks.size() == 1);
        return std::make_pair(acks[0].t - (data[0].t + 2us), acks[0].t);  // from the first packet's arrival (2 us on)
    };
    CHECK(ack_after_first(with({}, 1)).first == 20us);
    const auto [wait, at] = ack_after_first(with({ep::variant::timer_tick}, 1));
    CHECK(at.count() % tick == 0);
    CHECK(wait <= 20us);
    CHECK(wait > 20us - ep::k_timer_tick);
}

TEST_CASE("pace-under: the sender paces at 90 % of its grant") {
    // B grants 10 Gb/s; A's 2 MiB after the first ACK leave at 9 Gb/s.
    auto rate = [](const ep::config& ca) {
        auto cb = with({});
        cb.inbound_rate_bps = 10e9;
        auto r = write_run(ca, cb, 2 << 20);
        const auto acks = r->frames(direction::b_to_a, k_ack);
        REQUIRE_FALSE(acks.empty());
        double bytes = 0;
        core::nanos first{-1}, last{0};
        for (const auto& t : r->frames(direction::a_to_b, k_write))
            if (t.t > acks.front().t) {
                if (first.count() < 0) first = t.t;
                else bytes += static_cast<double>(t.bytes.size() - 14);  // IP bytes after the first
                last = t.t;
            }
        return bytes * 8 / static_cast<double>((last - first).count());  // Gb/s
    };
    CHECK(rate(with({})) == Approx(10.0).epsilon(0.01));
    CHECK(rate(with({ep::variant::pace_under})) == Approx(9.0).epsilon(0.01));
}

TEST_CASE("answer-late: NAKs and RNRs leave 50 us after the packet, its ACK at once") {
    constexpr auto k_rnr = static_cast<std::uint8_t>(wire::opcode::rnr);
    constexpr auto k_nak = static_cast<std::uint8_t>(wire::opcode::nak);
    // From the ACK of answered_post's packet (AckReq: at once) to its RNR or NAK.
    auto lag = [&](const ep::config& cb, bool send) {
        auto r = answered_post(cb, send);
        const auto acks = r->frames(direction::b_to_a, k_ack);
        const auto answers = r->frames(direction::b_to_a, send ? k_rnr : k_nak);
        REQUIRE_FALSE(acks.empty());
        REQUIRE_FALSE(answers.empty());
        return answers.front().t - acks.front().t;
    };
    for (bool send : {true, false}) {
        CHECK(lag(with({}, 1), send) == 0ns);  // the same instant, the answer first (ack-first's test)
        CHECK(lag(with({ep::variant::answer_late}, 1), send) == ep::k_answer_late);
    }
    // The rejected SEND's ACK names a rejection A has not seen: A holds the
    // SEND and asks (RNR_QUERY); the RNR, when it comes, pauses the tag and the
    // message completes after its resend.
    pair_rig r({}, with({}, 1), with({ep::variant::answer_late}, 1));
    REQUIRE(r.a->post_send(r.conn_a, 0, 5, pattern(1000), 1).ok());
    r.run_for(5ms);
    REQUIRE(r.b->post_recv(r.conn_b, 5, r.b->register_mr(4096), 0, 4096, 9).ok());
    r.run_for(500ms);
    const auto wc = r.a->poll();
    REQUIRE(wc.size() == 1);
    CHECK(wc[0].status == ep::wc_status::success);
}

TEST_CASE("fixed-point: RTT samples in 1.024 us, alpha in 1/1024, a cut window in 1/256 packet") {
    // One packet: its ACK's sample alone makes the SRTT.
    auto srtt = [](const ep::config& ca) {
        auto r = write_run(ca, with({}, 1), 4096);
        return r->a->path_info(r->conn_a)[0].srtt;
    };
    CHECK(srtt(with({}, 1)).count() % ep::k_rtt_unit.count() != 0);  // the test is not vacuous
    CHECK(srtt(with({ep::variant::fixed_point}, 1)).count() % ep::k_rtt_unit.count() == 0);
    // One path with a fifth of its packets CE-marked: windows cut and grow.
    auto state = [](const ep::config& ca) {
        fabric::fabric_config fc;
        fc.path_stages_ab[0] = {{"delay", {{"delay", "2us"}}}, {"ecn_mark", {{"p", "0.2"}}}};
        pair_rig r(fc, ca, with({}, 1));
        auto rk = r.b->register_mr(4 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(20ms);
        REQUIRE(r.a->poll().size() == 1);
        const auto info = r.a->path_info(r.conn_a)[0];
        CHECK(info.ece_received > 0);
        return std::make_pair(info.alpha, info.cwnd);
    };
    auto on_grid = [](double x, double unit) { return std::floor(x * unit) == x * unit; };
    const auto [ref_alpha, ref_cwnd] = state(with({}, 1));
    CHECK_FALSE(on_grid(ref_alpha, ep::k_alpha_unit));
    CHECK_FALSE(on_grid(ref_cwnd, ep::k_cwnd_unit));
    const auto [alpha, cwnd] = state(with({ep::variant::fixed_point}, 1));
    CHECK(on_grid(alpha, ep::k_alpha_unit));
    CHECK(on_grid(cwnd, ep::k_cwnd_unit));  // each cut on the grid, each growth a whole packet
}
