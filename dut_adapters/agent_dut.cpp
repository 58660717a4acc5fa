// agent+udp and agent+pcap: a DUT behind an agent (docs/agent-protocol.md),
// frames on a real wire, in real time.
#include <algorithm>
#include <chrono>
#include <thread>

#include "agent/address.h"
#include "agent/client.h"
#include "core/units.h"
#include "dut_adapters/dut.h"
#include "netio/port.h"

namespace mrct::dut {

namespace {

using agent::json;

class agent_dut final : public dut {
public:
    explicit agent_dut(agent_options o) : o_(std::move(o)) {}

    core::status open() {
        // An agent that is restarting refuses for a moment, or takes a
        // connection and then drops it (a dying process's listening socket
        // completes handshakes until its files are closed, and those
        // connections are then reset): tried again with backoff for up to
        // `reconnect`. An answer that refuses (a wrong token or version) and
        // a hello left unanswered within the timeout are not retried.
        const auto until = std::chrono::steady_clock::now() + o_.reconnect;
        auto pause = std::chrono::milliseconds(50);
        json h = {{"version_major", agent::k_version_major}, {"version_minor", agent::k_version_minor}};
        if (!o_.token.empty()) h["token"] = o_.token;
        core::result<json> r = core::error{""};
        for (unsigned tries = 1;; ++tries) {
            auto st = c_.connect(o_.host, o_.port, o_.timeout);
            if (st) {
                r = c_.call("hello", h, o_.timeout);
                if (r || !c_.broken() || c_.timed_out()) break;
                st = r.err();  // the connection dropped before the answer
            }
            if (std::chrono::steady_clock::now() + pause > until)
                return tries == 1 ? st
                                  : core::status(core::error{st.err().message + " (" + std::to_string(tries) + " tries over " +
                                                             std::to_string(o_.reconnect.count()) + " ms)"});
            std::this_thread::sleep_for(pause);
            pause = std::min(pause * 2, std::chrono::milliseconds(500));
        }
        if (!r) return r.err();
        try {
            info_.name = r->value("name", "agent");
            info_.version = std::to_string(r->value("version_major", 0)) + "." + std::to_string(r->value("version_minor", 0));
            info_.bug = r->value("bug", "none");
            if (r->contains("capabilities"))
                for (const auto& c : (*r)["capabilities"]) {
                    // raw_frames and wire_headers belong to the engine's side of the wire, not the agent's.
                    const auto cap = c.get<std::string>();
                    if (cap != "raw_frames" && cap != "wire_headers") info_.capabilities.push_back(cap);
                    if (cap == agent::k_binary_data) binary_ = true;
                }
        } catch (const std::exception& e) {
            return core::error{std::string("agent hello: malformed response: ") + e.what()};
        }
        // What the engine's side of the wire can do.
        if (o_.wire == "pcap" || o_.wire == "dpdk") {
            info_.capabilities.push_back("raw_frames");
            info_.capabilities.push_back("wire_headers");
        }
        return core::ok_status();
    }

    info hello() const override { return info_; }
    bool realtime() const override { return true; }
    void attach(boost::asio::io_context& io, std::function<core::nanos()> now, waiter wait) override {
        io_ = &io;
        now_ = std::move(now);
        c_.use(io, std::move(wait));
    }
    endpoint::address address() const override { return agent::address_of({0x02, 0, 0, 0, 0, 0x01}, o_.dut_ip); }
    endpoint::address peer_address() const override { return agent::address_of({0x02, 0, 0, 0, 0, 0x02}, o_.local_ip); }
    std::optional<endpoint::address> further_peer_address(unsigned k) const override {
        if (k == 0 || k > o_.more_local.size()) return std::nullopt;
        return agent::address_of({0x02, 0, 0, 0, 0, static_cast<std::uint8_t>(0x02 + k)}, o_.more_local[k - 1]);
    }
    std::string fault() const override { return fault_; }

    core::status configure(const std::map<std::string, std::string>& params) override {
        params_ = params;
        params_.erase("bug");
        return core::ok_status();
    }

