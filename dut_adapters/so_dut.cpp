// so:PATH: a DUT library behind the in-process ABI (abi/mrct_dut.h,
// docs/dut-abi.md), driven in virtual time on the case's scheduler.
//
// The library is not trusted: every status, count, time, frame and string it
// hands back is checked, and a breach is a fault (the case ends as `error`,
// naming the function and what was wrong) after which the instance is not
// called again, except to destroy it.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <cstring>
#include <mutex>

#include "dut_adapters/dut.h"
#include "core/text.h"
#include "core/units.h"
#include "dut_adapters/so_library.h"

namespace mrct::dut {

using core::nanos;

std::string safe_text(const char* s, std::size_t limit) {
    if (!s) return "(null)";
    std::string out;
    const auto n = strnlen(s, limit);
    for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            static const char* k_hex = "0123456789abcdef";
            out += "\\x";
            out += k_hex[c >> 4];
            out += k_hex[c & 15];
        }
    }
    if (n == limit) out += "... (not terminated within " + std::to_string(limit) + " bytes)";
    return out;
}

namespace {

const char* status_name(int st) {
    switch (st) {
        case MRCT_OK: return "ok";
        case MRCT_E_BAD_REQUEST: return "bad_request";
        case MRCT_E_BAD_STATE: return "bad_state";
        case MRCT_E_INVALID_PARAM: return "invalid_param";
        case MRCT_E_NOT_FOUND: return "not_found";
        case MRCT_E_OUT_OF_RANGE: return "out_of_range";
        case MRCT_E_FAILED: return "failed";
        case MRCT_E_INTERNAL: return "internal";
        default: return nullptr;
    }
}

mrct_dut_addr to_abi(const endpoint::address& a) {
    mrct_dut_addr r{};
    std::copy(a.mac.begin(), a.mac.end(), r.mac);
    if (a.ip6) {
        r.ip_version = 6;
        std::copy(a.ip6->begin(), a.ip6->end(), r.ip);
    } else {
        r.ip_version = 4;
        std::copy(a.ip.begin(), a.ip.end(), r.ip);
    }
    return r;
}

}  // namespace

core::result<std::shared_ptr<so_library>> open_library(const std::string& path) {
    static std::mutex m;
    static std::map<std::string, std::shared_ptr<so_library>> cache;
    std::lock_guard lock(m);
    if (auto it = cache.find(path); it != cache.end()) return it->second;
    auto lib = std::make_shared<so_library>();
    lib->path = path;
    // A path without a slash would be searched for in the loader's paths;
    // the spec names a file.
    const auto file = path.find('/') == std::string::npos ? "./" + path : path;
    lib->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib->handle) return core::error{"so: cannot load '" + path + "': " + safe_text(dlerror())};
    std::vector<std::string> missing;
    auto resolve = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib->handle, name));
        if (!fn) missing.emplace_back(name);
    };
#define MRCT_SO_RESOLVE(name) resolve(lib->name, #name);
    MRCT_SO_RESOLVE(mrct_dut_abi_version)
    if (lib->mrct_dut_abi_version) {
        const auto v = lib->mrct_dut_abi_version();
        if (v >> 16 != MRCT_DUT_ABI_MAJOR)
            return core::error{"so: '" + path + "' was built against mrct_dut.h " + std::to_string(v >> 16) + "." +
                               std::to_string(v & 0xffff) + "; this mrct speaks " + std::to_string(MRCT_DUT_ABI_MAJOR) + "." +
                               std::to_string(MRCT_DUT_ABI_MINOR) + " (the major versions must agree)"};
    }
    MRCT_SO_RESOLVE(mrct_dut_describe)
    MRCT_SO_RESOLVE(mrct_dut_create)
    MRCT_SO_RESOLVE(mrct_dut_destroy)
    MRCT_SO_RESOLVE(mrct_dut_last_error)
    MRCT_SO_RESOLVE(mrct_dut_configure)
    MRCT_SO_RESOLVE(mrct_dut_start)
    MRCT_SO_RESOLVE(mrct_dut_advance)
    MRCT_SO_RESOLVE(mrct_dut_next_time)
    MRCT_SO_RESOLVE(mrct_dut_receive)
    MRCT_SO_RESOLVE(mrct_dut_listen)
    MRCT_SO_RESOLVE(mrct_dut_connect)
    MRCT_SO_RESOLVE(mrct_dut_status)
    MRCT_SO_RESOLVE(mrct_dut_accepted)
    MRCT_SO_RESOLVE(mrct_dut_close)
    MRCT_SO_RESOLVE(mrct_dut_register_mr)
    MRCT_SO_RESOLVE(mrct_dut_post_recv)
    MRCT_SO_RESOLVE(mrct_dut_post_write)
    MRCT_SO_RESOLVE(mrct_dut_post_send)
    MRCT_SO_RESOLVE(mrct_dut_poll)
    MRCT_SO_RESOLVE(mrct_dut_read_mem)
    MRCT_SO_RESOLVE(mrct_dut_counters)
