/* app_progress.c - the progress bar and plain progress lines. */
#include "app_progress.h"

#include <stdio.h>
#include <unistd.h>

#include "app.h"

void app_progress_start(app_progress *p, int mode_request, int64_t first, int64_t total)
{
    int tty = isatty(STDERR_FILENO);
    /* A terminal gets the bar; a log file or pipe gets a plain line now and then (every 2 s
     * with --progress, every 30 s otherwise, so short runs print none). */
    p->mode = mode_request < 0 ? 0 : tty ? 1 : 2;
    p->every = p->mode == 1 ? 0.1 : mode_request > 0 ? 2.0 : 30.0;
    p->first = first;
    p->total = total;
    p->t0 = p->last = app_now();
    p->unit = "step";
}

static void draw(app_progress *p, int64_t done, double now, int final)
{
    double el = now - p->t0;
    double rate = el > 0 ? (double)(done - p->first) / el : 0.0;
    double eta = rate > 0 ? (double)(p->total - done) / rate : 0.0;
    double frac = p->total > p->first ? (double)(done - p->first) / (double)(p->total - p->first)
                                      : 1.0;
    if (p->mode == 1) {
        char bar[31];
        int fill = (int)(frac * 30.0);
        for (int i = 0; i < 30; i++)
            bar[i] = i < fill ? '#' : '.';
        bar[30] = '\0';
        fprintf(stderr, "\r[%s] %5.1f%%  %s %lld/%lld  %.1f %ss/s  ETA %.0fs   ", bar,
                frac * 100.0, p->unit, (long long)done, (long long)p->total, rate, p->unit, eta);
        if (final)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "progress: %s %lld/%lld (%.0f%%) %.1f %ss/s, ETA %.0f s\n", p->unit,
                (long long)done, (long long)p->total, frac * 100.0, rate, p->unit, eta);
    }
    fflush(stderr);
}

void app_progress_update(app_progress *p, int64_t done)
{
    if (!p->mode)
        return;
    double now = app_now();
    if (now - p->last < p->every)
        return;
    p->last = now;
    draw(p, done, now, 0);
}

void app_progress_end(app_progress *p, int64_t done)
{
    /* The closing line only where progress was shown or asked for. */
    if (p->mode == 1 || (p->mode == 2 && (p->every < 30.0 || p->last > p->t0)))
        draw(p, done, app_now(), 1);
}
