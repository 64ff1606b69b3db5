/* app_frames.c - the frame writer of a run (see app_frames.h). */
#include "app_frames.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void app_frames_release(app_frames *fr)
{
    render_queue_destroy(fr->queue);
    free(fr->field);
    free(fr->agents);
    free(fr->occ);
}

int app_frames_init(app_frames *fr, const sim_scenario *sc, int64_t n_agents, sim_err *err)
{
    memset(fr, 0, sizeof *fr);
    int w, h;
    render_frame_size(sc, &w, &h);
    render_view_init(&fr->view, sc->colormap, sc->range_max);
    render_view_fit(&fr->view, sc->width, sc->height, w, h);
    int64_t cells = (int64_t)sc->width * sc->height;
    fr->field = malloc((size_t)cells * sizeof *fr->field);
    fr->agents = malloc((size_t)(n_agents > 0 ? n_agents : 1) * sizeof *fr->agents);
    fr->occ = malloc((size_t)cells);
    if (!fr->field || !fr->agents || !fr->occ)
        return sim_err_set(err, SIM_ENOMEM, "out of memory for frame buffers");
    return render_queue_create(2, 4, w, h, &fr->queue, err);
}

/* Composes the current state into a queue buffer and hands it to the encoders. */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err)
{
    const sim_scenario *sc = sim_get_scenario(s);
    int rc = render_queue_check(fr->queue, err);
    if (rc != SIM_OK)
        return rc;
    uint8_t *rgba = render_queue_acquire(fr->queue);
    const sim_backend_ops *ops = sim_get_backend(s);
    if (ops->compose) {
        rc = ops->compose(sim_get_backend_state(s), &fr->view, rgba, err);
    } else {
        int64_t cells = (int64_t)sc->width * sc->height;
        rc = sim_read_field(s, fr->field);
        if (rc == SIM_OK)
            rc = sim_read_agents(s, fr->agents);
        if (rc != SIM_OK) {
            snprintf(err->msg, sizeof err->msg, "%s", sim_errmsg(s));
        } else {
            render_frame_occupancy(fr->agents, sim_agent_count(s), fr->occ, cells);
            render_frame_compose(&fr->view, fr->field, sc->width, sc->height, fr->occ,
                                 render_field_max(fr->field, cells), rgba);
        }
    }
    char path[SIM_PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/frames/frame_%06" PRId64 ".png", dir, fr->next_index);
    if (rc != SIM_OK) {
        render_queue_submit(fr->queue, rgba, NULL);
        return rc;
    }
    render_queue_submit(fr->queue, rgba, path);
    fr->next_index++;
    return SIM_OK;
}

