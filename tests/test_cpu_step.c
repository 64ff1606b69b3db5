/* test_cpu_step.c - the CPU backend's step: claims (one winner per cell, the highest claim key;
 * never into a cell occupied at the start of the step), argmax moves without noise, a whole
 * step against a reference step written here (positions, field bits, statistics), determinism
 * (same seed, 1 vs 2 threads, different seeds) and the checksum's sensitivity to every bit. */
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
#include "sim_rules.h"
#include "sim_world.h"

/* A quiet scenario: no noise, no deposit, no diffusion, no decay, field 0. */
static sim_scenario quiet(int w, int h, int boundary)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = w;
    sc.height = h;
    sc.boundary = boundary;
    sc.sweeps = 0;
    sc.decay = 0.0f;
    sc.deposit = 0.0f;
    sc.noise = 0.0;
    sc.radius = 0;
    sc.initial = 0.0f;
    sc.init_noise = 0.0f;
    return sc;
}

static sim *from_state(const sim_scenario *sc, int threads, int64_t step, const float *field,
                       const uint32_t *agents, int64_t n)
{
    sim_scenario s2 = *sc;
    s2.count = n;
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create_from_state(&s2, sim_cpu_backend(), threads, step, field, agents, n, &s, &err) !=
        SIM_OK)
        fail_msg("sim_create_from_state: %s", err.msg);
    return s;
}

static sim *create(const sim_scenario *sc, int threads)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, sim_cpu_backend(), threads, &s, &err) != SIM_OK)
        fail_msg("sim_create: %s", err.msg);
    return s;
}

static void step(sim *s, sim_stats *st)
{
    if (sim_step(s, 1, st) != SIM_OK)
        fail_msg("sim_step: %s", sim_errmsg(s));
}

static uint32_t cell(int w, int x, int y)
{
    return (uint32_t)(y * w + x);
}

static uint64_t key_of(uint64_t seed, int64_t stepno, uint32_t id)
{
    return sim_claim_key(sim_random(seed, (uint64_t)stepno, id, SIM_RNG_STEP), id);
}

/* Up to 8 agents around one rich empty cell all aim at it: exactly one moves, the one with the
 * highest claim key; the others stay. Over many seeds and step numbers. */
static void test_claims_highest_key_wins(void **state)
{
    (void)state;
    static const int around[8][2] = {{-1, -1}, {0, -1}, {1, -1}, {-1, 0},
                                     {1, 0},   {-1, 1}, {0, 1},  {1, 1}};
    const int w = 9, h = 9;
    float field[81] = {0};
    field[cell(w, 4, 4)] = 10.0f;
    int wins_first = 0, wins_other = 0;
    for (int n = 2; n <= 8; n++)
        for (uint64_t seed = 1; seed <= 40; seed++) {
            sim_scenario sc = quiet(w, h, (int)(seed % 3));
            sc.seed = seed * 0x9E3779B97F4A7C15ull;
            int64_t stepno = (int64_t)(seed * 7);
            uint32_t agents[8];
            for (int i = 0; i < n; i++)
                agents[i] = cell(w, 4 + around[i][0], 4 + around[i][1]);
            sim *s = from_state(&sc, 2, stepno, field, agents, n);
            sim_stats st;
            step(s, &st);
            uint32_t after[8];
            assert_int_equal(sim_read_agents(s, after), SIM_OK);
            int winner = 0;
            for (int i = 1; i < n; i++)
                if (key_of(sc.seed, stepno, (uint32_t)i) > key_of(sc.seed, stepno, (uint32_t)winner))
                    winner = i;
            for (int i = 0; i < n; i++)
                assert_int_equal(after[i], i == winner ? cell(w, 4, 4) : agents[i]);
            assert_int_equal(st.moved, 1);
            wins_first += winner == 0;
            wins_other += winner != 0;
            sim_destroy(s);
        }
    /* the key, not the id or the position, decides */
    assert_true(wins_first > 10 && wins_other > 10);
}

/* A chain: B moves on into an empty cell; A wants B's old cell, which was occupied at the start
 * of the step, so A stays although the cell is free after the step. */
static void test_no_move_into_cell_occupied_at_start(void **state)
{
    (void)state;
    const int w = 12, h = 9;
    float field[108];
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            field[y * w + x] = (float)(10 * x + (y == 4)); /* best: (x+1, 4) */
    sim_scenario sc = quiet(w, h, SIM_BOUNDARY_WALL);
    uint32_t agents[3] = {cell(w, 1, 4), cell(w, 2, 4), cell(w, 6, 4)};
    sim *s = from_state(&sc, 2, 0, field, agents, 3);
    sim_stats st;
    step(s, &st);
    uint32_t after[3];
    assert_int_equal(sim_read_agents(s, after), SIM_OK);
    assert_int_equal(after[0], cell(w, 1, 4));
    assert_int_equal(after[1], cell(w, 3, 4));
    assert_int_equal(after[2], cell(w, 7, 4));
    assert_int_equal(st.moved, 2);
    /* next step: A finds (2,4) empty at the start and moves */
    step(s, &st);
    assert_int_equal(sim_read_agents(s, after), SIM_OK);
    assert_int_equal(after[0], cell(w, 2, 4));
    assert_int_equal(after[1], cell(w, 4, 4));
    sim_destroy(s);
}

