/* test_model.c - the model engine on the CPU: a plain scenario gives the single-model backend's
 * bits step for step; a model with every feature gives the same bits for any thread count;
 * named sections parse, write and parse back; walls are never entered; births and deaths keep
 * ids in order; bad models are refused with the key at fault. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "hz_gray_png.h"
#include "hz_test_util.h"
#include "sim.h"
#include "sim_backend.h"
#include "sim_model.h"
#include "sim_model_rules.h"

static sim_scenario parse(const char *text)
{
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    if (sim_scenario_parse_string(&sc, text, "t.ini", &err) != SIM_OK)
        fail_msg("parse: %s", err.msg);
    return sc;
}

static sim *make(const sim_scenario *sc, const sim_backend_ops *ops, int threads)
{
    sim *s = NULL;
    sim_err err = {{0}};
    if (sim_create(sc, ops, threads, &s, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    return s;
}

/* Steps a and b side by side and compares every statistic that both fill. */
static void same_run(sim *a, sim *b, int steps)
{
    for (int k = 0; k < steps; k++) {
        sim_stats sa, sb;
        assert_int_equal(sim_step(a, 1, &sa), SIM_OK);
        assert_int_equal(sim_step(b, 1, &sb), SIM_OK);
        if (sa.checksum != sb.checksum || sa.moved != sb.moved || sa.agents != sb.agents)
            fail_msg("step %d: checksum %llx vs %llx, moved %lld vs %lld, agents %lld vs %lld",
                     k + 1, (unsigned long long)sa.checksum, (unsigned long long)sb.checksum,
                     (long long)sa.moved, (long long)sb.moved, (long long)sa.agents,
                     (long long)sb.agents);
        assert_memory_equal(&sa.field_total, &sb.field_total, sizeof sa.field_total);
        assert_memory_equal(&sa.field_max, &sb.field_max, sizeof sa.field_max);
        assert_memory_equal(&sa.residual, &sb.residual, sizeof sa.residual);
    }
}

/* The model engine runs the [field]/[agents] shorthand exactly as sim_cpu.c does, on every
 * boundary, sparse and dense. */
static void test_plain_equals_single_model(void **state)
{
    (void)state;
    const char *cases[] = {
        "[world]\nwidth = 61\nheight = 47\n[agents]\ndensity = 0.15\nradius = 3\n",
        "[world]\nwidth = 40\nheight = 33\nboundary = wall\n[agents]\ncount = 30\nradius = 5\n"
        "noise = 0.6\n",
        "[world]\nwidth = 35\nheight = 36\nboundary = fixed\nfixed_top = 3\n[field]\ndecay = 0\n"
        "sweeps = 3\n[agents]\ndensity = 0.4\nradius = 2\ndeposit = 0.5\n",
        /* periodic worlds shorter and narrower than the sense phase's ring of 2r + 3 rows */
        "[world]\nwidth = 9\nheight = 6\n[agents]\ndensity = 0.3\nradius = 5\n",
        "[world]\nwidth = 7\nheight = 90\nboundary = wall\n[agents]\ndensity = 0.3\nradius = 4\n",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sim_scenario sc = parse(cases[i]);
        assert_true(sim_model_is_plain(&sc));
        sim *a = make(&sc, sim_cpu_backend(), 2);
        sim *b = make(&sc, sim_cpu_model_backend(), 3 + (int)i); /* bands of rows */
        uint64_t ca, cb;
        assert_int_equal(sim_checksum(a, &ca), SIM_OK);
        assert_int_equal(sim_checksum(b, &cb), SIM_OK);
        assert_true(ca == cb);
        same_run(a, b, 25);
        sim_destroy(a);
        sim_destroy(b);
    }
}

static char dir[256];

static int setup(void **state)
{
    (void)state;
    return hz_mkdtemp(dir, sizeof dir, "hz_model");
}

static int teardown(void **state)
{
    (void)state;
    hz_rm_rf(dir);
    return 0;
}

