// Every bug profile differs from the reference exactly where documented: each
// scenario is run twice, reference and mutant, and the clause's observable is
// compared. These are the behaviours the assertions (issue 4) must catch.
#include <algorithm>
#include <set>

#include "harness.h"
#include "wire/build.h"
#include "wire/protocol.h"

using namespace mrct;
using namespace mrct::test;
using namespace std::chrono_literals;
using fabric::direction;
namespace ep = mrct::endpoint;

namespace {

ep::config with(ep::bug b, unsigned paths = 8) {
    ep::config c;
    c.bug_profile = b;
    c.num_paths = paths;
    return c;
}

// Every packet of path 0 from A to B CE-marked, 2 us of delay.
fabric::fabric_config ce_on_path0() {
    fabric::fabric_config fc;
    fc.path_stages_ab[0] = {{"delay", {{"delay", "2us"}}}, {"ecn_mark", {{"p", "1"}}}};
    return fc;
}

// RNR on tag 1 (no receive posted), receive posted 100 us later.
struct rnr_run {
    std::vector<ep::completion> rx;
    core::nanos tag2_done{-1};
};
rnr_run rnr_scenario(ep::bug b) {
    pair_rig r({}, with(b), {});
    auto rk = r.b->register_mr(1 << 16);
    REQUIRE(r.b->post_recv(r.conn_b, 2, rk, 32768, 8192, 200).ok());
    REQUIRE(r.a->post_send(r.conn_a, 0, 1, pattern(6000), 1).ok());
    r.run_for(100us);
    REQUIRE(r.a->post_send(r.conn_a, 1, 2, pattern(500), 2).ok());
    REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 0, 8192, 100).ok());
    rnr_run out;
    for (int i = 0; i < 100; ++i) {
        r.run_for(50us);
        for (auto& w : r.b->poll()) {
            if (w.wr_id == 200) out.tag2_done = r.s.now();
            out.rx.push_back(w);
        }
    }
    return out;
}

// One packet of a 64 KiB write dropped on path 2.
struct loss_run {
    ep::counters k;
    std::vector<wire::frame> retx;
};
loss_run loss_scenario(ep::bug b) {
    fabric::fabric_config fc;
    fc.path_stages_ab[2] = {{"delay", {{"delay", "2us"}}},
                            {"match_drop", {{"opcode", "WRITE"}, {"path_id", "2"}, {"skip", "1"}}}};
    pair_rig r(fc, with(b), {});
    auto rk = r.b->register_mr(1 << 20);
    REQUIRE(r.a->post_write(r.conn_a, 0, pattern(256 * 1024), r.b->mr_va(rk), rk, 1).ok());
    r.run_for(20ms);
    REQUIRE(r.a->poll().size() == 1);
    loss_run out{r.a->stats(), {}};
    for (const auto& t : r.frames(direction::a_to_b, k_write))
        if (t.f().mrh.flags & wire::k_flag_retx) out.retx.push_back(t.f());
    return out;
}

}  // namespace

TEST_CASE("frozen-rnr: the paused tag never resumes (MR-RNR-4)") {
    auto ref = rnr_scenario(ep::bug::none);
    auto bad = rnr_scenario(ep::bug::frozen_rnr);
    auto has = [](const rnr_run& r, std::uint64_t id) {
        return std::any_of(r.rx.begin(), r.rx.end(), [&](const auto& w) { return w.wr_id == id; });
    };
    CHECK(has(ref, 100));
    CHECK_FALSE(has(bad, 100));
    CHECK(has(bad, 200));  // other tags still flow
}

TEST_CASE("rnr-pauses-all: another tag waits for the pause too (MR-RNR-3)") {
    auto ref = rnr_scenario(ep::bug::none);
    auto bad = rnr_scenario(ep::bug::rnr_pauses_all);
    REQUIRE(ref.tag2_done.count() > 0);
    REQUIRE(bad.tag2_done.count() > 0);
    CHECK(bad.tag2_done - ref.tag2_done > 1ms);
}

TEST_CASE("shared-rto: a slow path inflates the fast paths' RTO (MR-RTO-1/2)") {
    auto rto0 = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.path_stages_ab[1] = {{"delay", {{"delay", "2ms"}}}};
        fc.path_stages_ba[1] = {{"delay", {{"delay", "2ms"}}}};
        pair_rig r(fc, with(b, 2), with(ep::bug::none, 2));
        auto rk = r.b->register_mr(4 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(50ms);
        return r.a->path_info(r.conn_a)[0].rto;
    };
    CHECK(rto0(ep::bug::none) < 500us);
    CHECK(rto0(ep::bug::shared_rto) > 2ms);
}

