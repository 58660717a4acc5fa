#include "app/stop_signals.h"

#include <unistd.h>

#include <cstring>

namespace mrct::app {

namespace {

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<std::atomic<bool>*> g_flag{nullptr};
std::atomic<std::atomic<bool>*> g_cut_flag{nullptr};
static_assert(std::atomic<std::atomic<bool>*>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the handler may only touch lock-free atomics");

// write(2) is async-signal-safe; the text says what the next signal does.
void say(const char* text) { (void)!::write(STDERR_FILENO, text, std::strlen(text)); }

extern "C" void on_stop_signal(int sig) {
    std::atomic<bool>* f = g_flag.load();
    std::atomic<bool>* cut = g_cut_flag.load();
    if (f && !f->exchange(true)) {
        say(cut ? "\nmrct: stopping once the running cases finish (signal again to cut them short now)\n"
                : "\nmrct: stopping (signal again to end at once)\n");
        return;
    }
    if (f && cut && !cut->exchange(true)) {
        say("\nmrct: cutting the running cases short; writing the reports (signal again to end at once)\n");
        return;
    }
    // The last signal (or one after the command ended): the default action.
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

}  // namespace

stop_signals::stop_signals(std::atomic<bool>& flag, std::atomic<bool>* cut) {
    flag.store(false);
    if (cut) cut->store(false);
    g_cut_flag.store(cut);
    g_flag.store(&flag);
    struct sigaction sa{};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &sa, &old_[i]);
}

stop_signals::~stop_signals() {
    for (int i = 0; i < 3; ++i) sigaction(k_signals[i], &old_[i], nullptr);
    g_flag.store(nullptr);
    g_cut_flag.store(nullptr);
}

}  // namespace mrct::app
