/* test_sweep.c - sweep files: list, range and log expansion, grid and zip run order, seeds, run
 * arguments, --set, every error with its "file:line:" message, the oracle that a run's scenario
 * is the base plus `--set` of its run arguments, big sweeps that stay small in memory, allocation
 * failures, and the shipped sweep files in assets/sweeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <sys/stat.h>

#include "hz_test_util.h"
#include "sim_alloc.h"
#include "sim_sweep.h"

#define SWEEP_DIR HZ_SOURCE_DIR "/assets/sweeps"

static char g_dir[256];   /* a fresh directory for the files of this run */
static char g_path[512];  /* g_dir/sweep.ini */

static int setup(void **state)
{
    (void)state;
    if (hz_mkdtemp(g_dir, sizeof g_dir, "sweep") != 0)
        return -1;
    snprintf(g_path, sizeof g_path, "%s/sweep.ini", g_dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    hz_rm_rf(g_dir);
    return 0;
}

/* Writes text to g_path and loads it. */
static int load(const char *text, char **sets, int n_sets, sim_sweep **sw, sim_err *err)
{
    assert_int_equal(hz_write_file(g_path, text, strlen(text)), 0);
    memset(err, 0, sizeof *err);
    return sim_sweep_load(g_path, sets, n_sets, sw, err);
}

static sim_sweep *load_ok(const char *text, char **sets, int n_sets)
{
    sim_sweep *sw = NULL;
    sim_err err;
    if (load(text, sets, n_sets, &sw, &err) != SIM_OK)
        fail_msg("load failed: %s\n%s", err.msg, text);
    assert_non_null(sw);
    return sw;
}

/* Loading must fail with code, *out NULL, and a message holding "g_path:line:" and `what`. */
static void load_fails(const char *text, char **sets, int n_sets, int code, int line,
                       const char *what)
{
    sim_sweep *sw = (sim_sweep *)&sw; /* not NULL: load must clear it */
    sim_err err;
    int rc = load(text, sets, n_sets, &sw, &err);
    if (rc != code)
        fail_msg("expected status %d, got %d (%s) for\n%s", code, rc, err.msg, text);
    assert_null(sw);
    assert_null(strchr(err.msg, '\n'));
    if (line > 0) {
        char where[600];
        snprintf(where, sizeof where, "%s:%d: ", g_path, line);
        hz_assert_contains(err.msg, where);
    }
    hz_assert_contains(err.msg, what);
}

/* ---- expansion ---- */

static void test_lists(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("\xEF\xBB\xBF; a list of each kind\n"
                            "[sweep]\n"
                            "world.boundary = periodic ,wall,  fixed   ; enum names\n"
                            "output.dir = ../a, out b\n"
                            "# a comment line\n"
                            "agents.noise = 0, 0.05,\n"
                            "    0.1 ; a comment on a continuation line\n"
                            "\n"
                            "    0.2\n"
                            "agents.radius =\n"
                            "    3, 4\n",
                            NULL, 0);
    assert_int_equal(sim_sweep_keys(sw), 4);
    assert_string_equal(sim_sweep_key(sw, 0), "world.boundary");
    assert_string_equal(sim_sweep_key(sw, 1), "output.dir");
    assert_string_equal(sim_sweep_key(sw, 2), "agents.noise");
    assert_string_equal(sim_sweep_key(sw, 3), "agents.radius");
    assert_null(sim_sweep_key(sw, 4));
    assert_null(sim_sweep_key(sw, -1));
    assert_int_equal(sim_sweep_key_line(sw, 0), 3);
    assert_int_equal(sim_sweep_key_line(sw, 2), 6);
    assert_int_equal(sim_sweep_key_line(sw, 3), 10);
    const char *expect[4][4] = {{"periodic", "wall", "fixed", NULL},
                                {"../a", "out b", NULL, NULL},
                                {"0", "0.05", "0.1", "0.2"},
                                {"3", "4", NULL, NULL}};
    int64_t total = 1;
    for (int k = 0; k < 4; k++) {
        int64_t n = 0;
        while (n < 4 && expect[k][n])
            n++;
        assert_int_equal(sim_sweep_key_values(sw, k), n);
        for (int64_t i = 0; i < n; i++)
            assert_string_equal(sim_sweep_key_value(sw, k, i), expect[k][i]);
        assert_null(sim_sweep_key_value(sw, k, n));
        total *= n;
    }
    assert_int_equal(sim_sweep_runs(sw), total);
    assert_int_equal(sim_sweep_replicates(sw), 1);
    assert_string_equal(sim_sweep_combine(sw), "grid");
    assert_string_equal(sim_sweep_base_name(sw), "default");
    assert_string_equal(sim_sweep_path(sw), g_path);

    /* the enum and path values reach the scenario */
    sim_scenario sc;
    sim_err err;
    int64_t last = sim_sweep_runs(sw) - 1;
    assert_int_equal(sim_sweep_scenario(sw, last, &sc, &err), SIM_OK);
    assert_int_equal(sc.boundary, SIM_BOUNDARY_FIXED);
    assert_string_equal(sc.dir, "out b");
    assert_true(sc.noise == 0.2);
    assert_int_equal(sc.radius, 4);
    sim_sweep_destroy(sw);
}

/* The value text read back, against the documented formula computed here. */
static void check_range(const sim_sweep *sw, int k, double a, double b, int n, int is_log)
{
    assert_int_equal(sim_sweep_key_values(sw, k), n);
    for (int i = 0; i < n; i++) {
        const char *text = sim_sweep_key_value(sw, k, i);
        assert_non_null(text);
        double v = strtod(text, NULL);
        double t = (double)i / (n - 1);
        double want = is_log ? a * pow(b / a, t) : a + (b - a) * i / (n - 1);
        /* within a few ulps of the formula: of the larger endpoint, or of a log value */
        double tol = 4 * DBL_EPSILON * (is_log ? fabs(want) : fmax(fabs(a), fabs(b)));
        if (i == 0 || i == n - 1)
            assert_true(v == (i == 0 ? a : b)); /* the endpoints exactly */
        else if (fabs(v - want) > tol)
            fail_msg("%s[%d] = %s, want %.17g", sim_sweep_key(sw, k), i, text, want);
        /* the shortest such text: one digit less is too far (or the same text) */
        char shorter[40];
        for (int prec = 1; prec <= 17; prec++) {
            snprintf(shorter, sizeof shorter, "%.*g", prec, v);
            if (strcmp(shorter, text) == 0)
                break;
            if (i > 0 && i < n - 1)
                assert_true(fabs(strtod(shorter, NULL) - want) > tol / 2 ||
                            strlen(shorter) >= strlen(text));
        }
    }
}

static void test_ranges(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("[sweep]\n"
                            "agents.noise = 0 .. 0.3 / 16\n"
                            "field.decay = 0.001 .. 0.02 / 8\n"
                            "field.diffusion = log 0.01 .. 1 / 5\n"
                            "agents.deposit = 1..0/3\n"
                            "agents.radius = 2 .. 8 / 4\n"
                            "run.steps = 10 .. 1000000 / 3\n"
                            "agents.density = log 1e-3 .. 1e-1 / 3\n",
                            NULL, 0);
    assert_int_equal(sim_sweep_keys(sw), 7);
    check_range(sw, 0, 0, 0.3, 16, 0);
    check_range(sw, 1, 0.001, 0.02, 8, 0);
    check_range(sw, 2, 0.01, 1, 5, 1);
    check_range(sw, 3, 1, 0, 3, 0);
    check_range(sw, 4, 2, 8, 4, 0);
    check_range(sw, 5, 10, 1e6, 3, 0);
    check_range(sw, 6, 1e-3, 1e-1, 3, 1);
    /* whole numbers without an exponent, as integer keys need */
    assert_string_equal(sim_sweep_key_value(sw, 5, 0), "10");
    assert_string_equal(sim_sweep_key_value(sw, 5, 1), "500005");
    assert_string_equal(sim_sweep_key_value(sw, 5, 2), "1000000");
    /* the texts a user will see in listings, as a user would type them */
    for (int i = 0; i < 16; i++) {
        char want[32];
        snprintf(want, sizeof want, "%g", 0.02 * i);
        assert_string_equal(sim_sweep_key_value(sw, 0, i), want);
    }
    assert_string_equal(sim_sweep_key_value(sw, 1, 0), "0.001");
    assert_string_equal(sim_sweep_key_value(sw, 1, 7), "0.02");
    assert_string_equal(sim_sweep_key_value(sw, 0, 15), "0.3");
    assert_string_equal(sim_sweep_key_value(sw, 2, 0), "0.01");
    assert_string_equal(sim_sweep_key_value(sw, 2, 2), "0.1");
    assert_string_equal(sim_sweep_key_value(sw, 2, 4), "1");
    assert_string_equal(sim_sweep_key_value(sw, 3, 1), "0.5");
    const char *radius[] = {"2", "4", "6", "8"};
    for (int i = 0; i < 4; i++)
        assert_string_equal(sim_sweep_key_value(sw, 4, i), radius[i]);
    assert_int_equal(sim_sweep_runs(sw), 16 * 8 * 5 * 3 * 4 * 3 * 3);
    sim_sweep_destroy(sw);
}

/* ---- run order and seeds ---- */

static void test_grid_order(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("[sweep]\n"
                            "replicates = 3\n"
                            "agents.noise = 0, 0.5\n"
                            "field.decay = 0.1, 0.2, 0.3\n"
                            "agents.radius = 1, 2\n",
                            NULL, 0);
    const int n[3] = {2, 3, 2}, R = 3;
    assert_int_equal(sim_sweep_runs(sw), 2 * 3 * 2 * R);
    assert_int_equal(sim_sweep_replicates(sw), R);
    int64_t run = 0;
    for (int i0 = 0; i0 < n[0]; i0++)
        for (int i1 = 0; i1 < n[1]; i1++)
            for (int i2 = 0; i2 < n[2]; i2++)
                for (int r = 0; r < R; r++, run++) {
                    /* the documented formula, and the loop nest that enumerates it */
                    assert_int_equal(run, ((i0 * n[1] + i1) * n[2] + i2) * R + r);
                    int idx[3] = {i0, i1, i2};
                    for (int k = 0; k < 3; k++) {
                        assert_int_equal(sim_sweep_value_index(sw, run, k), idx[k]);
                        assert_string_equal(sim_sweep_value(sw, run, k),
                                            sim_sweep_key_value(sw, k, idx[k]));
                    }
                    assert_int_equal(sim_sweep_replicate(sw, run), r);
                    assert_true(sim_sweep_seed(sw, run) == 1 + (uint64_t)r);
                }
    assert_int_equal(run, sim_sweep_runs(sw));
    /* out of range */
    assert_null(sim_sweep_value(sw, run, 0));
    assert_null(sim_sweep_value(sw, -1, 0));
    assert_null(sim_sweep_value(sw, 0, 3));
    assert_int_equal(sim_sweep_replicate(sw, run), -1);
    assert_int_equal(sim_sweep_value_index(sw, run, 0), -1);
    sim_scenario sc;
    sim_err err;
    assert_int_equal(sim_sweep_scenario(sw, run, &sc, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "out of range");
    char args[64] = "x";
    sim_sweep_run_args(sw, run, args, sizeof args);
    assert_string_equal(args, "");
    sim_sweep_destroy(sw);
}

static void test_zip_order(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("[sweep]\n"
                            "combine = zip\n"
                            "replicates = 2\n"
                            "agents.noise = 0, 0.1, 0.2\n"
                            "field.decay = 0 .. 0.2 / 3\n"
                            "world.boundary = wall, periodic, fixed\n",
                            NULL, 0);
    assert_string_equal(sim_sweep_combine(sw), "zip");
    assert_int_equal(sim_sweep_runs(sw), 3 * 2);
    for (int64_t run = 0; run < 6; run++) {
        int64_t i = run / 2;
        for (int k = 0; k < 3; k++) {
            assert_int_equal(sim_sweep_value_index(sw, run, k), i);
            assert_string_equal(sim_sweep_value(sw, run, k), sim_sweep_key_value(sw, k, i));
        }
        assert_int_equal(sim_sweep_replicate(sw, run), run % 2);
    }
    assert_string_equal(sim_sweep_value(sw, 4, 1), "0.2");
    assert_string_equal(sim_sweep_value(sw, 5, 2), "fixed");
    sim_sweep_destroy(sw);

    /* no swept keys at all: R runs of the base */
    sw = load_ok("[sweep]\nreplicates = 4\n[run]\nseed = 7\n", NULL, 0);
    assert_int_equal(sim_sweep_keys(sw), 0);
    assert_int_equal(sim_sweep_runs(sw), 4);
    for (int r = 0; r < 4; r++)
        assert_true(sim_sweep_seed(sw, r) == 7 + (uint64_t)r);
    sim_sweep_destroy(sw);
}

static void test_seeds(void **state)
{
    (void)state;
    /* the base's seed plus the replicate; a swept seed replaces the base's, and wraps */
    sim_sweep *sw = load_ok("[sweep]\n"
                            "replicates = 3\n"
                            "run.seed = 10, 18446744073709551615\n"
                            "agents.noise = 0, 0.1\n"
                            "[run]\n"
                            "steps = 7\n",
                            NULL, 0);
    assert_int_equal(sim_sweep_runs(sw), 12);
    uint64_t want[12] = {10, 11, 12, 10, 11, 12, UINT64_MAX, 0, 1, UINT64_MAX, 0, 1};
    for (int64_t run = 0; run < 12; run++) {
        assert_true(sim_sweep_seed(sw, run) == want[run]);
        sim_scenario sc;
        sim_err err;
        assert_int_equal(sim_sweep_scenario(sw, run, &sc, &err), SIM_OK);
        assert_true(sc.seed == want[run]);
        assert_int_equal(sc.steps, 7);
    }
    assert_true(sim_sweep_seed(sw, 12) == 0);
    sim_sweep_destroy(sw);

    sw = load_ok("[sweep]\nreplicates = 2\nagents.noise = 0, 1\n[run]\nseed = 41\n", NULL, 0);
    assert_true(sim_sweep_seed(sw, 0) == 41 && sim_sweep_seed(sw, 1) == 42);
    assert_true(sim_sweep_seed(sw, 2) == 41 && sim_sweep_seed(sw, 3) == 42);
    assert_true(sim_sweep_base(sw)->seed == 41);
    sim_sweep_destroy(sw);

    /* --set run.seed moves every replicate's seed */
    char *sets[] = {"run.seed=100"};
    sw = load_ok("[sweep]\nreplicates = 2\nagents.noise = 0, 1\n", sets, 1);
    assert_true(sim_sweep_seed(sw, 0) == 100 && sim_sweep_seed(sw, 3) == 101);
    sim_sweep_destroy(sw);
}

static void test_run_args(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("[sweep]\n"
                            "replicates = 3\n"
                            "agents.noise = 0, 0.1\n"
                            "world.boundary = wall, periodic\n"
                            "[run]\n"
                            "seed = 41\n",
                            NULL, 0);
    char buf[256];
    sim_sweep_run_args(sw, 0, buf, sizeof buf);
    assert_string_equal(buf, "--set agents.noise=0 --set world.boundary=wall --set run.seed=41");
    sim_sweep_run_args(sw, 2 * 3 + 2, buf, sizeof buf);
    assert_string_equal(buf, "--set agents.noise=0.1 --set world.boundary=wall --set run.seed=43");
    /* cut short, still terminated */
    sim_sweep_run_args(sw, 0, buf, 10);
    assert_string_equal(buf, "--set age");
    sim_sweep_destroy(sw);

    /* a swept seed appears once, as the run's seed; shell-unsafe values are quoted */
    sw = load_ok("[sweep]\n"
                 "replicates = 2\n"
                 "run.seed = 5, 9\n"
                 "output.dir = out b, it's\n",
                 NULL, 0);
    sim_sweep_run_args(sw, 1, buf, sizeof buf);
    assert_string_equal(buf, "--set 'output.dir=out b' --set run.seed=6");
    sim_sweep_run_args(sw, 7, buf, sizeof buf);
    assert_string_equal(buf, "--set 'output.dir=it'\\''s' --set run.seed=10");
    sim_sweep_destroy(sw);
}

/* The oracle: each run's scenario is the base with `--set` of its run arguments, for a grid
 * of several kinds of keys, on a base file with fixed values and command-line overrides. */
static void test_scenario_is_base_plus_args(void **state)
{
    (void)state;
    char base[600];
    snprintf(base, sizeof base, "%s/scen", g_dir);
    assert_int_equal(mkdir(base, 0700), 0);
    snprintf(base, sizeof base, "%s/scen/b.ini", g_dir);
    const char *btext = "[world]\nwidth = 100\nheight = 80\n[agents]\nradius = 3\n"
                        "[run]\nseed = 5\n";
    assert_int_equal(hz_write_file(base, btext, strlen(btext)), 0);
    char *sets[] = {"field.sweeps=4", "output.stats_every=3"};
    sim_sweep *sw = load_ok("[sweep]\n"
                            "base = scen/b.ini\n"
                            "replicates = 2\n"
                            "agents.noise = 0, 0.25\n"
                            "field.decay = log 0.001 .. 0.1 / 3\n"
                            "world.boundary = periodic, fixed\n"
                            "agents.count = 10, 8000\n"
                            "[world]\n"
                            "fixed_top = 2.5\n"
                            "[run]\n"
                            "steps = 9\n",
                            sets, 2);
    char want_name[600];
    snprintf(want_name, sizeof want_name, "%s/scen/b.ini", g_dir);
    assert_string_equal(sim_sweep_base_name(sw), want_name);

    /* the base: the file, the fixed values, --set */
    sim_scenario ref;
    sim_err err;
    sim_scenario_defaults(&ref);
    assert_int_equal(sim_scenario_parse_file(&ref, base, &err), SIM_OK);
    const char *fixed[] = {"world.fixed_top=2.5", "run.steps=9", "field.sweeps=4",
                           "output.stats_every=3"};
    for (int i = 0; i < 4; i++)
        assert_int_equal(sim_scenario_set(&ref, fixed[i], &err), SIM_OK);
    hz_assert_same_scenario(sim_sweep_base(sw), &ref);
    assert_int_equal(sim_sweep_base(sw)->width, 100);
    assert_int_equal(sim_sweep_base(sw)->sweeps, 4);

    assert_int_equal(sim_sweep_runs(sw), 2 * 3 * 2 * 2 * 2);
    for (int64_t run = 0; run < sim_sweep_runs(sw); run++) {
        sim_scenario sc, oracle = *sim_sweep_base(sw);
        assert_int_equal(sim_sweep_scenario(sw, run, &sc, &err), SIM_OK);
        char args[512];
        sim_sweep_run_args(sw, run, args, sizeof args);
        /* "--set a=b --set c=d": no value here needs quoting */
        for (char *tok = strtok(args, " "); tok; tok = strtok(NULL, " ")) {
            if (strcmp(tok, "--set") == 0)
                continue;
            if (sim_scenario_set(&oracle, tok, &err) != SIM_OK)
                fail_msg("run %lld: %s: %s", (long long)run, tok, err.msg);
        }
        hz_assert_same_scenario(&sc, &oracle);
        assert_true(sc.seed == 5 + (uint64_t)(run % 2));
    }
    sim_sweep_destroy(sw);
}

/* ---- --set ---- */

static void test_set_overrides(void **state)
{
    (void)state;
    const char *text = "[sweep]\nagents.noise = 0, 0.1\n[field]\ndecay = 0.2\n";
    char *sets[] = {"field.decay=0.05", "world.width=128"};
    sim_sweep *sw = load_ok(text, sets, 2);
    assert_true(sim_sweep_base(sw)->decay == 0.05f); /* --set wins over the fixed value */
    assert_int_equal(sim_sweep_base(sw)->width, 128);
    sim_scenario sc;
    sim_err err;
    assert_int_equal(sim_sweep_scenario(sw, 1, &sc, &err), SIM_OK);
    assert_int_equal(sc.width, 128);
    assert_true(sc.noise == 0.1);
    sim_sweep_destroy(sw);

    char msg[700];
    char *swept[] = {"world.width=64", "agents.noise=0.5"};
    snprintf(msg, sizeof msg, "--set agents.noise=0.5: agents.noise is swept (%s:2); change its "
             "list there", g_path);
    load_fails(text, swept, 2, SIM_EINVAL, 0, msg);

    char *bad[] = {"agents.radius=99"};
    load_fails(text, bad, 1, SIM_EINVAL, 0, "--set agents.radius=99: agents.radius: out of range");
    char *junk[] = {"nonsense"};
    load_fails(text, junk, 1, SIM_EINVAL, 0, "--set nonsense");

    /* a --set that breaks every run is the command line's fault, not the file's */
    char *big[] = {"agents.count=999999"};
    sim_sweep *none = NULL;
    assert_int_equal(load(text, big, 1, &none, &err), SIM_EINVAL);
    assert_null(none);
    hz_assert_contains(err.msg, "agents.count");
    hz_assert_contains(err.msg, "(run 0: agents.noise=0)");
    if (!strstr(err.msg, "--set agents.count=999999") && !strstr(err.msg, "command line"))
        fail_msg("the message should blame the command line: %s", err.msg);
}

/* ---- errors ---- */

static void test_errors_structure(void **state)
{
    (void)state;
    load_fails("; nothing\n[run]\nsteps = 3\n", NULL, 0, SIM_EINVAL, 1, "no [sweep] section");
    load_fails("", NULL, 0, SIM_EINVAL, 1, "no [sweep] section");
    load_fails("replicates = 2\n[sweep]\n", NULL, 0, SIM_EINVAL, 1, "replicates: key outside any "
               "section");
    load_fails("[sweep]\nagents.noise = 0\nagents.noise = 1\n", NULL, 0, SIM_EINVAL, 3,
               "agents.noise: duplicate (first at line 2)");
    load_fails("[sweep]\nreplicates = 2\n\nreplicates = 3\n", NULL, 0, SIM_EINVAL, 4,
               "sweep.replicates: duplicate (first at line 2)");
    load_fails("[sweep]\n[run]\nsteps = 1\n[world]\n[run]\nseed = 2\n", NULL, 0, SIM_EINVAL, 5,
               "[run]: duplicate (first at line 2)");
    load_fails("[sweep]\n[sweep]\n", NULL, 0, SIM_EINVAL, 2, "[sweep]: duplicate (first at line "
               "1)");
    load_fails("[sweep]\n[run]\nsteps = 1\nsteps = 2\n", NULL, 0, SIM_EINVAL, 4,
               "run.steps: duplicate (first at line 3)");
    load_fails("[sweep]\nagents.noise = 0, 1\n[agents]\nnoise = 0.5\n", NULL, 0, SIM_EINVAL, 4,
               "agents.noise: fixed here but swept at line 2");
    load_fails("[agents]\nnoise = 0.5\n[sweep]\nagents.noise = 0, 1\n", NULL, 0, SIM_EINVAL, 4,
               "agents.noise: swept here but fixed at line 2");
    load_fails("[sweep]\nagents.nosie = 0, 1\n", NULL, 0, SIM_EINVAL, 2,
               "agents.nosie: unknown key (allowed ");
    load_fails("[sweep]\nagnts.noise = 0, 1\n", NULL, 0, SIM_EINVAL, 2, "[agnts]: unknown section");
    load_fails("[sweep]\nreplicate = 3\n", NULL, 0, SIM_EINVAL, 2,
               "sweep.replicate: unknown key (allowed base|replicates|combine");
    load_fails("[sweep]\n[agnts]\nnoise = 1\n", NULL, 0, SIM_EINVAL, 2,
               "[agnts]: unknown section (allowed sweep|world|field|agents|run|output|model|"
               "field.NAME|species.NAME)");
    /* named keys: a bad name, an unknown key, a bad value, and a base without the section */
    load_fails("[sweep]\nspecies.Sheep.noise = 0, 1\n", NULL, 0, SIM_EINVAL, 2, "bad name");
    load_fails("[sweep]\nspecies.sheep.nosie = 0, 1\n", NULL, 0, SIM_EINVAL, 2,
               "species.sheep.nosie: unknown key (allowed count|");
    load_fails("[sweep]\nfield.grass.growth = 0, -1\n", NULL, 0, SIM_EINVAL, 2,
               "field.grass.growth: out of range '-1'");
    load_fails("[sweep]\n[species.sheep]\nradius = 99\n", NULL, 0, SIM_EINVAL, 3,
               "species.sheep.radius: out of range");
    load_fails("[sweep]\nspecies.sheep.noise = 0, 1\n", NULL, 0, SIM_EINVAL, 2,
               "the scenario has no [species.sheep] section (its species sections: none)");
    load_fails("[sweep]\n[agents]\nnosie = 1\n", NULL, 0, SIM_EINVAL, 3, "agents.nosie: unknown key");
    load_fails("[sweep]\n[agents]\nnoise = 2\n", NULL, 0, SIM_EINVAL, 3,
               "agents.noise: out of range '2' (allowed 0 .. 1)");
    load_fails("[sweep]\nreplicates = 2\n   3\n", NULL, 0, SIM_EINVAL, 3, "continuation line");
    load_fails("[sweep]\n[run]\nsteps = 2\n   3\n", NULL, 0, SIM_EINVAL, 4, "continuation line");
    load_fails("[sweep]\nagents.noise = 0\ngarbage\n", NULL, 0, SIM_EINVAL, 3, "syntax error");
    /* the first error by line wins, whichever check finds it */
    load_fails("[sweep]\nagents.noise = 0, , 1\ngarbage\n[run]\nsteps = -1\n", NULL, 0,
               SIM_EINVAL, 2, "agents.noise: item 2 of the list is empty");
    load_fails("[sweep]\nagents.noise = 0, 7\n[run]\nsteps = -1\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: out of range '7'");
    char long_line[400];
    snprintf(long_line, sizeof long_line, "[sweep]\nagents.noise = 0%0250d\n", 0);
    load_fails(long_line, NULL, 0, SIM_EINVAL, 2, "line too long");
    /* a list cut short by the error below it is not judged on its first line alone */
    snprintf(long_line, sizeof long_line, "[sweep]\nagents.noise = 0,\n  0%0250d\n", 0);
    load_fails(long_line, NULL, 0, SIM_EINVAL, 3, "line too long");
    load_fails("[sweep]\nreplicates = 2\nagents.noise = 0,\n  1\n  2\n", NULL, 0, SIM_EINVAL, 3,
               "agents.noise: out of range '2'");
    load_fails("[sweep]\nagents.noise = 0, 7\n[foo]\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: out of range '7'");

    /* unreadable sweep file */
    sim_sweep *sw = (sim_sweep *)&sw;
    sim_err err;
    char missing[600];
    snprintf(missing, sizeof missing, "%s/nope.ini", g_dir);
    assert_int_equal(sim_sweep_load(missing, NULL, 0, &sw, &err), SIM_EIO);
    assert_null(sw);
    hz_assert_contains(err.msg, "nope.ini: cannot open sweep file");
}

static void test_errors_settings(void **state)
{
    (void)state;
    load_fails("[sweep]\nbase = nope.ini\n", NULL, 0, SIM_EINVAL, 2, "sweep.base: ");
    char named[700];
    snprintf(named, sizeof named, "%s/nope.ini: cannot open scenario", g_dir);
    load_fails("[sweep]\nbase = nope.ini\n", NULL, 0, SIM_EINVAL, 2, named);
    load_fails("[sweep]\nbase =\n", NULL, 0, SIM_EINVAL, 2, "sweep.base: bad path");
    load_fails("[sweep]\nreplicates = 0\n", NULL, 0, SIM_EINVAL, 2,
               "sweep.replicates: out of range '0' (allowed 1 .. 100000)");
    load_fails("[sweep]\nreplicates = 100001\n", NULL, 0, SIM_EINVAL, 2,
               "sweep.replicates: out of range '100001'");
    load_fails("[sweep]\nreplicates = 2x\n", NULL, 0, SIM_EINVAL, 2,
               "sweep.replicates: not an integer '2x'");
    load_fails("[sweep]\ncombine = zipper\n", NULL, 0, SIM_EINVAL, 2,
               "sweep.combine: unknown value 'zipper' (allowed grid|zip)");
    load_fails("[sweep]\ncombine = zip\nagents.noise = 0, 1\nfield.decay = 0 .. 0.1 / 3\n", NULL,
               0, SIM_EINVAL, 4, "field.decay: 3 values, but agents.noise (line 3) has 2");

    /* a bad base file: its own message, after the sweep line that names it */
    char base[600];
    snprintf(base, sizeof base, "%s/bad.ini", g_dir);
    assert_int_equal(hz_write_file(base, "[agents]\nnoise = 3\n", 19), 0);
    snprintf(named, sizeof named, "%s/bad.ini:2: agents.noise: out of range", g_dir);
    load_fails("[sweep]\nbase = bad.ini\n", NULL, 0, SIM_EINVAL, 2, named);
}

static void test_errors_values(void **state)
{
    (void)state;
    load_fails("[sweep]\nagents.noise = 0 .. 1\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: range '0 .. 1' needs a count");
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 1\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: range count '1' out of range (allowed 2 .. 100000");
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 100001\n", NULL, 0, SIM_EINVAL, 2,
               "range count '100001'");
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 2.5\n", NULL, 0, SIM_EINVAL, 2,
               "range count '2.5'");
    load_fails("[sweep]\nagents.noise = 0 .. x / 3\n", NULL, 0, SIM_EINVAL, 2,
               "end 'x' is not a number");
    load_fails("[sweep]\nagents.noise = x .. 1 / 3\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: not a number 'x .. 1 / 3'");
    load_fails("[sweep]\nfield.diffusion = log 0 .. 1 / 3\n", NULL, 0, SIM_EINVAL, 2,
               "field.diffusion: log range 'log 0 .. 1 / 3' needs A > 0 and B > 0");
    load_fails("[sweep]\nagents.deposit = log 1 .. -1 / 3\n", NULL, 0, SIM_EINVAL, 2,
               "needs A > 0 and B > 0");
    load_fails("[sweep]\nagents.noise = 0, , 1\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: item 2 of the list is empty");
    load_fails("[sweep]\nagents.noise = 0, 1,\n", NULL, 0, SIM_EINVAL, 2, "item 3 of the list is "
               "empty");
    load_fails("[sweep]\nagents.noise =\n", NULL, 0, SIM_EINVAL, 2, "agents.noise: no values");
    load_fails("[sweep]\nagents.noise = 0, 1.5\n", NULL, 0, SIM_EINVAL, 2,
               "agents.noise: out of range '1.5'");
    load_fails("[sweep]\nworld.boundary = periodic, wal\n", NULL, 0, SIM_EINVAL, 2,
               "world.boundary: unknown value 'wal'");
    /* an integer key given non-integral range values: the scenario's message, our line */
    load_fails("[sweep]\n\nagents.radius = 1 .. 8 / 3\n", NULL, 0, SIM_EINVAL, 3,
               "agents.radius: not an integer '4.5'");
    load_fails("[sweep]\nagents.noise = -1e308 .. 1e308 / 3\n", NULL, 0, SIM_EINVAL, 2,
               "leaves the doubles");
}

static void test_errors_runs(void **state)
{
    (void)state;
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 100000\nfield.decay = 0 .. 0.5 / 200\n", NULL,
               0, SIM_EINVAL, 3, "field.decay: the sweep would have 20000000 runs (allowed at "
               "most 10000000)");
    /* past int64_t */
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 100000\nfield.decay = 0 .. 0.5 / 100000\n"
               "agents.density = 0 .. 1 / 100000\nfield.initial = 0 .. 1 / 100000\n",
               NULL, 0, SIM_EINVAL, 3, "the sweep would have 1e+20 runs");
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 1000\nreplicates = 100000\n", NULL, 0,
               SIM_EINVAL, 3, "sweep.replicates: the sweep would have 100000000 runs");
    /* exactly the limit is fine (and only its ends are validated one by one) */
    sim_sweep *sw = load_ok("[sweep]\nagents.noise = 0 .. 1 / 100\nreplicates = 100000\n", NULL,
                            0);
    assert_int_equal(sim_sweep_runs(sw), SIM_SWEEP_MAX_RUNS);
    sim_sweep_destroy(sw);

    /* a run that fails validation: the swept line, the run and its values */
    load_fails("[sweep]\nreplicates = 2\nagents.count = 100, 5000\n[world]\nwidth = 64\n"
               "height = 64\n", NULL, 0, SIM_EINVAL, 3, "(run 2: agents.count=5000)");
    load_fails("[sweep]\nagents.count = 100, 5000\n[world]\nwidth = 64\nheight = 64\n", NULL, 0,
               SIM_EINVAL, 2, "agents.count: ");
    /* the fixed count is fine on the base; the swept width makes it too many */
    sim_sweep *none = NULL;
    sim_err err;
    assert_int_equal(load("[sweep]\nagents.noise = 0, 1\nworld.width = 128, 32\n[world]\n"
                          "height = 64\n[agents]\ncount = 5000\n",
                          NULL, 0, &none, &err),
                     SIM_EINVAL);
    assert_null(none);
    char where[600];
    snprintf(where, sizeof where, "%s:3", g_path);
    hz_assert_contains(err.msg, where);
    hz_assert_contains(err.msg, "(run 1: agents.noise=0, world.width=32)");
}

