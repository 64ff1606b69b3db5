/* render_gui_sim.c - the viewer's simulation thread (see render_gui_sim.h).
 *
 * One mutex guards every field marked "shared"; the thread drops it while it steps, copies or
 * composes, so the window thread only ever waits for bookkeeping and the buffer swap. The sim
 * object itself is touched by the thread alone (a CUDA context is then used from one thread). */
#include "render_gui_sim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "render_frame.h"

#define PAINT_QUEUE 64
#define PUBLISH_PERIOD (1.0 / 60.0) /* s between publishes while steps keep coming */
#define RATE_WINDOW 0.5             /* s over which steps/s is measured */
#define PROBE_PERIOD 0.25           /* s between probe updates that read the whole grid */

typedef struct stroke {
    int x, y, radius;
    float amount;
} stroke;

/* One half of the double buffer. */
typedef struct buffer {
    float *field;
    uint8_t *occ;
    uint8_t *image;
    size_t image_cap;
    render_gui_frame f;
} buffer;

struct render_gui_sim {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t wake; /* the thread waits here for work */
    pthread_cond_t done; /* create() waits here for the first sim */

    /* Fixed after create. */
    sim_scenario sc;
    const sim_backend_ops *ops;
    int threads;
    int in_backend; /* sim_compose_in_backend: the same for every rebuild (same table) */

    /* The thread's own. */
    sim *s;
    uint32_t *agents;     /* sim_agent_count() cells */
    float *probe_field;   /* image mode: a host copy for the probe */
    double last_publish, probe_t;
    double rate_t0;
    int64_t rate_steps;

    /* Shared. */
    int quit, started, start_rc;
    sim_err start_err;
    int64_t pending;
    int free_run, busy;
    stroke strokes[PAINT_QUEUE];
    int n_strokes;
    int restart;
    uint64_t restart_seed, seed;
    int probe_active, probe_x, probe_y;
    sim_view want_view;
    int want_host;
    uint64_t want_serial, shown_want_serial;
    int dirty;            /* the state changed since the last publish */
    int64_t step, n_agents;
    uint64_t gen, serial;
    int failed;
    char msg[1024];
    double steps_per_s;
    buffer buf[2];
    int front;
    render_gui_probe probe;
    render_gui_plot hist;
    uint64_t hist_serial;
};

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

/* Makes b able to hold a host frame of the world (thread, lock not needed: b is the back). */
static int host_buffers(render_gui_sim *g, buffer *b)
{
    size_t cells = (size_t)g->sc.width * (size_t)g->sc.height;
    if (!b->field)
        b->field = malloc(cells * sizeof *b->field);
    if (!b->occ)
        b->occ = malloc(cells);
    return b->field && b->occ;
}

/* Fills the probe for the state just read (thread, outside the lock). field: the host field,
 * or NULL to read one. */
static void fill_probe(render_gui_sim *g, const float *field, int x, int y, render_gui_probe *p)
{
    const sim_scenario *sc = &g->sc;
    memset(p, 0, sizeof *p);
    p->active = 1;
    p->x = x;
    p->y = y;
    p->agent = -1;
    if (x < 0 || y < 0 || x >= sc->width || y >= sc->height)
        return;
    size_t cell = (size_t)y * (size_t)sc->width + (size_t)x;
    if (!field) {
        if (!g->probe_field)
            g->probe_field = malloc((size_t)sc->width * (size_t)sc->height * sizeof(float));
        if (!g->probe_field || sim_read_field(g->s, g->probe_field) != SIM_OK)
            return;
        field = g->probe_field;
        if (sim_read_agents(g->s, g->agents) != SIM_OK)
            return;
    }
    p->value = field[cell];
    int64_t n = sim_agent_count(g->s);
    for (int64_t i = 0; i < n; i++)
        if (g->agents[i] == (uint32_t)cell) {
            p->agent = i;
            break;
        }
    uint32_t c = (uint32_t)cell;
    if (sim_horizon(g->s, &c, 1, p->sums) != SIM_OK)
        return;
    p->step = sim_steps_done(g->s);
    p->valid = 1;
}

/* Produces the back buffer from the current state; called without the lock. Returns 0 and
 * sets why on failure. */
