// Impairment stages (STYLE habit 6).
//
// A stage takes bursts of packet handles and either passes a packet on at once,
// holds it (delay lines, queues) and releases it from poll() when due, or drops
// it (counted). Each stage draws from its own named random stream, so adding a
// stage never changes another stage's numbers. The interface is batch-shaped and
// clock-agnostic so that the same stages can run in the simulator (a path arms a
// scheduler event at next_event()) or in a DPDK polling loop.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/rng.h"
#include "core/time.h"
#include "fabric/packet_pool.h"
#include "fabric/params.h"

namespace mrct::fabric {

struct stage_counters {
    std::uint64_t in = 0, out = 0, dropped = 0, marked = 0, duplicated = 0, corrupted = 0, delayed = 0;
    stage_counters& operator+=(const stage_counters& o) {
        in += o.in;
        out += o.out;
        dropped += o.dropped;
        marked += o.marked;
        duplicated += o.duplicated;
        corrupted += o.corrupted;
        delayed += o.delayed;
        return *this;
    }
};

class stage {
public:
    stage(packet_pool& pool, core::rng r) : pool_(pool), rng_(r) {}
    virtual ~stage() = default;
    virtual std::string_view kind() const = 0;
    // Takes ownership of `in`; appends what leaves at once to `out`.
    virtual void push(core::nanos now, std::span<const handle> in, std::vector<handle>& out) = 0;
    // Appends held packets due at or before `now` to `out`.
    virtual void poll(core::nanos /*now*/, std::vector<handle>& /*out*/) {}
    // When poll() next has something to release.
    virtual core::nanos next_event() const { return core::k_never; }

    const stage_counters& counters() const { return c_; }

protected:
    void drop(handle h) {
        ++c_.dropped;
        pool_.release(h);
    }
    void pass(handle h, std::vector<handle>& out) {
        ++c_.out;
        out.push_back(h);
    }
    packet_pool& pool_;
    core::rng rng_;
    stage_counters c_;
};

// The built-in stages, by kind, with their declared parameters.
struct stage_kind {
    std::string kind;
    std::string doc;
    std::vector<param_decl> decls;
    std::unique_ptr<stage> (*make)(packet_pool&, core::rng, const fabric::params&);
};
const std::vector<stage_kind>& builtin_stages();
const stage_kind* find_stage_kind(std::string_view kind);

// A stage kind with its parameters validated: what many stages of one
// configuration are built from (a fabric of 256 paths parses its stage list
// once, not once per path).
struct stage_recipe {
    const stage_kind* kind = nullptr;
    fabric::params params;
};
// Validates parameters: unknown kind or parameter, malformed or out-of-range values.
core::result<stage_recipe> stage_recipe_of(std::string_view kind, const param_map& given);
// Builds a stage; `rng` should be the stage's own named stream (e.g. rng(seed, "ab/path3/loss")).
std::unique_ptr<stage> make_stage(const stage_recipe& recipe, packet_pool& pool, core::rng rng);
// Both of the above.
core::result<std::unique_ptr<stage>> make_stage(std::string_view kind, const param_map& given, packet_pool& pool,
                                                core::rng rng);

// Sets IP ECN to CE on an ECT packet (IPv4 checksum fixed); false if not ECT or not IP.
bool mark_ce(std::span<std::uint8_t> frame);

// Markdown reference of every stage and parameter (docs/fabric.md is generated from it).
std::string stages_markdown();

}  // namespace mrct::fabric
