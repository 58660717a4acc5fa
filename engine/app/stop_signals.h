// How every long-running command ends early (docs/cli.md "Interrupting a
// run"): SIGINT (a user's Ctrl-C), SIGTERM (a CI runner stopping the job) and
// SIGHUP (the terminal gone) set one flag; the command finishes what is
// running, writes its partial outputs marked interrupted and exits 3.
// A command that can cut its work short (`mrct run`: the running cases end
// at once, marked interrupted, D143) gives a second flag, which the second
// signal sets: a CI runner that sends SIGTERM a few seconds after SIGINT
// (GitHub Actions: 7.5 s, then SIGKILL 2.5 s later) still gets the reports.
// The signal after those (the second without a cut flag) ends the process at
// once, with the signal's default action.
#pragma once

#include <atomic>
#include <csignal>

namespace mrct::app {

class stop_signals {
public:
    // Installs the handlers for the object's lifetime; the flags are cleared first.
    explicit stop_signals(std::atomic<bool>& flag, std::atomic<bool>* cut = nullptr);
    ~stop_signals();
    stop_signals(const stop_signals&) = delete;
    stop_signals& operator=(const stop_signals&) = delete;

private:
    struct sigaction old_[3];
};

}  // namespace mrct::app
