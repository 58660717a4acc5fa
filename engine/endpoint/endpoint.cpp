// The reference endpoint: construction, work requests, frame dispatch and the
// CTRL exchange (§4: CONNECT/ACCEPT/REJECT, RNR_QUERY/RNR_SYNC, PROBE,
// PATH_RESET, CLOSE).
#include <algorithm>
#include <cstring>

#include "endpoint/impl.h"
#include "wire/build.h"
#include "wire/ctrl.h"
#include "wire/frame.h"
#include "wire/protocol.h"

namespace mrct::endpoint {

using namespace mrct::wire;

namespace {
constexpr std::string_view k_status_names[] = {"success",          "retry_exceeded",  "remote_access", "remote_invalid",
                                                "remote_operational", "header_mismatch", "connection_error"};
constexpr std::string_view k_kind_names[] = {"send", "write", "recv", "recv_write_imm"};

template <class E, std::size_t N>
std::optional<E> by_name(const std::string_view (&names)[N], std::string_view name) {
    for (std::size_t i = 0; i < N; ++i)
        if (names[i] == name) return static_cast<E>(i);
    return std::nullopt;
}
}  // namespace

std::string_view wc_status_name(wc_status s) { return k_status_names[static_cast<int>(s)]; }
std::optional<wc_status> wc_status_of(std::string_view name) { return by_name<wc_status>(k_status_names, name); }
std::string_view wc_kind_name(wc_kind k) { return k_kind_names[static_cast<int>(k)]; }
std::optional<wc_kind> wc_kind_of(std::string_view name) { return by_name<wc_kind>(k_kind_names, name); }

endpoint::endpoint(sim::scheduler& s, const config& cfg, address self, std::uint64_t seed, frame_tx tx)
    : s_(s), cfg_(cfg), self_(self), rng_(seed, "endpoint"), tx_(std::move(tx)) {}

endpoint::~endpoint() = default;

// ------------------------------------------------------------------ framing

frame_spec endpoint::impl::base(endpoint& e, const connection& c, opcode op, std::uint16_t sport) {
    frame_spec s;
    s.eth.src = e.self_.mac;
    s.eth.dst = c.peer.mac;
    set_ip(s, e.self_, c.peer);
    s.udp.sport = sport;
    s.udp.dport = k_udp_port;
    s.bth.opcode = static_cast<std::uint8_t>(op);
    s.bth.dest_qp = c.remote_id;
    return s;
}

void endpoint::impl::send(endpoint& e, const frame_spec& s) {
    const bool df_clear = e.cfg_.bug_profile == bug::df_clear && s.ip_version == 4;
    const bool ip_fields = has(e.cfg_, variant::ip_fields), vlan = has(e.cfg_, variant::vlan);
    if (df_clear || ip_fields || vlan) {
        frame_spec t = s;
        if (df_clear) {
            t.ipv4.df = false;  // MR-HDR-6 broken: DF clear, the Identification a host stack would give
            if (++e.ip_id_ == 0) e.ip_id_ = 1;
            t.ipv4.identification = e.ip_id_;
        }
        if (ip_fields) {  // D153: what the model leaves to the sender (the ICRC masks them)
            t.ipv4.dscp = t.ipv6.dscp = 26;
            t.ipv4.ttl = t.ipv6.hop_limit = 255;
            t.ipv6.flow_label = 0x80000u | t.udp.sport;  // per source port, as a host stack's hash would be
            // ECT(0) on every frame, not only data (MR-HDR-4 speaks of data packets).
            if (t.ipv4.ecn == wire::k_ecn_not_ect) t.ipv4.ecn = wire::k_ecn_ect0;
            if (t.ipv6.ecn == wire::k_ecn_not_ect) t.ipv6.ecn = wire::k_ecn_ect0;
        }
        if (vlan) {
            t.eth.has_vlan = true;
            t.eth.vlan = wire::vlan_tag{3, false, 100};
        }
        build_into(t, e.scratch_);
    } else {
        build_into(s, e.scratch_);
    }
    e.last_frame_size_ = e.scratch_.size() + s.symbolic_payload;  // on the wire: a described payload counts
    transmit(e);
}

// Hands the frame in scratch_ to the wire, counted.
void endpoint::impl::transmit(endpoint& e) {
    ++e.c_.frames_out;
    if (e.tx_owned_) e.tx_owned_(e.scratch_);
    else e.tx_(e.scratch_);
}

// An 802.3x PAUSE frame (MAC control opcode 1, quanta 0xFFFF) to the
// reserved multicast address, padded to the 60-byte minimum.
void endpoint::impl::send_pause(endpoint& e) {
    wire::pause_frame_into(e.self_.mac, 0xFFFF, e.scratch_);
    transmit(e);
}

// A connection ID: 1 .. 0xFFFFFE (0xFFFFFF is the listener's); variant
// wrap-soon draws among the top 256.
std::uint32_t endpoint::impl::new_conn_id(endpoint& e) {
    if (has(e.cfg_, variant::wrap_soon)) return 0xFFFFFEu - static_cast<std::uint32_t>(e.rng_.below(256));
    return 1 + static_cast<std::uint32_t>(e.rng_.below(0xFFFFFE));
}

std::uint16_t endpoint::impl::new_port(endpoint& e, const connection& c, std::uint16_t avoid) {
    for (;;) {
        auto p = static_cast<std::uint16_t>(k_entropy_base | (e.rng_.next() & 0x3FFF));
        if (p == avoid) continue;
        bool clash = false;
        for (const auto& t : c.tx) clash |= t.port == p;
        if (!clash) return p;
    }
}

nanos endpoint::impl::fire_at(endpoint& e, nanos t, bool deadline) {
    if (!has(e.cfg_, variant::timer_tick)) return t;
    const std::int64_t k = k_timer_tick.count(), n = t.count();
    const std::int64_t down = n - ((n % k) + k) % k;
    if (deadline) return std::max(e.s_.now(), nanos{down});
    return nanos{down == n ? n : down + k};
}

void endpoint::impl::move_port(endpoint& e, const connection& c, path_tx& t) {
    const std::uint16_t before = t.port;
    // Variant port-reuse: back to the port before last, when no other path
    // holds it (MR-PATH-1 asks only that it differ from the previous one and
    // from every other active path's; a failed path's counts as held).
    bool back = has(e.cfg_, variant::port_reuse) && t.prev_port != 0 && t.prev_port != before;
    for (const auto& o : c.tx) back &= &o == &t || o.port != t.prev_port;
    t.port = back ? t.prev_port : new_port(e, c, before);
    t.prev_port = before;
}

// §2: CTRL not tied to a packet leaves from the lowest-numbered path in service.
std::uint16_t endpoint::impl::ctrl_port(const connection& c) {
    for (const auto& t : c.tx)
        if (!t.failed) return t.port;
    return c.tx.empty() ? 0xC000 : c.tx[0].port;
}

// ------------------------------------------------------------------ API

std::uint32_t endpoint::connect(address peer) {
    auto c = std::make_unique<connection>();
    std::uint32_t id;
    do id = impl::new_conn_id(*this); while (conns_.count(id));
    c->local_id = id;
    c->peer = peer;
    c->initiator = true;
    c->num_paths = cfg_.num_paths;
    c->mtu = cfg_.mtu;
    c->remote_id = k_listener_qp;
    impl::setup_paths(*this, *c);
    connection& ref = *c;
    conns_[id] = std::move(c);
    impl::send_connect(*this, ref);
    return id;
}

bool endpoint::established(std::uint32_t conn) const {
    auto it = conns_.find(conn);
    return it != conns_.end() && it->second->state == conn_state::established;
}

bool endpoint::in_error(std::uint32_t conn) const {
    auto it = conns_.find(conn);
    return it != conns_.end() && it->second->state == conn_state::error;
}

core::status endpoint::close(std::uint32_t conn) {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return core::error{"close: unknown connection"};
    it->second->closing = true;
    impl::try_close(*this, *it->second);
    return core::ok_status();
}

bool endpoint::closed(std::uint32_t conn) const {
    auto it = conns_.find(conn);
    return it != conns_.end() && it->second->state == conn_state::closed;
}

// Sends CLOSE once everything is acknowledged (MR-CONN-3). Called after every
// completion and ACK; while a CLOSE is out, only its timer repeats it (every
// CTRL interval, §4), so a late ACK neither sends another nor uses a retry.
void endpoint::impl::try_close(endpoint& e, connection& c, bool on_ack) {
    // An unanswered CLOSE is repeated by its timer alone (§4); bug close-on-ack
    // also repeats it on every ACK.
    const bool storm = on_ack && e.cfg_.bug_profile == bug::close_on_ack;
    if (!c.closing || c.state != conn_state::established || (c.ctrl_timer->armed() && !storm)) return;
    const bool early = e.cfg_.bug_profile == bug::close_early;
    for (const auto& [stream, q] : c.stream_pending)
        if (!q.empty() && !early) return;
    for (const auto& t : c.tx)
        if (t.inflight && !early) return;
    connection* self = &c;
    if (has(e.cfg_, variant::close_late) && !c.close_waited) {  // D153: housekeeping before the first CLOSE
        c.close_waited = true;
        impl::arm_in(e, *c.ctrl_timer, k_close_late, [&e, self] { try_close(e, *self); });
        return;
    }
    if (c.ctrl_tries++ >= e.cfg_.retry_limit) return fail_connection(e, c);
    send_ctrl(e, c, ctrl_type::close, {}, c.remote_id, ctrl_port(c));
    impl::arm_in(e, *c.ctrl_timer, ctrl_interval(e, c), [&e, self] { try_close(e, *self); });
}

std::uint32_t endpoint::register_mr(std::size_t len) {
    const std::uint32_t rkey = next_rkey_++;
    mrs_[rkey] = region{next_va_, zero_pages(len, cfg_.resident_regions)};
    next_va_ += (len + 0xFFFF) & ~std::uint64_t{0xFFFF};
    next_va_ += 0x10000;
    return rkey;
}

address source_of(const wire::frame& f) {
    address a;
    a.mac = f.eth.src;
    if (f.has(wire::has_ipv6)) a.ip6 = f.ipv6.src;
    else a.ip = f.ipv4.src;
    return a;
}

void set_ip(wire::frame_spec& s, const address& src, const address& dst) {
    if (dst.ip6) {
        s.ip_version = 6;
        s.ipv6.src = src.ip6.value_or(wire::ipv6_addr{});
        s.ipv6.dst = *dst.ip6;
    } else {
        s.ip_version = 4;
        s.ipv4.src = src.ip;
        s.ipv4.dst = dst.ip;
        s.ipv4.df = true;  // MR-HDR-6
        s.ipv4.identification = 0;
    }
}

std::map<std::string, std::uint64_t> counter_map(const counters& k) {
    std::map<std::string, std::uint64_t> m = {
        {"frames_in", k.frames_in}, {"frames_out", k.frames_out}, {"data_sent", k.data_sent},
        {"data_received", k.data_received}, {"duplicates", k.duplicates}, {"fast_retransmits", k.fast_retransmits},
        {"rto_retransmits", k.rto_retransmits}, {"acks_sent", k.acks_sent}, {"acks_received", k.acks_received},
        {"acks_ignored", k.acks_ignored}, {"naks_sent", k.naks_sent}, {"naks_received", k.naks_received},
        {"rnrs_sent", k.rnrs_sent}, {"rnrs_received", k.rnrs_received}, {"rnr_queries", k.rnr_queries},
        {"ctrl_ignored", k.ctrl_ignored}, {"completions", k.completions}, {"error_completions", k.error_completions},
    };
    for (unsigned i = 0; i < wire::k_drop_reason_count; ++i)
        m["drop." + std::string(wire::drop_reason_name(static_cast<wire::drop_reason>(i)))] = k.drops[i];
    return m;
}

std::uint64_t endpoint::mr_va(std::uint32_t rkey) const {
    auto it = mrs_.find(rkey);
    return it == mrs_.end() ? 0 : it->second.va;
}

std::span<const std::uint8_t> endpoint::mr_bytes(std::uint32_t rkey) const {
    auto it = mrs_.find(rkey);
    if (it == mrs_.end()) return {};
    return it->second.bytes.bytes();
}

core::status endpoint::post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t offset,
                                 std::uint32_t len, std::uint64_t wr_id) {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return core::error{"post_recv: unknown connection"};
    auto m = mrs_.find(rkey);
    if (m == mrs_.end() || offset + len > m->second.bytes.size()) return core::error{"post_recv: outside the region"};
    // The k-th receive posted on a tag is RecvIdx k (§3).
    it->second->recvs[tag].push_back(posted_recv{rkey, offset, len, wr_id});
    return core::ok_status();
}

