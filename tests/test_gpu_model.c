/* test_gpu_model.c - the CUDA model engine against the CPU model engine (its oracle), step by
 * step: every statistic of every step (checksum, moved, agents, per species count, moved,
 * births, deaths and energy, per field total, mean and max, the output field's, the residual),
 * then the whole state (fields, maps, agents in id order with cell, id, species, energy, age,
 * next_id) and the reads (field, agents, horizon scores, region sums, cells, agent cells,
 * compose, paint). Cases: plain scenarios on the three boundaries, a tiny periodic world whose
 * disks wrap several times, a dense multi-tile world, 64-bit score rows; the rich model of
 * test_model.c (walls, sources, growth, a capacity map, two species, the life cycle, births,
 * predation) at sizes that are no multiple of a tile, on both boundaries; a state resumed on
 * CUDA (from either engine); the device memory an instance holds against gpu_model_memory's
 * estimate (and the allocator's block count); and, in a child process that sees no device, the
 * one-line SIM_ENODEV refusal. The estimate's bounds (README's "Memory") need no device and run
 * everywhere; the rest is skipped (77) without a usable GPU.
 * HZ_GPU_QUICK=1 runs shorter cases (for compute-sanitizer). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gpu_backend.h"
#include "hz_gray_png.h"
#include "hz_test_util.h"
#include "sim.h"
#include "sim_impl.h" /* the instance, for the bytes it holds */
#include "sim_model.h"
#include "sim_model_rules.h"
#include "sim_view.h"

static int quick;
static char dir[256];

static int same_bits(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

static sim_scenario parse(const char *text)
{
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_string(&sc, text, "t.ini", &err) != SIM_OK)
        fail_msg("parse: %s", err.msg);
    return sc;
}

static sim *make(const sim_scenario *sc, const sim_backend_ops *ops, const char *label)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, ops, 2, &s, &err) != SIM_OK)
        fail_msg("%s: %s create: %s", label, ops == sim_cpu_model_backend() ? "cpu" : "cuda",
                 err.msg);
    return s;
}

/* Every member of two steps' statistics that the engines fill. */
static void same_stats(const sim_stats *a, const sim_stats *b, int want, const char *label, int k)
{
    if (a->moved != b->moved || a->agents != b->agents || a->step != b->step ||
        a->n_species != b->n_species || a->n_fields != b->n_fields)
        fail_msg("%s step %d: moved %lld/%lld agents %lld/%lld", label, k, (long long)a->moved,
                 (long long)b->moved, (long long)a->agents, (long long)b->agents);
    for (int s = 0; s < a->n_species; s++) {
        const sim_species_stats *x = &a->species[s], *y = &b->species[s];
        if (x->count != y->count || x->moved != y->moved || x->births != y->births ||
            x->deaths != y->deaths)
            fail_msg("%s step %d species %d: count %lld/%lld moved %lld/%lld births %lld/%lld "
                     "deaths %lld/%lld", label, k, s, (long long)x->count, (long long)y->count,
                     (long long)x->moved, (long long)y->moved, (long long)x->births,
                     (long long)y->births, (long long)x->deaths, (long long)y->deaths);
        if (want && !same_bits(&x->energy, &y->energy, sizeof x->energy))
            fail_msg("%s step %d species %d: energy %.17g/%.17g", label, k, s, x->energy,
                     y->energy);
    }
    if (!want)
        return;
    if (a->checksum != b->checksum)
        fail_msg("%s step %d: checksum cpu %016llx cuda %016llx", label, k,
                 (unsigned long long)a->checksum, (unsigned long long)b->checksum);
    for (int f = 0; f < a->n_fields; f++) {
        const sim_field_stats *x = &a->fields[f], *y = &b->fields[f];
        if (!same_bits(&x->total, &y->total, sizeof x->total) ||
            !same_bits(&x->mean, &y->mean, sizeof x->mean) ||
            !same_bits(&x->max, &y->max, sizeof x->max))
            fail_msg("%s step %d field %d: total %.17g/%.17g max %.9g/%.9g", label, k, f,
                     x->total, y->total, (double)x->max, (double)y->max);
    }
    if (!same_bits(&a->field_total, &b->field_total, sizeof a->field_total) ||
        !same_bits(&a->field_mean, &b->field_mean, sizeof a->field_mean) ||
        !same_bits(&a->field_max, &b->field_max, sizeof a->field_max) ||
        !same_bits(&a->residual, &b->residual, sizeof a->residual))
        fail_msg("%s step %d: output field total %.17g/%.17g max %.9g/%.9g residual %.9g/%.9g",
                 label, k, a->field_total, b->field_total, (double)a->field_max,
                 (double)b->field_max, (double)a->residual, (double)b->residual);
}

