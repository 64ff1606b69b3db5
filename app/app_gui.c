/* app_gui.c - `horizon gui`: the command line of the live viewer (render_gui.h), or, when this
 * horizon was built without SDL2, a message saying how to get it. */
#include <stdio.h>

#include "app.h"

#ifndef HORIZON_HAVE_SDL2
int app_gui_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "horizon gui: this horizon was built without SDL2; install libsdl2-dev and "
            "rebuild to get the viewer (headless runs: horizon run)\n");
    return APP_EXIT_USAGE;
}
#else
#include <stdlib.h>
#include <string.h>

#include "render_gui.h"

static const char gui_usage[] =
    "usage: horizon gui [SCENARIO.ini | MODEL] [options]\n"
    "\n"
    "Opens a window that shows the simulation live: the field through the colormap with the\n"
    "agents on top. Press H in the window for every key. MODEL is the name of a scenario in\n"
    "the library (see horizon models). Without either, the built-in default scenario runs.\n"
    "\n"
    "options:\n"
    "  --set SECTION.KEY=VALUE  override any scenario key (repeatable)\n"
    "  --seed N                 random seed (run.seed)\n"
    "  --backend auto|cpu|cuda  simulation engine (default auto: CUDA when a GPU is usable)\n"
    "  --threads N              CPU threads (default: all cores but one, left to the window)\n"
    "  --out DIR                where the session, S (snapshots) and E (recordings) write\n"
    "                           (output.dir)\n"
    "  --colormap NAME          viridis|magma|inferno|gray (output.colormap)\n"
    "  --size WxH               window size in pixels (default 1280x800)\n"
    "  --paused                 start paused\n"
    "  --steps-per-frame N      1 .. 1024 steps drawn per frame, or 0 for max (default max)\n"
    "  --no-session             do not record the session (by default DIR/session_NNN/ gets\n"
    "                           stats.csv, events.csv and scenario.ini: replay it with\n"
    "                           horizon run DIR/session_NNN/scenario.ini --events\n"
    "                           DIR/session_NNN/events.csv)\n"
    "  --script FILE            run the commands of FILE (step N, key K, click X Y, snapshot\n"
    "                           F.png, quit, ...; see the README) and quit: deterministic, for\n"
    "                           tests; the view stays at --size whatever the window\n"
    "  --bench-frames N         draw N frames as fast as possible, print frames/s and quit\n"
    "  -h, --help               this help\n";

/* Options that are scenario keys under another name. */
static const app_shortcut shortcuts[] = {
    {"--seed", "run.seed"},
    {"--out", "output.dir"},
    {"--colormap", "output.colormap"},
};

int app_gui_main(int argc, char **argv)
{
    const char *scenario = NULL, *backend = "auto";
    render_gui_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.steps_per_frame = 0;
    int64_t threads = 0;
    char **sets = calloc((size_t)argc + 1, sizeof *sets);
    char **owned = calloc((size_t)argc + 1, sizeof *owned);
    int n_sets = 0, n_owned = 0, bad = 0, rc = APP_EXIT_USAGE;
    if (!sets || !owned) {
        fprintf(stderr, "horizon: out of memory\n");
        free(sets);
        free(owned);
        return APP_EXIT_NOMEM;
    }
    for (int i = 1; i < argc && !bad; i++) {
        const char *v = NULL, *a = argv[i];
        char *assign = NULL;
        int64_t n = 0;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(gui_usage, stdout);
            rc = APP_EXIT_OK;
            goto done;
        } else if (app_opt(argc, argv, &i, "--set", &v, &bad)) {
            if (!bad)
                sets[n_sets++] = (char *)v;
        } else if (app_opt(argc, argv, &i, "--backend", &v, &bad)) {
            backend = v;
        } else if (app_opt(argc, argv, &i, "--threads", &v, &bad)) {
            if (!bad && !app_parse_i64("--threads", v, 0, 4096, &threads))
                bad = 1;
        } else if (app_opt(argc, argv, &i, "--size", &v, &bad)) {
            char tail;
            if (!bad && (sscanf(v, "%dx%d%c", &cfg.width, &cfg.height, &tail) != 2 ||
                         cfg.width < 1 || cfg.height < 1 || cfg.width > 16384 ||
                         cfg.height > 16384)) {
                fprintf(stderr, "horizon: --size: '%s' is not WxH with sides in 1 .. 16384\n", v);
                bad = 1;
            }
        } else if (app_opt(argc, argv, &i, "--steps-per-frame", &v, &bad)) {
            if (!bad && !app_parse_i64("--steps-per-frame", v, 0, 1024, &n))
                bad = 1;
            cfg.steps_per_frame = (int)n;
        } else if (app_opt(argc, argv, &i, "--script", &v, &bad)) {
            cfg.script = v;
        } else if (app_opt(argc, argv, &i, "--bench-frames", &v, &bad)) {
            if (!bad && !app_parse_i64("--bench-frames", v, 1, 100000000, &cfg.bench_frames))
                bad = 1;
        } else if (strcmp(a, "--paused") == 0) {
            cfg.paused = 1;
        } else if (strcmp(a, "--no-session") == 0) {
            cfg.no_session = 1;
        } else if (app_opt_shortcut(argc, argv, &i, shortcuts,
                                     sizeof shortcuts / sizeof shortcuts[0], &assign, &bad)) {
            if (assign)
                owned[n_owned++] = sets[n_sets++] = assign;
        } else if (a[0] == '-') {
            fprintf(stderr, "horizon gui: unknown option '%s' (see horizon gui --help)\n", a);
            bad = 1;
        } else if (!scenario) {
            scenario = a;
        } else {
            fprintf(stderr, "horizon gui: more than one scenario given ('%s' and '%s')\n",
                    scenario, a);
            bad = 1;
        }
    }
    if (bad)
        goto done;
    sim_scenario sc;
    int st = app_load_scenario(scenario, sets, n_sets, &sc);
    if (st != SIM_OK) {
        rc = app_exit_code(st == SIM_EIO ? SIM_EINVAL : st);
        goto done;
    }
    const sim_backend_ops *ops;
    if ((st = app_pick_backend(backend, &ops, 0)) != SIM_OK) {
        rc = app_exit_code(st);
        goto done;
    }
    cfg.sc = &sc;
    cfg.ops = ops;
    /* One core stays with the window so that drawing keeps pace while the simulation runs;
     * results do not depend on the thread count. */
    int cores = app_threads(0);
    cfg.threads = threads > 0 ? (int)threads : (cores > 1 ? cores - 1 : 1);
    cfg.title = scenario ? scenario : "default.ini (built-in)";
    sim_err err = {{0}};
    st = render_gui_run(&cfg, &err);
    if (st != SIM_OK) {
        fprintf(stderr, "horizon gui: %s\n", err.msg);
        /* No display is a failure to run, not a usage error. */
        rc = st == SIM_EIO ? APP_EXIT_FAIL : app_exit_code(st);
    } else {
        rc = APP_EXIT_OK;
    }
done:
    for (int i = 0; i < n_owned; i++)
        free(owned[i]);
    free(owned);
    free(sets);
    return rc;
}
#endif
