// The DUT's quickest answer on the wire to a request of the engine's (D146).
#include <catch2/catch.hpp>

#include "assertions/ctrl_requests.h"
#include "assertions/trace_builder.h"
#include "wire/ctrl.h"

using namespace mrct;
using namespace mrct::test;
using namespace std::chrono_literals;
using D = trace::dir;
using wire::ctrl_type;

namespace {
std::vector<wire::tlv_spec> probe_tlvs(std::uint8_t path, std::uint8_t nonce) {
    return {wire::tlv_spec{8, {path}}, wire::tlv_spec{9, {0, 0, 0, nonce}}};
}
std::vector<wire::tlv_spec> reset_tlvs(std::uint8_t path, std::uint8_t ppsn) {
    return {wire::tlv_spec{8, {path}}, wire::tlv_spec{5, {0, 0, 0, ppsn}}};
}
}  // namespace

TEST_CASE("quickest_answer: from a request of the engine's to the DUT's answer, the quickest") {
    trace_builder b;
    CHECK_FALSE(assertions::quickest_answer(b.tr));  // nothing asked: nothing known
    b.ctrl(10us, D::to_dut, ctrl_type::probe, probe_tlvs(1, 7));
    b.ctrl(20us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(1, 9));  // another nonce: not this PROBE's
    b.ctrl(60us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(1, 7));
    REQUIRE(assertions::quickest_answer(b.tr));
    CHECK(*assertions::quickest_answer(b.tr) == 50us);
    // A PATH_RESET answered in 30 us: the quickest.
    b.ctrl(100us, D::to_dut, ctrl_type::path_reset, reset_tlvs(2, 40));
    b.ctrl(130us, D::from_dut, ctrl_type::path_reset_ack, reset_tlvs(2, 40));
    CHECK(*assertions::quickest_answer(b.tr) == 30us);
}

TEST_CASE("quickest_answer: a repeated request, an injected one and a CLOSE give no time") {
    trace_builder b;
    // Repeated before its answer came: the answer may be the repeat's.
    b.ctrl(0us, D::to_dut, ctrl_type::probe, probe_tlvs(1, 7));
    b.ctrl(10us, D::to_dut, ctrl_type::probe, probe_tlvs(1, 7));
    b.ctrl(15us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(1, 7));
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    // A request the plan crafted may rightly go unanswered, and is not the engine's own.
    auto& inj = b.ctrl(100us, D::to_dut, ctrl_type::probe, probe_tlvs(3, 1));
    inj.injected = true;
    b.ctrl(101us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(3, 1));
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    // A CLOSE's answer may wait for the connection's data.
    b.ctrl(200us, D::to_dut, ctrl_type::close);
    b.ctrl(201us, D::from_dut, ctrl_type::close_ack);
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    // A frame dropped on its way never reached the DUT.
    auto& lost = b.ctrl(300us, D::to_dut, ctrl_type::probe, probe_tlvs(4, 2));
    lost.dropped = true;
    b.ctrl(301us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(4, 2));
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    // The engine's own request beside a crafted copy of it: the answer may be the crafted one's.
    auto& early = b.ctrl(400us, D::to_dut, ctrl_type::probe, probe_tlvs(5, 3));
    early.injected = true;
    b.ctrl(410us, D::to_dut, ctrl_type::probe, probe_tlvs(5, 3));
    b.ctrl(412us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(5, 3));
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    // Asked again after its answer: a new request, timed from its own copy.
    b.ctrl(500us, D::to_dut, ctrl_type::probe, probe_tlvs(5, 3));
    b.ctrl(540us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(5, 3));
    REQUIRE(assertions::quickest_answer(b.tr));
    CHECK(*assertions::quickest_answer(b.tr) == 40us);
}

TEST_CASE("quickest_answer: where the DUT opened the connection, from the engine's ACCEPT to its first frame to it") {
    trace_builder b;
    b.ctrl(0us, D::from_dut, ctrl_type::connect, {wire::tlv::src_conn_id(0x77)});
    b.ctrl(100us, D::to_dut, ctrl_type::accept, {wire::tlv::src_conn_id(0x42)});
    b.ctrl(120us, D::from_dut, ctrl_type::connect, {wire::tlv::src_conn_id(0x77)});  // its repeat, crossing the ACCEPT
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    auto& other = b.data(200us, D::from_dut, {.ppsn = 7});
    (void)other;
    // The trace builder's frames name connection 0x42: this one is the answer.
    CHECK(*assertions::quickest_answer(b.tr) == 100us);
    b.data(250us, D::from_dut, {.ppsn = 8});  // only the first frame counts
    CHECK(*assertions::quickest_answer(b.tr) == 100us);
    // An ACCEPT naming another connection: frames to 0x42 do not answer it.
    trace_builder c;
    c.ctrl(100us, D::to_dut, ctrl_type::accept, {wire::tlv::src_conn_id(0x43)});
    c.data(150us, D::from_dut, {.ppsn = 7});
    CHECK_FALSE(assertions::quickest_answer(c.tr));
}

