/* render_gui_record.c - the viewer's snapshots and recordings (render_gui_record.h). */
#include "render_gui_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "render_png.h"
#include "sim_outdir.h"

void render_gui_record_init(render_gui_record *r, const char *dir)
{
    memset(r, 0, sizeof *r);
    snprintf(r->dir, sizeof r->dir, "%s", dir);
    r->lock = -1;
}

int render_gui_record_own_dir(render_gui_record *r, char *said)
{
    if (r->lock >= 0)
        return 1;
    sim_err err;
    if (sim_outdir_make(r->dir, NULL, &err) != SIM_OK ||
        sim_outdir_lock(r->dir, &r->lock, &err) != SIM_OK) {
        snprintf(said, RENDER_GUI_SAID, "cannot write: %s", err.msg);
        return 0;
    }
    return 1;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int render_gui_record_snapshot(render_gui_record *r, const uint8_t *rgba, int w, int h,
                               int64_t step, const char *path, char *said)
{
    char auto_path[SIM_PATH_MAX + 96];
    if (!path) {
        if (!render_gui_record_own_dir(r, said))
            return SIM_EIO;
        snprintf(auto_path, sizeof auto_path, "%s/snapshot_%06lld.png", r->dir,
                 (long long)step);
        for (int k = 2; exists(auto_path) && k < 1000; k++)
            snprintf(auto_path, sizeof auto_path, "%s/snapshot_%06lld_%d.png", r->dir,
                     (long long)step, k);
        path = auto_path;
    }
    sim_err err;
    int rc = render_png_write(path, rgba, w, h, &err);
    if (rc != SIM_OK)
        snprintf(said, RENDER_GUI_SAID, "snapshot failed: %s", err.msg);
    else
        snprintf(said, RENDER_GUI_SAID, "saved snapshot of step %lld to %s", (long long)step,
                 path);
    return rc;
}

static void stop(render_gui_record *r, char *said)
{
    sim_err err;
    int rc = render_queue_finish(r->q, &err);
    render_queue_destroy(r->q);
    r->q = NULL;
    if (r->steps && fclose(r->steps) != 0 && rc == SIM_OK)
        rc = sim_err_set(&err, SIM_EIO, "%s/steps.csv: write failed: %s", r->rec_dir,
                         strerror(errno));
    r->steps = NULL;
    if (rc == SIM_OK)
        snprintf(said, RENDER_GUI_SAID, "recorded %lld frames to %s/ (steps.csv: the step of "
                 "each)", (long long)r->index, r->rec_dir);
    else
        snprintf(said, RENDER_GUI_SAID, "recording failed: %s", err.msg);
}

void render_gui_record_toggle(render_gui_record *r, int w, int h, char *said)
{
    if (r->q) {
        stop(r, said);
        return;
    }
    if (!render_gui_record_own_dir(r, said))
        return;
    int k = 1;
    do
        snprintf(r->rec_dir, sizeof r->rec_dir, "%s/recording_%03d", r->dir, k++);
    while (exists(r->rec_dir) && k < 100000);
    if (mkdir(r->rec_dir, 0777) != 0) {
        snprintf(said, RENDER_GUI_SAID, "cannot create %s: %s", r->rec_dir, strerror(errno));
        return;
    }
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/steps.csv", r->rec_dir);
    r->steps = fopen(path, "w");
    sim_err err;
    if (!r->steps || fputs("frame,step\n", r->steps) == EOF) {
        snprintf(said, RENDER_GUI_SAID, "cannot create %s: %s", path, strerror(errno));
        if (r->steps)
            fclose(r->steps);
        r->steps = NULL;
        return;
    }
    if (render_queue_create(2, 8, w, h, &r->q, &err) != SIM_OK) {
        snprintf(said, RENDER_GUI_SAID, "cannot record: %s", err.msg);
        fclose(r->steps);
        r->steps = NULL;
        return;
    }
    r->w = w;
    r->h = h;
    r->index = 0;
    r->step = -1;
    r->gen = 0;
    snprintf(said, RENDER_GUI_SAID, "recording frames to %s/ (E stops)", r->rec_dir);
}

int render_gui_record_frame(render_gui_record *r, const uint8_t *rgba, int w, int h,
                            int64_t step, uint64_t gen, char *said)
{
    if (!r->q || (step == r->step && gen == r->gen))
        return 0;
    sim_err err;
    if (w != r->w || h != r->h) {
        stop(r, said);
        snprintf(said, RENDER_GUI_SAID, "recording stopped: the view changed size (%lld frames "
                 "in %s/)", (long long)r->index, r->rec_dir);
        return 1;
    }
    if (render_queue_check(r->q, &err) != SIM_OK) {
        stop(r, said);
        snprintf(said, RENDER_GUI_SAID, "recording stopped: %.1200s", err.msg);
        return 1;
    }
    uint8_t *buf = render_queue_acquire(r->q);
    memcpy(buf, rgba, (size_t)w * (size_t)h * 4);
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/frame_%06lld.png", r->rec_dir, (long long)r->index);
    render_queue_submit(r->q, buf, path);
    fprintf(r->steps, "%lld,%lld\n", (long long)r->index, (long long)step);
    r->index++;
    r->step = step;
    r->gen = gen;
    return 0;
}

void render_gui_record_close(render_gui_record *r, char *said)
{
    if (r->q)
        stop(r, said);
    sim_outdir_unlock(r->lock);
    r->lock = -1;
}
