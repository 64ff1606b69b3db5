/* test_models_library.c - the model library (assets/models) shows what each model is for. Every
 * shipped model runs on the CPU engine with its own parameters and seed, and its characteristic
 * behaviour is measured from the state and the statistics:
 *   segregation       like neighbours rise from about one half to at least 0.8;
 *   foraging          the population rises and settles around the carrying capacity that the
 *                     regrowth sets, on the fertile patches;
 *   wolf-sheep-grass  both populations cycle (two peaks or more each after the start's own)
 *                     and neither dies out, for the shipped seed and two others;
 *   maze              a majority reaches the exit room, and nobody ever stands on a wall;
 *   aggregation       agents cluster (shrunk to 128x128);
 *   laplace           the residual falls and the field converges to the discrete harmonic
 *                     solution (shrunk to 64x32).
 * And `horizon models` lists all six with their descriptions.
 *
 * The library is HZ_SOURCE_DIR/assets/models, or $HZ_MODELS_DIR when set: a modified copy (a
 * parameter perturbed) must make the test of that model fail. Everything runs on one thread; the
 * model engine gives the same bits for any thread count, so the numbers are the same anywhere. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "hz_test_util.h"
#include "sim.h"
#include "sim_model.h"

/* ---- Loading and stepping ---- */

static const char *library(void)
{
    const char *dir = getenv("HZ_MODELS_DIR");
    return dir && dir[0] ? dir : HZ_SOURCE_DIR "/assets/models";
}

/* The scenario of model `name` in directory dir with the NULL-terminated overrides `sets` (may
 * be NULL). */
static sim_scenario load_from(const char *dir, const char *name, const char *const *sets)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.ini", dir, name);
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_file(&sc, path, &err) != SIM_OK)
        fail_msg("%s", err.msg);
    for (int i = 0; sets && sets[i]; i++)
        if (sim_scenario_set(&sc, sets[i], &err) != SIM_OK)
            fail_msg("%s: %s", name, err.msg);
    return sc;
}

static sim_scenario load(const char *name, const char *const *sets)
{
    return load_from(library(), name, sets);
}

static sim *start(const sim_scenario *sc)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, sim_cpu_backend(), 1, &s, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    return s;
}

static void step(sim *s, sim_stats *st)
{
    if (sim_step(s, 1, st) != SIM_OK)
        fail_msg("step %lld: %s", (long long)sim_steps_done(s), sim_errmsg(s));
}

static sim_state read_state(sim *s)
{
    sim_state st;
    if (sim_read_state(s, &st) != SIM_OK)
        fail_msg("read_state: %s", sim_errmsg(s));
    return st;
}

/* ---- Measures of a state ---- */

/* The cell of (x + dx, y + dy), or -1 outside a bounded grid. */
static int64_t neighbour(const sim_model *m, int x, int y, int dx, int dy)
{
    int nx = x + dx, ny = y + dy;
    if (m->periodic) {
        nx = (nx + m->width) % m->width;
        ny = (ny + m->height) % m->height;
    } else if (nx < 0 || ny < 0 || nx >= m->width || ny >= m->height) {
        return -1;
    }
    return (int64_t)ny * m->width + nx;
}

typedef struct neighbourhood {
    double like;     /* mean over agents with an occupied neighbour: alike / occupied of the 8 */
    double occupied; /* the fraction of agents with at least one occupied neighbour */
} neighbourhood;

static neighbourhood neighbours(const sim_model *m, const sim_state *st)
{
    int *occ = malloc((size_t)st->cells * sizeof *occ);
    assert_non_null(occ);
    for (int64_t i = 0; i < st->cells; i++)
        occ[i] = -1;
    for (int64_t a = 0; a < st->n; a++)
        occ[st->cell[a]] = st->species[a];
    double like = 0.0;
    int64_t with = 0;
    for (int64_t a = 0; a < st->n; a++) {
        uint32_t cell = st->cell[a], w = (uint32_t)m->width;
        int x = (int)(cell % w), y = (int)(cell / w);
        int same = 0, taken = 0;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int64_t c = dx || dy ? neighbour(m, x, y, dx, dy) : -1;
                if (c >= 0 && occ[c] >= 0) {
                    taken++;
                    same += occ[c] == st->species[a];
                }
            }
        if (taken) {
            like += (double)same / taken;
            with++;
        }
    }
    free(occ);
    neighbourhood nb = {with ? like / (double)with : 0.0,
                        st->n ? (double)with / (double)st->n : 0.0};
    return nb;
}