/* The whole states, byte for byte. */
static void same_state(sim *a, sim *b, const char *label)
{
    sim_state x, y;
    assert_int_equal(sim_read_state(a, &x), SIM_OK);
    if (sim_read_state(b, &y) != SIM_OK)
        fail_msg("%s: cuda read_state: %s", label, sim_errmsg(b));
    assert_int_equal(x.n, y.n);
    assert_int_equal(x.next_id, y.next_id);
    const size_t cells = (size_t)x.cells, n = (size_t)x.n;
    for (int f = 0; f < x.n_fields; f++) {
        if (!same_bits(x.field[f], y.field[f], cells * sizeof(float)))
            fail_msg("%s: field %d differs", label, f);
        if (x.capacity[f] && !same_bits(x.capacity[f], y.capacity[f], cells * sizeof(float)))
            fail_msg("%s: capacity %d differs", label, f);
        if (x.sources[f] && !same_bits(x.sources[f], y.sources[f], cells))
            fail_msg("%s: sources %d differ", label, f);
    }
    if (x.walls && !same_bits(x.walls, y.walls, cells))
        fail_msg("%s: walls differ", label);
    if (n && (!same_bits(x.cell, y.cell, n * 4) || !same_bits(x.id, y.id, n * 4) ||
              !same_bits(x.species, y.species, n) || !same_bits(x.energy, y.energy, n * 4) ||
              !same_bits(x.age, y.age, n * 4)))
        fail_msg("%s: agents differ", label);
    sim_state_free(&x);
    sim_state_free(&y);
}

/* The reads besides the state: field, agents, horizon scores at every cell's candidates (a
 * sample of cells), region sums, cells, agent cells, compose. */
static void same_reads(sim *a, sim *b, const sim_scenario *sc, const char *label)
{
    const int w = sc->width, h = sc->height;
    const size_t cells = (size_t)w * h;
    const int64_t n = sim_agent_count(a);
    assert_int_equal(n, sim_agent_count(b));
    float *fa = malloc(cells * 4), *fb = malloc(cells * 4);
    uint32_t *pa = malloc((size_t)(n + 1) * 4), *pb = malloc((size_t)(n + 1) * 4);
    assert_true(fa && fb && pa && pb);
    assert_int_equal(sim_read_field(a, fa), SIM_OK);
    assert_int_equal(sim_read_field(b, fb), SIM_OK);
    assert_int_equal(sim_read_agents(a, pa), SIM_OK);
    assert_int_equal(sim_read_agents(b, pb), SIM_OK);
    if (!same_bits(fa, fb, cells * 4) || (n && !same_bits(pa, pb, (size_t)n * 4)))
        fail_msg("%s: read_field / read_agents differ", label);

    /* Horizon scores of the first species at up to 400 cells (every cell of a small world). */
    const int64_t q = cells < 400 ? (int64_t)cells : 400;
    uint32_t *qc = malloc((size_t)q * 4);
    int64_t *sa = malloc((size_t)q * 9 * 8), *sb = malloc((size_t)q * 9 * 8);
    assert_true(qc && sa && sb);
    for (int64_t i = 0; i < q; i++)
        qc[i] = (uint32_t)((uint64_t)i * 2654435761u % cells);
    assert_int_equal(sim_horizon(a, qc, q, sa), SIM_OK);
    if (sim_horizon(b, qc, q, sb) != SIM_OK)
        fail_msg("%s: cuda horizon: %s", label, sim_errmsg(b));
    if (!same_bits(sa, sb, (size_t)q * 9 * 8))
        fail_msg("%s: horizon scores differ", label);

    /* Region sums over a sampled block, read_cells and agent_cells. */
    int32_t xs[7], ys[5];
    int nx = 0, ny = 0;
    for (int x = 0; x < w && nx < 7; x += 1 + w / 7)
        xs[nx++] = x;
    for (int y = 0; y < h && ny < 5; y += 1 + h / 5)
        ys[ny++] = y;
    int64_t ra[35], rb[35];
    assert_int_equal(sim_region_sums(a, xs, nx, ys, ny, ra), SIM_OK);
    assert_int_equal(sim_region_sums(b, xs, nx, ys, ny, rb), SIM_OK);
    if (!same_bits(ra, rb, (size_t)nx * ny * 8))
        fail_msg("%s: region sums differ", label);
    float va[400], vb[400];
    int64_t aa[400], ab[400];
    assert_int_equal(sim_read_cells(a, qc, q, va, aa), SIM_OK);
    assert_int_equal(sim_read_cells(b, qc, q, vb, ab), SIM_OK);
    if (!same_bits(va, vb, (size_t)q * 4) || !same_bits(aa, ab, (size_t)q * 8))
        fail_msg("%s: read_cells differ", label);
    if (n > 0) {
        int64_t ids[3] = {0, n / 2, n - 1};
        uint32_t ca[3], cb[3];
        assert_int_equal(sim_agent_cells(a, ids, 3, ca), SIM_OK);
        assert_int_equal(sim_agent_cells(b, ids, 3, cb), SIM_OK);
        assert_memory_equal(ca, cb, sizeof ca);
    }

    /* Compose: the same picture on both engines. */
    sim_view v;
    memset(&v, 0, sizeof v);
    v.w = 64;
    v.h = 48;
    v.scale = (double)w / 50.0;
    v.x0 = -1.5;
    v.y0 = 0.25;
    v.layer = SIM_LAYER_FIELD_AGENTS;
    for (int i = 0; i < 256 * 4; i++)
        v.lut[i] = (uint8_t)(i * 7);
    v.agent_rgba[0] = 255;
    v.agent_rgba[3] = 255;
    uint8_t *ia = malloc((size_t)v.w * v.h * 4), *ib = malloc((size_t)v.w * v.h * 4);
    assert_true(ia && ib);
    assert_int_equal(sim_compose(a, &v, ia), SIM_OK);
    assert_int_equal(sim_compose(b, &v, ib), SIM_OK);
    if (!same_bits(ia, ib, (size_t)v.w * v.h * 4))
        fail_msg("%s: compose differs", label);
    free(ia), free(ib), free(qc), free(sa), free(sb), free(fa), free(fb), free(pa), free(pb);
}

