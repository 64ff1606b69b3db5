/* app_bench_batch.c - the batched-steps section of `horizon bench` (CUDA): steps/s of small
 * worlds with a host wait after every step (sim_step, the baseline) against batches of
 * BATCH steps (sim_step_batch) by default (the one-block kernel in tiny worlds), by graphs of
 * one step and by graphs of runs of steps, and in batches of RUN_BATCH steps as `horizon run`
 * makes them; the cost of statistics every step in batches of both lengths, on the default and
 * the large scenario; each with the target of issue 11 (judged on the runs' batches) and
 * met/missed;
 * 128^2, 256^2 and 1024^2 for where the resident kernel stops paying. Every figure is the
 * median of repeats that interleave the variants (each on an instance of its own), in this
 * process, so that they see the same GPU clocks and neighbours. */
#include <stdlib.h>
#include <string.h>

#include "app.h"
#ifdef HORIZON_HAVE_CUDA
#include "gpu_backend.h"
#endif

/* Steps a batch in this section, and in `horizon run`'s batches once they have grown (app_batch.h:
 * up to SIM_STEP_BATCH_MAX, ~50 ms). Each batch ends with a wait for its results. */
enum { BATCH = 64, RUN_BATCH = SIM_STEP_BATCH_MAX };

/* The variants timed on each world: sim_step; batches with the default tuning (the resident
 * kernel in small worlds, else one step a graph), without and with statistics; batches by
 * graphs of one step (the resident kernel off), and batches whose runs of 8 steps are one
 * graph each (gpu_tuning.steps_per_graph = 8, resident off), each on an instance of its own;
 * and the default tuning in RUN_BATCH batches, without and with statistics. */
enum { PER_STEP, BATCHED, BATCHED_STATS, BATCHED_RUNS, BATCHED_GRAPHS, LONG, LONG_STATS,
       VARIANTS };

/* The instance a variant runs on (measure's s[]). */
static int instance_of(int variant)
{
    return variant == BATCHED_RUNS ? 1 : variant == BATCHED_GRAPHS ? 2 : 0;
}
enum { RUN_STEPS = 8 };

typedef struct bench_world {
    const char *name;
    sim_scenario sc;
    int steps;           /* steps a timed repeat */
    int variants;        /* which are timed: bit v for variant v */
    double target;       /* batched steps/s to reach (0: none) */
    double rate[VARIANTS]; /* medians, steps/s */
} bench_world;

/* `steps` steps of one variant (BATCHED_RUNS and BATCHED_GRAPHS are BATCHED on other
 * instances); the rate in steps/s. */
static int time_variant(sim *s, int variant, int steps, double *rate)
{
    static uint8_t all[RUN_BATCH];
    static sim_stats out[RUN_BATCH];
    memset(all, 1, sizeof all);
    const int batch = variant == LONG || variant == LONG_STATS ? RUN_BATCH : BATCH;
    const int stats = variant == BATCHED_STATS || variant == LONG_STATS;
    double t0 = app_now();
    for (int done = 0; done < steps;) {
        int rc;
        if (variant == PER_STEP) {
            rc = sim_step(s, 0, out);
            done++;
        } else {
            int n = steps - done < batch ? steps - done : batch;
            rc = sim_step_batch(s, n, stats ? all : NULL, out);
            done += n;
        }
        if (rc != SIM_OK)
            return rc;
    }
    double t = app_now() - t0;
    *rate = t > 0 ? steps / t : 0.0;
    return SIM_OK;
}

/* An instance for variant v of world w (instance_of: the default tuning, runs of RUN_STEPS
 * steps a graph, or one step a graph, both without the resident kernel). */
static int make_instance(const sim_backend_ops *ops, const bench_world *w, int v, sim **out,
                         sim_err *err)
{
    int rc = sim_create(&w->sc, ops, 0, out, err);
    const int inst = instance_of(v);
#ifdef HORIZON_HAVE_CUDA
    if (rc == SIM_OK && strcmp(ops->name, "cuda") == 0 && inst != 0) {
        gpu_tuning runs = {0, 0, 0, RUN_STEPS, GPU_RES_OFF}, graphs = {0, 0, 0, 0, GPU_RES_OFF};
        rc = gpu_tune(*out, inst == 1 ? &runs : &graphs, err);
    }
#else
    (void)inst; /* a build without CUDA has no tuning: every variant runs as created */
#endif
    return rc;
}

