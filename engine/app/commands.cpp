#include <algorithm>
#include <map>

#include "app/commands.h"
#include "core/heap_pages.h"
#include "assertions/assertion.h"
#include "plan/plan.h"
#include "run/clauses.h"
#include "run/keys.h"
#include "run/program.h"

#include <cstdio>

#include <spdlog/spdlog.h>

#include "capture/pcap_file.h"
#include "inspect/describe.h"
#include "endpoint/config.h"
#include "fabric/params.h"
#include "fabric/stage.h"
#include "simulate/simulate.h"
#include "wire/protocol.h"
#include "wire/samples.h"

namespace mrct::app {

std::string_view version_string() { return MRCT_VERSION " (" "metaroce-1.2-model" ")"; }

int run_decode(const decode_args& a) {
    auto reader = capture::pcap_reader::open(a.path);
    if (!reader) {
        spdlog::error("{}", reader.err().message);
        return k_exit_infra;
    }
    wire::decode_options opt;
    opt.verify_icrc = !a.no_icrc;
    inspect::json_options jopt;
    jopt.include_payload = a.payload;
    std::uint64_t n = 0, dropped = 0;
    std::int64_t first_ts = 0;
    std::string line;
    for (;;) {
        auto rec = (*reader)->next();
        if (!rec) {
            spdlog::error("{}: {}", a.path, rec.err().message);
            return k_exit_infra;
        }
        if (!rec->has_value()) break;
        const auto& r = **rec;
        if (n == 0) first_ts = r.ts_ns;
        inspect::frame_meta meta{++n, r.ts_ns, r.data.size(), r.wirelen};
        auto d = (*reader)->decode(r.data, opt);
        if (!d.ok()) ++dropped;
        line = a.json ? inspect::to_json(meta, d, jopt).dump() : inspect::summary_line(meta, first_ts, d);
        line.push_back('\n');
        std::fwrite(line.data(), 1, line.size(), stdout);
        if (a.count && n >= a.count) break;
    }
    spdlog::info("{}: {} frames, {} decoded, {} dropped", a.path, n, n - dropped, dropped);
    return std::fflush(stdout) == 0 ? k_exit_ok : k_exit_infra;
}

int run_samples(const samples_args& a) {
    std::vector<wire::opcode> ops;
    for (const auto& name : a.opcodes) {
        bool found = false;
        for (auto op : wire::k_all_opcodes) {
            if (wire::opcode_name(static_cast<std::uint8_t>(op)) == name) {
                ops.push_back(op);
                found = true;
            }
        }
        if (!found) {
            spdlog::error("--opcode {}: not one of WRITE WRITE_IMM SEND SEND_IMM ACK NAK RNR CTRL", name);
            return k_exit_usage;
        }
    }
    if (ops.empty()) ops.assign(std::begin(wire::k_all_opcodes), std::end(wire::k_all_opcodes));

    auto writer = capture::pcap_writer::create(a.path);
    if (!writer) {
        spdlog::error("{}", writer.err().message);
        return k_exit_infra;
    }
    core::byte_buffer buf;
    std::int64_t ts = 0;
    std::size_t n = 0;
    if (a.random == 0) {
        for (const auto& s : wire::sample_catalog()) {
            wire::build_into(s.spec, buf);
            (*writer)->write(ts += 1000, buf);
            ++n;
        }
    } else {
        core::rng r(a.seed, "samples");
        for (unsigned i = 0; i < a.random; ++i) {
            for (auto op : ops) {
                wire::build_into(wire::random_spec(r, op, a.ip_version), buf);
                (*writer)->write(ts += 1000, buf);
                ++n;
            }
        }
    }
    if (auto st = (*writer)->close(); !st) {
        spdlog::error("{}: {}", a.path, st.err().message);
        return k_exit_infra;
    }
    spdlog::info("wrote {} frames to {}", n, a.path);
    return k_exit_ok;
}

}  // namespace mrct::app