/* Steps both engines side by side: statistics on two steps of three, sim_checksum on the
 * third; a paint stroke half way; the reads and the whole state at the end. */
static void run_pair(const sim_scenario *sc, int steps, const char *label)
{
    sim *a = make(sc, sim_cpu_model_backend(), label);
    sim *b = make(sc, gpu_cuda_model_backend(), label);
    uint64_t ca, cb;
    assert_int_equal(sim_checksum(a, &ca), SIM_OK);
    assert_int_equal(sim_checksum(b, &cb), SIM_OK);
    if (ca != cb)
        fail_msg("%s: initial checksum %016llx vs %016llx", label, (unsigned long long)ca,
                 (unsigned long long)cb);
    if (quick && steps > 12)
        steps = 12;
    for (int k = 0; k < steps; k++) {
        const int want = k % 3 != 1;
        sim_stats x, y;
        if (sim_step(a, want, &x) != SIM_OK)
            fail_msg("%s: cpu step %d: %s", label, k, sim_errmsg(a));
        if (sim_step(b, want, &y) != SIM_OK)
            fail_msg("%s: cuda step %d: %s", label, k, sim_errmsg(b));
        same_stats(&x, &y, want, label, k);
        if (!want) {
            assert_int_equal(sim_checksum(a, &ca), SIM_OK);
            assert_int_equal(sim_checksum(b, &cb), SIM_OK);
            if (ca != cb)
                fail_msg("%s step %d: checksum() %016llx vs %016llx", label, k,
                         (unsigned long long)ca, (unsigned long long)cb);
        }
        if (k == steps / 2) {
            assert_int_equal(sim_paint(a, sc->width / 3, sc->height / 2, 3, 1.5f), SIM_OK);
            assert_int_equal(sim_paint(b, sc->width / 3, sc->height / 2, 3, 1.5f), SIM_OK);
        }
    }
    same_reads(a, b, sc, label);
    same_state(a, b, label);
    sim_destroy(a);
    sim_destroy(b);
}

/* (1) Plain scenarios through the model engines: periodic, wall, fixed; sparse and dense; a
 * tiny periodic world whose disks wrap several times; a dense world of several tiles (more
 * agents on a tile than one round of the sense block holds). */
static void test_plain(void **state)
{
    (void)state;
    static const char *const cases[] = {
        "[world]\nwidth = 61\nheight = 47\n[agents]\ndensity = 0.15\nradius = 3\n",
        "[world]\nwidth = 40\nheight = 33\nboundary = wall\n[agents]\ncount = 30\nradius = 5\n"
        "noise = 0.6\n",
        "[world]\nwidth = 35\nheight = 36\nboundary = fixed\nfixed_top = 3\n[field]\ndecay = 0\n"
        "sweeps = 3\n[agents]\ndensity = 0.4\nradius = 2\ndeposit = 0.5\n",
        "[world]\nwidth = 7\nheight = 5\n[field]\nsweeps = 1\n[agents]\ncount = 9\nradius = 6\n",
        "[world]\nwidth = 200\nheight = 150\n[field]\nsweeps = 2\ninit_noise = 1\n[agents]\n"
        "density = 0.6\nradius = 8\nnoise = 0.05\n",
        "[world]\nwidth = 130\nheight = 70\nboundary = wall\n[field]\nsweeps = 4\n[agents]\n"
        "density = 0.05\nradius = 33\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_scenario sc = parse(cases[i]);
        char label[32];
        snprintf(label, sizeof label, "plain %zu", i);
        run_pair(&sc, 30, label);
    }
}

