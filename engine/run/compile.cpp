// The compiler: a case's text against the declarations it touches, into a
// typed program (run/program.h).
#include <algorithm>

#include "assertions/assertion.h"
#include "core/text.h"
#include "endpoint/config.h"
#include "fabric/stage.h"
#include "peer/craft.h"
#include "run/clauses.h"
#include "run/program.h"

namespace mrct::run {

namespace {
using ak = arg_decl::kind;
constexpr std::uint64_t k_u32 = 0xFFFFFFFF;

// Arguments several actions share.
const arg_decl k_stream{"stream", ak::count, "0", 0xFFFF, "a StreamID, 0..65535"};
const arg_decl k_tag{"tag", ak::count, "1", 0xFFFF, "a Tag, 0..65535"};
const arg_decl k_size{"size", ak::count, "4096", k_u32, "a message length, 0..4294967295 bytes"};
const arg_decl k_count{"count", ak::count, "1", k_u32, "a count, 0..4294967295", {}, false, false, "messages, each its own work request"};
const arg_decl k_imm{"imm", ak::count, "", k_u32, "32-bit immediate data, decimal or 0x hex", {}, false, true};
const arg_decl k_sender_side{"side", ak::choice, "", 0, {}, "dut|peer", false, false, "default: the data sender"};
const arg_decl k_receiver_side{"side", ak::choice, "", 0, {}, "dut|peer", false, false, "default: the data receiver"};
const arg_decl k_wire_path_dir{"dir", ak::choice, "both", 0, {}, "to_peer|to_dut|both"};
const arg_decl k_fabric_path{"path", ak::fabric_path, "", 255, "a path number, 0..255", {}, true};
const std::vector<arg_decl> k_filter_args{
    {"dir", ak::choice, "from_dut", 0, {}, "from_dut|to_dut"},
    {"count", ak::count, "1", k_u32, "a count, 0..4294967295", {}, false, false, "0 = unlimited"},
    {"skip", ak::count, "0", k_u32, "a count, 0..4294967295", {}, false, false, "matching frames let through first"},
    {"for", ak::duration, "", 0, {}, {}, false, false, "the filter ends this long after its step"},
    {"match", ak::match, "", 0, {}, {}, false, false, "match.FIELD: the frames it acts on"},
};
std::vector<arg_decl> filter_args(std::vector<arg_decl> more = {}) {
    auto a = k_filter_args;
    a.insert(a.end(), more.begin(), more.end());
    return a;
}

}  // namespace

const std::vector<action_decl>& action_decls() {
    static const std::vector<action_decl> t{
        {"post_write",
         {k_sender_side, k_stream, k_size, k_count, k_imm,
          {"offset", ak::count, "", k_u32, "a byte offset, 0..4294967295", {}, false, false,
           "at this offset of the other side's region, possibly out of bounds: no memory expectation"},
          {"peer", ak::peer, "0", 0, {}, {}, false, false, "`K` or `all`, with several peers"}},
         "WRITE(s) into the other side's region at its next free offset; the bytes are a seeded pattern and are "
         "compared after the run"},
        {"post_send", {k_sender_side, k_stream, k_tag, k_size, k_count, k_imm}, "SEND(s) on a tag"},
        {"post_recv", {k_receiver_side, k_tag, k_size, k_count}, "receive(s) on a tag"},
        {"memory",
         {{"size", ak::count, "8388608", k_u32, "a region size, 0..4294967295 bytes"}},
         "region size on both sides",
         false, true, false},
        {"close", {{"side", ak::choice, "", 0, {}, "dut|peer", false, false, "default: the data sender"}},
         "close the connection (CLOSE once everything is acknowledged)"},
        {"fail_path", {k_fabric_path, k_wire_path_dir}, "fabric path down: everything routed to it is dropped"},
        {"restore_path", {k_fabric_path, k_wire_path_dir}, "fabric path up again"},
        {"drop", filter_args(), "drop matching frames: the next `count` after `skip`, while `for` lasts", true},
        {"duplicate", filter_args(), "send matching frames twice", true},
        {"delay", filter_args({{"by", ak::duration, "0", 0, {}, {}, false, false, "how long"}}), "hold matching frames", true},
        {"mark_ce", filter_args(), "set CE on matching frames (IPv4 checksum fixed; ECN is outside the ICRC)", true},
        {"skew",
         {{"path", ak::conn_path, "0", 255, "a path number, 0..255", },
          {"add", ak::duration, "0", 0, {}, {}, false, false, "the delay added"}},
         "delay every frame of a PathID, both directions"},
        {"move_port",
         {{"path", ak::conn_path, "0", 255, "a path number, 0..255", }},
         "the peer moves its path to a new source port, PathEpoch + 1 (changing its entropy on cue)"},
        {"lift",
         {{"step", ak::step, "", 0xFFFF, "a step number, 0..65535", {}, true, false, "numbered from 0"}},
         "end the `drop`/`duplicate`/`delay`/`mark_ce` filters that step installed: a drop that lasts until a frame is "
         "seen (`on:`), where a fixed `for:` would depend on the DUT's timing (PATH-013)",
         false, false, true},
        {"inject", {}, "a crafted packet from the peer, straight onto the DUT's wire (fields: below)", false, true, true, true},
    };
    return t;
}

const action_decl* find_action(std::string_view name) {
    for (const auto& d : action_decls())
        if (d.name == name) return &d;
    return nullptr;
}

std::string_view filter_name(filter_op::kind k) {
    switch (k) {
    case filter_op::kind::drop: return "drop";
    case filter_op::kind::duplicate: return "duplicate";
    case filter_op::kind::delay: return "delay";
    case filter_op::kind::mark_ce: return "mark_ce";
    }
    return "?";
}

std::string actions_markdown() {
    std::string out = "| action | arguments | where | does |\n|---|---|---|---|\n";
    for (const auto& d : action_decls()) {
        std::vector<std::string> args;
        for (const auto& a : d.args) {
            std::string s = "`" + std::string(a.name) + "`";
            std::vector<std::string> notes;
            if (a.required) notes.push_back("required");
            switch (a.type) {
            case ak::count: notes.push_back(std::string(a.what)); break;
            case ak::duration: notes.push_back("duration"); break;
            case ak::choice: notes.push_back("`" + core::join(core::split(a.choices, "|"), "`, `") + "`"); break;
            case ak::peer: notes.push_back("a peer number or `all`"); break;
            case ak::fabric_path: notes.push_back("a fabric path of the case"); break;
            case ak::conn_path: notes.push_back("a PathID of the connection"); break;
            case ak::step: notes.push_back("another step of the case"); break;
            case ak::match: break;
            }
            if (!a.def.empty()) notes.push_back("default `" + std::string(a.def) + "`");
            if (!a.doc.empty()) notes.push_back(std::string(a.doc));
            if (!notes.empty()) s += " (" + core::join(notes, "; ") + ")";
            args.push_back(s);
        }
        if (d.free_fields) args.push_back("see below");
        std::vector<std::string> where;
        if (d.in_handshake) where.push_back("handshake");
        if (d.in_setup) where.push_back("setup");
        if (d.in_steps) where.push_back("steps");
        out += "| `" + std::string(d.name) + "` | " + core::join(args) + " | " + core::join(where) + " | " + std::string(d.doc) + " |\n";
    }
    return out;
}

namespace {
std::string side_text(bool on_dut) { return on_dut ? "the DUT" : "the peer"; }
}  // namespace

std::string fields_text(const std::map<std::string, std::string>& fields) {
    std::vector<std::string> kv;
    for (const auto& [k, v] : fields) kv.push_back(k + "=" + v);
    return core::join(kv);
}

std::string describe(const filter_op& f) {
    std::string s = std::string(filter_name(f.k)) + " frames " + (f.d == trace::dir::from_dut ? "from" : "to") + " the DUT" +
                    (f.match.empty() ? "" : " matching " + fields_text(f.match)) + ": " +
                    (f.count ? "the next " + std::to_string(f.count) : std::string("every one"));
    if (f.skip) s += " after " + std::to_string(f.skip);
    if (f.for_) s += ", for " + core::duration_text(f.for_->count());
    if (f.k == filter_op::kind::delay) s += ", by " + core::duration_text(f.by.count());
    return s;
}

std::string describe(const compiled_action& a) {
    struct visitor {
        std::string operator()(const post_op& p) const {
            const bool recv = p.k == post_op::kind::recv;
            std::string s = std::string(recv ? "post_recv on " : p.k == post_op::kind::send ? "post_send from " : "post_write from ") +
                            (p.k == post_op::kind::write && !p.on_dut
                                 ? (p.all_peers ? std::string("every peer") : p.peer ? "peer " + std::to_string(p.peer) : std::string("the peer"))
                                 : side_text(p.on_dut)) +
                            ": " + std::to_string(p.count) + " x " + std::to_string(p.size) + " bytes";
            if (!recv) s += ", stream " + std::to_string(p.stream);
            if (p.k != post_op::kind::write) s += ", tag " + std::to_string(p.tag);
            if (p.imm) s += ", immediate " + std::to_string(*p.imm);
            if (p.offset) s += ", at offset " + std::to_string(*p.offset) + " (no memory expectation)";
            return s;
        }
        std::string operator()(const memory_op& m) const { return "memory: " + std::to_string(m.size) + " bytes on each side"; }
        std::string operator()(const close_op& c) const { return "close by " + side_text(c.on_dut); }
        std::string operator()(const path_op& p) const {
            return std::string(p.fail ? "fail_path " : "restore_path ") + std::to_string(p.path) + ", " +
                   (p.to_peer && p.to_dut ? "both directions" : p.to_peer ? "towards the peer" : "towards the DUT");
        }
        std::string operator()(const filter_op& f) const { return describe(f); }
        std::string operator()(const skew_op& k) const {
            return "skew PathID " + std::to_string(k.path) + " by " + core::duration_text(k.add.count()) + ", both directions";
        }
        std::string operator()(const move_port_op& m) const { return "move_port: the peer moves PathID " + std::to_string(m.path); }
        std::string operator()(const lift_op& l) const { return "lift the filters of step " + std::to_string(l.step); }
        std::string operator()(const inject_op& j) const { return "inject " + fields_text(j.fields); }
    };
    return std::visit(visitor{}, a.o);
}

namespace {

// One case's compilation: its context (paths, peers, steps) and its errors.
class compiler {
public:
    compiler(const plan::test_case& c, std::uint64_t action_bytes, const compile_error& e)
        : c_(c), action_bytes_(action_bytes), e_(e) {}