TEST_CASE("no-fast-retx: the SACK gap is ignored; only the RTO recovers (MR-SACK-3)") {
    auto ref = loss_scenario(ep::bug::none);
    auto bad = loss_scenario(ep::bug::no_fast_retx);
    CHECK(ref.k.fast_retransmits == 1);
    CHECK(ref.k.rto_retransmits == 0);
    CHECK(bad.k.fast_retransmits == 0);
    CHECK(bad.k.rto_retransmits >= 1);
}

TEST_CASE("go-back-n: packets after the lost one are resent too (MR-SACK-4)") {
    auto ref = loss_scenario(ep::bug::none);
    auto bad = loss_scenario(ep::bug::go_back_n);
    CHECK(ref.retx.size() == 1);
    CHECK(bad.retx.size() > 1);
}

TEST_CASE("retx-other-path: the resend leaves on another path with a new PPSN (MR-SACK-3)") {
    auto ref = loss_scenario(ep::bug::none);
    auto bad = loss_scenario(ep::bug::retx_other_path);
    REQUIRE(ref.retx.size() == 1);
    REQUIRE(bad.retx.size() >= 1);
    CHECK(ref.retx[0].mrh.path_id == 2);
    CHECK(bad.retx[0].mrh.path_id != 2);
}

TEST_CASE("karn-violation: an RTO-recovered packet yields an inflated RTT sample (MR-RTO-3)") {
    auto srtt = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.default_stages = {{"delay", {{"delay", "5us"}}}, {"match_drop", {{"opcode", "WRITE"}, {"skip", "3"}}}};
        auto snd = with(b, 1);
        snd.rto_min = 1ms;  // the RTO recovery then takes >= 1 ms: a large, unmistakable wrong sample
        pair_rig r(fc, snd, with(ep::bug::none, 1));
        auto rk = r.b->register_mr(1 << 16);
        for (int i = 0; i < 5; ++i) {  // single-packet messages, one at a time
            REQUIRE(r.a->post_write(r.conn_a, 0, pattern(100), r.b->mr_va(rk), rk, static_cast<std::uint64_t>(i)).ok());
            r.run_for(5ms);
        }
        CHECK(r.a->stats().rto_retransmits == 1);
        return r.a->path_info(r.conn_a)[0].srtt;
    };
    CHECK(srtt(ep::bug::none) < 50us);
    CHECK(srtt(ep::bug::karn_violation) > 100us);
}

TEST_CASE("same-entropy: every path uses one source port (MR-PATH-1)") {
    for (auto b : {ep::bug::none, ep::bug::same_entropy}) {
        pair_rig r({}, with(b), {});
        std::set<std::uint16_t> ports;
        for (const auto& p : r.a->path_info(r.conn_a)) ports.insert(p.port);
        CHECK(ports.size() == (b == ep::bug::none ? 8u : 1u));
    }
}

TEST_CASE("no-epoch-bump and no-port-move (MR-PATH-2, MR-PATH-4)") {
    auto run = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.path_stages_ab[3] = {{"blackhole", {{"fail_at", "0"}}}};
        pair_rig r(fc, with(b), {});
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(64 * 1024), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(10ms);
        return r.a->path_info(r.conn_a)[3];
    };
    auto ref = run(ep::bug::none), ne = run(ep::bug::no_epoch_bump), nm = run(ep::bug::no_port_move);
    CHECK(ref.moves >= 1);
    CHECK(ref.epoch == ref.moves % 16);
    CHECK(ne.moves >= 1);
    CHECK(ne.epoch == 0);
    CHECK(nm.moves == 0);
    CHECK(nm.rto_expiries >= 2);
}

