// The reference MetaRoCE endpoint (spec model §5): used as the peer's transport
// and as the built-in reference DUT. It speaks only through frames: `tx` sends
// a built Ethernet frame, receive() takes one. Time comes from the scheduler it
// is given; randomness (initial PPSNs, entropy) from its own seeded stream.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/bytes.h"
#include "core/result.h"
#include "core/rng.h"
#include "endpoint/config.h"
#include "endpoint/units.h"
#include "endpoint/zero_pages.h"
#include "sim/scheduler.h"
#include "wire/build.h"
#include "wire/frame.h"
#include "wire/headers.h"

namespace mrct::endpoint {

struct address {
    wire::mac_addr mac{};
    wire::ipv4_addr ip{};
    std::optional<wire::ipv6_addr> ip6;  // set: MetaRoCE over IPv6 (then `ip` is unused)
    bool same_ip(const address& o) const { return ip6 ? o.ip6 && *ip6 == *o.ip6 : !o.ip6 && ip == o.ip; }
};
// The address a received frame came from.
address source_of(const wire::frame& f);
// Sets the IP layer of `s` from `src` to `dst`: IPv4 with DF=1 and
// Identification 0 (MR-HDR-6), or IPv6 when `dst` is IPv6.
void set_ip(wire::frame_spec& s, const address& src, const address& dst);

enum class wc_status : std::uint8_t {
    success,
    retry_exceeded,     // MR-SACK-6
    remote_access,      // NAK 0x02
    remote_invalid,     // NAK 0x01
    remote_operational, // NAK 0x03
    header_mismatch,    // NAK 0x0F
    connection_error,   // NAK 0x0E/0x10/0x20, CONNECT or RNR_QUERY unanswered
};
std::string_view wc_status_name(wc_status s);
std::optional<wc_status> wc_status_of(std::string_view name);  // the inverse; nullopt for an unknown name

enum class wc_kind : std::uint8_t { send, write, recv, recv_write_imm };
std::string_view wc_kind_name(wc_kind k);
std::optional<wc_kind> wc_kind_of(std::string_view name);

struct completion {
    std::uint32_t conn = 0;
    std::uint64_t wr_id = 0;
    wc_kind kind{};
    wc_status status = wc_status::success;
    std::uint16_t stream = 0;
    std::uint32_t stream_seq = 0;
    std::uint16_t tag = 0;
    std::uint32_t length = 0;
    std::optional<std::uint32_t> imm;
    nanos time{0};
    nanos time_err{0};  // a DUT on a wire: `time` may be late by up to this (trace::completion::t_err)
};

struct path_stats {
    std::uint16_t port = 0;
    std::uint8_t epoch = 0;
    double cwnd = 0;
    double alpha = 1;
    nanos srtt{0}, rto{0};
    unsigned inflight = 0;
    std::uint64_t packets_sent = 0, bytes_sent = 0, retransmits = 0, rto_expiries = 0, ece_received = 0;
    unsigned moves = 0;
    bool failed = false;
};

struct counters {
    std::uint64_t frames_in = 0, frames_out = 0;
    std::uint64_t drops[16] = {};             // by wire::drop_reason
    std::uint64_t data_sent = 0, data_received = 0, duplicates = 0;
    std::uint64_t fast_retransmits = 0, rto_retransmits = 0;
    std::uint64_t acks_sent = 0, acks_received = 0, acks_ignored = 0;
    std::uint64_t naks_sent = 0, naks_received = 0;
    std::uint64_t rnrs_sent = 0, rnrs_received = 0, rnr_queries = 0;
    std::uint64_t ctrl_ignored = 0, data_before_accept = 0;
    std::uint64_t completions = 0, error_completions = 0;
};

// The counters by name ("frames_in", "drop.bad_icrc", ...): what the agent
// protocol's `counters` returns and plans match on.
std::map<std::string, std::uint64_t> counter_map(const counters& k);

// A connection's identity and per-path send state, for crafting frames that
// look like this endpoint's own (the scriptable peer's injections).
struct wire_state {
    std::uint32_t local_id = 0, remote_id = 0;
    address peer;
    unsigned num_paths = 0;
    std::uint32_t mtu = 0;
    struct path {
        std::uint16_t port = 0;
        std::uint8_t epoch = 0;
        std::uint32_t next_ppsn = 0;
        std::uint32_t recv_cum_ack = 0;  // receive side: the CumAck this endpoint would send
        std::uint8_t recv_epoch = 0;     // receive side: the latest PathEpoch seen
    };
    std::vector<path> paths;
    std::uint16_t rnr_count = 0;  // receive side: the highest RnrSeq made so far
};

struct connection;  // internal, connection.h

class endpoint {
public:
    using frame_tx = std::function<void(core::bytes_view frame)>;
    // A sink that may take the frame's buffer instead of copying the bytes
    // (a fabric's packet pool does): it may leave any bytes in `frame`, which
    // the endpoint overwrites when it builds its next frame.
    using frame_tx_owned = std::function<void(core::byte_buffer& frame)>;
    // Replaces the constructor's sink: frames go to `tx` from now on.
    void set_tx(frame_tx_owned tx) { tx_owned_ = std::move(tx); }
    // Connections made from now on take their receive path, retransmission
    // timers and RNR pauses from units `make` builds (units.h), not from the
    // endpoint's own code: the RTL DUT's shell installs its Verilated units.
    void set_units(units_factory make) { units_ = std::move(make); }

