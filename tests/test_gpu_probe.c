/* test_gpu_probe.c - the viewer's reads on the CUDA backend (sim_region_sums, sim_read_cells,
 * sim_agent_cells, gpu_probe.cu) against the CPU backend's, which test_probe.c checks against
 * the brute force: the same scenario and seed, a few steps and a brush, then every read compared
 * bit for bit. Odd sizes, disks wider than the world, r = 0, 5, 8, 33, periodic, wall and fixed
 * boundaries, empty to full worlds, dense and sparse samples, the agent scan (few cells) and the
 * cell map (many), and a 1920x1080 region of a 2048x1200 world. The reads must leave the state
 * alone: both backends step on to the same checksum. Skipped (77) without a usable GPU. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gpu_backend.h"
#include "hz_test_util.h"
#include "sim.h"

static sim *make(const sim_backend_ops *ops, const sim_scenario *sc, int steps,
                 const char *label)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, ops, 2, &s, &err) != SIM_OK)
        fail_msg("%s: %s create: %s", label, ops->name, err.msg);
    for (int k = 0; k < steps; k++) {
        sim_stats st;
        if (sim_step(s, 0, &st) != SIM_OK)
            fail_msg("%s: %s step %d: %s", label, ops->name, k, sim_errmsg(s));
    }
    /* A brush after the steps: the reads must see the field as it is now. */
    if (sim_paint(s, sc->width / 3, sc->height / 2, 3, 2.5f) != SIM_OK)
        fail_msg("%s: %s paint: %s", label, ops->name, sim_errmsg(s));
    return s;
}

static void region_pair(sim *c, sim *g, const int32_t *xs, int nx, const int32_t *ys, int ny,
                        const char *label, const char *what)
{
    size_t n = (size_t)nx * (size_t)ny;
    int64_t *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    assert_true(a && b);
    memset(b, 0xa5, n * sizeof *b);
    if (sim_region_sums(c, xs, nx, ys, ny, a) != SIM_OK)
        fail_msg("%s: %s: cpu region_sums: %s", label, what, sim_errmsg(c));
    if (sim_region_sums(g, xs, nx, ys, ny, b) != SIM_OK)
        fail_msg("%s: %s: cuda region_sums: %s", label, what, sim_errmsg(g));
    for (size_t i = 0; i < n; i++)
        if (a[i] != b[i])
            fail_msg("%s: %s (%dx%d samples): at (%d, %d): cpu %lld cuda %lld", label, what, nx,
                     ny, xs[i % (size_t)nx], ys[i / (size_t)nx], (long long)a[i],
                     (long long)b[i]);
    free(a);
    free(b);
}

/* Every column (or row) from lo, stepping by `step`, below hi: returns the count. */
static int axis(int lo, int hi, int step, int32_t *out)
{
    int k = 0;
    for (int v = lo; v < hi; v += step)
        out[k++] = v;
    return k;
}

static void regions(sim *c, sim *g, int w, int h, hz_rng *rng, const char *label)
{
    int32_t *xs = malloc((size_t)w * sizeof *xs), *ys = malloc((size_t)h * sizeof *ys);
    assert_true(xs && ys);
    int nx = axis(0, w, 1, xs), ny = axis(0, h, 1, ys);
    region_pair(c, g, xs, nx, ys, ny, label, "every cell");
    nx = axis(w / 4, w, 3, xs);
    ny = axis(h / 5, h, 2, ys);
    region_pair(c, g, xs, nx, ys, ny, label, "every 3rd column, 2nd row");
    xs[0] = (int32_t)hz_below(rng, (uint64_t)w);
    ys[0] = (int32_t)hz_below(rng, (uint64_t)h);
    region_pair(c, g, xs, 1, ys, 1, label, "one cell");
    nx = 0;
    for (int x = 0; x < w; x++)
        if (x == 0 || x == w - 1 || hz_below(rng, 7) == 0)
            xs[nx++] = x;
    ny = 0;
    for (int y = 0; y < h; y++)
        if (y == 0 || y == h - 1 || hz_below(rng, 5) == 0)
            ys[ny++] = y;
    region_pair(c, g, xs, nx, ys, ny, label, "random with the edges");
    free(xs);
    free(ys);
}