TEST_CASE("ignore-ecn and shared-cwnd (MR-CC-2, MR-CC-3)") {
    auto run = [](ep::bug b) {
        pair_rig r(ce_on_path0(), with(b), {});
        auto rk = r.b->register_mr(8 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(8 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(20ms);
        return r.a->path_info(r.conn_a);
    };
    auto ref = run(ep::bug::none), ie = run(ep::bug::ignore_ecn), sc = run(ep::bug::shared_cwnd);
    CHECK(ref[0].cwnd < 16);
    CHECK(ie[0].cwnd > 16);
    CHECK(ref[5].cwnd > 16);
    CHECK(sc[5].cwnd < ref[5].cwnd);
}

TEST_CASE("ignore-grant: the sender is not paced to the grant (MR-GR-2)") {
    auto finish = [](ep::bug b) {
        ep::config rcv;
        rcv.inbound_rate_bps = 1e9;  // grants 1 Gb/s
        pair_rig r({}, with(b), rcv);
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 20), r.b->mr_va(rk), rk, 1).ok());
        for (int i = 0; i < 400; ++i) {
            r.run_for(100us);
            auto wc = r.a->poll();
            if (!wc.empty()) return wc[0].time;
        }
        return core::nanos{-1};
    };
    const auto ref = finish(ep::bug::none), bad = finish(ep::bug::ignore_grant);
    REQUIRE(ref.count() > 0);
    REQUIRE(bad.count() > 0);
    // Unpaced until the first ACK (§5 grant edges): the initial windows, 8 x 16
    // packets = 512 KiB, leave at once; the other 512 KiB at 1 Gb/s take > 4 ms.
    CHECK(ref > 4ms);
    CHECK(bad < 2ms);
}

TEST_CASE("window-overrun: more in flight than the window allows (MR-CC-4, MR-SACK-5)") {
    auto first_burst = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.default_stages = {{"delay", {{"delay", "200us"}}}};
        pair_rig r(fc, with(b, 1), with(ep::bug::none, 1));
        auto rk = r.b->register_mr(4 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(100us);  // before any ACK can return
        return r.frames(direction::a_to_b, k_write).size();
    };
    CHECK(first_burst(ep::bug::none) == 16);
    CHECK(first_burst(ep::bug::window_overrun) > 256);
}

TEST_CASE("stream-order: completions out of StreamSeq order (MR-STR-1)") {
    auto order = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.path_stages_ab[0] = {{"delay", {{"delay", "200us"}}}};
        fc.path_stages_ab[1] = {{"delay", {{"delay", "2us"}}}};
        pair_rig r(fc, with(ep::bug::none, 2), with(b, 2));
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 0, 4096, 100).ok());
        REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 4096, 4096, 101).ok());
        REQUIRE(r.a->post_send(r.conn_a, 7, 1, pattern(100), 1).ok());
        REQUIRE(r.a->post_send(r.conn_a, 7, 1, pattern(100), 2).ok());
        r.run_for(2ms);
        std::vector<std::uint64_t> ids;
        for (const auto& w : r.b->poll()) ids.push_back(w.wr_id);
        return ids;
    };
    CHECK(order(ep::bug::none) == std::vector<std::uint64_t>{100, 101});
    CHECK(order(ep::bug::stream_order) == std::vector<std::uint64_t>{101, 100});
}

TEST_CASE("cross-stream-hol: a loss on one stream holds another stream's completions (MR-STR-2)") {
    // Stream 1's one packet is lost three times (its first transmission and
    // two resends); stream 2's write, posted after it, is acknowledged within
    // microseconds. Its completion waits for stream 1 only under the bug.
    auto stream2_done_at = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.default_stages = {{"delay", {{"delay", "2us"}}},
                             {"match_drop", {{"opcode", "WRITE"}, {"stream_id", "1"}, {"count", "3"}}}};
        pair_rig r(fc, with(b, 2), with(ep::bug::none, 2));
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 1, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        REQUIRE(r.a->post_write(r.conn_a, 2, pattern(65536), r.b->mr_va(rk) + 65536, rk, 2).ok());
        core::nanos at{-1};
        for (int i = 0; i < 400 && at.count() < 0; ++i) {
            r.run_for(5us);
            for (const auto& w : r.a->poll())
                if (w.wr_id == 2) at = r.s.now();
        }
        UNSCOPED_INFO(ep::bug_name(b) << ": stream 2 completed at " << at.count() << " ns");
        return at;
    };
    const auto ref = stream2_done_at(ep::bug::none), bad = stream2_done_at(ep::bug::cross_stream_hol);
    REQUIRE(ref.count() > 0);
    REQUIRE(bad.count() > 0);
    CHECK(ref < 1ms + 100us);   // connected at 1 ms; acknowledged in microseconds
    CHECK(bad > 1ms + 300us);   // after stream 1's packet got through
}

TEST_CASE("accept-bad-icrc: corrupted frames are not dropped (MR-HDR-2)") {
    auto run = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.path_stages_ab[1] = {{"delay", {{"delay", "2us"}}}, {"corrupt", {{"p", "0.5"}}}};
        pair_rig r(fc, {}, with(b));
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(256 * 1024), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(20ms);
        return r.b->stats().drops[static_cast<int>(wire::drop_reason::bad_icrc)];
    };
    CHECK(run(ep::bug::none) > 0);
    CHECK(run(ep::bug::accept_bad_icrc) == 0);
}