static int modp(int v, int n)
{
    return ((v % n) + n) % n;
}

/* Many noisy steps on a crowded grid: every move goes to a neighbour cell that was empty at the
 * start of the step, `moved` counts exactly the agents that changed cell, and the agents stay
 * on distinct cells. */
static void test_moves_are_legal(void **state)
{
    (void)state;
    for (int b = 0; b < 3; b++) {
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        sc.width = 31;
        sc.height = 23;
        sc.boundary = b;
        sc.count = 300; /* 42% of the cells */
        sc.radius = 2;
        sc.noise = 0.5;
        sc.seed = 5 + (uint64_t)b;
        sim *s = create(&sc, 2);
        const int w = sc.width, h = sc.height, cells = w * h;
        uint32_t before[300], after[300];
        uint8_t occ[31 * 23];
        int64_t total_moved = 0;
        assert_int_equal(sim_read_agents(s, before), SIM_OK);
        for (int k = 0; k < 60; k++) {
            memset(occ, 0, sizeof occ);
            for (int i = 0; i < 300; i++)
                occ[before[i]] = 1;
            sim_stats st;
            step(s, &st);
            assert_int_equal(sim_read_agents(s, after), SIM_OK);
            int64_t moved = 0;
            for (int i = 0; i < 300; i++) {
                assert_true((int)after[i] < cells);
                if (after[i] == before[i])
                    continue;
                moved++;
                if (occ[after[i]])
                    fail_msg("step %d: agent %d moved into cell %u, occupied at the start", k, i,
                             after[i]);
                int dx = (int)(after[i] % (uint32_t)w) - (int)(before[i] % (uint32_t)w);
                int dy = (int)(after[i] / (uint32_t)w) - (int)(before[i] / (uint32_t)w);
                if (b == SIM_BOUNDARY_PERIODIC) {
                    dx = modp(dx + 1, w) - 1;
                    dy = modp(dy + 1, h) - 1;
                }
                assert_true(dx >= -1 && dx <= 1 && dy >= -1 && dy <= 1);
            }
            assert_int_equal(st.moved, moved);
            sim_err err = {{0}};
            if (sim_world_check_agents(&sc, after, 300, 1, &err) != SIM_OK)
                fail_msg("step %d: %s", k, err.msg);
            total_moved += moved;
            memcpy(before, after, sizeof before);
        }
        assert_true(total_moved > 300); /* the test saw real movement */
        sim_destroy(s);
    }
}

/* ---- a reference step, written from the README's description of the model ---- */

static int64_t ref_fix(float f)
{
    if (isnan(f))
        return 0;
    double d = f > 2048.0f ? 2048.0 : f < -2048.0f ? -2048.0 : (double)f;
    return (int64_t)trunc(d * 4096.0);
}

static int64_t ref_disk(const sim_scenario *sc, const float *f, int x, int y)
{
    const int w = sc->width, h = sc->height, r = sc->radius;
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            int xx = x + dx, yy = y + dy;
            if (dx * dx + dy * dy > r * r)
                continue;
            if (sc->boundary == SIM_BOUNDARY_PERIODIC) {
                xx = modp(xx, w);
                yy = modp(yy, h);
            } else if (xx < 0 || yy < 0 || xx >= w || yy >= h) {
                continue;
            }
            sum += ref_fix(f[yy * w + xx]);
        }
    return sum;
}

/* stay, then the 8 neighbours row by row from the upper left */
static const int cand[9][2] = {{0, 0},  {-1, -1}, {0, -1}, {1, -1}, {-1, 0},
                               {1, 0},  {-1, 1},  {0, 1},  {1, 1}};

