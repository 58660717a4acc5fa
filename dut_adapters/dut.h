// The device under test as the engine drives it: the control operations of
// the agent protocol (spec §6, docs/agent-protocol.md) plus a frame port.
// `sim` hosts the reference endpoint in-process in virtual time; the agent
// adapters (agent_dut.cpp) implement the same interface over TCP and a real
// wire (UDP sockets or libpcap), in real time.
//
// Control calls on a real DUT can fail (agent gone, hung, answering garbage).
// Calls that return a status report it; the others return a neutral value and
// set fault(), which the runner checks: the case ends as `error`.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/bytes.h"
#include "core/result.h"
#include "endpoint/endpoint.h"
#include "sim/scheduler.h"
#include "netio/port.h"
#include "wire/headers.h"

namespace boost::asio {
class io_context;
}

namespace mrct::dut {

struct info {
    std::string name, version, bug;
    std::vector<std::string> capabilities;
};

class dut {
public:
    // A frame the DUT sent, and how long ago it reached the engine's host (the
    // kernel's receive timestamp on a real wire; 0 in virtual time, where a
    // frame is delivered the moment it arrives). The engine records the frame
    // at that time, not when it got round to reading it.
    using frame_tx = std::function<void(core::bytes_view frame, core::nanos age)>;
    virtual ~dut() = default;

    virtual info hello() const = 0;
    // Real-time DUTs run on a wire in wall-clock time; the runner then drives
    // its scheduler with the real-time driver and calls attach() before start().
    virtual bool realtime() const { return false; }
    // `now` reads (and syncs) the case's clock; `wait` runs the driver, and
    // with it the peer and the wire, until `done` or the timeout: an agent call
    // waits through it, so the engine never stalls while the DUT works.
    using waiter = std::function<bool(const bool& done, std::chrono::milliseconds timeout)>;
    virtual void attach(boost::asio::io_context& io, std::function<core::nanos()> now, waiter wait) {
        (void)io;
        (void)now;
        (void)wait;
    }
    // Real time: sends now the frames the adapter's wire has queued (called
    // at the end of each turn of the driver's events, D137).
    virtual void flush_wire() {}
    // The addresses a case uses on this DUT's wire: the DUT's, and the engine
    // peer's. Simulated DUTs use fixed private ones.
    virtual endpoint::address address() const;
    virtual endpoint::address peer_address() const;
    // The address of further peer k (1, 2, ...) of a case with several
    // (topology.peers), where the DUT's wire fixes it: a real-time adapter
    // has those it was given (local=IP+IP...), and a case needing
    // more is skipped. nullopt: none (virtual time makes one up).
    virtual std::optional<endpoint::address> further_peer_address(unsigned k) const {
        (void)k;
        return std::nullopt;
    }
    // Why the DUT can no longer be trusted ("" while it can): an agent call
    // failed, or the wire refused a frame.
    virtual std::string fault() const { return {}; }
    // Real time: where the fault is an agent call that got no response within
    // its timeout, when it was sent and how long it waited (on the case's
    // clock): a DUT too slow for the timeout, or one hung (D114).
    struct unanswered {
        core::nanos sent{0}, waited{0};
    };
    virtual std::optional<unanswered> unanswered_call() const { return std::nullopt; }
    // Real time: the fault is an agent call the DUT refused (error code
    // `failed`, docs/agent-protocol.md): its own answer, not a call lost or
    // timed out (D136).
    virtual bool refused_call() const { return false; }
    // Parameters by name (endpoint::settings()); before start().
    virtual core::status configure(const std::map<std::string, std::string>& params) = 0;
    // Brings the DUT up on `s` with its address; frames it sends go to `tx`.
    virtual core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) = 0;
    virtual void receive(core::bytes_view frame) = 0;

    virtual void listen() = 0;
    virtual std::uint32_t connect(endpoint::address peer) = 0;
    virtual bool established(std::uint32_t conn) const = 0;
    virtual std::vector<std::uint32_t> accepted() const = 0;
    virtual bool in_error(std::uint32_t conn) const = 0;
    virtual core::status close(std::uint32_t conn) = 0;

