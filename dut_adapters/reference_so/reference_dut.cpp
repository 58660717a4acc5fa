// The reference endpoint as a DUT library behind the in-process ABI
// (dut_adapters/abi/mrct_dut.h, docs/dut-abi.md): the proof that the ABI
// carries everything the plan needs. `--dut so:build/libmrct-reference-dut.so`
// must give the verdicts, and for a seed the wire, of `--dut sim`; with
// `,bug=NAME` those of `sim:bug=NAME` (ctest so_reference_equivalence).
// The RTL DUT (libmrct-rtl-dut.so) is the same glue with another flavour
// (flavour.h): its units are Verilated RTL.
//
// It keeps its own scheduler and follows the engine's clock: every call
// first runs what was due before its `now`, advance() what is due at it.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "mrct_dut.h"
#include "core/text.h"
#include "endpoint/endpoint.h"
#include "flavour.h"

namespace {

using namespace mrct;
using core::nanos;

endpoint::address to_address(const mrct_dut_addr& a) {
    endpoint::address r;
    std::copy(a.mac, a.mac + 6, r.mac.begin());
    if (a.ip_version == 6) {
        wire::ipv6_addr v6{};
        std::copy(a.ip, a.ip + 16, v6.begin());
        r.ip6 = v6;
    } else {
        std::copy(a.ip, a.ip + 4, r.ip.begin());
    }
    return r;
}

}  // namespace

struct mrct_dut {
    mrct_dut_host host{};
    std::string bug;
    std::map<std::string, std::string> options;  // the flavour's create options
    endpoint::config cfg;
    sim::scheduler sched;
    std::unique_ptr<endpoint::endpoint> ep;
    std::string error;
    std::vector<endpoint::completion> pending;  // polled from the endpoint, not yet handed over

    int fail(int code, std::string why) {
        error = std::move(why);
        return code;
    }
    // MRCT_OK, or NOT_FOUND for an unknown connection or R_Key (one rule, as the agent's).
    int known_conn(std::uint32_t conn) {
        return ep->has_connection(conn) ? MRCT_OK : fail(MRCT_E_NOT_FOUND, "unknown connection " + std::to_string(conn));
    }
    int known_region(std::uint32_t rkey) {
        return ep->has_region(rkey) ? MRCT_OK : fail(MRCT_E_NOT_FOUND, "unknown R_Key " + std::to_string(rkey));
    }
    // Runs everything due strictly before `now`, then stands at `now`.
    void before(mrct_time_ns now) {
        const nanos t{now};
        while (sched.run_one(t - nanos{1})) {
        }
        if (t > sched.now()) sched.advance_to(t);
    }
    bool started() const { return ep != nullptr; }
};