/* Steps the scenario `fmt` (one %s: the boundary) on a bounded and a periodic world through
 * run_pair, the labels `what wall` and `what periodic`. */
static void pair_on_both_bounds(const char *fmt, const char *what)
{
    static const char *const bounds[] = {"wall", "periodic"};
    for (int i = 0; i < 2; i++) {
        char text[1024], label[32];
        snprintf(text, sizeof text, fmt, bounds[i]);
        snprintf(label, sizeof label, "%s %s", what, bounds[i]);
        sim_scenario sc = parse(text);
        run_pair(&sc, 30, label);
    }
}

/* Named sections without maps: two species on two fields with weights that need 64-bit prefix
 * rows (|weight| 256 at r = 10), occupancies sensed both ways, clamped negative deposits, on a
 * bounded and a periodic world. */
static void test_named_wide(void **state)
{
    (void)state;
    pair_on_both_bounds(
        "[world]\nwidth = 90\nheight = 75\nboundary = %s\n"
        "[field.a]\ndiffusion = 0.3\nsweeps = 2\ndecay = 0.02\ninit_noise = 1\n"
        "[field.b]\ndiffusion = 0.6\nsweeps = 1\ndecay = 0\ninit_noise = 0.5\n"
        "[species.x]\ncount = 400\nradius = 10\nnoise = 0.1\nsense = a:256, b:-255, occ.y:3\n"
        "deposit = a:0.5, b:-0.25\n"
        "[species.y]\ncount = 300\nradius = 2\nnoise = 0.3\nsense = b:1, occ.x:-1, occ.y:2\n"
        "deposit = b:1\n[run]\nseed = 11\n",
        "wide");
}

/* Species that sense occupancies only (no field in their score): a dense disk at the centre
 * and a sparse species, on a bounded and a periodic world. */
static void test_occupancy_only(void **state)
{
    (void)state;
    pair_on_both_bounds(
        "[world]\nwidth = 150\nheight = 140\nboundary = %s\n[field.a]\nsweeps = 1\n"
        "[species.c]\ncount = 4000\nplacement = center\nradius = 4\nnoise = 0.2\n"
        "sense = occ.c:2, occ.d:-1\n[species.d]\ncount = 60\nradius = 6\nnoise = 0.1\n"
        "sense = occ.c:1\ndeposit = a:1\n[run]\nseed = 3\n",
        "occupancy");
}

/* The maps of the rich model for a w x h world: a wall bar and a wall stub, a capacity ramp,
 * one source cell. */
static void write_maps(int w, int h)
{
    uint8_t *walls = malloc((size_t)w * h), *cap = malloc((size_t)w * h);
    uint8_t *src = malloc((size_t)w * h);
    assert_true(walls && cap && src);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            int i = y * w + x;
            walls[i] = (x == w * 20 / 48 && y > 5 && y < h - 6) || (y == h / 2 && x > w * 30 / 48)
                           ? 255
                           : 0;
            cap[i] = (uint8_t)(x * 5);
            src[i] = x == w - 4 && y == 4 ? 255 : 0;
        }
    char path[512];
    snprintf(path, sizeof path, "%s/walls.png", dir);
    assert_int_equal(hz_write_gray_png(path, walls, w, h), 0);
    snprintf(path, sizeof path, "%s/cap.png", dir);
    assert_int_equal(hz_write_gray_png(path, cap, w, h), 0);
    snprintf(path, sizeof path, "%s/src.png", dir);
    assert_int_equal(hz_write_gray_png(path, src, w, h), 0);
    free(walls), free(cap), free(src);
}

