// isolate=process: a DUT library hosted in a child process (mrct-dut-host),
// one per instance, reached over a socket pair by trampolines with the ABI's
// own signatures. so_dut cannot tell the difference, except that a library
// that crashes or hangs now ends its case as `error` ("died of signal 11
// (Segmentation fault) in mrct_dut_receive") instead of taking the engine
// with it (docs/dut-abi.md, "Guards").
//
// The exchange is strictly one request, one response. A response carries,
// before its own fields, the frames the library transmitted during the call
// (the engine's transmit gets them before the call returns, as in-process)
// and the library's next time, asked right after the call, so that
// mrct_dut_next_time costs no round trip; and, after a call given a time
// (advance, receive, the posts, ...) of a started instance, the
// completions a poll at that time gave. The engine polls every 50 us of
// virtual time whether or not anything happened; answering from those, a
// poll costs no round trip either (a third of the plan's 126 k). A library
// makes completions only in calls, and has no timer next_time does not
// show (docs/dut-abi.md), so a poll at a later time with no call between
// has nothing more to give.
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <optional>
#include <thread>

#include "dut_adapters/so_library.h"

extern char** environ;

namespace mrct::dut {

namespace {

enum class op : std::uint8_t {
    create = 1,
    destroy,
    last_error,
    configure,
    start,
    advance,
    receive,
    listen,
    connect,
    status,
    accepted,
    close,
    register_mr,
    post_recv,
    post_write,
    post_send,
    poll,
    read_mem,
    counters,
};

const char* op_fn(op o) {
    switch (o) {
        case op::create: return "mrct_dut_create";
        case op::destroy: return "mrct_dut_destroy";
        case op::last_error: return "mrct_dut_last_error";
        case op::configure: return "mrct_dut_configure";
        case op::start: return "mrct_dut_start";
        case op::advance: return "mrct_dut_advance";
        case op::receive: return "mrct_dut_receive";
        case op::listen: return "mrct_dut_listen";
        case op::connect: return "mrct_dut_connect";
        case op::status: return "mrct_dut_status";
        case op::accepted: return "mrct_dut_accepted";
        case op::close: return "mrct_dut_close";
        case op::register_mr: return "mrct_dut_register_mr";
        case op::post_recv: return "mrct_dut_post_recv";
        case op::post_write: return "mrct_dut_post_write";
        case op::post_send: return "mrct_dut_post_send";
        case op::poll: return "mrct_dut_poll";
        case op::read_mem: return "mrct_dut_read_mem";
        case op::counters: return "mrct_dut_counters";
    }
    return "?";
}

// Both ends run on one host: values travel in its byte order.
struct writer {
    std::vector<std::uint8_t> b;
    writer() = default;
    explicit writer(bool framed) : b(framed ? sizeof(std::uint64_t) : 0) {}
    template <class T>
    void put(T v) {
        const auto at = b.size();
        b.resize(at + sizeof v);
        std::memcpy(b.data() + at, &v, sizeof v);
    }
    void bytes(const void* p, std::size_t n) {
        put<std::uint64_t>(n);
        const auto* c = static_cast<const std::uint8_t*>(p);
        b.insert(b.end(), c, c + n);
    }
    void str(const std::string& s) { bytes(s.data(), s.size()); }
};

struct reader {
    const std::uint8_t* p = nullptr;
    const std::uint8_t* end = nullptr;
    bool ok = true;
    template <class T>
    T get() {
        T v{};
        if (static_cast<std::size_t>(end - p) < sizeof v) {
            ok = false;
            return v;
        }
        std::memcpy(&v, p, sizeof v);
        p += sizeof v;
        return v;
    }
    std::pair<const std::uint8_t*, std::size_t> bytes() {
        const auto n = get<std::uint64_t>();
        if (!ok || n > static_cast<std::size_t>(end - p)) {
            ok = false;
            return {nullptr, 0};
        }
        auto r = std::make_pair(p, static_cast<std::size_t>(n));
        p += n;
        return r;
    }
    std::string str() {
        auto [q, n] = bytes();
        return q ? std::string(reinterpret_cast<const char*>(q), n) : std::string();
    }
};

// A message is its length (u64) and its bytes, sent with one send() and
// mostly read with one recv(): a round trip costs four system calls. Built
// in a writer made with `framed`, whose first 8 bytes wait for the length.
bool send_all(int fd, const void* p, std::size_t n) {
    const auto* c = static_cast<const char*>(p);
    while (n) {
        const auto k = ::send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k;
        n -= static_cast<std::size_t>(k);
    }
    return true;
}
bool send_message(int fd, std::vector<std::uint8_t>& framed) {
    const std::uint64_t n = framed.size() - sizeof n;
    std::memcpy(framed.data(), &n, sizeof n);
    return send_all(fd, framed.data(), framed.size());
}
constexpr std::uint64_t k_max_message = (std::uint64_t{1} << 30) + (1 << 20);
// Reads one message into m (its bytes from m[8]). The exchange is lockstep,
// so nothing follows a message on the stream. A receive timeout set on the
// socket (SO_RCVTIMEO) bounds each wait. 0 ok, 1 closed, 2 late.
int recv_message(int fd, std::vector<std::uint8_t>& m) {
    std::size_t have = 0, want = sizeof(std::uint64_t);
    if (m.size() < 65536) m.resize(65536);
    while (have < want) {
        const auto k = ::recv(fd, m.data() + have, m.size() - have, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 2;
        if (k <= 0) return 1;
        have += static_cast<std::size_t>(k);
        if (want == sizeof(std::uint64_t) && have >= want) {
            std::uint64_t n = 0;
            std::memcpy(&n, m.data(), sizeof n);
            if (n > k_max_message) return 1;
            want += n;
            if (m.size() < want) m.resize(want);
        }
    }
    return have == want ? 0 : 1;
}
// The bytes of a message recv_message read (past its length).
reader body_of(const std::vector<std::uint8_t>& m) {
    std::uint64_t n = 0;
    std::memcpy(&n, m.data(), sizeof n);
    return reader{m.data() + sizeof n, m.data() + sizeof n + n};
}
void set_receive_timeout(int fd, std::chrono::milliseconds t) {
    timeval tv{static_cast<time_t>(t.count() / 1000), static_cast<suseconds_t>(t.count() % 1000 * 1000)};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
}

// ------------------------------------------------------------------ parent

struct remote_instance {
    int fd = -1;
    pid_t pid = -1;
    mrct_dut_host host{};
    std::chrono::milliseconds limit{};
    std::string dead;        // why the child is gone ("" while it serves)
    std::string last_error;  // the child's, kept for mrct_dut_last_error's pointer
    mrct_time_ns next = MRCT_NEVER;
    std::vector<std::uint8_t> in;
    // Completions the child polled after a call, not yet handed to the
    // engine, oldest first; and whether a call since may have made others
    // (one the child polled nothing after, or a poll that did not end).
    std::vector<mrct_completion> polled;
    std::vector<mrct_time_ns> polled_t;  // each one's poll time (the call it followed)
    std::size_t polled_at = 0;           // the first not handed over
    bool poll_remote = true;
    std::vector<mrct_time_ns> handed_t;  // the poll times of what the last t_poll handed over

    // How the child ended, once it has (waits up to `grace`, then kills it).
    std::string reap(std::chrono::milliseconds grace) {
        if (pid <= 0) return "is gone";
        int st = 0;
        const auto until = std::chrono::steady_clock::now() + grace;
        pid_t r = 0;
        while ((r = ::waitpid(pid, &st, WNOHANG)) == 0 && std::chrono::steady_clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        if (r == 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &st, 0);
            pid = -1;
            return "stopped answering and was killed";
        }
        pid = -1;
        if (r < 0) return "is gone";
        if (WIFSIGNALED(st))
            return "died of signal " + std::to_string(WTERMSIG(st)) + " (" + ::strsignal(WTERMSIG(st)) + ")";
        return "exited with status " + std::to_string(WEXITSTATUS(st));
    }
    void kill_child(const std::string& why) {
        if (dead.empty()) dead = why;
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
            pid = -1;
        }
        if (fd >= 0) ::close(fd);
        fd = -1;
    }
    // One round trip. On success `r` reads the call's own fields; the frames
    // went to the engine's transmit and `next` holds the next time.
    bool call(op o, const writer& w, reader& r) {
        if (!dead.empty()) return false;
        writer m(true);
        m.put(static_cast<std::uint8_t>(o));
        m.b.insert(m.b.end(), w.b.begin(), w.b.end());
        if (!send_message(fd, m.b)) {
            kill_child("the DUT library's process " + reap(std::chrono::milliseconds(500)) + " before " + op_fn(o));
            return false;
        }
        const int got = recv_message(fd, in);
        if (got == 2) {
            kill_child("the DUT library did not return from " + std::string(op_fn(o)) + " within " +
                       std::to_string(limit.count()) + " ms (call_limit); its process was killed");
            return false;
        }
        if (got == 1) {
            kill_child("the DUT library's process " + reap(std::chrono::milliseconds(500)) + " in " + op_fn(o));
            return false;
        }
        r = body_of(in);
        const auto frames = r.get<std::uint32_t>();
        for (std::uint32_t i = 0; i < frames && r.ok; ++i) {
            auto [p, n] = r.bytes();
            const bool null = r.get<std::uint8_t>();
            if (r.ok) host.transmit(host.ctx, null ? nullptr : p, n);
        }
        next = r.get<mrct_time_ns>();
        // The completions polled after the call (a flag: whether it polled).
        const bool polled_after = r.get<std::uint8_t>() != 0;
        if (polled_after) {
            const auto at_time = r.get<mrct_time_ns>();
            auto [p, n] = r.bytes();
            const bool emptied = r.get<std::uint8_t>() != 0;
            if (p && n > 0 && n % sizeof(mrct_completion) == 0) {
                const auto k = n / sizeof(mrct_completion);
                const auto at = polled.size();
                polled.resize(at + k);
                std::memcpy(polled.data() + at, p, n);
                polled_t.resize(at + k, at_time);
            }
            poll_remote = poll_remote || !emptied;
        } else if (o != op::status && o != op::accepted && o != op::read_mem && o != op::counters && o != op::last_error &&
                   o != op::poll) {
            poll_remote = true;  // a call that may change the instance, not followed by a poll
        }
        if (!r.ok) {
            kill_child("the DUT library's process answered " + std::string(op_fn(o)) + " with a malformed message");
            return false;
        }
        return true;
    }
    int status_call(op o, const writer& w) {
        reader r;
        if (!call(o, w, r)) return MRCT_E_INTERNAL;
        return r.get<std::int32_t>();
    }
};

remote_instance* R(mrct_dut* d) { return reinterpret_cast<remote_instance*>(d); }

void put_addr(writer& w, const mrct_dut_addr* a) { w.bytes(a, sizeof *a); }

// A list the library fills: `w` (the call's own fields) and the room, then
// the status, the library's count into *n and the entries that fit into
// `out` (serve_list's answer).
template <class T>
int list_call(mrct_dut* d, op o, writer w, T* out, size_t cap, size_t* n) {
    w.put<std::uint64_t>(cap);
    reader r;
    if (!R(d)->call(o, w, r)) return MRCT_E_INTERNAL;
    const auto st = r.get<std::int32_t>();
    *n = r.get<std::uint64_t>();
    auto [p, bytes] = r.bytes();
    if (p) std::memcpy(out, p, std::min(bytes, cap * sizeof(T)));
    return st;
}

// Spawns mrct-dut-host for `path` and reads its hello: the library's
// description, or why it could not load it.
struct spawned {
    int fd = -1;
    pid_t pid = -1;
};
core::result<spawned> spawn_host(const so_options& o, std::vector<std::uint8_t>& hello) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        return core::error{std::string("so: socketpair: ") + std::strerror(errno)};
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, sv[1], 3);  // dup2 clears close-on-exec
    std::string prog = o.host_program, fd3 = "3", path = o.path;
    char* argv[] = {prog.data(), const_cast<char*>("--fd"), fd3.data(), path.data(), nullptr};
    pid_t pid = -1;
    const int err = ::posix_spawn(&pid, prog.c_str(), &fa, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(sv[1]);
    if (err != 0) {
        ::close(sv[0]);
        return core::error{"so: cannot start the DUT host program '" + prog + "': " + std::strerror(err) +
                           " (isolate=process runs the library in mrct-dut-host, built beside mrct; $MRCT_DUT_HOST names another)"};
    }
    set_receive_timeout(sv[0], o.call_limit);
    const int got = recv_message(sv[0], hello);
    if (got != 0) {
        remote_instance tmp;
        tmp.pid = pid;
        std::string how = got == 2 ? "did not finish loading it within " + std::to_string(o.call_limit.count()) + " ms"
                                   : tmp.reap(std::chrono::milliseconds(500)) + " while loading it";
        if (got == 2) tmp.kill_child(how);
        ::close(sv[0]);
        return core::error{"so: the process hosting '" + o.path + "' " + how};
    }
    return spawned{sv[0], pid};
}

// The hello: u8 loaded, then the error or the description.
core::result<std::shared_ptr<so_library>> read_hello(const std::vector<std::uint8_t>& hello, const std::string& path) {
    reader r = body_of(hello);
    const auto loaded = r.get<std::uint8_t>();
    if (!r.ok) return core::error{"so: the process hosting '" + path + "' sent a malformed hello"};
    if (!loaded) return core::error{r.str()};
    auto lib = std::make_shared<so_library>();
    lib->path = path;
    lib->described.name = r.str();
    lib->described.version = r.str();
    const auto ncaps = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < ncaps && r.ok; ++i) lib->described.capabilities.push_back(r.str());
    const auto nbugs = r.get<std::uint32_t>();
    for (std::uint32_t i = 0; i < nbugs && r.ok; ++i) {
        so_bug b;
        b.name = r.str();
        b.clauses = r.str();
        b.summary = r.str();
        lib->bugs.push_back(std::move(b));
    }
    if (!r.ok) return core::error{"so: the process hosting '" + path + "' sent a malformed description"};
    return lib;
}