/* Medians of `reps` interleaved repeats of w's variants. Every repeat of every variant starts
 * from the scenario's initial state on an instance of its own, runs a warm-up that captures
 * every graph it uses, then is timed: all of them time the same steps of the same world (a
 * world's rate changes as its agents gather: the default scenario's step is ~15% longer after
 * 100,000 steps, gpu/BENCH.md round 9). */
static int measure(const sim_backend_ops *ops, bench_world *w, int reps, sim_err *err)
{
    double t[VARIANTS][16];
    int rc = SIM_OK;
    for (int r = 0; r < reps && rc == SIM_OK; r++)
        for (int v = 0; v < VARIANTS && rc == SIM_OK; v++) {
            if (!(w->variants & (1 << v)))
                continue;
            sim *s = NULL;
            double warm = 0.0;
            rc = make_instance(ops, w, v, &s, err);
            if (rc == SIM_OK)
                rc = time_variant(s, v, 2 * RUN_BATCH + 2, &warm); /* both parities */
            if (rc == SIM_OK)
                rc = time_variant(s, v, w->steps, &t[v][r]);
            if (rc != SIM_OK && s)
                sim_err_set(err, rc, "%s: %s", w->name, sim_errmsg(s));
            sim_destroy(s);
        }
    if (rc == SIM_OK)
        for (int v = 0; v < VARIANTS; v++)
            if (w->variants & (1 << v))
                w->rate[v] = app_bench_median(t[v], reps);
    return rc;
}

/* The same steps through sim_step and through batches of BATCH on two instances, first with
 * statistics every step, then without (the resident kernel in small worlds): every row equal
 * (moved, checksum, sums), and the checksums of the two states at the end. */
static int rows_equal(const sim_backend_ops *ops, const sim_scenario *sc, int *equal,
                      sim_err *err)
{
    sim *a = NULL, *b = NULL;
    int rc = sim_create(sc, ops, 0, &a, err);
    if (rc == SIM_OK)
        rc = sim_create(sc, ops, 0, &b, err);
    static uint8_t all[BATCH];
    sim_stats out[BATCH], one;
    memset(all, 1, sizeof all);
    *equal = 1;
    for (int batch = 0; batch < 6 && rc == SIM_OK; batch++) {
        const int stats = batch < 3;
        if ((rc = sim_step_batch(b, BATCH, stats ? all : NULL, out)) != SIM_OK) {
            sim_err_set(err, rc, "%s", sim_errmsg(b));
            break;
        }
        for (int k = 0; k < BATCH && rc == SIM_OK; k++) {
            if ((rc = sim_step(a, stats, &one)) != SIM_OK)
                sim_err_set(err, rc, "%s", sim_errmsg(a));
            else if (memcmp(&one, &out[k], sizeof one) != 0)
                *equal = 0;
        }
    }
    uint64_t ca = 0, cb = 1;
    if (rc == SIM_OK && (rc = sim_checksum(a, &ca)) != SIM_OK)
        sim_err_set(err, rc, "%s", sim_errmsg(a));
    if (rc == SIM_OK && (rc = sim_checksum(b, &cb)) != SIM_OK)
        sim_err_set(err, rc, "%s", sim_errmsg(b));
    if (ca != cb)
        *equal = 0;
    sim_destroy(a);
    sim_destroy(b);
    return rc;
}

static int set_all(sim_scenario *sc, const char *const *kv, sim_err *err)
{
    sim_scenario_defaults(sc);
    int rc = sim_scenario_parse_string(sc, sim_scenario_builtin_text(), "default.ini", err);
    for (; rc == SIM_OK && *kv; kv++)
        rc = sim_scenario_set(sc, *kv, err);
    return rc;
}