/* A 48x40 world with a wall bar, a capacity map and a source mask; returns the scenario text. */
static void write_maps(void)
{
    uint8_t walls[48 * 40], cap[48 * 40], src[48 * 40];
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 48; x++) {
            int i = y * 48 + x;
            walls[i] = (x == 20 && y > 5 && y < 34) || (y == 20 && x > 30) ? 255 : 0;
            cap[i] = (uint8_t)(x * 5);
            src[i] = x == 44 && y == 4 ? 255 : 0;
        }
    char path[512];
    snprintf(path, sizeof path, "%s/walls.png", dir);
    assert_int_equal(hz_write_gray_png(path, walls, 48, 40), 0);
    snprintf(path, sizeof path, "%s/cap.png", dir);
    assert_int_equal(hz_write_gray_png(path, cap, 48, 40), 0);
    snprintf(path, sizeof path, "%s/src.png", dir);
    assert_int_equal(hz_write_gray_png(path, src, 48, 40), 0);
}

static const char *rich_text =
    "[world]\nwidth = 48\nheight = 40\nboundary = %s\nwalls = walls.png\n"
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

static sim_scenario rich(const char *boundary)
{
    write_maps();
    char text[2048], path[512];
    snprintf(text, sizeof text, rich_text, boundary);
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

/* A model with named sections that has the plain model's shape (one field, one species that
 * senses it with weight 1 and deposits into it) is not plain: its named count, noise and radius
 * are the ones that run (the single-model backends read the shorthand keys instead, and ran
 * such a model with the shorthand's defaults). */
static void test_named_plain_shape_uses_its_sections(void **state)
{
    (void)state;
    const char *text = "[world]\nwidth = 64\nheight = 48\n[field.food]\nsweeps = 1\n"
                       "[species.ants]\ncount = 300\nradius = 3\nnoise = %s\n"
                       "sense = food:1\ndeposit = food:1\n";
    char buf[512];
    uint64_t sums[2];
    const char *noise[2] = {"0.0", "0.9"};
    for (int k = 0; k < 2; k++) {
        snprintf(buf, sizeof buf, text, noise[k]);
        sim_scenario sc = parse(buf);
        assert_false(sim_model_is_plain(&sc));
        sim *s = make(&sc, sim_cpu_backend(), 2);
        assert_int_equal(sim_agent_count(s), 300);
        sim_stats st;
        for (int i = 0; i < 5; i++)
            assert_int_equal(sim_step(s, 1, &st), SIM_OK);
        sums[k] = st.checksum;
        sim_destroy(s);
    }
    assert_true(sums[0] != sums[1]); /* the named noise is the one that runs */
}

/* Every phase at once, on both boundaries: 1 thread and 3 give the same bits; agents never
 * stand on a wall; births and deaths happen and ids stay in increasing order. */
static void test_rich_model_threads_walls_life(void **state)
{
    (void)state;
    const char *bounds[] = {"periodic", "wall"};
    for (int bi = 0; bi < 2; bi++) {
        sim_scenario sc = rich(bounds[bi]);
        assert_false(sim_model_is_plain(&sc));
        sim *a = make(&sc, sim_cpu_backend(), 1);
        sim *b = make(&sc, sim_cpu_backend(), 3);
        int64_t births = 0, deaths = 0, eaten_days = 0;
        for (int k = 0; k < 60; k++) {
            sim_stats sa, sb;
            assert_int_equal(sim_step(a, 1, &sa), SIM_OK);
            assert_int_equal(sim_step(b, 1, &sb), SIM_OK);
            if (sa.checksum != sb.checksum)
                fail_msg("%s step %d: %llx vs %llx", bounds[bi], k + 1,
                         (unsigned long long)sa.checksum, (unsigned long long)sb.checksum);
            assert_int_equal(sa.n_species, 2);
            assert_int_equal(sa.n_fields, 2);
            for (int s = 0; s < 2; s++) {
                births += sa.species[s].births;
                deaths += sa.species[s].deaths;
            }
            eaten_days += sa.species[0].deaths > 0;
            assert_int_equal(sa.species[0].count + sa.species[1].count, sa.agents);
            sim_state st;
            assert_int_equal(sim_read_state(a, &st), SIM_OK);
            for (int64_t i = 0; i < st.n; i++) {
                assert_int_equal(st.walls[st.cell[i]], 0);
                if (i > 0)
                    assert_true(st.id[i] > st.id[i - 1]);
                assert_true(st.id[i] < st.next_id);
            }
            for (int64_t c = 0; c < st.cells; c++)
                if (st.walls[c]) {
                    assert_true(st.field[0][c] == 0.0f);
                    assert_true(st.field[1][c] == 0.0f);
                }
            assert_true(st.field[1][4 * 48 + 44] == 3.0f); /* the source is held */
            for (int64_t c = 0; c < st.cells; c++)
                assert_true(st.field[0][c] <= st.capacity[0][c] || st.field[0][c] <= 2.0f);
            sim_state_free(&st);
        }
        assert_true(births > 0);
        assert_true(deaths > 0);
        assert_true(eaten_days > 0);
        sim_destroy(a);
        sim_destroy(b);
    }
}

/* The statistics' parallel path (more than a few thousand cells and agents): every field's total,
 * mean and maximum, every species' count and mean energy and the checksum of each step are the
 * same bits on 2, 3, 5 and 7 threads as on one. The width (150) is no multiple of the threads'
 * column shares (multiples of 8 columns). */
static void test_stats_threads(void **state)
{
    (void)state;
    const char *text =
        "[world]\nwidth = 150\nheight = 70\nboundary = wall\n"
        "[field.grass]\nsweeps = 0\ndecay = 0\ninitial = 1\ninit_noise = 0\ngrowth = 0.2\n"
        "capacity = 3\n"
        "[field.scent]\ndiffusion = 0.3\nsweeps = 2\ndecay = 0.02\ninit_noise = 0.5\n"
        "[species.sheep]\ncount = 900\nradius = 3\nnoise = 0.2\nsense = grass:2, scent:-1\n"
        "deposit = scent:0.5\nenergy = 4\nuptake = grass:1\nmetabolism = 0.5\n"
        "birth_energy = 6\nmax_age = 40\n"
        "[species.wolf]\ncount = 60\nradius = 4\nnoise = 0.1\nsense = occ.sheep:1\n"
        "deposit = scent:-1.5\nenergy = 8\nmetabolism = 0.3\nbirth_energy = 14\n"
        "eats = sheep:5\n[run]\nseed = 11\n";
    sim_scenario sc = parse(text);
    const int counts[] = {2, 3, 5, 7};
    sim *one = make(&sc, sim_cpu_backend(), 1);
    sim *many[4];
    for (int i = 0; i < 4; i++)
        many[i] = make(&sc, sim_cpu_backend(), counts[i]);
    for (int k = 0; k < 25; k++) {
        sim_stats a;
        assert_int_equal(sim_step(one, 1, &a), SIM_OK);
        assert_int_equal(a.n_fields, 2);
        for (int i = 0; i < 4; i++) {
            sim_stats b;
            assert_int_equal(sim_step(many[i], 1, &b), SIM_OK);
            if (a.checksum != b.checksum)
                fail_msg("%d threads, step %d: checksum %llx vs %llx", counts[i], k + 1,
                         (unsigned long long)b.checksum, (unsigned long long)a.checksum);
            for (int f = 0; f < 2; f++) {
                const sim_field_stats *fa = &a.fields[f], *fb = &b.fields[f];
                if (memcmp(&fa->total, &fb->total, sizeof fa->total) != 0 ||
                    memcmp(&fa->mean, &fb->mean, sizeof fa->mean) != 0 ||
                    memcmp(&fa->max, &fb->max, sizeof fa->max) != 0)
                    fail_msg("%d threads, step %d, field %d: total %.17g mean %.17g max %.9g "
                             "against %.17g %.17g %.9g", counts[i], k + 1, f, fb->total,
                             fb->mean, (double)fb->max, fa->total, fa->mean, (double)fa->max);
            }
            for (int sp = 0; sp < 2; sp++) {
                assert_int_equal(b.species[sp].count, a.species[sp].count);
                assert_memory_equal(&b.species[sp].energy, &a.species[sp].energy,
                                    sizeof a.species[sp].energy);
            }
        }
    }
    /* the fields are not trivial: grass grew on some cells and was eaten on others */
    sim_state st;
    assert_int_equal(sim_read_state(one, &st), SIM_OK);
    int64_t grown = 0, eaten = 0;
    for (int64_t c = 0; c < st.cells; c++) {
        grown += st.field[0][c] > 1.0f;
        eaten += st.field[0][c] < 1.0f;
    }
    assert_true(grown > 0 && eaten > 0);
    sim_state_free(&st);
    sim_destroy(one);
    for (int i = 0; i < 4; i++)
        sim_destroy(many[i]);
}

/* Named sections write and parse back to the same scenario, and the copy runs to the same
 * bits. */
/* README's memory bounds on the CPU model engine: 12 B/cell of shared state, 8 B/cell per field,
 * 64 B per agent plus 8 per life-cycle attribute; a 4096^2 world with 4 fields and 4M agents
 * under 2 GiB. */
static void test_memory_bounds(void **state)
{
    (void)state;
    sim_mem e;
    sim_scenario sc = rich("periodic");
    assert_int_equal(sim_cpu_model_memory(&sc, 4, &e), SIM_OK);
    assert_true(sim_mem_within(&e));
    assert_true(e.maps_per_cell == 5.0); /* the capacity map and the source mask */
    assert_int_equal(e.life_attrs, 2);

    char text[2048] = "[world]\nwidth = 4096\nheight = 4096\n";
    const char *fields[4] = {"a", "b", "c", "d"};
    for (int f = 0; f < 4; f++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "[field.%s]\nsweeps = %d\n%s", fields[f], f < 2 ? 2 : 0,
                 f == 3 ? "growth = 0.1\ncapacity = 2\n" : "");
    for (int k = 0; k < 4; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text),
                 "[species.s%d]\ncount = 1048576\nradius = 8\nsense = a:1, b:-1, occ.s%d:1\n"
                 "energy = 5\nmetabolism = 0.1\nuptake = d:1\nbirth_energy = 10\n", k, k);
    sc = parse(text);
    assert_int_equal(sim_cpu_model_memory(&sc, 16, &e), SIM_OK);
    assert_true(sim_mem_within(&e));
    assert_true(e.total < ((size_t)2 << 30));
    char line[256];
    sim_mem_describe(&e, line, sizeof line);
    assert_non_null(strstr(line, "within"));
}

