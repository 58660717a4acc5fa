#include "netio/rx_waits.h"

#include <time.h>

#include <algorithm>
#include <cstdio>

namespace mrct::netio {

namespace {
double ms(core::nanos d) { return static_cast<double>(d.count()) / 1e6; }
}  // namespace

std::string rx_waits::run::text() const {
    const auto ns = first_arrival.count();
    const time_t secs = static_cast<time_t>(ns / 1'000'000'000);
    tm t{};
    gmtime_r(&secs, &t);
    char b[256];
    std::snprintf(b, sizeof b,
                  "frames waited up to %.3f ms in the host before intake (%llu frames, the first arrived at "
                  "%02d:%02d:%02d.%06lld UTC); the thread ran %.3f ms of the %.3f ms since a prompt intake before them",
                  ms(longest), static_cast<unsigned long long>(frames), t.tm_hour, t.tm_min, t.tm_sec,
                  static_cast<long long>((ns % 1'000'000'000) / 1000), ms(cpu), ms(wall));
    return b;
}

std::optional<rx_waits::run> rx_waits::on_frame(core::nanos now, core::nanos arrived,
                                                const std::function<core::nanos()>& read_cpu) {
    if (arrived.count() <= 0) return std::nullopt;  // no stamp: nothing known
    const auto waited = std::max(core::nanos{0}, now - arrived);
    if (waited > threshold_) {
        if (!open_) {
            const auto cpu = read_cpu();
            open_ = run{};
            open_->first_arrival = arrived;
            open_base_wall_ = have_prompt_ ? prompt_wall_ : now;
            open_base_cpu_ = have_prompt_ ? prompt_cpu_ : cpu;
            note_read(now, cpu);
        } else if (now - open_read_wall_ >= k_refresh) {
            note_read(now, read_cpu());
        }
        open_->longest = std::max(open_->longest, waited);
        ++open_->frames;
        return std::nullopt;
    }
    if (open_) {  // a run ends: its span up to this intake, which starts the next
        note_read(now, read_cpu());
        prompt_wall_ = now;
        prompt_cpu_ = open_read_cpu_;
        have_prompt_ = true;
        return finish();
    }
    if (!have_prompt_ || now - prompt_wall_ >= k_refresh) {
        prompt_wall_ = now;
        prompt_cpu_ = read_cpu();
        have_prompt_ = true;
    }
    return std::nullopt;
}

void rx_waits::note_read(core::nanos now, core::nanos cpu) {
    open_read_wall_ = now;
    open_read_cpu_ = cpu;
    open_->wall = now - open_base_wall_;
    open_->cpu = cpu - open_base_cpu_;
}

std::optional<rx_waits::run> rx_waits::finish() {
    if (!open_) return std::nullopt;
    auto r = std::move(open_);
    open_.reset();
    ++runs_;
    return r;
}

core::nanos thread_cpu_now() {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return core::nanos{static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec};
}

}  // namespace mrct::netio