/* test_model.c's rich model, at any size. */
static const char *rich_text =
    "[world]\nwidth = %d\nheight = %d\nboundary = %s\nwalls = walls.png\n"
    "[field.grass]\nsweeps = 0\ndecay = 0\ninitial = 2\ninit_noise = 0\ngrowth = 0.25\n"
    "capacity = 4\ncapacity_map = cap.png\n"
    "[field.scent]\ndiffusion = 0.4\nsweeps = 2\ndecay = 0.05\ninit_noise = 0.5\n"
    "sources = src.png\nsource_value = 3\n"
    "[species.sheep]\ncount = 150\nradius = 3\nnoise = 0.2\nsense = grass:2, scent:-1, "
    "occ.wolf:-3\ndeposit = scent:0.5\nenergy = 4\nuptake = grass:1\nmetabolism = 0.6\n"
    "birth_energy = 6\nmax_age = 40\n"
    "[species.wolf]\ncount = 25\nradius = 4\nnoise = 0.1\nsense = occ.sheep:1\n"
    "deposit = scent:-0.25\nenergy = 8\nmetabolism = 0.3\nbirth_energy = 14\neats = sheep:5\n"
    "[run]\nseed = 7\n";

static sim_scenario rich(int w, int h, const char *boundary)
{
    write_maps(w, h);
    char text[2048], path[512];
    snprintf(text, sizeof text, rich_text, w, h, boundary);
    snprintf(path, sizeof path, "%s/rich.ini", dir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_file(&sc, path, &err) != SIM_OK)
        fail_msg("parse: %s", err.msg);
    return sc;
}

/* (2) Every phase at once, on both boundaries, at sizes no multiple of a tile; births, deaths
 * and meals must happen for the comparison to mean something. */
static void test_rich(void **state)
{
    (void)state;
    static const int sizes[][2] = {{48, 40}, {61, 47}, {100, 37}};
    static const char *const bounds[] = {"periodic", "wall"};
    for (int si = 0; si < 3; si++)
        for (int bi = 0; bi < 2; bi++) {
            sim_scenario sc = rich(sizes[si][0], sizes[si][1], bounds[bi]);
            char label[64];
            snprintf(label, sizeof label, "rich %dx%d %s", sizes[si][0], sizes[si][1],
                     bounds[bi]);
            /* the life cycle really runs: count births and deaths on the CPU side */
            sim *c = make(&sc, sim_cpu_model_backend(), label);
            int64_t births = 0, deaths = 0;
            for (int k = 0; k < 40; k++) {
                sim_stats st;
                assert_int_equal(sim_step(c, 0, &st), SIM_OK);
                births += st.species[0].births + st.species[1].births;
                deaths += st.species[0].deaths + st.species[1].deaths;
            }
            sim_destroy(c);
            assert_true(births > 0);
            assert_true(deaths > 0);
            run_pair(&sc, 60, label);
        }
}

/* (3) A state read from one engine continues on a new CUDA instance exactly as the original
 * runs on (from the CPU engine and from the CUDA engine). */
static void test_resume(void **state)
{
    (void)state;
    sim_scenario sc = rich(61, 47, "wall");
    for (int from_gpu = 0; from_gpu < 2; from_gpu++) {
        const char *label = from_gpu ? "resume from cuda" : "resume from cpu";
        sim *a = make(&sc, sim_cpu_model_backend(), label);
        sim *src = from_gpu ? make(&sc, gpu_cuda_model_backend(), label) : a;
        sim_stats st;
        for (int k = 0; k < 15; k++) {
            assert_int_equal(sim_step(a, 0, &st), SIM_OK);
            if (src != a)
                assert_int_equal(sim_step(src, 0, &st), SIM_OK);
        }
        sim_state saved;
        assert_int_equal(sim_read_state(src, &saved), SIM_OK);
        sim *b = NULL;
        sim_err err = {{0}};
        if (sim_create_from_model_state(&sc, gpu_cuda_model_backend(), 0, 15, &saved, &b,
                                        &err) != SIM_OK)
            fail_msg("%s: %s", label, err.msg);
        sim_state_free(&saved);
        for (int k = 0; k < (quick ? 6 : 25); k++) {
            sim_stats x, y;
            assert_int_equal(sim_step(a, 1, &x), SIM_OK);
            assert_int_equal(sim_step(b, 1, &y), SIM_OK);
            same_stats(&x, &y, 1, label, k);
        }
        same_state(a, b, label);
        if (src != a)
            sim_destroy(src);
        sim_destroy(a);
        sim_destroy(b);
    }
}

/* The CUDA single-model backend names the model engine, so sim_create on it runs a model that
 * is not plain; step_batch equals single steps. */
static void test_picked_and_batch(void **state)
{
    (void)state;
    sim_scenario sc = rich(48, 40, "periodic");
    sim *a = make(&sc, sim_cpu_model_backend(), "batch");
    sim *b = make(&sc, gpu_cuda_backend(), "batch");
    assert_ptr_equal(sim_get_backend(b), gpu_cuda_model_backend());
    sim_stats x[8], y[8];
    uint8_t want[8] = {1, 0, 1, 1, 0, 0, 1, 1};
    assert_int_equal(sim_step_batch(a, 8, want, x), SIM_OK);
    assert_int_equal(sim_step_batch(b, 8, want, y), SIM_OK);
    for (int k = 0; k < 8; k++)
        same_stats(&x[k], &y[k], want[k], "batch", k);
    same_state(a, b, "batch");
    sim_destroy(a);
    sim_destroy(b);
}

