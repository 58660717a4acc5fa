// The agent protocol served over the reference endpoint: what mrct-refnic runs
// behind its TCP listener. Transport-free (one JSON request in, one JSON
// response out), so tests drive it without sockets. Runs on the scheduler's
// thread; not thread-safe.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "agent/protocol.h"
#include "endpoint/endpoint.h"
#include "sim/scheduler.h"

namespace mrct::agent {

struct service_options {
    std::string name = "mrct-refnic";
    std::string bug;    // bug profile, "" = none
    std::uint32_t variants = 0;  // conforming variants (endpoint::config::variants, D153)
    std::string token;  // required in hello when not empty
    endpoint::address self;
    std::vector<std::string> capabilities = {"write", "write_imm", "send", "send_imm", k_binary_data};  // + ipv4 or ipv6 (refnic)
    // Called just before each use of the endpoint, after the request's fields
    // (a megabyte of base64, say) are decoded: a real-time host brings the
    // scheduler to wall time here, so that a post is stamped when it is made,
    // not when its request arrived (or the DUT's timers and RTT samples run
    // early by the decoding time).
    std::function<void()> clock;
    // Bounds on what a client may make the agent do (docs/agent-protocol.md,
    // "Security"): bytes of memory regions per register_mr and in all (until
    // reset), and which wire peers `connect` may name (empty: any).
    std::uint64_t max_mr_bytes = 1ull << 30;
    std::uint64_t max_total_mr_bytes = 4ull << 30;
    std::function<bool(const std::string& peer_ip)> peer_allowed;
    std::string peer_rule;  // how peer_allowed decides, for its error message
    unsigned tx_burst = 0;  // endpoint::config::tx_burst of every endpoint (a real-time host's)
    bool resident_regions = false;  // endpoint::config::resident_regions of every endpoint (a real-time host's)
    // Stamp each completion when a poll reaps it, with `time_err_ns` the time
    // since the previous poll: an agent without the device's completion
    // timestamps (mrct-refnic --reap-stamps; docs/agent-protocol.md).
    bool reap_stamps = false;
    // The agent an implementation other than mrct's may be (mrct-refnic
    // --agent-as): a 1.0 agent (hello's version_minor; main leaves out
    // binary_data), one that reports no counters, or none of frames_in and
    // frames_out (docs/agent-protocol.md: absent names are never read as 0).
    unsigned version_minor = k_version_minor;
    bool report_counters = true, report_frame_counts = true;
    std::function<bool()> tx_turn;  // endpoint::set_tx_turn of every endpoint
};

// One TCP connection's state: whether hello succeeded on it, and the binary
// attachments of the request being served and of its response.
struct session {
    bool authed = false;
    std::optional<core::byte_buffer> in_data;   // the request's "data_bytes" bytes
    std::optional<core::byte_buffer> out_data;  // set by the service: sent after the response line
};

class service {
public:
    service(sim::scheduler& s, service_options o, endpoint::endpoint::frame_tx tx);
    ~service();

    json handle(const json& request, session& sess);
    // A frame from the wire (Ethernet, rebuilt by the port); dropped before the endpoint starts.
    // `arrived`: endpoint::receive's (the frame's kernel receive time, in scheduler time).
    void receive(core::bytes_view frame, std::optional<core::nanos> arrived = std::nullopt);
    // Frames read together: see endpoint::begin_batch.
    void begin_batch() {
        if (ep_) ep_->begin_batch();
    }
    void end_batch() {
        if (ep_) ep_->end_batch();
    }
    const service_options& options() const { return o_; }

private:
    json dispatch(const std::string& op, const json& req, session& sess);
    endpoint::endpoint& ep();
    void reset(std::uint64_t seed);

    sim::scheduler& s_;
    service_options o_;
    endpoint::endpoint::frame_tx tx_;
    endpoint::config cfg_;
    std::uint64_t seed_ = 1;
    std::uint64_t mr_bytes_ = 0;  // registered since the last reset
    std::unique_ptr<endpoint::endpoint> ep_;
    core::nanos last_poll_{0};  // reap_stamps: the previous poll (or reset)
};

}  // namespace mrct::agent
