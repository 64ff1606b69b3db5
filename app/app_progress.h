/* app_progress.h - progress on stderr for long runs: a bar with steps/s and ETA on a terminal,
 * plain lines otherwise (when asked for), nothing when quiet. */
#ifndef APP_PROGRESS_H
#define APP_PROGRESS_H

#include <stdint.h>

typedef struct app_progress {
    int mode;          /* 0 off, 1 bar (terminal), 2 plain lines */
    double every;      /* seconds between updates */
    int64_t first, total;
    double t0, last;
    const char *unit;  /* "step" (app_progress_start's choice) or e.g. "run": set after start */
} app_progress;

/* mode_request: -1 quiet, 0 automatic (bar on a terminal, else a plain line every 30 s),
 * 1 --progress (plain lines every 2 s when not a terminal). */
void app_progress_start(app_progress *p, int mode_request, int64_t first, int64_t total);
void app_progress_update(app_progress *p, int64_t done);
void app_progress_end(app_progress *p, int64_t done);

#endif
