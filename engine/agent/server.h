// The agent's TCP listener: accepts connections, reads newline-delimited JSON
// requests, hands each to the handler on the io_context's thread and writes
// its response. A line that is not JSON gets a bad_request response; a line
// longer than k_max_line closes the connection. A line with "data_bytes": N
// (1.1) is followed by N raw bytes, handed over as session::in_data; a
// response's session::out_data follows its line; an unreadable data_bytes is
// answered and closes the connection.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

#include "agent/protocol.h"
#include "agent/service.h"

namespace mrct::agent {

class server {
public:
    using handler = std::function<json(const json& request, session& sess)>;
    server(boost::asio::io_context& io, handler h);
    ~server();
    core::status listen(const std::string& host, std::uint16_t port);
    std::uint16_t port() const;  // the bound port (listen on 0 picks one)
    void close();

private:
    struct impl;
    std::shared_ptr<impl> m_;
};

}  // namespace mrct::agent
