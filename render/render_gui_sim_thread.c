/* render_gui_sim_thread.c - the viewer's simulation thread (see render_gui_sim.h): one action
 * per turn of its loop (a restart, new parameters, paint strokes, a publish, a step), the lock
 * held between actions and dropped while an action touches the sim object, so that the window
 * only ever waits for bookkeeping and the buffer swap. The sim object and the session files are
 * touched by this thread alone (a CUDA context is then used from one thread). */
#include "render_gui_sim_impl.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render_frame.h"
#include "sim_events.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Records a failure (lock held). */
static void fail_locked(render_gui_sim *g, const char *what)
{
    g->failed = 1;
    g->pending = 0;
    g->free_run = 0;
    snprintf(g->msg, sizeof g->msg, "%s", what);
}

/* The session could not write: it stops recording, the simulation goes on (lock held). */
static void session_failed_locked(render_gui_sim *g, const char *why)
{
    snprintf(g->note, sizeof g->note, "session recording stopped: %s", why);
    render_gui_session_close(g->session);
    g->session = NULL;
    g->session_dir[0] = '\0';
}

/* Kind of frame for what the window wants: host frames when the window can compose them
 * itself and the layer is not the horizon layer (lock held). */
int render_gui_sim_want_host(const render_gui_sim *g)
{
    if (g->want_view.layer == SIM_LAYER_HORIZON)
        return 0;
    return !g->in_backend || g->want_mode == RENDER_GUI_AGENTS_MOVED;
}

/* Makes b able to hold a host frame of the world (thread; b is the back buffer). */
static int host_buffers(render_gui_sim *g, buffer *b)
{
    size_t cells = (size_t)g->sc.width * (size_t)g->sc.height;
    if (!b->field)
        b->field = malloc(cells * sizeof *b->field);
    if (!b->occ)
        b->occ = malloc(cells);
    return b->field && b->occ;
}

/* Adds v to the sorted distinct list a[0..*n) unless present. */
static void add_sorted(int32_t *a, int *n, int32_t v)
{
    int i = 0;
    while (i < *n && a[i] < v)
        i++;
    if (i < *n && a[i] == v)
        return;
    memmove(a + i + 1, a + i, (size_t)(*n - i) * sizeof *a);
    a[i] = v;
    (*n)++;
}

static int index_of(const int32_t *a, int n, int32_t v)
{
    for (int i = 0; i < n; i++)
        if (a[i] == v)
            return i;
    return -1;
}

/* Fills the probe for cell (x, y) of the current state: the cell's value and agent
 * (sim_read_cells), and the 9 candidate sums as disk sums at the candidate cells (wrapped on a
 * periodic grid, SIM_SUM_INVALID off a bounded one): one small region of at most 3 x 3 cells
 * asked of the backend, never the grid. */
static void fill_probe(render_gui_sim *g, int x, int y, render_gui_probe *p)
{
    const sim_scenario *sc = &g->sc;
    int w = sc->width, h = sc->height, periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    memset(p, 0, sizeof *p);
    p->active = 1;
    p->x = x;
    p->y = y;
    p->agent = -1;
    if (x < 0 || y < 0 || x >= w || y >= h)
        return;
    uint32_t c = (uint32_t)((size_t)y * (size_t)w + (size_t)x);
    if (sim_read_cells(g->s, &c, 1, &p->value, &p->agent) != SIM_OK)
        return;
    int cx[SIM_NCAND], cy[SIM_NCAND];
    int32_t xs[3], ys[3];
    int nx = 0, ny = 0;
    for (int k = 0; k < SIM_NCAND; k++) {
        cx[k] = x + sim_cand_dx(k);
        cy[k] = y + sim_cand_dy(k);
        if (periodic) {
            cx[k] = (cx[k] + w) % w;
            cy[k] = (cy[k] + h) % h;
        } else if (cx[k] < 0 || cx[k] >= w || cy[k] < 0 || cy[k] >= h) {
            cx[k] = -1;
            continue;
        }
        add_sorted(xs, &nx, cx[k]);
        add_sorted(ys, &ny, cy[k]);
    }
    int64_t sums[9];
    if (sim_region_sums(g->s, xs, nx, ys, ny, sums) != SIM_OK)
        return;
    for (int k = 0; k < SIM_NCAND; k++)
        p->sums[k] = cx[k] < 0 ? SIM_SUM_INVALID
                               : sums[index_of(ys, ny, cy[k]) * nx + index_of(xs, nx, cx[k])];
    p->step = sim_steps_done(g->s);
    p->valid = 1;
}