/* The cell agent at (x, y) aims at in step `stepno`, or -1 for "stay". */
static int64_t ref_target(const sim_scenario *sc, const float *f, int x, int y, int64_t stepno,
                          uint32_t id)
{
    const int w = sc->width, h = sc->height;
    const int periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    sim_u32x4 r = sim_random(sc->seed, (uint64_t)stepno, id, SIM_RNG_STEP);
    int best = 0;
    /* noise: the first word below noise * 2^32 picks candidate floor(second word * 9 / 2^32) */
    if ((uint64_t)r.v[0] < (uint64_t)(sc->noise * 4294967296.0)) {
        best = (int)(((uint64_t)r.v[1] * 9u) >> 32);
    } else {
        int64_t best_sum = 0;
        for (int c = 0; c < 9; c++) {
            int cx = x + cand[c][0], cy = y + cand[c][1];
            if (!periodic && (cx < 0 || cy < 0 || cx >= w || cy >= h))
                continue;
            int64_t s = ref_disk(sc, f, modp(cx, w), modp(cy, h));
            if (c == 0 || s > best_sum) {
                best = c;
                best_sum = s;
            }
        }
    }
    int tx = x + cand[best][0], ty = y + cand[best][1];
    if (periodic) {
        tx = modp(tx, w);
        ty = modp(ty, h);
    } else if (tx < 0 || ty < 0 || tx >= w || ty >= h) {
        return -1;
    }
    if (tx == x && ty == y)
        return -1;
    return (int64_t)ty * w + tx;
}

/* One sweep through a ghost ring (periodic: opposite edge; wall: the cell; fixed: the value). */
static float ref_sweep(const sim_scenario *sc, const float *src, float *dst)
{
    const int w = sc->width, h = sc->height;
    const float a = sc->diffusion, keep = 1.0f - sc->diffusion;
    float res = 0.0f;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float c = src[y * w + x], nb[4];
            static const int d[4][2] = {{0, -1}, {0, 1}, {1, 0}, {-1, 0}}; /* N S E W */
            for (int k = 0; k < 4; k++) {
                int xx = x + d[k][0], yy = y + d[k][1];
                if (xx >= 0 && yy >= 0 && xx < w && yy < h)
                    nb[k] = src[yy * w + xx];
                else if (sc->boundary == SIM_BOUNDARY_PERIODIC)
                    nb[k] = src[modp(yy, h) * w + modp(xx, w)];
                else if (sc->boundary == SIM_BOUNDARY_WALL)
                    nb[k] = c;
                else
                    nb[k] = yy < 0 ? sc->fixed_top : yy >= h ? sc->fixed_bottom
                            : xx < 0 ? sc->fixed_left : sc->fixed_right;
            }
            float v = keep * c + a * (((nb[0] + nb[1]) + (nb[2] + nb[3])) * 0.25f);
            dst[y * w + x] = v;
            if (fabsf(v - c) > res)
                res = fabsf(v - c);
        }
    return res;
}

typedef struct ref_state {
    float *f, *g;
    uint32_t *pos;
    int64_t n;
} ref_state;

/* sense, decide, move (claims), deposit, sweeps, decay; returns agents moved */
static int64_t ref_step(const sim_scenario *sc, ref_state *rs, int64_t stepno, float *residual)
{
    const int w = sc->width, cells = sc->width * sc->height;
    int32_t *occ = malloc((size_t)cells * sizeof *occ);
    uint64_t *best = calloc((size_t)cells, sizeof *best);
    int64_t *tgt = malloc((size_t)rs->n * sizeof *tgt);
    assert_non_null(occ);
    assert_non_null(best);
    assert_non_null(tgt);
    for (int i = 0; i < cells; i++)
        occ[i] = -1;
    for (int64_t i = 0; i < rs->n; i++)
        occ[rs->pos[i]] = (int32_t)i;
    for (int64_t i = 0; i < rs->n; i++) {
        int x = (int)(rs->pos[i] % (uint32_t)w), y = (int)(rs->pos[i] / (uint32_t)w);
        tgt[i] = ref_target(sc, rs->f, x, y, stepno, (uint32_t)i);
        if (tgt[i] >= 0 && occ[tgt[i]] >= 0)
            tgt[i] = -1; /* only cells empty at the start can be claimed */
        if (tgt[i] >= 0) {
            uint64_t k = key_of(sc->seed, stepno, (uint32_t)i);
            if (k > best[tgt[i]])
                best[tgt[i]] = k;
        }
    }
    int64_t moved = 0;
    for (int64_t i = 0; i < rs->n; i++)
        if (tgt[i] >= 0 && best[tgt[i]] == key_of(sc->seed, stepno, (uint32_t)i)) {
            rs->pos[i] = (uint32_t)tgt[i];
            moved++;
        }
    for (int64_t i = 0; i < rs->n; i++)
        rs->f[rs->pos[i]] = rs->f[rs->pos[i]] + sc->deposit;
    *residual = 0.0f;
    for (int k = 0; k < sc->sweeps; k++) {
        *residual = ref_sweep(sc, rs->f, rs->g);
        float *t = rs->f;
        rs->f = rs->g;
        rs->g = t;
    }
    if (sc->decay > 0.0f)
        for (int i = 0; i < cells; i++)
            rs->f[i] = rs->f[i] * (1.0f - sc->decay);
    free(occ);
    free(best);
    free(tgt);
    return moved;
}