    endpoint(sim::scheduler& s, const config& cfg, address self, std::uint64_t seed, frame_tx tx);
    ~endpoint();
    endpoint(const endpoint&) = delete;
    endpoint& operator=(const endpoint&) = delete;

    // Accept CONNECTs from now on.
    void listen() { listening_ = true; }
    // Starts a connection to `peer`; usable once established() (after ACCEPT).
    std::uint32_t connect(address peer);
    bool established(std::uint32_t conn) const;
    // Whether `conn` names a connection of this endpoint (made or accepted).
    bool has_connection(std::uint32_t conn) const { return conns_.count(conn) != 0; }
    // Whether `rkey` names a memory region of this endpoint.
    bool has_region(std::uint32_t rkey) const { return mrs_.count(rkey) != 0; }
    // Closes once every posted message has completed and nothing is in flight
    // (MR-CONN-3); CLOSE is repeated until CLOSE_ACK, up to the retry limit.
    core::status close(std::uint32_t conn);
    bool closed(std::uint32_t conn) const;
    bool in_error(std::uint32_t conn) const;
    // Connections accepted from peers, in order.
    const std::vector<std::uint32_t>& accepted() const { return accepted_; }

    // Memory: returns the R_Key of a new zeroed region of `len` bytes at va().
    std::uint32_t register_mr(std::size_t len);
    std::uint64_t mr_va(std::uint32_t rkey) const;
    std::span<const std::uint8_t> mr_bytes(std::uint32_t rkey) const;

