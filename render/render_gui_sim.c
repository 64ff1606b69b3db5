/* render_gui_sim.c - the window's side of the viewer's simulation link (see render_gui_sim.h):
 * creating and stopping the thread (render_gui_sim_thread.c), the requests it serves, and the
 * reads of what it published. Every call takes the one mutex briefly. */
#include "render_gui_sim_impl.h"

#include <stdlib.h>
#include <string.h>

int render_gui_sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          render_gui_session *session, render_gui_sim **out, sim_err *err)
{
    *out = NULL;
    render_gui_sim *g = calloc(1, sizeof *g);
    if (!g) {
        render_gui_session_close(session);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    g->sc = *sc;
    g->ops = ops;
    g->threads = threads;
    g->seed = sc->seed;
    g->selected = -1;
    g->session = session;
    if (session)
        snprintf(g->session_dir, sizeof g->session_dir, "%s", render_gui_session_dir(session));
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->wake, NULL);
    pthread_cond_init(&g->done, NULL);
    if (pthread_create(&g->thread, NULL, render_gui_sim_thread, g) != 0) {
        pthread_cond_destroy(&g->done);
        pthread_cond_destroy(&g->wake);
        pthread_mutex_destroy(&g->mu);
        render_gui_session_close(session);
        free(g);
        return sim_err_set(err, SIM_ENOMEM, "cannot start the simulation thread");
    }
    pthread_mutex_lock(&g->mu);
    while (!g->started)
        pthread_cond_wait(&g->done, &g->mu);
    int rc = g->start_rc;
    if (rc != SIM_OK)
        *err = g->start_err;
    pthread_mutex_unlock(&g->mu);
    if (rc != SIM_OK) {
        render_gui_sim_destroy(g);
        return rc;
    }
    *out = g;
    return SIM_OK;
}

void render_gui_sim_destroy(render_gui_sim *g)
{
    if (!g)
        return;
    pthread_mutex_lock(&g->mu);
    g->quit = 1;
    pthread_cond_broadcast(&g->wake);
    pthread_mutex_unlock(&g->mu);
    pthread_join(g->thread, NULL);
    sim_destroy(g->s);
    render_gui_session_close(g->session);
    render_gui_layer_destroy(g->layer);
    for (int i = 0; i < 2; i++) {
        free(g->buf[i].field);
        free(g->buf[i].occ);
        free(g->buf[i].image);
    }
    free(g->agents);
    free(g->before);
    pthread_cond_destroy(&g->done);
    pthread_cond_destroy(&g->wake);
    pthread_mutex_destroy(&g->mu);
    free(g);
}