/* The 9 candidate sums of the agent at `c` from the reference disk, as sim_horizon gives them. */
static void ref_candidates(const sim_scenario *sc, const float *f, uint32_t c, int64_t sums[9])
{
    const int w = sc->width, h = sc->height;
    const int x = (int)(c % (uint32_t)w), y = (int)(c / (uint32_t)w);
    for (int k = 0; k < 9; k++) {
        int cx = x + cand[k][0], cy = y + cand[k][1];
        if (sc->boundary != SIM_BOUNDARY_PERIODIC && (cx < 0 || cy < 0 || cx >= w || cy >= h))
            sums[k] = SIM_SUM_INVALID;
        else
            sums[k] = ref_disk(sc, f, modp(cx, w), modp(cy, h));
    }
}

/* The backend on `threads` threads against the reference, step by step: positions, field bits,
 * statistics; and, between steps, the horizon sums of some agents (a query builds the prefix
 * rows outside the step, in the backend's spare field buffer: the next step must not care). */
static void against_reference(sim_scenario sc, int threads, int steps)
{
    sim *s = create(&sc, threads);
    const int cells = sc.width * sc.height;
    ref_state rs;
    rs.n = sim_agent_count(s);
    rs.f = malloc((size_t)cells * sizeof(float));
    rs.g = malloc((size_t)cells * sizeof(float));
    rs.pos = malloc((size_t)(rs.n + 1) * sizeof(uint32_t));
    float *field = malloc((size_t)cells * sizeof(float));
    uint32_t *pos = malloc((size_t)(rs.n + 1) * sizeof(uint32_t));
    assert_true(rs.f && rs.g && rs.pos && field && pos);
    assert_int_equal(sim_read_field(s, rs.f), SIM_OK);
    assert_int_equal(sim_read_agents(s, rs.pos), SIM_OK);
    int64_t total_moved = 0;
    for (int k = 0; k < steps; k++) {
        float residual;
        int64_t moved = ref_step(&sc, &rs, k, &residual);
        sim_stats st;
        step(s, &st);
        assert_int_equal(sim_read_field(s, field), SIM_OK);
        assert_int_equal(sim_read_agents(s, pos), SIM_OK);
        for (int64_t i = 0; i < rs.n; i++)
            if (pos[i] != rs.pos[i])
                fail_msg("%s r=%d noise=%g step %d: agent %lld at %u, expected %u",
                         sim_boundary_name(sc.boundary), sc.radius, sc.noise, k, (long long)i,
                         pos[i], rs.pos[i]);
        for (int i = 0; i < cells; i++)
            if (memcmp(&field[i], &rs.f[i], sizeof(float)) != 0)
                fail_msg("%s step %d: cell %d is %.9g, expected %.9g",
                         sim_boundary_name(sc.boundary), k, i, (double)field[i],
                         (double)rs.f[i]);
        assert_int_equal(st.step, k + 1);
        assert_int_equal(st.agents, rs.n);
        assert_int_equal(st.moved, moved);
        assert_true(st.residual == residual);
        /* statistics of the field: total in double, mean, max */
        double total = 0.0;
        float mx = -INFINITY;
        for (int i = 0; i < cells; i++) {
            total += rs.f[i];
            mx = rs.f[i] > mx ? rs.f[i] : mx;
        }
        assert_true(fabs(st.field_total - total) <= 1e-9 * fabs(total) + 1e-9);
        assert_true(fabs(st.field_mean - st.field_total / cells) <= 1e-12 * fabs(st.field_mean));
        assert_true(st.field_max == mx);
        total_moved += moved;
        for (int64_t i = 0; i < rs.n; i += rs.n / 16 + 1) {
            int64_t got[9], want[9];
            assert_int_equal(sim_horizon(s, &pos[i], 1, got), SIM_OK);
            ref_candidates(&sc, rs.f, pos[i], want);
            for (int c = 0; c < 9; c++)
                if (got[c] != want[c])
                    fail_msg("%s r=%d step %d: agent %lld candidate %d sums %lld, expected %lld",
                             sim_boundary_name(sc.boundary), sc.radius, k, (long long)i, c,
                             (long long)got[c], (long long)want[c]);
        }
    }
    if (rs.n > 0 && cells > 1)
        assert_true(total_moved > 0); /* the comparison covered moves */
    free(rs.f);
    free(rs.g);
    free(rs.pos);
    free(field);
    free(pos);
    sim_destroy(s);
}