TEST_CASE("early-completion: completes when EOM arrives, before every byte is placed (MR-OOO-3)") {
    auto complete_at_completion = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.path_stages_ab[0] = {{"delay", {{"delay", "300us"}}}};  // SOM on the slow path
        fc.path_stages_ab[1] = {{"delay", {{"delay", "2us"}}}};    // EOM on the fast path
        pair_rig r(fc, with(ep::bug::none, 2), with(b, 2));
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 0, 8192, 100).ok());
        const auto data = pattern(8000);
        REQUIRE(r.a->post_send(r.conn_a, 0, 1, data, 1).ok());
        for (int i = 0; i < 200; ++i) {
            r.run_for(5us);
            if (!r.b->poll().empty()) return std::equal(data.begin(), data.end(), r.b->mr_bytes(rk).begin());
        }
        FAIL("no completion");
        return false;
    };
    CHECK(complete_at_completion(ep::bug::none));
    CHECK_FALSE(complete_at_completion(ep::bug::early_completion));
}

// A WRITE of 100 bytes into a fabric whose every path A -> B is dead, run
// for 2 s: how many times A sent its packet, and how the WRITE completed.
static std::pair<std::size_t, std::string> write_into_dead_fabric(ep::bug b) {
    pair_rig r({}, with(b, 1), with(ep::bug::none, 1));
    for (unsigned p = 0; p < r.fab->size(); ++p) r.fab->at(direction::a_to_b, p).set_failed(true);
    auto rk = r.b->register_mr(8192);
    REQUIRE(r.a->post_write(r.conn_a, 0, pattern(100), r.b->mr_va(rk), rk, 9).ok());
    r.run_for(2s);
    const auto wcs = r.a->poll();
    return {r.frames(direction::a_to_b, k_write).size(),
            wcs.size() == 1 ? std::string(ep::wc_status_name(wcs[0].status)) : std::string("none")};
}

TEST_CASE("no-retry-limit: keeps retransmitting past 7 transmissions (MR-SACK-6)") {
    CHECK(write_into_dead_fabric(ep::bug::none).first == 7);
    const auto [sent, status] = write_into_dead_fabric(ep::bug::no_retry_limit);
    CHECK(sent > 7);
    CHECK(status == "none");
}

TEST_CASE("early-give-up: fails the message after 3 transmissions, not 7 (MR-SACK-6)") {
    using result = std::pair<std::size_t, std::string>;
    CHECK(write_into_dead_fabric(ep::bug::none) == result{7, "retry_exceeded"});
    CHECK(write_into_dead_fabric(ep::bug::early_give_up) == result{3, "retry_exceeded"});
}

TEST_CASE("ecn-not-ect: data leaves as Not-ECT (MR-HDR-4)") {
    pair_rig r({}, with(ep::bug::ecn_not_ect), {});
    auto rk = r.b->register_mr(1 << 16);
    REQUIRE(r.a->post_write(r.conn_a, 0, pattern(10000), r.b->mr_va(rk), rk, 1).ok());
    r.run_for(1ms);
    auto w = r.frames(direction::a_to_b, k_write);
    REQUIRE(!w.empty());
    for (const auto& t : w) CHECK(t.f().ipv4.ecn == wire::k_ecn_not_ect);
    (void)k_send;
}

// Receiver-side and connection profiles (issue 4): B is the mutant receiver
// unless the profile is a sender's.

TEST_CASE("lazy-ack: an AckReq packet waits for the ACK interval (MR-SACK-2)") {
    auto ack_delay = [](ep::bug b) {
        pair_rig r({}, with(ep::bug::none), with(b));
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(100), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        auto w = r.frames(direction::a_to_b, k_write);
        auto a = r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::ack));
        REQUIRE(w.size() == 1);
        REQUIRE(!a.empty());
        return a[0].t - w[0].t;
    };
    CHECK(ack_delay(ep::bug::none) < 5us);
    CHECK(ack_delay(ep::bug::lazy_ack) >= 20us);
}

TEST_CASE("no-ece: CE-marked packets are acknowledged without ECE (MR-CC-1)") {
    // Every data packet is CE-marked on its way to the receiver (the ecn_mark stage).
    auto ece_marked = [](ep::bug b) {
        fabric::fabric_config fc;
        fc.default_stages = {{"delay", {{"delay", "2us"}}}, {"ecn_mark", {{"p", "1"}}}};
        pair_rig r(fc, with(ep::bug::none), with(b));
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(100us);
        std::uint64_t n = 0;
        for (const auto& p : r.a->path_info(r.conn_a)) n += p.ece_received;
        return n;
    };
    CHECK(ece_marked(ep::bug::none) >= 1);
    CHECK(ece_marked(ep::bug::no_ece) == 0);
}