int app_bench_batch(FILE *json, const sim_backend_ops *ops, int quick, sim_err *err)
{
    /* assets/scenarios/large.ini (at 2048^2 with the same density in quick mode) */
    static const char *const large_keys[] = {
        "world.boundary=periodic", "field.diffusion=0.5", "field.sweeps=2", "field.decay=0.01",
        "field.init_noise=1", "agents.radius=8", "agents.deposit=1", "agents.noise=0.05",
        "run.seed=7", "world.width=4096", "world.height=4096", "agents.count=1048576", NULL};
    static const char *const large_quick[] = {
        "world.boundary=periodic", "field.diffusion=0.5", "field.sweeps=2", "field.decay=0.01",
        "field.init_noise=1", "agents.radius=8", "agents.deposit=1", "agents.noise=0.05",
        "run.seed=7", "world.width=2048", "world.height=2048", "agents.count=262144", NULL};
    static const char *const small_keys[] = {"world.width=64", "world.height=64",
                                             "agents.count=-1", "agents.density=0.1", NULL};
    static const char *const none[] = {NULL};
    static const char *const mid_keys[] = {"world.width=1024", "world.height=1024",
                                           "agents.count=-1", "agents.density=0.1", NULL};
    static const char *const k128[] = {"world.width=128", "world.height=128", "agents.count=-1",
                                       "agents.density=0.1", NULL};
    static const char *const k256[] = {"world.width=256", "world.height=256", "agents.count=-1",
                                       "agents.density=0.1", NULL};
    const int all = (1 << PER_STEP) | (1 << BATCHED) | (1 << BATCHED_STATS) |
                    (1 << BATCHED_RUNS) | (1 << BATCHED_GRAPHS) | (1 << LONG) |
                    (1 << LONG_STATS);
    const int two = (1 << BATCHED) | (1 << BATCHED_STATS) | (1 << LONG) | (1 << LONG_STATS);
    const int pair = (1 << BATCHED) | (1 << BATCHED_GRAPHS);
    enum { NW = 6 };
    bench_world w[NW] = {
        {"default 512x512", {0}, quick ? 1024 : 8192, all, 50000.0, {0}},
        {"64x64, density 0.1", {0}, quick ? 1024 : 8192, all, 80000.0, {0}},
        {quick ? "large at 2048x2048" : "large 4096x4096", {0}, quick ? 128 : 1024, two, 0.0,
         {0}},
        {"1024x1024, density 0.1", {0}, quick ? 512 : 2048, pair, 0.0, {0}},
        {"128x128, density 0.1", {0}, quick ? 1024 : 8192, pair, 0.0, {0}},
        {"256x256, density 0.1", {0}, quick ? 1024 : 8192, pair, 0.0, {0}},
    };
    int rc = set_all(&w[0].sc, none, err);
    if (rc == SIM_OK)
        rc = set_all(&w[1].sc, small_keys, err);
    if (rc == SIM_OK)
        rc = set_all(&w[2].sc, quick ? large_quick : large_keys, err);
    if (rc == SIM_OK)
        rc = set_all(&w[3].sc, mid_keys, err);
    if (rc == SIM_OK)
        rc = set_all(&w[4].sc, k128, err);
    if (rc == SIM_OK)
        rc = set_all(&w[5].sc, k256, err);
    const int reps = quick ? 3 : 7;
    int equal[2] = {0, 0};
    for (int i = 0; i < NW && rc == SIM_OK; i++)
        rc = measure(ops, &w[i], reps, err);
    for (int i = 0; i < 2 && rc == SIM_OK; i++)
        rc = rows_equal(ops, &w[i].sc, &equal[i], err);
    if (rc != SIM_OK)
        return rc;

    printf("\ngpu batched steps: sim_step (a host wait every step) vs sim_step_batch (%d steps a "
           "batch, one wait), no statistics: by default (the one-block kernel in tiny worlds), "
           "by graphs of one step and of runs of %d steps; median of %d interleaved "
           "repeats\n", BATCH, RUN_STEPS, reps);
    printf("  %-22s %8s %12s %12s %9s %7s %10s  %-26s %10s %10s\n", "world", "agents",
           "per step/s", "batched/s", "speed-up", "equal", "run bat./s", "target (run batches)",
           "graphs/s", "runs of 8/s");
    int failed = 0;
    for (int i = 0; i < 2; i++) {
        double per = w[i].rate[PER_STEP], bat = w[i].rate[BATCHED], run = w[i].rate[LONG];
        char target[64];
        snprintf(target, sizeof target, ">= %.0f steps/s: %s", w[i].target,
                 run >= w[i].target ? "met" : "MISSED");
        printf("  %-22s %8lld %12.0f %12.0f %8.2fx %7s %10.0f  %-26s %10.0f %10.0f\n", w[i].name,
               (long long)sim_scenario_agent_count(&w[i].sc), per, bat, bat / per,
               equal[i] ? "yes" : "NO", run, target, w[i].rate[BATCHED_GRAPHS],
               w[i].rate[BATCHED_RUNS]);
        failed += !equal[i];
    }
    printf("  (batched: %d steps a batch; run batches: %d, as `horizon run` makes them)\n", BATCH,
           RUN_BATCH);
    for (int i = 3; i < NW; i++)
        printf("  %-22s %8lld %12s %12.0f %9s %7s  %-26s %10.0f\n", w[i].name,
               (long long)sim_scenario_agent_count(&w[i].sc), "", w[i].rate[BATCHED], "", "", "",
               w[i].rate[BATCHED_GRAPHS]);
    printf("  statistics every step, in batches of %d and of %d (the runs'; the target):\n",
           BATCH, RUN_BATCH);
    printf("  %-22s %8s %12s %12s %9s %12s %12s %9s  %s\n", "world", "agents", "without/s",
           "with/s", "cost", "run without", "run with", "cost", "target");
    /* the target's two scenarios, then 64^2 (no target: its steps with statistics run in the
     * one-block kernel too) */
    const int stats_rows[3] = {0, 2, 1};
    for (int j = 0; j < 3; j++) {
        const bench_world *x = &w[stats_rows[j]];
        double cost = 1.0 - x->rate[BATCHED_STATS] / x->rate[BATCHED];
        double run_cost = 1.0 - x->rate[LONG_STATS] / x->rate[LONG];
        printf("  %-22s %8lld %12.0f %12.0f %8.1f%% %12.0f %12.0f %8.1f%%  %s%s\n", x->name,
               (long long)sim_scenario_agent_count(&x->sc), x->rate[BATCHED],
               x->rate[BATCHED_STATS], 100.0 * cost, x->rate[LONG], x->rate[LONG_STATS],
               100.0 * run_cost, j < 2 ? "<= 10% slower: " : "(no target)",
               j < 2 ? (run_cost <= 0.10 ? "met" : "MISSED") : "");
    }
    if (json) {
        fprintf(json, ",\n  \"gpu_batch\": {\"batch\": %d, \"repeats\": %d, \"worlds\": [", BATCH,
                reps);
        for (int i = 0; i < NW; i++) {
            const bench_world *x = &w[i];
            fprintf(json, "%s{\"name\": \"%s\", \"width\": %d, \"height\": %d, \"agents\": %lld, ",
                    i ? ", " : "", x->name, x->sc.width, x->sc.height,
                    (long long)sim_scenario_agent_count(&x->sc));
            if (x->variants & (1 << PER_STEP))
                fprintf(json, "\"per_step_steps_per_s\": %.1f, \"runs_of_%d_steps_per_s\": "
                        "%.1f, \"target_batched\": %.0f, \"rows_equal\": %s, ",
                        x->rate[PER_STEP], RUN_STEPS, x->rate[BATCHED_RUNS], x->target,
                        equal[i] ? "true" : "false");
            if (x->variants & (1 << BATCHED_GRAPHS))
                fprintf(json, "\"graphs_steps_per_s\": %.1f, ", x->rate[BATCHED_GRAPHS]);
            fprintf(json, "\"batched_steps_per_s\": %.1f", x->rate[BATCHED]);
            if (x->variants & (1 << BATCHED_STATS))
                fprintf(json, ", \"batched_stats_steps_per_s\": %.1f, \"stats_cost\": %.4f",
                        x->rate[BATCHED_STATS], 1.0 - x->rate[BATCHED_STATS] / x->rate[BATCHED]);
            if (x->variants & (1 << LONG))
                fprintf(json, ", \"run_batch\": %d, \"run_batched_steps_per_s\": %.1f, "
                        "\"run_batched_stats_steps_per_s\": %.1f, \"run_stats_cost\": %.4f",
                        RUN_BATCH, x->rate[LONG], x->rate[LONG_STATS],
                        1.0 - x->rate[LONG_STATS] / x->rate[LONG]);
            fprintf(json, "}");
        }
        fprintf(json, "]}");
    }
    if (failed)
        return sim_err_set(err, SIM_EINVAL, "bench: batched rows differ from per-step rows");
    return SIM_OK;
}