namespace {
std::uint32_t packets_for(std::uint32_t length, std::uint32_t mtu) { return std::max<std::uint32_t>(1, (length + mtu - 1) / mtu); }

core::status post_message(endpoint& e, std::map<std::uint32_t, std::unique_ptr<connection>>& conns,
                          std::uint32_t conn, out_message m) {
    auto it = conns.find(conn);
    if (it == conns.end()) return core::error{"unknown connection"};
    connection& c = *it->second;
    if (c.state == conn_state::error || c.state == conn_state::closed || c.closing)
        return core::error{"connection not usable (error, closing or closed)"};
    m.stream_seq = c.next_stream_seq[m.stream]++;
    m.length = static_cast<std::uint32_t>(m.data->size());
    m.npkts = packets_for(m.length, c.mtu);
    m.pkt_acked.assign(m.npkts, false);
    const auto idx = static_cast<std::uint32_t>(c.msgs.size());
    for (std::uint32_t i = 0; i < m.npkts; ++i) c.fresh.push_back({idx, i, 0});
    c.stream_pending[m.stream].push_back(idx);
    c.msgs.push_back(std::move(m));
    if (c.state == conn_state::established) endpoint::impl::pump(e, c);
    return core::ok_status();
}
}  // namespace

core::status endpoint::post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data,
                                  std::uint64_t remote_va, std::uint32_t remote_rkey, std::uint64_t wr_id,
                                  std::optional<std::uint32_t> imm) {
    return post_write(conn, stream, std::make_shared<const core::byte_buffer>(data.begin(), data.end()), remote_va,
                      remote_rkey, wr_id, imm);
}

