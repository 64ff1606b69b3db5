/* app_frames.c - the frame writer of a run (see app_frames.h). Where a frame is composed is
 * sim_compose's business; this file only sizes the view and feeds the encoder queue. */
#include "app_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void app_frames_release(app_frames *fr)
{
    render_queue_destroy(fr->queue);
}

int app_frames_init(app_frames *fr, const sim_scenario *sc, sim_err *err)
{
    memset(fr, 0, sizeof *fr);
    int w, h;
    render_frame_size(sc, &w, &h);
    render_view_init(&fr->view, sc->colormap, sc->range_max);
    render_view_fit(&fr->view, sc->width, sc->height, w, h);
    return render_queue_create(2, 4, w, h, &fr->queue, err);
}

/* Composes the current state into a queue buffer and hands it to the encoders. */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err)
{
    int rc = render_queue_check(fr->queue, err);
    if (rc != SIM_OK)
        return rc;
    uint8_t *rgba = render_queue_acquire(fr->queue);
    rc = sim_compose(s, &fr->view, rgba);
    if (rc != SIM_OK) {
        snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
        render_queue_submit(fr->queue, rgba, NULL); /* the buffer goes back unwritten */
        return rc;
    }
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/frames/frame_%06" PRId64 ".png", dir, fr->next_index);
    render_queue_submit(fr->queue, rgba, path);
    fr->next_index++;
    return SIM_OK;
}
