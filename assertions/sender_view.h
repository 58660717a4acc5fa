// The DUT as a data sender, reconstructed from its wire: per path, every data
// transmission, every ACK it was given, what each ACK newly acknowledged, the
// losses the spec's *Loss* term says it detected, the retransmission-timer
// expiries its resends reveal, in-flight counts over time, and the RTT
// samples Karn's rule allows. All of it from frames only (§5 terms), so a DUT
// is judged by what it did on the wire, never by its own counters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "trace/trace.h"

namespace mrct::assertions {

using core::nanos;

enum class tx_kind : std::uint8_t {
    first,        // a PPSN's first transmission on its path
    sack_resend,  // answers a loss detection on the same path and PPSN
    rto_resend,   // a resend no detection explains: a timer expiry
};

struct tx_event {
    std::size_t rec = 0;
    nanos t{0};
    unsigned path = 0;
    std::uint64_t ppsn = 0;  // unwrapped (64-bit) within the path's sequence
    std::uint32_t gen = 0;   // path generation: a PATH_RESET restarts the sequence
    std::uint8_t epoch = 0;
    std::uint16_t sport = 0;
    bool retx_flag = false, rnr_resend = false;
    tx_kind kind = tx_kind::first;
    unsigned tx_no = 1;      // nth transmission of this PPSN
    std::uint16_t stream = 0, tag = 0;
    std::uint32_t stream_seq = 0, offset = 0, length = 0;
    std::uint8_t opcode = 0, attempt = 0;
    std::uint32_t ip_bytes = 0;  // IP header through ICRC (§5 rates)
    bool acked_before = false;   // an ACK had already covered this PPSN (go-back-N)
    std::size_t covering_ack = 0;
    // With acked_before: before that ACK the DUT had a reason of its own to
    // resend the PPSN (found lost, or its path's oldest). Without one, only
    // the ACK can have prompted the resend, however soon it came (D62).
    bool prompted = false;
};

struct ack_event {
    std::size_t rec = 0;
    nanos t{0};
    unsigned path = 0;
    std::uint8_t epoch = 0;
    bool ignored = false;  // CumAck beyond what was sent, or a failed path
    bool ece = false;
    std::uint16_t grant = 0xFFFF;
    std::uint16_t rnr_count = 0;
    unsigned newly = 0;
};

struct detection {
    unsigned path = 0;
    std::uint64_t ppsn = 0;
    std::uint32_t gen = 0;
    nanos t{0};
    std::size_t ack_rec = 0;
    std::size_t tx_rec = 0;  // the transmission found lost
    std::optional<std::size_t> resend_rec;  // the SACK resend that answered it
    std::optional<nanos> acked_at;          // acknowledged before any resend
};

struct expiry {
    unsigned path = 0;
    std::uint64_t ppsn = 0;
    nanos t{0};
    std::size_t rec = 0;
    unsigned run = 1;          // consecutive expiries on the path, this one included
    nanos timer_start{0};      // when the timer that expired was (re)started
    // The earliest a DUT may have started it in real time: a start at one of
    // its own sends less the hold before that frame left (held_before).
    nanos timer_start_earliest{0};
    nanos expected_rto{0};     // RFC 6298 from Karn-valid samples, doubled per expiry
    nanos expected_rto_held{0};  // the same with each sample lengthened by the host's holds at its data and its ACK (real time)
    // The least the DUT's RTO can have been (real time, D147): the wire's
    // SRTT with the least RTTVAR samples anywhere in their held ranges allow.
    // RFC 6298's RTO is not monotone in the samples: samples the engine saw
    // alternate short and held may have been evenly long at the DUT.
    nanos expected_rto_least{0};
    bool oldest = true;        // resent the path's oldest unacknowledged PPSN
    std::uint16_t sport_before = 0;  // the path's port before this run
};

struct inflight_point {
    nanos t{0};
    unsigned path = 0;
    unsigned inflight = 0;
};

struct path_summary {
    std::vector<std::pair<nanos, nanos>> rtt_samples;  // (time, sample)
    // Real time: the most a hold of the host, or a wait of the DUT, may have
    // lengthened one sample as the DUT measured it (held_at its ACK plus
    // held_before its data, D73/D98), and the sample's wire value then.
    nanos sample_hold_max{0}, sample_at_hold_max{0};
    unsigned max_inflight = 0;
    unsigned max_inflight_before_ack = 0;  // before the path's first accepted ACK
    nanos first_ack{-1};
    std::vector<std::uint16_t> ports;  // distinct source ports in order of use
};

// A PATH_RESET the DUT sent: the path restarts as new (§5 failed path), its
// unacknowledged packets moved to other paths (D108), nothing in flight on it.
struct path_reset_event {
    std::size_t rec = 0;
    nanos t{0};
    unsigned path = 0;
};

class sender_view {
public:
    explicit sender_view(const trace::trace& tr);

    std::vector<tx_event> tx;
    std::vector<ack_event> acks;
    std::vector<path_reset_event> resets;
    std::vector<detection> detections;
    std::vector<expiry> expiries;
    std::vector<inflight_point> inflight;
    std::map<unsigned, path_summary> paths;
    // Resends taken as sent before an ACK that covers them, because they
    // crossed it on the wire (trace::crossing): the records, in trace order.
    std::vector<std::size_t> crossed;
    // Of those, the ones recorded later than the crossing window after the
    // ACK (a hold of the host, or a wait of the DUT for a CPU, covered the
    // ACK's moment: the DUT may have read it that late): (resend, ACK)
    // records. A DUT that resends what ACKs covered would look the same
    // then: no_go_back_n doubts, never passes, on these.
    std::vector<std::pair<std::size_t, std::size_t>> crossed_held;
    // Real time: resends no detection explains that came sooner than rto_min
    // after the path's previous expiry, so are not counted as expiries (D50).
    std::vector<std::size_t> unexplained;

    // The retransmission-timer expiries the DUT's resends reveal, in words:
    // how many, and the longest run in a row on one path ("3 timer
    // expiries, at most 1 in a row (path 2)"), for a premise that did not
    // arise.
    std::string expiry_figures() const;
    // Median Karn-valid RTT sample of a path, if any.
    std::optional<nanos> rtt(unsigned path) const;
    // Inflight of `path` at time t (after every event at t).
    unsigned inflight_at(unsigned path, nanos t) const;
    // Max inflight on `path` within [from, to].
    unsigned max_inflight(unsigned path, nanos from, nanos to) const;
};

}  // namespace mrct::assertions
