// The multi-path fabric between two endpoints, A and B.
//
// Each direction has N paths (up to 256); each path is a chain of stages. A
// frame picks its path by its UDP source port, as ECMP does: a port pinned to a
// path goes there, any other port is hashed (seeded). So when an endpoint moves
// a path to a new source port, its traffic moves to another fabric path.
#pragma once

#include <array>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "fabric/stage.h"
#include "sim/scheduler.h"

namespace mrct::fabric {

enum class direction : std::uint8_t { a_to_b = 0, b_to_a = 1 };

struct stage_spec {
    std::string kind;
    param_map params;
    auto operator<=>(const stage_spec&) const = default;
};

struct fabric_config {
    unsigned paths = 8;
    std::uint64_t seed = 1;
    // Stages per path and direction; a path with no entry gets `default_stages`.
    std::vector<stage_spec> default_stages = {{"delay", {{"delay", "2us"}}}};
    std::map<unsigned, std::vector<stage_spec>> path_stages_ab, path_stages_ba;
};

class path {
public:
    path(sim::scheduler& s, packet_pool& pool, std::vector<std::unique_ptr<stage>> stages,
         std::function<void(handle)> deliver);
    void send(handle h);
    // Ingress switch for plan steps ("fail path 3"): a failed path drops everything.
    void set_failed(bool f) { failed_ = f; }
    bool failed() const { return failed_; }
    std::uint64_t delivered() const { return delivered_; }
    std::uint64_t dropped_failed() const { return dropped_failed_; }
    const std::vector<std::unique_ptr<stage>>& stages() const { return stages_; }
    stage* find(std::string_view kind) const;

private:
    void run_from(std::size_t first);
    void wake();
    void rearm();

    sim::scheduler& s_;
    packet_pool& pool_;
    std::vector<std::unique_ptr<stage>> stages_;
    std::function<void(handle)> deliver_;
    sim::timer timer_;
    std::vector<handle> a_, b_;  // reused burst buffers
    bool failed_ = false;
    std::uint64_t delivered_ = 0, dropped_failed_ = 0;
};

class fabric {
public:
    using receiver = std::function<void(core::bytes_view frame, const packet_meta& meta)>;

    // `pool`, if given, is shared with other fabrics and must outlive them:
    // many fabrics then draw on one set of warm buffers instead of each
    // keeping its own (mrct simulate gives each sender a fabric).
    static core::result<std::unique_ptr<fabric>> create(sim::scheduler& s, const fabric_config& cfg,
                                                        packet_pool* pool = nullptr);

    void set_receiver(direction d, receiver r) { receivers_[static_cast<int>(d)] = std::move(r); }
    // Injects a frame now; it travels the path its UDP source port maps to.
    // `stamp` rides along in its packet_meta, untouched, to the receiver.
    void send(direction d, core::bytes_view frame, std::int64_t stamp = 0);
    // The same, taking the frame's bytes without a copy (packet_pool::adopt);
    // `frame` comes back holding another buffer with an earlier packet's
    // leftover bytes, for the caller to overwrite. A name of its own, so that
    // no caller hands over its buffer by accident.
    void send_owned(direction d, core::byte_buffer& frame);
    void pin(std::uint16_t sport, unsigned path_index);
    unsigned path_of(std::uint16_t sport) const;
    path& at(direction d, unsigned index) { return *paths_[static_cast<int>(d)][index]; }
    unsigned size() const { return cfg_.paths; }
    packet_pool& pool() { return pool_; }
    std::uint64_t sent() const { return sent_; }

    // How deep deliveries nest before the scheduler takes over (deliver()).
    static constexpr unsigned k_max_nesting = 16;

private:
    fabric(sim::scheduler& s, const fabric_config& cfg, packet_pool* pool);
    void inject(direction d, std::uint16_t sport, handle h, std::int64_t stamp = 0);
    std::size_t pin_slot(std::uint16_t sport) const;
    sim::scheduler& s_;
    fabric_config cfg_;
    std::unique_ptr<packet_pool> own_pool_;
    packet_pool& pool_;
    std::array<std::vector<std::unique_ptr<path>>, 2> paths_;
    std::array<receiver, 2> receivers_;
    // A few ports per endpoint and path, sorted: cheaper to search than a hash.
    std::vector<std::pair<std::uint16_t, unsigned>> pins_;
    std::uint64_t ecmp_seed_;
    std::uint64_t sent_ = 0;
    // Paths that hold nothing (no delay stage, or delay 0) deliver from
    // inside the sender's call, as a wire with no latency would; a receiver
    // that answers at once nests one delivery in another. Past
    // k_max_nesting deliveries deep, the frame reaches its receiver from the
    // scheduler at the same instant instead: a zero-delay topology otherwise
    // recursed once per frame (a 16 MiB WRITE overflowed the stack). Below
    // it nothing changes: deferring every nested delivery turned the
    // engine's sends on a real wire into bursts that overflowed
    // mrct-refnic's socket (bench/wire_rate.py: 7,700 resends instead of 48).
    void deliver(direction d, handle h);
    void hand_over(direction d, handle h);  // to the receiver, counted in delivering_
    void deliver_deferred();
    unsigned delivering_ = 0;
    std::vector<std::pair<direction, handle>> deferred_;
    sim::timer deferred_timer_{s_};
};

// The UDP source port of an Ethernet/IP/UDP frame, or 0.
std::uint16_t frame_sport(core::bytes_view frame);

}  // namespace mrct::fabric