/* The mean of v over the agents' cells, and over every cell. */
static double mean_at_agents(const sim_state *st, const float *v)
{
    double sum = 0.0;
    for (int64_t a = 0; a < st->n; a++)
        sum += v[st->cell[a]];
    return st->n ? sum / (double)st->n : 0.0;
}

static double mean_all(const sim_state *st, const float *v)
{
    double sum = 0.0;
    for (int64_t i = 0; i < st->cells; i++)
        sum += v[i];
    return sum / (double)st->cells;
}

/* ---- Peaks of a population series ----
 * A peak is robust when it stands out of the noise: the series is first smoothed by a centred
 * moving average of PEAK_WINDOW steps, then read with hysteresis: a maximum counts as a peak
 * once the series has fallen PEAK_DROP below it, and the next peak can only start after the
 * series has risen again by the same factor from its trough. Demographic noise of a few
 * hundred agents moves the smoothed series by well under 40%. */
#define PEAK_WINDOW 21
#define PEAK_DROP 0.4

static int count_peaks(const double *x, int n, int *first_at)
{
    double *sm = malloc((size_t)n * sizeof *sm);
    assert_non_null(sm);
    for (int i = 0; i < n; i++) {
        int lo = i - PEAK_WINDOW / 2 < 0 ? 0 : i - PEAK_WINDOW / 2;
        int hi = i + PEAK_WINDOW / 2 + 1 > n ? n : i + PEAK_WINDOW / 2 + 1;
        double sum = 0.0;
        for (int j = lo; j < hi; j++)
            sum += x[j];
        sm[i] = sum / (hi - lo);
    }
    int peaks = 0, rising = 1, top_at = 0;
    double top = sm[0], trough = sm[0];
    *first_at = -1;
    for (int i = 0; i < n; i++) {
        if (rising) {
            if (sm[i] > top) {
                top = sm[i];
                top_at = i;
            } else if (sm[i] < top * (1.0 - PEAK_DROP)) {
                if (peaks++ == 0)
                    *first_at = top_at;
                rising = 0;
                trough = sm[i];
            }
        } else if (sm[i] < trough) {
            trough = sm[i];
        } else if (sm[i] > trough / (1.0 - PEAK_DROP)) {
            rising = 1;
            top = sm[i];
            top_at = i;
        }
    }
    free(sm);
    return peaks;
}

/* ---- The models ---- */

/* Like meets like: the mean fraction of alike neighbours starts near 0.5 (two species of equal
 * numbers at random) and reaches 0.8 by the end of the shipped run. */
static void test_segregation(void **state)
{
    (void)state;
    sim_scenario sc = load("segregation", NULL);
    sim *s = start(&sc);
    const sim_model *m = sim_get_model(s);
    assert_int_equal(m->n_species, 2);
    sim_state st = read_state(s);
    neighbourhood before = neighbours(m, &st);
    sim_state_free(&st);
    sim_stats stats;
    for (int64_t k = 0; k < sc.steps; k++)
        step(s, &stats);
    st = read_state(s);
    neighbourhood after = neighbours(m, &st);
    int64_t n = st.n;
    sim_state_free(&st);
    sim_destroy(s);
    print_message("segregation: %lld agents, like neighbours %.3f -> %.3f in %lld steps\n",
                  (long long)n, before.like, after.like, (long long)sc.steps);
    if (fabs(before.like - 0.5) > 0.05)
        fail_msg("segregation: like neighbours at the start %.3f (expected 0.5 +- 0.05: a "
                 "random mix of two equal species)", before.like);
    if (after.like < 0.8)
        fail_msg("segregation: like neighbours %.3f after %lld steps (expected >= 0.8)",
                 after.like, (long long)sc.steps);
}

/* The population rises from its start, then settles around the carrying capacity
 * K = growth * (sum of the capacities) / metabolism: the food the land regrows per step over
 * what a forager burns. The foragers end on the fertile land. */
