#include "simulate/simulate.h"
#include "yaml/checked.h"

#include <algorithm>
#include <chrono>
#include <sstream>
#include <unordered_map>

#include <yaml-cpp/yaml.h>

#include "core/rng.h"
#include "endpoint/endpoint.h"
#include "sim/drivers.h"
#include "wire/frame.h"

namespace mrct::simulate {

using core::nanos;
using namespace std::chrono_literals;

namespace {

std::string mark_of(const std::string& file, const YAML::Mark& m) {
    return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

}  // namespace

core::result<impairment> make_impairment(const std::string& kind, const fabric::param_map& kv, std::string where) {
    impairment imp;
    imp.kind = kind;
    imp.where = std::move(where);
    auto fail = [&](const std::string& m) { return core::error{imp.where + ": impair '" + kind + "': " + m}; };
    for (const auto& [k, v] : kv) {
        if (k == "path" || k == "sender") {
            std::optional<unsigned> n;
            if (v != "all") {
                n = core::parse_count(v);
                if (!n) return fail(k + " must be a number or 'all', got '" + v + "'");
            }
            (k == "path" ? imp.path : imp.sender) = n;
        } else if (k == "dir") {
            if (v == "to_receiver") imp.dir = impairment::direction::to_receiver;
            else if (v == "to_sender") imp.dir = impairment::direction::to_sender;
            else if (v == "both") imp.dir = impairment::direction::both;
            else return fail("dir must be to_receiver, to_sender or both, got '" + v + "'");
        } else {
            imp.params[k] = v;
        }
    }
    // The stage's own checks: known kind, known parameters, types and ranges.
    fabric::packet_pool pool;
    if (auto st = fabric::make_stage(kind, imp.params, pool, core::rng(1)); !st)
        return core::error{imp.where + ": " + st.err().message};
    return imp;
}

core::result<impairment> parse_impairment(const std::string& text) {
    const auto colon = text.find(':');
    const std::string kind = text.substr(0, colon);
    fabric::param_map kv;
    if (colon != std::string::npos) {
        std::stringstream ss(text.substr(colon + 1));
        std::string item;
        while (std::getline(ss, item, ',')) {
            const auto eq = item.find('=');
            if (eq == std::string::npos || eq == 0)
                return core::error{"--impair '" + text + "': expected KIND:KEY=VALUE,... (e.g. corrupt:p=0.01,path=2), got '" +
                                   item + "'"};
            kv[item.substr(0, eq)] = item.substr(eq + 1);
        }
    }
    return make_impairment(kind, kv, "--impair " + text);
}

core::result<options> options_from_yaml(const std::string& path) {
    options o;
    try {
        // A configuration is a few dozen lines: read within bounds
        // (yaml/checked.h), so a hostile one is refused where it goes wrong.
        const auto& b = yaml::k_config_bounds;
        const auto hint = [](const char*) { return std::string(" (a simulate configuration is a small map, docs/simulate.md)"); };
        auto text = yaml::read_file(path, b, hint);
        if (!text) return text.err();
        auto loaded = yaml::load(path, *text, b, hint);
        if (!loaded) return loaded.err();
        YAML::Node n = *loaded;
        if (!n.IsMap()) return core::error{yaml::place(path, n) + "a simulate configuration is a map (docs/simulate.md)"};
        if (auto st = yaml::no_duplicate_keys(path, n); !st) return st.err();
        static const std::vector<std::string> k_keys = {
            "paths", "senders", "seed", "message_bytes", "messages", "streams", "op", "link_rate", "delay", "loss",
            "path_delay", "fail_path", "sender_bug", "receiver_bug", "inbound_rate_gbps", "mtu", "time_limit",
            "receiver_link", "receiver_kmin", "receiver_kmax", "outstanding", "impair", "payload"};
        for (auto it = n.begin(); it != n.end(); ++it) {
            const auto key = it->first.as<std::string>();
            if (std::find(k_keys.begin(), k_keys.end(), key) == k_keys.end())
                return core::error{path + ":" + std::to_string(it->first.Mark().line + 1) + ":" +
                                   std::to_string(it->first.Mark().column + 1) + ": unknown key '" + key + "'"};
        }
        if (n["paths"]) o.paths = n["paths"].as<unsigned>();
        if (n["senders"]) o.senders = n["senders"].as<unsigned>();
        if (n["seed"]) o.seed = n["seed"].as<std::uint64_t>();
        if (n["message_bytes"]) o.message_bytes = n["message_bytes"].as<std::uint64_t>();
        if (n["messages"]) o.messages = n["messages"].as<unsigned>();
        if (n["streams"]) o.streams = n["streams"].as<unsigned>();
        if (n["outstanding"]) o.outstanding = n["outstanding"].as<unsigned>();
        if (n["payload"]) {
            auto pl = n["payload"].as<std::string>();
            if (pl != "real" && pl != "symbolic")
                return core::error{path + ":" + std::to_string(n["payload"].Mark().line + 1) + ":" +
                                   std::to_string(n["payload"].Mark().column + 1) + ": payload must be real or symbolic"};
            o.symbolic_payload = pl == "symbolic";
        }
        if (n["op"]) {
            auto op = n["op"].as<std::string>();
            if (op != "write" && op != "send")
                return core::error{path + ":" + std::to_string(n["op"].Mark().line + 1) + ": op must be write or send"};
            o.use_send = op == "send";
        }
        if (n["link_rate"]) o.link_rate = n["link_rate"].as<std::string>();
        if (n["delay"]) o.delay = n["delay"].as<std::string>();
        if (n["loss"]) o.loss = n["loss"].as<double>();
        if (n["path_delay"])
            for (auto it = n["path_delay"].begin(); it != n["path_delay"].end(); ++it)
                o.path_delay[it->first.as<unsigned>()] = it->second.as<std::string>();
        if (n["fail_path"])
            for (auto it = n["fail_path"].begin(); it != n["fail_path"].end(); ++it)
                o.fail_path[it->first.as<unsigned>()] = it->second.as<std::string>();
        if (n["sender_bug"]) o.sender_bug = n["sender_bug"].as<std::string>();
        if (n["receiver_bug"]) o.receiver_bug = n["receiver_bug"].as<std::string>();
        if (n["inbound_rate_gbps"]) o.inbound_rate_bps = n["inbound_rate_gbps"].as<double>() * 1e9;
        if (n["mtu"]) o.mtu = n["mtu"].as<std::uint32_t>();
        if (n["receiver_link"]) o.receiver_link = n["receiver_link"].as<std::string>();
        if (n["receiver_kmin"]) o.receiver_kmin = n["receiver_kmin"].as<std::string>();
        if (n["receiver_kmax"]) o.receiver_kmax = n["receiver_kmax"].as<std::string>();
        if (const YAML::Node list = n["impair"]) {
            // impair: [- KIND: {path: N|all, sender: N|all, dir: ..., PARAM: VALUE}], as in plans
            if (!list.IsSequence()) return core::error{mark_of(path, list.Mark()) + ": impair: expected a list"};
            for (const auto& item : list) {
                if (!item.IsMap() || item.size() != 1)
                    return core::error{mark_of(path, item.Mark()) +
                                       ": impair: each item is a map with one key, the stage kind (docs/fabric.md)"};
                const YAML::Node body = item.begin()->second;
                fabric::param_map kv;
                if (!body.IsNull()) {
                    if (!body.IsMap())
                        return core::error{mark_of(path, body.Mark()) + ": impair: expected a map of parameters"};
                    for (auto it = body.begin(); it != body.end(); ++it) {
                        // A copy: `it->second` lives in a proxy that dies at the end of
                        // the expression, so a range-for over it would dangle (ASan).
                        const YAML::Node value = it->second;
                        std::string v;
                        if (value.IsSequence()) {  // an integer list: 1, 2, 3
                            for (const auto& x : value) v += (v.empty() ? "" : ",") + x.as<std::string>();
                        } else {
                            v = value.as<std::string>();
                        }
                        kv[it->first.as<std::string>()] = v;
                    }
                }
                auto imp = make_impairment(item.begin()->first.as<std::string>(), kv,
                                           mark_of(path, item.begin()->first.Mark()));
                if (!imp) return imp.err();
                o.impair.push_back(std::move(*imp));
            }
        }
        if (n["time_limit"]) {
            auto t = fabric::parse_duration_ns(n["time_limit"].as<std::string>());
            if (!t) return core::error{path + ": time_limit: expected a duration"};
            o.time_limit = nanos{*t};
        }
    } catch (const YAML::Exception& e) {
        return core::error{path + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) + ": " +
                           e.msg};
    }
    return o;
}

namespace {

double pct(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

core::result<result> run(const options& o) {
    if (o.paths < 1 || o.paths > 256) return core::error{"paths must be 1..256"};
    if (o.senders < 1 || o.senders > 1024) return core::error{"senders must be 1..1024"};
    if (o.streams < 1) return core::error{"streams must be >= 1"};
    if (o.loss < 0 || o.loss > 1) return core::error{"loss must be in [0, 1]"};
    if (o.messages < 1) return core::error{"messages must be >= 1"};
    if (o.inbound_rate_bps < 1e8) return core::error{"inbound rate must be at least 0.1 Gb/s"};
    {
        endpoint::config probe;  // the endpoint's own range for the MTU (256..4096)
        if (auto st = endpoint::config_set(probe, "mtu", std::to_string(o.mtu)); !st)
            return core::error{"mtu: " + st.err().message};
    }
    // "WHAT: path 9 is out of range (paths 0..7)"
    auto out_of_range = [](const std::string& what, const char* noun, unsigned n, unsigned count) {
        return core::error{what + ": " + noun + " " + std::to_string(n) + " is out of range (" + noun + "s 0.." +
                           std::to_string(count - 1) + ")"};
    };
    for (const auto* m : {&o.path_delay, &o.fail_path})
        for (const auto& [p, t] : *m) {
            const char* what = m == &o.path_delay ? "path_delay" : "fail_path";
            if (p >= o.paths) return out_of_range(what, "path", p, o.paths);
            if (!fabric::parse_duration_ns(t))
                return core::error{std::string(what) + ": '" + t + "' is not a duration such as 200us"};
        }
    auto sb = endpoint::bug_by_name(o.sender_bug);
    if (!sb) return core::error{"sender: " + sb.err().message};
    auto rb = endpoint::bug_by_name(o.receiver_bug);
    if (!rb) return core::error{"receiver: " + rb.err().message};
    for (const auto& imp : o.impair) {
        const std::string what = imp.where + ": impair '" + imp.kind + "'";
        if (imp.path && *imp.path >= o.paths) return out_of_range(what, "path", *imp.path, o.paths);
        if (imp.sender && *imp.sender >= o.senders) return out_of_range(what, "sender", *imp.sender, o.senders);
    }
    // Where each impairment's stages end up: (sender, direction, path, index in the path's chain).
    struct placed {
        unsigned sender;
        fabric::direction dir;
        unsigned path;
        std::size_t index;
    };
    std::vector<std::vector<placed>> impair_at(o.impair.size());

    sim::scheduler s;
    sim::virtual_driver drv(s);
    endpoint::config sc, rc;
    sc.num_paths = rc.num_paths = o.paths;
    sc.mtu = rc.mtu = o.mtu;
    sc.bug_profile = *sb;
    rc.bug_profile = *rb;
    sc.symbolic_payload = rc.symbolic_payload = o.symbolic_payload;
    rc.inbound_rate_bps = o.inbound_rate_bps;

    fabric::packet_pool pool;  // shared by every sender's fabric: one set of warm buffers
    pool.set_symbolic_payload(o.symbolic_payload);
    std::vector<std::unique_ptr<fabric::fabric>> fabrics;
    std::vector<std::unique_ptr<endpoint::endpoint>> senders;
    endpoint::address raddr{{2, 0, 0, 0, 0, 0xFE}, {10, 0, 255, 254}};
    // The receiver sends each frame into the fabric of the sender it is for.
    std::unordered_map<std::uint32_t, fabric::fabric*> by_ip;
    auto ip_key = [](const std::uint8_t* ip) {
        return (std::uint32_t{ip[0]} << 24) | (std::uint32_t{ip[1]} << 16) | (std::uint32_t{ip[2]} << 8) | ip[3];
    };
    endpoint::endpoint receiver(s, rc, raddr, core::rng::sub_seed(o.seed, "receiver"), nullptr);
    receiver.set_tx([&](core::byte_buffer& f) {  // built once, adopted by the fabric's pool
        if (f.size() < 34) return;
        auto it = by_ip.find(ip_key(f.data() + 30));  // IPv4 destination
        if (it != by_ip.end()) it->second->send_owned(fabric::direction::b_to_a, f);
    });
    receiver.listen();

    // Optional shared receiver link: every sender's traffic queues here.
    fabric::packet_pool link_pool;
    link_pool.set_symbolic_payload(o.symbolic_payload);
    std::unique_ptr<fabric::path> link;
    if (!o.receiver_link.empty()) {
        auto q = fabric::make_stage("queue",
                                    {{"rate", o.receiver_link}, {"buffer", "16777216"}, {"ecn", "true"},
                                     {"kmin", o.receiver_kmin}, {"kmax", o.receiver_kmax}},
                                    link_pool, core::rng(o.seed, "receiver_link"));
        if (!q) return core::error{"receiver_link: " + q.err().message};
        std::vector<std::unique_ptr<fabric::stage>> st;
        st.push_back(std::move(*q));
        link = std::make_unique<fabric::path>(s, link_pool, std::move(st), [&](fabric::handle h) {
            receiver.receive(link_pool.view(h));
            link_pool.release(h);
        });
    }
    auto to_receiver = [&](core::bytes_view fr) {
        if (link) link->send(link_pool.alloc(fr));
        else receiver.receive(fr);
    };

    for (unsigned i = 0; i < o.senders; ++i) {
        fabric::fabric_config fc;
        fc.paths = o.paths;
        fc.seed = core::rng::sub_seed(o.seed, "fabric", i);
        auto path_stages = [&](unsigned p, bool forward) {
            std::vector<fabric::stage_spec> st;
            std::string d = o.delay;
            if (auto it = o.path_delay.find(p); it != o.path_delay.end()) {
                auto base = fabric::parse_duration_ns(o.delay).value_or(0);
                auto extra = fabric::parse_duration_ns(it->second).value_or(0);
                d = std::to_string(base + extra) + "ns";
            }
            if (auto it = o.fail_path.find(p); it != o.fail_path.end())
                st.push_back({"blackhole", {{"fail_at", it->second}}});
            if (forward && o.loss > 0) st.push_back({"loss", {{"p", std::to_string(o.loss)}}});
            st.push_back({"queue", {{"rate", o.link_rate}, {"buffer", "4194304"}}});
            st.push_back({"delay", {{"delay", d}}});
            using dir = impairment::direction;
            for (std::size_t k = 0; k < o.impair.size(); ++k) {
                const auto& imp = o.impair[k];
                if ((imp.path && *imp.path != p) || (imp.sender && *imp.sender != i)) continue;
                if (imp.dir != dir::both && (imp.dir == dir::to_receiver) != forward) continue;
                impair_at[k].push_back(
                    {i, forward ? fabric::direction::a_to_b : fabric::direction::b_to_a, p, st.size()});
                st.push_back({imp.kind, imp.params});
            }
            return st;
        };
        for (unsigned p = 0; p < o.paths; ++p) {
            fc.path_stages_ab[p] = path_stages(p, true);
            fc.path_stages_ba[p] = path_stages(p, false);
        }
        auto f = fabric::fabric::create(s, fc, &pool);
        if (!f) return f.err();
        fabric::fabric* fp = f->get();
        fabrics.push_back(std::move(*f));
        endpoint::address a{{2, 0, 0, 0, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i)},
                            {10, 0, static_cast<std::uint8_t>(i >> 8), static_cast<std::uint8_t>(i + 1)}};
        by_ip[ip_key(a.ip.data())] = fp;
        senders.push_back(std::make_unique<endpoint::endpoint>(s, sc, a, core::rng::sub_seed(o.seed, "sender", i), nullptr));
        auto* sender = senders.back().get();
        sender->set_tx([fp](core::byte_buffer& fr) { fp->send_owned(fabric::direction::a_to_b, fr); });
        fp->set_receiver(fabric::direction::a_to_b, [&to_receiver](core::bytes_view fr, const fabric::packet_meta&) { to_receiver(fr); });
        fp->set_receiver(fabric::direction::b_to_a, [sender](core::bytes_view fr, const fabric::packet_meta&) { sender->receive(fr); });
    }

    // Connect, then pin each sender's initial ports to fabric paths 0..N-1.
    std::vector<std::uint32_t> conns;
    for (auto& e : senders) conns.push_back(e->connect(raddr));
    // Until every connection is up: a CONNECT or ACCEPT lost to --loss is
    // sent again after its RTO, so this may take several steps.
    const nanos connect_start = s.now();
    for (;;) {
        drv.run_until(s.now() + 100us);
        unsigned up = 0;
        for (unsigned i = 0; i < o.senders; ++i) {
            if (senders[i]->closed(conns[i]))
                return core::error{"sender " + std::to_string(i) + " could not connect (its CONNECT retries ran out)"};
            up += senders[i]->established(conns[i]) ? 1 : 0;
        }
        if (up == o.senders) break;
        if (s.now() - connect_start >= o.time_limit)
            return core::error{std::to_string(o.senders - up) + " sender(s) not connected within the time limit"};
    }
    for (unsigned i = 0; i < o.senders; ++i) {
        auto pi = senders[i]->path_info(conns[i]);
        for (unsigned p = 0; p < pi.size(); ++p) fabrics[i]->pin(pi[p].port, p);
    }
    const auto& acc = receiver.accepted();
    for (unsigned i = 0; i < acc.size(); ++i) {
        auto pi = receiver.path_info(acc[i]);
        for (unsigned p = 0; p < pi.size(); ++p) fabrics[i]->pin(pi[p].port, p);
    }

    // Memory and work requests. Every message of every sender lands in one
    // region of one message's size (regions belong to the endpoint, not to a
    // connection): simulate measures transport behaviour and never reads the
    // memory back (the endpoint tests check placement), and a region per
    // sender made the receiver's memory grow by a message size per sender
    // (1 GiB at 1024 senders of 1 MiB messages) for bytes nothing reads.
    const std::size_t region = o.message_bytes;
    const std::uint32_t rkey = receiver.register_mr(region);
    auto payload = std::make_shared<core::byte_buffer>(o.message_bytes);  // shared by every message
    for (std::size_t i = 0; i < payload->size(); ++i) (*payload)[i] = static_cast<std::uint8_t>(i * 31 + 7);
    const endpoint::endpoint::shared_bytes shared = payload;
    const nanos start = s.now();
    std::vector<unsigned> posted(o.senders, 0);
    auto post_one = [&](unsigned i) {
        const unsigned m = posted[i]++;
        const auto stream = static_cast<std::uint16_t>(m % o.streams);
        if (o.use_send) {
            (void)receiver.post_recv(acc[i], stream, rkey, 0, static_cast<std::uint32_t>(o.message_bytes), m);
            (void)senders[i]->post_send(conns[i], stream, stream, shared, m);
        } else {
            (void)senders[i]->post_write(conns[i], stream, shared, receiver.mr_va(rkey), rkey, m);
        }
    };
    const unsigned window = o.outstanding == 0 ? o.messages : std::min(o.outstanding, o.messages);
    for (unsigned i = 0; i < o.senders; ++i)
        for (unsigned m = 0; m < window; ++m) post_one(i);

    const auto wall0 = std::chrono::steady_clock::now();
    const std::uint64_t ev0 = s.events_run();
    std::vector<double> ct_us;
    std::vector<std::uint64_t> ok_of(o.senders, 0);  // per sender: successful completions
    std::vector<nanos> last_of(o.senders, nanos{0});  // per sender: its last completion
    std::uint64_t ok = 0, errors = 0;
    nanos last{0};
    const std::uint64_t expected = std::uint64_t{o.senders} * o.messages;
    // Closed loop (outstanding > 0): the next message is posted within 1 us of
    // a completion; open loop: everything was posted at the start.
    const nanos step = o.outstanding ? nanos{1000} : nanos{100'000};
    while (ok + errors < expected && s.now() - start < o.time_limit) {
        drv.run_until(std::min(s.now() + step, start + o.time_limit));
        for (unsigned i = 0; i < o.senders; ++i) {
            for (const auto& wc : senders[i]->poll()) {
                (wc.status == endpoint::wc_status::success ? ok : errors)++;
                if (wc.status == endpoint::wc_status::success) ++ok_of[i];
                last_of[i] = std::max(last_of[i], wc.time);
                ct_us.push_back(core::to_micros(wc.time - start));
                last = std::max(last, wc.time);
                if (posted[i] < o.messages) post_one(i);
            }
        }
        if (s.next_time() == core::k_never && s.size() == 0) break;
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    const std::uint64_t events = s.events_run() - ev0;

    result r;
    auto& j = r.json;
    const double elapsed = core::to_seconds(last - start);
    const double bytes = static_cast<double>(ok) * static_cast<double>(o.message_bytes);
    j["config"] = {{"receiver_link", o.receiver_link}, {"paths", o.paths}, {"senders", o.senders}, {"seed", o.seed}, {"op", o.use_send ? "send" : "write"},
                   {"message_bytes", o.message_bytes}, {"messages", o.messages}, {"streams", o.streams}, {"outstanding", o.outstanding},
                   {"link_rate", o.link_rate}, {"delay", o.delay}, {"loss", o.loss},
                   {"sender_bug", o.sender_bug}, {"receiver_bug", o.receiver_bug}, {"mtu", o.mtu},
                   {"payload", o.symbolic_payload ? "symbolic" : "real"}};
    j["completed"] = ok;
    j["errors"] = errors;
    j["expected"] = expected;
    j["virtual_time_us"] = core::to_micros(s.now() - start);
    j["goodput_gbps"] = elapsed > 0 ? bytes * 8 / elapsed / 1e9 : 0.0;
    j["completion_us"] = {{"min", ct_us.empty() ? 0 : *std::min_element(ct_us.begin(), ct_us.end())},
                          {"p50", pct(ct_us, 0.5)}, {"p99", pct(ct_us, 0.99)},
                          {"max", ct_us.empty() ? 0 : *std::max_element(ct_us.begin(), ct_us.end())}};
    {
        // Per sender: completed bytes over the time to its last completion.
        // Jain's index over them: 1 when every sender got the same, 1/N when
        // one got everything.
        std::vector<double> g;
        for (unsigned i = 0; i < o.senders; ++i) {
            const double t = core::to_seconds(last_of[i] - start);
            g.push_back(t > 0 ? static_cast<double>(ok_of[i]) * static_cast<double>(o.message_bytes) * 8 / t / 1e9 : 0.0);
        }
        double sum = 0, sq = 0;
        for (double x : g) {
            sum += x;
            sq += x * x;
        }
        j["sender_goodput_gbps"] = {{"min", *std::min_element(g.begin(), g.end())},
                                    {"p50", pct(g, 0.5)},
                                    {"max", *std::max_element(g.begin(), g.end())},
                                    {"jain", sq > 0 ? sum * sum / (static_cast<double>(g.size()) * sq) : 0.0}};
    }
    std::uint64_t fast = 0, rto = 0, sent = 0;
    for (auto& e : senders) {
        fast += e->stats().fast_retransmits;
        rto += e->stats().rto_retransmits;
        sent += e->stats().data_sent;
    }
    j["retransmissions"] = {{"fast", fast}, {"rto", rto}, {"data_packets", sent}};
    auto paths = nlohmann::ordered_json::array();
    for (const auto& p : senders[0]->path_info(conns[0])) {
        paths.push_back({{"port", p.port}, {"epoch", p.epoch}, {"cwnd", p.cwnd}, {"alpha", p.alpha},
                         {"srtt_us", core::to_micros(p.srtt)}, {"rto_us", core::to_micros(p.rto)},
                         {"bytes", p.bytes_sent}, {"packets", p.packets_sent}, {"retransmits", p.retransmits},
                         {"rto_expiries", p.rto_expiries}, {"moves", p.moves}, {"ece", p.ece_received},
                         {"failed", p.failed}});
    }
    j["sender0_paths"] = paths;
    std::uint64_t rx_drops = 0;
    for (auto n : receiver.stats().drops) rx_drops += n;
    j["receiver"] = {{"drops", rx_drops},
                     {"drops_bad_icrc", receiver.stats().drops[static_cast<int>(wire::drop_reason::bad_icrc)]},
                     {"duplicates", receiver.stats().duplicates}, {"acks_sent", receiver.stats().acks_sent}};
    if (link) {
        const auto& lc = link->stages()[0]->counters();
        j["receiver_link"] = {{"rate", o.receiver_link}, {"marked", lc.marked}, {"dropped", lc.dropped}};
    }
    if (!o.impair.empty()) {
        // Per impairment, its stages' counters summed over every path and sender it is on.
        auto list = nlohmann::ordered_json::array();
        for (std::size_t k = 0; k < o.impair.size(); ++k) {
            const auto& imp = o.impair[k];
            fabric::stage_counters t;
            for (const auto& at : impair_at[k])
                t += fabrics[at.sender]->at(at.dir, at.path).stages()[at.index]->counters();
            const char* d = imp.dir == impairment::direction::to_receiver ? "to_receiver"
                            : imp.dir == impairment::direction::to_sender ? "to_sender"
                                                                          : "both";
            nlohmann::ordered_json e = {{"kind", imp.kind}};
            e["path"] = imp.path ? nlohmann::ordered_json(*imp.path) : nlohmann::ordered_json("all");
            e["sender"] = imp.sender ? nlohmann::ordered_json(*imp.sender) : nlohmann::ordered_json("all");
            e["dir"] = d;
            e["stages"] = impair_at[k].size();
            e["in"] = t.in;
            e["out"] = t.out;
            e["dropped"] = t.dropped;
            e["marked"] = t.marked;
            e["duplicated"] = t.duplicated;
            e["corrupted"] = t.corrupted;
            e["delayed"] = t.delayed;
            list.push_back(std::move(e));
        }
        j["impair"] = std::move(list);
    }
    std::uint64_t ece = 0;
    for (std::size_t i = 0; i < senders.size(); ++i)
        for (const auto& p : senders[i]->path_info(conns[i])) ece += p.ece_received;
    j["ece_received"] = ece;
    std::uint64_t frames = 0;
    for (const auto& f : fabrics) frames += f->sent();
    j["frames"] = frames;  // frames injected into the fabric, both directions
    j["events"] = events;  // scheduler events (one may deliver several frames)
    j["wall_s"] = wall;
    j["events_per_s"] = wall > 0 ? static_cast<double>(events) / wall : 0.0;
    j["frames_per_s"] = wall > 0 ? static_cast<double>(frames) / wall : 0.0;
    r.all_completed = ok == expected;
    return r;
}

}  // namespace mrct::simulate