core::status endpoint::post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                                 std::uint64_t wr_id, std::optional<std::uint32_t> imm) {
    return post_send(conn, stream, tag, std::make_shared<const core::byte_buffer>(data.begin(), data.end()), wr_id, imm);
}

core::status endpoint::post_write(std::uint32_t conn, std::uint16_t stream, shared_bytes data, std::uint64_t remote_va,
                                  std::uint32_t remote_rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) {
    out_message m;
    m.wr_id = wr_id;
    m.opcode = static_cast<std::uint8_t>(imm ? opcode::write_imm : opcode::write);
    m.stream = stream;
    m.remote_va = remote_va;
    m.rkey = remote_rkey;
    m.imm = imm;
    m.data = std::move(data);
    return post_message(*this, conns_, conn, std::move(m));
}

core::status endpoint::post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, shared_bytes data,
                                 std::uint64_t wr_id, std::optional<std::uint32_t> imm) {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return core::error{"post_send: unknown connection"};
    out_message m;
    m.wr_id = wr_id;
    m.opcode = static_cast<std::uint8_t>(imm ? opcode::send_imm : opcode::send);
    m.stream = stream;
    m.tag = tag;
    m.imm = imm;
    m.recv_idx = it->second->next_recv_idx[tag]++;
    m.data = std::move(data);
    return post_message(*this, conns_, conn, std::move(m));
}

