// A case's topology: settings, fabrics, peers, connection, memory.
#include "run/case_wiring.h"

namespace mrct::run::detail {

core::status case_wiring::configure(bool& refused) {
    // topology.paths sets both sides' num_paths, dut/peer maps override (compiled into the program).
    if (auto st = dut_.configure(p_.dut_config); !st) {
        refused = true;
        return core::error{"configuring the DUT: " + st.err().message};
    }
    for (const auto& [k, v] : p_.peer_config)
        if (auto st = endpoint::config_set(peer_cfg, k, v); !st) return core::error{"peer: " + st.err().message};
    for (const auto& [k, v] : p_.dut_config)
        if (k != "bug")
            if (auto st = endpoint::config_set(dut_cfg, k, v); !st) return core::error{"dut: " + st.err().message};
    // In real time the peers' regions are resident when registered: a page
    // fault while the DUT's data arrives would be the engine late.
    peer_cfg.resident_regions = dut_.realtime();
    dut_addr = dut_.address();
    peer_addr = dut_.peer_address();
    return core::ok_status();
}

core::status case_wiring::make_fabric(std::function<void(core::bytes_view)> to_dut) {
    const auto& topo = p_.topology;
    fc_.paths = std::max({dut_cfg.num_paths, peer_cfg.num_paths, 1u});
    fc_.seed = core::rng::sub_seed(seed_, "fabric");
    fc_.default_stages = {{"delay", {{"delay", std::to_string(topo.delay.count()) + "ns"}}}};
    if (topo.rate) fc_.default_stages.push_back({"queue", {{"rate", *topo.rate}}});
    for (unsigned p = 0; p < fc_.paths; ++p) {
        const auto extra_delay = topo.path_delay.count(p) ? topo.path_delay.at(p) : core::nanos{0};
        std::vector<fabric::stage_spec> st = {{"delay", {{"delay", std::to_string((topo.delay + extra_delay).count()) + "ns"}}}};
        if (topo.rate) st.push_back({"queue", {{"rate", *topo.rate}}});
        fc_.path_stages_ab[p] = st;
        fc_.path_stages_ba[p] = st;
    }
    impair_at_.assign(p_.impair.size(), {});
    for (std::size_t i = 0; i < p_.impair.size(); ++i) {
        const auto& imp = p_.impair[i];
        for (unsigned p = 0; p < fc_.paths; ++p) {
            if (imp.path && *imp.path != p) continue;
            if (imp.to_peer) {
                impair_at_[i].push_back({fabric::direction::a_to_b, p, fc_.path_stages_ab[p].size()});
                fc_.path_stages_ab[p].push_back(imp.spec);
            }
            if (imp.to_dut) {
                impair_at_[i].push_back({fabric::direction::b_to_a, p, fc_.path_stages_ba[p].size()});
                fc_.path_stages_ba[p].push_back(imp.spec);
            }
        }
    }
    auto f = fabric::fabric::create(s_, fc_);
    if (!f) return core::error{"fabric: " + f.err().message};
    fab = std::move(*f);
    fab->set_receiver(fabric::direction::a_to_b, [this](core::bytes_view fr, const fabric::packet_meta&) { peer->receive(fr); });
    fab->set_receiver(fabric::direction::b_to_a,
                      [to_dut = std::move(to_dut)](core::bytes_view fr, const fabric::packet_meta&) { to_dut(fr); });
    return core::ok_status();
}

fabric::stage_counters case_wiring::impairment_counters(std::size_t i) const {
    fabric::stage_counters sum;
    std::vector<fabric::fabric*> fabs = {fab.get()};
    for (const auto& x : extra) fabs.push_back(x.fab.get());  // built from the same stage lists
    for (auto* f : fabs)
        if (f)
            for (const auto& at : impair_at_[i]) {
                const auto& st = f->at(at.d, at.path).stages();
                if (at.index < st.size()) sum += st[at.index]->counters();
            }
    return sum;
}

core::status case_wiring::make_peers(const std::function<void(core::bytes_view, fabric::fabric*)>& send,
                                     const std::function<void(core::bytes_view)>& to_dut) {
    peer = std::make_unique<endpoint::endpoint>(s_, peer_cfg, peer_addr, core::rng::sub_seed(seed_, "peer"),
                                                [this, send](core::bytes_view fr) { send(fr, fab.get()); });
    // More peers (topology.peers, e.g. fair-share grants, MR-GR-3): each a
    // reference endpoint with its own address and its own fabric. They
    // connect to the DUT.
    const unsigned npeers = p_.topology.peers;
    extra.resize(npeers - 1);
    for (unsigned k = 0; k + 1 < npeers; ++k) {
        auto& x = extra[k];
        if (auto a = dut_.further_peer_address(k + 1)) {  // a real wire: an address the engine has there
            x.addr = *a;
        } else {
            x.addr = peer_addr;
            x.addr.mac[5] = static_cast<std::uint8_t>(3 + k);
            x.addr.ip[3] = static_cast<std::uint8_t>(3 + k);
        }
        auto xfc = fc_;
        xfc.seed = core::rng::sub_seed(seed_, "fabric", k + 1);
        auto xf = fabric::fabric::create(s_, xfc);
        if (!xf) return core::error{"fabric: " + xf.err().message};
        x.fab = std::move(*xf);
        x.fab->set_receiver(fabric::direction::a_to_b, [this, k](core::bytes_view fr, const fabric::packet_meta&) {
            extra[k].ep->receive(fr);
        });
        x.fab->set_receiver(fabric::direction::b_to_a, [to_dut](core::bytes_view fr, const fabric::packet_meta&) { to_dut(fr); });
        x.ep = std::make_unique<endpoint::endpoint>(s_, peer_cfg, x.addr, core::rng::sub_seed(seed_, "peer", k + 1),
                                                    [this, k, send](core::bytes_view fr) { send(fr, extra[k].fab.get()); });
    }
    return core::ok_status();
}

void case_wiring::open() {
    if (p_.dut_sends) {
        peer->listen();
        dut_conn = dut_.connect(peer_addr);
    } else {
        dut_.listen();
        peer_conn = peer->connect(dut_addr);
    }
    for (auto& x : extra) x.conn = x.ep->connect(dut_addr);
}

bool case_wiring::extras_up() const {
    for (const auto& x : extra)
        if (!x.ep->established(x.conn)) return false;
    return dut_.accepted().size() >= extra.size() + (p_.dut_sends ? 0 : 1);
}

bool case_wiring::opened() {
    if (p_.dut_sends && dut_.established(dut_conn) && !peer->accepted().empty()) {
        peer_conn = peer->accepted().back();
        return true;
    }
    if (!p_.dut_sends && peer->established(peer_conn) && !dut_.accepted().empty()) {
        dut_conn = dut_.accepted().front();  // peer 0 connected first
        return true;
    }
    return false;
}

bool case_wiring::dut_side_open() const { return dut_.established(dut_conn) || (!p_.dut_sends && !dut_.accepted().empty()); }

namespace {
// Fabric path i carries the endpoint's path i of `conn` at its first port.
void pin_paths(fabric::fabric& fab, const endpoint::endpoint& ep, std::uint32_t conn) {
    if (auto w = ep.conn_wire(conn))
        for (unsigned i = 0; i < w->paths.size(); ++i) fab.pin(w->paths[i].port, i);
}
}  // namespace

void case_wiring::pin_extra_paths() {
    for (auto& x : extra) pin_paths(*x.fab, *x.ep, x.conn);
}

void case_wiring::pin_peer_paths() { pin_paths(*fab, *peer, peer_conn); }

void case_wiring::register_memory() {
    mem_size = static_cast<std::size_t>(p_.memory);
    dut_rkey = dut_.register_mr(mem_size);
    peer_rkey = peer->register_mr(mem_size);
}

fabric::fabric* case_wiring::fabric_to(const trace::record& r) {
    if (extra.empty() || !r.ok()) return fab.get();
    const auto& f = r.f();
    for (auto& x : extra) {
        if (!x.addr.ip6 && f.has(wire::has_ipv4) && f.ipv4.dst == x.addr.ip) return x.fab.get();
        if (x.addr.ip6 && f.has(wire::has_ipv6) && f.ipv6.dst == *x.addr.ip6) return x.fab.get();
    }
    return fab.get();
}

void case_wiring::pin_dut_port(const trace::record& r) {
    if (!r.data()) return;
    const unsigned p = r.f().mrh.path_id;
    if (dut_pinned_.count(p) || p >= fab->size()) return;
    dut_pinned_[p] = r.f().udp.sport;
    fab->pin(r.f().udp.sport, p);
}

}  // namespace mrct::run::detail
