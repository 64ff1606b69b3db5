/* app_bench.c - `horizon bench`: medians of repeated, warmed-up measurements in one process.
 * CPU sections: horizon sums by prefix rows vs brute force, and whole steps of the default
 * scenario per thread count. The CUDA sections come from gpu_bench_run (gpu/). */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "sim_horizon.h"
#include "sim_rules.h"
#ifdef HORIZON_HAVE_CUDA
#include "app_bench_gpu.h"
#include "gpu_backend.h"
#endif

static const char bench_usage[] =
    "usage: horizon bench [options]\n"
    "\n"
    "Measures, in one process, medians of repeated runs after a warm-up, prints a table and\n"
    "optionally writes JSON.\n"
    "  cpu: horizon sums (prefix rows vs brute force) at r = 2, 8, 32 on a SIZE^2 field,\n"
    "       steps/s of the default scenario with 1, 2 and all threads, and the CPU targets:\n"
    "       one thread at 64^2, 512^2, 2048^2 (r = 8) and 512^2 r = 32, and 2048^2 on all\n"
    "       cores against one, each with its target and met/missed (the ratios to the NumPy\n"
    "       peer: tests/peers/compare.py);\n"
    "  cuda: copy bandwidth, Jacobi, the tile-sum horizon kernel vs baselines, full steps,\n"
    "        the Laplace exercise, tile mappings, the model engine vs the CPU's, batched steps\n"
    "        of small worlds, sweeps, what output costs a run (when built with CUDA and a GPU\n"
    "        is present).\n"
    "\n"
    "options:\n"
    "  --backend auto|cpu|cuda  which sections (default auto: cpu, and cuda when usable)\n"
    "  --size N                 field side for the horizon sections (default 4096)\n"
    "  --quick                  fewer repeats and samples (a smoke test)\n"
    "  --json FILE              also write the results as JSON\n"
    "  --models-only            only the models section (CUDA): the CUDA model engine vs the CPU\n"
    "                           model engine on wolf-sheep-grass (1M agents at 4096^2), and a\n"
    "                           two-species two-field step vs the single-species fast path\n"
    "  --batch-only             only the batched-steps section (CUDA): per-step vs batched\n"
    "                           steps/s of small worlds, the cost of statistics every step\n"
    "  --sweep-only             only the sweep section: N runs of the default scenario through\n"
    "                           horizon sweep vs one after another vs separate processes\n"
    "  --output-only            only the output section: what statistics every step, a frame\n"
    "                           every 100 steps, a field dump and a checkpoint every K steps\n"
    "                           cost a `horizon run` (the large scenario on CUDA, the default\n"
    "                           one on the CPU), with their targets\n"
    "  --sweep-runs N           runs in the sweep section (default 256 on CUDA, 64 on the CPU)\n"
    "  --sweep-steps N          steps of each of those runs (default 500)\n"
    "  -h, --help               this help\n";

/* Horizon sums on the CPU: `samples` agents at distinct random cells of a size^2 field with
 * random values, 9 candidates each, periodic. Prefix path = building the prefix rows + sums. */
