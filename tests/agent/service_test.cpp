// The agent protocol served over the reference endpoint, without sockets: two
// services (a DUT and its peer) wired frame to frame in virtual time.
#include <functional>
#include <catch2/catch.hpp>

#include <algorithm>

#include "agent/service.h"
#include "sim/drivers.h"

using namespace mrct;
using agent::json;

namespace {

struct rig {
    sim::scheduler s;
    sim::virtual_driver drv{s};
    std::unique_ptr<agent::service> a, b;
    agent::session sa, sb;
    std::uint64_t id = 1;

    explicit rig(std::string token = "", std::function<void(agent::service_options&)> limits = {}) {
        agent::service_options oa, ob;
        if (limits) limits(oa);
        oa.self.ip = {10, 0, 0, 1};
        ob.self.ip = {10, 0, 0, 2};
        oa.token = ob.token = token;
        // Frames cross after 2 us, each way.
        a = std::make_unique<agent::service>(s, oa, [this](core::bytes_view f) {
            core::byte_buffer c(f.begin(), f.end());
            s.after(std::chrono::microseconds(2), [this, c] { b->receive(c); });
        });
        b = std::make_unique<agent::service>(s, ob, [this](core::bytes_view f) {
            core::byte_buffer c(f.begin(), f.end());
            s.after(std::chrono::microseconds(2), [this, c] { a->receive(c); });
        });
    }
    json call(agent::service& svc, agent::session& ss, std::string op, json args = json::object()) {
        args["id"] = id++;
        args["op"] = op;
        return svc.handle(args, ss);
    }
    json A(std::string op, json args = json::object()) { return call(*a, sa, op, args); }
    json B(std::string op, json args = json::object()) { return call(*b, sb, op, args); }
};

std::string code_of(const json& r) { return r["ok"] == false ? r["error"]["code"].get<std::string>() : "ok"; }

}  // namespace

TEST_CASE("agent: hello first; then a WRITE end to end, polled and read back") {
    rig r;
    CHECK(code_of(r.A("listen")) == "unauthorized");
    auto h = r.A("hello", {{"version_major", 1}, {"version_minor", 0}});
    REQUIRE(h["ok"] == true);
    CHECK(h["name"] == "mrct-refnic");
    CHECK(h["bug"] == "none");
    CHECK(h["address"] == "10.0.0.1");
    REQUIRE(r.B("hello", {{"version_major", 1}})["ok"] == true);

    REQUIRE(r.A("reset", {{"seed", 5}})["ok"] == true);
    REQUIRE(r.A("configure", {{"params", {{"num_paths", "2"}}}})["ok"] == true);
    REQUIRE(r.A("listen")["ok"] == true);
    auto c = r.B("connect", {{"peer", "10.0.0.1"}});
    REQUIRE(c["ok"] == true);
    r.drv.run_until(r.s.now() + std::chrono::milliseconds(1));
    const auto bconn = c["conn"].get<std::uint32_t>();
    CHECK(r.B("status", {{"conn", bconn}})["established"] == true);
    auto acc = r.A("accepted");
    REQUIRE(acc["conns"].size() == 1);

    auto mr = r.A("register_mr", {{"length", 65536}});
    REQUIRE(mr["ok"] == true);
    core::byte_buffer data(10000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 7);
    auto w = r.B("post_write", {{"conn", bconn}, {"stream", 1}, {"data", agent::base64_encode(data)},
                                {"remote_va", mr["va"].get<std::uint64_t>() + 100}, {"rkey", mr["rkey"]}, {"wr_id", 42}});
    REQUIRE(w["ok"] == true);
    r.drv.run_until(r.s.now() + std::chrono::milliseconds(2));
    auto p = r.B("poll");
    REQUIRE(p["completions"].size() == 1);
    CHECK(p["completions"][0]["wr_id"] == 42);
    CHECK(p["completions"][0]["kind"] == "write");
    CHECK(p["completions"][0]["status"] == "success");
    CHECK(p["completions"][0]["time_ns"].get<std::int64_t>() <= p["now_ns"].get<std::int64_t>());
    auto m = r.A("read_mem", {{"rkey", mr["rkey"]}, {"offset", 100}, {"length", data.size()}});
    REQUIRE(m["ok"] == true);
    CHECK(*agent::base64_decode(m["data"].get<std::string>()) == data);
    auto k = r.A("counters");
    CHECK(k["counters"]["data_received"].get<std::uint64_t>() >= 3);
    CHECK(k["counters"].contains("drop.bad_icrc"));
    CHECK(r.B("close", {{"conn", bconn}})["ok"] == true);
}

