// The traffic emulator's bump in the wire (issue 24, docs/emulator.md): two
// ports between two DUTs, MetaRoCE frames between them passed through the
// same fabric stages as the engine's (per path by UDP source port), every
// other frame (ARP, neighbour discovery) passed on at once, untouched.
//
//   bump      the forwarding core on a scheduler: clock-agnostic, so unit
//             tests drive it in virtual time and `mrct emulate` in real time;
//   run()     the real-time program: two tap ports (netio), the real-time
//             driver, a capture of each port's wire, live progress, and a
//             summary with per-path counters and the delay the stages meant
//             against the delay frames really had.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "fabric/fabric.h"
#include "sim/scheduler.h"

namespace mrct::emulate {

// The two ports: frames from port A travel the fabric's A->B direction.
enum class side : std::uint8_t { a = 0, b = 1 };

// How frames pick a fabric path by their UDP source port.
enum class select_mode : std::uint8_t {
    hash,   // ECMP: a seeded hash of the port (a moved port lands elsewhere, as in a switch)
    learn,  // each side's k-th new source port is pinned to path k mod paths, in order of first sight
};

// The emulator's configuration (a YAML file, docs/emulator.md): the fabric's
// paths and stages in the plan's topology syntax.
struct config {
    fabric::fabric_config fabric;
    select_mode select = select_mode::hash;
    std::map<std::uint16_t, unsigned> pins;  // source port -> path, before `select`
};
core::result<config> load_config(const std::string& path);
// `name` is the file name errors cite (file:line:col).
core::result<config> parse_config(const std::string& yaml_text, const std::string& name);
// A configuration with every path a plain wire (no stage): what `mrct
// emulate` runs without --config.
config plain_config(unsigned paths = 8);

// A histogram of nanosecond figures, 100 ns buckets up to 10 ms: median and
// p99 without keeping every sample.
class histogram {
public:
    void add(std::int64_t ns);
    std::uint64_t count() const { return n_; }
    std::int64_t max() const { return max_; }
    std::int64_t min() const { return n_ ? min_ : 0; }
    // The q-quantile (0..1), to the bucket's upper edge; beyond 10 ms, the maximum.
    std::int64_t quantile(double q) const;
    static constexpr std::int64_t k_bucket_ns = 100, k_buckets = 100'000;

private:
    std::vector<std::uint64_t> b_;
    std::uint64_t n_ = 0, over_ = 0;
    std::int64_t max_ = 0, min_ = 0;
};

struct path_counters {
    std::uint64_t in = 0, out = 0, bytes_out = 0;
    fabric::stage_counters stages;  // summed over the path's stages
    std::uint64_t failed = 0;       // dropped while the path was failed
};

class bump {
public:
    // Where a frame leaves: toward side `to`'s port. `stamp` is the stamp the
    // frame came in with; `meta` is null for a frame that bypassed the fabric.
    using sink = std::function<void(side to, core::bytes_view frame, std::int64_t stamp, const fabric::packet_meta* meta)>;
    static core::result<std::unique_ptr<bump>> create(sim::scheduler& s, const config& cfg, sink out);

    // A frame that came in on `from`'s port, with its receive stamp.
    void receive(side from, core::bytes_view frame, std::int64_t stamp);

    // A MetaRoCE frame: UDP to 4791 over IPv4 or IPv6; sport and the source
    // address (text) filled in.
    static bool is_metaroce(core::bytes_view frame, std::uint16_t* sport = nullptr, std::string* src = nullptr);

    unsigned paths() const { return fab_->size(); }
    path_counters counters(side from, unsigned path) const;
    std::uint64_t other_frames(side from) const { return other_[static_cast<int>(from)]; }
    // The MetaRoCE source addresses seen on each side's port: which DUT is where.
    const std::set<std::string>& addresses(side s) const { return addrs_[static_cast<int>(s)]; }
    // Source ports each side used, with the path each took.
    std::map<std::uint16_t, unsigned> ports(side s) const;
    fabric::fabric& fab() { return *fab_; }

private:
    bump(sim::scheduler& s, const config& cfg, sink out) : s_(s), cfg_(cfg), out_(std::move(out)) {}
    sim::scheduler& s_;
    config cfg_;
    sink out_;
    std::unique_ptr<fabric::fabric> fab_;
    std::array<std::vector<std::uint64_t>, 2> in_, out_n_, out_bytes_;
    std::array<std::uint64_t, 2> other_{};
    std::array<std::set<std::string>, 2> addrs_;
    std::array<std::map<std::uint16_t, unsigned>, 2> seen_ports_;
    std::array<unsigned, 2> learned_{};
};

// The real-time program (`mrct emulate`).
struct options {
    std::string port_a, port_b;  // "pcap:IFACE", "IFACE" or "dpdk:PORT" (index or device name)
    std::string eal;             // dpdk: ports: the EAL arguments (e.g. "-l 1 --vdev=net_memif0,...")
    config cfg;
    std::string out;             // folder for port-a.pcap, port-b.pcap, emulate.json ("" : none)
    bool capture = true;
    bool busy_poll = false;      // never sleep: one core spins, frames and timers are not late by a wake-up
    std::int64_t duration_ns = 0;        // 0: until stopped
    std::int64_t progress_ns = 1'000'000'000;  // live progress period; 0: none
    std::function<void(const std::string&)> say;  // progress lines
    const std::atomic<bool>* stop = nullptr;      // set (a signal) to end the run
};

// Runs until the duration passes or *stop is set; the summary (also written
// to OUT/emulate.json).
core::result<nlohmann::ordered_json> run(const options& o);

// One human-readable block of the summary.
std::string summary_text(const nlohmann::ordered_json& j);

}  // namespace mrct::emulate