/* (4b) Queued steps: batches of several lengths, statistics on three steps of four, equal the
 * CPU's single steps, on a population that grows by thousands a step and then churns, so that
 * the gates cut chunks short (the count past the launch bound, no room to double) and the
 * arrays grow between chunks. */
static void test_queued_growth(void **state)
{
    (void)state;
    sim_scenario sc = parse("[world]\nwidth = 300\nheight = 290\n"
                            "[field.food]\nsweeps = 0\ndecay = 0\ninitial = 5\ngrowth = 1\n"
                            "capacity = 5\n[field.mark]\ndiffusion = 0.5\nsweeps = 2\n"
                            "[species.b]\ncount = 8000\nradius = 2\nnoise = 0.3\n"
                            "sense = food:1, occ.b:-1\ndeposit = mark:1\nenergy = 4\n"
                            "uptake = food:2\nmetabolism = 0.5\nbirth_energy = 3\nmax_age = 8\n"
                            "[run]\nseed = 5\n");
    sim *a = make(&sc, sim_cpu_model_backend(), "queued");
    sim *b = make(&sc, gpu_cuda_model_backend(), "queued");
    static const int lens[] = {1, 5, 16, 3, 40, 64, 7};
    const int nl = quick ? 3 : (int)(sizeof lens / sizeof lens[0]);
    static sim_stats x[64], y[64];
    uint8_t want[64];
    int k = 0;
    int64_t peak = 0;
    for (int li = 0; li < nl; li++) {
        const int n = lens[li];
        memset(x, 0, sizeof x);
        memset(y, 0, sizeof y);
        for (int j = 0; j < n; j++) {
            want[j] = (uint8_t)((k + j) % 4 != 2);
            if (sim_step(a, want[j], &x[j]) != SIM_OK)
                fail_msg("queued: cpu step %d: %s", k + j, sim_errmsg(a));
        }
        if (sim_step_batch(b, n, want, y) != SIM_OK)
            fail_msg("queued: cuda batch at %d: %s", k, sim_errmsg(b));
        for (int j = 0; j < n; j++) {
            same_stats(&x[j], &y[j], want[j], "queued", k + j);
            if (y[j].agents > peak)
                peak = y[j].agents;
        }
        k += n;
    }
    same_state(a, b, "queued");
    const long halts = gpu_model_halts(sim_get_backend_state(b));
    printf("queued: %d steps in batches, agents 8000 -> peak %lld, %ld chunks cut short\n", k,
           (long long)peak, halts);
    assert_true(peak > 2 * 8000);
    assert_true(halts > 0);
    sim_destroy(a);
    sim_destroy(b);
}

/* (4c) Steps in place: a predator-prey model whose few deaths and births a step leave holes and
 * appended newborns for several steps before a compaction (gpu_model.h), on a bounded world
 * that is not a multiple of the tile. Every statistic of every step, and the whole state after
 * each batch (reads come between chunks, compacted), equal the CPU's; some steps ran in place. */