/* Room for the current agents in g->agents and g->before: births can outgrow them. 0 when out
 * of memory (the old buffers stay). */
static int agent_room(render_gui_sim *g)
{
    int64_t n = sim_agent_count(g->s);
    if (n <= g->agents_cap)
        return 1;
    size_t nb = (size_t)n * 2 * sizeof(uint32_t);
    uint32_t *a = realloc(g->agents, nb);
    if (!a)
        return 0;
    g->agents = a;
    uint32_t *b = realloc(g->before, nb);
    if (!b)
        return 0;
    g->before = b;
    g->agents_cap = n * 2;
    return 1;
}

/* Marks the agents that changed cell in the latest step with 2 (moved colouring). With births
 * and deaths the indices shift, and an agent counts as moved when the agent at its index was
 * elsewhere before. */
static void mark_moved(render_gui_sim *g, uint8_t *occ)
{
    int64_t n = sim_agent_count(g->s);
    if (!g->have_before || n > g->before_n)
        n = g->have_before ? g->before_n : 0;
    for (int64_t i = 0; i < n; i++)
        if (g->agents[i] != g->before[i])
            occ[g->agents[i]] = 2;
}

/* Produces the back buffer from the current state; called without the lock. Returns 0 and
 * sets why on failure. */
static int produce(render_gui_sim *g, buffer *b, int host, int mode, const sim_view *view,
                   char *why, size_t why_n)
{
    const sim_scenario *sc = &g->sc;
    int64_t cells = (int64_t)sc->width * sc->height;
    memset(&b->f, 0, sizeof b->f);
    b->f.fw = sc->width;
    b->f.fh = sc->height;
    b->f.step = sim_steps_done(g->s);
    b->f.host = host;
    if (host) {
        if (!host_buffers(g, b)) {
            snprintf(why, why_n, "out of memory for the viewer's copy of a %dx%d world",
                     sc->width, sc->height);
            return 0;
        }
        if (!agent_room(g) || sim_read_field(g->s, b->field) != SIM_OK ||
            sim_read_agents(g->s, g->agents) != SIM_OK) {
            snprintf(why, why_n, "reading the state: %s", sim_errmsg(g->s));
            return 0;
        }
        if (sim_get_model(g->s)->n_species > 1) {
            if (sim_read_occupancy(g->s, b->occ) != SIM_OK) {
                snprintf(why, why_n, "reading the state: %s", sim_errmsg(g->s));
                return 0;
            }
        } else {
            render_frame_occupancy(g->agents, sim_agent_count(g->s), b->occ, cells);
        }
        if (mode == RENDER_GUI_AGENTS_MOVED)
            mark_moved(g, b->occ);
        b->f.field = b->field;
        b->f.occ = b->occ;
        b->f.field_max = render_field_max(b->field, cells);
        return 1;
    }
    size_t need = (size_t)view->w * (size_t)view->h * 4;
    if (need > b->image_cap) {
        uint8_t *img = realloc(b->image, need);
        if (!img) {
            snprintf(why, why_n, "out of memory for a %dx%d view", view->w, view->h);
            return 0;
        }
        b->image = img;
        b->image_cap = need;
    }
    if (view->layer == SIM_LAYER_HORIZON) {
        sim_err err;
        if (render_gui_layer_draw(g->layer, g->s, view, b->image, &b->f.layer_min,
                                  &b->f.layer_max, &err) != SIM_OK) {
            snprintf(why, why_n, "%s", err.msg);
            return 0;
        }
    } else if (sim_compose(g->s, view, b->image) != SIM_OK) {
        snprintf(why, why_n, "composing the view: %s", sim_errmsg(g->s));
        return 0;
    }
    b->f.image = b->image;
    b->f.image_view = *view;
    /* The legend's automatic range needs the field max: every step's statistics carry it; only
     * after a paint, a restart or a parameter change is the field read once to find it. */
    if (!g->fmax_valid) {
        if (!host_buffers(g, b) || sim_read_field(g->s, b->field) != SIM_OK) {
            snprintf(why, why_n, "reading the field: %s", sim_errmsg(g->s));
            return 0;
        }
        g->fmax = render_field_max(b->field, cells);
        g->fmax_valid = 1;
    }
    b->f.field_max = g->fmax;
    return 1;
}