std::vector<completion> endpoint::poll() {
    std::vector<completion> out;
    out.swap(cq_);
    return out;
}

std::vector<path_stats> endpoint::path_info(std::uint32_t conn) const {
    std::vector<path_stats> v;
    auto it = conns_.find(conn);
    if (it == conns_.end()) return v;
    for (const auto& t : it->second->tx) {
        path_stats s = t.st;
        s.port = t.port;
        s.epoch = t.epoch;
        s.cwnd = t.cwnd;
        s.alpha = t.alpha;
        s.srtt = t.srtt;
        s.rto = t.rto;
        s.inflight = t.inflight;
        s.failed = t.failed;
        v.push_back(s);
    }
    return v;
}

std::optional<wire_state> endpoint::conn_wire(std::uint32_t conn) const {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return std::nullopt;
    const auto& c = *it->second;
    wire_state w;
    w.local_id = c.local_id;
    w.remote_id = c.remote_id;
    w.peer = c.peer;
    w.num_paths = c.num_paths;
    w.mtu = c.mtu;
    w.rnr_count = c.rnr_count;
    for (std::size_t i = 0; i < c.tx.size(); ++i) {
        const auto& t = c.tx[i];
        wire_state::path p{t.port, t.epoch, t.next_ppsn, 0, 0};
        if (i < c.rx.size()) {
            p.recv_cum_ack = c.rx[i].cum_ack;
            p.recv_epoch = c.rx[i].last_epoch;
        }
        w.paths.push_back(p);
    }
    return w;
}