// The trampolines: the ABI's signatures, a round trip each.
uint32_t t_abi_version() { return MRCT_DUT_ABI_VERSION; }
const mrct_dut_info* t_describe() { return nullptr; }  // the description came with the hello
mrct_dut* t_create(const mrct_dut_host*, const char*, char* err, size_t cap) {
    std::snprintf(err, cap, "an isolated library is created through so_library::create");
    return nullptr;
}
void t_destroy(mrct_dut* d) {
    auto* r = R(d);
    if (r->dead.empty() && r->fd >= 0) {
        writer m(true);
        m.put(static_cast<std::uint8_t>(op::destroy));
        (void)send_message(r->fd, m.b);  // the child destroys its instance and exits
    }
    if (r->fd >= 0) ::close(r->fd);
    r->fd = -1;
    if (r->pid > 0) (void)r->reap(std::chrono::milliseconds(2000));
    delete r;
}
const char* t_last_error(mrct_dut* d) {
    auto* r = R(d);
    reader in;
    if (!r->call(op::last_error, {}, in)) return r->dead.c_str();
    r->last_error = in.str();
    return r->last_error.c_str();
}
int t_configure(mrct_dut* d, const char* name, const char* value) {
    writer w;
    w.str(name);
    w.str(value);
    return R(d)->status_call(op::configure, w);
}
int t_start(mrct_dut* d, const mrct_dut_addr* self, uint64_t seed) {
    writer w;
    put_addr(w, self);
    w.put(seed);
    return R(d)->status_call(op::start, w);
}
void t_advance(mrct_dut* d, mrct_time_ns now) {
    writer w;
    w.put(now);
    reader r;
    (void)R(d)->call(op::advance, w, r);
}
mrct_time_ns t_next_time(mrct_dut* d) { return R(d)->dead.empty() ? R(d)->next : MRCT_NEVER; }
void t_receive(mrct_dut* d, mrct_time_ns now, const uint8_t* frame, size_t len) {
    writer w;
    w.put(now);
    w.bytes(frame, len);
    reader r;
    (void)R(d)->call(op::receive, w, r);
}
int t_listen(mrct_dut* d, mrct_time_ns now) {
    writer w;
    w.put(now);
    return R(d)->status_call(op::listen, w);
}
int t_connect(mrct_dut* d, mrct_time_ns now, const mrct_dut_addr* peer, uint32_t* conn) {
    writer w;
    w.put(now);
    put_addr(w, peer);
    reader r;
    if (!R(d)->call(op::connect, w, r)) return MRCT_E_INTERNAL;
    const auto st = r.get<std::int32_t>();
    *conn = r.get<std::uint32_t>();
    return st;
}
int t_status(mrct_dut* d, uint32_t conn, mrct_conn_status* out) {
    writer w;
    w.put(conn);
    reader r;
    if (!R(d)->call(op::status, w, r)) return MRCT_E_INTERNAL;
    const auto st = r.get<std::int32_t>();
    *out = r.get<mrct_conn_status>();
    return st;
}
int t_accepted(mrct_dut* d, uint32_t* conns, size_t cap, size_t* n) { return list_call(d, op::accepted, {}, conns, cap, n); }
int t_close(mrct_dut* d, mrct_time_ns now, uint32_t conn) {
    writer w;
    w.put(now);
    w.put(conn);
    return R(d)->status_call(op::close, w);
}
int t_register_mr(mrct_dut* d, mrct_time_ns now, uint64_t length, uint32_t* rkey, uint64_t* va) {
    writer w;
    w.put(now);
    w.put(length);
    reader r;
    if (!R(d)->call(op::register_mr, w, r)) return MRCT_E_INTERNAL;
    const auto st = r.get<std::int32_t>();
    *rkey = r.get<std::uint32_t>();
    *va = r.get<std::uint64_t>();
    return st;
}
int t_post_recv(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t tag, uint32_t rkey, uint64_t offset, uint32_t length,
                uint64_t wr_id) {
    writer w;
    w.put(now);
    w.put(conn);
    w.put(tag);
    w.put(rkey);
    w.put(offset);
    w.put(length);
    w.put(wr_id);
    return R(d)->status_call(op::post_recv, w);
}
int t_post_write(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t stream, const uint8_t* data, size_t len,
                 uint64_t remote_va, uint32_t rkey, uint64_t wr_id, int has_imm, uint32_t imm) {
    writer w;
    w.put(now);
    w.put(conn);
    w.put(stream);
    w.bytes(data, len);
    w.put(remote_va);
    w.put(rkey);
    w.put(wr_id);
    w.put<std::int32_t>(has_imm);
    w.put(imm);
    return R(d)->status_call(op::post_write, w);
}
int t_post_send(mrct_dut* d, mrct_time_ns now, uint32_t conn, uint16_t stream, uint16_t tag, const uint8_t* data, size_t len,
                uint64_t wr_id, int has_imm, uint32_t imm) {
    writer w;
    w.put(now);
    w.put(conn);
    w.put(stream);
    w.put(tag);
    w.bytes(data, len);
    w.put(wr_id);
    w.put<std::int32_t>(has_imm);
    w.put(imm);
    return R(d)->status_call(op::post_send, w);
}
// From what the child polled after the calls first (they are the oldest),
// then, only if a call since may have made more, from the library.
int t_poll(mrct_dut* d, mrct_time_ns now, mrct_completion* out, size_t cap, size_t* n) {
    auto& x = *R(d);
    std::size_t k = std::min(cap, x.polled.size() - x.polled_at);
    if (k) std::memcpy(out, x.polled.data() + x.polled_at, k * sizeof(mrct_completion));
    x.handed_t.assign(x.polled_t.begin() + static_cast<std::ptrdiff_t>(x.polled_at),
                      x.polled_t.begin() + static_cast<std::ptrdiff_t>(x.polled_at + k));
    x.polled_at += k;
    if (x.polled_at == x.polled.size()) x.polled.clear(), x.polled_t.clear(), x.polled_at = 0;
    *n = k;
    if (k == cap || !x.poll_remote) return x.dead.empty() ? MRCT_OK : MRCT_E_INTERNAL;
    writer w;
    w.put(now);
    std::size_t more = 0;
    const int st = list_call(d, op::poll, std::move(w), out + k, cap - k, &more);
    if (st == MRCT_OK && more < cap - k) x.poll_remote = false;  // the library has nothing more until the next call
    *n = k + more;
    x.handed_t.resize(k + std::min(more, cap - k), now);
    return st;
}
mrct_time_ns t_polled_time(mrct_dut* d, std::size_t i) {
    const auto& h = R(d)->handed_t;
    return i < h.size() ? h[i] : MRCT_NEVER;
}
int t_read_mem(mrct_dut* d, uint32_t rkey, uint64_t offset, uint8_t* out, uint64_t len) {
    writer w;
    w.put(rkey);
    w.put(offset);
    w.put(len);
    reader r;
    if (!R(d)->call(op::read_mem, w, r)) return MRCT_E_INTERNAL;
    const auto st = r.get<std::int32_t>();
    auto [p, bytes] = r.bytes();
    if (p) std::memcpy(out, p, std::min<std::uint64_t>(bytes, len));
    return st;
}
int t_counters(mrct_dut* d, mrct_counter* out, size_t cap, size_t* n) { return list_call(d, op::counters, {}, out, cap, n); }
const char* t_dead(mrct_dut* d) { return R(d)->dead.empty() ? nullptr : R(d)->dead.c_str(); }

}  // namespace