TEST_CASE("agent: errors name what is wrong") {
    rig r("tok");
    CHECK(code_of(r.A("hello", {{"version_major", 1}})) == "unauthorized");               // token missing
    CHECK(code_of(r.A("hello", {{"version_major", 1}, {"token", "bad"}})) == "unauthorized");
    CHECK(code_of(r.A("hello", {{"version_major", 2}, {"token", "tok"}})) == "version_mismatch");
    CHECK(code_of(r.A("hello", {{"token", "tok"}})) == "bad_request");                   // no version
    REQUIRE(code_of(r.A("hello", {{"version_major", 1}, {"token", "tok"}})) == "ok");
    CHECK(code_of(r.A("frobnicate")) == "unknown_op");
    CHECK(code_of(r.a->handle(json::array(), r.sa)) == "bad_request");
    CHECK(code_of(r.a->handle(json{{"op", "listen"}}, r.sa)) == "bad_request");          // no id
    CHECK(code_of(r.A("configure", {{"params", {{"no_such", "1"}}}})) == "invalid_param");
    CHECK(code_of(r.A("configure", {{"params", {{"rto_min", "soon"}}}})) == "invalid_param");
    CHECK(code_of(r.A("configure", {{"params", {{"bug", "frozen-rnr"}}}})) == "invalid_param");
    CHECK(code_of(r.A("configure", {{"params", "x"}})) == "bad_request");
    CHECK(code_of(r.A("connect", {{"peer", "10.0.0"}})) == "bad_request");
    CHECK(code_of(r.A("register_mr", {{"length", -1}})) == "bad_request");
    // An unknown connection or R_Key is not_found in every operation (one rule,
    // docs/agent-protocol.md); failed is for what the DUT refuses.
    CHECK(code_of(r.A("post_recv", {{"conn", 99}, {"tag", 1}, {"rkey", 1}, {"offset", 0}, {"length", 10}, {"wr_id", 1}})) ==
          "not_found");
    CHECK(code_of(r.A("status", {{"conn", 99}})) == "not_found");
    CHECK(code_of(r.A("close", {{"conn", 99}})) == "not_found");
    CHECK(code_of(r.A("post_write", {{"conn", 99}, {"stream", 0}, {"data", "AAAA"}, {"remote_va", 0}, {"rkey", 1},
                                     {"wr_id", 1}})) == "not_found");
    CHECK(code_of(r.A("post_send", {{"conn", 99}, {"stream", 0}, {"tag", 1}, {"data", "AAAA"}, {"wr_id", 1}})) == "not_found");
    const auto conn = r.A("connect", {{"peer", "10.0.0.9"}});
    REQUIRE(code_of(conn) == "ok");
    CHECK(code_of(r.A("post_recv", {{"conn", conn["conn"]}, {"tag", 1}, {"rkey", 4242}, {"offset", 0}, {"length", 10},
                                    {"wr_id", 1}})) == "not_found");  // its region unknown
    CHECK(code_of(r.A("configure", {{"params", json::object()}})) == "bad_state");  // the endpoint started above
    CHECK(code_of(r.A("read_mem", {{"rkey", 77}, {"offset", 0}, {"length", 1}})) == "not_found");
    auto mr = r.A("register_mr", {{"length", 16}});
    CHECK(code_of(r.A("read_mem", {{"rkey", mr["rkey"]}, {"offset", 8}, {"length", 9}})) == "out_of_range");
    CHECK(code_of(r.A("post_write", {{"conn", 1}, {"stream", 0}, {"data", "***"}, {"remote_va", 0}, {"rkey", 1},
                                     {"wr_id", 1}})) == "bad_request");
    // reset: configure is allowed again.
    REQUIRE(code_of(r.A("reset")) == "ok");
    CHECK(code_of(r.A("configure", {{"params", {{"rto_min", "50us"}}}})) == "ok");
}