TEST_CASE("quickest_answer: from a data packet sent once to the DUT's ACK naming it") {
    // The engine's address is 10.0.0.2 (the ACKs' destination): its packets come from it.
    trace_builder b;
    b.data(0us, D::to_dut, {.path = 2, .ppsn = 100, .src_host = 2});
    b.data(5us, D::to_dut, {.path = 2, .ppsn = 101, .src_host = 2});
    b.data(6us, D::to_dut, {.path = 2, .ppsn = 101, .src_host = 2});  // a second copy: an ACK of 101 may be the first's
    b.ack(40us, D::from_dut, 2, 102, {}, 101);
    CHECK_FALSE(assertions::quickest_answer(b.tr));
    b.ack(70us, D::from_dut, 2, 101, {}, 100);  // 100 went once: 70 us
    CHECK(*assertions::quickest_answer(b.tr) == 70us);
    auto& lost = b.data(100us, D::to_dut, {.path = 3, .ppsn = 5, .src_host = 2});  // dropped on its way: not a copy the DUT had
    lost.dropped = true;
    b.data(200us, D::to_dut, {.path = 3, .ppsn = 5, .src_host = 2});
    b.ack(230us, D::from_dut, 3, 6, {}, 5);
    CHECK(*assertions::quickest_answer(b.tr) == 30us);
    // An ACK to another peer of the engine's (10.0.0.3) with the same path and PPSN answers that peer's packet.
    trace_builder peers;
    peers.data(0us, D::to_dut, {.path = 1, .ppsn = 9, .src_host = 2});
    peers.ack(15us, D::from_dut, 1, 10, {}, 9, false, 0xFFFF, 0, 0, 3);
    CHECK_FALSE(assertions::quickest_answer(peers.tr));
}

TEST_CASE("received_for_sure: the engine's frames the DUT's own frames show it received (D148)") {
    trace_builder b;
    CHECK(assertions::received_for_sure(b.tr) == 0);
    // Two data packets, one with two copies; the DUT's ACKs name both, one twice: two frames for sure.
    b.data(0us, D::to_dut, {.path = 2, .ppsn = 100, .src_host = 2});
    b.data(5us, D::to_dut, {.path = 2, .ppsn = 101, .src_host = 2});
    b.data(6us, D::to_dut, {.path = 2, .ppsn = 101, .src_host = 2});
    b.ack(40us, D::from_dut, 2, 102, {}, 101);
    b.ack(41us, D::from_dut, 2, 102, {}, 101);
    b.ack(42us, D::from_dut, 2, 102, {}, 100);
    CHECK(assertions::received_for_sure(b.tr) == 2);
    // An ACK naming a packet never sent, or one dropped on its way, proves nothing.
    b.ack(50us, D::from_dut, 2, 102, {}, 150);
    auto& lost = b.data(60us, D::to_dut, {.path = 3, .ppsn = 5, .src_host = 2});
    lost.dropped = true;
    b.ack(70us, D::from_dut, 3, 6, {}, 5);
    CHECK(assertions::received_for_sure(b.tr) == 2);
    // A PROBE answered, and a CLOSE answered (whose answer may wait, but came): two more.
    b.ctrl(100us, D::to_dut, ctrl_type::probe, probe_tlvs(1, 7));
    b.ctrl(110us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(1, 7));
    b.ctrl(120us, D::to_dut, ctrl_type::close);
    b.ctrl(130us, D::from_dut, ctrl_type::close_ack);
    CHECK(assertions::received_for_sure(b.tr) == 4);
    // A PROBE_REPLY to a PROBE never sent proves nothing.
    b.ctrl(140us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(5, 5));
    CHECK(assertions::received_for_sure(b.tr) == 4);
    // The same PROBE again, answered again: the same frame, not one more.
    b.ctrl(150us, D::to_dut, ctrl_type::probe, probe_tlvs(1, 7));
    b.ctrl(160us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(1, 7));
    CHECK(assertions::received_for_sure(b.tr) == 4);
    // A request the plan crafted, answered, reached the DUT all the same: one more.
    auto& inj = b.ctrl(170us, D::to_dut, ctrl_type::probe, probe_tlvs(6, 1));
    inj.injected = true;
    b.ctrl(180us, D::from_dut, ctrl_type::probe_reply, probe_tlvs(6, 1));
    CHECK(assertions::received_for_sure(b.tr) == 5);
    // The engine's ACCEPT, then a frame of the DUT's to the connection it names: one more.
    trace_builder a;
    a.ctrl(0us, D::from_dut, ctrl_type::connect, {wire::tlv::src_conn_id(0x77)});
    a.ctrl(100us, D::to_dut, ctrl_type::accept, {wire::tlv::src_conn_id(0x42)});
    a.ctrl(120us, D::from_dut, ctrl_type::connect, {wire::tlv::src_conn_id(0x77)});  // a repeat proves nothing
    CHECK(assertions::received_for_sure(a.tr) == 0);
    a.data(200us, D::from_dut, {.ppsn = 7});
    a.data(210us, D::from_dut, {.ppsn = 8});
    CHECK(assertions::received_for_sure(a.tr) == 1);
}

