// Per-connection state of the reference endpoint (internal).
//
// Connection life cycle:
//
//   initiator:  idle --CONNECT--> connecting --ACCEPT--> established --CLOSE..--> closed
//                                     |  (retry limit, REJECT)
//                                     +--> error
//   acceptor:   (CONNECT received) --ACCEPT--> established
//   any: NAK 0x0E/0x10/0x20 received, retry limit exceeded --> error
#pragma once

#include <bitset>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "core/ring.h"
#include "endpoint/endpoint.h"
#include "endpoint/rnr_seq.h"
#include "endpoint/units.h"
#include "wire/sack.h"
#include "sim/scheduler.h"

namespace mrct::endpoint {

enum class conn_state : std::uint8_t { connecting, established, error, closed };

// A message being sent.
struct out_message {
    std::uint64_t wr_id = 0;
    std::uint8_t opcode = 0;
    std::uint16_t stream = 0, tag = 0;
    std::uint32_t stream_seq = 0;
    std::uint64_t remote_va = 0;
    std::uint32_t rkey = 0, recv_idx = 0;
    std::optional<std::uint32_t> imm;
    std::shared_ptr<const core::byte_buffer> data;  // the posted bytes (shared, freed on completion)
    std::uint32_t length = 0;
    std::uint32_t npkts = 0;
    std::vector<bool> pkt_acked;
    std::uint32_t acked = 0;
    std::uint8_t attempt = 0;
    bool rnr_current = false;   // an RNR arrived for the current attempt
    bool held = false;          // completion held: an RnrSeq it may be covered by is missing
    bool done = false, failed = false;
    wc_status status = wc_status::success;
};

// One transmission unit: packet `index` of message `msg`.
struct tx_unit {
    std::uint32_t msg = 0;
    std::uint32_t index = 0;
    std::uint8_t attempt = 0;
    bool retx = false;  // a failover re-send: new PPSN, RETX set
    // Transmissions of this packet (and Attempt) so far: a failover re-send
    // carries them to its new PPSN, since they count toward the retry limit
    // (§5 defaults); 0 for a first transmission and for a re-send after RNR.
    std::uint8_t sent = 0;
    // The unit's Attempt is a re-send after RNR (MR-RNR-4: RNR_RESEND). Kept
    // per unit, as the Attempt is: a PPSN of an earlier Attempt, resent
    // after its message moved on, goes out as it first went.
    bool rnr_resend = false;
};

struct inflight_pkt {
    tx_unit unit;
    nanos first_sent{0}, last_sent{0};
    std::uint64_t tx_seq = 0;   // order of the latest transmission on the path
    std::uint8_t epoch = 0;     // epoch of the latest transmission
    std::uint8_t tx_count = 0;
    bool retransmitted = false;
    bool acked = false;
    bool resend_queued = false;  // a detection's resend waits in same_ppsn: no second detection until it went
};

// The fields every send reads for every path (pick_path: failed, inflight,
// cwnd, the window's size, has_rtt, srtt) come first, in the first two cache
// lines of an aligned object: a send then touches 2 adjacent lines per path,
// not 4 scattered ones.
struct alignas(64) path_tx {
    core::ring<inflight_pkt> window;  // PPSNs base_ppsn, base_ppsn+1, ...
    double cwnd = 16;              // AIMD (MR-CC-2), with alpha and the window fields below
    unsigned inflight = 0;         // unacked, counted once each
    bool failed = false;           // §5 terms "Failed path", MR-PATH-6/7; the rest of it below
    bool has_rtt = false;          // RFC 6298, with srtt .. moves_counter
    nanos srtt{0}, rttvar{0}, rto{0};
    std::uint16_t port = 0;
    std::uint16_t prev_port = 0;   // the port before the last move (0: none; variant port-reuse)
    std::uint8_t epoch = 0;
    std::uint32_t next_ppsn = 0;   // next PPSN to assign
    std::uint32_t base_ppsn = 0;   // lowest PPSN still tracked (== CumAck seen)
    std::uint64_t tx_seq = 0;           // transmissions on the path so far (the first is 1)
    std::uint64_t hi_acked_tx_seq = 0;  // the latest transmission acknowledged, any epoch (0: none)
    // §5 Loss: per PathEpoch (its 4 wire bits), the latest transmission
    // acknowledged in it (0: none). An unacknowledged packet is lost when the
    // entry of its latest transmission's epoch is above that transmission.
    std::array<std::uint64_t, 16> hi_acked_by_epoch{};
    unsigned backoff = 0;          // consecutive expiries
    unsigned moves_counter = 0;    // expiries since the last move
    std::unique_ptr<sim::timer> rto_timer;
    // Failure; failed is above
    std::uint32_t reset_ppsn = 0;
    bool reset_acked = false, probe_ok = false;
    unsigned reset_tries = 0;
    std::vector<std::uint32_t> probe_nonces;
    std::unique_ptr<sim::timer> reset_timer, probe_timer;
    // AIMD (MR-CC-2); cwnd is above
    double alpha = 1;
    std::uint32_t window_end = 0;  // window ends when every PPSN below this is acked
    bool window_open = false;
    std::uint16_t ce_at_window_start = 0, last_ce = 0;
    std::uint32_t acked_in_window = 0;
    path_stats st;
};

struct path_rx {
    std::uint32_t cum_ack = 0;      // lowest PPSN not yet received
    wire::sack256 got;              // bit i: cum_ack + i received (bit 0 always clear)
    std::uint32_t highest = 0;      // highest PPSN received
    std::uint16_t ce_count = 0;
    unsigned unacked = 0;
    std::uint16_t last_sport = 0;
    std::uint8_t last_epoch = 0;
    std::uint32_t last_ppsn = 0;
    // The first packet since the last ACK (variant trig-first).
    std::uint32_t first_ppsn = 0;
    std::uint16_t first_sport = 0;
    std::uint8_t first_epoch = 0;
    std::uint32_t start_ppsn = 0;  // the PPSN the state (re)started at
    std::uint16_t port = 0;        // bug path-by-port: the source port the state belongs to (0: none yet)
    // INITIAL_PPSNs of the PATH_RESETs applied to this path, the latest few:
    // a repeat of one of them (a late or duplicated copy) changes nothing (§4).
    std::vector<std::uint32_t> resets_applied;
    static constexpr std::size_t k_resets_remembered = 8;
    std::unique_ptr<sim::timer> ack_timer;
};

// A message being received, keyed by (stream, stream_seq).
struct in_message {
    std::uint8_t opcode = 0;
    std::uint16_t tag = 0;
    std::uint32_t total = 0;
    std::uint32_t recv_idx = 0;
    std::optional<std::uint32_t> imm;
    std::map<std::uint32_t, std::uint32_t> placed;  // offset -> end, merged intervals
    std::uint32_t placed_bytes = 0;
    bool eom_seen = false;
    bool complete = false;   // every byte placed
    bool delivered = false;  // completion raised (or none due) in stream order
    bool failed = false;
};

struct posted_recv {
    std::uint32_t rkey = 0;
    std::uint64_t offset = 0;
    std::uint32_t len = 0;
    std::uint64_t wr_id = 0;
};

// A rejected SEND and Attempt (§4). The RNR describes the packet that made
// the rejection: its PPSN, PathID, epoch and source port (D54).
struct rejection {
    std::uint8_t attempt = 0;
    std::uint16_t rnr_seq = 0;
    std::uint32_t ppsn = 0;
    std::uint8_t path = 0, epoch = 0;
    std::uint16_t tag = 0, sport = 0;
};

struct connection {
    std::uint32_t local_id = 0, remote_id = 0;
    std::uint8_t version_minor = 2;  // acceptor: the smaller of ours (2) and the CONNECT's (§4)
    address peer;
    conn_state state = conn_state::connecting;
    bool closing = false;  // close() called; CLOSE goes out once all is acknowledged
    bool initiator = false;
    unsigned num_paths = 8;
    std::uint32_t mtu = 4096;
    std::unique_ptr<sim::timer> ctrl_timer;
    unsigned ctrl_tries = 0;
    bool close_waited = false;
    std::uint16_t rr_stream = 0;  // variant stream-rr: the stream of the last first transmission  // variant close-late: its wait before the first CLOSE is over
    std::vector<std::uint32_t> my_initial_ppsn, peer_initial_ppsn;

