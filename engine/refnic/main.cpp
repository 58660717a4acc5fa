// mrct-refnic: the reference endpoint as a DUT daemon. Serves the agent
// protocol (docs/agent-protocol.md) on TCP and speaks MetaRoCE over UDP on its
// wire address (or through a DPDK port, --dpdk), in real time. One thread: the real-time driver runs the
// endpoint's timers, the agent connections and the UDP sockets.
#include <algorithm>
#include <chrono>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <iostream>

#include <CLI/CLI.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "core/heap_pages.h"
#include "core/pages.h"
#include "agent/address.h"
#include "agent/server.h"
#include "agent/service.h"
#include "endpoint/config.h"
#include "netio/port.h"
#include "netio/rx_waits.h"
#include "sim/drivers.h"

using namespace mrct;

namespace {

// A network (address/prefix length) wire peers may be in.
struct network {
    netio::ip_address base;
    unsigned bits = 0;
    bool contains(const netio::ip_address& a) const {
        if (a.version != base.version) return false;
        const auto* x = a.version == 4 ? a.v4.data() : a.v6.data();
        const auto* y = base.version == 4 ? base.v4.data() : base.v6.data();
        for (unsigned i = 0; i < bits; ++i)
            if (((x[i / 8] ^ y[i / 8]) >> (7 - i % 8)) & 1) return false;
        return true;
    }
};

// "--peers": "any", "subnet" (the /24 or /64 of --addr) or CIDR[,CIDR...].
core::result<std::vector<network>> parse_peers(const std::string& text, const netio::ip_address& self) {
    std::vector<network> out;
    if (text == "any") return out;
    if (text == "subnet") {
        out.push_back({self, self.version == 4 ? 24u : 64u});
        return out;
    }
    std::size_t pos = 0;
    while (pos <= text.size()) {
        auto end = text.find(',', pos);
        if (end == std::string::npos) end = text.size();
        const auto item = text.substr(pos, end - pos);
        const auto slash = item.find('/');
        auto ip = netio::parse_ip(item.substr(0, slash));
        if (!ip) return core::error{"--peers: '" + item + "': " + ip.err().message};
        const unsigned max = ip->version == 4 ? 32 : 128;
        unsigned bits = max;
        if (slash != std::string::npos) {
            char* e = nullptr;
            const auto b = std::strtoul(item.c_str() + slash + 1, &e, 10);
            if (*e || slash + 1 == item.size() || b > max) return core::error{"--peers: '" + item + "': a bad prefix length"};
            bits = static_cast<unsigned>(b);
        }
        out.push_back({*ip, bits});
        pos = end + 1;
    }
    return out;
}

bool is_loopback(const std::string& host) {
    return host == "localhost" || host == "::1" || host.rfind("127.", 0) == 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"mrct-refnic: the MetaRoCE reference endpoint as a device under test.\n"
                 "Serves the agent protocol on TCP (docs/agent-protocol.md) and MetaRoCE on UDP 4791 at --addr."};
    std::string listen = "127.0.0.1:7700", addr, bug, variant, token, level = "info", eal, dpdk_port, raw_iface, packet_tx;
    bool busy_poll = false, reap_stamps = false;
    std::vector<std::string> agent_as;
    unsigned tx_burst = 8;
    std::string peers = "subnet";
    std::uint64_t max_mr = 1ull << 30, max_memory = 4ull << 30;
    app.add_option("--listen", listen, "Agent protocol address HOST:PORT (loopback unless told otherwise)")
        ->capture_default_str();
    app.add_option("--addr", addr, "Wire address (IPv4 or IPv6): UDP 4791 is bound here, frames are sent from here")
        ->required();
    app.add_option("--bug", bug, "Bug profile to run with (mrct docs bugs lists them)");
    app.add_option("--variant", variant,
                   "Conforming variant(s) to run with, NAME[+NAME...]: legal choices the model leaves open, made otherwise "
                   "than the reference makes them (mrct docs variants lists them; D153)");
    app.add_option("--token", token, "Shared token the engine must present in hello");
    app.add_option("--log-level", level, "trace, debug, info, warn, error")->capture_default_str();
    app.add_option("--dpdk", eal,
                   "Speak MetaRoCE through a DPDK port instead of UDP sockets: the EAL arguments, e.g. "
                   "\"--no-huge --no-pci -l 1 --file-prefix=refnic --vdev=net_af_packet0,iface=veth1\" "
                   "(frames to --addr from any address are taken; replies go to the MAC each sender used)");
    app.add_option("--dpdk-port", dpdk_port, "With --dpdk: the port, by index or device name (default 0)");
    app.add_option("--raw-iface", raw_iface,
                   "Over UDP sockets: frames a socket cannot send exactly (bug profiles df-clear and pause-frames: IPv4\n"
                   "with DF clear, Ethernet PAUSE) leave verbatim on this interface through libpcap (root); without it\n"
                   "they are refused and logged");
    app.add_option("--packet-tx", packet_tx,
                   "Over UDP sockets: send through an AF_PACKET socket on this interface instead (root): the frames\n"
                   "verbatim, batched, qdisc bypassed, no route lookup per frame; each destination's MAC from the\n"
                   "kernel's neighbour table (IPv4; until it is there, and over IPv6, frames leave by UDP sockets)");
    app.add_flag("--busy-poll", busy_poll,
                 "Spin instead of sleeping between events: on the DPDK port (with --dpdk; else it is polled every "
                 "10 us) or on the UDP sockets (else it sleeps until a frame or a timer wakes it). Takes a CPU whole");
    app.add_flag("--reap-stamps", reap_stamps,
                 "Stamp each completion when a poll reaps it (time_ns: the poll's time; time_err_ns: the time since the\n"
                 "previous poll), as an agent without the device's completion timestamps does, instead of when it\n"
                 "happened (docs/agent-protocol.md)");
    app.add_option("--agent-as", agent_as,
                   "Serve the agent protocol as another implementation's agent may, a conforming one (D159): 1.0 (protocol\n"
                   "1.0: no binary attachments), no-counters (counters answered empty), no-frame-counts (no frames_in or\n"
                   "frames_out). Repeatable")
        ->check(CLI::IsMember({"1.0", "no-counters", "no-frame-counts"}));
    app.add_option("--tx-burst", tx_burst,
                   "After this many SEND packets of a connection, send what is held and, if frames wait to be\n"
                   "read (an RNR among them?), read them before sending more: a NIC looks at a queue's state packet by\n"
                   "packet, and a whole window handed to a loaded host's stack at once left for milliseconds after\n"
                   "an RNR had come (0: no bound; D116)")
        ->capture_default_str();
    app.add_option("--peers", peers,
                   "Wire peers an agent client may make this DUT connect to: subnet (the /24 or /64 of --addr),\n"
                   "any, or CIDR[,CIDR...] (docs/agent-protocol.md, Security)")
        ->capture_default_str();
    app.add_option("--max-mr", max_mr, "Largest memory region one register_mr may ask for (bytes; 1GiB, 64MiB ... accepted)")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    bool huge_pages = false;
    app.add_flag("--huge-pages", huge_pages,
                 "Advise the heap for 2 MiB pages: a 4 MiB post's buffer is faulted in without 1024 faults, but each "
                 "new 2 MiB of heap is cleared in one fault on the data path (off by default: docs/performance.md)");
    app.add_option("--max-memory", max_memory, "Bytes of memory regions in all, until the engine's next reset")
        ->transform(CLI::AsSizeValue(false))
        ->capture_default_str();
    CLI11_PARSE(app, argc, argv);

