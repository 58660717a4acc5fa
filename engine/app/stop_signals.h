// How every long-running command ends early (docs/cli.md "Interrupting a
// run"): SIGINT (a user's Ctrl-C), SIGTERM (a CI runner stopping the job) and
// SIGHUP (the terminal gone) set one flag; the command finishes what is
// running, writes its partial outputs marked interrupted and exits 3. A
// second signal while the first is being honoured ends the process at once,
// with the signal's default action.
#pragma once

#include <atomic>
#include <csignal>

namespace mrct::app {

class stop_signals {
public:
    // Installs the handlers for the object's lifetime; `flag` is cleared first.
    explicit stop_signals(std::atomic<bool>& flag);
    ~stop_signals();
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

private:
    struct sigaction old_[3];
};

}  // namespace mrct::app