#undef MRCT_SO_RESOLVE
    if (!missing.empty()) {
        std::string list;
        for (const auto& n : missing) list += (list.empty() ? "" : ", ") + n;
        return core::error{"so: '" + path + "' lacks " + std::to_string(missing.size()) + " symbol" +
                           (missing.size() > 1 ? "s" : "") + " of the DUT ABI: " + list + " (dut_adapters/abi/mrct_dut.h)"};
    }
    const auto* d = lib->mrct_dut_describe();
    if (!d || !d->name || !d->version || !d->capabilities)
        return core::error{"so: '" + path + "': mrct_dut_describe returned no name, version or capabilities"};
    if (d->n_bugs > 4096 || (d->n_bugs && !d->bugs))
        return core::error{"so: '" + path + "': mrct_dut_describe lists " + std::to_string(d->n_bugs) + " bugs without a table"};
    lib->described.name = safe_text(d->name, 256);
    lib->described.version = safe_text(d->version, 256);
    lib->described.capabilities = core::split(safe_text(d->capabilities), ", ");
    for (std::size_t i = 0; i < d->n_bugs; ++i) {
        const auto& b = d->bugs[i];
        if (!b.name || !b.clauses)
            return core::error{"so: '" + path + "': bug " + std::to_string(i) + " of mrct_dut_describe has no name or clauses"};
        lib->bugs.push_back({safe_text(b.name, 256), safe_text(b.clauses, 1024), safe_text(b.summary, 1024)});
    }
    cache[path] = lib;
    return lib;
}

namespace {

class so_dut final : public dut {
public:
    so_dut(std::shared_ptr<so_library> lib, so_options o) : lib_(std::move(lib)), o_(std::move(o)) {}
    ~so_dut() override {
        if (d_) lib_->mrct_dut_destroy(d_);
    }

    core::status create() {
        host_.size = sizeof host_;
        host_.ctx = this;
        host_.transmit = &so_dut::on_transmit;
        host_.log = &so_dut::on_log;
        char err[1024] = {};
        d_ = lib_->create ? lib_->create(o_, &host_, err, sizeof err - 1)
                          : lib_->mrct_dut_create(&host_, o_.library_options.c_str(), err, sizeof err - 1);
        if (!d_)
            return core::error{lib_->create ? safe_text(err, sizeof err - 1)  // isolated: says itself what failed
                                            : "so: mrct_dut_create refused: " + safe_text(err, sizeof err - 1)};
        return core::ok_status();
    }

    info hello() const override {
        auto i = lib_->described;
        i.bug = o_.bug.empty() ? "none" : o_.bug;
        return i;
    }
    std::string fault() const override { return fault_; }

