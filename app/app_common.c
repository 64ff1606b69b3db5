/* app_common.c - helpers shared by the subcommands: options, scenario loading, backends. */
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "app.h"
#include "app_models.h"
#ifdef HORIZON_HAVE_CUDA
#include "gpu_backend.h"
#endif

int app_exit_code(int status)
{
    switch (status) {
    case SIM_OK: return APP_EXIT_OK;
    case SIM_EINVAL:
    case SIM_ENODEV: return APP_EXIT_USAGE;
    case SIM_ENOMEM:
    case SIM_EDEVMEM: return APP_EXIT_NOMEM;
    default: return APP_EXIT_FAIL;
    }
}

int app_opt(int argc, char **argv, int *i, const char *name, const char **value, int *bad)
{
    const char *arg = argv[*i];
    size_t n = strlen(name);
    if (strncmp(arg, name, n) != 0)
        return 0;
    if (arg[n] == '=') {
        *value = arg + n + 1;
        return 1;
    }
    if (arg[n] != '\0')
        return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "horizon: %s needs a value (see --help)\n", name);
        *bad = 1;
        return 1;
    }
    *value = argv[++*i];
    return 1;
}

/* Tries value on a scratch scenario, so that a bad one is reported under the option the user
 * typed ("--out: output.dir: value too long ...") rather than as a --set they never wrote.
 * Prints the error; returns its status. */
static int shortcut_check(const app_shortcut *sc, const char *value)
{
    char section[32];
    const char *dot = strchr(sc->key, '.');
    snprintf(section, sizeof section, "%.*s", (int)(dot - sc->key), sc->key);
    sim_scenario scratch;
    sim_err err;
    sim_scenario_defaults(&scratch);
    int rc = sim_scenario_set_key(&scratch, section, dot + 1, value, sc->opt, &err);
    if (rc != SIM_OK)
        fprintf(stderr, "horizon: %s\n", err.msg);
    return rc;
}

int app_opt_shortcut(int argc, char **argv, int *i, const app_shortcut *table, size_t n,
                     char **assign, int *bad)
{
    *assign = NULL;
    for (size_t k = 0; k < n; k++) {
        const char *v = NULL;
        if (!app_opt(argc, argv, i, table[k].opt, &v, bad))
            continue;
        if (*bad)
            return 1;
        if (shortcut_check(&table[k], v) != SIM_OK) {
            *bad = 1;
            return 1;
        }
        size_t len = strlen(table[k].key) + strlen(v) + 2;
        *assign = malloc(len);
        if (!*assign) {
            fprintf(stderr, "horizon: out of memory\n");
            *bad = 1;
            return 1;
        }
        snprintf(*assign, len, "%s=%s", table[k].key, v);
        return 1;
    }
    return 0;
}

int app_parse_i64(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (text[0] == '\0' || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        fprintf(stderr, "horizon: %s: '%s' is not an integer in %lld .. %lld\n", name, text,
                (long long)lo, (long long)hi);
        return 0;
    }
    *out = v;
    return 1;
}

int app_load_scenario(const char *path, char **sets, int n_sets, sim_scenario *sc)
{
    sim_err err;
    char file[APP_MODELS_PATH_MAX];
    sim_scenario_defaults(sc);
    int rc = path ? app_models_resolve(path, file, sizeof file, &err) : SIM_OK;
    if (rc == SIM_OK)
        rc = path ? sim_scenario_parse_file(sc, file, &err)
                  : sim_scenario_parse_string(sc, sim_scenario_builtin_text(),
                                              "default.ini (built-in)", &err);
    /* Overrides are checked together at the end, so their order does not matter; the message
     * names the line or the --set that gave the value at fault. */
    for (int i = 0; rc == SIM_OK && i < n_sets; i++)
        rc = sim_scenario_assign(sc, sets[i], &err);
    if (rc == SIM_OK && n_sets > 0)
        rc = sim_scenario_validate(sc, &err);
    if (rc != SIM_OK)
        fprintf(stderr, "horizon: %s\n", err.msg);
    return rc;
}

int app_pick_backend(const char *name, const sim_backend_ops **ops, int quiet)
{
    if (strcmp(name, "cpu") == 0) {
        *ops = sim_cpu_backend();
        return SIM_OK;
    }
    if (strcmp(name, "cuda") != 0 && strcmp(name, "auto") != 0) {
        fprintf(stderr, "horizon: --backend: unknown backend '%s' (allowed auto|cpu|cuda)\n",
                name);
        return SIM_EINVAL;
    }
    char why[256] = "this horizon was built without the CUDA backend";
#ifdef HORIZON_HAVE_CUDA
    if (gpu_probe(why, sizeof why) > 0) {
        *ops = gpu_cuda_backend();
        return SIM_OK;
    }
#endif
    if (strcmp(name, "cuda") == 0) {
        fprintf(stderr, "horizon: --backend cuda: %s (use --backend cpu)\n", why);
        return SIM_ENODEV;
    }
    if (!quiet)
        fprintf(stderr, "horizon: no usable CUDA device (%s); using the CPU backend\n", why);
    *ops = sim_cpu_backend();
    return SIM_OK;
}

int app_threads(int requested)
{
    const int cores = omp_get_num_procs();
    int n = requested > 0 ? requested : cores;
    const char *busy = getenv("HORIZON_BUSY_CORES"); /* set by app/main.c */
    if (busy) {
        char *end = NULL;
        const long b = strtol(busy, &end, 10);
        if (end != busy && *end == '\0' && b > 0) {
            const int left = b < cores ? cores - (int)b : 1;
            n = n < left ? n : left;
        }
    }
    return n;
}

const char *app_omp_wait(const char **key)
{
    const char *policy = getenv("OMP_WAIT_POLICY"), *spin = getenv("GOMP_SPINCOUNT");
    *key = policy || !spin ? "OMP_WAIT_POLICY" : "GOMP_SPINCOUNT";
    return policy ? policy : spin;
}

double app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