/* Replaces the sim with a fresh one of sc (thread, no lock). */
static int rebuild(render_gui_sim *g, const sim_scenario *sc, sim_err *err)
{
    sim_destroy(g->s); /* first: two worlds at once might not fit */
    g->s = NULL;
    int rc = sim_create(sc, g->ops, g->threads, &g->s, err);
    if (rc == SIM_OK)
        g->sc = *sc;
    return rc;
}

/* Records one events line in the session, if any (thread, lock held). */
static void record_event(render_gui_sim *g, const char *line)
{
    sim_err err;
    if (g->session && render_gui_session_event(g->session, line, &err) != SIM_OK)
        session_failed_locked(g, err.msg);
}

/* Applies new run-time parameters between steps and records each changed key (thread; enters
 * and leaves with the lock held). */
static void apply_params(render_gui_sim *g)
{
    sim_scenario next = g->params;
    g->params_pending = 0;
    g->busy = 1;
    pthread_mutex_unlock(&g->mu);
    int rc = sim_set_params(g->s, &next);
    pthread_mutex_lock(&g->mu);
    g->busy = 0;
    if (rc != SIM_OK) {
        snprintf(g->note, sizeof g->note, "parameters not changed: %s", sim_errmsg(g->s));
        return;
    }
    int64_t step = sim_steps_done(g->s);
    /* the change kept the sections, so an index names one key in both scenarios */
    for (int i = 0; i < sim_events_param_count(&next); i++) {
        if (sim_events_param_get(&g->sc, i) == sim_events_param_get(&next, i))
            continue;
        char line[256], name[SIM_EVENTS_KEY_MAX];
        sim_events_param_name(&next, i, name, sizeof name);
        sim_events_format_set(line, sizeof line, step, name, &next);
        record_event(g, line);
    }
    g->sc = *sim_get_scenario(g->s);
    g->have_before = 0;
    g->fmax_valid = 0;
    g->gen++;
    g->dirty = 1;
}

/* Applies queued strokes (thread; enters and leaves with the lock held). */
static void apply_strokes(render_gui_sim *g)
{
    stroke st[PAINT_QUEUE];
    int k = g->n_strokes;
    memcpy(st, g->strokes, (size_t)k * sizeof st[0]);
    g->n_strokes = 0;
    g->busy = 1;
    pthread_mutex_unlock(&g->mu);
    int rc = SIM_OK, done = 0;
    for (; done < k && rc == SIM_OK; done++)
        rc = sim_paint(g->s, st[done].x, st[done].y, st[done].radius, st[done].amount);
    pthread_mutex_lock(&g->mu);
    g->busy = 0;
    int64_t step = sim_steps_done(g->s);
    for (int i = 0; i < done - (rc != SIM_OK); i++) {
        char line[256];
        sim_events_format_paint(line, sizeof line, step, st[i].x, st[i].y, st[i].radius,
                                st[i].amount);
        record_event(g, line);
    }
    if (rc != SIM_OK)
        fail_locked(g, sim_errmsg(g->s));
    g->fmax_valid = 0;
    g->dirty = 1;
}

/* Restarts with a new seed and the parameters in force (thread; lock held on entry/exit). */
static void apply_restart(render_gui_sim *g)
{
    sim_scenario sc = g->sc;
    sc.seed = g->restart_seed;
    g->restart = 0;
    g->busy = 1;
    pthread_mutex_unlock(&g->mu);
    sim_err err;
    int rc = rebuild(g, &sc, &err);
    pthread_mutex_lock(&g->mu);
    g->busy = 0;
    if (rc != SIM_OK) {
        fail_locked(g, err.msg);
        return;
    }
    if (g->session) {
        if (render_gui_session_restart(g->session, &g->sc, &err) != SIM_OK)
            session_failed_locked(g, err.msg);
        else
            snprintf(g->session_dir, sizeof g->session_dir, "%s",
                     render_gui_session_dir(g->session));
    }
    g->failed = 0;
    g->seed = sc.seed;
    g->step = 0;
    g->gen++;
    g->pending = 0;
    g->have_before = 0;
    g->fmax_valid = 0;
    g->trail_n = 0;
    render_gui_plot_clear(&g->hist);
    g->hist_serial++;
    g->dirty = 1;
}