core::status endpoint::move_port(std::uint32_t conn, unsigned path) {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return core::error{"move_port: unknown connection"};
    auto& c = *it->second;
    if (path >= c.tx.size()) return core::error{"move_port: no path " + std::to_string(path)};
    auto& t = c.tx[path];
    impl::move_port(*this, c, t);
    t.epoch = static_cast<std::uint8_t>((t.epoch + 1) & 0xF);
    t.st.moves++;
    return core::ok_status();
}

std::uint64_t endpoint::inflight_messages(std::uint32_t conn) const {
    auto it = conns_.find(conn);
    if (it == conns_.end()) return 0;
    std::uint64_t n = 0;
    for (const auto& [s, q] : it->second->stream_pending) n += q.size();
    return n;
}

void endpoint::impl::complete(endpoint& e, connection& c, const completion& wc) {
    ++e.c_.completions;
    if (wc.status != wc_status::success) ++e.c_.error_completions;
    completion w = wc;
    w.conn = c.local_id;
    w.time = e.s_.now();
    e.cq_.push_back(w);
}

// ------------------------------------------------------------------ receive

void endpoint::end_batch() {
    batching_ = false;
    auto waiting = std::move(pump_after_batch_);
    pump_after_batch_.clear();
    for (const auto id : waiting)
        if (auto it = conns_.find(id); it != conns_.end()) impl::pump(*this, *it->second);
}

void endpoint::receive(core::bytes_view bytes, std::optional<nanos> arrived) {
    struct reset {
        std::optional<nanos>& a;
        ~reset() { a.reset(); }
    } r{arrived_};
    if (arrived && *arrived < s_.now()) arrived_ = arrived;
    ++c_.frames_in;
    auto d = decode_ethernet(bytes, {.verify_icrc = cfg_.bug_profile != bug::accept_bad_icrc,
                                     .symbolic_payload = cfg_.symbolic_payload});
    if (!d.ok()) {
        ++c_.drops[static_cast<int>(d.dropped->reason)];  // MR-HDR-2/3: silent drop, counted
        if (cfg_.bug_profile == bug::nak_bad_version && d.dropped->reason == wire::drop_reason::bad_version &&
            d.f.has(wire::has_mrh))
            if (auto it = conns_.find(d.f.bth.dest_qp); it != conns_.end())
                impl::send_nak(*this, it->second->remote_id, d.f, static_cast<std::uint8_t>(wire::nak_code::header_mismatch));
        return;
    }
    const frame& f = d.f;
    const std::uint8_t op = f.bth.opcode;
    if (op == static_cast<std::uint8_t>(opcode::ctrl)) return impl::on_ctrl(*this, f);
    auto it = conns_.find(f.bth.dest_qp);
    connection* c = it == conns_.end() ? nullptr : it->second.get();
    if (is_data_opcode(op)) return impl::on_data(*this, c, f);
    if (!c) {
        ++c_.acks_ignored;
        return;
    }
    if (op == static_cast<std::uint8_t>(opcode::ack)) return impl::on_ack(*this, *c, f);
    if (op == static_cast<std::uint8_t>(opcode::nak)) return impl::on_nak(*this, *c, f);
    if (op == static_cast<std::uint8_t>(opcode::rnr)) return impl::on_rnr(*this, *c, f);
}

// ------------------------------------------------------------------ control