static void test_foraging(void **state)
{
    (void)state;
    sim_scenario sc = load("foraging", NULL);
    sim *s = start(&sc);
    const sim_model *m = sim_get_model(s);
    assert_int_equal(m->n_species, 1);
    const sim_model_species *sp = &m->species[0];
    int food = sp->uptake_field;
    assert_true(food >= 0 && m->field[food].growth > 0 && sp->metabolism > 0);
    sim_state st = read_state(s);
    assert_non_null(st.capacity[food]);
    double cap_mean = mean_all(&st, st.capacity[food]);
    double K = m->field[food].growth * cap_mean * (double)st.cells / sp->metabolism;
    int64_t n0 = st.n, top = n0, lo = INT64_MAX, hi = 0;
    sim_state_free(&st);
    double tail_sum = 0.0;
    int64_t tail_n = 0, half = sc.steps / 2;
    sim_stats stats;
    for (int64_t k = 1; k <= sc.steps; k++) {
        step(s, &stats);
        int64_t c = stats.species[0].count;
        top = c > top ? c : top;
        if (k > half) {
            lo = c < lo ? c : lo;
            hi = c > hi ? c : hi;
            tail_sum += (double)c;
            tail_n++;
        }
    }
    st = read_state(s);
    double cap_at = mean_at_agents(&st, st.capacity[food]);
    sim_state_free(&st);
    sim_destroy(s);
    double tail_mean = tail_sum / (double)tail_n;
    print_message("foraging: start %lld, peak %lld; steps %lld..%lld: %lld..%lld, mean %.1f; "
                  "carrying capacity %.1f; capacity under a forager %.3f, world mean %.3f\n",
                  (long long)n0, (long long)top, (long long)half + 1, (long long)sc.steps,
                  (long long)lo, (long long)hi, tail_mean, K, cap_at, cap_mean);
    if (top < 4 * n0)
        fail_msg("foraging: the population peaked at %lld from %lld (expected to rise to at "
                 "least 4x its start)", (long long)top, (long long)n0);
    if (fabs(tail_mean - K) > 0.15 * K)
        fail_msg("foraging: mean population %.1f over the second half (expected the carrying "
                 "capacity %.1f +- 15%%)", tail_mean, K);
    if ((double)lo < 0.75 * K || (double)hi > 1.25 * K)
        fail_msg("foraging: the population ranged over %lld..%lld in the second half "
                 "(expected inside %.0f..%.0f, the carrying capacity +- 25%%)", (long long)lo,
                 (long long)hi, 0.75 * K, 1.25 * K);
    if (cap_at < 4.0 * cap_mean)
        fail_msg("foraging: mean capacity under a forager %.3f (expected >= 4x the world's "
                 "mean %.3f: the foragers live where the food grows)", cap_at, cap_mean);
}

/* One run of wolf-sheep-grass: the counts of sheep and wolves every step; fails when either
 * dies out. */
static void predator_prey_run(const char *seed, int *sheep_peaks, int *wolf_peaks)
{
    const char *sets[] = {seed, NULL};
    sim_scenario sc = load("wolf-sheep-grass", seed ? sets : NULL);
    sim *s = start(&sc);
    const sim_model *m = sim_get_model(s);
    assert_int_equal(m->n_species, 2);
    assert_true(m->species[1].eats & 1u); /* species 1 (wolves) eats species 0 (sheep) */
    int n = (int)sc.steps + 1;
    double *pop[2];
    pop[0] = malloc((size_t)n * sizeof(double));
    pop[1] = malloc((size_t)n * sizeof(double));
    assert_true(pop[0] && pop[1]);
    double low[2];
    for (int p = 0; p < 2; p++)
        low[p] = pop[p][0] = (double)m->species[p].count;
    sim_stats stats;
    for (int k = 1; k < n; k++) {
        step(s, &stats);
        for (int p = 0; p < 2; p++) {
            pop[p][k] = (double)stats.species[p].count;
            low[p] = pop[p][k] < low[p] ? pop[p][k] : low[p];
            if (pop[p][k] == 0)
                fail_msg("wolf-sheep-grass (%s): the %s died out at step %d", seed ? seed :
                         "shipped seed", m->species_name[p], k);
        }
    }
    int first[2];
    *sheep_peaks = count_peaks(pop[0], n, &first[0]);
    *wolf_peaks = count_peaks(pop[1], n, &first[1]);
    print_message("wolf-sheep-grass (%s): %d steps; sheep low %.0f, %d peaks (first at %d); "
                  "wolves low %.0f, %d peaks (first at %d)\n", seed ? seed : "shipped seed",
                  n - 1, low[0], *sheep_peaks, first[0], low[1], *wolf_peaks, first[1]);
    free(pop[0]);
    free(pop[1]);
    sim_destroy(s);
}

