#include "sim/drivers.h"

#include <malloc.h>
#include <sys/prctl.h>

#include <algorithm>
#include <mutex>
#include <optional>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>

namespace mrct::sim {

void keep_freed_memory() {
    static std::once_flag once;
    std::call_once(once, [] {
        ::mallopt(M_TRIM_THRESHOLD, 1 << 30);
        ::mallopt(M_MMAP_THRESHOLD, 32 << 20);  // the largest glibc takes on 64-bit
        ::mallopt(M_TOP_PAD, 64 << 20);          // grow the heap 64 MiB at a time
    });
}

std::uint64_t virtual_driver::run_until(nanos t) {
    std::uint64_t n = 0;
    while (s_.run_one(t)) ++n;
    if (t != core::k_never && t > s_.now()) s_.advance_to(t);
    return n;
}

std::uint64_t virtual_driver::run(std::uint64_t max_events) {
    std::uint64_t n = 0;
    while (n < max_events && s_.run_one()) ++n;
    return n;
}

struct realtime_driver::impl {
    boost::asio::io_context io;
    boost::asio::steady_timer wake{io};
    // The wake timer stays armed across loop turns and is moved only when the
    // deadline changes: each move or cancel is a timerfd_settime, and on a
    // mostly idle wire a turn per frame made it the costliest syscall of
    // mrct-refnic (bench/wire_rate.py, issue 24).
    std::chrono::steady_clock::time_point wake_at{};
    bool waiting = false;
    std::atomic<bool> stopping{false};
    bool io_first = false;
    bool busy = false;
    nanos turn_extend = realtime_driver::k_turn_extend;
    bool turn_over = false;  // end_turn()
    std::chrono::steady_clock::time_point origin_wall;
    std::chrono::system_clock::time_point origin_system;
    nanos origin_sim{0};
    bool anchored = false;
    struct late_sample {
        nanos due, late;
    };
    std::vector<late_sample> lateness;  // how late events ran: the first k_max_samples, then the worst kept
    static constexpr std::size_t k_max_samples = 1 << 20;