/* More than SIM_SWEEP_VALIDATE_ALL runs: load checks the ends and each value alone, the
 * memory taken does not grow with the runs, and a bad combination in the middle is caught
 * when its scenario is built. */
static void test_big_sweep(void **state)
{
    (void)state;
    sim_alloc_fail_at(0); /* resets the largest-request counter */
    long live = sim_alloc_live();
    sim_sweep *sw = load_ok("[sweep]\n"
                            "replicates = 2\n"
                            "world.width = 512, 64, 512\n"
                            "agents.count = 0 .. 29999 / 30000\n"
                            "[world]\n"
                            "height = 64\n",
                            NULL, 0);
    assert_int_equal(sim_sweep_runs(sw), 3 * 30000 * 2);
    assert_true(sim_sweep_runs(sw) > SIM_SWEEP_VALIDATE_ALL);
    /* the value lists only: well under a kilobyte per run */
    assert_true(sim_alloc_largest() < 1u << 20);
    sim_scenario sc;
    sim_err err;
    int64_t ok = (0 * 30000 + 29999) * 2 + 1, bad = (1 * 30000 + 5000) * 2;
    assert_int_equal(sim_sweep_scenario(sw, ok, &sc, &err), SIM_OK);
    assert_int_equal(sc.count, 29999);
    assert_int_equal(sc.width, 512);
    assert_int_equal(sim_sweep_scenario(sw, bad, &sc, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "(run 70000: world.width=64, agents.count=5000)");
    sim_sweep_destroy(sw);
    assert_int_equal(sim_alloc_live(), live);

    /* one value that fails on the base alone is caught at load, though the first and the last
     * run are fine */
    char where[600];
    snprintf(where, sizeof where, "%s:3: ", g_path);
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 50001\nagents.count = 0, 40000, 0\n"
               "[world]\nheight = 64\n",
               NULL, 0, SIM_EINVAL, 0, "agents.count=40000 on the base");
    load_fails("[sweep]\nagents.noise = 0 .. 1 / 50001\nagents.count = 0, 40000, 0\n"
               "[world]\nheight = 64\n",
               NULL, 0, SIM_EINVAL, 0, where);
}