TEST_CASE("reordered_from_dut: the DUT's new packets of one flow that arrived after a later one (D150)") {
    trace_builder b;
    b.data(0us, D::from_dut, {.path = 0, .ppsn = 100});
    b.data(1us, D::from_dut, {.path = 0, .ppsn = 102});
    b.data(2us, D::from_dut, {.path = 1, .ppsn = 7});  // another path: its own flow
    CHECK(assertions::reordered_from_dut(b.tr) == 0);
    b.data(3us, D::from_dut, {.path = 0, .ppsn = 101});  // after 102: reordered on the way
    CHECK(assertions::reordered_from_dut(b.tr) == 1);
    // A resend (RETX), a copy of the same packet, or a packet from a moved port is no inversion.
    trace_builder c;
    c.data(0us, D::from_dut, {.path = 0, .ppsn = 100});
    c.data(1us, D::from_dut, {.path = 0, .ppsn = 101});
    c.data(2us, D::from_dut, {.path = 0, .ppsn = 100, .retx = true});
    c.data(3us, D::from_dut, {.path = 0, .ppsn = 101});
    c.data(4us, D::from_dut, {.path = 0, .ppsn = 99, .epoch = 1, .sport = 0xD000});
    CHECK(assertions::reordered_from_dut(c.tr) == 0);
    // Across the 24-bit wrap: 0xFFFFFF then 0 is in order, 0 then 0xFFFFFF is not.
    trace_builder w;
    w.data(0us, D::from_dut, {.path = 0, .ppsn = 0xFFFFFF});
    w.data(1us, D::from_dut, {.path = 0, .ppsn = 0});
    CHECK(assertions::reordered_from_dut(w.tr) == 0);
    w.data(2us, D::from_dut, {.path = 0, .ppsn = 0xFFFFFE});
    CHECK(assertions::reordered_from_dut(w.tr) == 1);
}

TEST_CASE("reordered_to_dut: the engine's packets the DUT's ACKs show arrived after a later one (D150)") {
    // The engine's address is 10.0.0.2 (src_host 2), the ACKs' destination.
    trace_builder b;
    b.data(0us, D::to_dut, {.path = 0, .ppsn = 100, .src_host = 2});
    b.data(1us, D::to_dut, {.path = 0, .ppsn = 101, .src_host = 2});
    b.ack(10us, D::from_dut, 0, 100, {101}, 101);  // triggered by 101, 100 left out
    CHECK(assertions::reordered_to_dut(b.tr) == 0);
    b.ack(20us, D::from_dut, 0, 102, {}, 100);  // then 100 came, nothing sent again
    CHECK(assertions::reordered_to_dut(b.tr) == 1);
    // A DUT that sends no SACK bits: 99 lost, 100 and 101 left out of 101's ACK,
    // covered by the CumAck only after 99 came again: not a reorder.
    trace_builder n;
    n.data(0us, D::to_dut, {.path = 0, .ppsn = 99, .src_host = 2});
    n.data(1us, D::to_dut, {.path = 0, .ppsn = 100, .src_host = 2});
    n.data(2us, D::to_dut, {.path = 0, .ppsn = 101, .src_host = 2});
    n.ack(10us, D::from_dut, 0, 99, {}, 101);
    n.data(20us, D::to_dut, {.path = 0, .ppsn = 99, .retx = true, .src_host = 2});
    n.ack(30us, D::from_dut, 0, 102, {}, 99);
    CHECK(assertions::reordered_to_dut(n.tr) == 0);
    // Left out but sent on another source port, or sent after the trigger: no evidence.
    trace_builder p;
    p.data(0us, D::to_dut, {.path = 0, .ppsn = 100, .sport = 0xD001, .src_host = 2});
    p.data(1us, D::to_dut, {.path = 0, .ppsn = 101, .src_host = 2});
    p.ack(10us, D::from_dut, 0, 100, {101}, 101);
    p.ack(20us, D::from_dut, 0, 102, {}, 100);
    CHECK(assertions::reordered_to_dut(p.tr) == 0);
}
