/* app_signal.c - the signal handler of `horizon run`.
 *
 * The flag below is the one mutable global of the app: a signal handler can reach nothing else,
 * and a volatile sig_atomic_t is the only object C lets it write. */
#include "app_signal.h"

#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    if (stop_signal) {
        /* Second signal: leave now. Files under final names are written whole and renamed into
         * place (stats.csv one whole row per write), so at worst *.tmp files stay behind, which
         * --resume removes. Only async-signal-safe calls here. */
        static const char msg[] = "\nhorizon: second signal: exiting at once\n";
        ssize_t r = write(STDERR_FILENO, msg, sizeof msg - 1);
        (void)r;
        _exit(128 + sig);
    }
    stop_signal = sig;
}

void app_signals_install(app_signals *saved)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    stop_signal = 0;
    sigaction(SIGINT, &sa, &saved->sigint);
    sigaction(SIGTERM, &sa, &saved->sigterm);
}

void app_signals_restore(const app_signals *saved)
{
    sigaction(SIGINT, &saved->sigint, NULL);
    sigaction(SIGTERM, &saved->sigterm, NULL);
}

int app_signal_pending(void)
{
    return stop_signal;
}
