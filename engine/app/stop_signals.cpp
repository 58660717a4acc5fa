#include "app/stop_signals.h"

namespace mrct::app {

namespace {

constexpr int k_signals[3] = {SIGINT, SIGTERM, SIGHUP};
std::atomic<std::atomic<bool>*> g_flag{nullptr};
static_assert(std::atomic<std::atomic<bool>*>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "the handler may only touch lock-free atomics");

extern "C" void on_stop_signal(int sig) {
    std::atomic<bool>* f = g_flag.load();
    if (!f || f->exchange(true)) {
        // The second signal (or one after the command ended): the default action.
        std::signal(sig, SIG_DFL);
        std::raise(sig);
    }
}

}  // namespace

stop_signals::stop_signals(std::atomic<bool>& flag) {
    flag.store(false);
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
}

}  // namespace mrct::app