static int bench_horizon(FILE *json, int size, int quick)
{
    int64_t cells = (int64_t)size * size;
    int samples = quick ? 2000 : 20000, reps = quick ? 3 : 5;
    float *field = malloc((size_t)cells * sizeof *field);
    int64_t *prefix = malloc((size_t)(size + 1) * (size_t)size * sizeof *prefix);
    int64_t *fast = malloc((size_t)samples * 9 * sizeof *fast);
    int64_t *slow = malloc((size_t)samples * 9 * sizeof *slow);
    uint32_t *where = malloc((size_t)samples * sizeof *where);
    if (!field || !prefix || !fast || !slow || !where) {
        fprintf(stderr, "horizon bench: out of memory for a %d^2 field\n", size);
        free(field), free(prefix), free(fast), free(slow), free(where);
        return SIM_ENOMEM;
    }
    for (int64_t i = 0; i < cells; i++)
        field[i] = (float)(sim_random(42, (uint64_t)i, 0, SIM_RNG_FIELD).v[0] >> 8) / 65536.0f;
    for (int i = 0; i < samples; i++)
        where[i] = (uint32_t)(sim_random(42, (uint64_t)i, 1, SIM_RNG_PLACE).v[0] % cells);

    printf("\ncpu horizon sums: %d^2 field, %d agents x 9 candidates, %d threads\n", size,
           samples, omp_get_max_threads());
    printf("  %4s %14s %14s %14s %10s %6s\n", "r", "prefix build ms", "prefix sums ms",
           "brute ms", "speed-up", "equal");
    if (json)
        fprintf(json, "  \"cpu_horizon\": {\"size\": %d, \"agents\": %d, \"threads\": %d, "
                "\"radii\": [", size, samples, omp_get_max_threads());
    static const int radii[] = {2, 8, 32};
    for (int ri = 0; ri < 3; ri++) {
        int r = radii[ri];
        sim_disk d;
        sim_disk_init(&d, r);
        double tb[8], tf[8], ts[8];
        for (int rep = 0; rep <= reps; rep++) { /* rep 0 warms up */
            double t0 = app_now();
            sim_horizon_prefix(field, size, size, prefix);
            double t1 = app_now();
#pragma omp parallel for schedule(static)
            for (int i = 0; i < samples; i++)
                sim_horizon_candidates(prefix, size, size, 1, &d, (int)(where[i] % size),
                                       (int)(where[i] / size), fast + 9 * i);
            double t2 = app_now();
#pragma omp parallel for schedule(static)
            for (int i = 0; i < samples; i++)
                for (int c = 0; c < 9; c++)
                    slow[9 * i + c] = sim_horizon_disk_brute(
                        field, size, size, 1, r, ((int)(where[i] % size) + sim_cand_dx(c) + size) % size,
                        ((int)(where[i] / size) + sim_cand_dy(c) + size) % size);
            double t3 = app_now();
            if (rep > 0) {
                tb[rep - 1] = (t1 - t0) * 1e3;
                tf[rep - 1] = (t2 - t1) * 1e3;
                ts[rep - 1] = (t3 - t2) * 1e3;
            }
        }
        int equal = memcmp(fast, slow, (size_t)samples * 9 * sizeof *fast) == 0;
        double mb = app_bench_median(tb, reps), mf = app_bench_median(tf, reps);
        double ms = app_bench_median(ts, reps);
        printf("  %4d %14.3f %14.3f %14.3f %9.1fx %6s\n", r, mb, mf, ms, ms / mf,
               equal ? "yes" : "NO");
        if (json)
            fprintf(json, "%s{\"r\": %d, \"prefix_build_ms\": %.4f, \"prefix_sums_ms\": %.4f, "
                    "\"brute_ms\": %.4f, \"speedup_sums\": %.2f, \"equal\": %s}", ri ? ", " : "",
                    r, mb, mf, ms, ms / mf, equal ? "true" : "false");
        if (!equal) {
            fprintf(stderr, "horizon bench: prefix and brute-force sums differ at r=%d\n", r);
            free(field), free(prefix), free(fast), free(slow), free(where);
            return SIM_EINVAL;
        }
    }
    if (json)
        fprintf(json, "]},\n");
    free(field), free(prefix), free(fast), free(slow), free(where);
    return SIM_OK;
}

/* Steps per second of the built-in default scenario on the CPU backend per thread count. */
static int bench_cpu_steps(FILE *json, int quick)
{
    sim_scenario sc;
    sim_err err;
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_string(&sc, sim_scenario_builtin_text(), "default.ini", &err)) {
        fprintf(stderr, "horizon bench: %s\n", err.msg);
        return SIM_EINVAL;
    }
    int steps = quick ? 20 : 100, reps = quick ? 1 : 3;
    int all = omp_get_num_procs();
    int counts[3] = {1, 2, all};
    int n_counts = all > 2 ? 3 : 2;
    printf("\ncpu steps: default scenario %dx%d, %lld agents, r=%d, %d steps per run, median of "
           "%d\n", sc.width, sc.height, (long long)sim_scenario_agent_count(&sc), sc.radius, steps,
           reps);
    printf("  %8s %12s %10s\n", "threads", "steps/s", "ms/step");
    if (json)
        fprintf(json, "  \"cpu_steps\": {\"scenario\": \"default\", \"steps\": %d, \"runs\": [",
                steps);
    for (int ci = 0; ci < n_counts; ci++) {
        double rate[5];
        for (int rep = 0; rep < reps; rep++) {
            sim *s;
            if (sim_create(&sc, sim_cpu_backend(), counts[ci], &s, &err) != SIM_OK) {
                fprintf(stderr, "horizon bench: %s\n", err.msg);
                return SIM_ENOMEM;
            }
            sim_stats st;
            sim_step(s, 0, &st); /* warm-up */
            double t0 = app_now();
            for (int k = 0; k < steps; k++)
                sim_step(s, 0, &st);
            rate[rep] = steps / (app_now() - t0);
            sim_destroy(s);
        }
        double m = app_bench_median(rate, reps);
        printf("  %8d %12.1f %10.3f\n", counts[ci], m, 1e3 / m);
        if (json)
            fprintf(json, "%s{\"threads\": %d, \"steps_per_second\": %.2f}", ci ? ", " : "",
                    counts[ci], m);
    }
    if (json)
        fprintf(json, "]}");
    return SIM_OK;
}

