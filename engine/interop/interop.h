// Two DUTs talking to each other (issue 24, docs/emulator.md "Interop"): the
// driver connects to both agents (docs/agent-protocol.md), opens one
// connection from A to B, and posts a seeded workload on it in both
// directions: WRITEs on several streams, SENDs on several tags, and, with
// `rnr`, SENDs on one tag whose receives are posted only after a hold, so that
// the receiver answers them with RNRs and the sender must pause and resume
// (MR-RNR-1..4). It then polls both until every message completed, reads the
// receivers' memory back, and compares it with what was sent.
//
// Neither side is the engine's peer: the wire between them is theirs (a
// cable, or `mrct emulate`), and what they did on it is judged afterwards
// from its capture (`mrct check`).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace mrct::interop {

struct agent_spec {
    std::string host = "127.0.0.1";
    std::uint16_t port = 7700;
    std::string token;
};
// "HOST:PORT" or "[V6]:PORT".
core::result<agent_spec> parse_agent(const std::string& text);

struct workload {
    unsigned writes = 32;              // per direction
    std::uint32_t write_size = 65536;
    unsigned streams = 4;
    unsigned sends = 16;               // per direction, round-robin over the tags
    std::uint32_t send_size = 16384;
    unsigned tags = 2;
    bool rnr = true;                   // the last tag's receives come late
    std::int64_t rnr_hold_ns = 5'000'000;
    bool both_ways = true;             // B sends to A too
};

struct options {
    agent_spec a, b;
    std::map<std::string, std::string> params;  // `configure` on both (docs/agent-protocol.md names)
    workload w;
    std::uint64_t seed = 1;
    std::int64_t timeout_ns = 30'000'000'000;   // for every message to complete
    std::chrono::milliseconds call_timeout{2000};
};

// The run's summary: per side, what it was asked to do and what completed,
// the first failure, memory compared. "complete" is true when every message
// completed with success and every byte arrived as sent. An agent that cannot
// be reached or misbehaves is an error (the result's error), not a summary.
core::result<nlohmann::ordered_json> run(const options& o);

}  // namespace mrct::interop