static void test_named_round_trip(void **state)
{
    (void)state;
    sim_scenario sc = rich("periodic");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    sim_scenario_write_ini(&sc, m);
    fclose(m);
    assert_non_null(strstr(text, "[species.wolf]"));
    assert_null(strstr(text, "[agents]"));
    sim_scenario back = parse(text);
    char key[96];
    if (sim_scenario_diff(&sc, &back, 0, key, sizeof key))
        fail_msg("differs at %s", key);
    free(text);
    sim *a = make(&sc, sim_cpu_backend(), 2);
    sim *b = make(&back, sim_cpu_backend(), 2);
    same_run(a, b, 10);
    sim_destroy(a);
    sim_destroy(b);
}

/* A state read out and handed to a new simulation continues with the same bits (the path of
 * checkpoints and parameter changes). */
static void test_state_resume(void **state)
{
    (void)state;
    sim_scenario sc = rich("wall");
    sim *a = make(&sc, sim_cpu_backend(), 2);
    sim_stats st;
    for (int k = 0; k < 15; k++)
        assert_int_equal(sim_step(a, 0, &st), SIM_OK);
    sim_state saved;
    assert_int_equal(sim_read_state(a, &saved), SIM_OK);
    sim *b = NULL;
    sim_err err = {{0}};
    if (sim_create_from_model_state(&sc, sim_cpu_backend(), 1, 15, &saved, &b, &err) != SIM_OK)
        fail_msg("%s", err.msg);
    sim_state_free(&saved);
    same_run(a, b, 20);
    sim_destroy(a);
    sim_destroy(b);
}

