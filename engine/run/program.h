// A test case compiled into a typed program (issue 23 item 1): the plan's
// actions declared once (name, arguments with type, range, default, one line
// of doc), and compile(), which checks a case against every declaration it
// touches (actions, topology, limits, dut/peer settings, impairments,
// triggers, assertions) and turns it into typed operations. `mrct validate`
// is compile() over every case; the runner executes what it returns and
// never reads the plan's text again. docs/plan-format.md's action table is
// generated from the declarations (`mrct docs actions`).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "core/units.h"
#include "fabric/fabric.h"
#include "plan/plan.h"
#include "run/keys.h"
#include "trace/match.h"
#include "trace/trace.h"

namespace mrct::run {

// ------------------------------------------------------------ declarations
struct arg_decl {
    enum class kind {
        count,     // an unsigned integer up to `max` (decimal; `hex` also 0x...)
        duration,  // 200us; multiplied by --time-scale
        choice,    // one of `choices` ("dut|peer")
        peer,      // a peer number below topology.peers, or `all`
        fabric_path,  // a fabric path of the case, below the larger num_paths
        conn_path,    // a PathID of the connection, below the smaller num_paths
        step,         // another step of the case
        match,        // match.FIELD: trace/match.h
    };
    std::string_view name;
    kind type;
    std::string_view def;  // as a plan writes it; empty: none (or: depends, see doc)
    std::uint64_t max = 0;  // count, fabric_path, conn_path, step
    std::string_view what = {};  // count: "a Tag, 0..65535"
    std::string_view choices = {};
    bool required = false;
    bool hex = false;
    std::string_view doc = {};
};
struct action_decl {
    std::string_view name;
    std::vector<arg_decl> args;
    std::string_view doc;
    bool in_handshake = false;  // a wire filter: may act before the connection opens
    bool in_setup = true;
    bool in_steps = true;
    bool free_fields = false;  // inject: its fields are peer/craft.h's
};
const std::vector<action_decl>& action_decls();
const action_decl* find_action(std::string_view name);
// The action table of docs/plan-format.md.
std::string actions_markdown();

// ------------------------------------------------------------ operations
struct post_op {
    enum class kind { send, write, recv } k;
    bool on_dut;  // `side`, or by default the data sender (Sends, Writes) or receiver (receives)
    std::uint16_t stream = 0, tag = 1;
    std::uint32_t size = 4096, count = 1;
    std::optional<std::uint32_t> imm;
    std::optional<std::uint32_t> offset;  // post_write at this offset of the other side's region
    unsigned peer = 0;                    // post_write from peer K
    bool all_peers = false;               // post_write: `peer: all`
};
struct memory_op {
    std::uint64_t size;
};
struct close_op {
    bool on_dut;
};
struct path_op {  // fail_path, restore_path
    bool fail;
    unsigned path;
    bool to_peer, to_dut;
};
struct filter_op {  // drop, duplicate, delay, mark_ce
    enum class kind { drop, duplicate, delay, mark_ce } k;
    trace::dir d = trace::dir::from_dut;
    std::uint32_t count = 1, skip = 0;  // count 0: unlimited
    std::optional<core::nanos> for_;
    core::nanos by{0};
    trace::field_map match;
};
std::string_view filter_name(filter_op::kind k);
struct skew_op {
    unsigned path;  // PathID
    core::nanos add;
};
struct move_port_op {
    unsigned path;
};
struct lift_op {
    int step;
};
struct inject_op {
    std::map<std::string, std::string> fields;  // peer/craft.h
};
using op = std::variant<post_op, memory_op, close_op, path_op, filter_op, skew_op, move_port_op, lift_op, inject_op>;

struct compiled_action {
    std::string_view name;  // its declaration's
    plan::loc at;
    op o;
    bool needs_agent = false;  // a call to the DUT's agent: the DUT's posts, closing its connection
};
struct compiled_trigger {
    trace::dir d;
    trace::field_map match;
    unsigned nth;
    core::nanos after{0};  // the step runs this long after the frame
};
struct compiled_step {
    plan::loc at;
    std::optional<core::nanos> time;  // `at:`, from the case's time 0
    std::optional<compiled_trigger> on;
    std::vector<compiled_action> actions;
    bool needs_agent = false;  // any action does
    // Every action sets a filter (drop, duplicate, delay, mark_ce): a step
    // triggered with no `after` then takes effect at once, before the next
    // frame either way, even one sent in the same turn (D131).
    bool filters_only() const {
        if (actions.empty()) return false;
        for (const auto& a : actions)
            if (!std::holds_alternative<filter_op>(a.o)) return false;
        return true;
    }
};
struct impairment {
    fabric::stage_spec spec;
    bool to_peer, to_dut;
    std::optional<unsigned> path;  // none: every path
    plan::loc at;
};
struct program {
    case_topology topology;
    case_limits limits;
    // The endpoint settings (endpoint/config.h): topology.paths as num_paths,
    // then the case's own. The DUT's include `bug`.
    std::map<std::string, std::string> dut_config, peer_config;
    std::vector<impairment> impair;
    bool dut_sends = true;  // the data sender opens the connection: the DUT unless role is sender
    std::uint64_t memory = 8u << 20;  // each side's region (the setup's `memory`)
    std::vector<compiled_action> handshake, setup;
    std::vector<compiled_step> steps;
};

// Match or inject fields as "k=v, k=v" (describe, the trace's action notes).
std::string fields_text(const std::map<std::string, std::string>& fields);

// What an operation does, every value written out (defaults included):
// "post_send from the peer: 1 x 8192 bytes, stream 1, tag 8" (mrct explain).
std::string describe(const compiled_action& a);
std::string describe(const filter_op& f);

// Compiles `c`. Every problem goes to `error` with its position; the program
// is whole only when none was reported. `action_bytes`: the most one post or
// region may take (plan::limits; the runner compiles validated cases without it).
using compile_error = key_error;
program compile(const plan::test_case& c, std::uint64_t action_bytes, const compile_error& error);

}  // namespace mrct::run
