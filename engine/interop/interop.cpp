#include "interop/interop.h"

#include <algorithm>
#include <array>
#include <thread>

#include "agent/client.h"
#include "agent/protocol.h"
#include "core/rng.h"

namespace mrct::interop {

using ojson = nlohmann::ordered_json;
using agent::json;

core::result<agent_spec> parse_agent(const std::string& text) {
    agent_spec s;
    std::string host, port;
    if (!text.empty() && text[0] == '[') {
        const auto close = text.find(']');
        if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':')
            return core::error{"agent '" + text + "': expected [IPV6]:PORT"};
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos) return core::error{"agent '" + text + "': expected HOST:PORT"};
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
    }
    if (host.empty() || port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) == 0 || std::stoul(port) > 65535)
        return core::error{"agent '" + text + "': expected HOST:PORT with a port in 1..65535"};
    s.host = host;
    s.port = static_cast<std::uint16_t>(std::stoul(port));
    return s;
}

namespace {

// One agent: a client and what hello said.
struct side {
    std::string name;  // "A" or "B"
    agent::client c;
    std::chrono::milliseconds timeout{2000};
    std::string address;
    bool binary = false;
    std::uint32_t conn = 0, rkey = 0;
    std::uint64_t va = 0;
    std::string fault;  // the first failed call

    core::result<json> call(const std::string& op, json args, std::optional<core::bytes_view> in = std::nullopt,
                            core::byte_buffer* out = nullptr) {
        auto r = (in || out) ? c.call(op, std::move(args), timeout, in, out) : c.call(op, std::move(args), timeout);
        if (!r) return core::error{"DUT " + name + ": " + op + ": " + r.err().message};
        return r;
    }
};

// A message posted on one side, and where its bytes land on the other.
struct message {
    std::uint64_t wr_id = 0;
    bool send = false;
    std::uint16_t stream = 0, tag = 0;
    std::uint64_t offset = 0;  // in the receiver's region
    core::byte_buffer data;
    bool late_recv = false;
    bool done = false, recv_done = false;
    std::string status;
};

core::byte_buffer pattern(std::uint64_t seed, std::uint64_t wr_id, std::size_t n) {
    core::rng r(seed, "interop/" + std::to_string(wr_id));
    core::byte_buffer b(n);
    for (std::size_t i = 0; i < n; i += 8) {
        const std::uint64_t v = r.next();
        for (std::size_t k = 0; k < 8 && i + k < n; ++k) b[i + k] = static_cast<std::uint8_t>(v >> (8 * k));
    }
    return b;
}

}  // namespace