    core::status start(sim::scheduler&, endpoint::address, std::uint64_t seed, frame_tx tx) override {
        if (!io_) return core::error{"agent DUT started without a real-time driver"};
        if (auto r = call("reset", {{"seed", seed}}); !r) return r.err();
        json p = json::object();
        for (const auto& [k, v] : params_) p[k] = v;
        if (auto r = call("configure", {{"params", p}}); !r) return r.err();
        core::result<std::unique_ptr<netio::port>> port = core::error{"no wire"};
        if (o_.wire == "udp") {
            netio::udp_options u;
            u.local = o_.local_ip;
            u.also_local = o_.more_local;
            u.remote = o_.dut_ip;
            if (o_.tx_packet) {
                if (o_.iface.empty()) {
                    auto i = netio::interface_of(o_.local_ip);
                    if (!i) return core::error{"tx=packet: " + i.err().message + "; pass iface="};
                    u.packet_iface = *i;
                } else {
                    u.packet_iface = o_.iface;
                }
                u.packet_dst_mac = o_.dut_mac;
                if (!u.packet_dst_mac && o_.dut_ip.version == 6)
                    return core::error{"agent+udp tx=packet over IPv6: pass dut_mac= (the neighbour table is read for IPv4 only)"};
                if (!u.packet_dst_mac) u.packet_dst_mac = netio::resolve_neighbour(o_.dut_ip.v4);
                if (!u.packet_dst_mac)
                    return core::error{"tx=packet: no neighbour entry for " + netio::ip_text(o_.dut_ip) + "; pass dut_mac="};
            }
            port = netio::make_udp_port(*io_, u);
        } else if (o_.wire == "dpdk") {
            netio::dpdk_options u;
            u.eal_args = o_.eal;
            u.port = o_.dpdk_port;
            u.local = o_.local_ip;
            u.also_local = o_.more_local;
            u.remote = o_.dut_ip;
            u.remote_mac = o_.dut_mac;
            u.busy_poll = o_.busy_poll;
            port = netio::make_dpdk_port(*io_, u);
        } else {
            netio::pcap_options u;
            u.iface = o_.iface;
            u.local = o_.local_ip;
            u.also_local = o_.more_local;
            u.remote = o_.dut_ip;
            u.remote_mac = o_.dut_mac;
            port = netio::make_pcap_port(*io_, u);
        }
        if (!port) return core::error{"wire: " + port.err().message};
        port_ = std::move(*port);
        port_->start([tx = std::move(tx)](core::bytes_view f, std::int64_t wire_ns) { tx(f, netio::wire_age(wire_ns)); });
        return core::ok_status();
    }

    void receive(core::bytes_view frame) override {
        if (!port_) return;
        if (auto st = port_->send(frame); !st && fault_.empty()) fault_ = "wire: " + st.err().message;
    }

    void listen() override { (void)call("listen", {}); }
    std::uint32_t connect(endpoint::address peer) override {
        auto r = call("connect", {{"peer", netio::ip_text(agent::ip_of(peer))}});
        return r ? get<std::uint32_t>(*r, "conn") : 0;
    }
    bool established(std::uint32_t c) const override { return status(c, "established"); }
    bool in_error(std::uint32_t c) const override { return status(c, "in_error"); }
    std::vector<std::uint32_t> accepted() const override {
        auto r = call("accepted", {});
        if (!r) return {};
        return get<std::vector<std::uint32_t>>(*r, "conns");
    }
    core::status close(std::uint32_t c) override { return st(call("close", {{"conn", c}})); }