    spdlog::set_level(spdlog::level::from_str(level));
    spdlog::set_pattern("[%H:%M:%S.%f] [%l] %v");
    if (!bug.empty()) {
        endpoint::config tmp;
        if (auto st = endpoint::config_set(tmp, "bug", bug); !st) {
            std::cerr << "mrct-refnic: " << st.err().message << "\n";
            return 2;
        }
    }
    std::uint32_t variants = 0;
    if (!variant.empty()) {
        auto v = endpoint::variants_by_name(variant);
        if (!v) {
            std::cerr << "mrct-refnic: --variant: " << v.err().message << "\n";
            return 2;
        }
        variants = *v;
        if (variants & endpoint::variant_bit(endpoint::variant::vlan)) {
            // A socket (or this DPDK port's peer) takes untagged frames: on a
            // wire the VLAN is the interface's, not the DUT's frames'.
            std::cerr << "mrct-refnic: --variant vlan: tagged frames cannot leave by a UDP socket or reach the engine's; "
                         "on a wire, put the DUT's address on a VLAN interface instead (the variant is for virtual time)\n";
            return 2;
        }
    }
    auto ip = netio::parse_ip(addr);
    if (!ip) {
        std::cerr << "mrct-refnic: --addr: " << ip.err().message << "\n";
        return 2;
    }
    auto allowed = parse_peers(peers, *ip);
    if (!allowed) {
        std::cerr << "mrct-refnic: " << allowed.err().message << "\n";
        return 2;
    }
    if (!packet_tx.empty() && !eal.empty()) {
        std::cerr << "mrct-refnic: --packet-tx is for UDP sockets; a DPDK port (--dpdk) sends through its own driver\n";
        return 2;
    }
    if (!raw_iface.empty() && !eal.empty()) {
        std::cerr << "mrct-refnic: --raw-iface is for UDP sockets; a DPDK port (--dpdk) sends frames as they are\n";
        return 2;
    }
    if (max_mr == 0 || max_memory < max_mr) {
        std::cerr << "mrct-refnic: --max-mr must be at least 1 and at most --max-memory\n";
        return 2;
    }
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos) {
        std::cerr << "mrct-refnic: --listen must be HOST:PORT\n";
        return 2;
    }
    const auto port = std::strtoul(listen.c_str() + colon + 1, nullptr, 10);
    auto host = listen.substr(0, colon);  // "[fd00::2]" -> "fd00::2"
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (port > 65535) {
        std::cerr << "mrct-refnic: --listen: bad port\n";
        return 2;
    }

    if (huge_pages) spdlog::info("mrct-refnic: {}", core::heap_on_huge_pages());
    else if (!core::no_transparent_huge_pages())  // out of khugepaged's reach (D128)
        spdlog::warn("mrct-refnic: could not opt out of transparent huge pages: {}", std::strerror(errno));
    sim::scheduler sched;
    sim::realtime_driver drv(sched);
    drv.set_io_first(true);  // frames in before due timers, as a NIC's pipeline
    drv.set_busy_poll(busy_poll);
    drv.anchor();
    core::result<std::unique_ptr<netio::port>> wire = core::error{""};
    if (eal.empty()) {
        netio::udp_options uo;
        uo.local = *ip;
        uo.raw_iface = raw_iface;
        uo.packet_iface = packet_tx;
        wire = netio::make_udp_port(drv.io(), uo);
    } else {
        netio::dpdk_options dop;
        dop.eal_args = eal;
        dop.port = dpdk_port;
        dop.local = *ip;
        dop.busy_poll = busy_poll;
        wire = netio::make_dpdk_port(drv.io(), dop);
    }
    if (!wire) {
        std::cerr << "mrct-refnic: " << wire.err().message << "\n";
        return 3;
    }
    auto& w = **wire;
    agent::service_options so;
    so.bug = bug;
    so.variants = variants;
    if (variants) so.name += " (variant " + endpoint::variants_text(variants) + ")";
    so.token = token;
    so.capabilities.push_back(ip->version == 6 ? "ipv6" : "ipv4");
    so.self = agent::address_of({0x02, 0x4d, 0x52, 0, 0, 0x01}, *ip);
    so.clock = [&drv] { drv.sync(); };
    so.max_mr_bytes = max_mr;
    so.tx_burst = tx_burst;
    so.resident_regions = true;
    so.reap_stamps = reap_stamps;
    if (reap_stamps && std::find(agent_as.begin(), agent_as.end(), "1.0") != agent_as.end()) {
        std::cerr << "mrct-refnic: --reap-stamps with --agent-as 1.0: a 1.0 agent has no time_err_ns to say how late its stamps are\n";
        return 2;
    }
    for (const auto& a : agent_as) {
        if (a == "1.0") {
            so.version_minor = 0;
            std::erase(so.capabilities, std::string(agent::k_binary_data));
        }
        if (a == "no-counters") so.report_counters = false;
        if (a == "no-frame-counts") so.report_frame_counts = false;
    }
    // Frames waiting: the driver's turn ends (no later events join it) and
    // the next reads them before the endpoint goes on (D116).
    so.tx_turn = [&w, &drv] {
        const bool waiting = w.tx_turn();
        if (waiting) drv.end_turn();
        return waiting;
    };
    so.max_total_mr_bytes = max_memory;
    if (!allowed->empty()) {
        so.peer_rule = "--peers " + peers;
        so.peer_allowed = [nets = *allowed](const std::string& peer) {
            auto a = netio::parse_ip(peer);
            if (!a) return false;
            for (const auto& n : nets)
                if (n.contains(*a)) return true;
            return false;
        };
    }
    agent::service svc(sched, so, [&](core::bytes_view f) {
        spdlog::trace("wire out: {} bytes", f.size());
        if (auto st = w.send(f); !st) spdlog::warn("wire: {}", st.err().message);
    });
    // The frames one read of the socket returns are all taken in before the
    // endpoint sends (endpoint::begin_batch): the batch ends in a handler
    // posted behind the read's.
    bool batch_open = false;
    // Its own stalls, logged: frames that waited over 0.5 ms in the host
    // before intake, and whether this thread ran meanwhile (netio/rx_waits.h;
    // docs/cli.md). What a loaded host did to the reference, told apart from
    // what the reference did.
    netio::rx_waits waits(std::chrono::microseconds(500));
    w.start([&](core::bytes_view f, std::int64_t wire_ns) {
        spdlog::trace("wire in: {} bytes", f.size());
        const auto wall = std::chrono::duration_cast<core::nanos>(std::chrono::system_clock::now().time_since_epoch());
        if (auto r = waits.on_frame(wall, core::nanos{wire_ns}, netio::thread_cpu_now))
            spdlog::info("wire: {}", r->text());
        drv.sync();
        // When the frame reached the host (the kernel's stamp): RTT samples
        // and RNR pauses count from it, as a NIC's do (D80).
        const auto arrived = sched.now() - netio::wire_age(wire_ns);
        if (!batch_open) {
            batch_open = true;
            svc.begin_batch();
            boost::asio::post(drv.io(), [&] {
                batch_open = false;
                drv.sync();
                svc.end_batch();
            });
        }
        svc.receive(f, arrived);
    });
    agent::server srv(drv.io(), [&](const agent::json& req, agent::session& s) {
        drv.sync();
        const auto began = std::chrono::steady_clock::now();
        auto resp = svc.handle(req, s);
        const auto took = std::chrono::steady_clock::now() - began;
        const auto op = req.is_object() && req.contains("op") && req["op"].is_string() ? req["op"].get<std::string>() : "?";
        // A long call holds the wire too (one thread): logged, to tell it
        // from a stall of the host.
        if (took > std::chrono::milliseconds(1))
            spdlog::info("agent {} took {:.3f} ms", op, std::chrono::duration<double, std::milli>(took).count());
        if (!resp.value("ok", false))
            spdlog::warn("agent {}: {}", op, resp["error"].value("message", ""));
        else
            spdlog::debug("agent {}", op);
        return resp;
    });
    if (auto st = srv.listen(host, static_cast<std::uint16_t>(port)); !st) {
        std::cerr << "mrct-refnic: agent: " << st.err().message << "\n";
        return 3;
    }
    bool stopping = false;
    boost::asio::signal_set signals(drv.io(), SIGTERM, SIGINT);
    signals.async_wait([&](const boost::system::error_code& ec, int sig) {
        if (ec) return;
        spdlog::info("signal {}: shutting down", sig);
        stopping = true;
        drv.stop();
    });
    if (token.empty() && !is_loopback(host))
        spdlog::warn("*** mrct-refnic listens on {} WITHOUT A TOKEN: anyone who can reach that address can drive this DUT "
                     "(connect to peers within --peers {}, register up to {} bytes). Give --token T, or listen on "
                     "127.0.0.1 (docs/agent-protocol.md, Security) ***",
                     host, peers, max_memory);
    spdlog::info("mrct-refnic: agent on {} port {}, wire {} UDP 4791{}, bug {}{}{}", host, srv.port(),
                 netio::ip_text(*ip), !eal.empty() ? " through DPDK" : !packet_tx.empty() ? ", sending through a packet socket on " + packet_tx : "",
                 bug.empty() ? "none" : bug, variants ? ", variant " + endpoint::variants_text(variants) : "",
                 token.empty() ? "" : ", token required");
    while (!stopping) drv.run_for(std::chrono::seconds(1));
    srv.close();
    w.stop();
    if (auto r = waits.finish()) spdlog::info("wire: {}", r->text());
    const auto late = drv.late_events(std::chrono::milliseconds(1));
    if (!late.empty()) {
        auto worst = std::max_element(late.begin(), late.end(), [](auto& x, auto& y) { return x.second < y.second; });
        spdlog::info("mrct-refnic: {} events ran over 1 ms late, the latest {:.3f} ms (due {:.6f} s after start)",
                     late.size(), std::chrono::duration<double, std::milli>(worst->second).count(),
                     core::to_seconds(worst->first));
    }
    const auto& st = w.stats();
    spdlog::info("mrct-refnic: stopped; {} frames in, {} out{}, {} from elsewhere dropped", st.frames_in, st.frames_out,
                 packet_tx.empty() ? "" : " (" + std::to_string(st.packet_out) + " through the packet socket)", st.foreign_in);
    return 0;
}
