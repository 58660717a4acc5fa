// The engine's scheduling priority in real time (docs/timing.md, "Priority";
// decision D76). On a host shared with other work, a real-time case is judged
// only as finely as the engine wakes on time; raising the engine above
// ordinary work lets it wake within microseconds where it waited for a CPU
// for milliseconds. The host probe's sleepers stand for a DUT at ordinary
// priority and are put back to it (become_ordinary), so the holds they see
// stay the DUT's, not the engine's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"

namespace mrct::sim {

struct priority {
    enum class kind { off, nice, fifo };
    kind k = kind::off;
    int value = 0;  // nice: -20..19; fifo: 1..99
};

// "off", "nice:N" (N in -20..19) or "fifo:N" (N in 1..99). ("auto" is the
// caller's: it depends on the DUT.)
core::result<priority> parse_priority(std::string_view text);

// The default for `auto` with a real-time DUT.
inline constexpr priority k_auto_realtime{priority::kind::nice, -10};

// Applies `p` to the calling thread; threads it creates afterwards inherit it.
// Returns what holds, for the reports: "nice -10 (was 0)", "SCHED_FIFO 10",
// "ordinary (nice 0)" for off, or "nice 0: could not raise to -10: Permission
// denied" when the host refused (the run goes on at ordinary priority).
std::string apply_priority(const priority& p);

// The calling thread back to the scheduling the process had before
// apply_priority (SCHED_OTHER at its nice value). A no-op when nothing was
// raised.
void become_ordinary();

}  // namespace mrct::sim