/* The populations cycle: each has at least three robust peaks (see count_peaks) in the shipped
 * run, the first being the answer to the start (full grass, few wolves) and the others cycles;
 * neither species dies out. For the shipped seed and two others. */
static void test_wolf_sheep_grass(void **state)
{
    (void)state;
    const char *seeds[] = {NULL, "run.seed=2", "run.seed=3"};
    for (size_t i = 0; i < sizeof seeds / sizeof seeds[0]; i++) {
        int ps, pw;
        predator_prey_run(seeds[i], &ps, &pw);
        if (ps < 3 || pw < 3)
            fail_msg("wolf-sheep-grass (%s): %d sheep peaks and %d wolf peaks (expected >= 3 "
                     "each: smoothed over %d steps, each followed by a fall of %.0f%%)",
                     seeds[i] ? seeds[i] : "shipped seed", ps, pw, PEAK_WINDOW,
                     100 * PEAK_DROP);
    }
}

/* Path distances through the open cells (4-neighbour steps) from every source cell of field f;
 * -1 where no path leads. */
static int *path_distance(const sim_model *m, const sim_state *st, int f)
{
    int64_t cells = st->cells;
    int *dist = malloc((size_t)cells * sizeof *dist);
    int64_t *queue = malloc((size_t)cells * sizeof *queue);
    assert_true(dist && queue);
    int64_t head = 0, tail = 0;
    for (int64_t i = 0; i < cells; i++) {
        dist[i] = st->sources[f][i] ? 0 : -1;
        if (dist[i] == 0)
            queue[tail++] = i;
    }
    const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    while (head < tail) {
        int64_t c = queue[head++];
        int x = (int)(c % m->width), y = (int)(c / m->width);
        for (int d = 0; d < 4; d++) {
            int64_t j = neighbour(m, x, y, dx[d], dy[d]);
            if (j >= 0 && !st->walls[j] && dist[j] < 0) {
                dist[j] = dist[c] + 1;
                queue[tail++] = j;
            }
        }
    }
    free(queue);
    return dist;
}

/* The exit room: within this path distance of the food source. The source is a 4x4 patch in
 * the far corner of the 20x20 exit room, whose doorways lie 30 and more cells of path away. */
#define MAZE_EXIT_DISTANCE 30

/* A majority of the walkers reaches the exit room, the smell having reached the entrance
 * first; no walker ever stands on a wall. */
static void test_maze(void **state)
{
    (void)state;
    sim_scenario sc = load("maze", NULL);
    sim *s = start(&sc);
    const sim_model *m = sim_get_model(s);
    assert_int_equal(m->n_fields, 1);
    sim_state st = read_state(s);
    assert_non_null(st.walls);
    assert_non_null(st.sources[0]);
    int *dist = path_distance(m, &st, 0);
    int64_t n = st.n;
    uint32_t *start_cells = malloc((size_t)n * sizeof *start_cells);
    uint32_t *cells = malloc((size_t)n * sizeof *cells);
    assert_true(start_cells && cells);
    memcpy(start_cells, st.cell, (size_t)n * sizeof *start_cells);
    double start_dist = 0.0;
    for (int64_t a = 0; a < n; a++) {
        if (dist[st.cell[a]] < 0)
            fail_msg("maze: walker %lld starts at cell %u, from which no path leads to the "
                     "food", (long long)a, st.cell[a]);
        start_dist += dist[st.cell[a]];
    }
    start_dist /= (double)n;
    int64_t majority_at = -1;
    sim_stats stats;
    for (int64_t k = 1; k <= sc.steps; k++) {
        step(s, &stats);
        assert_int_equal(sim_agent_count(s), n); /* nobody is born or dies */
        assert_int_equal(sim_read_agents(s, cells), SIM_OK);
        int64_t in_exit = 0;
        for (int64_t a = 0; a < n; a++) {
            if (st.walls[cells[a]])
                fail_msg("maze: step %lld: walker %lld stands on a wall at (%u, %u)",
                         (long long)k, (long long)a, cells[a] % (uint32_t)m->width,
                         cells[a] / (uint32_t)m->width);
            in_exit += dist[cells[a]] <= MAZE_EXIT_DISTANCE;
        }
        if (majority_at < 0 && 2 * in_exit > n)
            majority_at = k;
    }
    sim_state end = read_state(s);
    /* the smell at the entrance (the walkers' starting cells), at the end */
    double smell = 0.0;
    for (int64_t a = 0; a < n; a++)
        smell += end.field[0][start_cells[a]];
    smell /= (double)n;
    int64_t in_exit = 0;
    double end_dist = 0.0;
    for (int64_t a = 0; a < n; a++) {
        in_exit += dist[end.cell[a]] <= MAZE_EXIT_DISTANCE;
        end_dist += dist[end.cell[a]];
    }
    end_dist /= (double)n;
    print_message("maze: %lld walkers, mean path distance to the food %.1f -> %.1f; in the exit "
                  "room after %lld steps: %lld (a majority from step %lld); smell at the "
                  "entrance %.3g\n", (long long)n, start_dist, end_dist, (long long)sc.steps,
                  (long long)in_exit, (long long)majority_at, smell);
    sim_state_free(&end);
    sim_state_free(&st);
    free(dist);
    free(cells);
    free(start_cells);
    sim_destroy(s);
    if (!(smell > 0.0))
        fail_msg("maze: no smell of food at the entrance after %lld steps (mean %.3g)",
                 (long long)sc.steps, smell);
    if (2 * in_exit <= n)
        fail_msg("maze: %lld of %lld walkers in the exit room (path distance <= %d from the "
                 "food) after %lld steps (expected a majority)", (long long)in_exit,
                 (long long)n, MAZE_EXIT_DISTANCE, (long long)sc.steps);
}