    // Past k_max_samples a late event replaces the sample it is later than
    // (the last one): the maximum is never lost, the percentile is approximate.
    // Turns longer than k_turn_note: (start, length). Bounded the same way.
    std::vector<late_sample> turns;
    static constexpr nanos k_turn_note{5'000};
    callback turn_end;
    // The start of the turn whose events are running, if one is: a wait
    // nested in one of its events (an agent call) ends it where the wait
    // begins, and it starts again where the wait ends.
    std::optional<nanos> open_turn;
    void close_turn() {
        if (!open_turn) return;
        if (turn_end) turn_end();
        note_turn(*open_turn, sim_now() - *open_turn);
        open_turn.reset();
    }
    void note_turn(nanos began, nanos length) {
        // Only where someone times the wire by them (set_turn_end: the
        // engine's case); mrct-refnic runs one driver for hours and reads none.
        if (!turn_end || length <= k_turn_note) return;
        keep(turns, {began, length});
    }

    void note_late(nanos due, nanos late) { keep(lateness, {due, late}); }

    // The first k_max_samples; past them, one later than the last kept
    // replaces it (the worst is never lost).
    static void keep(std::vector<late_sample>& v, late_sample x) {
        if (v.size() < k_max_samples) v.push_back(x);
        else if (x.late > v.back().late) v.back() = x;
    }

    nanos sim_now() const {
        return origin_sim + std::chrono::duration_cast<nanos>(std::chrono::steady_clock::now() - origin_wall);
    }
};

realtime_driver::realtime_driver(scheduler& s) : s_(s), impl_(std::make_unique<impl>()) {
    // Linux lets a sleeping thread wake up to 50 us late (timer slack) to
    // batch wake-ups; protocol timers of tens of microseconds need it gone.
    ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    // The heap neither shrinks nor maps a large buffer of its own: glibc
    // otherwise moves the break (brk) or maps and unmaps for every few
    // hundred KiB a post or a frame batch allocates and frees, 200-odd calls
    // a case, each taking the process's memory-map lock. Beside stress-ng
    // one of them held the engine 5 to 10 s (perf trace: brk, 5.19 s), its
    // agent call timed out, the DUT's connection ran out of retries.
    keep_freed_memory();
}
realtime_driver::~realtime_driver() = default;

void realtime_driver::post(callback cb) {
    boost::asio::post(impl_->io, [this, cb = std::move(cb)]() mutable {
        nanos t = impl_->sim_now();
        if (t > s_.now()) s_.advance_to(t);
        cb();
    });
}

void realtime_driver::stop() {
    impl_->stopping = true;
    boost::asio::post(impl_->io, [] {});
}

void realtime_driver::set_io_first(bool on) { impl_->io_first = on; }
void realtime_driver::set_busy_poll(bool on) { impl_->busy = on; }
void realtime_driver::set_turn_extend(nanos d) { impl_->turn_extend = d; }
void realtime_driver::end_turn() { impl_->turn_over = true; }

void realtime_driver::anchor() {
    impl_->origin_wall = std::chrono::steady_clock::now();
    impl_->origin_system = std::chrono::system_clock::now();
    impl_->origin_sim = s_.now();
    impl_->anchored = true;
}

void realtime_driver::sync() {
    if (!impl_->anchored) anchor();
    const nanos t = impl_->sim_now();
    if (t > s_.now()) s_.advance_to(t);
}

nanos realtime_driver::sim_time_of(std::chrono::steady_clock::time_point wall) const {
    return impl_->origin_sim + std::chrono::duration_cast<nanos>(wall - impl_->origin_wall);
}

std::chrono::system_clock::time_point realtime_driver::system_time_of(nanos t) const {
    return impl_->origin_system + std::chrono::duration_cast<std::chrono::system_clock::duration>(t - impl_->origin_sim);
}

boost::asio::io_context& realtime_driver::io() { return impl_->io; }

void realtime_driver::run_for(nanos d) {
    if (!impl_->anchored) anchor();
    run_to(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(d), core::k_never);
}

void realtime_driver::run_until(nanos t) {
    if (!impl_->anchored) anchor();
    run_to(impl_->origin_wall + std::chrono::duration_cast<std::chrono::steady_clock::duration>(t - impl_->origin_sim), t);
}

// Runs what is ready on `io`, but at most `most` handlers. io.poll() would
// keep going while handlers keep becoming ready, and a polled port (a DPDK
// port re-arms a 10 us timer after every poll) keeps one ready whenever a poll
// takes longer than its period, as it does on a loaded machine. The
// scheduler's due events (a fabric delivering a frame) then waited: a DUT's
// CONNECTs were recorded on time and answered after its retries had run out.
// Bounding it interleaves I/O with due events fairly.
//
// Busy polling (set_busy_poll) takes one handler per call: a busy DPDK port
// posts its next poll as each ends, so the queue is never empty, and 64
// handlers were 32 port polls and 32 passes through epoll (the reactor runs
// between them) before the due events had their turn: about 33 us a turn, one
// frame sent per turn, 28 k frames/s on a veth where testpmd moves 64 k
// (bench/wire_rate.py --wire dpdk --busy, issue 24).
namespace {
constexpr int k_max_ready = 64, k_max_ready_busy = 1;
void run_ready(boost::asio::io_context& io, int most) {
    for (int i = 0; i < most && io.poll_one(); ++i) {
    }
    io.restart();
}
}  // namespace

void realtime_driver::run_to(std::chrono::steady_clock::time_point end_wall, nanos end_sim, const bool* done) {
    impl& m = *impl_;
    // A wait (done != nullptr) is nested in an outer run: it ends only when
    // done or out of time, and leaves a stop() for the outer run to see.
    if (!done) m.stopping = false;
    // A wait from inside a turn's event: that turn's frames leave now.
    const bool resumes = m.open_turn.has_value();
    m.close_turn();
    struct resume {
        impl& m;
        bool on;
        ~resume() {
            if (on) m.open_turn = m.sim_now();
        }
    } resume_after{m, resumes};
    auto over = [&] {
        if (!done) return m.stopping.load();
        if (!*done && abort_ && abort_->load()) aborted_ = true;
        return *done || aborted_;
    };
    m.io.restart();
    const auto wait_began = done && abort_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    (void)end_sim;  // scheduler time follows the wall clock, never held back: stamps are wall times
    const int ready_most = m.busy ? k_max_ready_busy : k_max_ready;
    while (!over()) {
        if (m.io_first) run_ready(m.io, ready_most);
        const nanos began = m.sim_now();
        nanos t = began;
        m.turn_over = false;
        if (t > s_.now()) s_.advance_to(t);
        bool ran = false;
        m.open_turn = began;
        while (true) {
            nanos due = s_.next_time();
            if (due > t) {
                // Fell due while this turn ran (set_turn_extend)?
                if (due == core::k_never) break;
                const nanos now = m.sim_now();
                if (m.turn_over || due > now || now - began >= m.turn_extend) break;
                t = now;
                s_.advance_to(t);
                continue;
            }
            m.note_late(due, t - due);
            s_.run_one(t);
            ran = true;
        }
        // Every event of the turn ran at t (at most `began` + the
        // extension): what they sent leaves now, and was stamped then.
        if (ran) m.close_turn();
        m.open_turn.reset();
        if (!m.io_first) run_ready(m.io, ready_most);
        if (std::chrono::steady_clock::now() >= end_wall || over()) break;
        const nanos next = s_.next_time();
        auto deadline = end_wall;
        if (next != core::k_never) {
            auto at = m.origin_wall + std::chrono::duration_cast<std::chrono::steady_clock::duration>(next - m.origin_sim);
            deadline = std::min(deadline, at);
        }
        // A wait with an abort flag looks at it at least every k_abort_poll
        // (a signal handler cannot wake the loop), at fixed instants from the
        // wait's start: a deadline that moved every turn would cost a
        // timerfd_settime per frame (issue 24).
        if (done && abort_) {
            const auto poll = std::chrono::duration_cast<std::chrono::steady_clock::duration>(k_abort_poll);
            deadline = std::min(deadline, wait_began + ((std::chrono::steady_clock::now() - wait_began) / poll + 1) * poll);
        }
        // A deadline already reached (an event that became due while I/O
        // ran: a frame a handler passed to the fabric is delivered by an
        // event at the same time) needs no wake: the next turn runs it. Arming
        // the timer for it cost two timerfd_settime calls and a pass through
        // epoll per frame, and kept both processes below 30 k frames/s on the
        // wire (bench/wire_rate.py, issue 24).
        //
        // I/O was just polled (after the events), and a poll with nothing
        // ready is a pass through epoll: the engine polls again only when
        // busy (a busy port's next poll is always ready); it saved 1 of 3
        // epoll_wait calls per data frame (bench/wire_rate.py).
        //
        // Reading I/O first (mrct-refnic), the second poll stays, and so does
        // the one after a wake below: without them, beside `stress-ng --cpu
        // 2`, mrct-refnic drew false fails of the reference (an ACK 0.7 ms
        // past its interval, `acks_conform`) in 10 of 49 loaded whole-plan
        // runs, against 0 of 28 with them (docs/testplan.md).
        if (m.busy || deadline <= std::chrono::steady_clock::now()) {
            if (m.busy || m.io_first) run_ready(m.io, ready_most);
            continue;
        }
        if (!m.waiting || deadline != m.wake_at) {
            m.wake.expires_at(deadline);  // a pending wait ends (operation_aborted): a spurious turn
            m.wake_at = deadline;
            m.waiting = true;
            m.wake.async_wait([&m, at = deadline](const boost::system::error_code& ec) {
                if (!ec && m.wake_at == at) m.waiting = false;  // this deadline came: the next turn re-arms
            });
        }
        m.io.run_one();
        run_ready(m.io, ready_most);  // what else is ready
    }
    if (!done && end_sim != core::k_never && !m.stopping && end_sim > s_.now()) s_.advance_to(end_sim);
}

bool realtime_driver::run_while_waiting(const bool& done, nanos d) {
    if (!impl_->anchored) anchor();
    run_to(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(d),
           core::k_never, &done);
    return done;
}
std::vector<std::pair<nanos, nanos>> realtime_driver::late_events(nanos floor) const {
    std::vector<std::pair<nanos, nanos>> out;
    for (const auto& x : impl_->lateness)
        if (x.late > floor) out.emplace_back(x.due, x.late);
    return out;
}

void realtime_driver::set_turn_end(callback cb) { impl_->turn_end = std::move(cb); }

std::vector<std::pair<nanos, nanos>> realtime_driver::late_turns(nanos floor) const {
    std::vector<std::pair<nanos, nanos>> out;
    for (const auto& x : impl_->turns)
        if (x.late > floor) out.emplace_back(x.due, x.late);
    return out;
}

nanos realtime_driver::longest_turn() const {
    nanos most{0};
    for (const auto& x : impl_->turns) most = std::max(most, x.late);
    return most;
}

realtime_driver::lateness realtime_driver::lateness_since(nanos since) const {
    std::vector<nanos> l;
    for (const auto& x : impl_->lateness)
        if (x.due >= since) l.push_back(x.late);
    lateness out;
    out.events = l.size();
    if (l.empty()) return out;
    out.max = *std::max_element(l.begin(), l.end());
    const auto k = (99 * l.size() + 99) / 100 - 1;  // the 99th percentile: ceil(0.99 n)-th smallest
    std::nth_element(l.begin(), l.begin() + static_cast<std::ptrdiff_t>(k), l.end());
    out.p99 = l[k];
    return out;
}

}  // namespace mrct::sim
