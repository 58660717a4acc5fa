#include "check/check.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "assertions/assertion.h"
#include "capture/pcap_file.h"
#include "endpoint/config.h"
#include "netio/port.h"
#include "run/params.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::check {

namespace {

// The source and destination addresses of a MetaRoCE frame (UDP to 4791),
// from whatever layers decoded (a corrupted frame still has its IP header).
bool endpoints_of(const wire::decode_result& d, std::string& src, std::string& dst) {
    const auto& f = d.f;
    if (!f.has(wire::has_udp) || f.udp.dport != wire::k_udp_port) return false;
    netio::ip_address s, t;
    if (f.has(wire::has_ipv4)) {
        s.v4 = f.ipv4.src;
        t.v4 = f.ipv4.dst;
    } else if (f.has(wire::has_ipv6)) {
        s.version = t.version = 6;
        s.v6 = f.ipv6.src;
        t.v6 = f.ipv6.dst;
    } else {
        return false;
    }
    src = netio::ip_text(s);
    dst = netio::ip_text(t);
    return true;
}

// Worst first: error, fail, inconclusive, then pass (the runner's order).
int rank(assertions::verdict v) {
    switch (v) {
    case assertions::verdict::error: return 4;
    case assertions::verdict::fail: return 3;
    case assertions::verdict::inconclusive: return 2;
    default: return 0;
    }
}

}  // namespace

const std::vector<passive_check>& profile() {
    // What judges a DUT from its own wire alone, whatever traffic it carried
    // (docs/emulator.md "The passive profile" says why each is here and why
    // the others are not). Default arguments throughout: the same tolerances
    // as the plan's.
    static const std::vector<passive_check> p = {
        {"wire_format", {}, "sender"},
        {"negotiated", {{"paths", "$num_paths"}, {"mtu", "$mtu"}}, "sender"},
        {"distinct_entropy", {}, "sender"},
        {"epoch_on_port_change", {}, "sender"},
        {"window_limit", {}, "sender"},
        {"resend_identity", {}, "sender"},
        {"no_go_back_n", {}, "sender"},
        {"rnr_pause", {}, "sender"},
        {"rnr_resume", {}, "sender"},
        {"close_after_ack", {}, "sender"},
        {"acks_conform", {}, "receiver"},
    };
    return p;
}

core::result<trace::params> params_of(const std::map<std::string, std::string>& given) {
    endpoint::config c;
    for (const auto& [k, v] : given)
        if (auto st = endpoint::config_set(c, k, v); !st) return core::error{"--param " + k + "=" + v + ": " + st.err().message};
    return run::protocol_params(c);
}

core::result<capture_survey> survey(const std::string& capture) {
    auto rd = capture::pcap_reader::open(capture);
    if (!rd) return rd.err();
    capture_survey out;
    for (;;) {
        auto rec = (*rd)->next();
        if (!rec) return core::error{capture + ": " + rec.err().message};
        if (!*rec) break;
        const auto& r = **rec;
        std::string src, dst;
        if (!endpoints_of((*rd)->decode(r.data), src, dst)) continue;
        if (std::find(out.addresses.begin(), out.addresses.end(), src) == out.addresses.end()) out.addresses.push_back(src);
        if ((*rd)->link() != capture::link_kind::ethernet) continue;
        auto& macs = out.macs[src];
        const auto mac = wire::ethernet_source(r.data);
        if (std::find(macs.begin(), macs.end(), mac) == macs.end()) macs.push_back(mac);
    }
    return out;
}

core::result<std::vector<std::string>> addresses_in(const std::string& capture) {
    auto s = survey(capture);
    if (!s) return s.err();
    return s->addresses;
}

core::result<std::shared_ptr<trace::trace>> trace_of(const std::string& capture, const std::string& dut,
                                                     const trace::params& p, std::int64_t crossing_ns,
                                                     std::int64_t max_hold_ns, const capture_survey* known) {
    auto rd = capture::pcap_reader::open(capture);
    if (!rd) return rd.err();
    if ((*rd)->link() != capture::link_kind::ethernet)
        return core::error{capture + ": not an Ethernet capture (the checks read the L2 header too)"};
    // The DUT's MAC addresses, from its own MetaRoCE frames anywhere in the
    // capture (a PAUSE seen before its first frame counts too).
    std::optional<capture_survey> made;
    if (!known) {
        auto s = survey(capture);
        if (!s) return s.err();
        made = std::move(*s);
        known = &*made;
    }
    static const std::vector<wire::mac_addr> k_none;
    const auto m = known->macs.find(dut);
    const auto& macs = m == known->macs.end() ? k_none : m->second;
    auto tr = std::make_shared<trace::trace>();
    std::optional<std::int64_t> t0;
    std::int64_t last = 0;  // the capture's last record of any kind: how long the wire was watched
    for (;;) {
        auto rec = (*rd)->next();
        if (!rec) return core::error{capture + ": " + rec.err().message};
        if (!*rec) break;
        const auto& r = **rec;
        last = std::max(last, r.ts_ns);
        std::string src, dst;
        if (wire::is_mac_control(r.data)) {
            if (std::find(macs.begin(), macs.end(), wire::ethernet_source(r.data)) == macs.end()) continue;
            src = dut;
        } else if (!endpoints_of((*rd)->decode(r.data), src, dst) || (src != dut && dst != dut)) {
            continue;
        }
        if (!t0) t0 = r.ts_ns;
        // A capture's clock may step back a little (two writers' stamps);
        // the trace keeps capture order and never goes back in time.
        core::nanos t{std::max<std::int64_t>(0, r.ts_ns - *t0)};
        if (!tr->frames.empty()) t = std::max(t, tr->frames.back().t);
        tr->add(t, src == dut ? trace::dir::from_dut : trace::dir::to_dut, r.data);
    }
    if (!t0) return core::error{capture + ": no MetaRoCE frame from or to " + dut};
    // The record ends when the capture does, not at the DUT's last frame: a
    // DUT that fell silent was still watched until then (a paused tag never
    // resumed is late by all of it).
    tr->end = std::max(tr->frames.back().t, core::nanos{last - *t0});
    tr->p = p;
    tr->crossing = core::nanos{crossing_ns};
    tr->timing.realtime = true;
    tr->timing.assumed_hold = core::nanos{max_hold_ns};
    tr->dut.established = true;
    tr->peer.established = true;
    return tr;
}