static void test_step_matches_reference(void **state)
{
    (void)state;
    for (int b = 0; b < 3; b++) {
        sim_scenario sc;
        sim_scenario_defaults(&sc);
        sc.width = 29;
        sc.height = 21;
        sc.boundary = b;
        sc.fixed_top = 5.0f;
        sc.fixed_left = -2.0f;
        sc.fixed_right = 1.5f;
        sc.count = 90;
        sc.radius = 3;
        sc.noise = 0.2;
        sc.deposit = 1.0f;
        sc.sweeps = 2;
        sc.decay = 0.05f;
        sc.diffusion = 0.6f;
        sc.seed = 1000 + (uint64_t)b;
        against_reference(sc, 2, 25);
        /* no noise, no diffusion: pure argmax climbing with deposits */
        sc.noise = 0.0;
        sc.sweeps = 0;
        sc.decay = 0.0f;
        sc.radius = 1;
        against_reference(sc, 2, 15);
        /* crowded, a wide horizon on a small grid, every move random */
        sc.count = 250;
        sc.radius = 9;
        sc.noise = 1.0;
        sc.sweeps = 1;
        against_reference(sc, 2, 10);
        /* sparse (under one agent in 40 cells): the backend's per-agent sums instead of the
         * dense pass, with a disk wider than the grid is tall */
        sc.width = 97;
        sc.height = 23;
        sc.count = 40;
        sc.radius = 13;
        sc.noise = 0.1;
        sc.sweeps = 2;
        against_reference(sc, 2, 12);
    }
    /* a one-row world and a one-cell world */
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 40;
    sc.height = 1;
    sc.count = 10;
    sc.radius = 2;
    against_reference(sc, 2, 10);
    sc.width = 1;
    sc.count = 1;
    against_reference(sc, 2, 3);
}

/* The fast path's own layout at the radii it is measured at: the prefix rows live in the spare
 * field buffer, which swaps with the field after an odd number of sweeps and is never swapped
 * with none. Every sweep count parity, r = 8 and 32 (a disk wider than the grid), all three
 * boundaries, dense and sparse agents (the dense rows and the per-agent sums), 1 and 2
 * threads, against the reference step. */
static void test_fast_path_matches_reference(void **state)
{
    (void)state;
    static const int radii[2] = {8, 32};
    for (int ri = 0; ri < 2; ri++)
        for (int b = 0; b < 3; b++)
            for (int sweeps = 0; sweeps <= 3; sweeps++)
                for (int threads = 1; threads <= 2; threads++) {
                    sim_scenario sc;
                    sim_scenario_defaults(&sc);
                    sc.width = 53;
                    sc.height = 37;
                    sc.boundary = b;
                    sc.fixed_top = 5.0f;
                    sc.fixed_left = -2.0f;
                    sc.radius = radii[ri];
                    sc.sweeps = sweeps;
                    /* dense (1 in 20) or sparse (1 in 60), each with both parities */
                    sc.count = (b + sweeps) % 2 ? 32 : 100;
                    sc.seed = 7 + (uint64_t)(ri * 100 + b * 10 + sweeps);
                    against_reference(sc, threads, 5);
                }
}

/* noise = 0 and agents far apart: each moves to the argmax of its 9 horizon sums. */
static void test_noise_zero_argmax(void **state)
{
    (void)state;
    for (int b = 0; b < 2; b++) {
        sim_scenario sc = quiet(40, 40, b ? SIM_BOUNDARY_WALL : SIM_BOUNDARY_PERIODIC);
        sc.radius = 2;
        float field[1600];
        hz_rng r = {17 + (uint64_t)b};
        for (int i = 0; i < 1600; i++)
            field[i] = hz_uniform(&r, 0.0f, 1.0f);
        uint32_t agents[100];
        int n = 0;
        for (int y = 0; y < 40; y += 4) /* 4 apart: targets never collide */
            for (int x = 0; x < 40; x += 4)
                agents[n++] = cell(40, x, y);
        sim *s = from_state(&sc, 2, 0, field, agents, n);
        /* the backend's candidate sums equal the brute-force ones */
        int64_t sums[9 * 100];
        assert_int_equal(sim_horizon(s, agents, n, sums), SIM_OK);
        sim_stats st;
        step(s, &st);
        uint32_t after[100];
        assert_int_equal(sim_read_agents(s, after), SIM_OK);
        int moved = 0;
        for (int i = 0; i < n; i++) {
            int x = (int)agents[i] % 40, y = (int)agents[i] / 40;
            int best = 0;
            int64_t best_sum = 0;
            for (int c = 0; c < 9; c++) {
                int cx = x + cand[c][0], cy = y + cand[c][1];
                int64_t want;
                if (b && (cx < 0 || cy < 0 || cx >= 40 || cy >= 40)) {
                    want = SIM_SUM_INVALID;
                } else {
                    want = ref_disk(&sc, field, modp(cx, 40), modp(cy, 40));
                    if (c == 0 || want > best_sum) {
                        best = c;
                        best_sum = want;
                    }
                }
                assert_true(sums[9 * i + c] == want);
            }
            uint32_t expect = cell(40, modp(x + cand[best][0], 40), modp(y + cand[best][1], 40));
            assert_int_equal(after[i], expect);
            moved += best != 0;
        }
        assert_int_equal(st.moved, moved);
        assert_true(moved > n / 2);
        sim_destroy(s);
    }
}