    core::status configure(const std::map<std::string, std::string>& params) override {
        for (const auto& [k, v] : params) {
            if (k == "bug") continue;  // a create option (bug=NAME in the spec)
            enter("mrct_dut_configure");
            auto st = status("mrct_dut_configure", lib_->mrct_dut_configure(d_, k.c_str(), v.c_str()));
            leave();
            if (!st) return st;
        }
        return core::ok_status();
    }
    core::status start(sim::scheduler& s, endpoint::address self, std::uint64_t seed, frame_tx tx) override {
        s_ = &s;
        tx_ = std::move(tx);
        proxy_ = std::make_unique<sim::timer>(s);
        const auto a = to_abi(self);
        enter("mrct_dut_start");
        auto st = status("mrct_dut_start", lib_->mrct_dut_start(d_, &a, seed));
        leave();
        return st;
    }
    void receive(core::bytes_view f) override {
        if (!usable()) return;
        enter("mrct_dut_receive");
        lib_->mrct_dut_receive(d_, now().count(), f.data(), f.size());
        leave();
    }
    void listen() override {
        if (!usable()) return;
        enter("mrct_dut_listen");
        note(status("mrct_dut_listen", lib_->mrct_dut_listen(d_, now().count())));
        leave();
    }
    std::uint32_t connect(endpoint::address peer) override {
        if (!usable()) return 0;
        const auto a = to_abi(peer);
        std::uint32_t conn = 0;
        enter("mrct_dut_connect");
        note(status("mrct_dut_connect", lib_->mrct_dut_connect(d_, now().count(), &a, &conn)));
        leave();
        return conn;
    }
    bool established(std::uint32_t c) const override { return conn_status(c).established; }
    bool in_error(std::uint32_t c) const override { return conn_status(c).in_error; }
    std::vector<std::uint32_t> accepted() const override {
        std::vector<std::uint32_t> v(16);
        if (!self().fill_all("mrct_dut_accepted", v, [&](std::uint32_t* p, std::size_t cap, std::size_t* n) {
                return lib_->mrct_dut_accepted(d_, p, cap, n);
            }))
            return {};
        return v;
    }
    core::status close(std::uint32_t c) override {
        if (!usable()) return core::error{fault_};
        enter("mrct_dut_close");
        auto st = status("mrct_dut_close", lib_->mrct_dut_close(d_, now().count(), c));
        leave();
        return st;
    }
    std::uint32_t register_mr(std::size_t len) override {
        if (!usable()) return 0;
        std::uint32_t rkey = 0;
        std::uint64_t va = 0;
        enter("mrct_dut_register_mr");
        const bool ok = note(status("mrct_dut_register_mr", lib_->mrct_dut_register_mr(d_, now().count(), len, &rkey, &va)));
        leave();
        if (ok) vas_[rkey] = va;
        return rkey;
    }
    std::uint64_t mr_va(std::uint32_t rkey) const override {
        auto it = vas_.find(rkey);
        return it == vas_.end() ? 0 : it->second;
    }
    core::status post_recv(std::uint32_t conn, std::uint16_t tag, std::uint32_t rkey, std::uint64_t off, std::uint32_t len,
                           std::uint64_t wr_id) override {
        if (!usable()) return core::error{fault_};
        enter("mrct_dut_post_recv");
        auto st = status("mrct_dut_post_recv", lib_->mrct_dut_post_recv(d_, now().count(), conn, tag, rkey, off, len, wr_id));
        leave();
        return st;
    }
    core::status post_write(std::uint32_t conn, std::uint16_t stream, core::bytes_view data, std::uint64_t va,
                            std::uint32_t rkey, std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        if (!usable()) return core::error{fault_};
        enter("mrct_dut_post_write");
        auto st = status("mrct_dut_post_write", lib_->mrct_dut_post_write(d_, now().count(), conn, stream, data.data(), data.size(), va,
                                                                           rkey, wr_id, imm.has_value(), imm.value_or(0)));
        leave();
        return st;
    }
    core::status post_send(std::uint32_t conn, std::uint16_t stream, std::uint16_t tag, core::bytes_view data,
                           std::uint64_t wr_id, std::optional<std::uint32_t> imm) override {
        if (!usable()) return core::error{fault_};
        enter("mrct_dut_post_send");
        auto st = status("mrct_dut_post_send", lib_->mrct_dut_post_send(d_, now().count(), conn, stream, tag, data.data(), data.size(),
                                                                         wr_id, imm.has_value(), imm.value_or(0)));
        leave();
        return st;
    }
    std::vector<endpoint::completion> poll() override {
        std::vector<endpoint::completion> out;
        if (!usable()) return out;
        mrct_completion buf[64];
        enter("mrct_dut_poll");
        for (;;) {
            std::size_t n = 0;
            if (!note(status("mrct_dut_poll", lib_->mrct_dut_poll(d_, now().count(), buf, std::size(buf), &n)))) break;
            if (n > std::size(buf)) {
                breach("mrct_dut_poll", "wrote " + std::to_string(n) + " completions into room for " + std::to_string(std::size(buf)));
                break;
            }
            for (std::size_t i = 0; i < n; ++i) {
                const auto bound = lib_->polled_time ? std::min(now().count(), lib_->polled_time(d_, i)) : now().count();
                auto wc = convert(buf[i], bound);
                if (!wc) break;
                out.push_back(*wc);
            }
            if (n < std::size(buf) || !usable()) break;
            if (out.size() > k_max_completions) {
                breach("mrct_dut_poll", "handed over more than " + std::to_string(k_max_completions) + " completions in one poll");
                break;
            }
        }
        leave();
        return out;
    }
    core::result<core::byte_buffer> read_mem(std::uint32_t rkey, std::uint64_t off, std::size_t len) override {
        if (!usable()) return core::error{fault_};
        if (len > MRCT_DUT_MAX_MR) return core::error{"read_mem of more than 1 GiB"};
        core::byte_buffer b(len);
        if (auto st = status("mrct_dut_read_mem", lib_->mrct_dut_read_mem(d_, rkey, off, b.data(), len)); !st) return st.err();
        return b;
    }
    std::map<std::string, std::uint64_t> counters() const override {
        std::vector<mrct_counter> v(64);
        if (!self().fill_all("mrct_dut_counters", v, [&](mrct_counter* p, std::size_t cap, std::size_t* n) {
                return lib_->mrct_dut_counters(d_, p, cap, n);
            }))
            return {};
        std::map<std::string, std::uint64_t> m;
        for (const auto& c : v) {
            if (!memchr(c.name, 0, sizeof c.name)) {
                self().breach("mrct_dut_counters", "a counter name not NUL-terminated within 48 bytes");
                return {};
            }
            m[safe_text(c.name)] = c.value;
        }
        return m;
    }

private:
    static constexpr std::size_t k_max_list = 1 << 16;
    static constexpr std::size_t k_max_completions = 1 << 20;
    // Frames one call may send, and advances one virtual instant may take,
    // before the DUT counts as never yielding.
    static constexpr std::size_t k_max_frames_per_call = 1 << 16;
    static constexpr unsigned k_max_advances_per_instant = 1 << 16;