core::result<std::vector<input>> inputs_of_emulation(const std::string& folder) {
    namespace fs = std::filesystem;
    const auto file = fs::path(folder) / "emulate.json";
    std::ifstream in(file);
    if (!in) return core::error{folder + ": no emulate.json (an `mrct emulate --out` folder, or give capture files)"};
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
        std::vector<input> out;
        for (const char* side : {"a", "b"}) {
            const auto& p = j.at("ports").at(side);
            if (!p.contains("capture")) return core::error{file.string() + ": port " + side + " has no capture (--no-capture)"};
            input i;
            i.capture = (fs::path(folder) / p.at("capture").get<std::string>()).string();
            // Frames its DUT sent that the capture buffer dropped, and sends to
            // the DUT that failed (a DPDK port's transmit ring drops after the
            // capture wrote the frame): either way the capture is not the wire.
            const auto lost_in = p.value("lost_in", std::uint64_t{0}), unsent = p.value("send_errors", std::uint64_t{0});
            i.lost = lost_in + unsent;
            i.lost_why = std::string("the emulator's capture of port ") + side + " is not its wire: " +
                         std::to_string(lost_in) + " frames from its DUT lost before they were recorded (lost_in), " +
                         std::to_string(unsent) + " sends to it failed (send_errors)";
            for (const auto& a : p.at("addresses")) i.duts.push_back(a.get<std::string>());
            if (i.duts.empty()) continue;  // no DUT seen on this port
            out.push_back(std::move(i));
        }
        if (out.empty()) return core::error{file.string() + ": no MetaRoCE traffic was seen on either port"};
        return out;
    } catch (const std::exception& e) {
        return core::error{file.string() + ": " + e.what()};
    }
}

core::result<std::vector<run::case_result>> judge(const options& o) {
    auto p = params_of(o.params);
    if (!p) return p.err();
    std::vector<run::case_result> out;
    for (const auto& in : o.inputs) {
        // One pass finds the capture's addresses and their MACs; then one
        // pass per DUT builds its trace.
        auto seen = survey(in.capture);
        if (!seen) return seen.err();
        auto duts = in.duts;
        if (duts.empty()) {
            duts = seen->addresses;
            if (duts.empty()) return core::error{in.capture + ": no MetaRoCE frame in it"};
        }
        const auto name = std::filesystem::path(in.capture).filename().string();
        for (const auto& dut : duts) {
            auto tr = trace_of(in.capture, dut, *p, o.crossing_ns, o.max_hold_ns, &*seen);
            if (!tr) return tr.err();
            (*tr)->timing.frames_lost = in.lost;
            std::shared_ptr<const trace::trace> shared = *tr;
            int line = 0;
            for (const auto& pc : profile()) {
                ++line;
                const auto* def = assertions::find(pc.assertion);
                if (!def) return core::error{"passive profile: no assertion '" + pc.assertion + "'"};
                run::case_result r;
                r.id = dut + "/" + pc.assertion;
                r.title = def->summary;
                r.level = "must";
                r.area = "passive";
                r.role = pc.role;
                r.clauses = def->clauses;
                r.frames = shared->frames.size();
                r.sim_time = shared->end;
                run::assertion_result ar;
                ar.name = pc.assertion;
                ar.clauses = def->clauses;
                ar.at = {name + " (" + dut + ")", line, 1};
                auto args = pc.args;  // $num_paths, $mtu: the parameters in force
                for (auto& [k, v] : args) {
                    if (v == "$num_paths") v = std::to_string(p->num_paths);
                    if (v == "$mtu") v = std::to_string(p->mtu);
                }
                ar.o = assertions::evaluate(*def, *shared, args);
                if (in.lost) run::on_incomplete_record(ar, in.lost_why);
                r.v = ar.o.v;
                if (rank(r.v) > 0) r.reason = ar.name + ": " + ar.o.message;
                r.asserts.push_back(std::move(ar));
                if (r.v != assertions::verdict::pass) r.tr = shared;  // evidence for what did not pass
                r.order = out.size();
                out.push_back(std::move(r));
            }
        }
    }
    return out;
}

}  // namespace mrct::check
