// Frame ports onto a real wire (issue 5): the engine's peer and mrct-refnic
// exchange MetaRoCE frames through them in real time. Frames in and out are
// whole Ethernet frames as engine/wire builds and decodes them, whatever the
// port carries underneath.
//
//   udp_port   kernel UDP sockets (Boost.Asio): one receive socket on UDP 4791,
//              one send socket per source port (MR-PATH-1 needs one per path).
//              Sends only frames a UDP socket can carry exactly; received
//              frames get an Ethernet/IPv4/UDP header rebuilt around the
//              datagram (ECN and TTL from the kernel, DF=1 and ID=0 assumed).
//   pcap_port  raw Ethernet through libpcap on one interface: sends anything,
//              captures what really was on the wire.
//   dpdk_port  a DPDK ethdev port (EAL arguments passed through), polled in
//              bursts from the driver's io_context every 10 us, or busily;
//              sends queued and flushed in bursts.
//
// Both run on the caller's io_context (the real-time driver's): receive
// handlers run on the driver thread, between events, never concurrently with
// protocol code. Each wake reads at most a batch of frames, so a peer flooding
// the wire cannot starve the scheduler's timers.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/udp.hpp>

#include "core/bytes.h"
#include "core/result.h"
#include "core/time.h"
#include "wire/headers.h"