static void expect_refused(const char *text, const char *part)
{
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    int rc = sim_scenario_parse_string(&sc, text, "t.ini", &err);
    if (rc == SIM_OK)
        fail_msg("accepted: %s", text);
    if (!strstr(err.msg, part))
        fail_msg("expected \"%s\" in \"%s\"", part, err.msg);
    assert_null(strchr(err.msg, '\n'));
}

static void test_bad_models(void **state)
{
    (void)state;
    expect_refused("[field.a]\n[species.s]\nsense = b:1\n", "species.s.sense: unknown field 'b' "
                                                           "(fields: a)");
    expect_refused("[field.a]\n[species.s]\nsense = occ.t:1\n", "unknown species 't'");
    expect_refused("[field.a]\n[species.s]\nsense = a:0.5\n", "weight '0.5'");
    expect_refused("[field.a]\n[species.s]\nsense = a\n", "bad entry");
    expect_refused("[field.a]\n[species.s]\neats = s:1\n", "cannot eat itself");
    expect_refused("[field.a]\n[species.s]\nuptake = a:1, a:2\n", "expected one");
    expect_refused("[field.a]\n[species.s]\nmetabolism = 1\nenergy = 0\n", "species.s.energy");
    expect_refused("[field]\ndecay = 0\n[field.a]\n", "[field]: cannot be mixed");
    expect_refused("[field.A]\n", "[field.A]: bad name");
    expect_refused("[field.occ]\n", "bad name");
    expect_refused("[field.a]\n[field.b]\n[field.c]\n[field.d]\n[field.e]\ndecay = 0\n",
                   "too many field sections");
    expect_refused("[field.a]\ndecay = 0\n[field.a]\n", "duplicate section");
    expect_refused("[field.a]\ndecay = 0\ndecay = 0.1\n", "field.a.decay: duplicate");
    expect_refused("[field.a]\nwind = 1\n", "field.a.wind: unknown key");
    expect_refused("[field.a]\n[species.s]\ncount = 5\nplacement = map\n", "placement_map");
    expect_refused("[world]\nwidth = 4\nheight = 4\n[field.a]\n[species.s]\ncount = 10\n"
                   "[species.t]\ncount = 10\n", "species.t: 10 agents do not fit");
    expect_refused("[field.a]\n[output]\nfield = b\n", "output.field: unknown field 'b'");
    expect_refused("[field.a]\ngrowth = 1\ncapacity = 0\n", "field.a.capacity");
}

