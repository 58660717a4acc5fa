// The device under test as the engine drives it: the control operations of
// the agent protocol (spec §6, docs/agent-protocol.md) plus a frame port.
// `sim` hosts the reference endpoint in-process in virtual time; agent
// adapters (issue 5) implement the same interface over TCP and a real wire.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/result.h"
#include "endpoint/endpoint.h"
#include "sim/scheduler.h"

namespace mrct::dut {

struct info {
    std::string name, version, bug;
    std::vector<std::string> capabilities;
};

class dut {
public:
    using frame_tx = std::function<void(core::bytes_view)>;
    virtual ~dut() = default;

    virtual info hello() const = 0;
    // Parameters by name (endpoint::config_params()); before start().
    virtual core::status configure(const std::map<std::string, std::string>& params) = 0;
    // Brings the DUT up on `s` with its address; frames it sends go to `tx`.
    virtual core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) = 0;
    virtual void receive(core::bytes_view frame) = 0;

    virtual void listen() = 0;
    virtual std::uint32_t connect(endpoint::address peer) = 0;
    virtual bool established(std::uint32_t conn) const = 0;
    virtual std::vector<std::uint32_t> accepted() const = 0;
    virtual bool in_error(std::uint32_t conn) const = 0;
    virtual core::status close(std::uint32_t conn) = 0;

    virtual std::uint32_t register_mr(std::size_t len) = 0;
    virtual std::uint64_t mr_va(std::uint32_t rkey) const = 0;
    virtual core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t offset,
                                   std::uint32_t len, std::uint64_t wr_id) = 0;
    virtual core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t remote_va,
                                    std::uint32_t rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) = 0;
    virtual core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                                   std::uint64_t wr_id, std::optional<std::uint32_t> imm) = 0;
    virtual std::vector<endpoint::completion> poll() = 0;
    virtual core::result<core::byte_buffer> read_mem(std::uint32_t rkey, std::uint64_t offset, std::size_t len) = 0;
    virtual std::map<std::string, std::uint64_t> counters() const = 0;
};

// The reference endpoint in-process; `bug` selects a bug profile ("" = none).
std::unique_ptr<dut> make_sim(const std::string& bug = "");

// Counters of a reference endpoint by name ("drop.bad_icrc", "naks_sent", ...).
std::map<std::string, std::uint64_t> endpoint_counters(const endpoint::counters& k);

}  // namespace mrct::dut