    std::uint32_t register_mr(std::size_t len) override {
        auto r = call("register_mr", {{"length", len}});
        if (!r) return 0;
        const auto rkey = get<std::uint32_t>(*r, "rkey");
        va_[rkey] = get<std::uint64_t>(*r, "va");
        return rkey;
    }
    std::uint64_t mr_va(std::uint32_t rkey) const override {
        auto it = va_.find(rkey);
        return it == va_.end() ? 0 : it->second;
    }
    core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t off, std::uint32_t len,
                           std::uint64_t wr_id) override {
        return st(call("post_recv",
                       {{"conn", conn}, {"tag", tag}, {"rkey", rkey}, {"offset", off}, {"length", len}, {"wr_id", wr_id}}));
    }
    core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t va,
                            std::uint32_t rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        json a = {{"conn", conn}, {"stream", stream}, {"remote_va", va}, {"rkey", rkey}, {"wr_id", wr_id}};
        if (imm) a["imm"] = *imm;
        return st(with_data("post_write", std::move(a), data));
    }
    core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                           std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        json a = {{"conn", conn}, {"stream", stream}, {"tag", tag}, {"wr_id", wr_id}};
        if (imm) a["imm"] = *imm;
        return st(with_data("post_send", std::move(a), data));
    }

    std::vector<endpoint::completion> poll() override {
        auto r = call("poll", {});
        if (!r) return {};
        // Completion times: the agent's clock, mapped onto the engine's by age
        // (agent now - completion time) at the moment the response arrived.
        // The answer spent part of the poll's round trip in flight: each time
        // may be late by up to that round trip (time_err).
        const core::nanos here = now_ ? now_() : core::nanos{0};
        const core::nanos rtt = last_rtt_;
        polls_.push_back({here - rtt, rtt});
        std::vector<endpoint::completion> out;
        try {
            const auto agent_now = (*r)["now_ns"].get<std::int64_t>();
            for (const auto& j : (*r)["completions"]) {
                endpoint::completion wc;
                wc.conn = j["conn"].get<std::uint32_t>();
                wc.wr_id = j["wr_id"].get<std::uint64_t>();
                const auto kind = endpoint::wc_kind_of(j["kind"].get<std::string>());
                if (!kind) throw std::runtime_error("unknown completion kind '" + j["kind"].get<std::string>() + "'");
                wc.kind = *kind;
                const auto status = endpoint::wc_status_of(j["status"].get<std::string>());
                if (!status) throw std::runtime_error("unknown completion status '" + j["status"].get<std::string>() + "'");
                wc.status = *status;
                wc.stream = j["stream"].get<std::uint16_t>();
                wc.tag = j["tag"].get<std::uint16_t>();
                wc.stream_seq = j["stream_seq"].get<std::uint32_t>();
                wc.length = j["length"].get<std::uint32_t>();
                if (j.contains("imm")) wc.imm = j["imm"].get<std::uint32_t>();
                const auto age = std::max<std::int64_t>(0, agent_now - j["time_ns"].get<std::int64_t>());
                wc.time = std::max(core::nanos{0}, here - core::nanos{age});
                // Late by up to the answer's flight, and by what the agent
                // says of its own stamp (time_err_ns: it may have happened
                // that much earlier, e.g. stamped when reaped).
                std::uint64_t own = 0;
                if (j.contains("time_err_ns")) {
                    if (!j["time_err_ns"].is_number_unsigned())
                        throw std::runtime_error("a completion's time_err_ns is not an unsigned integer: " +
                                                 j["time_err_ns"].dump().substr(0, 40));
                    own = j["time_err_ns"].get<std::uint64_t>();
                }
                wc.time_err = rtt + core::nanos{static_cast<std::int64_t>(std::min<std::uint64_t>(own, 1ull << 62))};
                out.push_back(wc);
            }
        } catch (const std::exception& e) {
            if (fault_.empty()) fault_ = std::string("agent poll: malformed response: ") + e.what();
        }
        return out;
    }

    core::result<core::byte_buffer> read_mem(std::uint32_t rkey, std::uint64_t off, std::size_t len) override {
        json a = {{"rkey", rkey}, {"offset", off}, {"length", len}};
        core::byte_buffer b;
        if (binary_) {  // 1.1: the bytes follow the response line
            a["binary"] = true;
            if (auto r = call("read_mem", std::move(a), std::nullopt, &b); !r) return r.err();
        } else {
            auto r = call("read_mem", std::move(a));
            if (!r) return r.err();
            if (!r->contains("data") || !(*r)["data"].is_string()) return core::error{"agent read_mem: no 'data'"};
            auto d = agent::base64_decode((*r)["data"].get<std::string>());
            if (!d) return core::error{"agent read_mem: " + d.err().message};
            b = std::move(*d);
        }
        if (b.size() != len) return core::error{"agent read_mem: " + std::to_string(b.size()) + " bytes, asked " + std::to_string(len)};
        return b;
    }

    std::map<std::string, std::uint64_t> counters() const override {
        std::map<std::string, std::uint64_t> m;
        auto r = call("counters", {});
        if (!r) return m;
        if (r->contains("counters") && (*r)["counters"].is_object())
            for (const auto& [k, v] : (*r)["counters"].items())
                if (v.is_number_unsigned()) m[k] = v.get<std::uint64_t>();
        return m;
    }