/* Every allocation of a load, failed in turn: SIM_ENOMEM (or a refusal), nothing leaked. */
static void test_alloc_failures(void **state)
{
    (void)state;
    const char *text = "[sweep]\nreplicates = 2\nagents.noise = 0, 0.1,\n  0.2\n"
                       "field.decay = 0 .. 0.1 / 40\n[run]\nsteps = 3\n[world]\nwidth = 64\n";
    assert_int_equal(hz_write_file(g_path, text, strlen(text)), 0);
    long live = sim_alloc_live();
    sim_alloc_fail_at(0);
    sim_sweep *sw = NULL;
    sim_err err;
    assert_int_equal(sim_sweep_load(g_path, NULL, 0, &sw, &err), SIM_OK);
    long attempts = sim_alloc_attempts();
    sim_sweep_destroy(sw);
    assert_true(attempts > 5);
    for (long n = 1; n <= attempts; n++) {
        sim_alloc_fail_at(n);
        sw = (sim_sweep *)&sw;
        int rc = sim_sweep_load(g_path, NULL, 0, &sw, &err);
        sim_alloc_fail_at(0);
        if (rc != SIM_ENOMEM)
            fail_msg("allocation %ld of %ld failed: status %d (%s)", n, attempts, rc, err.msg);
        assert_null(sw);
        assert_int_equal(sim_alloc_live(), live);
    }
}

