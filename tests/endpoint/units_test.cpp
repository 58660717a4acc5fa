// The units seam (engine/endpoint/units.h): with units installed, the
// endpoint takes the receive path's, the RTO's and the RNR pause's decisions
// from them, not from its own code. A scripted set of units answers as the
// test says and records what it was asked; the RTL DUT's Verilated core
// (dut_adapters/rtl/shell) plugs in the same way.
#include <algorithm>

#include "harness.h"

using namespace mrct;
using namespace mrct::test;
using namespace std::chrono_literals;
using fabric::direction;
namespace ep = mrct::endpoint;
using core::nanos;

namespace {

struct scripted_units final : ep::units {
    ep::unit_events ev;
    // Answers.
    rx_class cls = rx_class::fresh;
    bool ack_now = true;
    ack_fields fields;
    nanos rto = 50us;
    bool pause = true;
    std::uint8_t attempt_after = 9;
    // What was asked.
    unsigned packets = 0, acked = 0, arms = 0, expires = 0, cancels = 0, samples = 0, pauses = 0;
    std::vector<bool> armed = std::vector<bool>(256, false);

    rx_class rx_classify(unsigned, std::uint32_t) override { return cls; }
    void rx_restart(unsigned, std::uint32_t) override {}
    bool rx_packet(unsigned, std::uint32_t, bool, bool, bool) override {
        ++packets;
        return ack_now;
    }
    ack_fields rx_ack(unsigned) override { return fields; }
    void rx_acked(unsigned) override { ++acked; }
    void rto_sample(unsigned, nanos, nanos, bool, nanos) override { ++samples; }
    nanos rto_arm(unsigned p) override {
        ++arms;
        armed[p] = true;
        return rto;
    }
    void rto_cancel(unsigned p) override {
        ++cancels;
        armed[p] = false;
    }
    bool rto_armed(unsigned p) override { return armed[p]; }
    void rto_acked(unsigned) override {}
    void rto_reset(unsigned) override {}
    void rto_expire(unsigned p) override {
        ++expires;
        armed[p] = false;
    }
    estimate rto_read(unsigned) override { return {true, 7us, 1us, rto, expires}; }
    bool rnr_pause(std::uint16_t, std::uint8_t, std::uint8_t, std::uint8_t, nanos) override {
        ++pauses;
        return pause;
    }
    bool rnr_paused(std::uint16_t) override { return pause && pauses > 0; }
    std::uint8_t next_attempt(std::uint8_t) override {
        pause = false;  // resumed: no longer paused
        return attempt_after;
    }
};

// Installs scripted units on `e`; `out` sees the connection's.
void install(ep::endpoint& e, scripted_units*& out) {
    e.set_units([&out](sim::scheduler&, const ep::config&, unsigned, ep::unit_events ev) {
        auto u = std::make_unique<scripted_units>();
        u->ev = std::move(ev);
        out = u.get();
        return u;
    });
}

ep::config one_path() {
    ep::config c;
    c.num_paths = 1;
    return c;
}

}  // namespace

TEST_CASE("units seam: the receive path's decisions and the ACK's fields are the units'") {
    pair_rig r({}, one_path(), one_path(), 1, false, false);
    scripted_units* u = nullptr;
    install(*r.b, u);
    r.connect();
    REQUIRE(u);
    u->fields.cum_ack = 0x123456;
    u->fields.sack.set(5);
    u->fields.ce_count = 777;
    auto rk = r.b->register_mr(1 << 16);

    SECTION("fresh, ACK now: the ACK carries what the units say") {
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(20us);
        CHECK(u->packets == 1);
        const auto acks = r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::ack));
        REQUIRE(acks.size() == 1);
        const auto f = acks[0].f();
        CHECK(f.bth.psn == 0x123456);
        CHECK(f.ackh.sack.test(5));
        CHECK(f.ackh.ce_count == 777);
        CHECK(u->acked == 1);
    }
    SECTION("out of the window: NAK 0x0B, the packet not taken in") {
        u->cls = ep::units::rx_class::out_of_window;
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(20us);
        CHECK(u->packets == 0);
        const auto naks = r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::nak));
        REQUIRE_FALSE(naks.empty());
        CHECK(naks[0].f().nakh.code == static_cast<std::uint8_t>(wire::nak_code::psn_out_of_window));
    }
    SECTION("not now: no ACK until the units' timer says so") {
        u->ack_now = false;
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(100us);  // far past the endpoint's own ACK delay (20 us)
        CHECK(r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::ack)).empty());
        u->ev.ack_due(0);
        r.run_for(10us);
        CHECK(r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::ack)).size() == 1);
        CHECK(u->acked == 1);
    }
}

TEST_CASE("units seam: the retransmission timer is the units'") {
    fabric::fabric_config fc;
    fc.path_stages_ab[0] = {{"match_drop", {{"opcode", "WRITE"}}}};  // nothing reaches B: no ACK
    pair_rig r(fc, one_path(), one_path(), 1, false, false);
    scripted_units* u = nullptr;
    install(*r.a, u);
    r.connect();
    REQUIRE(u);
    auto rk = r.b->register_mr(1 << 16);
    REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
    r.run_for(10ms);  // far past the endpoint's own RTOs: only the units' expiry resends
    CHECK(u->arms == 1);
    CHECK(r.frames(direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::write)).size() == 1);
    CHECK(r.a->path_info(r.conn_a)[0].rto_expiries == 0);
    u->ev.rto_due(0);
    r.run_for(10us);
    CHECK(u->expires == 1);
    const auto writes = r.frames(direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::write));
    REQUIRE(writes.size() == 2);
    CHECK(writes[1].f().bth.psn == writes[0].f().bth.psn);  // MR-RTO-4: the oldest PPSN again
    CHECK(u->arms == 2);  // the timer restarts with the resend
}

TEST_CASE("units seam: the RNR pause and the next Attempt are the units'") {
    pair_rig r({}, one_path(), one_path(), 1, false, false);
    scripted_units* u = nullptr;
    install(*r.a, u);
    r.connect();
    REQUIRE(u);
    REQUIRE(r.a->post_send(r.conn_a, 0, 1, pattern(100), 1).ok());  // B has no receive on tag 1: RNR
    r.run_for(50ms);  // far past the RNR's own time: only the units resume the tag
    REQUIRE(u->pauses == 1);
    const auto before = r.frames(direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::send)).size();
    auto rk = r.b->register_mr(1 << 16);
    REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 0, 4096, 7).ok());
    u->ev.resumed(1);
    r.run_for(100us);
    const auto sends = r.frames(direction::a_to_b, static_cast<std::uint8_t>(wire::opcode::send));
    REQUIRE(sends.size() == before + 1);
    CHECK(sends.back().f().mrh.attempt == 9);  // the units' next Attempt
    CHECK(sends.back().f().mrh.flags & wire::k_flag_rnr_resend);
}