static void test_in_place(void **state)
{
    (void)state;
    sim_scenario sc = parse("[world]\nwidth = 157\nheight = 133\nboundary = wall\n"
                            "[field.grass]\nsweeps = 0\ndecay = 0\ninitial = 2\ninit_noise = 2\n"
                            "growth = 0.08\ncapacity = 4\n[field.scent]\ndiffusion = 0.5\n"
                            "sweeps = 2\ndecay = 0.05\n"
                            "[species.sheep]\ncount = 4000\nradius = 3\nnoise = 0.1\n"
                            "sense = grass:2, scent:-1, occ.wolf:-4\nenergy = 4\n"
                            "uptake = grass:1\nmetabolism = 0.3\nbirth_energy = 12\n"
                            "max_age = 1000\n[species.wolf]\ncount = 600\nradius = 4\n"
                            "noise = 0.1\nsense = occ.sheep:1\ndeposit = scent:1\nenergy = 10\n"
                            "metabolism = 0.3\nbirth_energy = 60\neats = sheep:3\n"
                            "[run]\nseed = 11\n");
    sim *a = make(&sc, sim_cpu_model_backend(), "in place");
    sim *b = make(&sc, gpu_cuda_model_backend(), "in place");
    static const int lens[] = {1, 9, 33, 64, 20, 64};
    const int nl = quick ? 3 : (int)(sizeof lens / sizeof lens[0]);
    static sim_stats x[64], y[64];
    uint8_t want[64];
    int k = 0;
    int64_t births = 0, deaths = 0;
    for (int li = 0; li < nl; li++) {
        const int n = lens[li];
        memset(x, 0, sizeof x);
        memset(y, 0, sizeof y);
        for (int j = 0; j < n; j++) {
            want[j] = (uint8_t)((k + j) % 5 != 3);
            if (sim_step(a, want[j], &x[j]) != SIM_OK)
                fail_msg("in place: cpu step %d: %s", k + j, sim_errmsg(a));
        }
        if (sim_step_batch(b, n, want, y) != SIM_OK)
            fail_msg("in place: cuda batch at %d: %s", k, sim_errmsg(b));
        for (int j = 0; j < n; j++) {
            same_stats(&x[j], &y[j], want[j], "in place", k + j);
            births += y[j].species[0].births + y[j].species[1].births;
            deaths += y[j].species[0].deaths + y[j].species[1].deaths;
        }
        same_state(a, b, "in place");
        k += n;
    }
    const long in_place = gpu_model_in_place(sim_get_backend_state(b));
    printf("in place: %d steps, %lld births, %lld deaths, %ld steps in place\n", k,
           (long long)births, (long long)deaths, in_place);
    assert_true(births > 0 && deaths > 0);
    assert_true(in_place > 0);
    sim_destroy(a);
    sim_destroy(b);
}

/* (6) Device memory: what create allocates is gpu_model_memory's total (to the byte, up to the
 * allocator's rounding), the allocator's block count goes up by the blocks the instance says it
 * holds and back down at destroy; models with and without a life cycle, maps, births. */
static void test_memory_held(void **state)
{
    (void)state;
    sim_scenario cases[4];
    const char *labels[4] = {"memory rich", "memory wide", "memory plain", "memory wsg"};
    cases[0] = rich(61, 47, "periodic");
    cases[1] = parse("[world]\nwidth = 90\nheight = 75\n[field.a]\nsweeps = 2\n[field.b]\n"
                     "[species.x]\ncount = 400\nradius = 10\nsense = a:256, occ.y:3\n"
                     "deposit = b:1\n[species.y]\ncount = 300\nradius = 2\nsense = b:1\n");
    cases[2] = parse("[world]\nwidth = 200\nheight = 150\n[agents]\ndensity = 0.2\n");
    cases[3] = parse("[world]\nwidth = 512\nheight = 384\n[field.grass]\nsweeps = 0\n"
                     "growth = 0.1\ncapacity = 4\n[field.scent]\nsweeps = 2\n[species.sheep]\n"
                     "count = 20000\nsense = grass:2, scent:-1\nenergy = 4\nuptake = grass:1\n"
                     "metabolism = 0.3\nbirth_energy = 12\n[species.wolf]\ncount = 3000\n"
                     "sense = occ.sheep:1\ndeposit = scent:1\nenergy = 10\nmetabolism = 0.3\n"
                     "eats = sheep:3\n");
    for (int i = 0; i < 4; i++) {
        sim_mem e;
        assert_int_equal(gpu_model_memory(&cases[i], &e), SIM_OK);
        const long live0 = gpu_alloc_live();
        sim *s = make(&cases[i], gpu_cuda_model_backend(), labels[i]);
        size_t held = 0;
        long blocks = 0;
        gpu_model_held(sim_get_backend_state(s), &held, &blocks);
        const long live = gpu_alloc_live() - live0;
        size_t est = gpu_model_estimate_bytes(&cases[i]);
        /* a uniform capacity (no map) stays off the device and is not counted either */
        const size_t slack = 256 * (size_t)blocks; /* cudaMalloc's rounding, at most */
        printf("%s: held %zu bytes in %ld blocks (allocator: %ld), estimate %zu\n", labels[i],
               held, blocks, live, est);
        if (live != blocks)
            fail_msg("%s: the allocator counts %ld blocks, the instance %ld", labels[i], live,
                     blocks);
        if (held > est + slack || est > held + slack)
            fail_msg("%s: held %zu bytes, estimated %zu", labels[i], held, est);
        assert_int_equal(est, e.total);
        assert_true(sim_mem_within(&e));
        sim_destroy(s);
        assert_int_equal(gpu_alloc_live(), live0);
    }
}

/* (7) The estimate's bounds, no device needed: README's "Memory" per cell and per agent, and a
 * 4096^2 world with 4 fields (two diffusing) and 4 species of 1M agents each with a life cycle
 * (births: room for 8M) under 2 GiB; without a life cycle at most 64 B an agent. */
