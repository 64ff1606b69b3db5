/* main.c - the horizon executable: dispatches to the subcommands run, gui, sweep, bench, info and
 * models. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
    "  info [SCENARIO]   version, backends, devices, memory estimate\n"
    "  models            the model library: scenarios to give by name (horizon run laplace)\n"
    "\n"
    "SCENARIO is a scenario file or the name of a model (see horizon models); without it the\n"
    "built-in default scenario is used. `horizon COMMAND --help` shows the options of a\n"
    "command. Scenario keys are listed in the README.\n"
    "\n"
    "  -h, --help        this help\n"
    "  --version         print the version\n";

int main(int argc, char **argv)
{
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