/* The checksum of a state recomputed here from the README's definition (the cells' terms
 * written out from its text; the agents' from sim_checksum_agent). */
static uint64_t ref_checksum(const float *f, int64_t cells, const uint32_t *pos, int64_t n)
{
    uint64_t sum = 0;
    for (int64_t i = 0; i < cells; i++) {
        uint32_t bits;
        memcpy(&bits, &f[i], sizeof bits);
        const uint64_t g = (uint64_t)i * 0x9E3779B97F4A7C15ull;
        sum += (uint64_t)(bits ^ (uint32_t)(g >> 32)) * (uint64_t)((uint32_t)g | 1u);
    }
    for (int64_t i = 0; i < n; i++)
        sum += sim_checksum_agent((uint32_t)i, pos[i]);
    return sum;
}

static sim_scenario busy(void)
{
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sc.width = 160;
    sc.height = 120;
    sc.count = 3000; /* more agents than one OpenMP chunk */
    sc.radius = 4;
    sc.noise = 0.2;
    sc.sweeps = 2;
    sc.seed = 42;
    return sc;
}

/* Runs `steps` steps and records the checksum of each. */
static void checksums(const sim_scenario *sc, int threads, int steps, uint64_t *out)
{
    sim *s = create(sc, threads);
    for (int k = 0; k < steps; k++) {
        sim_stats st;
        step(s, &st);
        out[k] = st.checksum;
        uint64_t again;
        assert_int_equal(sim_checksum(s, &again), SIM_OK);
        assert_true(again == st.checksum);
    }
    sim_destroy(s);
}

static void test_same_seed_same_checksums(void **state)
{
    (void)state;
    sim_scenario sc = busy();
    uint64_t a[30], b[30];
    checksums(&sc, 2, 30, a);
    checksums(&sc, 2, 30, b);
    for (int k = 0; k < 30; k++)
        if (a[k] != b[k])
            fail_msg("step %d: %016llx vs %016llx", k + 1, (unsigned long long)a[k],
                     (unsigned long long)b[k]);
}

static void test_threads_same_checksums(void **state)
{
    (void)state;
    for (int b = 0; b < 3; b++) {
        sim_scenario sc = busy();
        sc.boundary = b;
        sc.fixed_top = 3.0f;
        uint64_t one[30], two[30], three[30];
        checksums(&sc, 1, 30, one);
        checksums(&sc, 2, 30, two);
        checksums(&sc, 3, 30, three);
        for (int k = 0; k < 30; k++)
            if (one[k] != two[k] || one[k] != three[k])
                fail_msg("%s step %d: 1 thread %016llx, 2 threads %016llx, 3 threads %016llx",
                         sim_boundary_name(b), k + 1, (unsigned long long)one[k],
                         (unsigned long long)two[k], (unsigned long long)three[k]);
    }
}

static void test_different_seeds_differ(void **state)
{
    (void)state;
    sim_scenario sc = busy();
    uint64_t a[10], b[10];
    checksums(&sc, 2, 10, a);
    sc.seed = 43;
    checksums(&sc, 2, 10, b);
    for (int k = 0; k < 10; k++)
        assert_true(a[k] != b[k]);
}