/* ---- The CPU backend's targets (the "speed" issue, items 1 and 2): one-thread steps/s of the
 * default model (density 0.1, statistics off) at 64^2, 512^2, 2048^2 (r = 8) and 512^2 r = 32,
 * and the thread scaling at 2048^2, each with its target and met/missed. The targets against
 * the NumPy peer are ratios that a C program cannot measure: tests/peers/compare.py runs the
 * peer and prints them; here they show as the rate they ask for on the 2-core development VM,
 * where the peer ran at 27-36, 1.9-2.4 and 26-28 steps/s (512^2, 2048^2, 512^2 r = 32; runs of
 * 2026-11-23, the fastest taken), and read "see compare.py". */

typedef struct cpu_case {
    const char *name;
    int size, radius, threads, steps;
    double target;      /* steps/s to reach, 0: none here */
    const char *goal;   /* the target in words */
} cpu_case;

/* steps/s of `steps` steps (after one step of warm-up) of the default scenario at the case's
 * size, radius and threads, statistics off: the median of reps fresh instances. */
static int time_cpu_case(const cpu_case *c, int reps, double *rate)
{
    sim_scenario sc;
    sim_err err;
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_string(&sc, sim_scenario_builtin_text(), "default.ini", &err)) {
        fprintf(stderr, "horizon bench: %s\n", err.msg);
        return SIM_EINVAL;
    }
    sc.width = sc.height = c->size;
    sc.radius = c->radius;
    double r[8];
    for (int rep = 0; rep < reps; rep++) {
        sim *s;
        if (sim_create(&sc, sim_cpu_backend(), c->threads, &s, &err) != SIM_OK) {
            fprintf(stderr, "horizon bench: %s\n", err.msg);
            return SIM_ENOMEM;
        }
        sim_stats st;
        int rc = sim_step(s, 0, &st); /* warm-up */
        double t0 = app_now();
        for (int k = 0; k < c->steps && rc == SIM_OK; k++)
            rc = sim_step(s, 0, &st);
        double t = app_now() - t0;
        sim_destroy(s);
        if (rc != SIM_OK)
            return rc;
        r[rep] = t > 0 ? c->steps / t : 0.0;
    }
    *rate = app_bench_median(r, reps);
    return SIM_OK;
}

