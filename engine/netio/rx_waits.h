// How long received frames waited in the host before the protocol took them
// in, and whether the receiving thread ran meanwhile: a DUT's own account of
// its stalls on a real wire (mrct-refnic logs it).
//
// A frame's wait is the time from the kernel's receive stamp to its intake.
// Frames that wait longer than a threshold, back to back, make one run; the
// run is reported when a frame is again taken in promptly (or on finish), as
// its first arrival, its longest wait, its frame count, and the thread's CPU
// time over the wall time from a prompt intake before it (the last, or one
// up to k_refresh before it) to the prompt intake that ended it (on finish:
// to the run's last reading of the clock). CPU close
// to wall: the thread was busy with something else (a long agent call, a
// burst of events). CPU close to zero: it did not run: preempted (a host
// probe of run-queue waits sees that) or asleep with frames waiting.
//
// The thread's CPU clock is a system call (1-2 us on this project's VM), so
// it is read at most once per k_refresh while frames come in promptly and
// while a run lasts, and once more when a run ends: a backlog of frames is
// not slowed further by a read per frame (issue 24: a read per waited
// frame was a fifth of mrct-refnic's CPU while it received at full rate).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "core/time.h"

namespace mrct::netio {

class rx_waits {
public:
    explicit rx_waits(core::nanos threshold) : threshold_(threshold) {}

    struct run {
        core::nanos first_arrival{0};  // wall clock (the kernel's stamp), ns since the epoch
        core::nanos longest{0};
        std::uint64_t frames = 0;
        core::nanos wall{0};  // from a prompt intake before the run (on_frame) to its last frame
        core::nanos cpu{0};   // the thread's CPU time over that span
        std::string text() const;
    };

    // One frame taken in at wall time `now` (ns since the epoch) that arrived
    // at `arrived` (0: no stamp, ignored); `cpu` reads the thread's CPU
    // clock, called only when needed: for a run's first frame, for a
    // later one of the run or a prompt one when the last reading is k_refresh
    // old (so a run's span may begin up to that much before the last prompt
    // intake), and for the prompt frame that ends a run. Returns the run
    // this prompt frame ended, if any.
    std::optional<run> on_frame(core::nanos now, core::nanos arrived, const std::function<core::nanos()>& cpu);
    static constexpr core::nanos k_refresh{200'000};
    // The run still open (at shutdown), if any.
    std::optional<run> finish();

    std::uint64_t runs() const { return runs_; }

private:
    core::nanos threshold_;
    bool have_prompt_ = false;
    core::nanos prompt_wall_{0}, prompt_cpu_{0};  // a recent prompt intake (k_refresh)
    std::optional<run> open_;
    core::nanos open_base_wall_{0}, open_base_cpu_{0};  // where the open run's span starts
    core::nanos open_read_wall_{0}, open_read_cpu_{0};  // the open run's last reading of the clock
    void note_read(core::nanos now, core::nanos cpu);   // a reading: the open run's span ends there
    std::uint64_t runs_ = 0;
};

// The calling thread's CPU time (CLOCK_THREAD_CPUTIME_ID).
core::nanos thread_cpu_now();

}  // namespace mrct::netio