    static void on_transmit(void* ctx, const uint8_t* frame, size_t len) {
        auto* self = static_cast<so_dut*>(ctx);
        if (!self->in_call_) {
            self->breach("transmit", "was called from a function that takes no time (only the calls given `now` may send)");
            return;
        }
        if (!self->fault_.empty()) return;
        if (!frame || len > MRCT_DUT_MAX_FRAME) {
            self->breach(self->calling_, "transmitted a frame of " + std::to_string(len) + " bytes (at most " +
                                             std::to_string(MRCT_DUT_MAX_FRAME) + ")");
            return;
        }
        if (self->queued_.size() >= k_max_frames_per_call) {
            self->breach(self->calling_, "transmitted more than " + std::to_string(k_max_frames_per_call) +
                                             " frames in one call (a DUT that never yields)");
            return;
        }
        self->queued_.emplace_back(frame, frame + len);
    }
    static void on_log(void*, const char*) {}

    // The dut interface's queries are const; a breach they find is still a fault.
    so_dut& self() const { return const_cast<so_dut&>(*this); }
    // A list the library fills (`fill(data, cap, &n)`, n the total): with
    // the room `v` has, and once more with room for all if it needs more.
    // `v` ends as the list; false on a fault.
    template <class T, class F>
    bool fill_all(const char* fn, std::vector<T>& v, F&& fill) {
        if (!usable()) return false;
        for (int round = 0; round < 2; ++round) {
            std::size_t n = 0;
            if (!note(status(fn, fill(v.data(), v.size(), &n)))) return false;
            if (n <= v.size()) {
                v.resize(n);
                return true;
            }
            if (n > k_max_list) break;
            v.resize(n);
        }
        breach(fn, "gave a count beyond the room it was given, twice");
        return false;
    }

