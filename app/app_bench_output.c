/* app_bench_output.c - the output section of `horizon bench`: what statistics every step, a
 * 1024^2 frame every 100 steps, a field dump and a checkpoint every K steps cost a run, each
 * against the same run with no output, with issue 11's targets. Each variant is a `horizon run`
 * process of this binary (so the run's writer threads, encoders and final waits count, as they
 * do for a user), the variants interleaved round after round; medians of the rounds' steps/s
 * from run.json. On CUDA the large scenario (4096^2, 1M agents; 2048^2 quick), on the CPU the
 * default scenario. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"

enum { ROUNDS_MAX = 5 };

typedef struct out_variant {
    const char *name;
    const char *key;   /* the --set of this variant (NULL: none) */
    int every;         /* its period, into the key or --checkpoint-every */
    int checkpoint;    /* --checkpoint-every instead of a key */
    double target;     /* the largest cost allowed (0: no target) */
    double rate[ROUNDS_MAX];
} out_variant;

/* steps_per_second of DIR/run.json, or 0. */
static double run_rate(const char *dir)
{
    char path[1200], text[4096];
    snprintf(path, sizeof path, "%s/run.json", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0.0;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    const char *p = strstr(text, "\"steps_per_second\": ");
    return p ? strtod(p + strlen("\"steps_per_second\": "), NULL) : 0.0;
}

/* One `horizon run FILE` of variant v into DIR; its steps/s in *rate. */
static int run_variant(const char *file, const char *dir, const char *backend,
                       const out_variant *v, double *rate)
{
    char every[32], set[96];
    snprintf(every, sizeof every, "%d", v->every);
    snprintf(set, sizeof set, "%s=%d", v->key ? v->key : "output.stats_every",
             v->key ? v->every : 0);
    char *argv[16];
    int n = 0;
    argv[n++] = NULL; /* this binary (app_bench_run_self) */
    argv[n++] = "run";
    argv[n++] = (char *)file;
    argv[n++] = "--out";
    argv[n++] = (char *)dir;
    argv[n++] = "--force";
    argv[n++] = "--quiet";
    argv[n++] = "--backend";
    argv[n++] = (char *)backend;
    argv[n++] = "--set";
    argv[n++] = set;
    if (v->checkpoint) {
        argv[n++] = "--checkpoint-every";
        argv[n++] = every;
    }
    argv[n] = NULL;
    if (app_bench_run_self(argv) != SIM_OK)
        return SIM_EIO;
    *rate = run_rate(dir);
    return *rate > 0.0 ? SIM_OK : SIM_EIO;
}

int app_bench_output(FILE *json, const char *backend, int quick)
{
    char dir[] = "/tmp/hz_bench_output_XXXXXX";
    if (!mkdtemp(dir))
        return SIM_EIO;
    const int cuda = strcmp(backend, "cuda") == 0;
    const int side = cuda ? (quick ? 2048 : 4096) : 512;
    const long agents = cuda ? (long)side * side / 16 : (long)side * side / 10;
    /* On the CPU long enough that a run's last frame (encoded after its last step, ~25 ms of
     * a core at 1024^2) is not most of the cost: 300 steps took 54 ms on 16 cores. */
    const int steps = cuda ? (quick ? 2000 : 10000) : (quick ? 100 : 2000);
    const int every = cuda ? 500 : 50; /* dumps and checkpoints */
    /* On the CPU 5 rounds: its runs take half a second, and on the 16-core device host two
     * runs of the same variant differed by up to 10% within one call (3 rounds left the
     * statistics' cost of the same binary anywhere from 9% to 17% from call to call). */
    const int rounds = quick ? 1 : cuda ? 3 : 5;
    char file[256], out[300];
    snprintf(file, sizeof file, "%s/scenario.ini", dir);
    snprintf(out, sizeof out, "%s/run", dir);
    FILE *f = fopen(file, "w");
    if (!f) {
        app_bench_remove_tree(dir);
        return SIM_EIO;
    }
    /* The large scenario's model (assets/scenarios/large.ini), at `side`. */
    fprintf(f,
            "[world]\nwidth = %d\nheight = %d\nboundary = periodic\n"
            "[field]\ndiffusion = 0.5\nsweeps = 2\ndecay = 0.01\ninit_noise = 1\n"
            "[agents]\ncount = %ld\nradius = 8\ndeposit = 1\nnoise = 0.05\n"
            "[run]\nseed = 7\nsteps = %d\n"
            "[output]\nstats_every = 0\nframes_every = 0\nframe_width = 1024\n"
            "frame_height = 1024\n",
            side, side, agents, steps);
    if (fclose(f) != 0) {
        app_bench_remove_tree(dir);
        return SIM_EIO;
    }
    out_variant v[] = {
        {"no output", NULL, 0, 0, 0.0, {0}},
        {"statistics every step", "output.stats_every", 1, 0, 0.10, {0}},
        {"a 1024^2 frame every 100 steps", "output.frames_every", 100, 0, 0.05, {0}},
        {"a field dump every K steps", "output.dump_fields_every", every, 0, 0.0, {0}},
        {"a checkpoint every K steps", NULL, every, 1, 0.0, {0}},
    };
    const int nv = (int)(sizeof v / sizeof v[0]);
    int rc = SIM_OK;
    for (int r = 0; r < rounds && rc == SIM_OK; r++)
        for (int i = 0; i < nv && rc == SIM_OK; i++)
            rc = run_variant(file, out, backend, &v[i], &v[i].rate[r]);
    app_bench_remove_tree(dir);
    if (rc != SIM_OK) {
        fprintf(stderr, "horizon bench: output section: a `horizon run` failed\n");
        return rc;
    }
    double med[8];
    for (int i = 0; i < nv; i++)
        med[i] = app_bench_median(v[i].rate, rounds);
    printf("\noutput: what it costs a run, %s backend, %dx%d, %ld agents, %d steps a run "
           "(`horizon run` processes, median of %d interleaved rounds; K = %d)\n",
           backend, side, side, agents, steps, rounds, every);
    printf("  %-34s %12s %9s  %s\n", "output", "steps/s", "cost", "target");
    if (json)
        fprintf(json, ",\n  \"output\": {\"backend\": \"%s\", \"side\": %d, \"steps\": %d, "
                "\"every\": %d, \"variants\": [", backend, side, steps, every);
    for (int i = 0; i < nv; i++) {
        const double cost = i ? 1.0 - med[i] / med[0] : 0.0;
        char target[48] = "";
        if (v[i].target > 0.0)
            snprintf(target, sizeof target, "<= %.0f%% slower: %s", 100.0 * v[i].target,
                     cost <= v[i].target ? "met" : "MISSED");
        char costs[16] = "";
        if (i)
            snprintf(costs, sizeof costs, "%.1f%%", 100.0 * cost);
        printf("  %-34s %12.1f %9s  %s\n", v[i].name, med[i], costs, target);
        if (json)
            fprintf(json, "%s{\"name\": \"%s\", \"steps_per_s\": %.2f, \"cost\": %.4f}",
                    i ? ", " : "", v[i].name, med[i], cost);
    }
    if (json)
        fprintf(json, "]}");
    return SIM_OK;
}
