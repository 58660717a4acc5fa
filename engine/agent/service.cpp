#include "agent/service.h"

#include "agent/address.h"
#include "netio/port.h"

#include <algorithm>
#include <stdexcept>


namespace mrct::agent {

namespace {

// A request field that is missing or of the wrong type.
struct bad_field : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct op_error : std::runtime_error {
    op_error(std::string c, const std::string& m) : std::runtime_error(m), code(std::move(c)) {}
    std::string code;
};

std::uint64_t uint_field(const json& r, const char* k, std::uint64_t max = ~std::uint64_t{0}) {
    auto it = r.find(k);
    if (it == r.end()) throw bad_field(std::string("missing field '") + k + "'");
    if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
        throw bad_field(std::string("field '") + k + "' must be an unsigned integer");
    const auto v = it->get<std::uint64_t>();
    if (v > max) throw bad_field(std::string("field '") + k + "' is out of range (max " + std::to_string(max) + ")");
    return v;
}

std::string string_field(const json& r, const char* k) {
    auto it = r.find(k);
    if (it == r.end()) throw bad_field(std::string("missing field '") + k + "'");
    if (!it->is_string()) throw bad_field(std::string("field '") + k + "' must be a string");
    return it->get<std::string>();
}

// Message bytes: the request's binary attachment ("data_bytes", 1.1), else
// the base64 field k.
core::byte_buffer data_field(const json& r, const char* k, session& sess) {
    if (r.contains("data_bytes")) {
        if (r.contains(k)) throw bad_field(std::string("both '") + k + "' and 'data_bytes' given");
        if (!sess.in_data || sess.in_data->size() != uint_field(r, "data_bytes"))
            throw bad_field("'data_bytes' without its bytes");
        core::byte_buffer b = std::move(*sess.in_data);
        sess.in_data.reset();  // an attachment serves one request
        return b;
    }
    auto b = base64_decode(string_field(r, k));
    if (!b) throw bad_field(std::string("field '") + k + "': " + b.err().message);
    return std::move(*b);
}

std::optional<std::uint32_t> imm_field(const json& r) {
    if (!r.contains("imm") || r["imm"].is_null()) return std::nullopt;
    return static_cast<std::uint32_t>(uint_field(r, "imm", 0xFFFFFFFF));
}

void check(const core::status& st) {
    if (!st) throw op_error(code::failed, st.err().message);
}

// An unknown connection is `not_found` (docs/agent-protocol.md, errors),
// whatever the operation.
void require_connection(const endpoint::endpoint& e, std::uint32_t c) {
    if (!e.has_connection(c)) throw op_error(code::not_found, "unknown connection " + std::to_string(c));
}
// The request's "conn", which must name a connection of `e`.
std::uint32_t conn_field(const json& r, const endpoint::endpoint& e) {
    const auto c = static_cast<std::uint32_t>(uint_field(r, "conn", 0xFFFFFFFF));
    require_connection(e, c);
    return c;
}

// The request's "rkey", which must name a region of `e` (else `not_found`).
std::uint32_t rkey_field(const json& r, const endpoint::endpoint& e) {
    const auto k = static_cast<std::uint32_t>(uint_field(r, "rkey", 0xFFFFFFFF));
    if (!e.has_region(k)) throw op_error(code::not_found, "unknown R_Key " + std::to_string(k));
    return k;
}

}  // namespace

service::service(sim::scheduler& s, service_options o, endpoint::endpoint::frame_tx tx)
    : s_(s), o_(std::move(o)), tx_(std::move(tx)) {
    reset(1);
}

service::~service() = default;

void service::reset(std::uint64_t seed) {
    ep_.reset();
    mr_bytes_ = 0;
    last_poll_ = s_.now();
    cfg_ = endpoint::config{};
    cfg_.tx_burst = o_.tx_burst;
    cfg_.resident_regions = o_.resident_regions;
    cfg_.variants = o_.variants;
    if (!o_.bug.empty())
        if (auto st = endpoint::config_set(cfg_, "bug", o_.bug); !st) throw std::invalid_argument(st.err().message);
    seed_ = seed;
}

endpoint::endpoint& service::ep() {
    if (o_.clock) o_.clock();
    if (!ep_) {
        ep_ = std::make_unique<endpoint::endpoint>(s_, cfg_, o_.self, seed_, tx_);
        if (o_.tx_turn) ep_->set_tx_turn(o_.tx_turn);
    }
    return *ep_;
}

void service::receive(core::bytes_view frame, std::optional<core::nanos> arrived) {
    if (ep_) ep_->receive(frame, arrived);
}

json service::handle(const json& req, session& sess) {
    std::uint64_t id = 0;
    if (!req.is_object()) return error_response(0, code::bad_request, "a request is a JSON object");
    if (auto it = req.find("id"); it != req.end() && it->is_number_unsigned()) id = it->get<std::uint64_t>();
    else if (it != req.end() && it->is_number_integer() && it->get<std::int64_t>() >= 0) id = it->get<std::uint64_t>();
    else return error_response(0, code::bad_request, "missing or invalid 'id' (an unsigned integer)");
    auto op = req.find("op");
    if (op == req.end() || !op->is_string()) return error_response(id, code::bad_request, "missing 'op'");
    const auto name = op->get<std::string>();
    if (std::find(operations().begin(), operations().end(), name) == operations().end())
        return error_response(id, code::unknown_op, "unknown operation '" + name + "'");
    if (name != "hello" && !sess.authed) return error_response(id, code::unauthorized, "send hello first");
    try {
        return ok_response(id, dispatch(name, req, sess));
    } catch (const bad_field& e) {
        return error_response(id, code::bad_request, e.what());
    } catch (const op_error& e) {
        return error_response(id, e.code, e.what());
    } catch (const std::exception& e) {
        return error_response(id, code::internal, e.what());
    }
}

json service::dispatch(const std::string& op, const json& r, session& sess) {
    if (op == "hello") {
        const auto major = uint_field(r, "version_major", 0xFFFF);
        if (major != k_version_major)
            throw op_error(code::version, "this agent speaks protocol " + std::to_string(k_version_major) + ".x, not " +
                                              std::to_string(major) + ".x");
        if (!o_.token.empty()) {
            if (!r.contains("token") || !r["token"].is_string() || r["token"].get<std::string>() != o_.token)
                throw op_error(code::unauthorized, "wrong or missing token");
        }
        sess.authed = true;
        return {{"name", o_.name},
                {"version_major", k_version_major},
                {"version_minor", o_.version_minor},
                {"spec", "metaroce-1.2-model"},
                {"capabilities", o_.capabilities},
                {"bug", o_.bug.empty() ? "none" : o_.bug},
                {"address", netio::ip_text(ip_of(o_.self))}};
    }
    if (op == "reset") {
        reset(r.contains("seed") ? uint_field(r, "seed") : 1);
        return {};
    }
    if (op == "configure") {
        if (ep_) throw op_error(code::bad_state, "configure must come after reset, before the endpoint is used");
        auto p = r.find("params");
        if (p == r.end() || !p->is_object()) throw bad_field("missing field 'params' (an object of strings)");
        auto next = cfg_;
        for (const auto& [k, v] : p->items()) {
            if (!v.is_string()) throw bad_field("params." + k + " must be a string");
            if (k == "bug") throw op_error(code::invalid_param, "the bug profile is chosen when the agent starts (--bug)");
            if (auto st = endpoint::config_set(next, k, v.get<std::string>()); !st)
                throw op_error(code::invalid_param, st.err().message);
        }
        cfg_ = next;
        return {};
    }
    if (op == "listen") {
        ep().listen();
        return {};
    }
    if (op == "connect") {
        const auto peer = string_field(r, "peer");
        auto ip = netio::parse_ip(peer);
        if (!ip) throw bad_field("field 'peer': " + ip.err().message);
        if (o_.peer_allowed && !o_.peer_allowed(netio::ip_text(*ip)))
            throw op_error(code::failed, "peer " + peer + " is not a wire peer this agent may send to (" + o_.peer_rule + ")");
        return {{"conn", ep().connect(address_of({}, *ip))}};
    }
    if (op == "status") {
        auto& e = ep();
        const auto c = conn_field(r, e);
        return {{"established", e.established(c)}, {"in_error", e.in_error(c)}, {"closed", e.closed(c)}};
    }
    if (op == "accepted") return {{"conns", ep().accepted()}};
    if (op == "register_mr") {
        const auto len = uint_field(r, "length", 1u << 30);
        if (len > o_.max_mr_bytes)
            throw op_error(code::failed, "register_mr: " + std::to_string(len) + " bytes is beyond this agent's limit of " +
                                             std::to_string(o_.max_mr_bytes) + " per region");
        if (len > o_.max_total_mr_bytes - std::min(mr_bytes_, o_.max_total_mr_bytes))
            throw op_error(code::failed, "register_mr: " + std::to_string(len) + " more bytes would pass this agent's limit of " +
                                             std::to_string(o_.max_total_mr_bytes) + " in all (" + std::to_string(mr_bytes_) +
                                             " registered since the last reset)");
        auto& e = ep();
        const auto rkey = e.register_mr(len);
        mr_bytes_ += len;
        return {{"rkey", rkey}, {"va", e.mr_va(rkey)}};
    }
    if (op == "post_recv") {
        auto& e = ep();
        const auto conn = conn_field(r, e);
        const auto tag = static_cast<std::uint16_t>(uint_field(r, "tag", 0xFFFF));
        const auto rkey = rkey_field(r, e);
        check(e.post_recv(conn, tag, rkey, uint_field(r, "offset"), static_cast<std::uint32_t>(uint_field(r, "length", 0xFFFFFFFF)),
                          uint_field(r, "wr_id")));
        return {};
    }
    // Posts: every field is read and the message's bytes are moved into the
    // buffer the endpoint keeps before ep() brings the clock to wall time, so
    // nothing slow lies between that and the first packet. (ep() before the
    // arguments, as a member call orders it, let the endpoint copy 4 MiB on a
    // clock already read: beside stress-ng mrct-refnic armed its 20 ms
    // retransmit timers on a clock 18 ms stale, and they fired at once.)
    if (op == "post_write") {
        auto data = std::make_shared<const core::byte_buffer>(data_field(r, "data", sess));
        const auto conn = static_cast<std::uint32_t>(uint_field(r, "conn", 0xFFFFFFFF));
        const auto stream = static_cast<std::uint16_t>(uint_field(r, "stream", 0xFFFF));
        const auto va = uint_field(r, "remote_va");
        const auto rkey = static_cast<std::uint32_t>(uint_field(r, "rkey", 0xFFFFFFFF));
        const auto wr_id = uint_field(r, "wr_id");
        const auto imm = imm_field(r);
        auto& e = ep();
        require_connection(e, conn);
        check(e.post_write(conn, stream, std::move(data), va, rkey, wr_id, imm));
        return {};
    }
    if (op == "post_send") {
        auto data = std::make_shared<const core::byte_buffer>(data_field(r, "data", sess));
        const auto conn = static_cast<std::uint32_t>(uint_field(r, "conn", 0xFFFFFFFF));
        const auto stream = static_cast<std::uint16_t>(uint_field(r, "stream", 0xFFFF));
        const auto tag = static_cast<std::uint16_t>(uint_field(r, "tag", 0xFFFF));
        const auto wr_id = uint_field(r, "wr_id");
        const auto imm = imm_field(r);
        auto& e = ep();
        require_connection(e, conn);
        check(e.post_send(conn, stream, tag, std::move(data), wr_id, imm));
        return {};
    }
    if (op == "poll") {
        json list = json::array();
        if (ep_) {
            if (o_.clock) o_.clock();
            auto wcs = ep_->poll();
            const core::nanos now = s_.now();
            for (const auto& wc : wcs) {
                json j = {{"conn", wc.conn},     {"wr_id", wc.wr_id},   {"kind", std::string(endpoint::wc_kind_name(wc.kind))},
                          {"status", std::string(endpoint::wc_status_name(wc.status))},
                          {"stream", wc.stream}, {"tag", wc.tag},       {"stream_seq", wc.stream_seq},
                          {"length", wc.length}, {"time_ns", wc.time.count()}};
                if (o_.reap_stamps) {  // stamped at the reap: it happened since the previous one
                    j["time_ns"] = now.count();
                    j["time_err_ns"] = (now - std::min(now, last_poll_)).count();
                }
                if (wc.imm) j["imm"] = *wc.imm;
                list.push_back(std::move(j));
            }
            last_poll_ = now;
        }
        return {{"now_ns", s_.now().count()}, {"completions", std::move(list)}};
    }
    if (op == "read_mem") {
        auto& e = ep();
        const auto rkey = rkey_field(r, e);
        const auto off = uint_field(r, "offset");
        const auto len = uint_field(r, "length", 1u << 30);
        auto m = e.mr_bytes(rkey);
        if (off > m.size() || len > m.size() - off)
            throw op_error(code::out_of_range, "read_mem beyond the region (" + std::to_string(m.size()) + " bytes)");
        const core::bytes_view bytes(m.data() + off, len);
        auto bin = r.find("binary");
        if (bin != r.end() && !bin->is_boolean()) throw bad_field("field 'binary' must be a boolean");
        if (bin != r.end() && bin->get<bool>()) {  // 1.1: the bytes follow the response line
            sess.out_data = core::byte_buffer(bytes.begin(), bytes.end());
            return {{"data_bytes", len}};
        }
        return {{"data", base64_encode(bytes)}};
    }
    if (op == "counters") {
        json c = json::object();
        if (ep_ && o_.report_counters) c = endpoint::counter_map(ep_->stats());
        if (!o_.report_frame_counts) {
            c.erase("frames_in");
            c.erase("frames_out");
        }
        return {{"counters", std::move(c)}};
    }
    if (op == "close") {
        auto& e = ep();
        check(e.close(conn_field(r, e)));
        return {};
    }
    throw op_error(code::unknown_op, "unknown operation '" + op + "'");
}

}  // namespace mrct::agent