core::result<std::shared_ptr<so_library>> remote_library(const so_options& o) {
    static std::mutex m;
    static std::map<std::string, std::shared_ptr<so_library>> cache;
    const auto key = o.host_program + "\n" + o.path;
    {
        std::lock_guard lock(m);
        if (auto it = cache.find(key); it != cache.end()) return it->second;
    }
    std::vector<std::uint8_t> hello;
    auto child = spawn_host(o, hello);
    if (!child) return child.err();
    {
        remote_instance tmp;  // the describing child is done: close, reap
        tmp.fd = child->fd;
        tmp.pid = child->pid;
        ::close(tmp.fd);
        (void)tmp.reap(std::chrono::milliseconds(2000));
    }
    auto lib = read_hello(hello, o.path);
    if (!lib) return lib.err();
    auto& L = **lib;
    L.mrct_dut_abi_version = t_abi_version;
    L.mrct_dut_describe = t_describe;
    L.mrct_dut_create = t_create;
    L.mrct_dut_destroy = t_destroy;
    L.mrct_dut_last_error = t_last_error;
    L.mrct_dut_configure = t_configure;
    L.mrct_dut_start = t_start;
    L.mrct_dut_advance = t_advance;
    L.mrct_dut_next_time = t_next_time;
    L.mrct_dut_receive = t_receive;
    L.mrct_dut_listen = t_listen;
    L.mrct_dut_connect = t_connect;
    L.mrct_dut_status = t_status;
    L.mrct_dut_accepted = t_accepted;
    L.mrct_dut_close = t_close;
    L.mrct_dut_register_mr = t_register_mr;
    L.mrct_dut_post_recv = t_post_recv;
    L.mrct_dut_post_write = t_post_write;
    L.mrct_dut_post_send = t_post_send;
    L.mrct_dut_poll = t_poll;
    L.mrct_dut_read_mem = t_read_mem;
    L.mrct_dut_counters = t_counters;
    L.dead = t_dead;
    L.polled_time = t_polled_time;
    L.create = [](const so_options& o, const mrct_dut_host* host, char* err, std::size_t cap) -> mrct_dut* {
        auto say = [&](const std::string& m) -> mrct_dut* {
            std::snprintf(err, cap, "%s", m.c_str());
            return nullptr;
        };
        std::vector<std::uint8_t> hello;
        auto child = spawn_host(o, hello);
        if (!child) return say(child.err().message);
        auto* r = new remote_instance;
        r->fd = child->fd;
        r->pid = child->pid;
        r->host = *host;
        r->limit = o.call_limit;
        writer w;
        w.str(o.library_options);
        reader in;
        if (!r->call(op::create, w, in)) {
            const auto why = r->dead;
            t_destroy(reinterpret_cast<mrct_dut*>(r));
            return say(why);
        }
        if (!in.get<std::uint8_t>()) {
            const auto why = "so: mrct_dut_create refused: " + in.str();
            t_destroy(reinterpret_cast<mrct_dut*>(r));
            return say(why);
        }
        return reinterpret_cast<mrct_dut*>(r);
    };
    std::lock_guard lock(m);
    cache[key] = *lib;
    return *lib;
}