static void cells_pair(sim *c, sim *g, const uint32_t *q, int64_t n, const char *label,
                       const char *what)
{
    float *va = malloc((size_t)n * sizeof *va), *vb = malloc((size_t)n * sizeof *vb);
    int64_t *aa = malloc((size_t)n * sizeof *aa), *ab = malloc((size_t)n * sizeof *ab);
    assert_true(va && vb && aa && ab);
    memset(ab, 0xa5, (size_t)n * sizeof *ab);
    if (sim_read_cells(c, q, n, va, aa) != SIM_OK)
        fail_msg("%s: %s: cpu read_cells: %s", label, what, sim_errmsg(c));
    if (sim_read_cells(g, q, n, vb, ab) != SIM_OK)
        fail_msg("%s: %s: cuda read_cells: %s", label, what, sim_errmsg(g));
    for (int64_t i = 0; i < n; i++)
        if (memcmp(&va[i], &vb[i], sizeof va[i]) != 0 || aa[i] != ab[i])
            fail_msg("%s: %s (%lld cells): cell %u: cpu %.9g agent %lld, cuda %.9g agent %lld",
                     label, what, (long long)n, q[i], (double)va[i], (long long)aa[i],
                     (double)vb[i], (long long)ab[i]);
    free(va);
    free(vb);
    free(aa);
    free(ab);
}

static void probes(sim *c, sim *g, hz_rng *rng, const char *label)
{
    const sim_scenario *sc = sim_get_scenario(c);
    const int64_t cells = (int64_t)sc->width * sc->height, n = sim_agent_count(c);
    uint32_t *pos = malloc((size_t)(n + 1) * sizeof *pos);
    uint32_t *q = malloc((size_t)(cells + 200) * sizeof *q);
    assert_true(pos && q);
    assert_int_equal(sim_read_agents(c, pos), SIM_OK);
    /* Few cells (the agent scan), with an agent's cell among them when there is one. */
    static const int64_t few[] = {1, 5, 64};
    for (int k = 0; k < 3; k++) {
        for (int64_t i = 0; i < few[k]; i++)
            q[i] = (uint32_t)hz_below(rng, (uint64_t)cells);
        if (n > 0)
            q[few[k] - 1] = pos[hz_below(rng, (uint64_t)n)];
        cells_pair(c, g, q, few[k], label, "few cells");
    }
    /* Many (the cell map): every cell, then random ones with repeats. */
    int64_t m = 0;
    for (int64_t i = 0; i < cells; i++)
        q[m++] = (uint32_t)i;
    for (int i = 0; i < 200; i++)
        q[m++] = (uint32_t)hz_below(rng, (uint64_t)cells);
    cells_pair(c, g, q, m, label, "every cell");
    cells_pair(c, g, q + cells, 65, label, "65 random cells");

    if (n > 0) {
        int64_t ids_n = n < 1000 ? n : 1000;
        int64_t *ids = malloc((size_t)ids_n * sizeof *ids);
        uint32_t *a = malloc((size_t)ids_n * sizeof *a), *b = malloc((size_t)ids_n * sizeof *b);
        assert_true(ids && a && b);
        for (int64_t i = 0; i < ids_n; i++)
            ids[i] = i == 0 ? n - 1 : (int64_t)hz_below(rng, (uint64_t)n);
        static const int64_t counts[] = {1, 3, 0};
        for (int k = 0; k < 3; k++) {
            int64_t cnt = counts[k] ? counts[k] : ids_n;
            if (cnt > ids_n)
                cnt = ids_n;
            if (sim_agent_cells(c, ids, cnt, a) != SIM_OK)
                fail_msg("%s: cpu agent_cells: %s", label, sim_errmsg(c));
            if (sim_agent_cells(g, ids, cnt, b) != SIM_OK)
                fail_msg("%s: cuda agent_cells: %s", label, sim_errmsg(g));
            for (int64_t i = 0; i < cnt; i++)
                if (a[i] != b[i] || a[i] != pos[ids[i]])
                    fail_msg("%s: agent %lld: cpu %u cuda %u read_agents %u", label,
                             (long long)ids[i], a[i], b[i], pos[ids[i]]);
        }
        free(ids);
        free(a);
        free(b);
    }
    free(pos);
    free(q);
}

