/* render_gui_save.c - the viewer's files: S snapshots (the view without overlays, one PNG written
 * at once, named after the step) and E recordings (every new state shown, encoded on the frame
 * queue's worker threads into DIR/recording_NNN/frame_NNNNNN.png). */
#include "render_gui_app.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "render_png.h"
#include "sim_outdir.h"

/* Makes the output directory and takes its lock the first time the session writes there, so
 * that a run (or another viewer) never writes into it at the same time. 0 after saying why. */
static int own_dir(render_gui_app *a)
{
    if (a->dir_lock >= 0)
        return 1;
    sim_err err;
    if (sim_outdir_make(a->sc.dir, NULL, &err) != SIM_OK ||
        sim_outdir_lock(a->sc.dir, &a->dir_lock, &err) != SIM_OK) {
        render_gui_app_say(a, "cannot write: %s", err.msg);
        return 0;
    }
    return 1;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

int render_gui_app_snapshot(render_gui_app *a, const char *path)
{
    if (!render_gui_app_compose(a)) {
        render_gui_app_say(a, "no picture yet to save");
        return SIM_EIO;
    }
    char auto_path[SIM_PATH_MAX + 96];
    if (!path) {
        if (!own_dir(a))
            return SIM_EIO;
        snprintf(auto_path, sizeof auto_path, "%s/snapshot_%06lld.png", a->sc.dir,
                 (long long)a->world_step);
        for (int k = 2; exists(auto_path) && k < 1000; k++)
            snprintf(auto_path, sizeof auto_path, "%s/snapshot_%06lld_%d.png", a->sc.dir,
                     (long long)a->world_step, k);
        path = auto_path;
    }
    sim_err err;
    int rc = render_png_write(path, a->world, a->world_view.w, a->world_view.h, &err);
    if (rc != SIM_OK)
        render_gui_app_say(a, "snapshot failed: %s", err.msg);
    else
        render_gui_app_say(a, "saved snapshot of step %lld to %s", (long long)a->world_step,
                           path);
    return rc;
}

void render_gui_app_record_toggle(render_gui_app *a)
{
    if (a->rec) {
        sim_err err;
        int rc = render_queue_finish(a->rec, &err);
        render_queue_destroy(a->rec);
        a->rec = NULL;
        if (rc == SIM_OK)
            render_gui_app_say(a, "recorded %lld frames to %s/", (long long)a->rec_index,
                               a->rec_dir);
        else
            render_gui_app_say(a, "recording failed: %s", err.msg);
        return;
    }
    if (!own_dir(a))
        return;
    int k = 1;
    do
        snprintf(a->rec_dir, sizeof a->rec_dir, "%s/recording_%03d", a->sc.dir, k++);
    while (exists(a->rec_dir) && k < 100000);
    if (mkdir(a->rec_dir, 0777) != 0) {
        render_gui_app_say(a, "cannot create %s: %s", a->rec_dir, strerror(errno));
        return;
    }
    sim_err err;
    if (render_queue_create(2, 8, a->view.w, a->view.h, &a->rec, &err) != SIM_OK) {
        render_gui_app_say(a, "cannot record: %s", err.msg);
        return;
    }
    a->rec_w = a->view.w;
    a->rec_h = a->view.h;
    a->rec_index = 0;
    a->rec_step = -1;
    a->rec_gen = 0;
    a->world_valid = 0; /* record the current state at once */
    render_gui_app_say(a, "recording frames to %s/ (E stops)", a->rec_dir);
}

void render_gui_app_record_frame(render_gui_app *a)
{
    /* Every newly composed state once, all of one size (the queue's). */
    if (a->world_step != a->rec_step || a->world_gen != a->rec_gen) {
        sim_err err;
        if (a->world_view.w != a->rec_w || a->world_view.h != a->rec_h) {
            render_gui_app_record_toggle(a);
            render_gui_app_say(a, "recording stopped: the view changed size");
        } else if (render_queue_check(a->rec, &err) != SIM_OK) {
            render_gui_app_record_toggle(a);
            render_gui_app_say(a, "recording stopped: %s", err.msg);
        } else {
            uint8_t *buf = render_queue_acquire(a->rec);
            memcpy(buf, a->world, (size_t)a->rec_w * (size_t)a->rec_h * 4);
            char path[SIM_PATH_MAX + 64];
            snprintf(path, sizeof path, "%s/frame_%06lld.png", a->rec_dir,
                     (long long)a->rec_index++);
            render_queue_submit(a->rec, buf, path);
            a->rec_step = a->world_step;
            a->rec_gen = a->world_gen;
        }
    }
}