void endpoint::impl::setup_paths(endpoint& e, connection& c) {
    c.tx.clear();
    c.tx.resize(c.num_paths);
    c.my_initial_ppsn.clear();
    for (unsigned p = 0; p < c.num_paths; ++p) {
        auto& t = c.tx[p];
        t.port = e.cfg_.bug_profile == bug::same_entropy && p > 0 ? c.tx[0].port : new_port(e, c, 0);
        // Random per path (MR-CONN-1); variant wrap-soon draws among the last
        // 256 before the 24-bit wrap.
        const auto drawn = has(e.cfg_, variant::wrap_soon) ? 0xFFFFFFu - static_cast<std::uint32_t>(e.rng_.below(256))
                                                           : static_cast<std::uint32_t>(e.rng_.next() & 0xFFFFFF);
        const auto ppsn = e.cfg_.initial_ppsn ? (*e.cfg_.initial_ppsn + p) & 0xFFFFFF : drawn;
        c.my_initial_ppsn.push_back(ppsn);
        t.next_ppsn = t.base_ppsn = ppsn;
        t.cwnd = e.cfg_.cwnd_initial;
        t.rto = e.cfg_.rto_initial;
        t.rto_timer = std::make_unique<sim::timer>(e.s_);
        t.reset_timer = std::make_unique<sim::timer>(e.s_);
        t.probe_timer = std::make_unique<sim::timer>(e.s_);
    }
    c.ctrl_timer = std::make_unique<sim::timer>(e.s_);
    c.rnr_query_timer = std::make_unique<sim::timer>(e.s_);
    c.pace_timer = std::make_unique<sim::timer>(e.s_);
    c.burst_timer = std::make_unique<sim::timer>(e.s_);
    c.shared_rto_timer = std::make_unique<sim::timer>(e.s_);
    if (e.units_ && !c.hw) {
        connection* cp = &c;
        endpoint* ep = &e;
        c.hw = e.units_(e.s_, e.cfg_, c.num_paths,
                        unit_events{[ep, cp](unsigned p) { ack_timer_due(*ep, *cp, p); },
                                    [ep, cp](unsigned p) { on_rto(*ep, *cp, p); },
                                    [ep, cp](std::uint16_t tag) { resume(*ep, *cp, tag); }});
    }
}

// §4: max(initial RTO, the largest RTO among the paths in service).
nanos endpoint::impl::ctrl_interval(const endpoint& e, const connection& c) {
    if (e.cfg_.bug_profile == bug::hasty_ctrl) return e.cfg_.rto_initial / 4;
    nanos r = e.cfg_.rto_initial;
    for (const auto& t : c.tx)
        if (!t.failed) r = std::max(r, t.rto);
    return r;
}

void endpoint::impl::send_ctrl(endpoint& e, connection& c, ctrl_type t, std::vector<tlv_spec> tlvs,
                               std::uint32_t dest_qp, std::uint16_t sport, bool answer) {
    auto s = base(e, c, opcode::ctrl, sport);
    s.bth.dest_qp = dest_qp;
    s.ctrlh = ctrlh{1, 0, static_cast<std::uint8_t>(t), 0};
    s.tlvs = std::move(tlvs);
    if (answer) send_answer(e, s);
    else send(e, s);
}

void endpoint::impl::send_connect(endpoint& e, connection& c) {
    if (c.state != conn_state::connecting) return;
    if (e.cfg_.bug_profile == bug::connect_once && c.ctrl_tries > 0) return;  // no timer re-armed either
    if (c.ctrl_tries++ >= e.cfg_.retry_limit) return fail_connection(e, c);
    send_ctrl(e, c, ctrl_type::connect,
              {tlv::version(k_version_major, k_version_minor), tlv::num_paths(static_cast<std::uint16_t>(c.num_paths)), tlv::src_conn_id(c.local_id),
               tlv::mtu(static_cast<std::uint16_t>(c.mtu)), tlv::initial_ppsn(c.my_initial_ppsn)},
              k_listener_qp, ctrl_port(c));
    connection* cp = &c;
    impl::arm_in(e, *c.ctrl_timer, ctrl_interval(e, c), [&e, cp] { send_connect(e, *cp); });
}