namespace mrct::netio {

// An IPv4 or IPv6 address (the wire's; MetaRoCE runs over both, spec §2).
struct ip_address {
    unsigned version = 4;
    wire::ipv4_addr v4{};
    wire::ipv6_addr v6{};
    bool operator==(const ip_address&) const = default;
    auto operator<=>(const ip_address&) const = default;  // a map key
    bool unspecified() const { return version == 4 ? v4 == wire::ipv4_addr{} : v6 == wire::ipv6_addr{}; }
};
core::result<ip_address> parse_ip(const std::string& s);
// How long ago a frame stamped `wire_ns` (port::rx) arrived; 0 for 0 (no
// stamp) and for stamps in the future.
core::nanos wire_age(std::int64_t wire_ns);
std::string ip_text(const ip_address& a);

struct port_stats {
    std::uint64_t frames_in = 0, frames_out = 0;
    std::uint64_t foreign_in = 0;   // received from an address other than the remote one, dropped
    std::uint64_t send_errors = 0;  // the kernel refused a send
    // Frames for this port that the kernel or the capture dropped before the
    // port read them (a full socket or capture buffer: SO_RXQ_OVFL,
    // pcap_stats): the trace then lacks frames the DUT sent.
    std::uint64_t lost_in = 0;
    std::uint64_t tx_sockets_closed = 0;  // udp: send sockets closed to stay within max_tx_sockets
    std::uint64_t packet_out = 0;         // udp: frames of frames_out sent through the packet socket (packet_iface)
};

// What a port's interfaces dropped since it started (netio/if_drops.h): the
// kernel's or the NIC's drops before any socket or capture saw the frames.
struct if_drops {
    std::uint64_t rx = 0, tx = 0;
    std::string ifaces;  // their names, ", "-separated
    bool any() const { return rx || tx; }
};

class port {
public:
    // A received frame and when it reached this host: the kernel's receive
    // timestamp in CLOCK_REALTIME nanoseconds (SO_TIMESTAMPNS, pcap's
    // header), 0 when the port has none. A frame read in a batch, or after
    // the reader was busy, keeps the time it arrived (wire_age()).
    using rx = std::function<void(core::bytes_view frame, std::int64_t wire_ns)>;
    virtual ~port() = default;
    // Starts receiving; `cb` runs on the io_context's thread for each frame.
    virtual void start(rx cb) = 0;
    // Sends a whole Ethernet frame. Errors: a frame this port cannot carry
    // exactly, or an address other than the ones the port was given.
    virtual core::status send(core::bytes_view frame) = 0;
    virtual void stop() = 0;
    virtual const port_stats& stats() const = 0;
    // Its interfaces' own drops since it started (a few system calls: asked
    // once a case has ended). None for a port without a kernel interface.
    virtual if_drops interface_drops() const { return {}; }
    // Whether a frame's wire_ns is when it reached this host (the kernel's
    // receive stamp, a NIC's timestamp), not only when this port read it
    // (a DPDK port whose device does not stamp: its burst's read time).
    virtual bool rx_stamped() const { return true; }
    // A sender's turn (endpoint::set_tx_turn, D116): sends what this port
    // holds now, and says whether frames wait to be read. A port that cannot
    // tell says yes: its sender then waits for the next turn of the loop.
    virtual bool tx_turn() { return true; }
    // Sends now what send() queued for the next handler (a port that sends
    // at once has nothing to do). The real-time driver calls it at the end
    // of each turn of events, so that it knows when the turn's frames left
    // (realtime_driver::late_turns, D137).
    virtual void flush_tx() {}
};

struct udp_options {
    ip_address local{};   // bind address (its version is the port's)
    ip_address remote{};  // the only address sent to and accepted from (unspecified: any, for refnic)
    // More addresses of this side, one per further peer of a case
    // (topology.peers): each has its own receive socket, and a frame leaves
    // by a socket bound to its source address. Same IP version as local.
    std::vector<ip_address> also_local;
    std::uint16_t listen_port = 4791;
    std::size_t max_tx_sockets = 512;  // send sockets kept open; beyond, the least recently used is closed
    std::size_t batch = 64;
    // Frames a UDP socket cannot send exactly (datagram_of refuses them: an
    // IPv4 header with DF clear, an Ethernet PAUSE frame) leave verbatim on
    // this interface through libpcap, source MAC the interface's, an IPv4
    // frame's destination MAC its neighbour's (mrct-refnic --raw-iface: bug
    // profiles that break L2/L3 rules; root). Empty: such frames are refused.
    std::string raw_iface;
    // Transmit through an AF_PACKET socket on this interface instead of the
    // UDP send sockets (issue 24): the same frames, verbatim (IPv4 ID 0, DF,
    // UDP checksum 0 as built, where a socket's kernel writes its own
    // checksum), batched by sendmmsg with the qdisc bypassed, and without
    // the kernel's route lookup and IP output per frame. Needs CAP_NET_RAW.
    // A frame's destination MAC: packet_dst_mac for `remote`, else the
    // kernel's neighbour table (IPv4; looked up again at most every 100 ms);
    // a frame whose MAC is not known yet (IPv6 without packet_dst_mac, a new
    // peer) leaves by its UDP socket as before. Receiving is unchanged.
    std::string packet_iface;
    std::optional<wire::mac_addr> packet_dst_mac;
};
core::result<std::unique_ptr<port>> make_udp_port(boost::asio::io_context& io, const udp_options& o);

struct pcap_options {
    std::string iface;
    ip_address local{}, remote{};
    std::vector<ip_address> also_local;  // as udp_options::also_local: one per further peer
    std::optional<wire::mac_addr> remote_mac;  // else looked up in the kernel's neighbour table (IPv4 only)
    std::size_t batch = 64;
};
core::result<std::unique_ptr<port>> make_pcap_port(boost::asio::io_context& io, const pcap_options& o);

// A raw Ethernet port for a bump in the wire (`mrct emulate`): every frame
// the interface receives (promiscuous, inbound only: not what this port sent),
// and frames sent verbatim, addresses untouched. Through libpcap (AF_PACKET on
// Linux): for veths in tests and for NICs at the kernel's pace; DPDK ports
// are the fast way.
struct tap_options {
    std::string iface;
    std::size_t batch = 64;
    std::size_t buffer_bytes = 64u << 20;  // the capture buffer (frames beyond it are lost_in)
};
core::result<std::unique_ptr<port>> make_tap_port(boost::asio::io_context& io, const tap_options& o);

struct dpdk_options {
    std::string eal_args;  // passed to rte_eal_init (once per process), e.g. "--no-huge --vdev=net_af_packet0,iface=veth0"
    std::string port;      // port index or device name; "" = port 0
    ip_address local{}, remote{};
    std::vector<ip_address> also_local;  // as udp_options::also_local: one per further peer
    // The remote's MAC: required with a remote. With `remote` unspecified
    // (mrct-refnic) frames from any address to `local` are taken and each
    // sender's MAC is learned from its frames for the replies (before, a frame
    // keeps the destination MAC it was built with).
    std::optional<wire::mac_addr> remote_mac;
    // Poll without pause (the driver's thread spins on the port, as a DPDK
    // lcore does) instead of every 10 us.
    bool busy_poll = false;
};
// Received frames carry the time their burst was read (CLOCK_REALTIME), not a
// hardware stamp. Built only when DPDK is found; otherwise an error saying so.
core::result<std::unique_ptr<port>> make_dpdk_port(boost::asio::io_context& io, const dpdk_options& o);
// The same port as a tap for `mrct emulate`: every frame in, frames sent
// verbatim (local/remote/remote_mac unused).
core::result<std::unique_ptr<port>> make_dpdk_tap_port(boost::asio::io_context& io, const dpdk_options& o);

// The Ethernet/IP/UDP frame a conforming sender put on the wire for this
// datagram: IPv4 without options, DF set, Identification 0, UDP checksum 0;
// or IPv6 without extension headers, flow label 0, UDP checksum computed.
// `tos` is the IPv4 TOS or IPv6 traffic class, `ttl` the TTL or hop limit.
core::byte_buffer frame_from_datagram(const ip_address& src, std::uint16_t sport, const ip_address& dst,
                                      std::uint16_t dport, std::uint8_t tos, std::uint8_t ttl, core::bytes_view payload);

// What a UDP socket would send for `frame`, or why it cannot be sent exactly.
struct datagram {
    ip_address src{}, dst{};
    std::uint16_t sport = 0, dport = 0;
    std::uint8_t tos = 0;
    core::bytes_view payload;
};
core::result<datagram> datagram_of(core::bytes_view frame);

// Raw ports (pcap, DPDK) send any frame, but only from `local` (or one of
// `also_local`) to `remote`: an untagged IPv4 or IPv6 frame with those
// addresses, or the reason it is refused.
core::status check_raw_frame(core::bytes_view frame, const ip_address& local, const ip_address& remote,
                             const std::vector<ip_address>& also_local = {});
// The source and destination of an untagged IPv4/IPv6 frame, if it has them.
std::optional<std::pair<ip_address, ip_address>> frame_addresses(core::bytes_view frame);

// A UDP socket on `local`:4791 whose datagrams are discarded: raw ports use it
// so that the kernel does not answer the DUT's frames with ICMP unreachable.
core::status bind_sink(boost::asio::ip::udp::socket& s, const ip_address& local);

// An interface's MAC address; the kernel's neighbour entry (/proc/net/arp)
// for an IPv4 address, if complete; the interface that holds an address.
core::result<wire::mac_addr> interface_mac(const std::string& iface);
core::result<std::string> interface_of(const ip_address& a);
std::optional<wire::mac_addr> neighbour_mac(const wire::ipv4_addr& ip);
// The neighbour entry for `ip`, the kernel asked to resolve it (a datagram
// to its discard port) and the table read every 50 ms for up to a second.
std::optional<wire::mac_addr> resolve_neighbour(const wire::ipv4_addr& ip);

core::result<wire::ipv4_addr> parse_ipv4(const std::string& s);
std::string ipv4_text(const wire::ipv4_addr& a);

}  // namespace mrct::netio