    virtual std::uint32_t register_mr(std::size_t len) = 0;
    virtual std::uint64_t mr_va(std::uint32_t rkey) const = 0;
    virtual core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t offset,
                                   std::uint32_t len, std::uint64_t wr_id) = 0;
    virtual core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t remote_va,
                                    std::uint32_t rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) = 0;
    virtual core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                                   std::uint64_t wr_id, std::optional<std::uint32_t> imm) = 0;
    virtual std::vector<endpoint::completion> poll() = 0;
    virtual core::result<core::byte_buffer> read_mem(std::uint32_t rkey, std::uint64_t offset, std::size_t len) = 0;
    virtual std::map<std::string, std::uint64_t> counters() const = 0;

    // Real time: round trips of the agent calls made so far (docs/timing.md).
    struct call_times {
        std::uint64_t calls = 0;
        core::nanos max{0}, median{0};
        core::nanos poll_max{0};  // the slowest completion poll: how late a completion's time may be
        // Each poll: when it was sent and its round trip. An agent that serves
        // the DUT's wire on the same host answers late while the host holds the
        // DUT: its slow polls show when the DUT was behind (docs/timing.md).
        std::vector<std::pair<core::nanos, core::nanos>> polls;
        // Every other call (posts, registrations, ...): (sent, round trip).
        // A DUT that serves its agent on its data path's thread (mrct-refnic)
        // reads no frame while it serves one.
        std::vector<std::pair<core::nanos, core::nanos>> others;
    };
    virtual call_times agent_call_times() const { return {}; }
    // Whether DUT frames reach `tx` with the kernel's receive time as their age
    // (udp, pcap); a polled port without hardware stamps (dpdk) gives the age
    // since the burst was read.
    virtual bool rx_stamped() const { return true; }
    // Real time: whether the driver should spin on its I/O instead of sleeping
    // to its next event (agent+dpdk poll=busy: the port is polled without pause).
    virtual bool busy_poll() const { return false; }
    // Whether the DUT may share the engine's host, so that a hold of the host
    // holds it too (the host probe, docs/timing.md): agents unless told
    // host=separate.
    virtual bool shares_host() const { return false; }
    // A DUT process on this host whose threads' waits for a CPU the engine
    // reads from the kernel's scheduler accounting (/proc/PID/task/*/schedstat;
    // agent spec pid=PID, docs/timing.md): 0 if none.
    virtual int host_pid() const { return 0; }
    // Real time: the DUT's frames the engine's receive path dropped before
    // reading them (a full socket or capture buffer): the trace lacks them.
    virtual std::uint64_t frames_lost() const { return 0; }
    // Real time: what the engine's own interfaces dropped since the DUT
    // started, below any socket or capture (netio/if_drops.h, D144): frames
    // of the DUT's never seen (rx), or the engine's that may never have
    // reached the DUT (tx).
    virtual netio::if_drops interface_drops() const { return {}; }
    // Real time: the round trip a fabric between the engine and the DUT adds
    // (a lab's switch or impairment box), as the lab declared it (agent spec
    // wire_rtt=, D146); it widens the crossing window. 0: a direct wire.
    virtual core::nanos declared_wire_rtt() const { return core::nanos{0}; }
    // Real time: the lab declared that nothing between the engine's port and
    // the DUT's reorders frames of different UDP source ports (agent spec
    // fabric=none: a cable, one switch queue; D158). Unknown by default: a
    // fabric spraying by port may swap them.
    virtual bool declared_in_order() const { return false; }
    // Real time: notes the DUT's quickest answer on the wire in a case (a
    // request of the engine's to the DUT's reply; 0: none in the case) and
    // returns the quickest of the run so far, this case's included (0: none
    // yet). The run's DUTs, one per case, share it (D146).
    virtual core::nanos quickest_answer(core::nanos in_case) { return in_case; }
};

// The reference endpoint in-process; `bug` selects a bug profile ("" = none),
// `variants` conforming variants (endpoint::variants_by_name; D153).
std::unique_ptr<dut> make_sim(const std::string& bug = "", std::uint32_t variants = 0);