private:
    // Every call is bounded by the timeout; the first failure becomes the fault.
    // (now_ is the runner's clock; it syncs the real-time driver.)
    core::result<json> call(const std::string& op, json args, std::optional<core::bytes_view> in = std::nullopt,
                            core::byte_buffer* out = nullptr) const {
        const core::nanos sent = now_ ? now_() : core::nanos{0};
        auto r = c_.call(op, std::move(args), o_.timeout, in, out);
        // The call blocked the driver thread: bring the case's clock up to the
        // wall clock, so that what is scheduled next is timed from now.
        if (now_) {
            last_rtt_ = now_() - sent;
            rtts_.push_back(last_rtt_);
            if (op != "poll") others_.push_back({sent, last_rtt_});
        }
        if (!r && fault_.empty()) {
            fault_ = r.err().message;
            if (now_ && c_.timed_out()) unanswered_ = unanswered{sent, last_rtt_};
            refused_ = c_.error_code() == agent::code::failed;
        }
        return r;
    }
    // Message bytes as a binary attachment when the agent takes them (1.1),
    // else as base64 in "data".
    core::result<json> with_data(const std::string& op, json a, core::bytes_view data) const {
        if (binary_) return call(op, std::move(a), data);
        a["data"] = agent::base64_encode(data);
        return call(op, std::move(a));
    }
    static core::status st(const core::result<json>& r) { return r ? core::ok_status() : core::status(r.err()); }
    template <class T>
    T get(const json& j, const char* k) const {
        try {
            return j.at(k).get<T>();
        } catch (const std::exception& e) {
            if (fault_.empty()) fault_ = std::string("agent: malformed response, field '") + k + "': " + e.what();
            return T{};
        }
    }
    bool status(std::uint32_t c, const char* field) const {
        auto r = call("status", {{"conn", c}});
        return r && r->contains(field) && (*r)[field].is_boolean() && (*r)[field].get<bool>();
    }

public:
    call_times agent_call_times() const override {
        call_times t;
        t.calls = rtts_.size();
        t.polls = polls_;
        t.others = others_;
        for (const auto& [_, rtt] : polls_) t.poll_max = std::max(t.poll_max, rtt);
        if (rtts_.empty()) return t;
        auto v = rtts_;
        t.max = *std::max_element(v.begin(), v.end());
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        t.median = v[v.size() / 2];
        return t;
    }
    void flush_wire() override {
        if (port_) port_->flush_tx();
    }
    bool rx_stamped() const override { return port_ ? port_->rx_stamped() : o_.wire != "dpdk"; }
    bool busy_poll() const override { return o_.wire == "dpdk" && o_.busy_poll; }
    bool shares_host() const override { return o_.shares_host; }
    int host_pid() const override { return o_.shares_host ? o_.pid : 0; }
    core::nanos declared_wire_rtt() const override { return o_.wire_rtt; }
    bool declared_in_order() const override { return o_.in_order; }
    core::nanos quickest_answer(core::nanos in_case) override { return note_quickest(*o_.quickest_answer, in_case); }
    std::uint64_t frames_lost() const override { return port_ ? port_->stats().lost_in : 0; }
    netio::if_drops interface_drops() const override { return port_ ? port_->interface_drops() : netio::if_drops{}; }
    std::optional<unanswered> unanswered_call() const override { return unanswered_; }
    bool refused_call() const override { return refused_; }