// ------------------------------------------------------------------ child

namespace {
// A list the library fills (accepted, poll, counters): the engine's room
// (at most `most`), then the status, the library's count and the entries
// that fit, as the engine's list_call reads them.
template <class T, class F>
void serve_list(reader& r, writer& w, std::uint64_t most, F&& fill) {
    const auto cap = std::min<std::uint64_t>(r.get<std::uint64_t>(), most);
    std::vector<T> v(cap);
    std::size_t n = 0;
    w.put<std::int32_t>(fill(v.data(), v.size(), &n));
    w.put<std::uint64_t>(n);
    w.bytes(v.data(), std::min<std::size_t>(n, cap) * sizeof(T));
}
}  // namespace

int serve_instance(int fd, const so_library& lib) {
    struct sink {
        std::vector<std::vector<std::uint8_t>> frames;
    } out;
    mrct_dut_host host{};
    host.size = sizeof host;
    host.ctx = &out;
    // Frames travel as sent, for the engine to judge: a null one as a flag,
    // a giant one cut at 1 MiB (its length is past the limit either way).
    host.transmit = [](void* ctx, const uint8_t* f, size_t n) {
        auto& v = static_cast<sink*>(ctx)->frames;
        if (!f) v.emplace_back();
        else v.emplace_back(f, f + std::min<std::size_t>(n, std::size_t{1} << 20)).push_back(1);  // last byte: not null
    };
    host.log = [](void*, const char*) {};
    mrct_dut* d = nullptr;
    bool started = false;
    std::vector<std::uint8_t> in;
    std::vector<mrct_completion> polled;
    for (;;) {
        if (recv_message(fd, in) != 0) break;  // the engine closed: done
        reader r = body_of(in);
        const auto o = static_cast<op>(r.get<std::uint8_t>());
        writer w;  // the call's own fields
        out.frames.clear();
        std::optional<mrct_time_ns> call_now;  // a call given a time (not a poll): the child polls after it
        if (o == op::destroy) break;
        if (o != op::create && !d) return 2;
        switch (o) {
            case op::create: {
                char err[1024] = {};
                const auto opts = r.str();
                d = lib.mrct_dut_create(&host, opts.c_str(), err, sizeof err - 1);
                w.put<std::uint8_t>(d != nullptr);
                if (!d) w.str(safe_text(err, sizeof err - 1));
                break;
            }
            case op::last_error: {
                const char* e = lib.mrct_dut_last_error(d);
                w.str(e ? std::string(e, strnlen(e, 4096)) : "(null)");
                break;
            }
            case op::configure: {
                const auto name = r.str();
                const auto value = r.str();
                w.put<std::int32_t>(lib.mrct_dut_configure(d, name.c_str(), value.c_str()));
                break;
            }
            case op::start: {
                mrct_dut_addr a{};
                auto [p, n] = r.bytes();
                if (p) std::memcpy(&a, p, std::min(n, sizeof a));
                const auto seed = r.get<std::uint64_t>();
                const auto st = lib.mrct_dut_start(d, &a, seed);
                started = st == MRCT_OK;
                w.put<std::int32_t>(st);
                break;
            }
            case op::advance: {
                const auto now = r.get<mrct_time_ns>();
                lib.mrct_dut_advance(d, now);
                call_now = now;
                break;
            }
            case op::receive: {
                const auto now = r.get<mrct_time_ns>();
                auto [p, n] = r.bytes();
                lib.mrct_dut_receive(d, now, p, n);
                call_now = now;
                break;
            }
            case op::listen: {
                const auto now = r.get<mrct_time_ns>();
                w.put<std::int32_t>(lib.mrct_dut_listen(d, now));
                call_now = now;
                break;
            }
            case op::connect: {
                const auto now = r.get<mrct_time_ns>();
                call_now = now;
                mrct_dut_addr a{};
                auto [p, n] = r.bytes();
                if (p) std::memcpy(&a, p, std::min(n, sizeof a));
                std::uint32_t conn = 0;
                w.put<std::int32_t>(lib.mrct_dut_connect(d, now, &a, &conn));
                w.put(conn);
                break;
            }
            case op::status: {
                mrct_conn_status s{};
                w.put<std::int32_t>(lib.mrct_dut_status(d, r.get<std::uint32_t>(), &s));
                w.put(s);
                break;
            }
            case op::accepted:
                serve_list<std::uint32_t>(r, w, 1 << 20, [&](std::uint32_t* p, std::size_t cap, std::size_t* n) { return lib.mrct_dut_accepted(d, p, cap, n); });
                break;
            case op::close: {
                const auto now = r.get<mrct_time_ns>();
                w.put<std::int32_t>(lib.mrct_dut_close(d, now, r.get<std::uint32_t>()));
                call_now = now;
                break;
            }
            case op::register_mr: {
                const auto now = r.get<mrct_time_ns>();
                call_now = now;
                const auto len = r.get<std::uint64_t>();
                std::uint32_t rkey = 0;
                std::uint64_t va = 0;
                w.put<std::int32_t>(lib.mrct_dut_register_mr(d, now, len, &rkey, &va));
                w.put(rkey);
                w.put(va);
                break;
            }
            case op::post_recv: {
                const auto now = r.get<mrct_time_ns>();
                const auto conn = r.get<std::uint32_t>();
                const auto tag = r.get<std::uint16_t>();
                const auto rkey = r.get<std::uint32_t>();
                const auto off = r.get<std::uint64_t>();
                const auto len = r.get<std::uint32_t>();
                const auto wr = r.get<std::uint64_t>();
                w.put<std::int32_t>(lib.mrct_dut_post_recv(d, now, conn, tag, rkey, off, len, wr));
                call_now = now;
                break;
            }
            case op::post_write: {
                const auto now = r.get<mrct_time_ns>();
                const auto conn = r.get<std::uint32_t>();
                const auto stream = r.get<std::uint16_t>();
                auto [p, n] = r.bytes();
                const auto va = r.get<std::uint64_t>();
                const auto rkey = r.get<std::uint32_t>();
                const auto wr = r.get<std::uint64_t>();
                const auto has_imm = r.get<std::int32_t>();
                const auto imm = r.get<std::uint32_t>();
                w.put<std::int32_t>(lib.mrct_dut_post_write(d, now, conn, stream, p, n, va, rkey, wr, has_imm, imm));
                call_now = now;
                break;
            }
            case op::post_send: {
                const auto now = r.get<mrct_time_ns>();
                const auto conn = r.get<std::uint32_t>();
                const auto stream = r.get<std::uint16_t>();
                const auto tag = r.get<std::uint16_t>();
                auto [p, n] = r.bytes();
                const auto wr = r.get<std::uint64_t>();
                const auto has_imm = r.get<std::int32_t>();
                const auto imm = r.get<std::uint32_t>();
                w.put<std::int32_t>(lib.mrct_dut_post_send(d, now, conn, stream, tag, p, n, wr, has_imm, imm));
                call_now = now;
                break;
            }
            case op::poll: {
                const auto now = r.get<mrct_time_ns>();
                serve_list<mrct_completion>(r, w, 1 << 16, [&](mrct_completion* p, std::size_t cap, std::size_t* n) {
                    return lib.mrct_dut_poll(d, now, p, cap, n);
                });
                break;
            }
            case op::read_mem: {
                const auto rkey = r.get<std::uint32_t>();
                const auto off = r.get<std::uint64_t>();
                const auto len = std::min<std::uint64_t>(r.get<std::uint64_t>(), MRCT_DUT_MAX_MR);
                std::vector<std::uint8_t> b(len);
                const auto st = lib.mrct_dut_read_mem(d, rkey, off, b.data(), len);
                w.put<std::int32_t>(st);
                w.bytes(b.data(), st == MRCT_OK ? b.size() : 0);
                break;
            }
            case op::counters:
                serve_list<mrct_counter>(r, w, 1 << 16, [&](mrct_counter* p, std::size_t cap, std::size_t* n) { return lib.mrct_dut_counters(d, p, cap, n); });
                break;
            case op::destroy: break;
        }
        if (!r.ok) return 2;
        writer m(true);
        m.put<std::uint32_t>(static_cast<std::uint32_t>(out.frames.size()));
        for (const auto& f : out.frames) m.bytes(f.data(), f.empty() ? 0 : f.size() - 1), m.put<std::uint8_t>(f.empty());
        m.put<mrct_time_ns>(started ? lib.mrct_dut_next_time(d) : MRCT_NEVER);
        // After a call given a time, a poll at that time (the header's note):
        // its completions, and whether it ended (a status other than OK, or
        // more than k_most, leave the rest to the engine's own poll).
        if (started && call_now) {
            constexpr std::size_t k_room = 64, k_most = 1 << 16;
            polled.clear();
            bool emptied = false;
            while (polled.size() < k_most) {
                mrct_completion b[k_room] = {};
                std::size_t n = 0;
                // A status other than OK, or more written than room (a
                // breach): left for the engine's own poll to meet.
                if (lib.mrct_dut_poll(d, *call_now, b, k_room, &n) != MRCT_OK || n > k_room) break;
                polled.insert(polled.end(), b, b + n);
                if (n < k_room) {
                    emptied = true;
                    break;
                }
            }
            m.put<std::uint8_t>(1);
            m.put<mrct_time_ns>(*call_now);
            m.bytes(polled.data(), polled.size() * sizeof(mrct_completion));
            m.put<std::uint8_t>(emptied);
        } else {
            m.put<std::uint8_t>(0);
        }
        m.b.insert(m.b.end(), w.b.begin(), w.b.end());
        if (!send_message(fd, m.b)) break;
    }
    if (d) lib.mrct_dut_destroy(d);
    return 0;
}

namespace {
// The child's hello: whether it loaded the library, and its description.
std::vector<std::uint8_t> host_hello(core::result<std::shared_ptr<so_library>>& lib) {
    writer w(true);
    w.put<std::uint8_t>(lib.ok());
    if (!lib) {
        w.str(lib.err().message);
        return w.b;
    }
    const auto& d = (*lib)->described;
    w.str(d.name);
    w.str(d.version);
    w.put<std::uint32_t>(static_cast<std::uint32_t>(d.capabilities.size()));
    for (const auto& c : d.capabilities) w.str(c);
    w.put<std::uint32_t>(static_cast<std::uint32_t>((*lib)->bugs.size()));
    for (const auto& b : (*lib)->bugs) {
        w.str(b.name);
        w.str(b.clauses);
        w.str(b.summary);
    }
    return w.b;
}
}  // namespace

int host_main(int fd, const std::string& path) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // the engine gone: so is this
    auto lib = open_library(path);
    auto hello = host_hello(lib);
    if (!send_message(fd, hello)) return 1;
    if (!lib) return 1;
    return serve_instance(fd, **lib);
}

}  // namespace mrct::dut