// A DUT behind an agent (docs/agent-protocol.md) on a real wire.
struct agent_options {
    std::string wire = "udp";  // udp | pcap | dpdk
    std::string host = "127.0.0.1";
    std::uint16_t port = 7700;
    std::string token;
    std::chrono::milliseconds timeout{2000};  // every agent call
    // Before each case: how long to keep trying to reach an agent that refuses
    // or does not answer the TCP connect (an agent restarting), backing off
    // from 50 ms to 500 ms between tries; 0: one try.
    std::chrono::milliseconds reconnect{2000};
    netio::ip_address dut_ip{}, local_ip{};  // both IPv4 or both IPv6
    // local=IP+IP+...: the engine's further addresses, one for each further
    // peer of a case (topology.peers), in order.
    std::vector<netio::ip_address> more_local;
    std::string iface;                        // pcap; udp with tx=packet (else the interface holding local=)
    std::optional<wire::mac_addr> dut_mac;    // pcap, udp with tx=packet (else the neighbour table); dpdk (required)
    bool tx_packet = false;                   // udp: tx=packet, frames leave by an AF_PACKET socket (udp_options::packet_iface)
    std::string eal;                          // dpdk: EAL arguments
    std::string dpdk_port;                    // dpdk: port index or name
    bool busy_poll = false;                   // dpdk: poll=busy (spin on the port) instead of every 10 us
    bool shares_host = true;                  // host=shared|separate: the DUT runs on the engine's host
    int pid = 0;                              // pid=PID: the DUT's process on this host (its CPU waits are read)
    core::nanos wire_rtt{0};                  // wire_rtt=DUR: a fabric's round trip between engine and DUT (D146)
    bool in_order = false;                    // fabric=none|unknown: none keeps frames of all ports in order (D158)
    // The DUT's quickest answer on the wire in the run so far, in ns (0: none
    // yet): shared by the DUTs a run makes from these options, one per case.
    std::shared_ptr<std::atomic<std::int64_t>> quickest_answer = std::make_shared<std::atomic<std::int64_t>>(0);
};
// Parses "agent=HOST:PORT,dut=IP,local=IP[+IP...][,token=T][,timeout=DUR][,reconnect=DUR][,iface=IF][,dut_mac=MAC]
// [,tx=udp|packet][,port=P][,host=shared|separate][,pid=PID][,wire_rtt=DUR][,fabric=none|unknown][,eal=EAL ARGS...]" (eal= takes the rest of the text,
// commas included).
core::result<agent_options> parse_agent_options(const std::string& wire, const std::string& text);
// Keeps in `quickest` (ns, 0: none yet) the least of it and `sample` (0: no
// sample) and returns it: the run's quickest answer (agent_options, D146).
inline core::nanos note_quickest(std::atomic<std::int64_t>& quickest, core::nanos sample) {
    if (sample > core::nanos{0}) {
        std::int64_t cur = quickest.load();
        while ((cur == 0 || sample.count() < cur) && !quickest.compare_exchange_weak(cur, sample.count())) {
        }
    }
    return core::nanos{quickest.load()};
}
// Connects and says hello; an unreachable or refusing agent is an error.
core::result<std::unique_ptr<dut>> make_agent(const agent_options& o);

// A DUT library behind the in-process ABI (abi/mrct_dut.h, docs/dut-abi.md),
// in virtual time: "so:PATH.so[,KEY=VALUE...]". The options go to the
// library's mrct_dut_create; bug=NAME is also what hello() reports.
struct so_options {
    std::string path;
    std::string library_options;  // "bug=frozen-rnr,..." as given, less the engine's own below
    std::string bug;
    // isolate=process|none: the library in a child process per case (a crash
    // or hang is the case's error) or in the engine's (docs/dut-abi.md).
    bool isolate = true;
    std::chrono::milliseconds call_limit{60000};  // call_limit=DUR: isolated, a call's wall-clock bound
    std::string host_program;  // mrct-dut-host: beside the running program, or $MRCT_DUT_HOST
};
core::result<so_options> parse_so_options(const std::string& text);
// The RTL DUT (docs/rtl.md): "rtl[:KEY=VALUE,...]" is
// "so:LIBRARY[,KEY=VALUE,...]" with libmrct-rtl-dut.so beside the running
// program, or $MRCT_RTL_DUT. Any other spec comes back as it was.
std::string expand_rtl(const std::string& spec);
// Loads the library (once per path), checks its version and symbols and
// makes an instance for one case.
core::result<std::unique_ptr<dut>> make_so(const so_options& o);
// The bugs a library can plant (mrct_dut_describe), for selftest.
struct so_bug {
    std::string name, clauses, summary;
};
core::result<std::vector<so_bug>> so_bugs(const so_options& o);

// Counters of a reference endpoint by name ("drop.bad_icrc", "naks_sent", ...).
std::map<std::string, std::uint64_t> endpoint_counters(const endpoint::counters& k);

}  // namespace mrct::dut