static int bench_cpu_targets(FILE *json, int quick)
{
    const int cores = omp_get_num_procs();
    const int reps = quick ? 1 : 3;
    /* N threads against 1 at 2048^2: the issue asks 12x on 16 cores and 1.8x on 2; other core
     * counts get 0.75 N (12/16). */
    const double scale_target = cores >= 16 ? 12.0 * cores / 16.0 : cores == 2 ? 1.8 : 0.75 * cores;
    cpu_case cases[] = {
        {"64^2 r=8", 64, 8, 1, quick ? 500 : 4000, 20000.0, ">= 20000 steps/s"},
        {"512^2 r=8", 512, 8, 1, quick ? 10 : 100, 0.0, ">= 3x NumPy (VM: 108)"},
        {"2048^2 r=8", 2048, 8, 1, quick ? 2 : 8, 0.0, ">= 3x NumPy (VM: 7.3)"},
        {"512^2 r=32", 512, 32, 1, quick ? 5 : 50, 0.0, ">= 3x NumPy (VM: 84)"},
        {"2048^2 r=8", 2048, 8, cores, quick ? 2 : 8 * (cores < 8 ? cores : 8), 0.0, ""},
    };
    const int n = (int)(sizeof cases / sizeof cases[0]);
    double rate[sizeof cases / sizeof cases[0]];
    const char *wait_key, *wait = app_omp_wait(&wait_key);
    printf("\ncpu targets: default model (density 0.1, 2 sweeps), statistics off, median of %d, "
           "%d cores, %s=%s\n", reps, cores, wait_key, wait ? wait : "(libgomp default)");
    printf("  %-12s %8s %12s %10s  %-24s %s\n", "world", "threads", "steps/s", "ms/step",
           "target", "");
    if (json)
        fprintf(json, ",\n  \"cpu_targets\": {\"cores\": %d, \"runs\": [", cores);
    for (int i = 0; i < n; i++) {
        int rc = time_cpu_case(&cases[i], reps, &rate[i]);
        if (rc != SIM_OK)
            return rc;
        const cpu_case *c = &cases[i];
        const char *status = i == n - 1 ? "" : c->target > 0 ? (rate[i] >= c->target ? "met"
                                                                                     : "missed")
                                                             : "see compare.py";
        printf("  %-12s %8d %12.1f %10.3f  %-24s %s\n", c->name, c->threads, rate[i],
               1e3 / rate[i], c->goal, status);
        if (json)
            fprintf(json, "%s{\"world\": \"%s\", \"threads\": %d, \"steps_per_second\": %.2f}",
                    i ? ", " : "", c->name, c->threads, rate[i]);
    }
    /* cases[2] and cases[n - 1] are the same world on 1 and on every core. */
    double scaling = rate[n - 1] / rate[2];
    int met = cores == 1 ? 1 : scaling >= scale_target;
    printf("  scaling at 2048^2: %d threads %.2fx one thread  target >= %.2fx  %s\n", cores,
           scaling, cores == 1 ? 1.0 : scale_target, met ? "met" : "missed");
    if (json)
        fprintf(json, "], \"scaling_2048\": %.3f, \"scaling_target\": %.2f, \"scaling_met\": %s}",
                scaling, scale_target, met ? "true" : "false");
    return SIM_OK;
}