TEST_CASE("grant-unlimited: every ACK advertises 0xFFFF (MR-GR-3)") {
    auto grants = [](ep::bug b) {
        ep::config rc = with(b);
        rc.inbound_rate_bps = 100e9;
        pair_rig r({}, with(ep::bug::none), rc);
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(40000), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        std::set<std::uint16_t> g;
        for (const auto& t : r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::ack))) g.insert(t.f().ackh.grant_rate);
        return g;
    };
    CHECK(grants(ep::bug::none) == std::set<std::uint16_t>{1000});
    CHECK(grants(ep::bug::grant_unlimited) == std::set<std::uint16_t>{wire::k_grant_unlimited});
}

TEST_CASE("no-rnr: a SEND without a receive is discarded without an RNR (MR-RNR-1)") {
    auto rnrs = [](ep::bug b) {
        pair_rig r({}, with(ep::bug::none), with(b));
        REQUIRE(r.a->post_send(r.conn_a, 0, 3, pattern(5000), 1).ok());
        r.run_for(1ms);
        return r.b->stats().rnrs_sent;
    };
    CHECK(rnrs(ep::bug::none) == 1);
    CHECK(rnrs(ep::bug::no_rnr) == 0);
}

namespace {
// A WRITE crafted as A's own on path `path_id`, with a nonzero Tag (a header mismatch).
core::byte_buffer crafted_write(pair_rig& r, std::uint32_t rk, std::uint8_t path_id, std::uint16_t tag) {
    return wire::build(r.crafted_write(rk, path_id, tag));
}
std::vector<std::uint8_t> naks_of(pair_rig& r) {
    std::vector<std::uint8_t> v;
    for (const auto& t : r.frames(direction::b_to_a, static_cast<std::uint8_t>(wire::opcode::nak))) v.push_back(t.f().nakh.code);
    return v;
}
}  // namespace

TEST_CASE("accept-mismatch: a WRITE with a Tag is placed, not NAKed 0x0F (MR-HDR-5)") {
    for (auto b : {ep::bug::none, ep::bug::accept_mismatch}) {
        pair_rig r({}, with(ep::bug::none), with(b));
        auto rk = r.b->register_mr(4096);
        r.b->receive(crafted_write(r, rk, 0, 9));
        r.run_for(10us);
        if (b == ep::bug::none) CHECK(naks_of(r) == std::vector<std::uint8_t>{0x0F});
        else CHECK(naks_of(r).empty());
    }
}

TEST_CASE("no-path-check: PathID >= NumPaths is dropped silently, not NAKed 0x20 (MR-CONN-4)") {
    for (auto b : {ep::bug::none, ep::bug::no_path_check}) {
        pair_rig r({}, with(ep::bug::none, 4), with(b, 4));
        auto rk = r.b->register_mr(4096);
        r.b->receive(crafted_write(r, rk, 9, 0));
        r.run_for(10us);
        if (b == ep::bug::none) CHECK(naks_of(r) == std::vector<std::uint8_t>{0x20});
        else CHECK(naks_of(r).empty());
    }
}

TEST_CASE("close-early: CLOSE leaves with data unacknowledged (MR-CONN-3)") {
    auto close_before_last_ack = [](ep::bug b) {
        pair_rig r({}, with(b), {});
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 20), r.b->mr_va(rk), rk, 1).ok());
        REQUIRE(r.a->close(r.conn_a).ok());
        r.run_for(5ms);
        core::nanos close_t{-1}, last_ack{0};
        for (const auto& t : r.tap) {
            const auto f = t.f();
            if (t.dir == direction::a_to_b && f.bth.opcode == static_cast<std::uint8_t>(wire::opcode::ctrl) && close_t.count() < 0 &&
                f.ctrlh.type == static_cast<std::uint8_t>(wire::ctrl_type::close))
                close_t = t.t;
            if (t.dir == direction::b_to_a && f.bth.opcode == static_cast<std::uint8_t>(wire::opcode::ack)) last_ack = t.t;
        }
        REQUIRE(close_t.count() >= 0);
        return close_t < last_ack;
    };
    CHECK_FALSE(close_before_last_ack(ep::bug::none));
    CHECK(close_before_last_ack(ep::bug::close_early));
}

