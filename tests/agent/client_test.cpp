// The engine's agent client against agents that misbehave: gone, hung,
// answering garbage or the wrong id. Every call ends within its timeout with
// the reason; a broken connection stays broken.
#include <catch2/catch.hpp>

#include <atomic>
#include <optional>
#include <thread>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/write.hpp>

#include "agent/client.h"
#include "agent/server.h"

using namespace mrct;
using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// A one-connection TCP agent on 127.0.0.1 that answers each line with `reply(line)`
// ("" = never answer).
class fake_agent {
public:
    explicit fake_agent(std::function<std::string(const std::string&)> reply, std::uint16_t port = 0) : reply_(std::move(reply)) {
        acc_.open(tcp::v4());
        acc_.set_option(tcp::acceptor::reuse_address(true));
        acc_.bind({asio::ip::make_address("127.0.0.1"), port});
        acc_.listen();
        port_ = acc_.local_endpoint().port();
        t_ = std::thread([this] {
            boost::system::error_code ec;
            tcp::socket s(io_);
            acc_.accept(s, ec);
            if (stop_) return;
            std::string buf;
            while (!ec && !stop_) {
                auto n = asio::read_until(s, asio::dynamic_buffer(buf), '\n', ec);
                if (ec) break;
                auto line = buf.substr(0, n - 1);
                buf.erase(0, n);
                auto out = reply_(line);
                if (!out.empty()) asio::write(s, asio::buffer(out), ec);
            }
            // Hold the connection until the test ends (a hung agent).
            while (!stop_) std::this_thread::sleep_for(5ms);
        });
    }
    ~fake_agent() {
        // The thread is in accept (nobody connected: wake it by connecting) or
        // done with its client (the tests destroy the client first).
        stop_ = true;
        boost::system::error_code ec;
        asio::io_context io;
        tcp::socket s(io);
        s.connect({asio::ip::make_address("127.0.0.1"), port_}, ec);
        t_.join();
        s.close(ec);
        acc_.close(ec);
    }
    std::uint16_t port() const { return port_; }

private:
    asio::io_context io_;
    tcp::acceptor acc_{io_};
    std::uint16_t port_ = 0;
    std::function<std::string(const std::string&)> reply_;
    std::atomic<bool> stop_{false};
    std::thread t_;
};

std::string echo_ok(const std::string& line) {
    auto j = agent::json::parse(line);
    return agent::json{{"id", j["id"]}, {"ok", true}, {"answer", 42}}.dump() + "\n";
}

}  // namespace

TEST_CASE("client: a well-behaved agent answers") {
    fake_agent a(echo_ok);
    agent::client c;
    REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
    auto r = c.call("hello", {{"version_major", 1}}, 1000ms);
    REQUIRE(r.ok());
    CHECK((*r)["answer"] == 42);
    CHECK_FALSE(r->contains("id"));
}

TEST_CASE("client: nobody listening is a clear error") {
    std::uint16_t port;
    {
        fake_agent a(echo_ok);
        port = a.port();
    }
    agent::client c;
    auto st = c.connect("127.0.0.1", port, 1000ms);
    REQUIRE_FALSE(st.ok());
    CHECK_THAT(st.err().message, Catch::Contains("cannot reach the agent at 127.0.0.1:"));
    CHECK_FALSE(c.call("hello", {}, 100ms).ok());
    CHECK_FALSE(c.timed_out());
}

TEST_CASE("client: a hung agent times out, and the connection stays broken") {
    fake_agent a([](const std::string&) { return std::string(); });
    agent::client c;
    REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
    const auto t0 = std::chrono::steady_clock::now();
    auto r = c.call("poll", {}, 150ms);
    const auto took = std::chrono::steady_clock::now() - t0;
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("agent poll: no response within 150 ms"));
    CHECK(took < 2s);
    CHECK(c.broken());
    CHECK(c.timed_out());  // D114: a timeout, not an answered error
    CHECK(c.error_code().empty());
    auto again = c.call("counters", {}, 1000ms);
    REQUIRE_FALSE(again.ok());
    CHECK_THAT(again.err().message, Catch::Contains("agent poll: no response"));
}

