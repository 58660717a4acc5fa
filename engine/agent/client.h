// The engine's end of the agent protocol: one TCP connection, one request at a
// time, every call bounded by a timeout. After a timeout or a broken line the
// client is unusable (the response stream can no longer be trusted) and every
// later call fails at once with the same reason.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "agent/protocol.h"

namespace boost::asio {
class io_context;
}

namespace mrct::agent {

struct call_error {
    std::string code;  // a protocol error code, or "timeout", "io", "protocol"
    std::string message;
};

class client {
public:
    client();
    ~client();
    // Connects within `timeout`.
    core::status connect(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout);
    // Sends {"id", "op", args...}; the response body on ok, else the error.
    // A protocol-level error ({"ok": false}) leaves the connection usable.
    core::result<json> call(const std::string& op, json args, std::chrono::milliseconds timeout);
    // The same with binary attachments (protocol 1.1, for an agent whose hello
    // lists "binary_data"): `in`, when given, follows the request line as
    // "data_bytes"; a response's "data_bytes" bytes are read into `*out`
    // (a response carrying bytes when `out` is null breaks the connection).
    core::result<json> call(const std::string& op, json args, std::chrono::milliseconds timeout,
                            std::optional<core::bytes_view> in, core::byte_buffer* out);
    // From now on, do I/O on `io` and wait for responses through `wait`
    // (which runs `io` until `done` or the timeout; returns done). The
    // engine's real-time driver keeps the peer and the wire running this way
    // while the agent works on a request.
    using waiter = std::function<bool(const bool& done, std::chrono::milliseconds timeout)>;
    void use(boost::asio::io_context& io, waiter wait);
    bool broken() const;
    const std::string& broken_reason() const;
    // The connection broke because a call got no response within its timeout
    // (an agent held, hung or gone silent), not by an error it answered.
    bool timed_out() const;
    // The error code of the latest call's error response ("" when it had
    // none: it succeeded, or failed without an answer): `failed` is the DUT
    // refusing the operation (docs/agent-protocol.md, Errors).
    const std::string& error_code() const;

private:
    struct impl;
    std::unique_ptr<impl> m_;
};

}  // namespace mrct::agent