/* Reads the followed agent's cell into the trail (thread, no lock; the trail is written under
 * the lock by the caller's copy). */
static int read_selected(render_gui_sim *g, int64_t id, uint32_t *cell)
{
    return id >= 0 && id < sim_agent_count(g->s) && sim_agent_cells(g->s, &id, 1, cell) == SIM_OK;
}

static void trail_push(render_gui_sim *g, uint32_t cell)
{
    if (g->trail_n > 0 &&
        g->trail[(g->trail_head + g->trail_n - 1) % RENDER_GUI_TRAIL] == cell)
        return;
    if (g->trail_n < RENDER_GUI_TRAIL) {
        g->trail[(g->trail_head + g->trail_n) % RENDER_GUI_TRAIL] = cell;
        g->trail_n++;
    } else {
        g->trail[g->trail_head] = cell;
        g->trail_head = (g->trail_head + 1) % RENDER_GUI_TRAIL;
    }
    g->sel_x = (int)(cell % (uint32_t)g->sc.width);
    g->sel_y = (int)(cell / (uint32_t)g->sc.width);
}

/* One step (thread; lock held on entry/exit). */
static void do_step(render_gui_sim *g)
{
    if (g->pending > 0)
        g->pending--;
    int mode = g->want_mode;
    int64_t sel = g->selected;
    g->busy = 1;
    pthread_mutex_unlock(&g->mu);
    int have_before = mode == RENDER_GUI_AGENTS_MOVED && agent_room(g) &&
                      sim_read_agents(g->s, g->before) == SIM_OK;
    int64_t before_n = sim_agent_count(g->s);
    sim_stats st;
    int rc = sim_step(g->s, 1, &st);
    uint32_t cell = 0;
    int have_cell = rc == SIM_OK && read_selected(g, sel, &cell);
    double t = now_s();
    pthread_mutex_lock(&g->mu);
    g->busy = 0;
    if (rc != SIM_OK) {
        char m[800];
        snprintf(m, sizeof m, "step %lld failed: %s", (long long)(g->step + 1),
                 sim_errmsg(g->s));
        fail_locked(g, m);
        return;
    }
    g->have_before = have_before;
    g->before_n = before_n;
    g->fmax = st.field_max;
    g->fmax_valid = 1;
    g->step = st.step;
    g->n_agents = st.agents;
    if (have_cell && sel == g->selected)
        trail_push(g, cell);
    sim_err err;
    if (g->session && render_gui_session_stats(g->session, &st, &err) != SIM_OK)
        session_failed_locked(g, err.msg);
    render_gui_plot_push(&g->hist, &st);
    g->hist_serial++;
    g->dirty = 1;
    g->rate_steps++;
    if (t - g->rate_t0 >= RATE_WINDOW) {
        g->steps_per_s = (double)g->rate_steps / (t - g->rate_t0);
        g->rate_steps = 0;
        g->rate_t0 = t;
    }
}

/* Publishes the state when it is stale (thread; lock held on entry/exit). Returns 1 when it
 * did something. */