static void test_memory_bounds(void **state)
{
    (void)state;
    char text[4096];
    int len = snprintf(text, sizeof text,
                       "[world]\nwidth = 4096\nheight = 4096\n"
                       "[field.a]\ndiffusion = 0.5\nsweeps = 2\n[field.b]\ndiffusion = 0.3\n"
                       "sweeps = 3\n[field.c]\nsweeps = 0\ngrowth = 0.1\ncapacity = 4\n"
                       "[field.d]\nsweeps = 0\ndecay = 0.1\n");
    for (int s = 0; s < 4; s++)
        len += snprintf(text + len, sizeof text - (size_t)len,
                        "[species.s%d]\ncount = 1048576\nradius = %d\nsense = a:1, b:-1, "
                        "occ.s%d:2\ndeposit = %c:1\nenergy = 5\nmetabolism = 0.1\n"
                        "birth_energy = 20\nuptake = c:1\n%s",
                        s, 3 + s, (s + 1) % 4, "abcd"[s], s == 3 ? "eats = s0:2\n" : "");
    sim_scenario sc = parse(text);
    sim_mem e;
    assert_int_equal(gpu_model_memory(&sc, &e), SIM_OK);
    char line[512];
    sim_mem_describe(&e, line, sizeof line);
    printf("4096^2, 4 fields, 4 species, 4M agents with a life cycle: %.1f MiB (%s)\n",
           (double)e.total / 1048576.0, line);
    assert_int_equal(gpu_model_estimate_bytes(&sc), e.total);
    assert_true(e.total < ((size_t)2 << 30));
    assert_true(e.shared_per_cell <= 12.0);
    assert_true(e.field_per_cell <= 8.0);
    assert_int_equal(e.life_attrs, 2);
    assert_true(e.per_agent <= 80.0);
    assert_true(sim_mem_within(&e));
    sim_scenario plain = parse("[world]\nwidth = 1024\nheight = 1024\n[field.a]\nsweeps = 2\n"
                               "[species.p]\ncount = 100000\nradius = 8\nsense = a:1\n"
                               "deposit = a:1\n");
    assert_int_equal(gpu_model_memory(&plain, &e), SIM_OK);
    assert_int_equal(e.life_attrs, 0);
    assert_true(e.per_agent <= 64.0);
    assert_true(e.shared_per_cell <= 12.0 && e.field_per_cell <= 8.0);
}

/* (5) Run in a child before this process touches CUDA: with no device visible, creating on the
 * model engine fails with SIM_ENODEV and one line. Returns 0 when that holds. */
static int check_no_device(void)
{
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        setenv("CUDA_VISIBLE_DEVICES", "", 1);
        sim_scenario sc = parse("[world]\nwidth = 32\nheight = 32\n[field.a]\n[species.s]\n"
                                "count = 10\nsense = a:1\n");
        sim *s = NULL;
        sim_err err = {{0}};
        int rc = sim_create(&sc, gpu_cuda_model_backend(), 1, &s, &err);
        int ok = rc == SIM_ENODEV && s == NULL && strchr(err.msg, '\n') == NULL &&
                 strstr(err.msg, "cuda model engine") != NULL;
        printf("test_gpu_model: without a device: rc %d, \"%s\"%s\n", rc, err.msg,
               ok ? "" : " (WRONG)");
        fflush(stdout);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid)
        return 1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int setup(void **state)
{
    (void)state;
    return hz_mkdtemp(dir, sizeof dir, "hz_gpu_model");
}

static int teardown(void **state)
{
    (void)state;
    hz_rm_rf(dir);
    return 0;
}

int main(void)
{
    if (check_no_device() != 0) {
        printf("test_gpu_model: the refusal without a device is wrong\n");
        return 1;
    }
    char why[256];
    if (gpu_probe(why, sizeof why) <= 0) {
        const struct CMUnitTest bounds[] = {cmocka_unit_test(test_memory_bounds)};
        if (cmocka_run_group_tests(bounds, NULL, NULL) != 0)
            return 1;
        printf("test_gpu_model: skipped: %s\n", why);
        return 77;
    }
    quick = getenv("HZ_GPU_QUICK") != NULL;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain),
        cmocka_unit_test(test_named_wide),
        cmocka_unit_test(test_occupancy_only),
        cmocka_unit_test(test_rich),
        cmocka_unit_test(test_resume),
        cmocka_unit_test(test_picked_and_batch),
        cmocka_unit_test(test_queued_growth),
        cmocka_unit_test(test_in_place),
        cmocka_unit_test(test_memory_held),
        cmocka_unit_test(test_memory_bounds),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