// The attachment is written from the caller's bytes, not a copy: a call that
// times out with the write still going must leave them alone once it has
// returned: its failure closes the socket. An agent that reads nothing
// until then keeps 16 MiB from being written; the bytes are freed at once
// after the call, and then the agent reads all it can while the client's
// io_context runs on. It must find the client's end closed: a socket left
// open would go on sending from the freed bytes (the kernel reads them, so
// ASan would not see it; the test fails with the closes taken out).
TEST_CASE("client 1.1: an attachment nobody reads times out, and its bytes are the caller's again") {
    asio::io_context io, cio;
    tcp::acceptor acc(io, {asio::ip::make_address("127.0.0.1"), 0});
    tcp::socket held(io);  // accepted; read only after the call
    std::thread t([&] { acc.accept(held); });
    agent::client c;
    c.use(cio, [&](const bool& done, std::chrono::milliseconds timeout) {
        const auto end = std::chrono::steady_clock::now() + timeout;
        while (!done && std::chrono::steady_clock::now() < end) cio.run_one_for(1ms);
        cio.restart();
        return done;
    });
    REQUIRE(c.connect("127.0.0.1", acc.local_endpoint().port(), 1000ms).ok());
    t.join();
    auto big = std::make_unique<core::byte_buffer>(16u << 20, std::uint8_t{0x5A});
    auto r = c.call("post_write", agent::json::object(), 200ms, core::bytes_view(*big), nullptr);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("no response within 200 ms"));
    CHECK(c.broken());
    big.reset();
    held.non_blocking(true);
    std::vector<std::uint8_t> sink(1u << 20);
    std::size_t drained = 0;
    boost::system::error_code ec;
    for (int i = 0; i < 2000 && (!ec || ec == asio::error::would_block); ++i) {  // a bound, not a timing
        cio.poll();
        cio.restart();
        ec = {};
        drained += held.read_some(asio::buffer(sink), ec);
        if (ec == asio::error::would_block) std::this_thread::sleep_for(1ms);
    }
    INFO(ec.message());
    CHECK((ec == asio::error::eof || ec == asio::error::connection_reset));  // the client's end closed, not waiting to send more
    CHECK(drained < (16u << 20));
    CHECK_FALSE(c.call("poll", {}, 100ms).ok());
}

TEST_CASE("client: garbage, a wrong id and error responses") {
    SECTION("not JSON") {
        fake_agent a([](const std::string&) { return std::string("<html>hello</html>\n"); });
        agent::client c;
        REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
        auto r = c.call("hello", {}, 1000ms);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.err().message, Catch::Contains("not a JSON object"));
        CHECK(c.broken());
    }
    SECTION("another request's id") {
        fake_agent a([](const std::string&) { return std::string("{\"id\": 999, \"ok\": true}\n"); });
        agent::client c;
        REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
        auto r = c.call("hello", {}, 1000ms);
        REQUIRE_FALSE(r.ok());
        CHECK_THAT(r.err().message, Catch::Contains("id does not match"));
    }
    SECTION("a protocol error keeps the connection usable") {
        fake_agent a([](const std::string& line) {
            auto j = agent::json::parse(line);
            return agent::error_response(j["id"], agent::code::not_found, "no such connection").dump() + "\n";
        });
        agent::client c;
        REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
        auto r = c.call("status", {{"conn", 9}}, 1000ms);
        REQUIRE_FALSE(r.ok());
        CHECK(r.err().message == "agent status: not_found: no such connection");
        CHECK(c.error_code() == "not_found");
        CHECK_FALSE(c.broken());
        CHECK_FALSE(c.call("status", {{"conn", 9}}, 1000ms).ok());
    }
    SECTION("the DUT's refusal is named by its code, and the next call's outcome replaces it") {
        // D136: a refusal (`failed`) after long holds may be the DUT's
        // connection ended by its retry limit; the engine tells it from the
        // code, not from the message's words.
        int n = 0;
        fake_agent a([&](const std::string& line) {
            auto j = agent::json::parse(line);
            if (n++ == 0)
                return agent::error_response(j["id"], agent::code::failed, "connection not usable").dump() + "\n";
            return agent::json{{"id", j["id"]}, {"ok", true}}.dump() + "\n";
        });
        agent::client c;
        REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
        REQUIRE_FALSE(c.call("post_send", {{"conn", 1}}, 1000ms).ok());
        CHECK(c.error_code() == "failed");
        CHECK(c.call("poll", {}, 1000ms).ok());
        CHECK(c.error_code().empty());
    }
}

TEST_CASE("server: lines in, responses out; bad JSON answered, not fatal") {
    asio::io_context io;
    agent::server srv(io, [](const agent::json& req, agent::session&) {
        return agent::ok_response(req["id"].get<std::uint64_t>(), {{"op", req["op"]}});
    });
    REQUIRE(srv.listen("127.0.0.1", 0).ok());
    std::thread t([&] { io.run_for(3s); });
    asio::io_context io2;  // the client's own: the server's runs on its thread
    tcp::socket s(io2);
    s.connect({asio::ip::make_address("127.0.0.1"), srv.port()});
    std::string buf;
    asio::write(s, asio::buffer(std::string("this is not json\n{\"id\": 4, \"op\": \"poll\"}\n")));
    auto n = asio::read_until(s, asio::dynamic_buffer(buf), '\n');
    auto first = agent::json::parse(buf.substr(0, n));
    buf.erase(0, n);
    CHECK(first["ok"] == false);
    CHECK(first["error"]["code"] == "bad_request");
    n = asio::read_until(s, asio::dynamic_buffer(buf), '\n');
    auto second = agent::json::parse(buf.substr(0, n));
    CHECK(second["id"] == 4);
    CHECK(second["op"] == "poll");
    s.close();
    srv.close();
    io.stop();
    t.join();
}

