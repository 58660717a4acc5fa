// Agent protocol: what a post's message bytes cost to carry, base64 in JSON
// (1.0) against a binary attachment (1.1), over TCP on loopback. Run on
// demand; record figures in docs/performance.md.
//
//   agent_bench [--repeat N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include <boost/asio/io_context.hpp>

#include "agent/client.h"
#include "agent/protocol.h"
#include "agent/server.h"

using namespace mrct;
using clk = std::chrono::steady_clock;

namespace {

double ms_since(clk::time_point t0) { return std::chrono::duration<double, std::milli>(clk::now() - t0).count(); }

}  // namespace

int main(int argc, char** argv) {
    int repeat = 10;
    for (int i = 1; i + 1 < argc; ++i)
        if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));

    // The agent's side does what mrct-refnic's does with the bytes: parse the
    // line, decode base64 (1.0) or take the attachment (1.1).
    boost::asio::io_context io;
    agent::server srv(io, [](const agent::json& req, agent::session& s) {
        std::size_t n = 0;
        if (req.contains("data")) n = agent::base64_decode(req["data"].get<std::string>())->size();
        else if (s.in_data) n = s.in_data->size();
        return agent::ok_response(req["id"].get<std::uint64_t>(), {{"got", n}});
    });
    if (!srv.listen("127.0.0.1", 0)) return 1;
    std::thread t([&] { io.run_for(std::chrono::minutes(10)); });

    agent::client c;
    if (!c.connect("127.0.0.1", srv.port(), std::chrono::seconds(2))) return 1;
    std::printf("| payload | 1.0 base64 in JSON, ms per post | 1.1 binary attachment, ms per post | ratio |\n|---|---|---|---|\n");
    for (std::size_t size : {std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{16} << 20}) {
        core::byte_buffer data(size);
        for (std::size_t i = 0; i < size; ++i) data[i] = static_cast<std::uint8_t>(i * 131 + (i >> 7));
        double b64 = 1e300, bin = 1e300;  // best of `repeat`: the cost, not the noise
        for (int k = 0; k < repeat; ++k) {
            auto t0 = clk::now();
            auto r = c.call("post_write", {{"data", agent::base64_encode(data)}}, std::chrono::seconds(10));
            b64 = std::min(b64, ms_since(t0));
            if (!r || (*r)["got"] != size) return 2;
            t0 = clk::now();
            r = c.call("post_write", agent::json::object(), std::chrono::seconds(10), core::bytes_view(data), nullptr);
            bin = std::min(bin, ms_since(t0));
            if (!r || (*r)["got"] != size) return 2;
        }
        std::printf("| %zu KiB | %.2f | %.2f | %.0fx |\n", size >> 10, b64, bin, b64 / bin);
    }
    srv.close();
    io.stop();
    t.join();
    return 0;
}
