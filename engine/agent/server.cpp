#include "agent/server.h"

#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

namespace mrct::agent {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

class conn : public std::enable_shared_from_this<conn> {
public:
    conn(tcp::socket s, server::handler h) : s_(std::move(s)), h_(std::move(h)) {}
    void start() { read(); }

private:
    void read() {
        asio::async_read_until(s_, asio::dynamic_buffer(in_, k_max_line), '\n',
                               [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                                   if (ec) return;  // closed, or a line beyond k_max_line: drop the connection
                                   self->on_line(n);
                               });
    }
    void on_line(std::size_t n) {
        std::string line = in_.substr(0, n - 1);
        in_.erase(0, n);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        json req = json::parse(line, nullptr, false);
        if (req.is_discarded()) return respond(error_response(0, code::bad_request, "the request is not valid JSON"), false);
        // 1.1: "data_bytes": N -> N raw bytes follow the line.
        auto it = req.is_object() ? req.find("data_bytes") : req.end();
        if (it == req.end()) return respond(h_(req, sess_), false);
        std::uint64_t id = 0;
        if (auto i = req.find("id"); i != req.end() && i->is_number_unsigned()) id = i->get<std::uint64_t>();
        const auto len = attachment_length(*it);
        if (!len)
            // The stream cannot be followed past an attachment of unknown length.
            return respond(error_response(id, code::bad_request,
                                          "'data_bytes' must be an unsigned integer of at most " +
                                              std::to_string(k_max_attachment)),
                           true);
        const std::size_t want = *len;
        req_ = std::move(req);
        sess_.in_data.emplace(want);
        const std::size_t have = take_buffered(in_, sess_.in_data->data(), want);
        if (have == want) return on_attachment();
        asio::async_read(s_, asio::buffer(sess_.in_data->data() + have, want - have), transfer_rest{want - have},
                         [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                             if (ec) return;
                             self->on_attachment();
                         });
    }
    void on_attachment() {
        json resp = h_(req_, sess_);
        sess_.in_data.reset();
        respond(std::move(resp), false);
    }
    void respond(const json& resp, bool close_after) {
        out_ = resp.dump(-1, ' ', false, json::error_handler_t::replace);
        out_.push_back('\n');
        if (sess_.out_data) {  // 1.1: the response's bytes follow its line
            out_.append(sess_.out_data->begin(), sess_.out_data->end());
            sess_.out_data.reset();
        }
        asio::async_write(s_, asio::buffer(out_), transfer_rest{out_.size()}, [self = shared_from_this(), close_after](const boost::system::error_code& ec, std::size_t) {
            if (ec) return;
            if (close_after) {
                boost::system::error_code e2;
                self->s_.shutdown(tcp::socket::shutdown_both, e2);
                self->s_.close(e2);
                return;
            }
            self->read();
        });
    }

    tcp::socket s_;
    server::handler h_;
    session sess_;
    std::string in_, out_;
    json req_;
};

}  // namespace

struct server::impl : std::enable_shared_from_this<server::impl> {
    impl(asio::io_context& io, handler h) : acc(io), h(std::move(h)) {}
    tcp::acceptor acc;
    handler h;

    void accept() {
        acc.async_accept([self = shared_from_this()](const boost::system::error_code& ec, tcp::socket s) {
            if (ec == asio::error::operation_aborted) return;
            if (!ec) {
                boost::system::error_code e2;
                s.set_option(tcp::no_delay(true), e2);
                std::make_shared<conn>(std::move(s), self->h)->start();
            }
            self->accept();
        });
    }
};

server::server(asio::io_context& io, handler h) : m_(std::make_shared<impl>(io, std::move(h))) {}
server::~server() { close(); }

core::status server::listen(const std::string& host, std::uint16_t port) {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(host, ec);
    if (ec) return core::error{"'" + host + "' is not an IP address"};
    tcp::endpoint ep(addr, port);
    m_->acc.open(ep.protocol(), ec);
    if (!ec) m_->acc.set_option(tcp::acceptor::reuse_address(true), ec);
    if (!ec) m_->acc.bind(ep, ec);
    if (!ec) m_->acc.listen(16, ec);
    if (ec) return core::error{"listening on " + host + ":" + std::to_string(port) + ": " + ec.message()};
    m_->accept();
    return core::ok_status();
}

std::uint16_t server::port() const {
    boost::system::error_code ec;
    return m_->acc.local_endpoint(ec).port();
}

void server::close() {
    boost::system::error_code ec;
    m_->acc.close(ec);
}

}  // namespace mrct::agent