TEST_CASE("client and server 1.1: binary attachments cross the socket both ways, in step with the lines") {
    asio::io_context io;
    agent::server srv(io, [](const agent::json& req, agent::session& s) {
        const auto id = req["id"].get<std::uint64_t>();
        if (req["op"] != "reverse") return agent::ok_response(id, {{"plain", true}});
        if (!s.in_data) return agent::error_response(id, agent::code::bad_request, "no bytes");
        core::byte_buffer out(s.in_data->rbegin(), s.in_data->rend());
        const auto n = out.size();
        s.out_data = std::move(out);
        return agent::ok_response(id, {{"data_bytes", n}});
    });
    REQUIRE(srv.listen("127.0.0.1", 0).ok());
    std::thread t([&] { io.run_for(5s); });
    {
        agent::client c;
        REQUIRE(c.connect("127.0.0.1", srv.port(), 1000ms).ok());
        core::byte_buffer big(3u << 20);  // several socket reads each way
        for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i ^ (i >> 9));
        core::byte_buffer back;
        auto r = c.call("reverse", agent::json::object(), 2000ms, core::bytes_view(big), &back);
        REQUIRE(r.ok());
        CHECK_FALSE(r->contains("data_bytes"));
        REQUIRE(back.size() == big.size());
        CHECK(std::equal(back.begin(), back.end(), big.rbegin()));
        // A small attachment after the big one: the request buffer is reused,
        // and nothing of the big one is sent again.
        const core::byte_buffer small{1, 2, 3, 4, 5};
        r = c.call("reverse", agent::json::object(), 1000ms, core::bytes_view(small), &back);
        REQUIRE(r.ok());
        CHECK(back == core::byte_buffer{5, 4, 3, 2, 1});
        // Empty attachments, then a plain line: the stream is still in step.
        r = c.call("reverse", agent::json::object(), 1000ms, core::bytes_view(), &back);
        REQUIRE(r.ok());
        CHECK(back.empty());
        r = c.call("plain", agent::json::object(), 1000ms);
        REQUIRE(r.ok());
        CHECK((*r)["plain"] == true);
        CHECK_FALSE(c.broken());
    }
    {
        // An attachment of no stated length cannot be skipped: answered, then closed.
        asio::io_context io2;
        tcp::socket s(io2);
        s.connect({asio::ip::make_address("127.0.0.1"), srv.port()});
        asio::write(s, asio::buffer(std::string("{\"id\": 3, \"op\": \"reverse\", \"data_bytes\": -1}\n")));
        std::string buf;
        auto n = asio::read_until(s, asio::dynamic_buffer(buf), '\n');
        auto resp = agent::json::parse(buf.substr(0, n));
        CHECK(resp["id"] == 3);
        CHECK(resp["error"]["code"] == "bad_request");
        boost::system::error_code ec;
        buf.erase(0, n);
        asio::read_until(s, asio::dynamic_buffer(buf), '\n', ec);
        CHECK(ec == asio::error::eof);
    }
    srv.close();
    io.stop();
    t.join();
}

TEST_CASE("client 1.1: bytes nobody asked for break the connection") {
    fake_agent a([](const std::string& line) {
        auto j = agent::json::parse(line);
        return agent::json{{"id", j["id"]}, {"ok", true}, {"data_bytes", 3}}.dump() + "\nabc";
    });
    agent::client c;
    REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
    auto r = c.call("read_mem", agent::json::object(), 1000ms);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("bytes that were not asked for"));
    CHECK(c.broken());
}

TEST_CASE("client: a reply longer than the line limit is named as such, and breaks the connection") {
    fake_agent a([](const std::string&) { return std::string(agent::k_max_line + 1, 'x'); });
    agent::client c;
    REQUIRE(c.connect("127.0.0.1", a.port(), 1000ms).ok());
    auto r = c.call("hello", {}, 5000ms);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.err().message, Catch::Contains("exceeds the line limit of " + std::to_string(agent::k_max_line) + " bytes"));
    CHECK(c.broken());
}

TEST_CASE("client: a connect after a failed one starts afresh (an agent that came back is served)") {
    std::uint16_t port = 0;
    {
        fake_agent gone(echo_ok);  // a port that was just free
        port = gone.port();
    }
    std::optional<fake_agent> back;  // outlives the client (its thread ends when the client has gone)
    agent::client c;
    auto first = c.connect("127.0.0.1", port, 1000ms);
    REQUIRE_FALSE(first.ok());
    CHECK(c.broken());
    back.emplace(echo_ok, port);
    REQUIRE(c.connect("127.0.0.1", port, 1000ms).ok());
    CHECK_FALSE(c.broken());
    auto r = c.call("hello", {}, 1000ms);
    INFO((r.ok() ? std::string() : r.err().message));
    REQUIRE(r.ok());
    CHECK((*r)["answer"] == 42);
}