int app_bench_main(int argc, char **argv)
{
    const char *backend = "auto", *json_path = NULL;
    int quick = 0, bad = 0, sweep_only = 0, batch_only = 0, models_only = 0, output_only = 0;
    int64_t size = 4096, sweep_runs = 0, sweep_steps = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *v;
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(bench_usage, stdout);
            return APP_EXIT_OK;
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--sweep-only") == 0) {
            sweep_only = 1;
        } else if (strcmp(argv[i], "--batch-only") == 0) {
            batch_only = 1;
        } else if (strcmp(argv[i], "--models-only") == 0) {
            models_only = 1;
        } else if (strcmp(argv[i], "--output-only") == 0) {
            output_only = 1;
        } else if (app_opt(argc, argv, &i, "--sweep-steps", &v, &bad)) {
            if (!bad && !app_parse_i64("--sweep-steps", v, 1, 1000000, &sweep_steps))
                bad = 1;
        } else if (app_opt(argc, argv, &i, "--sweep-runs", &v, &bad)) {
            if (!bad && !app_parse_i64("--sweep-runs", v, 1, 100000, &sweep_runs))
                bad = 1;
        } else if (app_opt(argc, argv, &i, "--backend", &v, &bad)) {
            backend = v;
        } else if (app_opt(argc, argv, &i, "--json", &v, &bad)) {
            json_path = v;
        } else if (app_opt(argc, argv, &i, "--size", &v, &bad)) {
            if (!bad && !app_parse_i64("--size", v, 64, 32768, &size))
                bad = 1;
        } else {
            fprintf(stderr, "horizon bench: unknown option '%s' (see horizon bench --help)\n",
                    argv[i]);
            bad = 1;
        }
    }
    if (bad)
        return APP_EXIT_USAGE;
    int want_cpu = strcmp(backend, "cuda") != 0;
    int want_gpu = strcmp(backend, "cpu") != 0;
    if (strcmp(backend, "auto") && strcmp(backend, "cpu") && strcmp(backend, "cuda")) {
        fprintf(stderr, "horizon bench: --backend: unknown backend '%s' (allowed auto|cpu|cuda)\n",
                backend);
        return APP_EXIT_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *json = json_path ? open_memstream(&text, &len) : NULL;
    if (json)
        fprintf(json, "{\n  \"version\": \"%s\",\n", HORIZON_VERSION);
    printf("horizon bench %s%s\n", HORIZON_VERSION, quick ? " (quick)" : "");
    int rc = SIM_OK;
    if (sweep_only) {
        const sim_backend_ops *ops = NULL;
        rc = app_pick_backend(backend, &ops, 1);
        if (json)
            fprintf(json, "  \"backend\": \"%s\"", ops ? ops->name : "none");
        if (rc == SIM_OK)
            rc = app_bench_sweep(json, ops->name, quick, (int)sweep_runs, (int)sweep_steps);
        want_cpu = want_gpu = 0;
    }
    if (models_only && !sweep_only && !batch_only) {
        /* the section alone: `horizon bench --models-only` (CUDA only) */
        const sim_backend_ops *ops = NULL;
        rc = app_pick_backend("cuda", &ops, 1);
#ifdef HORIZON_HAVE_CUDA
        if (rc == SIM_OK) {
            sim_err err;
            rc = gpu_bench_models_run(quick, (int)size, stdout, json, &err);
            if (rc != SIM_OK)
                fprintf(stderr, "horizon bench: %s\n", err.msg);
        }
#endif
        want_cpu = want_gpu = 0;
    }
    if (batch_only && !sweep_only) {
        /* the section alone: `horizon bench --batch-only` (CUDA only) */
        const sim_backend_ops *ops = NULL;
        rc = app_pick_backend("cuda", &ops, 1);
        if (json)
            fprintf(json, "  \"backend\": \"%s\"", ops ? ops->name : "none");
        if (rc == SIM_OK) {
            sim_err err;
            rc = app_bench_batch(json, ops, quick, &err);
            if (rc != SIM_OK)
                fprintf(stderr, "horizon bench: %s\n", err.msg);
        }
        want_cpu = want_gpu = 0;
    }
    if (output_only && !sweep_only && !batch_only && !models_only) {
        /* the section alone: `horizon bench --output-only` (either backend) */
        const sim_backend_ops *ops = NULL;
        rc = app_pick_backend(backend, &ops, 1);
        if (json)
            fprintf(json, "  \"backend\": \"%s\"", ops ? ops->name : "none");
        if (rc == SIM_OK)
            rc = app_bench_output(json, ops->name, quick);
        want_cpu = want_gpu = 0;
    }
    if (want_cpu) {
        rc = bench_horizon(json, (int)(quick && size > 2048 ? 2048 : size), quick);
        if (rc == SIM_OK)
            rc = bench_cpu_steps(json, quick);
        if (rc == SIM_OK)
            rc = bench_cpu_targets(json, quick);
    }
    if (rc == SIM_OK && want_gpu) {
        const sim_backend_ops *ops;
        int pick = app_pick_backend(strcmp(backend, "cuda") == 0 ? "cuda" : "auto", &ops, 1);
        if (pick != SIM_OK) {
            rc = pick;
        } else if (strcmp(ops->name, "cuda") != 0) {
            printf("\ncuda: no usable device; GPU sections skipped\n");
        } else {
#ifdef HORIZON_HAVE_CUDA
            sim_err err;
            if (json && want_cpu)
                fprintf(json, ",\n");
            rc = gpu_bench_run(quick, (int)size, stdout, json, &err);
            if (rc == SIM_OK)
                rc = app_bench_batch(json, ops, quick, &err);
            if (rc != SIM_OK)
                fprintf(stderr, "horizon bench: %s\n", err.msg);
            if (rc == SIM_OK)
                rc = app_bench_sweep(json, "cuda", quick, (int)sweep_runs, (int)sweep_steps);
            if (rc == SIM_OK)
                rc = app_bench_output(json, "cuda", quick);
#endif
        }
    }
    if (json) {
        fprintf(json, "\n}\n");
        fclose(json);
        if (rc == SIM_OK) {
            FILE *f = fopen(json_path, "w");
            if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0) {
                fprintf(stderr, "horizon bench: %s: cannot write\n", json_path);
                rc = SIM_EIO;
            }
        }
        free(text);
    }
    return app_exit_code(rc);
}
