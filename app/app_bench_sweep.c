/* app_bench_sweep.c - the sweep section of `horizon bench`: one sweep of N runs of the default
 * scenario through `horizon sweep`'s own code (app_sweep_main, in this process), against the
 * same runs one after another in this process (--jobs 1) and against separate `horizon run`
 * processes started one after another (K of them timed, the rest extrapolated: starting a
 * process and a CUDA context is the cost that matters). On the GPU also one GPU against all of
 * them, and the number of runs at once. The rows of every variant must be identical. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#ifdef HORIZON_HAVE_CUDA
#include "gpu_backend.h"
#endif

/* Runs `horizon sweep FILE --out DIR --quiet --backend B EXTRA...` in this process; the wall
 * time in *secs. DIR is removed first. */
static int sweep_once(const char *file, const char *dir, const char *backend, const char *a1,
                      const char *a2, double *secs)
{
    app_bench_remove_tree(dir);
    char *argv[12];
    int n = 0;
    argv[n++] = "sweep";
    argv[n++] = (char *)file;
    argv[n++] = "--out";
    argv[n++] = (char *)dir;
    argv[n++] = "--quiet";
    argv[n++] = "--backend";
    argv[n++] = (char *)backend;
    if (a1)
        argv[n++] = (char *)a1;
    if (a2)
        argv[n++] = (char *)a2;
    argv[n] = NULL;
    double t0 = app_now();
    int code = app_sweep_main(n, argv);
    *secs = app_now() - t0;
    if (code != APP_EXIT_OK) {
        fprintf(stderr, "horizon bench: the sweep exited %d\n", code);
        return SIM_EIO;
    }
    return SIM_OK;
}

/* Whether two finished sweeps wrote the same sweep.csv: a finished sweep rewrites it in run
 * order, so equal rows are equal bytes. */