    // Work requests. Errors are usage errors (unknown connection, bad region).
    core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t offset,
                           std::uint32_t len, std::uint64_t wr_id);
    core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t remote_va,
                            std::uint32_t remote_rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm = {});
    core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                           std::uint64_t wr_id, std::optional<std::uint32_t> imm = {});
    // As above, sharing the caller's buffer instead of copying it (as verbs
    // reference registered memory); many messages may share one buffer.
    using shared_bytes = std::shared_ptr<const core::byte_buffer>;
    core::status post_write(std::uint32_t conn, std::uint16_t stream, shared_bytes data, std::uint64_t remote_va,
                            std::uint32_t remote_rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm = {});
    core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, shared_bytes data,
                           std::uint64_t wr_id, std::optional<std::uint32_t> imm = {});
    std::vector<completion> poll();

    // A frame from the wire. `arrived`: when it reached the host, in
    // scheduler time (a real-time host's kernel receive stamp), if earlier
    // than now: RTT samples and RNR pauses count from it, as a NIC stamps
    // a frame at its port, not when its software got to it (D80).
    void receive(core::bytes_view frame, std::optional<nanos> arrived = std::nullopt);
    // The current frame's arrival (receive's `arrived`, else now).
    nanos arrival() const { return arrived_.value_or(s_.now()); }
    // Frames read together (one read of a socket's queue) are all taken in
    // before the sender acts on them: between begin_batch() and end_batch()
    // sending is deferred, as a NIC's pipeline takes the ACKs queued at its
    // port before its transmit scheduler runs. A real-time host that fell
    // behind its wire then resends nothing an ACK already waiting in its
    // queue covers (mrct-refnic beside stress-ng resent PPSNs a queued ACK
    // covered, 580 us after it left the engine: no_go_back_n). ACKs still go
    // out at once. Unused in virtual time, where frames arrive one by one.
    void begin_batch() { batching_ = true; }
    void end_batch();
    // A real-time host's transmit turn (config::tx_burst, D116): after every
    // tx_burst SEND packets of a connection the sender calls `turn`, which
    // sends what the host holds and says whether frames wait to be read; if
    // none do it goes on, else it stops until the host's next turn, after
    // the host has read them. Without one it stops at every tx_burst.
    void set_tx_turn(std::function<bool()> turn) { tx_turn_ = std::move(turn); }

    const counters& stats() const { return c_; }
    std::vector<path_stats> path_info(std::uint32_t conn) const;
    const config& cfg() const { return cfg_; }
    sim::scheduler& sched() { return s_; }
    std::uint64_t inflight_messages(std::uint32_t conn) const;
    std::optional<wire_state> conn_wire(std::uint32_t conn) const;
    // Moves path `path` to a new source port with PathEpoch + 1, as after two
    // expiries (MR-PATH-2/4): the scriptable peer changing its entropy on cue.
    core::status move_port(std::uint32_t conn, unsigned path);
    const address& self() const { return self_; }

    // Internal plumbing shared by endpoint.cpp, sender.cpp and receiver.cpp.
    struct impl;
    counters& stats_mut() { return c_; }
    // MR-GR-3's count of active senders, kept so an ACK does not walk every
    // connection. Exact while now <= valid_until (no counted connection can
    // have gone idle before then); recounted after.
    struct active_count {
        unsigned n = 0;
        nanos valid_until{-1};
        nanos idle{0};  // the grant_idle it was counted with
    };
    active_count& active_mut() { return active_; }
    std::size_t last_frame_size() const { return last_frame_size_; }

private:
    friend struct impl;
    sim::scheduler& s_;
    config cfg_;
    address self_;
    core::rng rng_;
    frame_tx tx_;
    frame_tx_owned tx_owned_;
    bool listening_ = false;
    std::map<std::uint32_t, std::unique_ptr<connection>> conns_;
    std::vector<std::uint32_t> accepted_;
    struct region {
        std::uint64_t va;
        zero_pages bytes;
    };
    std::map<std::uint32_t, region> mrs_;
    std::uint32_t next_rkey_ = 0x100;
    std::uint64_t next_va_ = 0x10000000;
    std::vector<completion> cq_;
    counters c_;
    core::byte_buffer scratch_;
    std::size_t last_frame_size_ = 0;
    std::uint16_t ip_id_ = 0;  // bug df-clear: the last IPv4 Identification sent
    active_count active_;
    bool batching_ = false;
    std::optional<nanos> arrived_;  // while receive() runs: the frame's arrival
    std::vector<std::uint32_t> pump_after_batch_;  // connections whose sending waits for end_batch()
    std::function<bool()> tx_turn_;                // set_tx_turn
    // Variant answer-late: NAKs and RNRs waiting for their time, oldest first.
    std::deque<std::pair<nanos, wire::frame_spec>> late_answers_;
    std::unique_ptr<sim::timer> late_answer_timer_;
    units_factory units_;                          // empty: the endpoint's own units
};

}  // namespace mrct::endpoint
