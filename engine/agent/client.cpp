#include "agent/client.h"

#include <array>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/write.hpp>

namespace mrct::agent {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct client::impl {
    asio::io_context own;
    std::unique_ptr<tcp::socket> sock = std::make_unique<tcp::socket>(own);
    std::string inbuf;
    // The last finished call's request buffer: a request carrying megabytes
    // reuses its pages instead of faulting in fresh ones while the DUT sends.
    std::string spare;
    std::uint64_t next_id = 1;
    std::string broken;
    bool timed_out = false;  // broken by a call's timeout
    std::string error_code;  // the latest call's error response's code, if it had one
    waiter wait;

    // Runs until `done` or the deadline; false on timeout (the socket is then closed).
    bool run(const bool& done, std::chrono::milliseconds timeout) {
        if (wait) {
            if (wait(done, timeout)) return true;
            boost::system::error_code ec;
            sock->cancel(ec);
            sock->close(ec);
            return false;
        }
        auto& io = own;
        io.restart();
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (!done) {
            const auto now = std::chrono::steady_clock::now();
            if (now >= deadline) break;
            io.run_one_for(deadline - now);
        }
        if (done) return true;
        boost::system::error_code ec;
        sock->cancel(ec);
        sock->close(ec);
        io.restart();
        io.poll();  // let the cancelled handlers run (they mark their call done)
        return false;
    }
};

client::client() : m_(std::make_unique<impl>()) {}
client::~client() = default;

void client::use(boost::asio::io_context& io, waiter wait) {
    boost::system::error_code ec;
    const bool open = m_->sock->is_open();
    auto proto = open ? m_->sock->local_endpoint(ec).protocol() : tcp::v4();
    auto fd = open ? m_->sock->release(ec) : -1;
    m_->sock = std::make_unique<tcp::socket>(io);
    if (open && !ec) m_->sock->assign(proto, fd, ec);
    m_->wait = std::move(wait);
}

bool client::broken() const { return !m_->broken.empty(); }
const std::string& client::broken_reason() const { return m_->broken; }
bool client::timed_out() const { return m_->timed_out; }
const std::string& client::error_code() const { return m_->error_code; }

core::status client::connect(const std::string& host, std::uint16_t port, std::chrono::milliseconds timeout) {
    boost::system::error_code ec;
    auto addr = asio::ip::make_address(host, ec);
    if (ec) return core::error{"agent address '" + host + "' is not an IP address"};
    // Each connect starts afresh: a failed attempt leaves its socket closed
    // and its reason behind, neither of which belongs to this one.
    m_->sock->close(ec);
    m_->broken.clear();
    m_->inbuf.clear();
    auto st = std::make_shared<std::pair<bool, boost::system::error_code>>(false, boost::system::error_code{});
    m_->sock->async_connect(tcp::endpoint(addr, port), [st](const boost::system::error_code& e) {
        st->second = e;
        st->first = true;
    });
    const bool& done = st->first;
    const auto& result = st->second;
    const auto where = host + ":" + std::to_string(port);
    if (!m_->run(done, timeout)) {
        m_->broken = "no answer from the agent at " + where + " within " + std::to_string(timeout.count()) + " ms";
        return core::error{m_->broken};
    }
    if (result) {
        // A reset as the connect completes: the agent's listening socket took
        // the handshake and its process dropped it (a dying or restarting
        // agent), so the agent was reached; the caller's first request is
        // always hello.
        const bool dropped = result == asio::error::connection_reset || result == asio::error::connection_aborted;
        m_->broken = dropped ? "the agent at " + where + " took the connection and dropped it before hello's answer: " + result.message()
                             : "cannot reach the agent at " + where + ": " + result.message();
        return core::error{m_->broken};
    }
    m_->sock->set_option(tcp::no_delay(true), ec);
    return core::ok_status();
}

core::result<json> client::call(const std::string& op, json args, std::chrono::milliseconds timeout) {
    return call(op, std::move(args), timeout, std::nullopt, nullptr);
}

core::result<json> client::call(const std::string& op, json args, std::chrono::milliseconds timeout,
                                std::optional<core::bytes_view> in, core::byte_buffer* out) {
    if (!m_->broken.empty()) return core::error{m_->broken};
    if (!args.is_object()) args = json::object();
    const auto id = m_->next_id++;
    args["id"] = id;
    args["op"] = op;
    m_->error_code.clear();
    if (in) args["data_bytes"] = in->size();
    std::string line = std::move(m_->spare);
    line.clear();
    line += args.dump(-1, ' ', false, json::error_handler_t::replace);
    line.push_back('\n');
    // The attachment is written from the caller's bytes, after the line (no
    // copy: appending 4 MiB to a fresh buffer faulted in its pages for 19 ms
    // on this project's VM, time the engine's wire waited). The call does
    // not return while the write may still read them: it ends when the
    // response came (after the whole request was read), or fails, and a
    // failure closes the socket, which cancels the write before another
    // handler runs (the io_context is this thread's).

    auto fail = [&](std::string why) -> core::result<json> {
        m_->broken = "agent " + op + ": " + why;
        boost::system::error_code ec;
        m_->sock->close(ec);
        return core::error{m_->broken};
    };

    // Handlers may run after a timeout returned (on the shared io_context):
    // they hold the call's state, never the stack.
    struct state {
        bool done = false;
        boost::system::error_code werr, rerr;
        std::size_t got = 0;
        std::string line;
    };
    auto cs = std::make_shared<state>();
    cs->line = std::move(line);
    auto* m = m_.get();
    const std::array<asio::const_buffer, 2> request{asio::buffer(cs->line),
                                                   in ? asio::buffer(in->data(), in->size()) : asio::const_buffer{}};
    asio::async_write(*m->sock, request, transfer_rest{asio::buffer_size(request)}, [cs, m](const boost::system::error_code& e, std::size_t) {
        cs->werr = e;
        if (e || cs->done) {
            cs->done = true;
            return;
        }
        asio::async_read_until(*m->sock, asio::dynamic_buffer(m->inbuf, k_max_line), '\n',
                               [cs](const boost::system::error_code& e2, std::size_t n) {
                                   cs->rerr = e2;
                                   cs->got = n;
                                   cs->done = true;
                               });
    });
    const bool& done = cs->done;
    const auto& werr = cs->werr;
    const auto& rerr = cs->rerr;
    const auto& got = cs->got;
    if (!m_->run(done, timeout)) {
        m_->timed_out = m_->broken.empty();
        return fail("no response within " + std::to_string(timeout.count()) + " ms");
    }
    if (werr) return fail("sending: " + werr.message());
    m_->spare = std::move(cs->line);  // written: the buffer is free again
    if (rerr == asio::error::not_found)  // read_until's answer when the buffer's limit comes before a newline
        return fail("the agent's reply exceeds the line limit of " + std::to_string(k_max_line) +
                    " bytes without a newline (docs/agent-protocol.md)");
    if (rerr) return fail(rerr == asio::error::eof ? "the agent closed the connection" : "receiving: " + rerr.message());
    const std::string resp = m_->inbuf.substr(0, got - 1);
    m_->inbuf.erase(0, got);
    json r = json::parse(resp, nullptr, false);
    if (r.is_discarded() || !r.is_object()) return fail("the response is not a JSON object: " + resp.substr(0, 120));
    if (!r.contains("id") || !r["id"].is_number_unsigned())
        return fail("the response has no request id (the request's is " + std::to_string(id) + ")");
    if (const auto got_id = r["id"].get<std::uint64_t>(); got_id != id)
        return fail("the response's id does not match the request's: " + std::to_string(got_id) +
                    (got_id > id ? ", a reply to a request never made" : ", a reply to an earlier request") + " (the request's is " +
                    std::to_string(id) + ")");
    if (!r.contains("ok") || !r["ok"].is_boolean()) return fail("the response has no boolean 'ok'");
    if (!r["ok"].get<bool>()) {
        const auto& e = r.contains("error") && r["error"].is_object() ? r["error"] : json::object();
        const auto c = e.contains("code") && e["code"].is_string() ? e["code"].get<std::string>() : "unknown";
        const auto msg = e.contains("message") && e["message"].is_string() ? e["message"].get<std::string>() : "";
        m_->error_code = c;
        return core::error{"agent " + op + ": " + c + ": " + msg};
    }
    if (auto it = r.find("data_bytes"); it != r.end()) {
        if (!out) return fail("the response carries bytes that were not asked for");
        const auto len = attachment_length(*it);
        if (!len)
            return fail("the response's 'data_bytes' is not an unsigned integer of at most " + std::to_string(k_max_attachment));
        const std::size_t n = *len;
        // The read owns its buffer: it may outlive a timed-out call.
        auto buf = std::make_shared<core::byte_buffer>(n);
        const std::size_t have = take_buffered(m_->inbuf, buf->data(), n);
        if (have < n) {
            auto bs = std::make_shared<state>();
            asio::async_read(*m->sock, asio::buffer(buf->data() + have, n - have), transfer_rest{n - have},
                             [bs, buf](const boost::system::error_code& e, std::size_t) {
                                 bs->rerr = e;
                                 bs->done = true;
                             });
            if (!m_->run(bs->done, timeout)) return fail("no response bytes within " + std::to_string(timeout.count()) + " ms");
            if (bs->rerr) return fail("receiving the response's bytes: " + bs->rerr.message());
        }
        *out = std::move(*buf);
        r.erase("data_bytes");
    }
    r.erase("id");
    r.erase("ok");
    return r;
}

}  // namespace mrct::agent
