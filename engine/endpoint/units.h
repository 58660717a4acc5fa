// The endpoint's seam for the timing-critical units of a MetaRoCE transport
// (docs/rtl.md, "The endpoint seam"): the receive path's per-path tracking
// and ACK decision, the per-path retransmission timers, and the per-tag RNR
// pauses. With no units installed the endpoint decides these itself (the
// reference's own code, in receiver.cpp and sender.cpp). An installed set
// decides them instead, for every connection: the RTL DUT's shell drives its
// Verilated units through this interface (dut_adapters/rtl/shell), so what
// these units do is the RTL's, not the reference's.
//
// The units keep their timers as deadlines and tell the endpoint when one is
// due through `unit_events`; the endpoint answers through the same interface
// (an expiry taken or dropped, an ACK sent). One `units` serves one
// connection; paths are numbered from 0, tags are the wire's 16 bits.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include "core/time.h"
#include "wire/sack.h"

namespace mrct::sim {
class scheduler;
}

namespace mrct::endpoint {

using core::nanos;
struct config;

class units {
public:
    virtual ~units() = default;

    // ---- the receive path (MR-SACK-1/2/5, MR-CC-1)
    enum class rx_class : std::uint8_t { fresh, duplicate, out_of_window };
    virtual rx_class rx_classify(unsigned path, std::uint32_t ppsn) = 0;
    // The path (re)starts at `ppsn`: connection set-up, PATH_RESET.
    virtual void rx_restart(unsigned path, std::uint32_t ppsn) = 0;
    // A data packet taken in: `mark` when its PPSN counts as received (a
    // duplicate's does not). Returns whether to ACK now; otherwise the
    // path's ACK timer runs (events.ack_due when it is due).
    virtual bool rx_packet(unsigned path, std::uint32_t ppsn, bool ce, bool ack_req, bool mark) = 0;
    struct ack_fields {
        std::uint32_t cum_ack = 0;
        wire::sack256 sack;
        std::uint16_t ce_count = 0;
    };
    virtual ack_fields rx_ack(unsigned path) = 0;
    // An ACK went out on the path: its count and timer restart.
    virtual void rx_acked(unsigned path) = 0;

    // ---- the retransmission timers (MR-RTO-1/2/3)
    struct estimate {
        bool has_rtt = false;
        nanos srtt{0}, rttvar{0};
        nanos rto{0};          // the RTO the next arm would use (backoff included)
        unsigned backoff = 0;  // consecutive expiries
    };
    // An ACK acknowledged the path's packet sent at `last` (first at
    // `first`; `retransmitted`: sent more than once), arriving at `at`.
    virtual void rto_sample(unsigned path, nanos first, nanos last, bool retransmitted, nanos at) = 0;
    // Starts (or restarts) the path's timer; returns the RTO it runs for.
    virtual nanos rto_arm(unsigned path) = 0;
    virtual void rto_cancel(unsigned path) = 0;
    virtual bool rto_armed(unsigned path) = 0;
    // New data acknowledged on the path: the run of expiries ends.
    virtual void rto_acked(unsigned path) = 0;
    // The path restarts as new (no sample, no backoff).
    virtual void rto_reset(unsigned path) = 0;
    // Takes the expiry events.rto_due announced: the timer stops, the
    // backoff counts one more.
    virtual void rto_expire(unsigned path) = 0;
    virtual estimate rto_read(unsigned path) = 0;

    // ---- the RNR pauses (MR-RNR-2/4, §4's RNR timer table)
    // An RNR for `tag` with `timer_code`, rejecting Attempt `rnr_attempt` of
    // a message now at Attempt `msg_attempt`, arriving at `at`. Returns
    // whether the tag is paused by it (a stale Attempt changes nothing).
    virtual bool rnr_pause(std::uint16_t tag, std::uint8_t timer_code, std::uint8_t rnr_attempt,
                           std::uint8_t msg_attempt, nanos at) = 0;
    virtual bool rnr_paused(std::uint16_t tag) = 0;
    // The Attempt after `attempt` (the field's width).
    virtual std::uint8_t next_attempt(std::uint8_t attempt) = 0;
};

// What the units tell the endpoint, from their own timer.
struct unit_events {
    std::function<void(unsigned path)> ack_due;  // send the path's delayed ACK (then rx_acked)
    std::function<void(unsigned path)> rto_due;  // take it (rto_expire) or drop it (rto_cancel)
    std::function<void(std::uint16_t tag)> resumed;  // the tag's pause ended
};

// Makes the units of one connection of up to `max_paths` paths.
using units_factory =
    std::function<std::unique_ptr<units>(sim::scheduler&, const config&, unsigned max_paths, unit_events)>;

}  // namespace mrct::endpoint