TEST_CASE("single-path: every new packet leaves on path 0 (MR-PATH-5)") {
    auto paths_used = [](ep::bug b) {
        pair_rig r({}, with(b), {});
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(5ms);
        std::set<unsigned> p;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) p.insert(t.f().mrh.path_id);
        return p.size();
    };
    CHECK(paths_used(ep::bug::none) == 8);
    CHECK(paths_used(ep::bug::single_path) == 1);
}

TEST_CASE("ignore-mtu: the initiator keeps its MTU when a smaller one is agreed (MR-CONN-1)") {
    auto biggest = [](ep::bug b) {
        ep::config rc;
        rc.mtu = 1024;
        pair_rig r({}, with(b), rc);
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(8192), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        std::size_t m = 0;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) m = std::max(m, t.f().payload.size());
        return m;
    };
    CHECK(biggest(ep::bug::none) == 1024);
    CHECK(biggest(ep::bug::ignore_mtu) == 4096);
}

TEST_CASE("no-failover: a dead path is never failed (MR-PATH-6)") {
    auto resets = [](ep::bug b) {
        pair_rig r({}, with(b, 2), with(ep::bug::none, 2));
        auto rk = r.b->register_mr(1 << 20);
        r.fab->at(direction::a_to_b, 1).set_failed(true);
        for (std::uint16_t port = 0xC000; port != 0; ++port)  // every port but path 0's routes into the dead fabric path
            if (port != r.a->path_info(r.conn_a)[0].port) r.fab->pin(port, 1);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 18), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(50ms);
        return r.a->path_info(r.conn_a)[1].failed;
    };
    CHECK(resets(ep::bug::none));
    CHECK_FALSE(resets(ep::bug::no_failover));
}

// §5 (Failed path): "The last path in service never fails; the retry limit
// ends it." Both routes dead: the reference fails one path and keeps the
// other until the retry limit ends the WRITE; the profile fails both.
TEST_CASE("fails-last-path: the last path in service fails too (MR-PATH-6)") {
    auto failed_paths = [](ep::bug b) {
        pair_rig r({}, with(b, 2), with(ep::bug::none, 2));
        auto rk = r.b->register_mr(1 << 20);
        r.fab->at(direction::a_to_b, 1).set_failed(true);
        for (std::uint16_t port = 0xC000; port != 0; ++port) r.fab->pin(port, 1);  // every port routes into the dead path
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 16), r.b->mr_va(rk), rk, 1).ok());
        // No RTT sample: expiries at 1, 3, 7 and 15 ms fail a path; the
        // retry limit (7 transmissions) comes at 63 ms.
        r.run_for(40ms);
        unsigned n = 0;
        for (const auto& p : r.a->path_info(r.conn_a)) n += p.failed;
        return n;
    };
    CHECK(failed_paths(ep::bug::none) == 1);
    CHECK(failed_paths(ep::bug::fails_last_path) == 2);
}