/* Agents cluster on their own trails: the fraction with an occupied neighbour rises from the
 * random value 1 - (1 - density)^8 to 0.9 or more, and the field under an agent ends at least
 * twice the field's mean. Shrunk from 512x512 to 128x128 and 300 steps. */
static void test_aggregation(void **state)
{
    (void)state;
    const char *sets[] = {"world.width=128", "world.height=128", "run.steps=300", NULL};
    sim_scenario sc = load("aggregation", sets);
    sim *s = start(&sc);
    const sim_model *m = sim_get_model(s);
    sim_state st = read_state(s);
    double density = (double)st.n / (double)st.cells;
    double random_value = 1.0 - pow(1.0 - density, 8);
    neighbourhood before = neighbours(m, &st);
    sim_state_free(&st);
    sim_stats stats;
    for (int64_t k = 0; k < sc.steps; k++)
        step(s, &stats);
    st = read_state(s);
    neighbourhood after = neighbours(m, &st);
    double at = mean_at_agents(&st, st.field[0]), mean = mean_all(&st, st.field[0]);
    sim_state_free(&st);
    sim_destroy(s);
    print_message("aggregation: density %.3f; with an occupied neighbour %.3f (random %.3f) -> "
                  "%.3f; field under an agent %.2f, mean %.2f\n", density, before.occupied,
                  random_value, after.occupied, at, mean);
    if (fabs(before.occupied - random_value) > 0.05)
        fail_msg("aggregation: %.3f of the agents start with an occupied neighbour (expected "
                 "the random value %.3f +- 0.05)", before.occupied, random_value);
    if (after.occupied < 0.9)
        fail_msg("aggregation: %.3f of the agents have an occupied neighbour after %lld steps "
                 "(expected >= 0.9, from the random %.3f)", after.occupied, (long long)sc.steps,
                 random_value);
    if (at < 2.0 * mean)
        fail_msg("aggregation: field under an agent %.3f (expected >= 2x the mean %.3f)", at,
                 mean);
}

/* The exact solution of the discrete problem that Jacobi relaxation converges to: on a w x h
 * grid with ghost cells at 100 above (row -1) and 0 elsewhere, by separation of variables in
 * the grid's own eigenvectors (sin in x; in y, sinh(mu (h - y)) with cosh mu = 2 - cos theta). */
static double harmonic(int w, int h, int x, int y)
{
    double v = 0.0;
    for (int k = 1; k <= w; k++) {
        double theta = k * M_PI / (w + 1);
        double coef = 0.0;
        for (int i = 0; i < w; i++)
            coef += sin(theta * (i + 1));
        coef *= 2.0 * 100.0 / (w + 1);
        double mu = acosh(2.0 - cos(theta));
        /* sinh(mu (h - y)) / sinh(mu (h + 1)), without overflow */
        double ratio = exp(-mu * (y + 1)) * (1.0 - exp(-2.0 * mu * (h - y))) /
                       (1.0 - exp(-2.0 * mu * (h + 1)));
        v += coef * sin(theta * (x + 1)) * ratio;
    }
    return v;
}