TEST_CASE("agent 1.1: message bytes as binary attachments, both ways") {
    rig r;
    auto h = r.A("hello", {{"version_major", 1}});
    REQUIRE(h["ok"] == true);
    CHECK(std::find(h["capabilities"].begin(), h["capabilities"].end(), agent::k_binary_data) != h["capabilities"].end());
    REQUIRE(r.B("hello", {{"version_major", 1}})["ok"] == true);
    REQUIRE(r.A("listen")["ok"] == true);
    auto c = r.B("connect", {{"peer", "10.0.0.1"}});
    r.drv.run_until(r.s.now() + std::chrono::milliseconds(1));
    const auto bconn = c["conn"].get<std::uint32_t>();
    auto mr = r.A("register_mr", {{"length", 65536}});
    core::byte_buffer data(9000);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(i * 13 + 5);

    // post_write with "data_bytes": the server put the bytes in the session.
    r.sb.in_data = data;
    auto w = r.B("post_write", {{"conn", bconn}, {"stream", 0}, {"data_bytes", data.size()},
                                {"remote_va", mr["va"].get<std::uint64_t>()}, {"rkey", mr["rkey"]}, {"wr_id", 7}});
    REQUIRE(w["ok"] == true);
    r.drv.run_until(r.s.now() + std::chrono::milliseconds(2));
    auto p = r.B("poll");
    REQUIRE(p["completions"].size() == 1);
    CHECK(p["completions"][0]["status"] == "success");

    // read_mem with "binary": the bytes go to the session, the line says how many.
    auto m = r.A("read_mem", {{"rkey", mr["rkey"]}, {"offset", 0}, {"length", data.size()}, {"binary", true}});
    REQUIRE(m["ok"] == true);
    CHECK(m["data_bytes"] == data.size());
    CHECK_FALSE(m.contains("data"));
    REQUIRE(r.sa.out_data);
    CHECK(*r.sa.out_data == data);
    r.sa.out_data.reset();
    // Without "binary": base64 as in 1.0.
    auto m0 = r.A("read_mem", {{"rkey", mr["rkey"]}, {"offset", 0}, {"length", 4}});
    CHECK(*agent::base64_decode(m0["data"].get<std::string>()) == core::byte_buffer(data.begin(), data.begin() + 4));
    CHECK_FALSE(r.sa.out_data);

    // Errors: bytes announced but missing, both forms at once, a non-boolean "binary".
    CHECK(code_of(r.B("post_send", {{"conn", bconn}, {"stream", 0}, {"tag", 1}, {"data_bytes", 4}, {"wr_id", 8}})) ==
          "bad_request");
    r.sb.in_data = data;
    CHECK(code_of(r.B("post_send", {{"conn", bconn}, {"stream", 0}, {"tag", 1}, {"data_bytes", data.size()},
                                    {"data", "AAAA"}, {"wr_id", 9}})) == "bad_request");
    CHECK(code_of(r.A("read_mem", {{"rkey", mr["rkey"]}, {"offset", 0}, {"length", 4}, {"binary", "yes"}})) ==
          "bad_request");
}

TEST_CASE("agent: the clock hook runs before each use of the endpoint") {
    // A real-time host syncs its scheduler there: after decoding a request,
    // before the post, so a post is stamped when it is made.
    sim::scheduler s;
    int ticks = 0;
    agent::service_options o;
    o.self.ip = {10, 0, 0, 1};
    o.clock = [&] { ++ticks; };
    agent::service svc(s, o, [](core::bytes_view) {});
    agent::session ss;
    REQUIRE(svc.handle({{"id", 1}, {"op", "hello"}, {"version_major", 1}}, ss)["ok"] == true);
    CHECK(ticks == 0);  // hello does not touch the endpoint
    REQUIRE(svc.handle({{"id", 2}, {"op", "listen"}}, ss)["ok"] == true);
    CHECK(ticks == 1);
    REQUIRE(svc.handle({{"id", 3}, {"op", "poll"}}, ss)["ok"] == true);
    CHECK(ticks == 2);
}

TEST_CASE("agent: a client cannot make it allocate without bound or send to any address") {
    rig r("", [](agent::service_options& o) {
        o.max_mr_bytes = 1u << 20;
        o.max_total_mr_bytes = 3u << 20;
        o.peer_rule = "--peers 10.0.0.0/24";
        o.peer_allowed = [](const std::string& ip) { return ip.rfind("10.0.0.", 0) == 0; };
    });
    REQUIRE(code_of(r.A("hello", {{"version_major", 1}})) == "ok");
    auto big = r.A("register_mr", {{"length", (1u << 20) + 1}});
    CHECK(code_of(big) == "failed");
    CHECK_THAT(big["error"]["message"].get<std::string>(), Catch::Contains("beyond this agent's limit of 1048576 per region"));
    for (int i = 0; i < 3; ++i) CHECK(code_of(r.A("register_mr", {{"length", 1u << 20}})) == "ok");
    auto more = r.A("register_mr", {{"length", 1}});
    CHECK(code_of(more) == "failed");
    CHECK_THAT(more["error"]["message"].get<std::string>(), Catch::Contains("limit of 3145728 in all (3145728 registered"));
    REQUIRE(code_of(r.A("reset")) == "ok");  // regions go with the endpoint
    CHECK(code_of(r.A("register_mr", {{"length", 1u << 20}})) == "ok");
    auto far = r.A("connect", {{"peer", "192.0.2.7"}});
    CHECK(code_of(far) == "failed");
    CHECK_THAT(far["error"]["message"].get<std::string>(), Catch::Contains("not a wire peer this agent may send to (--peers 10.0.0.0/24)"));
    CHECK(code_of(r.A("connect", {{"peer", "10.0.0.2"}})) == "ok");
}

