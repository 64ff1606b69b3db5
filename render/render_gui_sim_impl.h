/* render_gui_sim_impl.h - the state of the viewer's simulation link, shared by its two halves:
 * render_gui_sim.c (the calls the window makes: create, destroy, requests, reads) and
 * render_gui_sim_thread.c (the thread that owns the sim object and acts on the requests).
 * Internal to those two files. */
#ifndef RENDER_GUI_SIM_IMPL_H
#define RENDER_GUI_SIM_IMPL_H

#include <pthread.h>

#include "render_gui_layer.h"
#include "render_gui_sim.h"

#define PAINT_QUEUE 64
#define PUBLISH_PERIOD (1.0 / 60.0) /* s between publishes while steps keep coming */
#define RATE_WINDOW 0.5             /* s over which steps/s is measured */

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
    const sim_backend_ops *ops;
    int threads;
    int in_backend; /* sim_compose_in_backend: the same for every rebuild (same table) */

    /* The thread's own. */
    sim_scenario sc;      /* the scenario in force (parameters and seed follow changes) */
    sim *s;
    render_gui_session *session;
    render_gui_layer *layer;
    uint32_t *agents;     /* sim_agent_count() cells */
    uint32_t *before;     /* the agents before the latest step (moved colouring) */
    int have_before;
    int64_t before_n;     /* agents in `before` */
    int64_t agents_cap;   /* room in agents and before */
    float fmax;           /* the field's max after the latest step (its stats) */
    int fmax_valid;       /* 0 after a paint, a restart or a parameter change until a step */
    double last_publish;
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
    int params_pending;
    sim_scenario params;
    int probe_active, probe_x, probe_y;
    int64_t selected;
    int select_at_probe; /* select whoever stands on the probed cell once it is read */
    uint32_t trail[RENDER_GUI_TRAIL];
    int trail_head, trail_n;
    int sel_x, sel_y;
    sim_view want_view;
    int want_mode;
    uint64_t want_serial, shown_want_serial;
    int dirty;            /* the state changed since the last publish */
    int64_t step, n_agents;
    uint64_t gen, serial;
    int failed;
    char msg[1024];
    char note[1024];
    char session_dir[SIM_PATH_MAX + 32];
    double steps_per_s;
    buffer buf[2];
    int front;
    render_gui_probe probe;
    render_gui_plot hist;
    uint64_t hist_serial;
};

/* The thread's body (render_gui_sim_thread.c): builds the sim, then serves requests until
 * g->quit. */
void *render_gui_sim_thread(void *arg);

/* The frame kind the window's wishes call for (lock held): 1 host, 0 image. */
int render_gui_sim_want_host(const render_gui_sim *g);

#endif