void render_gui_sim_steps(render_gui_sim *g, int64_t n)
{
    pthread_mutex_lock(&g->mu);
    g->pending += n;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_top_up(render_gui_sim *g, int64_t n)
{
    pthread_mutex_lock(&g->mu);
    if (g->pending == 0) {
        g->pending = n;
        pthread_cond_signal(&g->wake);
    }
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_free_run(render_gui_sim *g, int on)
{
    pthread_mutex_lock(&g->mu);
    g->free_run = on;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_pause(render_gui_sim *g)
{
    pthread_mutex_lock(&g->mu);
    g->free_run = 0;
    g->pending = 0;
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_paint(render_gui_sim *g, int x, int y, int radius, float amount)
{
    pthread_mutex_lock(&g->mu);
    if (g->n_strokes < PAINT_QUEUE) {
        g->strokes[g->n_strokes++] = (stroke){x, y, radius, amount};
    } else {
        stroke *last = &g->strokes[PAINT_QUEUE - 1];
        *last = (stroke){x, y, radius, last->amount + amount};
    }
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_set_params(render_gui_sim *g, const sim_scenario *sc)
{
    pthread_mutex_lock(&g->mu);
    g->params = *sc;
    g->params_pending = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_restart(render_gui_sim *g, uint64_t seed)
{
    pthread_mutex_lock(&g->mu);
    g->restart = 1;
    g->restart_seed = seed;
    g->n_strokes = 0;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_probe(render_gui_sim *g, int active, int x, int y)
{
    pthread_mutex_lock(&g->mu);
    g->probe_active = active;
    g->probe_x = x;
    g->probe_y = y;
    if (!active)
        g->probe.active = 0;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_select_at(render_gui_sim *g, int x, int y)
{
    pthread_mutex_lock(&g->mu);
    g->probe_active = 1;
    g->probe_x = x;
    g->probe_y = y;
    g->selected = -1;
    g->trail_n = g->trail_head = 0;
    g->select_at_probe = 1;
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_select(render_gui_sim *g, int64_t id)
{
    pthread_mutex_lock(&g->mu);
    g->select_at_probe = 0;
    if (id != g->selected) {
        g->selected = id;
        g->trail_n = 0;
        g->trail_head = 0;
        g->dirty = 1; /* publish: reads the agent's cell */
    }
    pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

int render_gui_sim_trail(render_gui_sim *g, uint32_t *cells, int cap)
{
    pthread_mutex_lock(&g->mu);
    int n = g->trail_n < cap ? g->trail_n : cap;
    int skip = g->trail_n - n;
    for (int i = 0; i < n; i++)
        cells[i] = g->trail[(g->trail_head + skip + i) % RENDER_GUI_TRAIL];
    pthread_mutex_unlock(&g->mu);
    return n;
}

void render_gui_sim_want(render_gui_sim *g, const sim_view *view, int agent_mode)
{
    pthread_mutex_lock(&g->mu);
    int changed = agent_mode != g->want_mode;
    if (changed)
        g->dirty = 1; /* the occupancy marks change: publish again */
    g->want_mode = agent_mode;
    if (memcmp(view, &g->want_view, sizeof *view) != 0 || g->want_serial == 0) {
        g->want_view = *view;
        g->want_serial++;
        changed = 1;
    }
    if (changed)
        pthread_cond_signal(&g->wake);
    pthread_mutex_unlock(&g->mu);
}

const render_gui_frame *render_gui_sim_lock(render_gui_sim *g)
{
    pthread_mutex_lock(&g->mu);
    return &g->buf[g->front].f;
}

void render_gui_sim_unlock(render_gui_sim *g)
{
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_info_get(render_gui_sim *g, render_gui_sim_info *info)
{
    pthread_mutex_lock(&g->mu);
    info->step = g->step;
    info->agents = g->n_agents;
    info->pending = g->pending;
    info->gen = g->gen;
    info->seed = g->seed;
    info->free_run = g->free_run;
    info->failed = g->failed;
    info->steps_per_s = g->steps_per_s;
    info->selected = g->selected;
    info->selected_x = g->sel_x;
    info->selected_y = g->sel_y;
    snprintf(info->msg, sizeof info->msg, "%s", g->msg);
    snprintf(info->note, sizeof info->note, "%s", g->note);
    snprintf(info->session, sizeof info->session, "%s", g->session_dir);
    g->note[0] = '\0';
    pthread_mutex_unlock(&g->mu);
}

void render_gui_sim_probe_get(render_gui_sim *g, render_gui_probe *probe)
{
    pthread_mutex_lock(&g->mu);
    *probe = g->probe;
    pthread_mutex_unlock(&g->mu);
}

int render_gui_sim_history(render_gui_sim *g, render_gui_plot *dst, uint64_t *serial)
{
    int copied = 0;
    pthread_mutex_lock(&g->mu);
    if (g->hist_serial != *serial) {
        /* Only the live part of the ring; the scratch is the reader's. */
        dst->head = g->hist.head;
        dst->n = g->hist.n;
        memcpy(dst->step, g->hist.step, sizeof dst->step);
        memcpy(dst->value, g->hist.value, sizeof dst->value);
        *serial = g->hist_serial;
        copied = 1;
    }
    pthread_mutex_unlock(&g->mu);
    return copied;
}

int render_gui_sim_settled(render_gui_sim *g)
{
    pthread_mutex_lock(&g->mu);
    int host = render_gui_sim_want_host(g);
    int settled = g->failed ||
                  (!g->busy && g->pending == 0 && !g->free_run && g->n_strokes == 0 &&
                   !g->restart && !g->params_pending && !g->dirty && g->serial > 0 &&
                   !g->select_at_probe &&
                   g->buf[g->front].f.host == host &&
                   (host || g->want_serial == g->shown_want_serial) &&
                   (!g->probe_active ||
                    (g->probe.active && g->probe.x == g->probe_x && g->probe.y == g->probe_y)));
    pthread_mutex_unlock(&g->mu);
    return settled;
}
