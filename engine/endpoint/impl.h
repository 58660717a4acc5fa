// Internal functions of the reference endpoint, shared by its .cpp files.
#pragma once

#include "endpoint/connection.h"
#include "wire/build.h"
#include "wire/frame.h"

namespace mrct::endpoint {

struct endpoint::impl {
    // framing
    static wire::frame_spec base(endpoint& e, const connection& c, wire::opcode op, std::uint16_t sport);
    static void send(endpoint& e, const wire::frame_spec& s);
    static void send_pause(endpoint& e);  // bug pause-frames
    static void transmit(endpoint& e);    // the frame in e.scratch_, to the wire
    static std::uint16_t new_port(endpoint& e, const connection& c, std::uint16_t avoid);
    // Moves path t off its port (MR-PATH-1/4); PathEpoch is the caller's.
    static void move_port(endpoint& e, const connection& c, path_tx& t);
    static std::uint16_t ctrl_port(const connection& c);
    // When a timer due at `t` fires: at `t`, or with variant timer-tick at
    // the first tick of k_timer_tick's grid at or after it; a `deadline` (an
    // upper bound: the ACK interval) at the last tick at or before it, not
    // before now.
    static nanos fire_at(endpoint& e, nanos t, bool deadline = false);
    // Arms a not-before timer `d` from now (at fire_at's time).
    static void arm_in(endpoint& e, sim::timer& t, nanos d, sim::callback cb) {
        t.arm_at(fire_at(e, e.s_.now() + d), std::move(cb));
    }
    static std::uint32_t new_conn_id(endpoint& e);
    static core::rng& rng(endpoint& e) { return e.rng_; }
    // control (endpoint.cpp)
    static void on_ctrl(endpoint& e, const wire::frame& f);
    // `answer`: it closes an answer of NAKs and RNRs (RNR_SYNC after the
    // re-sent RNRs, §4), and leaves as they do (send_answer).
    static void send_ctrl(endpoint& e, connection& c, wire::ctrl_type t, std::vector<wire::tlv_spec> tlvs,
                          std::uint32_t dest_qp, std::uint16_t sport, bool answer = false);
    static void send_connect(endpoint& e, connection& c);
    static void setup_paths(endpoint& e, connection& c);
    static void fail_connection(endpoint& e, connection& c);
    // on_ack: called after an ACK's progress (only bug close-on-ack acts on it).
    static void try_close(endpoint& e, connection& c, bool on_ack = false);
    static nanos ctrl_interval(const endpoint& e, const connection& c);
    static void complete(endpoint& e, connection& c, const completion& wc);
    // sender (sender.cpp)
    static void pump(endpoint& e, connection& c);
    static void on_ack(endpoint& e, connection& c, const wire::frame& f);
    static void on_nak(endpoint& e, connection& c, const wire::frame& f);
    static void on_rnr(endpoint& e, connection& c, const wire::frame& f);
    static void on_rnr_sync(endpoint& e, connection& c, std::uint16_t count);
    static void send_rnr_query(endpoint& e, connection& c);
    static void try_complete_sends(endpoint& e, connection& c);
    static void on_path_ctrl(endpoint& e, connection& c, const wire::frame& f);
    // Installed units' events (units.h): an RTO expiry, a tag's pause ended.
    static void on_rto(endpoint& e, connection& c, unsigned p);
    static void resume(endpoint& e, connection& c, std::uint16_t tag);
    // receiver (receiver.cpp)
    static void on_data(endpoint& e, connection* c, const wire::frame& f);
    static void on_rnr_query(endpoint& e, connection& c);
    static void init_rx(endpoint& e, connection& c);
    // A receiving path starts as new at `ppsn`: connection set-up and PATH_RESET.
    static void restart_rx(connection& c, unsigned p, std::uint32_t ppsn);
    // Installed units' event: the path's ACK timer is due.
    static void ack_timer_due(endpoint& e, connection& c, unsigned p);
    static void send_nak(endpoint& e, std::uint32_t dest_qp, const wire::frame& f, std::uint8_t code);
    // A NAK or RNR to the wire: at once, or k_answer_late on (variant answer-late).
    static void send_answer(endpoint& e, const wire::frame_spec& s);
    // Sends the answers whose time has come, and arms the timer for the next.
    static void send_late_answers(endpoint& e);
};

}  // namespace mrct::endpoint