TEST_CASE("rnr-cuts-window: an RNR cuts every path's window (MR-RNR-5)") {
    auto cwnd_after = [](ep::bug b) {
        pair_rig r({}, with(b, 2), with(ep::bug::none, 2));
        auto rk = r.b->register_mr(8 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 1, pattern(4 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(50us);
        REQUIRE(r.a->post_send(r.conn_a, 0, 5, pattern(100), 2).ok());  // no receive on tag 5: RNR
        r.run_for(500us);
        REQUIRE(r.a->stats().rnrs_received >= 1);
        return r.a->path_info(r.conn_a)[0].cwnd;
    };
    CHECK(cwnd_after(ep::bug::none) >= 16);
    CHECK(cwnd_after(ep::bug::rnr_cuts_window) <= 2);
}

TEST_CASE("close-on-ack: every late ACK draws another CLOSE (MR-CONN-3)") {
    auto closes_after_acks = [](ep::bug b) {
        pair_rig r({}, with(b, 1), with(ep::bug::none, 1));
        r.close_unanswered();
        r.late_acks(3, 10us);  // within the CTRL interval
        r.run_for(10us);
        return r.closes().size();
    };
    CHECK(closes_after_acks(ep::bug::none) == 1);
    CHECK(closes_after_acks(ep::bug::close_on_ack) == 4);
}

TEST_CASE("hasty-ctrl: an unanswered CTRL is repeated every initial RTO / 4 (MR-CONN-1, MR-CONN-3, MR-RNR-6, MR-PATH-7)") {
    auto interval = [](ep::bug b) {
        pair_rig r({}, with(b, 1), with(ep::bug::none, 1));
        r.close_unanswered();
        r.run_for(2500us);
        const auto v = r.closes();
        REQUIRE(v.size() >= 2);
        return v[1] - v[0];
    };
    CHECK(interval(ep::bug::none) >= 1ms);  // max(initial RTO, the paths' RTOs)
    CHECK(interval(ep::bug::hasty_ctrl) == 250us);
}

TEST_CASE("connect-once: a lost ACCEPT is answered by no second CONNECT (MR-CONN-1)") {
    struct outcome {
        std::vector<core::nanos> connects;
        bool established;
    };
    auto after_lost_accept = [](ep::bug b) {
        pair_rig r({}, with(b, 1), with(ep::bug::none, 1), 1, false, /*connect_now=*/false);
        auto fail_b_to_a = [&r](bool f) {  // every path: the ACCEPT's port is not pinned yet
            for (unsigned p = 0; p < r.fab->size(); ++p) r.fab->at(fabric::direction::b_to_a, p).set_failed(f);
        };
        fail_b_to_a(true);  // the ACCEPT is lost
        r.conn_a = r.a->connect(r.addr_b);
        r.run_for(100us);
        fail_b_to_a(false);
        r.run_for(3ms);
        return outcome{r.ctrls(wire::ctrl_type::connect), r.a->established(r.conn_a)};
    };
    const auto ref = after_lost_accept(ep::bug::none);
    REQUIRE(ref.connects.size() == 2);  // answered the second time
    CHECK(ref.connects[1] - ref.connects[0] >= 1ms);  // the initial RTO
    CHECK(ref.established);
    const auto bad = after_lost_accept(ep::bug::connect_once);
    CHECK(bad.connects.size() == 1);
    CHECK_FALSE(bad.established);
}

TEST_CASE("bug stale-ack-walks: the older ACK walks the base around the PPSN space; the lost packet is never resent (MR-SACK-3)") {
    // The reference's side of it: endpoint_test ("an ACK older than one
    // already taken ..."), the same rig.
    ep::config buggy;
    buggy.bug_profile = ep::bug::stale_ack_walks;
    one_path_write t("5", buggy);
    CHECK_FALSE(t.reordered_acks_then_resent());
    const auto wc = t.r->a->poll();
    REQUIRE(wc.size() == 1);
    CHECK(wc[0].status == ep::wc_status::success);  // the sender believes it delivered
    const auto mem = t.r->b->mr_bytes(t.rk);
    CHECK_FALSE(std::equal(t.data.begin(), t.data.end(), mem.begin()));  // the lost packet's bytes never arrived
}

TEST_CASE("rnr-ignores-pause: the paused tag's next message leaves during the pause; the rejected one still waits (MR-RNR-2)") {
    struct outcome {
        std::size_t sent_in_pause = 0;  // packets of the second message (stream 2) before the pause ended
        std::size_t completed = 0;
    };
    auto run = [](ep::bug b) {
        pair_rig r({}, with(b), {});
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_send(r.conn_a, 1, 1, pattern(8192), 1).ok());  // tag 1 has no receive: RNR, 1.28 ms
        r.run_for(100us);
        REQUIRE(r.a->stats().rnrs_received == 1);
        const auto posted = r.s.now();
        REQUIRE(r.a->post_send(r.conn_a, 2, 1, pattern(4096, 7), 2).ok());  // the same tag, another stream
        r.run_for(300us);
        outcome o;
        for (const auto& t : r.frames(direction::a_to_b, k_send))
            if (t.t >= posted && t.f().mrh.stream_id == 2) ++o.sent_in_pause;
        REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 0, 8192, 100).ok());
        REQUIRE(r.b->post_recv(r.conn_b, 1, rk, 8192, 8192, 101).ok());
        r.run_for(5ms);
        o.completed = r.a->poll().size();
        return o;
    };
    const auto ref = run(ep::bug::none);
    const auto bad = run(ep::bug::rnr_ignores_pause);
    CHECK(ref.sent_in_pause == 0);
    CHECK(bad.sent_in_pause >= 1);
    CHECK(ref.completed == 2);
    CHECK(bad.completed == 2);  // the rejected message is still re-sent after the pause
}