    // --- sender
    std::vector<path_tx> tx;
    std::vector<out_message> msgs;
    std::deque<tx_unit> fresh;                // first transmissions waiting for a window
    std::deque<tx_unit> resend;               // failover/RNR re-sends, before fresh
    struct resend_req {
        unsigned path;
        std::uint32_t ppsn;
        bool even_if_acked;  // bug go-back-n: SACKed packets are resent too
        bool expiry = false;  // an RTO expiry's resend: counted, and the path's timer restarted, when it leaves (D74, D78)
        bool move = false;    // ... and the expiry moves the path's port as it leaves (MR-PATH-4, D78)
    };
    core::ring<resend_req> same_ppsn;  // SACK and expiry resends of a PPSN, sent before anything else
    std::map<std::uint16_t, std::uint32_t> next_stream_seq;
    std::map<std::uint16_t, std::uint32_t> next_recv_idx;  // per tag, assigned in posting order
    std::map<std::uint16_t, std::deque<std::uint32_t>> stream_pending;  // stream -> msg indices not yet completed
    std::map<std::uint16_t, nanos> tag_paused_until;
    nanos all_paused_until{0};  // bug rnr-pauses-all
    std::map<std::uint16_t, std::unique_ptr<sim::timer>> tag_timers;
    unsigned rr = 0;                          // spraying cursor
    std::uint16_t grant = 0;                  // 0: unpaced (no ACK yet)
    nanos next_pace{0};
    std::unique_ptr<sim::timer> pace_timer;
    std::unique_ptr<sim::timer> burst_timer;  // the next turn's packets (config::tx_burst)
    nanos burst_at{-1};                       // the turn the count is of
    unsigned burst_sent = 0;
    std::unique_ptr<sim::timer> shared_rto_timer;  // bug: shared-rto
    rnr_seq_tracker rnr_seqs;                 // RnrSeqs received, highest RnrCount (wraps past 65535)
    bool rnr_query_outstanding = false;
    unsigned rnr_query_tries = 0;
    std::unique_ptr<sim::timer> rnr_query_timer;

    // --- receiver
    std::vector<path_rx> rx;
    std::map<std::pair<std::uint16_t, std::uint32_t>, in_message> inbox;
    std::map<std::uint16_t, std::uint32_t> next_deliver;  // stream -> next StreamSeq to complete
    std::map<std::uint16_t, std::vector<posted_recv>> recvs;  // tag -> by RecvIdx (posting order)
    // Per message (stream, StreamSeq): every rejection still kept, oldest
    // first. A later Attempt's rejection does not end an earlier one: each is
    // kept until the message arrives again in full or fails (§4), so an
    // RNR_QUERY re-sends them all (D105).
    std::map<std::pair<std::uint16_t, std::uint32_t>, std::vector<rejection>> rejections;
    std::uint16_t rnr_count = 0;
    nanos last_data{-1'000'000'000'000};
    std::uint64_t acks_sent = 0;  // bug grant-zero-first

    // Installed units (endpoint::set_units), or none: the endpoint's own code.
    std::unique_ptr<units> hw;
};

}  // namespace mrct::endpoint