void endpoint::impl::fail_connection(endpoint& e, connection& c) {
    if (c.state == conn_state::error) return;
    c.state = conn_state::error;
    for (unsigned p = 0; p < c.tx.size(); ++p) {
        c.tx[p].rto_timer->cancel();
        if (c.hw) c.hw->rto_cancel(p);
    }
    c.ctrl_timer->cancel();
    for (auto& [stream, q] : c.stream_pending) {
        for (auto idx : q) {
            auto& m = c.msgs[idx];
            if (!m.failed) {
                m.failed = true;
                m.status = wc_status::connection_error;
            }
        }
    }
    try_complete_sends(e, c);
}

namespace {
// ACCEPT (§4): to the initiator's ID, from the new connection's path-0 port,
// with VERSION 1 and the smaller minor, our ID, the agreed NUM_PATHS and MTU,
// and our PPSNs.
void send_accept(endpoint& e, connection& c) {
    endpoint::impl::send_ctrl(e, c, ctrl_type::accept,
                              {tlv::version(k_version_major, c.version_minor), tlv::src_conn_id(c.local_id),
                               tlv::num_paths(static_cast<std::uint16_t>(c.num_paths)),
                               tlv::mtu(static_cast<std::uint16_t>(c.mtu)), tlv::initial_ppsn(c.my_initial_ppsn)},
                              c.remote_id, endpoint::impl::ctrl_port(c));
}
}  // namespace

