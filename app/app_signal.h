/* app_signal.h - SIGINT/SIGTERM for long runs: the first signal only asks the run to stop at the
 * next step boundary (the run then checkpoints and exits 130/143); a second one exits at once. */
#ifndef APP_SIGNAL_H
#define APP_SIGNAL_H

#include <signal.h>

typedef struct app_signals {
    struct sigaction sigint, sigterm; /* the dispositions to restore */
} app_signals;

/* Installs the handlers (SA_RESTART, so writes in progress go on) and clears any earlier
 * request; the previous dispositions are kept in saved. */
void app_signals_install(app_signals *saved);

/* Puts the previous dispositions back. */
void app_signals_restore(const app_signals *saved);

/* 0, or the number of the first signal received since app_signals_install. */
int app_signal_pending(void);

#endif