/* The checksum is the documented sum, and any change of any bit of the state shows. */
static void test_checksum_sensitivity(void **state)
{
    (void)state;
    sim_scenario sc = busy();
    sc.width = 48;
    sc.height = 40;
    sc.count = 200;
    const int cells = 48 * 40;
    sim *s = create(&sc, 2);
    for (int k = 0; k < 3; k++) {
        sim_stats st;
        step(s, &st);
    }
    float *field = malloc(cells * sizeof *field);
    uint32_t pos[200];
    assert_non_null(field);
    assert_int_equal(sim_read_field(s, field), SIM_OK);
    assert_int_equal(sim_read_agents(s, pos), SIM_OK);
    uint64_t base;
    assert_int_equal(sim_checksum(s, &base), SIM_OK);
    assert_true(base == ref_checksum(field, cells, pos, 200));
    sim_destroy(s);

    /* a copy of the state has the same checksum */
    s = from_state(&sc, 2, 3, field, pos, 200);
    uint64_t c;
    assert_int_equal(sim_checksum(s, &c), SIM_OK);
    assert_true(c == base);
    sim_destroy(s);

    /* every single bit of some cells */
    hz_rng r = {8};
    for (int t = 0; t < 64; t++) {
        int i = (int)hz_below(&r, (uint64_t)cells);
        for (int bit = 0; bit < 32; bit++) {
            uint32_t bits;
            memcpy(&bits, &field[i], 4);
            bits ^= 1u << bit;
            float saved = field[i];
            memcpy(&field[i], &bits, 4);
            s = from_state(&sc, 2, 3, field, pos, 200);
            assert_int_equal(sim_checksum(s, &c), SIM_OK);
            if (c == base)
                fail_msg("flipping bit %d of cell %d leaves the checksum unchanged", bit, i);
            sim_destroy(s);
            field[i] = saved;
        }
    }
    /* two cells swapping their values, for some pairs of different values */
    for (int t = 0; t < 64; t++) {
        int i = (int)hz_below(&r, (uint64_t)cells), j = (int)hz_below(&r, (uint64_t)cells);
        if (memcmp(&field[i], &field[j], sizeof(float)) == 0)
            continue;
        float fi = field[i];
        field[i] = field[j];
        field[j] = fi;
        s = from_state(&sc, 2, 3, field, pos, 200);
        assert_int_equal(sim_checksum(s, &c), SIM_OK);
        if (c == base)
            fail_msg("swapping cells %d and %d leaves the checksum unchanged", i, j);
        sim_destroy(s);
        field[j] = field[i];
        field[i] = fi;
    }
    /* an agent moved to an empty cell, and two agents swapping cells */
    uint8_t occ[48 * 40] = {0};
    for (int i = 0; i < 200; i++)
        occ[pos[i]] = 1;
    uint32_t free_cell = 0;
    while (occ[free_cell])
        free_cell++;
    uint32_t moved[200];
    memcpy(moved, pos, sizeof moved);
    moved[17] = free_cell;
    s = from_state(&sc, 2, 3, field, moved, 200);
    assert_int_equal(sim_checksum(s, &c), SIM_OK);
    assert_true(c != base);
    sim_destroy(s);
    memcpy(moved, pos, sizeof moved);
    moved[3] = pos[4];
    moved[4] = pos[3];
    s = from_state(&sc, 2, 3, field, moved, 200);
    assert_int_equal(sim_checksum(s, &c), SIM_OK);
    assert_true(c != base);
    sim_destroy(s);
    free(field);
}

/* sim_colsum_exact: columns of h floats whose exponents span exactly the bound it allows
 * (random signs and mantissas, the largest magnitude's cells many) pass it, and their sums in row
 * order, in reverse order and pairwise are the same bits, as its reasoning says every order
 * gives; one binade more, a NaN or an infinity fails it; zeros alone pass. */
static double sum_pairwise(const float *v, int n)
{
    if (n == 1)
        return (double)v[0];
    return sum_pairwise(v, n / 2) + sum_pairwise(v + n / 2, n - n / 2);
}

static void test_colsum_exact(void **state)
{
    (void)state;
    static const int heights[] = {1, 2, 3, 7, 64, 1000, 1100, 4096};
    hz_rng r = {77};
    float *v = malloc(4096 * sizeof *v);
    assert_non_null(v);
    for (size_t k = 0; k < sizeof heights / sizeof heights[0]; k++) {
        const int h = heights[k];
        int lg = 0;
        while ((1 << lg) < h)
            lg++;
        const int span = 29 - lg;
        for (int emax = span + 2; emax <= 254; emax += 37) {
            const int emin = emax - span;
            uint32_t hi = 0, lo = 0;
            for (int trial = 0; trial < 20; trial++) {
                for (int i = 0; i < h; i++) {
                    /* half the cells at the top of the largest binade, the rest anywhere */
                    const uint32_t e = (i % 2 == 0 && trial % 2 == 0)
                                           ? (uint32_t)emax
                                           : (uint32_t)emin + (uint32_t)hz_below(&r, (uint64_t)span + 1);
                    const uint32_t mant = (i % 2 == 0 && trial % 2 == 0)
                                              ? 0x7fffffu
                                              : (uint32_t)hz_below(&r, 1u << 23);
                    uint32_t bits = (e << 23) | mant | ((uint32_t)hz_below(&r, 2) << 31);
                    if (i == h - 1)
                        bits = ((uint32_t)emin << 23) | 1u; /* the smallest unit in the column */
                    memcpy(&v[i], &bits, 4);
                    const uint32_t m = bits & 0x7fffffffu;
                    hi = m > hi ? m : hi;
                    lo = (0u - m) > lo ? (0u - m) : lo;
                }
                assert_true(sim_colsum_exact(hi, lo, h));
                double fwd = 0.0, rev = 0.0;
                for (int i = 0; i < h; i++)
                    fwd += (double)v[i];
                for (int i = h - 1; i >= 0; i--)
                    rev += (double)v[i];
                const double pw = sum_pairwise(v, h);
                assert_memory_equal(&fwd, &rev, sizeof fwd);
                assert_memory_equal(&fwd, &pw, sizeof fwd);
            }
            /* one binade more than allowed */
            assert_false(sim_colsum_exact(((uint32_t)emax << 23), 0u - ((uint32_t)(emin - 1) << 23),
                                          h));
        }
        assert_true(sim_colsum_exact(0u, 0u, h));
        assert_false(sim_colsum_exact(0x7f800000u, 0u - 0x3f800000u, h)); /* an infinity */
        assert_false(sim_colsum_exact(0x7fc00000u, 0u - 0x3f800000u, h)); /* a NaN */
    }
    free(v);
}