static void test_json(void **state)
{
    (void)state;
    sim_sweep *sw = load_ok("[sweep]\n"
                            "replicates = 2\n"
                            "agents.noise = 0, 0.5\n"
                            "output.dir = a\"b, c\\d\n",
                            NULL, 0);
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    sim_sweep_write_json(sw, m, 0);
    fclose(m);
    hz_assert_contains(text, "\"base\": \"default\"");
    hz_assert_contains(text, "\"combine\": \"grid\"");
    hz_assert_contains(text, "\"replicates\": 2");
    hz_assert_contains(text, "\"runs\": 8");
    hz_assert_contains(text, "{\"key\": \"agents.noise\", \"line\": 3, \"values\": [\"0\", "
                             "\"0.5\"]}");
    hz_assert_contains(text, "\"values\": [\"a\\\"b\", \"c\\\\d\"]");
    hz_assert_contains(text, "\"scenario\": {");
    /* balanced, and closed at column 0 without a newline */
    int depth = 0, in_string = 0;
    for (const char *p = text; *p; p++) {
        if (in_string) {
            if (*p == '\\')
                p++;
            else if (*p == '"')
                in_string = 0;
            continue;
        }
        in_string = *p == '"';
        depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
        assert_true(depth >= 0);
    }
    assert_int_equal(depth, 0);
    assert_int_equal(text[len - 1], '}');
    assert_int_equal(text[len - 2], '\n');
    free(text);
    sim_sweep_destroy(sw);

    /* no keys: an empty array */
    sw = load_ok("[sweep]\n", NULL, 0);
    m = open_memstream(&text, &len);
    sim_sweep_write_json(sw, m, 2);
    fclose(m);
    hz_assert_contains(text, "\"keys\": [],");
    assert_int_equal(text[len - 1], '}');
    assert_int_equal(text[len - 2], ' ');
    free(text);
    sim_sweep_destroy(sw);
}