private:
    agent_options o_;
    mutable agent::client c_;
    mutable std::vector<core::nanos> rtts_;  // every call's round trip, for the case's timing figures
    mutable core::nanos last_rtt_{0};  // the latest call's, for poll()
    std::vector<std::pair<core::nanos, core::nanos>> polls_;  // (sent, round trip) of each poll
    mutable std::vector<std::pair<core::nanos, core::nanos>> others_;  // (sent, round trip) of every other call
    info info_;
    boost::asio::io_context* io_ = nullptr;
    std::function<core::nanos()> now_;
    std::map<std::string, std::string> params_;
    std::unique_ptr<netio::port> port_;
    std::map<std::uint32_t, std::uint64_t> va_;
    mutable std::string fault_;
    mutable std::optional<unanswered> unanswered_;  // the call that timed out, where that was the fault
    mutable bool refused_ = false;                   // the fault is a call the DUT refused (code `failed`)
    bool binary_ = false;  // the agent takes binary attachments (hello lists "binary_data")
};

}  // namespace

core::result<agent_options> parse_agent_options(const std::string& wire, const std::string& text) {
    agent_options o;
    o.wire = wire;
    if (wire != "udp" && wire != "pcap" && wire != "dpdk")
        return core::error{"unknown wire '" + wire + "' (udp, pcap, dpdk)"};
    bool have_dut = false, have_local = false;
    std::size_t pos = 0;
    while (pos <= text.size() && !text.empty()) {
        const auto start = pos;
        auto end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        const auto kv = text.substr(pos, end - pos);
        pos = end + 1;
        const auto eq = kv.find('=');
        if (eq == std::string::npos) return core::error{"agent option '" + kv + "' is not KEY=VALUE"};
        const auto k = kv.substr(0, eq);
        if (k == "eal") {  // the rest of the text: EAL arguments have commas of their own
            o.eal = text.substr(start + 4);
            break;
        }
        const auto v = kv.substr(eq + 1);
        if (k == "agent") {
            const auto colon = v.rfind(':');
            o.host = colon == std::string::npos ? v : v.substr(0, colon);
            if (o.host.size() > 2 && o.host.front() == '[' && o.host.back() == ']') o.host = o.host.substr(1, o.host.size() - 2);
            if (colon != std::string::npos) {
                const auto p = std::strtoul(v.c_str() + colon + 1, nullptr, 10);
                if (p == 0 || p > 65535) return core::error{"agent=" + v + ": bad port"};
                o.port = static_cast<std::uint16_t>(p);
            }
        } else if (k == "dut") {
            auto ip = netio::parse_ip(v);
            if (!ip) return core::error{k + "=" + v + ": " + ip.err().message};
            o.dut_ip = *ip;
            have_dut = true;
        } else if (k == "local") {
            // IP[+IP...]: the peer's address, then one per further peer.
            o.more_local.clear();
            std::size_t at = 0;
            for (bool first = true;; first = false) {
                const auto plus = v.find('+', at);
                const auto one = v.substr(at, plus == std::string::npos ? std::string::npos : plus - at);
                auto ip = netio::parse_ip(one);
                if (!ip) return core::error{"local=" + v + ": " + ip.err().message};
                if (first) o.local_ip = *ip;
                else if (*ip == o.local_ip || std::find(o.more_local.begin(), o.more_local.end(), *ip) != o.more_local.end())
                    return core::error{"local=" + v + ": " + one + " is listed twice"};
                else o.more_local.push_back(*ip);
                if (plus == std::string::npos) break;
                at = plus + 1;
            }
            have_local = true;
        } else if (k == "token") {
            o.token = v;
        } else if (k == "timeout") {
            auto d = core::parse_duration_ns(v);
            if (!d || *d < 1000000) return core::error{"timeout=" + v + ": a duration of at least 1ms"};
            o.timeout = std::chrono::milliseconds(*d / 1000000);
        } else if (k == "reconnect") {
            auto d = core::parse_duration_ns(v);
            if (!d || *d > 600'000'000'000LL) return core::error{"reconnect=" + v + ": a duration of at most 10 min (0: one try)"};
            o.reconnect = std::chrono::milliseconds(*d / 1000000);
        } else if (k == "iface") {
            o.iface = v;
        } else if (k == "tx") {
            if (v != "udp" && v != "packet") return core::error{"tx=" + v + ": udp or packet"};
            if (wire != "udp") return core::error{"tx=" + v + ": for agent+udp only (pcap and dpdk send frames as they are)"};
            o.tx_packet = v == "packet";
        } else if (k == "port") {
            o.dpdk_port = v;
        } else if (k == "poll") {
            if (v != "busy" && v != "10us") return core::error{"poll=" + v + ": busy or 10us"};
            o.busy_poll = v == "busy";
        } else if (k == "host") {
            if (v != "shared" && v != "separate") return core::error{"host=" + v + ": shared or separate"};
            o.shares_host = v == "shared";
        } else if (k == "pid") {
            char* end = nullptr;
            const long p = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || p < 1 || p > 4194304) return core::error{"pid=" + v + ": a process ID"};
            o.pid = static_cast<int>(p);
        } else if (k == "wire_rtt") {
            auto d = core::parse_duration_ns(v);
            if (!d || *d < 0 || *d > 1'000'000'000) return core::error{"wire_rtt=" + v + ": a duration from 0 to 1s"};
            o.wire_rtt = core::nanos{*d};
        } else if (k == "fabric") {
            if (v != "none" && v != "unknown")
                return core::error{"fabric=" + v + ": none (nothing between reorders frames of different source ports) or unknown"};
            o.in_order = v == "none";
        } else if (k == "dut_mac") {
            wire::mac_addr m{};
            unsigned b[6];
            char tail;
            if (std::sscanf(v.c_str(), "%x:%x:%x:%x:%x:%x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6)
                return core::error{"dut_mac=" + v + ": not a MAC address"};
            for (int i = 0; i < 6; ++i) m[i] = static_cast<std::uint8_t>(b[i]);
            o.dut_mac = m;
        } else {
            return core::error{"unknown agent option '" + k + "' (agent, dut, local, token, timeout, reconnect, iface, dut_mac, tx, port, poll, host, pid, wire_rtt, fabric, eal)"};
        }
        if (end == text.size()) break;
    }
    if (!have_dut) return core::error{"agent+" + wire + ": dut=IP is required (the DUT's wire address)"};
    if (!have_local) return core::error{"agent+" + wire + ": local=IP is required (the engine's wire address)"};
    if (o.dut_ip.version != o.local_ip.version) return core::error{"agent+" + wire + ": dut= and local= must both be IPv4 or both IPv6"};
    for (const auto& a : o.more_local)
        if (a.version != o.local_ip.version) return core::error{"agent+" + wire + ": local= addresses must all be IPv4 or all IPv6"};
    if (wire == "pcap" && o.iface.empty()) return core::error{"agent+pcap: iface=NAME is required"};
    if (wire == "dpdk" && !o.dut_mac) return core::error{"agent+dpdk: dut_mac=MAC is required"};
    if (wire == "dpdk" && o.eal.empty()) return core::error{"agent+dpdk: eal=ARGS is required (last; e.g. eal=--no-huge --vdev=net_af_packet0,iface=eth1)"};
    return o;
}

core::result<std::unique_ptr<dut>> make_agent(const agent_options& o) {
    auto d = std::make_unique<agent_dut>(o);
    if (auto st = d->open(); !st) return st.err();
    return std::unique_ptr<dut>(std::move(d));
}

}  // namespace mrct::dut