/* --set reaches named sections, and a wall map of the wrong size or not a PNG stops the run
 * before it starts, naming the key. */
static void test_set_and_bad_maps(void **state)
{
    (void)state;
    sim_scenario sc = rich("periodic");
    sim_err err = {{0}};
    assert_int_equal(sim_scenario_set(&sc, "species.wolf.noise=0.5", &err), SIM_OK);
    assert_true(sc.species[1].noise == 0.5);
    assert_int_equal(sim_scenario_set(&sc, "world.width=50", &err), SIM_OK);
    sim *s = NULL;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &s, &err), SIM_EINVAL);
    assert_null(s);
    assert_non_null(strstr(err.msg, "world.walls"));
    assert_non_null(strstr(err.msg, "48x40"));
    assert_int_equal(sim_scenario_set(&sc, "world.map_resample=nearest", &err), SIM_OK);
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &s, &err), SIM_OK);
    sim_destroy(s);
    char path[512];
    snprintf(path, sizeof path, "world.walls=%s/rich.ini", dir);
    assert_int_equal(sim_scenario_set(&sc, path, &err), SIM_OK);
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &s, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "not a PNG"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plain_equals_single_model),
        cmocka_unit_test(test_named_plain_shape_uses_its_sections),
        cmocka_unit_test(test_rich_model_threads_walls_life),
        cmocka_unit_test(test_stats_threads),
        cmocka_unit_test(test_memory_bounds),
        cmocka_unit_test(test_named_round_trip),
        cmocka_unit_test(test_state_resume),
        cmocka_unit_test(test_bad_models),
        cmocka_unit_test(test_set_and_bad_maps),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