void endpoint::impl::on_ctrl(endpoint& e, const frame& f) {
    const auto fields = read_ctrl_tlvs(f.tlvs);
    const auto type = static_cast<ctrl_type>(f.ctrlh.type);
    address peer = source_of(f);

    if (type == ctrl_type::connect) {
        if (f.bth.dest_qp != k_listener_qp || !e.listening_) {
            ++e.c_.ctrl_ignored;
            return;
        }
        connection tmp;
        tmp.peer = peer;
        tmp.remote_id = fields.src_conn_id.value_or(0);
        auto reject = [&](std::uint8_t reason) {
            tmp.tx.resize(1);
            tmp.tx[0].port = f.udp.sport;  // REJECT leaves from the CONNECT's source port
            send_ctrl(e, tmp, ctrl_type::reject, {tlv::reject_reason(reason)}, tmp.remote_id, f.udp.sport);
        };
        if (!fields.valid() || !fields.src_conn_id || !fields.num_paths || !fields.mtu || !fields.initial_ppsn ||
            !fields.version_major || *fields.num_paths < 1 || *fields.num_paths > 256 || *fields.mtu < 256 ||
            *fields.mtu > 4096 || fields.initial_ppsn->size() < *fields.num_paths)
            return reject(static_cast<std::uint8_t>(reject_reason::parameters));
        if (*fields.version_major != k_version_major) return reject(static_cast<std::uint8_t>(reject_reason::version));
        // A repeated valid CONNECT (our ACCEPT was lost) is answered again.
        for (auto& [id, c] : e.conns_) {
            if (!c->initiator && c->remote_id == *fields.src_conn_id && c->peer.same_ip(peer)) {
                send_accept(e, *c);
                return;
            }
        }
        auto c = std::make_unique<connection>();
        std::uint32_t id;
        do id = new_conn_id(e); while (e.conns_.count(id));
        c->local_id = id;
        c->remote_id = *fields.src_conn_id;
        c->version_minor = e.cfg_.bug_profile == bug::accept_own_minor
                               ? k_version_minor
                               : std::min<std::uint8_t>(k_version_minor, fields.version_minor.value_or(k_version_minor));
        c->peer = peer;
        c->num_paths = std::min<unsigned>(e.cfg_.num_paths, *fields.num_paths);
        c->mtu = std::min<std::uint32_t>(e.cfg_.mtu, *fields.mtu);
        c->peer_initial_ppsn.assign(fields.initial_ppsn->begin(), fields.initial_ppsn->begin() + c->num_paths);
        setup_paths(e, *c);
        init_rx(e, *c);
        c->state = conn_state::established;
        connection& ref = *c;
        e.conns_[id] = std::move(c);
        e.accepted_.push_back(id);
        send_accept(e, ref);
        return;
    }

    auto it = e.conns_.find(f.bth.dest_qp);
    if (it == e.conns_.end()) {
        ++e.c_.ctrl_ignored;  // CTRL naming an unknown connection is ignored and counted
        return;
    }
    connection& c = *it->second;
    if (!fields.valid()) {
        ++e.c_.ctrl_ignored;
        return;
    }
    switch (type) {
    case ctrl_type::accept:
        if (c.state != conn_state::connecting || !c.initiator || !fields.src_conn_id || !fields.num_paths ||
            !fields.initial_ppsn || *fields.num_paths < 1 || *fields.num_paths > c.num_paths ||
            fields.initial_ppsn->size() < *fields.num_paths) {
            ++e.c_.ctrl_ignored;
            return;
        }
        c.remote_id = *fields.src_conn_id;
        c.num_paths = *fields.num_paths;
        if (fields.mtu && e.cfg_.bug_profile != bug::ignore_mtu && *fields.mtu < c.mtu) {
            c.mtu = *fields.mtu;
            // Messages posted before ACCEPT were cut with our own MTU. None of
            // their packets has left yet, so they are cut again with the agreed one.
            c.fresh.clear();
            for (std::uint32_t idx = 0; idx < c.msgs.size(); ++idx) {
                auto& m = c.msgs[idx];
                m.npkts = packets_for(m.length, c.mtu);
                m.pkt_acked.assign(m.npkts, false);
                for (std::uint32_t i = 0; i < m.npkts; ++i) c.fresh.push_back({idx, i, 0});
            }
        }
        c.tx.resize(c.num_paths);  // the first NUM_PATHS entries of our own list
        c.my_initial_ppsn.resize(c.num_paths);
        c.peer_initial_ppsn.assign(fields.initial_ppsn->begin(), fields.initial_ppsn->begin() + c.num_paths);
        init_rx(e, c);
        c.state = conn_state::established;
        c.ctrl_timer->cancel();
        c.ctrl_tries = 0;  // the counter is reused for CLOSE
        pump(e, c);
        return;
    case ctrl_type::reject:
        if (c.state == conn_state::connecting) fail_connection(e, c);
        return;
    case ctrl_type::rnr_query: return on_rnr_query(e, c);
    case ctrl_type::rnr_sync: return on_rnr_sync(e, c, fields.rnr_count.value_or(0));
    case ctrl_type::probe:
        if (!fields.path_id || *fields.path_id >= c.num_paths || !fields.nonce) {
            ++e.c_.ctrl_ignored;
            return;
        }
        send_ctrl(e, c, ctrl_type::probe_reply, {tlv::path_id(*fields.path_id), tlv::nonce(*fields.nonce)}, c.remote_id,
                  f.udp.sport);
        return;
    case ctrl_type::path_reset:
        if (!fields.path_id || *fields.path_id >= c.num_paths || !fields.initial_ppsn ||
            fields.initial_ppsn->size() != 1) {
            ++e.c_.ctrl_ignored;
            return;
        }
        {
            auto& r = c.rx[*fields.path_id];
            const std::uint32_t ppsn = fields.initial_ppsn->front();
            auto& applied = r.resets_applied;
            if (std::find(applied.begin(), applied.end(), ppsn) == applied.end()) {
                c.peer_initial_ppsn[*fields.path_id] = ppsn;
                restart_rx(c, *fields.path_id, ppsn);
                if (applied.size() == path_rx::k_resets_remembered) applied.erase(applied.begin());
                applied.push_back(ppsn);
            }
            send_ctrl(e, c, ctrl_type::path_reset_ack, {tlv::path_id(*fields.path_id), tlv::initial_ppsn({ppsn})},
                      c.remote_id, ctrl_port(c));
        }
        return;
    case ctrl_type::probe_reply:
    case ctrl_type::path_reset_ack: return on_path_ctrl(e, c, f);
    case ctrl_type::close:
        send_ctrl(e, c, ctrl_type::close_ack, {}, c.remote_id, ctrl_port(c));
        c.state = conn_state::closed;
        return;
    case ctrl_type::close_ack:
        if (c.closing) {
            c.state = conn_state::closed;
            c.ctrl_timer->cancel();
        }
        return;
    default:
        ++e.c_.ctrl_ignored;
        return;
    }
}

}  // namespace mrct::endpoint