/* Both backends step on from here to the same checksum: the reads changed nothing. */
static void step_on(sim *c, sim *g, const char *label)
{
    sim_stats a, b;
    assert_int_equal(sim_step(c, 1, &a), SIM_OK);
    if (sim_step(g, 1, &b) != SIM_OK)
        fail_msg("%s: cuda step after the reads: %s", label, sim_errmsg(g));
    if (a.checksum != b.checksum || a.moved != b.moved)
        fail_msg("%s: after the reads: checksum cpu %016llx cuda %016llx", label,
                 (unsigned long long)a.checksum, (unsigned long long)b.checksum);
}

static void scenario(sim_scenario *sc, int w, int h, int boundary, int r, double density,
                     uint64_t seed)
{
    sim_scenario_defaults(sc);
    sc->width = w;
    sc->height = h;
    sc->boundary = boundary;
    sc->radius = r;
    sc->count = -1;
    sc->density = density;
    sc->seed = seed;
    sc->init_noise = 0.5f;
}

static void test_small_worlds(void **state)
{
    (void)state;
    static const int sizes[][2] = {{37, 23}, {5, 5}, {131, 77}, {1, 9}};
    static const int radii[] = {0, 5, 8, 33};
    static const int boundaries[] = {SIM_BOUNDARY_PERIODIC, SIM_BOUNDARY_WALL,
                                     SIM_BOUNDARY_FIXED};
    static const double densities[] = {0.3, 0.0, 1.0, 0.02};
    hz_rng rng = {0xc0ffee};
    int k = 0;
    for (int si = 0; si < 4; si++)
        for (int ri = 0; ri < 4; ri++)
            for (int bi = 0; bi < 3; bi++, k++) {
                sim_scenario sc;
                scenario(&sc, sizes[si][0], sizes[si][1], boundaries[bi], radii[ri],
                         densities[k % 4], 100 + (uint64_t)k);
                char label[96];
                snprintf(label, sizeof label, "%dx%d r=%d boundary %d density %g", sc.width,
                         sc.height, sc.radius, sc.boundary, sc.density);
                sim *c = make(sim_cpu_backend(), &sc, 3, label);
                sim *g = make(gpu_cuda_backend(), &sc, 3, label);
                regions(c, g, sc.width, sc.height, &rng, label);
                probes(c, g, &rng, label);
                step_on(c, g, label);
                sim_destroy(c);
                sim_destroy(g);
            }
}

/* The viewer's case: a full-HD region of a larger world, at one cell a pixel and shrunk. */
static void test_full_hd_region(void **state)
{
    (void)state;
    static const int radii[] = {8, 33};
    static const int boundaries[] = {SIM_BOUNDARY_PERIODIC, SIM_BOUNDARY_WALL};
    hz_rng rng = {99};
    int32_t *xs = malloc(2048 * sizeof *xs), *ys = malloc(1200 * sizeof *ys);
    assert_true(xs && ys);
    for (int k = 0; k < 2; k++) {
        sim_scenario sc;
        scenario(&sc, 2048, 1200, boundaries[k], radii[k], 0.05, 7 + (uint64_t)k);
        char label[64];
        snprintf(label, sizeof label, "2048x1200 r=%d boundary %d", sc.radius, sc.boundary);
        sim *c = make(sim_cpu_backend(), &sc, 2, label);
        sim *g = make(gpu_cuda_backend(), &sc, 2, label);
        /* 1920x1080 cells touching the right and top edges, then the left and bottom ones. */
        int nx = axis(128, 2048, 1, xs), ny = axis(0, 1080, 1, ys);
        region_pair(c, g, xs, nx, ys, ny, label, "1920x1080 at (128, 0)");
        nx = axis(0, 1920, 1, xs);
        ny = axis(120, 1200, 1, ys);
        region_pair(c, g, xs, nx, ys, ny, label, "1920x1080 at (0, 120)");
        /* The whole world shrunk into about 1920x1080 pixels: sampled every 1 or 2 cells. */
        nx = 0;
        for (int p = 0; p < 1920; p++) {
            int x = (int)((int64_t)p * 2048 / 1920);
            if (nx == 0 || xs[nx - 1] != x)
                xs[nx++] = x;
        }
        ny = axis(0, 1200, 1, ys);
        region_pair(c, g, xs, nx, ys, ny, label, "shrunk");
        probes(c, g, &rng, label);
        step_on(c, g, label);
        sim_destroy(c);
        sim_destroy(g);
    }
    free(xs);
    free(ys);
}

int main(void)
{
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        printf("test_gpu_probe: skipped: %s\n", why);
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_worlds),
        cmocka_unit_test(test_full_hd_region),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