extern "C" {

uint32_t mrct_dut_abi_version(void) { return MRCT_DUT_ABI_VERSION; }

const mrct_dut_info* mrct_dut_describe(void) {
    const auto& f = so_shell::this_flavour();
    static const std::vector<mrct_dut_bug> bugs = [&f] {
        std::vector<mrct_dut_bug> v;
        for (const auto& b : f.bugs) v.push_back({b.name.c_str(), b.clauses.c_str(), b.description.c_str()});
        return v;
    }();
    static const mrct_dut_info info{f.name.c_str(), "metaroce-1.2-model", f.capabilities.c_str(), bugs.size(), bugs.data()};
    return &info;
}

mrct_dut* mrct_dut_create(const mrct_dut_host* host, const char* options, char* err, size_t err_cap) {
    auto say = [&](const std::string& m) {
        if (err && err_cap) {
            const auto n = std::min(m.size(), err_cap - 1);
            std::memcpy(err, m.data(), n);
            err[n] = '\0';
        }
        return nullptr;
    };
    if (!host || host->size < sizeof(mrct_dut_host) || !host->transmit) return say("no usable host callbacks");
    auto d = std::make_unique<mrct_dut>();
    d->host = *host;
    const auto& f = so_shell::this_flavour();
    for (const auto& kv : core::split(options ? options : "", ",")) {
        const auto eq = kv.find('=');
        const auto key = kv.substr(0, eq);
        const auto value = eq == std::string::npos ? std::string() : kv.substr(eq + 1);
        if (key == "bug") {
            std::string all = "none";
            for (const auto& b : f.bugs) all += ", " + b.name;
            const bool known = value == "none" || std::any_of(f.bugs.begin(), f.bugs.end(), [&](const auto& b) { return b.name == value; });
            if (!known) return say("unknown bug profile '" + value + "' (expected one of: " + all + ")");
            d->bug = value == "none" ? "" : value;
        } else if (f.options.count(key)) {
            d->options[key] = value;
        } else {
            std::string takes = "bug=NAME";
            for (const auto& [k, help] : f.options) takes += ", " + k + "=... (" + help + ")";
            return say("unknown option '" + key + "' (this library takes " + takes + ")");
        }
    }
    if (!d->bug.empty() && f.plant) f.plant(d->cfg, d->bug);
    return d.release();
}

void mrct_dut_destroy(mrct_dut* d) { delete d; }

const char* mrct_dut_last_error(mrct_dut* d) { return d ? d->error.c_str() : "no instance"; }

int mrct_dut_configure(mrct_dut* d, const char* name, const char* value) {
    if (d->started()) return d->fail(MRCT_E_BAD_STATE, "configure after start");
    if (std::string_view(name) == "bug") return d->fail(MRCT_E_INVALID_PARAM, "the bug profile is a create option (bug=NAME)");
    if (auto st = endpoint::config_set(d->cfg, name, value); !st) return d->fail(MRCT_E_INVALID_PARAM, st.err().message);
    return MRCT_OK;
}

int mrct_dut_start(mrct_dut* d, const mrct_dut_addr* self, uint64_t seed) {
    if (d->started()) return d->fail(MRCT_E_BAD_STATE, "started twice");
    d->ep = std::make_unique<endpoint::endpoint>(d->sched, d->cfg, to_address(*self), seed, [d](core::bytes_view f) {
        d->host.transmit(d->host.ctx, f.data(), f.size());
    });
    if (const auto& f = so_shell::this_flavour(); f.attach) f.attach(*d->ep, d->bug, d->options);
    return MRCT_OK;
}

void mrct_dut_advance(mrct_dut* d, mrct_time_ns now) {
    d->before(now);
    while (d->sched.run_one(nanos{now})) {
    }
}

mrct_time_ns mrct_dut_next_time(mrct_dut* d) {
    const auto t = d->sched.next_time();
    return t == core::k_never ? MRCT_NEVER : t.count();
}

void mrct_dut_receive(mrct_dut* d, mrct_time_ns now, const uint8_t* frame, size_t len) {
    d->before(now);
    d->ep->receive(core::bytes_view(frame, len));
}

int mrct_dut_listen(mrct_dut* d, mrct_time_ns now) {
    d->before(now);
    d->ep->listen();
    return MRCT_OK;
}

int mrct_dut_connect(mrct_dut* d, mrct_time_ns now, const mrct_dut_addr* peer, uint32_t* conn) {
    d->before(now);
    *conn = d->ep->connect(to_address(*peer));
    return MRCT_OK;
}

int mrct_dut_status(mrct_dut* d, uint32_t conn, mrct_conn_status* out) {
    out->established = d->ep->established(conn);
    out->in_error = d->ep->in_error(conn);
    out->closed = d->ep->closed(conn);
    out->reserved = 0;
    return MRCT_OK;
}

int mrct_dut_accepted(mrct_dut* d, uint32_t* conns, size_t cap, size_t* n) {
    const auto& a = d->ep->accepted();
    *n = a.size();
    std::copy_n(a.begin(), std::min(cap, a.size()), conns);
    return MRCT_OK;
}

int mrct_dut_close(mrct_dut* d, mrct_time_ns now, uint32_t conn) {
    d->before(now);
    if (const int rc = d->known_conn(conn); rc != MRCT_OK) return rc;
    if (auto st = d->ep->close(conn); !st) return d->fail(MRCT_E_FAILED, st.err().message);
    return MRCT_OK;
}

int mrct_dut_register_mr(mrct_dut* d, mrct_time_ns now, uint64_t length, uint32_t* rkey, uint64_t* va) {
    d->before(now);
    if (length > MRCT_DUT_MAX_MR) return d->fail(MRCT_E_FAILED, "a region is at most 1 GiB");
    *rkey = d->ep->register_mr(length);
    *va = d->ep->mr_va(*rkey);
    return MRCT_OK;
}

int mrct_dut_post_recv(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t tag, uint32_t rkey, uint64_t offset,
                       uint32_t length, uint64_t wr_id) {
    d->before(now);
    if (const int rc = d->known_conn(conn); rc != MRCT_OK) return rc;
    if (const int rc = d->known_region(rkey); rc != MRCT_OK) return rc;
    if (auto st = d->ep->post_recv(conn, tag, rkey, offset, length, wr_id); !st)
        return d->fail(MRCT_E_FAILED, st.err().message);
    return MRCT_OK;
}

int mrct_dut_post_write(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t stream, const uint8_t* data, size_t len,
                        uint64_t remote_va, uint32_t rkey, uint64_t wr_id, int has_imm, uint32_t imm) {
    d->before(now);
    std::optional<std::uint32_t> im;
    if (has_imm) im = imm;
    if (const int rc = d->known_conn(conn); rc != MRCT_OK) return rc;
    if (auto st = d->ep->post_write(conn, stream, core::bytes_view(data, len), remote_va, rkey, wr_id, im); !st)
        return d->fail(MRCT_E_FAILED, st.err().message);
    return MRCT_OK;
}

int mrct_dut_post_send(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t stream, uint16_t tag, const uint8_t* data,
                       size_t len, uint64_t wr_id, int has_imm, uint32_t imm) {
    d->before(now);
    std::optional<std::uint32_t> im;
    if (has_imm) im = imm;
    if (const int rc = d->known_conn(conn); rc != MRCT_OK) return rc;
    if (auto st = d->ep->post_send(conn, stream, tag, core::bytes_view(data, len), wr_id, im); !st)
        return d->fail(MRCT_E_FAILED, st.err().message);
    return MRCT_OK;
}

int mrct_dut_poll(mrct_dut* d, mrct_time_ns now, mrct_completion* out, size_t cap, size_t* n) {
    d->before(now);
    // The endpoint hands over every completion at once; what does not fit in
    // `out` waits for the next poll.
    for (auto& wc : d->ep->poll()) d->pending.push_back(wc);
    *n = std::min(cap, d->pending.size());
    for (std::size_t i = 0; i < *n; ++i) {
        const auto& wc = d->pending[i];
        auto& o = out[i];
        o = {};
        o.wr_id = wc.wr_id;
        o.time = wc.time.count();
        o.conn = wc.conn;
        o.stream_seq = wc.stream_seq;
        o.length = wc.length;
        o.has_imm = wc.imm.has_value();
        o.imm = wc.imm.value_or(0);
        o.stream = wc.stream;
        o.tag = wc.tag;
        o.kind = static_cast<std::uint8_t>(wc.kind);      // the ABI's order is wc_kind's
        o.status = static_cast<std::uint8_t>(wc.status);  // and wc_status's
    }
    d->pending.erase(d->pending.begin(), d->pending.begin() + static_cast<std::ptrdiff_t>(*n));
    return MRCT_OK;
}

int mrct_dut_read_mem(mrct_dut* d, uint32_t rkey, uint64_t offset, uint8_t* out, uint64_t len) {
    if (const int rc = d->known_region(rkey); rc != MRCT_OK) return rc;
    auto m = d->ep->mr_bytes(rkey);
    if (offset > m.size() || len > m.size() - offset) return d->fail(MRCT_E_OUT_OF_RANGE, "read_mem beyond the region");
    std::memcpy(out, m.data() + offset, len);
    return MRCT_OK;
}

int mrct_dut_counters(mrct_dut* d, mrct_counter* out, size_t cap, size_t* n) {
    const auto m = endpoint::counter_map(d->ep->stats());
    *n = m.size();
    std::size_t i = 0;
    for (const auto& [name, value] : m) {
        if (i == cap) break;
        out[i] = {};
        std::strncpy(out[i].name, name.c_str(), sizeof out[i].name - 1);
        out[i].value = value;
        ++i;
    }
    return MRCT_OK;
}

}  // extern "C"
