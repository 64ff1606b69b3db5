/* main.c - the horizon executable: dispatches to the subcommands run, gui, sweep, bench, info and
 * models. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"

static const char usage[] =
    "usage: horizon COMMAND [options]\n"
    "\n"
    "Horizon: agents on a 2D grid sense the field over a disk (their horizon), move, deposit,\n"
    "and the field diffuses. CPU (OpenMP) and CUDA backends give bit-identical results.\n"
    "\n"
    "commands:\n"
    "  run [SCENARIO]    headless batch run: stats.csv, PNG frames, run.json\n"
    "  gui [SCENARIO]    live SDL2 viewer\n"
    "  sweep FILE        parameter sweeps and replicates: many runs, one sweep.csv\n"
    "  bench             benchmarks (horizon sums, Jacobi sweeps, full steps)\n"
    "  info [SCENARIO]   version, backends, devices, memory estimate, step path\n"
    "  models            the model library: scenarios to give by name (horizon run laplace)\n"
    "\n"
    "SCENARIO is a scenario file or the name of a model (see horizon models); without it the\n"
    "built-in default scenario is used. `horizon COMMAND --help` shows the options of a\n"
    "command. Scenario keys are listed in the README.\n"
    "\n"
    "  -h, --help        this help\n"
    "  --version         print the version\n";

/* The OpenMP wait policy of the CPU backend, chosen by what else runs when horizon starts.
 * libgomp's default lets a thread that reaches a barrier spin about 300,000 times (some 9 ms on
 * the 2-core development VM) before it sleeps: on a machine whose cores are busy with other
 * work, the spinning threads take the core that the last thread needs, and 2 threads ran 3 to 7
 * times slower than 1 (512^2, r = 8: 57-102 steps/s against 337-403 on one thread; passive:
 * 471-547, so 1.2-1.4x one thread even there). So on a busy machine the policy is passive. On
 * an idle one a passive wait costs a futex wake at every barrier: on the 16-core GPU host,
 * 2048^2 on 16 threads ran at 273-308 steps/s passive against 311-387 with a spin of IDLE_SPIN
 * (and 3,051-3,647 against 4,247-5,063 at 512^2 actively), so there the threads spin IDLE_SPIN
 * times (a few ms) before they sleep. Busy: in any of BUSY_LOOKS looks at the kernel's count
 * of runnable tasks (/proc/loadavg, 1 ms apart), other tasks than horizon itself for an eighth
 * of the cores or more (on up to 8 cores: one). Not the load average: it remembers a minute of
 * the last run's own threads. On a busy machine even passive threads lose: a thread woken at a
 * barrier waits for a core that other work holds (2 threads at 512^2 with one of 2 cores busy
 * waited ~0.3 ms at each barrier of a step and ran 3-8% slower than 1), so horizon also notes
 * how many cores the other tasks took (HORIZON_BUSY_CORES) and the CPU backend runs on no more
 * threads than the cores left (app_threads). libgomp reads the policy once, when it is loaded,
 * before main: so horizon sets OMP_WAIT_POLICY=passive or GOMP_SPINCOUNT=IDLE_SPIN and runs
 * itself again, unless the user chose OMP_WAIT_POLICY or GOMP_SPINCOUNT (then theirs stands,
 * and so does the thread count). If the exec fails the run goes on with libgomp's default.
 * README, Performance. */
#define IDLE_SPIN "100000"
#define BUSY_LOOKS 5

/* Runnable tasks now, horizon's own thread included; -1 when unknown. */
static long runnable_tasks(void)
{
    FILE *f = fopen("/proc/loadavg", "r");
    long run = -1, all = 0;
    double l1, l5, l15;
    if (f) {
        if (fscanf(f, "%lf %lf %lf %ld/%ld", &l1, &l5, &l15, &run, &all) != 5)
            run = -1;
        fclose(f);
    }
    return run;
}

/* The most runnable tasks other than horizon seen in BUSY_LOOKS looks 1 ms apart; -1 when the
 * count cannot be read. */
static long other_tasks(void)
{
    long most = 0;
    for (int k = 0; k < BUSY_LOOKS; k++) {
        const long run = runnable_tasks();
        if (run < 0)
            return -1;
        most = run - 1 > most ? run - 1 : most;
        if (k + 1 < BUSY_LOOKS)
            usleep(1000);
    }
    return most;
}

static void omp_wait_policy(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT"))
        return;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN), others = other_tasks();
    const char *key = "OMP_WAIT_POLICY", *value = "passive";
    char busy[32];
    int noted = 0;
    if (others >= 0 && cores >= 1 && others * 8 < cores) {
        key = "GOMP_SPINCOUNT";
        value = IDLE_SPIN;
    } else if (others > 0) { /* busy (unknown: passive, every core) */
        snprintf(busy, sizeof busy, "%ld", others);
        if (setenv("HORIZON_BUSY_CORES", busy, 1) != 0)
            return;
        noted = 1;
    }
    if (setenv(key, value, 1) == 0)
        execv("/proc/self/exe", argv);
    unsetenv(key); /* no exec: as if never set */
    if (noted)
        unsetenv("HORIZON_BUSY_CORES");
}

int main(int argc, char **argv)
{
    omp_wait_policy(argv);
    /* A closed pipe on stdout or stderr (`horizon run | head -1`) must not kill a run whose files
     * are fine: with SIGPIPE ignored a write there fails with EPIPE, which the messages and the
     * progress bar ignore, and the run goes on to its end and its exit code. */
    signal(SIGPIPE, SIG_IGN);
    if (argc < 2) {
        /* No arguments: run the default scenario into ./horizon-out. */
        char *args[] = {"run", NULL};
        return app_run_main(1, args);
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return APP_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("horizon %s\n", HORIZON_VERSION);
        return APP_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return app_run_main(argc - 1, argv + 1);
    if (strcmp(cmd, "sweep") == 0)
        return app_sweep_main(argc - 1, argv + 1);
    if (strcmp(cmd, "gui") == 0)
        return app_gui_main(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0)
        return app_bench_main(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0)
        return app_info_main(argc - 1, argv + 1);
    if (strcmp(cmd, "models") == 0)
        return app_models_main(argc - 1, argv + 1);
    fprintf(stderr, "horizon: unknown command '%s' (try horizon --help)\n", cmd);
    return APP_EXIT_USAGE;
}