/* ---- the shipped sweeps ---- */

static void test_assets(void **state)
{
    (void)state;
    DIR *d = opendir(SWEEP_DIR);
    assert_non_null(d);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".ini") != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", SWEEP_DIR, e->d_name);
        sim_sweep *sw = NULL;
        sim_err err;
        if (sim_sweep_load(path, NULL, 0, &sw, &err) != SIM_OK)
            fail_msg("%s: %s", path, err.msg);
        sim_sweep_destroy(sw);
        n++;
    }
    closedir(d);
    assert_true(n >= 2);

    sim_sweep *sw = NULL;
    sim_err err;
    assert_int_equal(sim_sweep_load(SWEEP_DIR "/noise.ini", NULL, 0, &sw, &err), SIM_OK);
    assert_string_equal(sim_sweep_base_name(sw), "default");
    assert_int_equal(sim_sweep_keys(sw), 1);
    assert_string_equal(sim_sweep_key(sw, 0), "agents.noise");
    assert_int_equal(sim_sweep_key_values(sw, 0), 16);
    assert_string_equal(sim_sweep_key_value(sw, 0, 0), "0");
    assert_string_equal(sim_sweep_key_value(sw, 0, 1), "0.02");
    assert_string_equal(sim_sweep_key_value(sw, 0, 15), "0.3");
    assert_int_equal(sim_sweep_replicates(sw), 8);
    assert_int_equal(sim_sweep_runs(sw), 128);
    const sim_scenario *base = sim_sweep_base(sw);
    sim_scenario def;
    sim_scenario_defaults(&def);
    assert_int_equal(base->steps, 500);
    assert_int_equal(base->stats_every, 10);
    assert_int_equal(base->frames_every, 0);
    assert_int_equal(base->width, def.width);
    sim_sweep_destroy(sw);

    assert_int_equal(sim_sweep_load(SWEEP_DIR "/small.ini", NULL, 0, &sw, &err), SIM_OK);
    assert_int_equal(sim_sweep_runs(sw), 8);
    assert_int_equal(sim_sweep_key_values(sw, 0), 4);
    assert_int_equal(sim_sweep_replicates(sw), 2);
    assert_int_equal(sim_sweep_base(sw)->width, 64);
    assert_int_equal(sim_sweep_base(sw)->height, 64);
    assert_int_equal(sim_sweep_base(sw)->steps, 50);
    sim_sweep_destroy(sw);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lists),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_grid_order),
        cmocka_unit_test(test_zip_order),
        cmocka_unit_test(test_seeds),
        cmocka_unit_test(test_run_args),
        cmocka_unit_test(test_scenario_is_base_plus_args),
        cmocka_unit_test(test_set_overrides),
        cmocka_unit_test(test_errors_structure),
        cmocka_unit_test(test_errors_settings),
        cmocka_unit_test(test_errors_values),
        cmocka_unit_test(test_errors_runs),
        cmocka_unit_test(test_big_sweep),
        cmocka_unit_test(test_alloc_failures),
        cmocka_unit_test(test_json),
        cmocka_unit_test(test_assets),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