    program run();

private:
    void endpoints();
    void impairments();
    std::optional<compiled_action> action(const plan::action& a, int step);
    // The value of a declared argument: the plan's, or the default.
    const plan::arg* given(const plan::action& a, const arg_decl& d) const {
        const auto it = a.a.find(std::string(d.name));
        return it == a.a.end() ? nullptr : &it->second;
    }
    std::optional<std::uint64_t> number(const plan::action& a, const arg_decl& d, bool& ok);
    bool check_dir(const std::string& what, const plan::arg& v, const std::vector<std::string>& allowed) {
        if (std::find(allowed.begin(), allowed.end(), v.text) != allowed.end()) return true;
        e_(v.at, what + ": dir must be one of " + core::join(allowed) + ", got '" + v.text + "'");
        return false;
    }

    const plan::test_case& c_;
    std::uint64_t action_bytes_;
    const compile_error& e_;
    program p_;
    unsigned fabric_paths_ = 0;  // the larger num_paths; 0 when one is not a number (reported elsewhere)
    unsigned conn_paths_ = 0;    // NumPaths both sides agree on: the smaller offer (MR-CONN-1)
};

void compiler::endpoints() {
    // topology.paths sets both sides' NumPaths; dut/peer num_paths override;
    // the fabric has the larger.
    p_.dut_config["num_paths"] = p_.peer_config["num_paths"] = std::to_string(p_.topology.paths);
    for (const auto* e : plan::in_file_order(c_.dut)) {  // errors in the order they stand
        const auto& [k, v] = *e;
        p_.dut_config[k] = v.text;
        if (k != "bug") {
            endpoint::config tmp;
            if (auto st = endpoint::config_set(tmp, k, v.text); !st) e_(v.at, "dut: " + st.err().message);
        } else if (auto b = endpoint::bug_by_name(v.text); !b) {
            e_(v.at, "dut.bug: " + b.err().message);  // a plan that names a bug profile must name a real one
        }
    }
    for (const auto* e : plan::in_file_order(c_.peer)) {
        const auto& [k, v] = *e;
        p_.peer_config[k] = v.text;
        endpoint::config tmp;
        if (auto st = endpoint::config_set(tmp, k, v.text); !st) e_(v.at, "peer: " + st.err().message);
    }
    auto num = [](const std::string& t) { return core::parse_count(t).value_or(0); };
    const unsigned d = num(p_.dut_config["num_paths"]), p = num(p_.peer_config["num_paths"]);
    fabric_paths_ = d && p ? std::max(d, p) : 0;
    conn_paths_ = d && p ? std::min(d, p) : 0;
}

void compiler::impairments() {
    for (const auto& imp : c_.impair) {
        const std::string what = "impair '" + imp.name + "'";
        impairment m{{imp.name, {}}, true, false, std::nullopt, imp.at};
        if (const auto it = imp.a.find("dir"); it != imp.a.end() && check_dir(what, it->second, {"to_peer", "to_dut", "both"})) {
            m.to_peer = it->second.text != "to_dut";
            m.to_dut = it->second.text != "to_peer";
        }
        if (const auto it = imp.a.find("path"); it != imp.a.end() && it->second.text != "all") {
            const auto& t = it->second.text;
            const auto n = core::parse_count(t);
            if (!n)
                e_(it->second.at, what + ": path must be a fabric path number or all, got '" + t + "'");
            else if (fabric_paths_ && *n >= fabric_paths_)
                e_(it->second.at, what + ": no fabric path " + t + " (this case's fabric has paths 0.." +
                                      std::to_string(fabric_paths_ - 1) + ")");
            else
                m.path = *n;
        }
        for (const auto& [k, v] : imp.a)
            if (k != "path" && k != "dir") m.spec.params[k] = v.text;
        fabric::packet_pool pool;
        if (auto st = fabric::make_stage(imp.name, m.spec.params, pool, core::rng(1)); !st) e_(imp.at, st.err().message);
        p_.impair.push_back(std::move(m));
    }
}

std::optional<std::uint64_t> compiler::number(const plan::action& a, const arg_decl& d, bool& ok) {
    const auto* v = given(a, d);
    if (!v) return d.def.empty() ? std::nullopt : core::parse_uint(std::string(d.def), d.max, d.hex);
    const auto n = core::parse_uint(v->text, d.max, d.hex);
    if (!n) {
        e_(v->at, std::string(a.name) + ": '" + std::string(d.name) + "' expects " + std::string(d.what) + ", got '" +
                      v->text + "'");
        ok = false;
    }
    return n;
}

std::optional<compiled_action> compiler::action(const plan::action& a, int step) {
    const auto* decl = find_action(a.name);
    if (!decl) {
        std::vector<std::string> all;
        for (const auto& d : action_decls()) all.emplace_back(d.name);
        e_(a.at, "unknown action '" + a.name + "' (expected one of: " + core::join(all) + ")");
        return std::nullopt;
    }
    bool ok = true;
    auto bad = [&](const plan::loc& at, const std::string& msg) {
        e_(at, msg);
        ok = false;
    };
    // Every argument is declared; match.* collected; inject's fields are craft's.
    plan::args match;
    for (const auto* e : plan::in_file_order(a.a)) {
        const auto& [k, v] = *e;
        if (decl->free_fields) {
            const auto& f = peer::craft_fields();
            if (std::find(f.begin(), f.end(), k) == f.end()) bad(v.at, "inject: unknown field '" + k + "'");
            continue;
        }
        const auto base = k.substr(0, k.find('.'));
        const arg_decl* d = nullptr;
        for (const auto& x : decl->args)
            if (x.name == base && (x.type == ak::match) == (k.size() > base.size())) d = &x;
        if (!d) {
            std::vector<std::string> names;
            for (const auto& x : decl->args) names.emplace_back(x.name);
            bad(v.at, a.name + ": unknown argument '" + k + "' (expected one of: " + core::join(names) + ")");
            continue;
        }
        switch (d->type) {
        case ak::match: match[k.substr(6)] = v; break;
        case ak::duration:
            if (!core::parse_duration_ns(v.text)) bad(v.at, a.name + ": '" + k + "' expects a duration");
            break;
        case ak::choice: {
            const auto allowed = core::split(d->choices, "|");
            if (std::find(allowed.begin(), allowed.end(), v.text) != allowed.end()) break;
            if (d->name == "side") bad(v.at, "side must be dut or peer");
            else check_dir(a.name, v, allowed), ok = false;
            break;
        }
        case ak::peer:
            if (v.text != "all") {
                const auto n = core::parse_count(v.text);
                if (!n)
                    bad(v.at, a.name + ": peer must be a peer number or all, got '" + v.text + "'");
                else if (p_.topology.peers && *n >= p_.topology.peers)  // 0: topology.peers is wrong (reported)
                    bad(v.at, a.name + ": no peer " + v.text + " (this case has peers 0.." +
                                  std::to_string(p_.topology.peers - 1) + ")");
            }
            break;
        default: break;  // numbers: below, where they are read
        }
    }
    for (const auto& d : decl->args)
        if (d.required && !given(a, d)) {
            if (d.type == ak::step)
                bad(a.at, a.name + ": '" + std::string(d.name) + "' is required (the number of the step whose filters end, from 0)");
            else
                bad(a.at, a.name + ": '" + std::string(d.name) + "' is required");
        }
    if (auto st = trace::check_match([&] {
            trace::field_map m;
            for (const auto& [k, v] : match) m[k] = v.text;
            return m;
        }());
        !st) {
        e_(match.begin()->second.at, st.err().message);
        ok = false;
    }

    // Typed values. A number out of its range was reported by number().
    auto arg_decl_of = [&](std::string_view n) -> const arg_decl& {
        for (const auto& x : decl->args)
            if (x.name == n) return x;
        throw std::logic_error("compile: no argument " + std::string(n) + " of " + a.name);
    };
    auto num = [&](std::string_view n) { return number(a, arg_decl_of(n), ok); };
    auto text = [&](std::string_view n) {
        const auto& d = arg_decl_of(n);
        const auto* v = given(a, d);
        return v ? v->text : std::string(d.def);
    };
    auto dur = [&](std::string_view n) -> std::optional<core::nanos> {
        const auto t = text(n);
        if (t.empty()) return std::nullopt;
        const auto ns = core::parse_duration_ns(t);
        return ns ? std::optional<core::nanos>(core::nanos{*ns}) : std::nullopt;
    };
    // Default side of a post: the data sender for Sends and Writes, the data
    // receiver for receives. With role `both`, the DUT sends and the peer
    // receives unless `side` says otherwise.
    auto on_dut = [&](bool sender_default) {
        const auto side = text("side");
        if (side.empty()) return sender_default ? c_.role != "sender" : c_.role == "sender";
        return side == "dut";
    };
    // A path number against the case's fabric or connection.
    auto path = [&](ak k) -> unsigned {
        const auto& d = arg_decl_of("path");
        const auto n = num("path");
        if (!n) return 0;
        const unsigned limit = k == ak::fabric_path ? fabric_paths_ : conn_paths_;
        if (limit && *n >= limit) {
            const auto* v = given(a, d);
            bad(v ? v->at : a.at, k == ak::fabric_path
                                      ? a.name + ": no fabric path " + std::to_string(*n) + " (this case's fabric has paths 0.." +
                                            std::to_string(limit - 1) + ")"
                                      : a.name + ": no path " + std::to_string(*n) + " (the connection has PathIDs 0.." +
                                            std::to_string(limit - 1) + ")");
        }
        return static_cast<unsigned>(*n);
    };
    // Bytes a post moves, or a region takes, are allocated before the case
    // runs: bounded (docs/plan-format.md, "Limits").
    auto bytes_bound = [&](std::uint64_t count, std::uint64_t size) {
        if (count > 0 && size > action_bytes_ / count)
            bad(a.at, a.name + ": " + std::to_string(count) + " x " + std::to_string(size) + " bytes is more than " +
                          std::to_string(action_bytes_) +
                          " bytes, the most one action may move or take (--plan-limit action_bytes=N raises it)");
    };

    compiled_action out{decl->name, a.at, memory_op{0}};
    const auto& n = a.name;
    if (n == "post_write" || n == "post_send" || n == "post_recv") {
        post_op p{n == "post_write" ? post_op::kind::write : n == "post_send" ? post_op::kind::send : post_op::kind::recv,
                  false};
        const bool recv = p.k == post_op::kind::recv;
        p.on_dut = on_dut(!recv);
        p.size = static_cast<std::uint32_t>(num("size").value_or(0));
        p.count = static_cast<std::uint32_t>(num("count").value_or(0));
        if (!recv) p.stream = static_cast<std::uint16_t>(num("stream").value_or(0));
        if (p.k != post_op::kind::write) p.tag = static_cast<std::uint16_t>(num("tag").value_or(0));
        if (!recv)
            if (const auto i = num("imm")) p.imm = static_cast<std::uint32_t>(*i);
        if (p.k == post_op::kind::write) {
            if (const auto o = num("offset")) p.offset = static_cast<std::uint32_t>(*o);
            const auto who = text("peer");
            p.all_peers = who == "all";
            if (!p.all_peers) p.peer = core::parse_count(who).value_or(0);
        }
        bytes_bound(p.count, p.size);
        out.needs_agent = p.on_dut;
        out.o = p;
    } else if (n == "memory") {
        const auto size = num("size").value_or(0);
        bytes_bound(1, size);
        out.o = memory_op{size};
    } else if (n == "close") {
        out.o = close_op{on_dut(true)};
        out.needs_agent = std::get<close_op>(out.o).on_dut;
    } else if (n == "fail_path" || n == "restore_path") {
        const auto dir = text("dir");  // checked above
        out.o = path_op{n == "fail_path", path(ak::fabric_path), dir != "to_dut", dir != "to_peer"};
    } else if (n == "drop" || n == "duplicate" || n == "delay" || n == "mark_ce") {
        filter_op f{n == "drop" ? filter_op::kind::drop : n == "duplicate" ? filter_op::kind::duplicate
                                                        : n == "delay"     ? filter_op::kind::delay
                                                                           : filter_op::kind::mark_ce};
        f.d = text("dir") == "to_dut" ? trace::dir::to_dut : trace::dir::from_dut;
        f.count = static_cast<std::uint32_t>(num("count").value_or(0));
        f.skip = static_cast<std::uint32_t>(num("skip").value_or(0));
        f.for_ = dur("for");
        if (f.k == filter_op::kind::delay) f.by = dur("by").value_or(core::nanos{0});
        for (const auto& [k, v] : match) f.match[k] = v.text;
        out.o = std::move(f);
    } else if (n == "skew") {
        out.o = skew_op{path(ak::conn_path), dur("add").value_or(core::nanos{0})};
    } else if (n == "move_port") {
        out.o = move_port_op{path(ak::conn_path)};
    } else if (n == "lift") {
        const auto* v = given(a, arg_decl_of("step"));
        if (v) {
            const auto s = core::parse_count(v->text);
            if (!s || *s >= c_.steps.size() || static_cast<int>(*s) == step)
                bad(v->at, "lift: step must be another step of this case, 0.." + std::to_string(c_.steps.size() - 1) +
                               ", got '" + v->text + "'");
            else
                out.o = lift_op{static_cast<int>(*s)};
        }
    } else if (n == "inject") {
        inject_op j;
        for (const auto& [k, v] : a.a) j.fields[k] = v.text;
        out.o = std::move(j);
    }
    if (!ok) return std::nullopt;
    return out;
}

program compiler::run() {
    for (std::size_t i = 0; i < c_.clauses.size(); ++i)
        if (!find_clause(c_.clauses[i])) e_(c_.clause_locs[i], "unknown clause ID '" + c_.clauses[i] + "'");
    validate_keys(topology_decls(), "topology", "topology key", c_.topology, e_);
    validate_keys(limit_decls(), "limits", "limit", c_.limits, e_);
    p_.topology = read_topology(c_.topology);
    p_.limits = read_limits(c_.limits);
    if (const auto it = c_.topology.find("peers"); it != c_.topology.end() && p_.topology.peers > 1 && c_.role != "sender")
        e_(it->second.at, "several peers need role: sender (they connect to the DUT)");
    p_.dut_sends = c_.role != "sender";
    endpoints();
    impairments();

    for (const auto& a : c_.handshake) {
        const auto* d = find_action(a.name);
        if (!d || !d->in_handshake) {
            std::vector<std::string> wire;
            for (const auto& x : action_decls())
                if (x.in_handshake) wire.emplace_back(x.name);
            const std::string last = wire.back();
            wire.pop_back();
            e_(a.at, "handshake: only " + core::join(wire) + " and " + last + " act on the wire before the connection opens, not '" +
                         a.name + "'");
            continue;
        }
        if (auto x = action(a, -2)) p_.handshake.push_back(std::move(*x));
    }
    for (const auto& a : c_.setup) {
        if (const auto* d = find_action(a.name); d && !d->in_setup) {
            e_(a.at, a.name == "lift" ? "lift: only a step can end another step's filters"
                                      : a.name + ": not an action of the setup");
            continue;
        }
        if (auto x = action(a, -1)) {
            if (const auto* m = std::get_if<memory_op>(&x->o)) p_.memory = m->size;
            p_.setup.push_back(std::move(*x));
        }
    }
    for (std::size_t si = 0; si < c_.steps.size(); ++si) {
        const auto& st = c_.steps[si];
        compiled_step s;
        s.at = st.at;
        if (st.time) {
            const auto t = core::parse_duration_ns(st.time->text);
            if (!t) e_(st.time->at, "at: expects a duration such as 200us, got '" + st.time->text + "'");
            else s.time = core::nanos{*t};
        }
        if (st.on) {
            compiled_trigger t{st.on->dir == "to_dut" ? trace::dir::to_dut : trace::dir::from_dut, {}, st.on->nth};
            if (st.on->after) {
                const auto a = core::parse_duration_ns(st.on->after->text);
                if (!a) e_(st.on->after->at, "after: expects a duration such as 2ms, got '" + st.on->after->text + "'");
                else t.after = core::nanos{*a};
            }
            for (const auto& [k, v] : st.on->match) t.match[k] = v.text;
            if (auto m = trace::check_match(t.match); !m)
                e_(st.on->match.empty() ? st.on->at : st.on->match.begin()->second.at, m.err().message);
            s.on = std::move(t);
        }
        for (const auto& a : st.actions) {
            if (const auto* d = find_action(a.name); d && !d->in_steps) {
                e_(a.at, a.name + ": only the setup sets the regions' size, not a step");
                continue;
            }
            if (auto x = action(a, static_cast<int>(si))) {
                s.needs_agent |= x->needs_agent;
                s.actions.push_back(std::move(*x));
            }
        }
        p_.steps.push_back(std::move(s));
    }
    for (const auto& x : c_.expect) {
        const auto* def = assertions::find(x.name);
        if (!def) {
            e_(x.at, "unknown assertion '" + x.name + "' (see `mrct docs assertions`)");
            continue;
        }
        std::map<std::string, std::string> args;
        for (const auto& [k, v] : x.a) args[k] = v.text;
        if (auto st = assertions::check_args(*def, args); !st) e_(x.at, st.err().message);
    }
    return std::move(p_);
}

}  // namespace

program compile(const plan::test_case& c, std::uint64_t action_bytes, const compile_error& error) {
    return compiler(c, action_bytes, error).run();
}

}  // namespace mrct::run