TEST_CASE("rto-resends-newest: an RTO resends the path's newest unacknowledged PPSN, not its oldest (MR-RTO-4)") {
    // One path; its route fails while a 4-packet WRITE is in flight, then
    // comes back: the first expiry's resend names the PPSN.
    auto first_resend = [](ep::bug b) {
        pair_rig r({}, with(b, 1), with(ep::bug::none, 1));
        auto rk = r.b->register_mr(1 << 16);
        r.fab->at(direction::a_to_b, 0).set_failed(true);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(4 * 4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(200us);
        r.fab->at(direction::a_to_b, 0).set_failed(false);
        r.run_for(5ms);
        REQUIRE(r.a->poll().size() == 1);  // recovered either way
        std::vector<std::uint32_t> first, retx;
        for (const auto& t : r.frames(direction::a_to_b, k_write))
            ((t.f().mrh.flags & wire::k_flag_retx) ? retx : first).push_back(t.f().bth.psn);
        REQUIRE(first.size() == 4);
        REQUIRE(!retx.empty());
        return std::pair{retx[0], first};
    };
    const auto [ref, ref_first] = first_resend(ep::bug::none);
    const auto [bad, bad_first] = first_resend(ep::bug::rto_resends_newest);
    CHECK(ref == ref_first.front());
    CHECK(bad == bad_first.back());
}

TEST_CASE("reserved-bits-set: data leaves with a BTH reserved bit set (MR-HDR-1)") {
    for (auto b : {ep::bug::none, ep::bug::reserved_bits_set}) {
        pair_rig r({}, with(b), {});
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(10000), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        CHECK(r.a->poll().size() == 1);  // the reference receiver ignores reserved bits
        auto w = r.frames(direction::a_to_b, k_write);
        REQUIRE(!w.empty());
        for (const auto& t : w) CHECK(t.f().bth.resv7 == (b == ep::bug::none ? 0 : 1));
    }
}

TEST_CASE("df-clear: IPv4 leaves with DF clear and a running Identification (MR-HDR-6)") {
    for (auto b : {ep::bug::none, ep::bug::df_clear}) {
        pair_rig r({}, with(b), {});
        auto rk = r.b->register_mr(1 << 16);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(3 * 4096), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(1ms);
        CHECK(r.a->poll().size() == 1);  // the ICRC covers the header it was sent with: still delivered
        std::set<std::uint16_t> ids;
        for (const auto& t : r.frames(direction::a_to_b, k_write)) {
            CHECK(t.f().ipv4.df == (b == ep::bug::none));
            ids.insert(t.f().ipv4.identification);
        }
        if (b == ep::bug::none) CHECK(ids == std::set<std::uint16_t>{0});
        else CHECK((ids.size() == 3 && !ids.count(0)));
    }
}

TEST_CASE("pause-frames: every ECE draws an 802.3x PAUSE frame (MR-CC-5)") {
    auto pauses = [](ep::bug b) {
        pair_rig r(ce_on_path0(), with(b), {});
        auto rk = r.b->register_mr(1 << 20);
        REQUIRE(r.a->post_write(r.conn_a, 0, pattern(1 << 20), r.b->mr_va(rk), rk, 1).ok());
        r.run_for(5ms);
        CHECK(r.a->poll().size() == 1);
        std::size_t n = 0;
        for (const auto& t : r.tap)
            if (t.dir == direction::a_to_b && t.bytes.size() >= 18 && wire::is_mac_control(t.bytes)) {
                ++n;
                CHECK(t.bytes[0] == 0x01);  // to 01:80:C2:00:00:01
                CHECK((t.bytes[15] == 0x01 && t.bytes[16] == 0xFF && t.bytes[17] == 0xFF));  // PAUSE, quanta 0xFFFF
            }
        return n;
    };
    CHECK(pauses(ep::bug::none) == 0);
    CHECK(pauses(ep::bug::pause_frames) >= 1);
}

// accept-own-minor, rnr-kept, sync-first, sync-only and the receiver profiles of the ten below
// (write-arrival-order, send-arrival-order, oob-write-silent,
// unknown-conn-silent, no-sack, grant-zero-first, path-by-port,
// nak-bad-version, grant-not-shared) are tested in receiver_test.cpp, which writes the frames
// (a CONNECT of an older minor version, an RNR_QUERY, packets out of order,
// from a new port, of an unknown version) itself.
TEST_CASE("every bug profile has a name, a clause and a test above") {
    std::set<std::string_view> names;
    for (const auto& b : ep::bug_profiles()) {
        CHECK(names.insert(b.name).second);
        CHECK(b.clauses.starts_with("MR-"));
        CHECK(ep::bug_by_name(b.name).ok());
    }
    CHECK(names.size() == 56);
    CHECK_FALSE(ep::bug_by_name("nonsense").ok());
    CHECK(ep::bug_by_name("none").ok());
    CHECK_FALSE(ep::bug_by_name("").ok());  // an unset variable, not the reference
}