    bool usable() const { return d_ && fault_.empty(); }
    nanos now() const { return s_ ? s_->now() : nanos{0}; }
    // A call whose failure the dut interface cannot return: the DUT cannot
    // go on, so the failure is a fault (its message names the function).
    bool note(const core::status& st) {
        if (!st && fault_.empty()) fault_ = "the DUT library " + st.err().message;
        return st.ok();
    }
    void breach(std::string_view fn, const std::string& what) {
        if (fault_.empty()) fault_ = "the DUT library " + std::string(fn) + " " + what;
    }
    // Isolated: the child that hosted the instance is gone (crashed, hung).
    bool gone() {
        if (!lib_->dead || !d_) return false;
        const char* why = lib_->dead(d_);
        if (!why) return false;
        if (fault_.empty()) fault_ = why;
        return true;
    }
    core::status status(const char* fn, int st) {
        if (gone()) return core::error{fault_};
        const char* name = status_name(st);
        if (!name) {
            breach(fn, "returned " + std::to_string(st) + ", not a status of the ABI");
            return core::error{fault_};
        }
        if (st == MRCT_OK) return core::ok_status();
        const auto why = safe_text(lib_->mrct_dut_last_error(d_));
        if (st == MRCT_E_INTERNAL) {
            breach(fn, std::string("failed (internal): ") + why);
            return core::error{fault_};
        }
        return core::error{std::string(fn) + ": " + name + ": " + why};
    }
    // `bound`: the latest time a completion may carry (the poll's now, or
    // the time the library was polled at, polled_time).
    std::optional<endpoint::completion> convert(const mrct_completion& c, mrct_time_ns bound) {
        if (c.kind > MRCT_WC_RECV_WRITE_IMM || c.status > MRCT_WC_CONNECTION_ERROR) {
            breach("mrct_dut_poll", "gave a completion of kind " + std::to_string(c.kind) + ", status " + std::to_string(c.status) +
                                        " (not in the ABI)");
            return std::nullopt;
        }
        if (c.time < 0 || c.time > bound) {
            breach("mrct_dut_poll", "gave a completion at " + std::to_string(c.time) + " ns, outside 0.." +
                                        std::to_string(bound) + " ns (now)");
            return std::nullopt;
        }
        endpoint::completion wc;
        wc.conn = c.conn;
        wc.wr_id = c.wr_id;
        wc.kind = static_cast<endpoint::wc_kind>(c.kind);
        wc.status = static_cast<endpoint::wc_status>(c.status);
        wc.stream = c.stream;
        wc.stream_seq = c.stream_seq;
        wc.tag = c.tag;
        wc.length = c.length;
        if (c.has_imm) wc.imm = c.imm;
        wc.time = nanos{c.time};
        return wc;
    }
    mrct_conn_status conn_status(std::uint32_t c) const {
        mrct_conn_status st{};
        if (usable()) self().note(self().status("mrct_dut_status", lib_->mrct_dut_status(d_, c, &st)));
        return st;
    }