// An agent without the device's completion timestamps stamps each completion
// when a poll reaps it, and says how much earlier it may have happened: the
// time since its previous poll (time_err_ns; docs/agent-protocol.md).
TEST_CASE("agent: reap stamps: time_ns is the poll's time, time_err_ns the time since the previous poll") {
    auto poll_after_write = [](bool reap) {
        rig r("", [reap](agent::service_options& o) { o.reap_stamps = reap; });
        REQUIRE(r.A("hello", {{"version_major", 1}})["ok"] == true);
        REQUIRE(r.B("hello", {{"version_major", 1}})["ok"] == true);
        REQUIRE(r.A("reset")["ok"] == true);
        REQUIRE(r.B("reset")["ok"] == true);
        REQUIRE(r.A("listen")["ok"] == true);
        REQUIRE(r.B("connect", {{"peer", "10.0.0.1"}})["ok"] == true);
        r.drv.run_until(r.s.now() + std::chrono::milliseconds(1));
        const auto aconn = r.A("accepted")["conns"][0].get<std::uint32_t>();
        auto mr = r.B("register_mr", {{"length", 4096}});
        REQUIRE(r.A("poll")["completions"].empty());  // the previous poll: 1 ms on
        REQUIRE(r.A("post_write", {{"conn", aconn}, {"stream", 0}, {"data", agent::base64_encode(core::byte_buffer(100, 7))},
                                   {"remote_va", mr["va"]}, {"rkey", mr["rkey"]}, {"wr_id", 1}})["ok"] == true);
        r.drv.run_until(r.s.now() + std::chrono::milliseconds(3));
        return r.A("poll");
    };
    const auto exact = poll_after_write(false);
    REQUIRE(exact["completions"].size() == 1);
    CHECK_FALSE(exact["completions"][0].contains("time_err_ns"));
    CHECK(exact["completions"][0]["time_ns"].get<std::int64_t>() < exact["now_ns"].get<std::int64_t>() - 2'000'000);
    const auto reaped = poll_after_write(true);
    REQUIRE(reaped["completions"].size() == 1);
    const auto& wc = reaped["completions"][0];
    CHECK(wc["time_ns"] == reaped["now_ns"]);
    CHECK(wc["time_err_ns"].get<std::int64_t>() == 3'000'000);  // since the poll before the post
    // It happened within that span: the exact stamp is in it.
    CHECK(wc["time_ns"].get<std::int64_t>() - wc["time_err_ns"].get<std::int64_t>() <=
          exact["completions"][0]["time_ns"].get<std::int64_t>());
}

TEST_CASE("agent: another implementation's agent (mrct-refnic --agent-as, D159): 1.0, no counters, no frame counts") {
    auto hello_and_counters = [](std::function<void(agent::service_options&)> as) {
        rig r("", std::move(as));
        auto h = r.A("hello", {{"version_major", 1}, {"version_minor", 1}});
        REQUIRE(h["ok"] == true);
        REQUIRE(r.A("reset")["ok"] == true);
        REQUIRE(r.A("listen")["ok"] == true);  // the endpoint, and its counters
        return std::make_pair(h, r.A("counters")["counters"]);
    };
    const auto [h, k] = hello_and_counters({});
    CHECK(h["version_minor"] == agent::k_version_minor);
    CHECK(k.contains("frames_in"));
    CHECK(k.contains("drop.bad_icrc"));
    const auto [h10, k10] = hello_and_counters([](agent::service_options& o) { o.version_minor = 0; });
    CHECK(h10["version_minor"] == 0);
    const auto [hn, none] = hello_and_counters([](agent::service_options& o) { o.report_counters = false; });
    CHECK(none.is_object());
    CHECK(none.empty());
    const auto [hf, no_frames] = hello_and_counters([](agent::service_options& o) { o.report_frame_counts = false; });
    CHECK_FALSE(no_frames.contains("frames_in"));
    CHECK_FALSE(no_frames.contains("frames_out"));
    CHECK(no_frames.contains("drop.bad_icrc"));
}