static int same_rows(const char *a, const char *b)
{
    char pa[1300], pb[1300];
    snprintf(pa, sizeof pa, "%s/sweep.csv", a);
    snprintf(pb, sizeof pb, "%s/sweep.csv", b);
    FILE *fa = fopen(pa, "rb"), *fb = fopen(pb, "rb");
    int same = fa && fb;
    while (same) {
        int x = fgetc(fa), y = fgetc(fb);
        same = x == y;
        if (x == EOF || y == EOF)
            break;
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* k separate `horizon run` processes of the base with seeds 1..k, one after another. */
static int processes(const char *base, const char *dir, const char *backend, int k,
                     double *secs)
{
    double t0 = app_now();
    for (int i = 1; i <= k; i++) {
        char seed[32], out[1200];
        snprintf(seed, sizeof seed, "%d", i);
        snprintf(out, sizeof out, "%s/proc_%d", dir, i);
        char *argv[] = {NULL, "run", (char *)base, "--seed", seed, "--out", out, "--force",
                        "--quiet", "--backend", (char *)backend, NULL};
        if (app_bench_run_self(argv) != SIM_OK)
            return SIM_EIO;
    }
    *secs = app_now() - t0;
    return SIM_OK;
}

int app_bench_sweep(FILE *json, const char *backend, int quick, int runs, int steps_req)
{
    char dir[] = "/tmp/hz_bench_sweep_XXXXXX";
    if (!mkdtemp(dir))
        return SIM_EIO;
    int is_cuda = strcmp(backend, "cuda") == 0;
    /* The default scenario, 500 steps, no output but sweep.csv: runs differ by seed only. */
    int steps = steps_req > 0 ? steps_req : quick ? 100 : 500;
    int width = is_cuda ? 512 : 128;
    if (runs <= 0)
        runs = quick ? 32 : (is_cuda ? 256 : 64);
    char file[256], base[256];
    snprintf(file, sizeof file, "%s/bench.ini", dir);
    snprintf(base, sizeof base, "%s/base.ini", dir);
    FILE *f = fopen(file, "w");
    FILE *g = fopen(base, "w");
    if (!f || !g) {
        if (f)
            fclose(f);
        if (g)
            fclose(g);
        return SIM_EIO;
    }
    const char *common = "[world]\nwidth = %d\nheight = %d\n[run]\nsteps = %d\n"
                         "[output]\nstats_every = 0\nframes_every = 0\n";
    fprintf(f, "[sweep]\nbase = default\nreplicates = %d\n", runs);
    fprintf(f, common, width, width, steps);
    fprintf(g, common, width, width, steps);
    fclose(f);
    fclose(g);
    /* The same runs with 0 steps: what setting a run up and tearing it down costs. */
    char file0[256];
    snprintf(file0, sizeof file0, "%s/setup.ini", dir);
    if ((f = fopen(file0, "w")) == NULL)
        return SIM_EIO;
    fprintf(f, "[sweep]\nbase = default\nreplicates = %d\n", runs);
    fprintf(f, common, width, width, 0);
    fclose(f);

    printf("\nsweep: %d runs of the default scenario at %dx%d, %d steps each, %s backend\n",
           runs, width, width, steps, backend);
    double t_pool = 0, t_seq = 0, t_proc = 0;
    char a_dir[1200], b_dir[1200];
    snprintf(a_dir, sizeof a_dir, "%s/a", dir);
    snprintf(b_dir, sizeof b_dir, "%s/b", dir);
    int rc;
    /* Every device's context is made before anything is timed. */
    double warm;
    rc = sweep_once(file0, a_dir, backend, NULL, NULL, &warm);
    /* Runs at once: the default, and on the GPU a scan to show why it is the default. */
    static const int scan[] = {4, 8, 16, 32, 64};
    int best_jobs = 0;
    double best = 0;
    if (is_cuda && !quick) {
        printf("  %-34s %10s %12s\n", "runs at once (one GPU)", "wall s", "steps/s");
        for (size_t i = 0; rc == SIM_OK && i < sizeof scan / sizeof scan[0]; i++) {
            char jobs[32];
            double t;
            snprintf(jobs, sizeof jobs, "--jobs=%d", scan[i]);
            rc = sweep_once(file, a_dir, backend, jobs, "--gpus=0", &t);
            printf("  %-34d %10.3f %12.0f\n", scan[i], t, (double)runs * steps / t);
            if (best_jobs == 0 || t < best) {
                best = t;
                best_jobs = scan[i];
            }
        }
    }
    double t_one = 0;
    int ngpus = 1;
#ifdef HORIZON_HAVE_CUDA
    if (is_cuda)
        ngpus = gpu_probe(NULL, 0);
#endif
    if (rc == SIM_OK && is_cuda && ngpus > 1)
        rc = sweep_once(file, b_dir, backend, "--gpus=0", NULL, &t_one);
    if (rc == SIM_OK)
        rc = sweep_once(file, a_dir, backend, NULL, NULL, &t_pool);
    if (rc == SIM_OK)
        rc = sweep_once(file, b_dir, backend, "--jobs=1", NULL, &t_seq);
    int equal = rc == SIM_OK && same_rows(a_dir, b_dir);
    double t_setup = 0, t_setup_one = 0;
    if (rc == SIM_OK)
        rc = sweep_once(file0, b_dir, backend, NULL, NULL, &t_setup);
    if (rc == SIM_OK && is_cuda && ngpus > 1)
        rc = sweep_once(file0, b_dir, backend, "--gpus=0", NULL, &t_setup_one);
    int k = quick ? 2 : 8;
    if (rc == SIM_OK)
        rc = processes(base, dir, backend, k, &t_proc);
    double t_proc_all = t_proc * runs / k;
    double steps_all = (double)runs * steps;
    if (rc == SIM_OK) {
        printf("  %-34s %10s %12s %9s %8s\n", "", "wall s", "steps/s", "ratio", "target");
        printf("  %-34s %10.3f %12.0f\n", "horizon sweep (defaults)", t_pool, steps_all / t_pool);
        printf("  %-34s %10.3f %12.0f %8.1fx %8s %s\n", "one run after another (--jobs 1)",
               t_seq, steps_all / t_seq, t_seq / t_pool, is_cuda ? ">= 4x" : "",
               is_cuda ? (t_seq / t_pool >= 4 ? "met" : "missed") : "");
        printf("  %-34s %10.3f %12.0f %8.1fx %8s %s\n", "horizon run processes (est.)",
               t_proc_all, steps_all / t_proc_all, t_proc_all / t_pool, is_cuda ? ">= 10x" : "",
               is_cuda ? (t_proc_all / t_pool >= 10 ? "met" : "missed") : "");
        printf("  (%d processes timed: %.3f s, %.3f s each, scaled to %d)\n", k, t_proc,
               t_proc / k, runs);
        if (t_one > 0)
            printf("  %-34s %10.3f %12.0f %8.1fx %8s %s\n", "one GPU of the machine", t_one,
                   steps_all / t_one, t_one / t_pool, ">= 1.8x",
                   t_one / t_pool >= 1.8 ? "met" : "missed");
        printf("  %-34s %10.3f %12s   (%.3f ms a run)\n", "setup only (0 steps), defaults",
               t_setup, "", 1e3 * t_setup / runs);
        if (t_setup_one > 0)
            printf("  %-34s %10.3f %12s   (%.3f ms a run)\n", "setup only (0 steps), one GPU",
                   t_setup_one, "", 1e3 * t_setup_one / runs);
        printf("  rows identical (sweep vs --jobs 1): %s\n", equal ? "yes" : "NO");
        if (best_jobs)
            printf("  fastest runs at once on one GPU: %d\n", best_jobs);
    }
    if (json && rc == SIM_OK)
        fprintf(json, ",\n  \"sweep\": {\"backend\": \"%s\", \"runs\": %d, \"steps\": %d, "
                "\"size\": %d, \"sweep_s\": %.4f, \"sequential_s\": %.4f, \"processes_s_est\": "
                "%.4f, \"processes_timed\": %d, \"one_gpu_s\": %.4f, \"gpus\": %d, "
                "\"rows_equal\": %s, \"best_jobs_one_gpu\": %d, \"setup_s\": %.4f, "
                "\"setup_one_gpu_s\": %.4f}", backend, runs, steps, width,
                t_pool, t_seq, t_proc_all, k, t_one, ngpus, equal ? "true" : "false",
                best_jobs, t_setup, t_setup_one);
    app_bench_remove_tree(dir);
    if (rc == SIM_OK && !equal) {
        fprintf(stderr, "horizon bench: sweep rows differ between --jobs 1 and the default\n");
        rc = SIM_EDEVICE;
    }
    return rc;
}