static int publish(render_gui_sim *g, int stepping)
{
    int host = render_gui_sim_want_host(g);
    int view_changed = !host && g->want_serial != g->shown_want_serial;
    int probe_stale = g->probe_active && (g->probe.x != g->probe_x ||
                                          g->probe.y != g->probe_y || !g->probe.active);
    int stale = g->dirty || view_changed || probe_stale ||
                (g->buf[g->front].f.host != host) || g->serial == 0;
    if (!host && g->want_serial == 0)
        stale = 0; /* an image is wanted, but the window has not said of what yet */
    if (!stale || (stepping && now_s() - g->last_publish < PUBLISH_PERIOD))
        return 0;
    buffer *b = &g->buf[1 - g->front];
    sim_view view = g->want_view;
    int mode = g->want_mode;
    uint64_t want = g->want_serial;
    int pa = g->probe_active, px = g->probe_x, py = g->probe_y;
    int64_t sel = g->selected;
    render_gui_probe probe;
    char why[768];
    g->busy = 1;
    g->dirty = 0;
    pthread_mutex_unlock(&g->mu);
    int ok = produce(g, b, host, mode, &view, why, sizeof why);
    uint32_t cell = 0;
    int have_cell = ok && read_selected(g, sel, &cell);
    if (have_cell) {
        px = (int)(cell % (uint32_t)g->sc.width);
        py = (int)(cell / (uint32_t)g->sc.width);
    }
    if (ok && pa)
        fill_probe(g, px, py, &probe);
    pthread_mutex_lock(&g->mu);
    g->busy = 0;
    if (!ok) {
        fail_locked(g, why);
        return 1;
    }
    b->f.serial = ++g->serial;
    b->f.gen = g->gen;
    g->front = 1 - g->front;
    g->shown_want_serial = want;
    if (pa && g->probe_active) {
        g->probe = probe;
        /* A followed agent carries the probe along: the window asked for its old cell. */
        g->probe_x = probe.x;
        g->probe_y = probe.y;
    } else if (!g->probe_active) {
        g->probe.active = 0;
    }
    if (have_cell && sel == g->selected)
        trail_push(g, cell);
    /* A click asked to select the agent on the cell just read: who stands there is known now,
     * without the window ever waiting for it. */
    if (pa && g->select_at_probe && g->probe_active && probe.x == g->probe_x &&
        probe.y == g->probe_y) {
        g->select_at_probe = 0;
        if (probe.valid && probe.agent >= 0) {
            g->selected = probe.agent;
            g->trail_n = g->trail_head = 0;
            trail_push(g, (uint32_t)((size_t)probe.y * (size_t)g->sc.width + (size_t)probe.x));
        }
    }
    g->last_publish = now_s();
    return 1;
}

/* The thread's loop: one action per turn, the lock held between actions. */
void *render_gui_sim_thread(void *arg)
{
    render_gui_sim *g = arg;
    sim_err err = {{0}};
    int rc = sim_create(&g->sc, g->ops, g->threads, &g->s, &err);
    int64_t n = rc == SIM_OK ? sim_agent_count(g->s) : 0;
    size_t nb = (size_t)(n > 0 ? n : 1) * sizeof(uint32_t);
    if (rc == SIM_OK && (!(g->agents = malloc(nb)) || !(g->before = malloc(nb))))
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for %lld agent cells", (long long)n);
    if (rc == SIM_OK)
        rc = render_gui_layer_create(&g->layer, &err);
    pthread_mutex_lock(&g->mu);
    g->started = 1;
    g->in_backend = rc == SIM_OK && sim_compose_in_backend(g->s);
    g->n_agents = n;
    g->agents_cap = n > 0 ? n : 1;
    g->start_rc = rc;
    g->start_err = err;
    pthread_cond_broadcast(&g->done);
    if (rc != SIM_OK) {
        pthread_mutex_unlock(&g->mu);
        return NULL;
    }
    g->rate_t0 = now_s();
    while (!g->quit) {
        if (g->restart) {
            apply_restart(g);
            continue;
        }
        if (g->failed) {
            pthread_cond_wait(&g->wake, &g->mu);
            continue;
        }
        if (g->params_pending) {
            apply_params(g);
            continue;
        }
        if (g->n_strokes > 0) {
            apply_strokes(g);
            continue;
        }
        int stepping = g->pending > 0 || g->free_run;
        if (publish(g, stepping))
            continue;
        if (stepping) {
            do_step(g);
            continue;
        }
        /* Idle: steps/s decays to 0 once no step came for a measuring window. */
        if (now_s() - g->rate_t0 >= RATE_WINDOW) {
            g->steps_per_s = 0.0;
            g->rate_steps = 0;
            g->rate_t0 = now_s();
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1; /* wake now and then to let steps/s fall to 0 */
        pthread_cond_timedwait(&g->wake, &g->mu, &ts);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}