/* The field's max: NaN never enters, and -0 ranks below +0, so a maximum of zero is +0 when any
 * cell holds +0, wherever it sits: before or after a -0 in order, in another of the backend's 16
 * lanes (cells 6 and 18), in the cells after the last 16 (cell 100), or in another thread's share
 * (1, 2 and 3 threads); NaNs of both signs never count. A world of 37 x 3 cells with no sweeps,
 * decay or agents, so the step leaves the field as it was. */
static void test_max_zero_sign(void **state)
{
    (void)state;
    sim_scenario sc = quiet(37, 3, SIM_BOUNDARY_PERIODIC);
    const int cells = 37 * 3;
    float field[37 * 3];
    uint32_t none[1] = {0};
    const struct {
        int neg_zero, pos_zero, big; /* cell of -0, of +0, of 2.5; -1: none */
        float want;
    } cases[] = {
        {6, 18, -1, 0.0f},   {18, 6, -1, 0.0f},   {100, 20, -1, 0.0f}, {20, 100, -1, 0.0f},
        {5, -1, -1, -0.0f},  {108, -1, -1, -0.0f}, {5, 70, 110, 2.5f}, {-1, -1, 33, 2.5f},
        {-1, -1, -1, -1.0f},
    };
    for (int threads = 1; threads <= 3; threads++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            for (int i = 0; i < cells; i++)
                field[i] = i % 7 == 3 ? NAN : i % 11 == 5 ? -NAN : -1.0f - (float)(i % 5);
            if (cases[c].neg_zero >= 0)
                field[cases[c].neg_zero] = -0.0f;
            if (cases[c].pos_zero >= 0)
                field[cases[c].pos_zero] = 0.0f;
            if (cases[c].big >= 0)
                field[cases[c].big] = 2.5f;
            sim *s = from_state(&sc, threads, 0, field, none, 0);
            sim_stats st;
            step(s, &st);
            if (memcmp(&st.field_max, &cases[c].want, sizeof(float)) != 0)
                fail_msg("%d threads, case %zu: max %g (sign %d), expected %g (sign %d)", threads,
                         c, (double)st.field_max, signbit(st.field_max) != 0,
                         (double)cases[c].want, signbit(cases[c].want) != 0);
            sim_destroy(s);
        }
    /* every cell NaN, of either sign: nothing enters */
    for (int i = 0; i < cells; i++)
        field[i] = i % 2 ? NAN : -NAN;
    sim *s = from_state(&sc, 1, 0, field, none, 0);
    sim_stats st;
    step(s, &st);
    assert_true(isinf(st.field_max) && st.field_max < 0.0f);
    sim_destroy(s);
}

/* A bad saved state is refused with a message, never run. */
static void test_create_from_bad_state(void **state)
{
    (void)state;
    sim_scenario sc = quiet(8, 8, SIM_BOUNDARY_PERIODIC);
    sc.count = 3;
    float field[64] = {0};
    uint32_t dup[3] = {1, 2, 1}, outside[3] = {1, 2, 64};
    sim *s = NULL;
    sim_err err = {{0}};
    assert_int_equal(sim_create_from_state(&sc, sim_cpu_backend(), 1, 0, field, dup, 3, &s, &err),
                     SIM_EINVAL);
    assert_null(s);
    assert_true(err.msg[0] != '\0');
    assert_int_equal(
        sim_create_from_state(&sc, sim_cpu_backend(), 1, 0, field, outside, 3, &s, &err),
        SIM_EINVAL);
    assert_null(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_claims_highest_key_wins),
        cmocka_unit_test(test_no_move_into_cell_occupied_at_start),
        cmocka_unit_test(test_moves_are_legal),
        cmocka_unit_test(test_step_matches_reference),
        cmocka_unit_test(test_fast_path_matches_reference),
        cmocka_unit_test(test_noise_zero_argmax),
        cmocka_unit_test(test_same_seed_same_checksums),
        cmocka_unit_test(test_threads_same_checksums),
        cmocka_unit_test(test_different_seeds_differ),
        cmocka_unit_test(test_checksum_sensitivity),
        cmocka_unit_test(test_max_zero_sign),
        cmocka_unit_test(test_colsum_exact),
        cmocka_unit_test(test_create_from_bad_state),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
