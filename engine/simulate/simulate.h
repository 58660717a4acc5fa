// A transfer between reference endpoints over the fabric, in virtual time:
// `senders` endpoints each connected to one receiver through their own
// N-path fabric (one bottleneck queue per path), posting `messages` messages
// of `message_bytes` over `streams` streams. Used by `mrct simulate` and by the
// benchmarks that reproduce the public claims (docs/performance.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "endpoint/config.h"
#include "fabric/fabric.h"

namespace mrct::simulate {

// One fabric stage added to the senders' paths (docs/simulate.md "Impairments"):
// any stage of docs/fabric.md with its parameters, on one path or all, one
// sender or all, in one direction or both. It follows the path's own queue and
// delay, in the order given.
struct impairment {
    enum class direction { to_receiver, to_sender, both };
    std::string kind;
    fabric::param_map params;
    std::optional<unsigned> path;    // nullopt: every path
    std::optional<unsigned> sender;  // nullopt: every sender
    direction dir = direction::to_receiver;
    std::string where;               // "FILE:LINE:COL" or "--impair": prefixes its errors
};

// Checks and builds an impairment from its stage kind and key=value pairs
// (`path`, `sender`, `dir` and the stage's parameters, validated against the
// stage's declarations). Ranges that depend on paths and senders are checked
// by run().
core::result<impairment> make_impairment(const std::string& kind, const fabric::param_map& kv, std::string where);
// The command-line form: KIND[:KEY=VALUE,...], e.g. "corrupt:p=0.01,path=2".
core::result<impairment> parse_impairment(const std::string& text);

struct options {
    unsigned paths = 8;
    unsigned senders = 1;
    std::uint64_t seed = 1;
    std::uint64_t message_bytes = 1 << 20;
    unsigned messages = 16;
    unsigned streams = 1;
    unsigned outstanding = 0;           // per sender: at most this many messages posted at once (0: all at t=0)
    bool use_send = false;              // SEND (receives pre-posted) instead of WRITE
    std::string link_rate = "100Gbps";  // per path, each direction
    std::string delay = "2us";          // per path one-way propagation
    double loss = 0;                    // Bernoulli loss per path, A->B
    std::map<unsigned, std::string> path_delay;  // path -> extra one-way delay (both directions)
    std::map<unsigned, std::string> fail_path;   // path -> time it fails (A->B and B->A)
    std::string sender_bug = "none", receiver_bug = "none";
    double inbound_rate_bps = 400e9;    // receiver's grant base
    // The receiver's own link, shared by every sender (incast): a RED-marking
    // queue at this rate in front of the receiver. Empty: no shared link.
    std::string receiver_link;          // e.g. "400Gbps"
    std::string receiver_kmin = "65536", receiver_kmax = "262144";
    std::uint32_t mtu = 4096;
    core::nanos time_limit = std::chrono::seconds(10);
    std::vector<impairment> impair;     // extra stages, in order
    // Data packets describe their payload instead of carrying it (message and
    // offset are in their headers; ICRC outcomes, corruption included, exact:
    // docs/simulate.md "Payload"): the same metrics as real bytes, for less
    // CPU and memory. Off: every packet carries and checks its real bytes.
    bool symbolic_payload = false;
};

// Options from a small YAML file (keys as the struct's fields; see docs/simulate.md).
core::result<options> options_from_yaml(const std::string& path);

struct result {
    nlohmann::ordered_json json;
    bool all_completed = false;
};

core::result<result> run(const options& o);

}  // namespace mrct::simulate