static int produce(render_gui_sim *g, buffer *b, int host, const sim_view *view,
                   int probe_active, int px, int py, render_gui_probe *probe, char *why,
                   size_t why_n)
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
        if (sim_read_field(g->s, b->field) != SIM_OK ||
            sim_read_agents(g->s, g->agents) != SIM_OK) {
            snprintf(why, why_n, "reading the state: %s", sim_errmsg(g->s));
            return 0;
        }
        render_frame_occupancy(g->agents, sim_agent_count(g->s), b->occ, cells);
        b->f.field = b->field;
        b->f.occ = b->occ;
        b->f.field_max = render_field_max(b->field, cells);
    } else {
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
        if (sim_compose(g->s, view, b->image) != SIM_OK) {
            snprintf(why, why_n, "composing the view: %s", sim_errmsg(g->s));
            return 0;
        }
        b->f.image = b->image;
        b->f.image_view = *view;
    }
    if (probe_active)
        fill_probe(g, host ? b->field : NULL, px, py, probe);
    else
        memset(probe, 0, sizeof *probe);
    return 1;
}

/* Replaces the sim with a fresh one of the same scenario and `seed` (thread, no lock). */
static int rebuild(render_gui_sim *g, uint64_t seed, sim_err *err)
{
    sim_scenario sc = g->sc;
    sc.seed = seed;
    sim_destroy(g->s); /* first: two worlds at once might not fit */
    g->s = NULL;
    int rc = sim_create(&sc, g->ops, g->threads, &g->s, err);
    if (rc == SIM_OK)
        g->sc.seed = seed;
    return rc;
}