    void enter(const char* fn) {
        in_call_ = true;
        calling_ = fn;
    }
    // After every call that may move the DUT: its frames go out (in the order
    // sent, at this instant), then the engine's timer follows its next need.
    void leave() {
        in_call_ = false;
        (void)gone();
        auto frames = std::move(queued_);
        queued_.clear();
        if (!frames.empty() && !tx_) breach(calling_, "transmitted a frame before mrct_dut_start");
        if (fault_.empty())
            for (const auto& f : frames) tx_(f, nanos{0});
        follow();
    }
    void follow() {
        if (!usable() || !proxy_) return;
        const auto next = lib_->mrct_dut_next_time(d_);
        if (next == MRCT_NEVER) {
            proxy_->cancel();
            return;
        }
        if (next < 0) {
            breach("mrct_dut_next_time", "returned " + std::to_string(next) + " ns");
            return;
        }
        const nanos t = std::max(nanos{next}, now());
        if (!proxy_->armed() || proxy_->deadline() != t) proxy_->arm_at(t, [this] { wake(); });
    }
    void wake() {
        if (!usable()) return;  // a fault since the event was armed
        const auto t = now();
        if (t == last_wake_) {
            if (++same_instant_ > k_max_advances_per_instant) {
                breach("mrct_dut_advance", "asked to run at " + std::to_string(t.count()) + " ns more than " +
                                               std::to_string(k_max_advances_per_instant) + " times (a DUT that never yields)");
                return;
            }
        } else {
            last_wake_ = t;
            same_instant_ = 0;
        }
        enter("mrct_dut_advance");
        lib_->mrct_dut_advance(d_, t.count());
        leave();
    }

    std::shared_ptr<so_library> lib_;
    so_options o_;
    mrct_dut_host host_{};
    mrct_dut* d_ = nullptr;
    sim::scheduler* s_ = nullptr;
    frame_tx tx_;
    std::unique_ptr<sim::timer> proxy_;
    std::map<std::uint32_t, std::uint64_t> vas_;
    std::vector<core::byte_buffer> queued_;
    bool in_call_ = false;
    const char* calling_ = "";
    std::string fault_;
    nanos last_wake_{-1};
    unsigned same_instant_ = 0;
};

}  // namespace

namespace {
// A program installed beside this one, or what the environment names.
std::string beside_self(const char* env_name, const char* file) {
    if (const char* env = std::getenv(env_name); env && *env) return env;
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    return (ec ? std::filesystem::path(file) : self.parent_path() / file).string();
}
}  // namespace

std::string expand_rtl(const std::string& spec) {
    if (spec != "rtl" && !spec.starts_with("rtl:")) return spec;
    return "so:" + beside_self("MRCT_RTL_DUT", "libmrct-rtl-dut.so") + (spec == "rtl" ? "" : "," + spec.substr(4));
}

core::result<so_options> parse_so_options(const std::string& text) {
    so_options o;
    o.host_program = beside_self("MRCT_DUT_HOST", "mrct-dut-host");
    const auto comma = text.find(',');
    o.path = text.substr(0, comma);
    if (o.path.empty()) return core::error{"so: expects so:PATH.so[,KEY=VALUE...] (docs/dut-abi.md)"};
    for (const auto& kv : core::split(comma == std::string::npos ? "" : std::string_view(text).substr(comma + 1), ",")) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) return core::error{"so: option '" + kv + "' is not KEY=VALUE"};
        const auto key = kv.substr(0, eq), value = kv.substr(eq + 1);
        // The engine's own options; the rest are the library's.
        if (key == "isolate") {
            if (value != "process" && value != "none") return core::error{"so: isolate= expects process or none, got '" + value + "'"};
            o.isolate = value == "process";
            continue;
        }
        if (key == "call_limit") {
            const auto d = core::parse_duration_ns(value);
            if (!d || *d < 1'000'000) return core::error{"so: call_limit= expects a duration of 1ms or more, got '" + value + "'"};
            o.call_limit = std::chrono::milliseconds(*d / 1'000'000);
            continue;
        }
        if (key == "bug") o.bug = value;
        o.library_options += (o.library_options.empty() ? "" : ",") + kv;
    }
    return o;
}

namespace {
core::result<std::shared_ptr<so_library>> library_for(const so_options& o) {
    return o.isolate ? remote_library(o) : open_library(o.path);
}
}  // namespace

core::result<std::vector<so_bug>> so_bugs(const so_options& o) {
    auto lib = library_for(o);
    if (!lib) return lib.err();
    return (*lib)->bugs;
}

core::result<std::unique_ptr<dut>> make_so(const so_options& o) {
    auto lib = library_for(o);
    if (!lib) return lib.err();
    auto d = std::make_unique<so_dut>(*lib, o);
    if (auto st = d->create(); !st) return st.err();
    return std::unique_ptr<dut>(std::move(d));
}

}  // namespace mrct::dut