namespace mrct::app {

namespace {
// Applies one "key=value" option to the simulation options.
core::status apply_override(simulate::options& o, const std::string& kv) {
    auto eq = kv.find('=');
    if (eq == std::string::npos) return core::error{"expected key=value: " + kv};
    const std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
    try {
        if (k == "paths") o.paths = static_cast<unsigned>(std::stoul(v));
        else if (k == "senders") o.senders = static_cast<unsigned>(std::stoul(v));
        else if (k == "seed") o.seed = std::stoull(v);
        else if (k == "size") o.message_bytes = std::stoull(v);
        else if (k == "messages") o.messages = static_cast<unsigned>(std::stoul(v));
        else if (k == "streams") o.streams = static_cast<unsigned>(std::stoul(v));
        else if (k == "outstanding") o.outstanding = static_cast<unsigned>(std::stoul(v));
        else if (k == "payload") {
            if (v != "real" && v != "symbolic") return core::error{"--payload: real or symbolic"};
            o.symbolic_payload = v == "symbolic";
        } else if (k == "op") {
            if (v != "write" && v != "send") return core::error{"--op: write or send"};
            o.use_send = v == "send";
        } else if (k == "rate") o.link_rate = v;
        else if (k == "delay") o.delay = v;
        else if (k == "loss") o.loss = std::stod(v);
        else if (k == "bug-sender") o.sender_bug = v;
        else if (k == "bug-receiver") o.receiver_bug = v;
        else if (k == "inbound-gbps") o.inbound_rate_bps = std::stod(v) * 1e9;
        else if (k == "mtu") o.mtu = static_cast<std::uint32_t>(std::stoul(v));
        else if (k == "receiver-link") o.receiver_link = v;
        else if (k == "path-delay" || k == "fail-path") {
            // P:VALUE, e.g. 1:500us or 3:2ms
            auto c = v.find(':');
            if (c == std::string::npos) return core::error{"--" + k + ": expected PATH:TIME, e.g. 1:500us"};
            auto& m = k == "path-delay" ? o.path_delay : o.fail_path;
            m[static_cast<unsigned>(std::stoul(v.substr(0, c)))] = v.substr(c + 1);
        } else if (k == "impair") {
            auto imp = simulate::parse_impairment(v);
            if (!imp) return imp.err();
            o.impair.push_back(std::move(*imp));
        } else if (k == "time-limit") {
            auto t = fabric::parse_duration_ns(v);
            if (!t) return core::error{"--time-limit: expected a duration"};
            o.time_limit = core::nanos{*t};
        } else {
            return core::error{"unknown option " + k};
        }
    } catch (const std::exception&) {
        return core::error{"--" + k + ": bad value '" + v + "'"};
    }
    return core::ok_status();
}
}  // namespace

int run_simulate(const simulate_args& a) {
    if (!a.small_pages) spdlog::debug("simulate: {}", core::heap_on_huge_pages());
    simulate::options o;
    if (!a.config.empty()) {
        auto f = simulate::options_from_yaml(a.config);
        if (!f) {
            spdlog::error("{}", f.err().message);
            return k_exit_usage;
        }
        o = *f;
    }
    for (const auto& kv : a.overrides) {
        if (auto st = apply_override(o, kv); !st) {
            spdlog::error("{}", st.err().message);
            return k_exit_usage;
        }
    }
    auto r = simulate::run(o);
    if (!r) {
        spdlog::error("{}", r.err().message);
        return k_exit_usage;
    }
    std::string out = a.pretty ? r->json.dump(2) : r->json.dump();
    out.push_back('\n');
    std::fwrite(out.data(), 1, out.size(), stdout);
    if (!r->all_completed) spdlog::warn("not every message completed successfully");
    return r->all_completed ? k_exit_ok : k_exit_fail;
}

}  // namespace mrct::app

namespace mrct::app {

int run_docs(const std::string& what, const std::string& plan_path) {
    std::string out;
    if (what == "fabric") {
        out = fabric::stages_markdown();
    } else if (what == "bugs") {
        out = "| profile | breaks | behaviour |\n|---|---|---|\n";
        for (const auto& b : endpoint::bug_profiles())
            out += "| `" + std::string(b.name) + "` | " + std::string(b.clauses) + " | " + std::string(b.description) + " |\n";
    } else if (what == "variants") {
        out = "| variant | open choice | behaviour |\n|---|---|---|\n";
        for (const auto& v : endpoint::variant_profiles())
            out += "| `" + std::string(v.name) + "` | " + std::string(v.freedom) + " | " + std::string(v.description) + " |\n";
    } else if (what == "assertions") {
        for (const auto& a : assertions::builtin()) {
            std::string cl;
            for (const auto& c : a.clauses) cl += (cl.empty() ? "" : ", ") + c;
            out += "### `" + a.name + "`" + (cl.empty() ? "" : " (" + cl + ")") + "\n\n" + a.summary + "\n\n";
            if (!a.params.empty()) {
                out += "| parameter | type | default | meaning |\n|---|---|---|---|\n";
                for (const auto& p : a.params)
                    out += "| `" + p.name + "` | " + std::string(assertions::param_type_name(p.type)) + " | " +
                           (p.def.empty() ? "—" : "`" + p.def + "`") + " | " + p.help + " |\n";
                out += "\n";
            }
        }
        out += "Names usable in duration expressions:\n\n";
        for (const auto& [n, h] : assertions::expression_names()) out += "- `" + n + "`: " + h + "\n";
    } else if (what == "limits") {
        out = run::keys_markdown(run::limit_decls());
    } else if (what == "topology") {
        out = run::keys_markdown(run::topology_decls());
    } else if (what == "actions") {
        out = run::actions_markdown();
    } else if (what == "settings") {
        out = endpoint::settings_markdown();
    } else if (what == "clauses") {
        std::map<std::string, std::vector<std::string>> cases;
        if (!plan_path.empty()) {
            auto s = plan::load(plan_path, plan_limits());
            if (!s) {
                spdlog::error("{}", s.err().message);
                return k_exit_usage;
            }
            for (const auto& c : s->cases)
                for (const auto& cl : c.clauses) {
                    // One entry per case definition: sweep instances share the ID before '['.
                    const auto base = c.id.substr(0, c.id.find('['));
                    auto& v = cases[cl];
                    if (std::find(v.begin(), v.end(), base) == v.end()) v.push_back(base);
                }
        }
        out = plan_path.empty() ? "| clause | level | text |\n|---|---|---|\n" : "| clause | level | text | cases |\n|---|---|---|---|\n";
        for (const auto& c : run::clauses()) {
            out += "| " + c.id + " | " + c.level + " | " + c.text + " |";
            if (!plan_path.empty()) {
                std::string list;
                for (const auto& id : cases[c.id]) list += (list.empty() ? "" : ", ") + id;
                out += " " + (list.empty() ? std::string("**uncovered**") : list) + " |";
            }
            out += "\n";
        }
    } else {
        spdlog::error("docs: expected fabric, bugs, assertions, clauses, topology, limits, actions or settings");
        return k_exit_usage;
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    return k_exit_ok;
}

}  // namespace mrct::app