/* The thread's loop: one action per turn, the lock held between actions. */
static void *run(void *arg)
{
    render_gui_sim *g = arg;
    sim_err err = {{0}};
    int rc = sim_create(&g->sc, g->ops, g->threads, &g->s, &err);
    int64_t n = rc == SIM_OK ? sim_agent_count(g->s) : 0;
    if (rc == SIM_OK && !(g->agents = malloc((size_t)(n > 0 ? n : 1) * sizeof *g->agents)))
        rc = sim_err_set(&err, SIM_ENOMEM, "out of memory for %lld agent cells", (long long)n);
    pthread_mutex_lock(&g->mu);
    g->started = 1;
    g->in_backend = rc == SIM_OK && sim_compose_in_backend(g->s);
    g->n_agents = n;
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
            uint64_t seed = g->restart_seed;
            g->restart = 0;
            g->busy = 1;
            pthread_mutex_unlock(&g->mu);
            rc = rebuild(g, seed, &err);
            pthread_mutex_lock(&g->mu);
            g->busy = 0;
            if (rc != SIM_OK) {
                fail_locked(g, err.msg);
                continue;
            }
            g->failed = 0;
            g->seed = seed;
            g->step = 0;
            g->gen++;
            g->pending = 0;
            render_gui_plot_clear(&g->hist);
            g->hist_serial++;
            g->dirty = 1;
            continue;
        }
        if (g->failed) {
            pthread_cond_wait(&g->wake, &g->mu);
            continue;
        }
        if (g->n_strokes > 0) {
            stroke st[PAINT_QUEUE];
            int k = g->n_strokes;
            memcpy(st, g->strokes, (size_t)k * sizeof st[0]);
            g->n_strokes = 0;
            g->busy = 1;
            pthread_mutex_unlock(&g->mu);
            rc = SIM_OK;
            for (int i = 0; i < k && rc == SIM_OK; i++)
                rc = sim_paint(g->s, st[i].x, st[i].y, st[i].radius, st[i].amount);
            pthread_mutex_lock(&g->mu);
            g->busy = 0;
            if (rc != SIM_OK)
                fail_locked(g, sim_errmsg(g->s));
            g->dirty = 1;
            continue;
        }
        int stepping = g->pending > 0 || g->free_run;
        int host = g->want_host || !g->in_backend;
        int view_changed = !host && g->want_serial != g->shown_want_serial;
        int probe_stale = g->probe_active &&
                          (g->probe.x != g->probe_x || g->probe.y != g->probe_y ||
                           !g->probe.active);
        int stale = g->dirty || view_changed || probe_stale ||
                    (g->buf[g->front].f.host != host) || g->serial == 0;
        if (!host && g->want_serial == 0)
            stale = 0; /* the backend composes, but the window has not said what to show yet */
        if (stale && (!stepping || now_s() - g->last_publish >= PUBLISH_PERIOD)) {
            buffer *b = &g->buf[1 - g->front];
            sim_view view = g->want_view;
            uint64_t want = g->want_serial;
            int px = g->probe_x, py = g->probe_y;
            /* Without a host frame the probe reads the whole grid from the backend: then it
             * follows the state at most PROBE_PERIOD apart (a new cell at once). */
            int pa = g->probe_active &&
                     (host || probe_stale || now_s() - g->probe_t >= PROBE_PERIOD);
            render_gui_probe probe;
            char why[768];
            g->busy = 1;
            g->dirty = 0;
            pthread_mutex_unlock(&g->mu);
            int ok = produce(g, b, host, &view, pa, px, py, &probe, why, sizeof why);
            pthread_mutex_lock(&g->mu);
            g->busy = 0;
            if (!ok) {
                fail_locked(g, why);
                continue;
            }
            b->f.serial = ++g->serial;
            b->f.gen = g->gen;
            g->front = 1 - g->front;
            g->shown_want_serial = want;
            if (pa) {
                g->probe = probe;
                g->probe_t = now_s();
            } else if (!g->probe_active) {
                g->probe.active = 0;
            }
            g->last_publish = now_s();
            continue;
        }
        if (stepping) {
            if (g->pending > 0)
                g->pending--;
            g->busy = 1;
            pthread_mutex_unlock(&g->mu);
            sim_stats st;
            rc = sim_step(g->s, 1, &st);
            double t = now_s();
            pthread_mutex_lock(&g->mu);
            g->busy = 0;
            if (rc != SIM_OK) {
                char m[800];
                snprintf(m, sizeof m, "step %lld failed: %s", (long long)(g->step + 1),
                         sim_errmsg(g->s));
                fail_locked(g, m);
                continue;
            }
            g->step = st.step;
            render_gui_plot_push(&g->hist, &st);
            g->hist_serial++;
            g->dirty = 1;
            g->rate_steps++;
            if (t - g->rate_t0 >= RATE_WINDOW) {
                g->steps_per_s = (double)g->rate_steps / (t - g->rate_t0);
                g->rate_steps = 0;
                g->rate_t0 = t;
            }
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

int render_gui_sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          render_gui_sim **out, sim_err *err)
{
    *out = NULL;
    render_gui_sim *g = calloc(1, sizeof *g);
    if (!g)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    g->sc = *sc;
    g->ops = ops;
    g->threads = threads;
    g->seed = sc->seed;
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->wake, NULL);
    pthread_cond_init(&g->done, NULL);
    if (pthread_create(&g->thread, NULL, run, g) != 0) {
        pthread_cond_destroy(&g->done);
        pthread_cond_destroy(&g->wake);
        pthread_mutex_destroy(&g->mu);
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
    for (int i = 0; i < 2; i++) {
        free(g->buf[i].field);
        free(g->buf[i].occ);
        free(g->buf[i].image);
    }
    free(g->agents);
    free(g->probe_field);
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

void render_gui_sim_want(render_gui_sim *g, const sim_view *view, int host)
{
    pthread_mutex_lock(&g->mu);
    /* Host frames whenever sim_compose would copy the whole state to the host anyway: the window
     * then composes each view itself, at once, without waiting for this thread. */
    host = host || !g->in_backend;
    int changed = host != g->want_host;
    if (!host && memcmp(view, &g->want_view, sizeof *view) != 0) {
        g->want_view = *view;
        g->want_serial++;
        changed = 1;
    }
    g->want_host = host;
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
    snprintf(info->msg, sizeof info->msg, "%s", g->msg);
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
    int host = g->want_host || !g->in_backend;
    int settled = g->failed ||
                  (!g->busy && g->pending == 0 && !g->free_run && g->n_strokes == 0 &&
                   !g->restart && !g->dirty && g->serial > 0 &&
                   g->buf[g->front].f.host == host &&
                   (host || g->want_serial == g->shown_want_serial) &&
                   (!g->probe_active ||
                    (g->probe.active && g->probe.x == g->probe_x && g->probe.y == g->probe_y)));
    pthread_mutex_unlock(&g->mu);
    return settled;
}
