// One case's topology, set up (engine/run, internal): both sides' endpoint
// settings, the fabric between DUT (side A) and peer (side B) with the case's
// delays, rates and impairments, the peers (with several, each its own
// address and fabric, like senders behind different switches), the
// connection, and each side's memory region. case_exec::setup() calls these
// in order; the wire tap (run/wire_tap.h) is where the fabrics deliver.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "dut_adapters/dut.h"
#include "endpoint/endpoint.h"
#include "fabric/fabric.h"
#include "run/program.h"
#include "sim/scheduler.h"

namespace mrct::run::detail {

class case_wiring {
public:
    case_wiring(const program& p, sim::scheduler& s, dut::dut& d, std::uint64_t seed) : p_(p), s_(s), dut_(d), seed_(seed) {}

    // Configures the DUT and reads both sides' settings. `refused`: the DUT
    // refused its own (not the plan's text, which compiled).
    core::status configure(bool& refused);
    // The fabric between the DUT and peer 0. A frame it delivers to the
    // DUT's side goes to `to_dut`; to the peer's, to the peer.
    core::status make_fabric(std::function<void(core::bytes_view)> to_dut);
    // The peers, each sending through `send` (the frame and the fabric it
    // crosses); peer 1.. get their own fabrics, delivering to `to_dut` too.
    core::status make_peers(const std::function<void(core::bytes_view, fabric::fabric*)>& send,
                            const std::function<void(core::bytes_view)>& to_dut);
    // The data sender opens the connection (with role `both`, the DUT); the
    // other peers connect to the DUT.
    void open();
    // Whether every peer beyond the first is connected and accepted.
    bool extras_up() const;
    // Whether the connection between DUT and peer 0 is open; takes note of
    // its connection numbers when it is.
    bool opened();
    // The DUT's connection is open, or it accepted one.
    bool dut_side_open() const;
    // Fabric path i carries each side's path i at its first port: the
    // other peers' once they are connected, peer 0's once the connection opened.
    void pin_extra_paths();
    void pin_peer_paths();
    // Each side's memory region (the setup's `memory`).
    void register_memory();
    // The fabric towards the peer a DUT frame is addressed to.
    fabric::fabric* fabric_to(const trace::record& r);
    // The DUT's data on PathID p (its first frame there) goes on fabric path p.
    void pin_dut_port(const trace::record& r);
    // What impairment i (program::impair) did, summed over every path and
    // direction it stands on, in every peer's fabric.
    fabric::stage_counters impairment_counters(std::size_t i) const;

    // The engine's side of the case, set up.
    struct extra_peer {
        endpoint::address addr;
        std::unique_ptr<fabric::fabric> fab;
        std::unique_ptr<endpoint::endpoint> ep;
        std::uint32_t conn = 0;
    };
    std::unique_ptr<fabric::fabric> fab;
    std::unique_ptr<endpoint::endpoint> peer;
    std::vector<extra_peer> extra;  // peers 1..N-1 (topology.peers)
    endpoint::config peer_cfg, dut_cfg;
    endpoint::address dut_addr, peer_addr;
    std::uint32_t dut_conn = 0, peer_conn = 0, dut_rkey = 0, peer_rkey = 0;
    std::size_t mem_size = 0;

private:
    const program& p_;
    sim::scheduler& s_;
    dut::dut& dut_;
    std::uint64_t seed_;
    fabric::fabric_config fc_;
    std::map<unsigned, std::uint16_t> dut_pinned_;
    struct stage_at {
        fabric::direction d;
        unsigned path;
        std::size_t index;  // in the path's stages
    };
    std::vector<std::vector<stage_at>> impair_at_;  // per impairment
};

}  // namespace mrct::run::detail
