/* app_frames.c - the frame writer of a run (see app_frames.h). Where a frame is composed is
 * sim_compose's business; this file sizes the view, feeds the encoder queue and, when asked,
 * stamps the legend. */
#include "app_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render_legend.h"

void app_frames_release(app_frames *fr)
{
    if (fr->pinned && fr->queue) { /* the encoders may still read them: unpinned, they stay */
        size_t bytes;
        sim_unpin_host(fr->pinned, render_queue_pixels(fr->queue, &bytes));
    }
    fr->pinned = NULL;
    render_queue_destroy(fr->queue);
    free(fr->field);
    fr->queue = NULL;
    fr->field = NULL;
}

int app_frames_init(app_frames *fr, const sim_scenario *sc, int workers, sim_err *err)
{
    memset(fr, 0, sizeof *fr);
    int w, h;
    render_frame_size(sc, &w, &h);
    render_view_init(&fr->view, sc->colormap, sc->range_max);
    render_view_fit(&fr->view, sc->width, sc->height, w, h);
    fr->legend = sc->legend != 0;
    fr->cells = (int64_t)sc->width * sc->height;
    if (fr->legend) {
        render_legend_label(fr->legend_label, sizeof fr->legend_label, "field", sc->range_max,
                            0);
        if (sc->range_max <= 0.0f &&
            !(fr->field = malloc((size_t)fr->cells * sizeof *fr->field)))
            return sim_err_set(err, SIM_ENOMEM, "out of memory for the frame legend's copy of "
                               "the %dx%d field", sc->width, sc->height);
    }
    return render_queue_create(workers, 2 * workers, w, h, &fr->queue, err);
}

void app_frames_pin(app_frames *fr, const sim_backend_ops *ops)
{
    size_t bytes;
    uint8_t *p = fr->queue ? render_queue_pixels(fr->queue, &bytes) : NULL;
    if (p && !fr->pinned && sim_pin_host(ops, p, bytes))
        fr->pinned = ops;
}

/* Composes the current state into a queue buffer and hands it to the encoders. */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err)
{
    int rc = render_queue_check(fr->queue, err);
    if (rc != SIM_OK)
        return rc;
    uint8_t *rgba = render_queue_acquire(fr->queue);
    const sim_view *view = &fr->view;
    sim_view fixed;
    double hi = view->range_max;
    if (fr->field) {
        /* The legend prints the max that scaled the colours. Read here, it costs a host copy of
         * the field per frame (width*height*4 bytes; on CUDA a device-to-host copy that the
         * compose op otherwise avoids) and one pass over it; in return the composition is given
         * that max as a fixed range and skips its own pass. sim_view_inv(m, any) equals
         * sim_view_inv(0, m) for m > 0, so the pixels are those of the automatic range, and
         * the number under the bar is exactly the one they were drawn with. Only frames with a
         * legend and an automatic range pay this. */
        rc = sim_read_field(s, fr->field);
        if (rc == SIM_OK) {
            float m = sim_view_field_max(fr->field, fr->cells);
            hi = m;
            if (m > 0.0f) {
                fixed = *view;
                fixed.range_max = m;
                view = &fixed;
            }
        }
    }
    if (rc == SIM_OK)
        rc = sim_compose(s, view, rgba);
    if (rc != SIM_OK) {
        snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
        render_queue_submit(fr->queue, rgba, NULL); /* the buffer goes back unwritten */
        return rc;
    }
    if (fr->legend)
        render_legend_stamp(rgba, view->w, view->h, view->lut, 0.0, hi, fr->legend_label);
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/frames/frame_%06" PRId64 ".png", dir, fr->next_index);
    render_queue_submit(fr->queue, rgba, path);
    fr->next_index++;
    return SIM_OK;
}