core::result<ojson> run(const options& o) {
    std::array<side, 2> s;
    s[0].name = "A";
    s[1].name = "B";
    const std::array<agent_spec, 2> spec = {o.a, o.b};
    for (int i = 0; i < 2; ++i) {
        s[i].timeout = o.call_timeout;
        if (auto st = s[i].c.connect(spec[i].host, spec[i].port, o.call_timeout); !st)
            return core::error{"DUT " + s[i].name + " (" + spec[i].host + ":" + std::to_string(spec[i].port) + "): " + st.err().message};
        json h = {{"version_major", agent::k_version_major}, {"version_minor", agent::k_version_minor}};
        if (!spec[i].token.empty()) h["token"] = spec[i].token;
        auto r = s[i].call("hello", h);
        if (!r) return r.err();
        s[i].address = r->value("address", "");
        if (s[i].address.empty()) return core::error{"DUT " + s[i].name + ": hello gave no wire address"};
        if (r->contains("capabilities") && (*r)["capabilities"].is_array())
            for (const auto& c : (*r)["capabilities"])
                if (c == "binary_data") s[i].binary = true;
        if (auto r2 = s[i].call("reset", {{"seed", core::rng::sub_seed(o.seed, "dut", i)}}); !r2) return r2.err();
        json p = json::object();
        for (const auto& [k, v] : o.params) p[k] = v;
        if (!p.empty())
            if (auto r2 = s[i].call("configure", {{"params", p}}); !r2) return r2.err();
    }
    const auto& w = o.w;
    const std::uint64_t region = std::max<std::uint64_t>(
        4096, std::uint64_t{w.writes} * w.write_size + std::uint64_t{w.sends} * w.send_size);
    for (auto& x : s) {
        auto r = x.call("register_mr", {{"length", region}});
        if (!r) return r.err();
        x.rkey = (*r)["rkey"].get<std::uint32_t>();
        x.va = (*r)["va"].get<std::uint64_t>();
    }
    if (auto r = s[1].call("listen", json::object()); !r) return r.err();
    {
        auto r = s[0].call("connect", {{"peer", s[1].address}});
        if (!r) return r.err();
        s[0].conn = (*r)["conn"].get<std::uint32_t>();
    }
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    const auto deadline = t0 + std::chrono::nanoseconds(o.timeout_ns);
    // B's end of the connection, then both established.
    bool b_has = false;
    while (clock::now() < deadline) {
        if (!b_has) {
            auto r = s[1].call("accepted", json::object());
            if (!r) return r.err();
            if (r->contains("conns") && !(*r)["conns"].empty()) {
                s[1].conn = (*r)["conns"][0].get<std::uint32_t>();
                b_has = true;
            }
        }
        if (b_has) {
            auto ra = s[0].call("status", {{"conn", s[0].conn}});
            if (!ra) return ra.err();
            auto rb = s[1].call("status", {{"conn", s[1].conn}});
            if (!rb) return rb.err();
            if (ra->value("established", false) && rb->value("established", false)) break;
            if (ra->value("in_error", false)) return core::error{"DUT A: the connection to B failed to open"};
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    ojson out;
    out["a"] = {{"address", s[0].address}};
    out["b"] = {{"address", s[1].address}};
    const auto established_after = clock::now() - t0;
    if (clock::now() >= deadline) {
        out["complete"] = false;
        out["reason"] = "the connection from A to B did not open";
        return out;
    }
    // The workload: msgs[i] are what side i sends.
    std::array<std::vector<message>, 2> msgs;
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && !w.both_ways) break;
        std::uint64_t off = 0;
        std::uint64_t id = (i + 1) * 1'000'000ull;
        for (unsigned k = 0; k < w.writes; ++k) {
            message m;
            m.wr_id = ++id;
            m.stream = static_cast<std::uint16_t>(k % std::max(1u, w.streams));
            m.offset = off;
            m.data = pattern(o.seed, m.wr_id, w.write_size);
            off += w.write_size;
            msgs[i].push_back(std::move(m));
        }
        for (unsigned k = 0; k < w.sends; ++k) {
            message m;
            m.wr_id = ++id;
            m.send = true;
            m.tag = static_cast<std::uint16_t>(k % std::max(1u, w.tags));
            m.stream = static_cast<std::uint16_t>(k % std::max(1u, w.streams));
            m.offset = off;
            m.late_recv = w.rnr && m.tag + 1u == std::max(1u, w.tags);
            m.data = pattern(o.seed, m.wr_id, w.send_size);
            off += w.send_size;
            msgs[i].push_back(std::move(m));
        }
    }
    // Receives first (except the late tag's), then the posts.
    auto post_recv = [&](int to, const message& m) {
        return s[to].call("post_recv", {{"conn", s[to].conn},
                                        {"tag", m.tag},
                                        {"rkey", s[to].rkey},
                                        {"offset", m.offset},
                                        {"length", m.data.size()},
                                        {"wr_id", m.wr_id + 500'000}});
    };
    for (int i = 0; i < 2; ++i)
        for (const auto& m : msgs[i])
            if (m.send && !m.late_recv)
                if (auto r = post_recv(1 - i, m); !r) return r.err();
    for (int i = 0; i < 2; ++i)
        for (const auto& m : msgs[i]) {
            json a = {{"conn", s[i].conn}, {"stream", m.stream}, {"wr_id", m.wr_id}};
            if (m.send) a["tag"] = m.tag;
            else {
                a["remote_va"] = s[1 - i].va + m.offset;
                a["rkey"] = s[1 - i].rkey;
            }
            const std::string op = m.send ? "post_send" : "post_write";
            core::result<json> r = core::error{""};
            if (s[i].binary) r = s[i].call(op, a, core::bytes_view(m.data));
            else {
                a["data"] = agent::base64_encode(m.data);
                r = s[i].call(op, a);
            }
            if (!r) return r.err();
        }
    const auto posted_at = clock::now();
    bool late_posted = false;
    std::array<std::uint64_t, 2> failed{};
    std::array<std::string, 2> first_failure;
    auto find = [&](int i, std::uint64_t wr) -> message* {
        for (auto& m : msgs[i])
            if (m.wr_id == wr) return &m;
        return nullptr;
    };
    auto all_done = [&] {
        for (const auto& v : msgs)
            for (const auto& m : v)
                if (!m.done || (m.send && !m.recv_done)) return false;
        return true;
    };
    while (!all_done() && clock::now() < deadline) {
        if (!late_posted && clock::now() - posted_at >= std::chrono::nanoseconds(w.rnr_hold_ns)) {
            for (int i = 0; i < 2; ++i)
                for (const auto& m : msgs[i])
                    if (m.send && m.late_recv)
                        if (auto r = post_recv(1 - i, m); !r) return r.err();
            late_posted = true;
        }
        for (int i = 0; i < 2; ++i) {
            auto r = s[i].call("poll", json::object());
            if (!r) return r.err();
            for (const auto& c : (*r)["completions"]) {
                const auto wr = c["wr_id"].get<std::uint64_t>();
                const auto status = c["status"].get<std::string>();
                const auto kind = c["kind"].get<std::string>();
                message* m = nullptr;
                bool recv = kind == "recv" || kind == "recv_write_imm";
                if (recv) m = find(1 - i, wr - 500'000);
                else m = find(i, wr);
                if (!m) continue;  // not ours
                if (recv) m->recv_done = true;
                else m->done = true;
                if (status != "success") {
                    if (!failed[i]++)
                        first_failure[i] = kind + " wr_id " + std::to_string(wr) + ": " + status;
                    m->status = status;
                }
            }
        }
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    const double secs = std::chrono::duration<double>(clock::now() - posted_at).count();
    // Memory: every byte of every message that completed, on its receiver.
    std::array<std::uint64_t, 2> mismatched{}, checked{};
    std::array<std::string, 2> first_mismatch;
    for (int i = 0; i < 2; ++i)
        for (const auto& m : msgs[i]) {
            if (!m.done || !m.status.empty() || (m.send && !m.recv_done)) continue;
            json a = {{"rkey", s[1 - i].rkey}, {"offset", m.offset}, {"length", m.data.size()}};
            core::byte_buffer got;
            if (s[1 - i].binary) {
                a["binary"] = true;
                if (auto r = s[1 - i].call("read_mem", a, std::nullopt, &got); !r) return r.err();
            } else {
                auto r = s[1 - i].call("read_mem", a);
                if (!r) return r.err();
                auto d = agent::base64_decode((*r)["data"].get<std::string>());
                if (!d) return core::error{"DUT " + s[1 - i].name + ": read_mem: " + d.err().message};
                got = std::move(*d);
            }
            ++checked[i];
            if (got != m.data) {
                if (!mismatched[i]++) {
                    std::size_t k = 0;
                    while (k < got.size() && got[k] == m.data[k]) ++k;
                    first_mismatch[i] = std::string(m.send ? "SEND" : "WRITE") + " wr_id " + std::to_string(m.wr_id) +
                                        " (stream " + std::to_string(m.stream) + (m.send ? ", tag " + std::to_string(m.tag) : "") +
                                        ", " + std::to_string(m.data.size()) + " bytes): first differing byte at offset " +
                                        std::to_string(k);
                }
            }
        }
    bool complete = true;
    std::string reason;
    for (int i = 0; i < 2; ++i) {
        std::uint64_t posted = msgs[i].size(), done = 0, recvd = 0, pending_writes = 0, pending_sends = 0;
        std::uint64_t bytes = 0;
        for (const auto& m : msgs[i]) {
            done += m.done;
            recvd += m.send && m.recv_done;
            if (!m.done) (m.send ? pending_sends : pending_writes)++;
            if (m.done && m.status.empty()) bytes += m.data.size();
        }
        auto& j = out[i ? "b" : "a"];
        j["messages_posted"] = posted;
        j["completed"] = done;
        j["received_by_the_other"] = recvd;
        j["failed"] = failed[i];
        if (!first_failure[i].empty()) j["first_failure"] = first_failure[i];
        j["memory_checked"] = checked[i];
        j["memory_mismatched"] = mismatched[i];
        if (!first_mismatch[i].empty()) j["first_mismatch"] = first_mismatch[i];
        j["goodput_gbps"] = secs > 0 ? static_cast<double>(bytes) * 8 / secs / 1e9 : 0.0;
        const std::string who = "DUT " + s[i].name;
        if (done < posted && reason.empty())
            reason = who + ": " + std::to_string(posted - done) + " of " + std::to_string(posted) + " messages never completed (" +
                     std::to_string(pending_writes) + " WRITEs, " + std::to_string(pending_sends) + " SENDs)";
        if (failed[i] && reason.empty()) reason = who + ": " + first_failure[i];
        if (mismatched[i] && reason.empty())
            reason = who + ": " + std::to_string(mismatched[i]) + " messages arrived with other bytes than sent, the first " +
                     first_mismatch[i];
        complete = complete && done == posted && !failed[i] && !mismatched[i];
    }
    out["complete"] = complete;
    if (!complete) out["reason"] = reason;
    out["established_ms"] = std::chrono::duration<double, std::milli>(established_after).count();
    out["transfer_s"] = secs;
    // Close A's end: CLOSE once everything is acknowledged (MR-CONN-3).
    (void)s[0].call("close", {{"conn", s[0].conn}});
    return out;
}

}  // namespace mrct::interop
