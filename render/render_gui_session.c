/* render_gui_session.c - the viewer's session files (render_gui_session.h). */
#include "render_gui_session.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_events.h"
#include "sim_stats.h"

struct render_gui_session {
    char base[SIM_PATH_MAX];
    char dir[SIM_PATH_MAX + 32];
    FILE *stats, *events;
};

static void close_files(render_gui_session *s)
{
    if (s->stats)
        fclose(s->stats);
    if (s->events)
        fclose(s->events);
    s->stats = s->events = NULL;
}

/* Opens dir/name for writing, unbuffered (each row is one write), and writes `head`. */
static int start_file(const char *dir, const char *name, const char *head, FILE **out,
                      sim_err *err)
{
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot create: %s", path, strerror(errno));
    setvbuf(f, NULL, _IONBF, 0);
    if (fputs(head, f) == EOF) {
        int e = errno;
        fclose(f);
        return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(e));
    }
    *out = f;
    return SIM_OK;
}

/* Makes the next free base/session_NNN and fills it for sc. */
static int start(render_gui_session *s, const sim_scenario *sc, sim_err *err)
{
    int k = 1;
    for (;; k++) {
        snprintf(s->dir, sizeof s->dir, "%s/session_%03d", s->base, k);
        if (mkdir(s->dir, 0777) == 0)
            break;
        if (errno != EEXIST || k >= 99999)
            return sim_err_set(err, SIM_EIO, "%s: cannot create: %s", s->dir, strerror(errno));
    }
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/scenario.ini", s->dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot create: %s", path, strerror(errno));
    sim_scenario_write_ini(sc, f);
    if (fclose(f) != 0)
        return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(errno));
    char head[SIM_STATS_ROW_MAX];
    sim_model *m = malloc(sizeof *m);
    if (m && sim_model_build(sc, m, NULL) == SIM_OK)
        sim_stats_csv_header(head, sizeof head, m);
    else
        snprintf(head, sizeof head, "%s", SIM_STATS_CSV_HEADER);
    free(m);
    int rc = start_file(s->dir, "stats.csv", head, &s->stats, err);
    if (rc == SIM_OK)
        rc = start_file(s->dir, "events.csv", SIM_EVENTS_HEADER "\n", &s->events, err);
    if (rc != SIM_OK)
        close_files(s);
    return rc;
}

int render_gui_session_open(const char *dir, const sim_scenario *sc, render_gui_session **out,
                            sim_err *err)
{
    *out = NULL;
    render_gui_session *s = calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    snprintf(s->base, sizeof s->base, "%s", dir);
    int rc = start(s, sc, err);
    if (rc != SIM_OK) {
        free(s);
        return rc;
    }
    *out = s;
    return SIM_OK;
}

void render_gui_session_close(render_gui_session *s)
{
    if (!s)
        return;
    close_files(s);
    free(s);
}

int render_gui_session_restart(render_gui_session *s, const sim_scenario *sc, sim_err *err)
{
    close_files(s);
    return start(s, sc, err);
}

/* One whole line in one write. */
static int put(FILE *f, const char *dir, const char *name, const char *line, sim_err *err)
{
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s/%s: not open", dir, name);
    size_t n = strlen(line);
    if (fwrite(line, 1, n, f) != n)
        return sim_err_set(err, SIM_EIO, "%s/%s: write failed: %s", dir, name, strerror(errno));
    return SIM_OK;
}

int render_gui_session_stats(render_gui_session *s, const sim_stats *st, sim_err *err)
{
    char row[SIM_STATS_ROW_MAX];
    sim_stats_csv_row(row, sizeof row, st);
    return put(s->stats, s->dir, "stats.csv", row, err);
}

int render_gui_session_event(render_gui_session *s, const char *line, sim_err *err)
{
    return put(s->events, s->dir, "events.csv", line, err);
}

const char *render_gui_session_dir(const render_gui_session *s)
{
    return s->dir;
}