/* Shrunk to 64x32, the 10000 sweeps of the shipped 100 steps converge: the residual falls by
 * orders of magnitude, the field falls monotonically from the hot edge down the centre column
 * and matches the discrete harmonic solution. */
static void test_laplace(void **state)
{
    (void)state;
    enum { W = 64, H = 32 };
    const char *sets[] = {"world.width=64", "world.height=32", NULL};
    sim_scenario sc = load("laplace", sets);
    sim *s = start(&sc);
    sim_stats stats;
    float first = 0.0f;
    for (int64_t k = 0; k < sc.steps; k++) {
        step(s, &stats);
        if (k == 0)
            first = stats.residual;
    }
    float *t = malloc((size_t)W * H * sizeof *t);
    assert_non_null(t);
    assert_int_equal(sim_read_field(s, t), SIM_OK);
    sim_destroy(s);
    double err = 0.0;
    int err_x = 0, err_y = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            double d = fabs(t[y * W + x] - harmonic(W, H, x, y));
            if (d > err) {
                err = d;
                err_x = x;
                err_y = y;
            }
        }
    print_message("laplace: %dx%d, %lld sweeps: residual %.3g -> %.3g; centre column %.2f .. "
                  "%.3f; largest error against the harmonic solution %.2g at (%d, %d)\n", W, H,
                  (long long)(sc.steps * sc.sweeps), first, stats.residual, t[W / 2],
                  t[(H - 1) * W + W / 2], err, err_x, err_y);
    for (int y = 1; y < H; y++)
        if (!(t[y * W + W / 2] < t[(y - 1) * W + W / 2]))
            fail_msg("laplace: the centre column rises from row %d (%.4f) to row %d (%.4f)", y - 1,
                     t[(y - 1) * W + W / 2], y, t[y * W + W / 2]);
    free(t);
    if (!(stats.residual < first * 1e-3f))
        fail_msg("laplace: residual %.3g after %lld steps, %.3g after the first (expected to "
                 "fall by 1000x or more)", stats.residual, (long long)sc.steps, first);
    if (err > 0.01)
        fail_msg("laplace: the field differs from the harmonic solution by %.3g at (%d, %d) "
                 "(expected <= 0.01)", err, err_x, err_y);
}

/* ---- The library ---- */

static const char *const shipped[] = {"aggregation", "foraging", "laplace", "maze",
                                      "segregation", "wolf-sheep-grass"};
#define N_SHIPPED (sizeof shipped / sizeof shipped[0])

/* Every shipped model parses, has a one-line description and is listed by `horizon models`
 * with it: a line "  NAME  DESCRIPTION", the name padded to the longest one. The shipped
 * library, whatever HZ_MODELS_DIR says. */
static void test_library_listed(void **state)
{
    (void)state;
    char *listing = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&listing, &len);
    assert_non_null(out);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "HORIZON_DATA_DIR='%s/assets' '%s' models", HZ_SOURCE_DIR,
             HZ_BINARY);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, p)) > 0)
        fwrite(buf, 1, got, out);
    int rc = pclose(p);
    fclose(out);
    if (rc != 0)
        fail_msg("%s: exit status %d:\n%s", cmd, rc, listing);
    for (size_t i = 0; i < N_SHIPPED; i++) {
        sim_scenario sc = load_from(HZ_SOURCE_DIR "/assets/models", shipped[i], NULL);
        if (!sc.description[0] || strchr(sc.description, '\n'))
            fail_msg("%s: no one-line [model] description", shipped[i]);
        char head[64];
        snprintf(head, sizeof head, "\n  %s ", shipped[i]);
        const char *at = strstr(listing, head);
        const char *eol = at ? strchr(at + 1, '\n') : NULL;
        const char *desc = at ? at + strlen(head) : NULL;
        while (desc && *desc == ' ')
            desc++;
        if (!at || !eol || (size_t)(eol - desc) != strlen(sc.description) ||
            strncmp(desc, sc.description, strlen(sc.description)) != 0)
            fail_msg("horizon models does not list %s with \"%s\":\n%s", shipped[i],
                     sc.description, listing);
    }
    free(listing);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_library_listed),
        cmocka_unit_test(test_segregation),
        cmocka_unit_test(test_foraging),
        cmocka_unit_test(test_wolf_sheep_grass),
        cmocka_unit_test(test_maze),
        cmocka_unit_test(test_aggregation),
        cmocka_unit_test(test_laplace),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
