/* test_events.c - sim_events and sim_set_params: every kind of bad events file is refused with
 * its exact line; formatted lines parse back to the same bits for all six run-time parameters
 * and for paints; the parameter list of a plain, a named and a mixed scenario, which agrees
 * with the scenario's SIM_KEYS_RUNTIME, and its setters and panel steps keep to the scenario's
 * ranges; sim_set_params refuses any other key (naming it), an out-of-range value and a failed
 * allocation, leaving the simulation as it was, and changes a named model's named keys; a key
 * of a section the scenario lacks is refused with its line; and the oracles: a run with events
 * applied by sim_events_apply matches, checksum for checksum, a run stopped at each event step,
 * read out and recreated from its state with the changed scenario (the checkpoint path), and
 * differs from the run without events, for a plain scenario and for a named model. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>

#include "hz_test_util.h"
#include "sim.h"
#include "sim_alloc.h"
#include "sim_events.h"

static const char header[] = "step,event,value\n";

/* Parses text as "t.csv"; fails the test unless rc is what is expected. */
static void parse(const char *text, sim_events *e, int want_rc, sim_err *err)
{
    memset(err, 0, sizeof *err);
    int rc = sim_events_parse_string(text, "t.csv", e, err);
    if (rc != want_rc)
        fail_msg("parse of \"%s\": rc %d, expected %d (%s)", text, rc, want_rc, err->msg);
}

/* A refused text: SIM_EINVAL, the message holds `want` (file:line and what), nothing kept. */
static void expect_refused(const char *text, const char *want)
{
    sim_events e;
    sim_err err;
    parse(text, &e, SIM_EINVAL, &err);
    hz_assert_contains(err.msg, want);
    assert_null(strchr(err.msg, '\n'));
    assert_int_equal(e.n, 0);
    assert_null(e.ev);
    assert_null(e.text);
}

static void test_parse_good(void **state)
{
    (void)state;
    /* CRLF, a byte order mark, comments, empty lines, blanks around fields, several events at
     * one step */
    const char *text = "\xEF\xBB\xBFstep,event,value\r\n"
                       "# a comment\r\n"
                       "0,agents.noise,0.05\r\n"
                       "\r\n"
                       "  120 , field.diffusion , 0.5 \r\n"
                       "   # indented comment\n"
                       "130,paint,10 20 4 2.5\n"
                       "130,agents.radius,5";
    sim_events e;
    sim_err err;
    parse(text, &e, SIM_OK, &err);
    assert_int_equal(e.n, 4);
    assert_string_equal(e.name, "t.csv");
    assert_int_equal(e.len, strlen(text));
    assert_string_equal(e.text, text);
    assert_int_equal(e.ev[0].step, 0);
    assert_int_equal(e.ev[0].line, 3);
    assert_int_equal(e.ev[0].kind, SIM_EVENT_SET);
    assert_string_equal(e.ev[0].key, "agents.noise");
    assert_string_equal(e.ev[0].value, "0.05");
    assert_int_equal(e.ev[1].step, 120);
    assert_int_equal(e.ev[1].line, 5);
    assert_string_equal(e.ev[1].key, "field.diffusion");
    assert_string_equal(e.ev[1].value, "0.5");
    assert_int_equal(e.ev[2].kind, SIM_EVENT_PAINT);
    assert_int_equal(e.ev[2].line, 7);
    assert_int_equal(e.ev[2].x, 10);
    assert_int_equal(e.ev[2].y, 20);
    assert_int_equal(e.ev[2].radius, 4);
    assert_true(e.ev[2].amount == 2.5f);
    assert_int_equal(e.ev[3].line, 8);
    assert_int_equal(e.ev[3].step, 130);
    assert_int_equal(sim_events_first_at(&e, 0), 0);
    assert_int_equal(sim_events_first_at(&e, 1), 1);
    assert_int_equal(sim_events_first_at(&e, 121), 2);
    assert_int_equal(sim_events_first_at(&e, 130), 2);
    assert_int_equal(sim_events_first_at(&e, 131), 4);
    assert_int_equal(sim_events_count_from(&e, 130), 2);
    assert_int_equal(sim_events_count_from(&e, 500), 0);
    sim_events_release(&e);
    assert_null(e.ev);
    sim_events_release(&e); /* empty again: fine */
    sim_events_release(NULL);

    /* only the header: no events */
    parse(header, &e, SIM_OK, &err);
    assert_int_equal(e.n, 0);
    sim_events_release(&e);
}

static void test_parse_errors(void **state)
{
    (void)state;
    expect_refused("", "t.csv:1: header '' (allowed exactly step,event,value)");
    expect_refused("step,event\n0,agents.noise,0.1\n", "t.csv:1: header 'step,event'");
    expect_refused("# c\nstep,event,value\n", "t.csv:1: header '# c'");
    expect_refused("step,event,value\n0,agents.noise,0.1\n\n# c\nx1,agents.noise,0.2\n",
                   "t.csv:5: step 'x1' is not a step number (allowed 0 .. 1000000000000000");
    expect_refused("step,event,value\n-1,agents.noise,0.1\n", "t.csv:2: step '-1'");
    expect_refused("step,event,value\n1000000000000001,agents.noise,0.1\n", "t.csv:2: step");
    expect_refused("step,event,value\n5,agents.noise,0.1\n7,agents.radius,3\n# back\n"
                   "6,field.sweeps,1\n",
                   "t.csv:5: step 6 comes after step 7 (line 3)");
    expect_refused("step,event,value\n2,agents.count,5\n",
                   "t.csv:2: unknown event 'agents.count' (allowed agents.noise|agents.deposit|"
                   "agents.radius|field.diffusion|field.sweeps|field.decay|species.NAME.noise|"
                   "species.NAME.radius|field.NAME.diffusion|field.NAME.sweeps|"
                   "field.NAME.decay|paint)");
    expect_refused("step,event,value\n2,Paint,1 1 1 1\n", "t.csv:2: unknown event 'Paint'");
    expect_refused("step,event,value\n# c\n3,agents.noise,1.5\n",
                   "t.csv:3: agents.noise: out of range '1.5' (allowed 0 .. 1)");
    expect_refused("step,event,value\n0,field.diffusion,0\n",
                   "t.csv:2: field.diffusion: out of range '0' (allowed > 0 .. 1)");
    expect_refused("step,event,value\n0,agents.radius,2.5\n",
                   "t.csv:2: agents.radius: not an integer '2.5'");
    expect_refused("step,event,value\n0,field.sweeps,\n", "t.csv:2: field.sweeps: not an integer");
    expect_refused("step,event,value\n0,agents.noise\n",
                   "t.csv:2: '0,agents.noise' is not step,event,value");
    expect_refused("step,event,value\n0,paint,1 2 3 nan\n",
                   "t.csv:2: paint: amount 'nan' is not a finite number");
    expect_refused("step,event,value\n0,paint,1 2 3 1e39\n",
                   "t.csv:2: paint: amount '1e39' is not a finite number");
    expect_refused("step,event,value\n0,paint,1 2 3\n",
                   "t.csv:2: paint: '1 2 3' is not X Y RADIUS AMOUNT");
    expect_refused("step,event,value\n0,paint,1 2 3 4 5\n", "t.csv:2: paint: '1 2 3 4 5' is not");
    expect_refused("step,event,value\n\n0,paint,1 2 65 1\n",
                   "t.csv:3: paint: radius '65' out of range (allowed 0 .. 64");
    expect_refused("step,event,value\n0,paint,-1 2 3 1\n", "t.csv:2: paint: x '-1' out of range");
    expect_refused("step,event,value\n0,paint,1 2.5 3 1\n", "t.csv:2: paint: y '2.5' out of range");
    char long_value[200];
    snprintf(long_value, sizeof long_value, "step,event,value\n0,agents.noise,0.%0100d\n", 1);
    expect_refused(long_value, "t.csv:2: agents.noise: value too long");
}

/* Named keys parse before the scenario is known: species.NAME.noise|radius and
 * field.NAME.diffusion|sweeps|decay for any valid NAME, range-checked as the scenario's own
 * keys; other keys of those sections, bad names and malformed keys are unknown events. */
static void test_parse_named(void **state)
{
    (void)state;
    sim_events e;
    sim_err err;
    parse("step,event,value\n12,species.sheep.noise,0.2\n12, field.wolf_scent.diffusion ,0.3\n"
          "13,species.a_1.radius,4\n14,field.grass.sweeps,0\n15,field.grass.decay,0.5\n",
          &e, SIM_OK, &err);
    assert_int_equal(e.n, 5);
    assert_int_equal(e.ev[0].kind, SIM_EVENT_SET);
    assert_string_equal(e.ev[0].key, "species.sheep.noise");
    assert_string_equal(e.ev[0].value, "0.2");
    assert_string_equal(e.ev[1].key, "field.wolf_scent.diffusion");
    assert_string_equal(e.ev[2].key, "species.a_1.radius");
    assert_string_equal(e.ev[4].key, "field.grass.decay");
    sim_events_release(&e);
    /* the longest name fits */
    parse("step,event,value\n0,field.abcdefghijklmnopqrstuvw.diffusion,1\n", &e, SIM_OK, &err);
    assert_string_equal(e.ev[0].key, "field.abcdefghijklmnopqrstuvw.diffusion");
    sim_events_release(&e);

    expect_refused("step,event,value\n0,species.sheep.noise,1.5\n",
                   "t.csv:2: species.sheep.noise: out of range '1.5' (allowed 0 .. 1)");
    expect_refused("step,event,value\n0,species.sheep.radius,65\n",
                   "t.csv:2: species.sheep.radius: out of range '65' (allowed 0 .. 64, an "
                   "integer)");
    expect_refused("step,event,value\n0,field.grass.diffusion,0\n",
                   "t.csv:2: field.grass.diffusion: out of range '0' (allowed > 0 .. 1)");
    expect_refused("step,event,value\n0,field.grass.sweeps,1.5\n",
                   "t.csv:2: field.grass.sweeps: not an integer '1.5'");
    static const char *const unknown[] = {
        "species.sheep.count",  "species.sheep.deposit", "field.grass.growth",
        "species.sheep.diffusion", "field.grass.noise",  "species.Sheep.noise",
        "species.occ.noise",    "species..noise",        "species.sheep",
        "world.x.noise",        "agents.sheep.noise",    "species.a.b.noise",
        "field.abcdefghijklmnopqrstuvwx.decay"};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        char text[160], want[160];
        snprintf(text, sizeof text, "step,event,value\n3,%s,1\n", unknown[i]);
        snprintf(want, sizeof want, "t.csv:2: unknown event '%s' (allowed agents.noise|",
                 unknown[i]);
        expect_refused(text, want);
    }
    expect_refused("step,event,value\n3,field.grass.decay.and.a.key.longer.than.any.name.holds,1\n",
                   "t.csv:2: unknown event 'field.grass.decay.and.a.key.longer.than.any.name...' "
                   "(allowed agents.noise|");
}

static void small_scenario(sim_scenario *sc)
{
    sim_scenario_defaults(sc);
    sc->width = 40;
    sc->height = 30;
    sc->count = 120;
    sc->radius = 3;
    sc->noise = 0.3;
    sc->sweeps = 2;
    sc->seed = 5;
}

/* Paints outside the world are found by the check against it, with their line. */
static void test_check_against_world(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    sim_events e;
    sim_err err;
    parse("step,event,value\n0,paint,39 29 2 1\n1,paint,0 0 0 -1\n\n2,paint,40 0 1 1\n", &e,
          SIM_OK, &err);
    assert_int_equal(sim_events_check(&e, &sc, &err), SIM_EINVAL);
    assert_string_equal(err.msg, "t.csv:5: paint: x 40 is outside the 40x30 world (allowed 0 .. "
                                 "39)");
    sim_events_release(&e);
    parse("step,event,value\n0,paint,3 30 2 1\n", &e, SIM_OK, &err);
    assert_int_equal(sim_events_check(&e, &sc, &err), SIM_EINVAL);
    hz_assert_contains(err.msg,
                       "t.csv:2: paint: y 30 is outside the 40x30 world (allowed 0 .. 29)");
    sim_events_release(&e);
    parse("step,event,value\n0,paint,39 29 64 1e30\n", &e, SIM_OK, &err);
    assert_int_equal(sim_events_check(&e, &sc, &err), SIM_OK);
    sim_events_release(&e);
}

static void test_load(void **state)
{
    (void)state;
    char dir[64], path[128];
    assert_int_equal(hz_mkdtemp(dir, sizeof dir, "events"), 0);
    snprintf(path, sizeof path, "%s/ev.csv", dir);
    const char text[] = "step,event,value\n3,field.decay,0.02\n";
    assert_int_equal(hz_write_file(path, text, strlen(text)), 0);
    sim_events e;
    sim_err err;
    assert_int_equal(sim_events_load(path, &e, &err), SIM_OK);
    assert_int_equal(e.n, 1);
    assert_string_equal(e.name, path);
    assert_memory_equal(e.text, text, sizeof text);
    sim_events_release(&e);
    /* the file's name in messages */
    const char bad[] = "step,event,value\n3,field.decay,1\n";
    assert_int_equal(hz_write_file(path, bad, strlen(bad)), 0);
    assert_int_equal(sim_events_load(path, &e, &err), SIM_EINVAL);
    char want[256];
    snprintf(want, sizeof want, "%s:2: field.decay: out of range '1'", path);
    hz_assert_contains(err.msg, want);
    /* a NUL byte */
    assert_int_equal(hz_write_file(path, "step,event,value\n\0", 18), 0);
    assert_int_equal(sim_events_load(path, &e, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "NUL");
    /* no file */
    snprintf(path, sizeof path, "%s/none.csv", dir);
    assert_int_equal(sim_events_load(path, &e, &err), SIM_EIO);
    hz_assert_contains(err.msg, "none.csv: cannot open events file");
    assert_null(e.ev);
    hz_rm_rf(dir);
}

/* The name of parameter i of sc, in a buffer that lasts for the test (cmocka's messages). */
static const char *name_of(const sim_scenario *sc, int i, char buf[SIM_EVENTS_KEY_MAX])
{
    sim_events_param_name(sc, i, buf, SIM_EVENTS_KEY_MAX);
    return buf;
}

/* The bits of parameter i in sc: equal values, or both the same NaN, compare equal. */
static void assert_same_param(const sim_scenario *a, const sim_scenario *b, int i)
{
    double va = sim_events_param_get(a, i), vb = sim_events_param_get(b, i);
    char name[SIM_EVENTS_KEY_MAX];
    if (memcmp(&va, &vb, sizeof va) != 0)
        fail_msg("%s: %.17g written, %.17g read back", name_of(a, i, name), va, vb);
}

/* Every parameter's formatted line parses back to the same bits, through the file and through
 * sim_scenario_set_key as sim_events_apply sets it; paints likewise. */
static void test_format_round_trip(void **state)
{
    (void)state;
    sim_scenario sets[3];
    for (int v = 0; v < 3; v++)
        sim_scenario_defaults(&sets[v]);
    /* awkward values: the shortest text is not exact, edges of the ranges */
    sets[0].noise = 0.1;
    sets[0].deposit = 1.0f / 3.0f;
    sets[0].radius = 7;
    sets[0].diffusion = 0.123456789f;
    sets[0].sweeps = 13;
    sets[0].decay = 1e-7f;
    sets[1].noise = 1.0 / 3.0;
    sets[1].deposit = -1e6f;
    sets[1].radius = SIM_MAX_RADIUS;
    sets[1].diffusion = 1.0f;
    sets[1].sweeps = 10000;
    sets[1].decay = (float)0.999999;
    sets[2].noise = 0x1.fffffffffffffp-1; /* the double just below 1 */
    sets[2].deposit = 1.4e-45f;           /* the smallest float */
    sets[2].radius = 0;
    sets[2].diffusion = 1e-30f;
    sets[2].sweeps = 0;
    sets[2].decay = 0.0f;
    for (int v = 0; v < 3; v++) {
        char *text = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&text, &len);
        assert_non_null(m);
        sim_events_write_header(m);
        for (int i = 0; i < sim_events_param_count(&sets[v]); i++) {
            char line[128], name[SIM_EVENTS_KEY_MAX];
            int n = sim_events_format_set(line, sizeof line, 10 * i, name_of(&sets[v], i, name),
                                          &sets[v]);
            assert_true(n > 0 && (size_t)n < sizeof line);
            assert_int_equal(line[n - 1], '\n');
            fputs(line, m);
        }
        fclose(m);
        sim_events e;
        sim_err err;
        parse(text, &e, SIM_OK, &err);
        assert_int_equal(e.n, (size_t)sim_events_param_count(&sets[v]));
        sim_scenario back;
        sim_scenario_defaults(&back);
        for (size_t j = 0; j < e.n; j++) {
            const char *name = e.ev[j].key;
            char section[16];
            const char *dot = strchr(name, '.');
            snprintf(section, sizeof section, "%.*s", (int)(dot - name), name);
            assert_int_equal(sim_scenario_set_key(&back, section, dot + 1, e.ev[j].value, "x",
                                                  &err),
                             SIM_OK);
        }
        for (int i = 0; i < sim_events_param_count(&sets[v]); i++) {
            assert_same_param(&sets[v], &back, i);
            /* and through the panel's setter, from the getter's double */
            sim_scenario again;
            sim_scenario_defaults(&again);
            assert_int_equal(sim_events_param_set(&again, i, sim_events_param_get(&sets[v], i),
                                                  "panel", &err),
                             SIM_OK);
            assert_same_param(&sets[v], &again, i);
        }
        hz_assert_same_scenario(&sets[v], &back);
        sim_events_release(&e);
        free(text);
    }

    /* paints */
    const float amounts[] = {2.5f, 0.1f, -1.0f / 3.0f, FLT_MAX, 1.4e-45f, -0.0f};
    for (size_t a = 0; a < sizeof amounts / sizeof amounts[0]; a++) {
        char text[160] = "step,event,value\n", line[96];
        int n = sim_events_format_paint(line, sizeof line, 130, 10, 20, 4, amounts[a]);
        assert_true(n > 0 && (size_t)n < sizeof line);
        strcat(text, line);
        sim_events e;
        sim_err err;
        parse(text, &e, SIM_OK, &err);
        assert_int_equal(e.n, 1);
        assert_int_equal(e.ev[0].step, 130);
        assert_int_equal(e.ev[0].x, 10);
        assert_int_equal(e.ev[0].y, 20);
        assert_int_equal(e.ev[0].radius, 4);
        assert_memory_equal(&e.ev[0].amount, &amounts[a], sizeof(float));
        sim_events_release(&e);
    }
    char line[96];
    sim_events_format_paint(line, sizeof line, 130, 10, 20, 4, 2.5f);
    assert_string_equal(line, "130,paint,10 20 4 2.5\n");
    sim_scenario sc;
    sim_scenario_defaults(&sc);
    sim_events_format_set(line, sizeof line, 120, "field.diffusion", &sc);
    assert_string_equal(line, "120,field.diffusion,0.5\n");
    assert_int_equal(sim_events_format_set(line, sizeof line, 1, "world.width", &sc), -1);
    assert_int_equal(sim_events_format_set(line, sizeof line, -1, "agents.noise", &sc), -1);
    assert_int_equal(sim_events_format_paint(line, sizeof line, -1, 0, 0, 0, 1.0f), -1);
}

/* The list of a plain scenario's parameters is today's six in their order, and the
 * scenario's SIM_KEYS_RUNTIME class, key for key. */
static void test_param_list(void **state)
{
    (void)state;
    static const char *const names[] = {"agents.noise", "agents.deposit", "agents.radius",
                                        "field.diffusion", "field.sweeps", "field.decay"};
    sim_scenario base, all;
    sim_scenario_defaults(&base);
    char buf[SIM_EVENTS_KEY_MAX];
    assert_int_equal(sim_events_param_count(&base), 6);
    assert_int_equal(sim_events_param_name(&base, -1, buf, sizeof buf), -1);
    assert_string_equal(buf, "");
    assert_int_equal(sim_events_param_name(&base, 6, buf, sizeof buf), -1);
    assert_int_equal(sim_events_param_find(&base, "world.width"), -1);
    assert_int_equal(sim_events_param_find(&base, "species.agents.noise"), -1);
    all = base;
    for (int i = 0; i < 6; i++) {
        assert_int_equal(sim_events_param_name(&base, i, buf, sizeof buf), strlen(names[i]));
        assert_string_equal(buf, names[i]);
        assert_int_equal(sim_events_param_find(&base, names[i]), i);
        assert_int_equal(sim_events_param_is_integer(&base, i), i == 2 || i == 4);
        /* a change of this parameter alone is a change of that key, and of a run-time one */
        sim_scenario one = base;
        sim_err err;
        double v = sim_events_param_nudge(&base, i, 1);
        assert_true(v != sim_events_param_get(&base, i));
        assert_int_equal(sim_events_param_set(&one, i, v, "t", &err), SIM_OK);
        assert_int_equal(sim_events_param_set(&all, i, v, "t", &err), SIM_OK);
        char key[80];
        assert_int_equal(sim_scenario_diff(&base, &one, 0, key, sizeof key), 1);
        assert_string_equal(key, names[i]);
        assert_int_equal(sim_scenario_diff(&base, &one, SIM_KEYS_RUNTIME, key, sizeof key), 0);
        assert_int_equal(sim_scenario_diff(&base, &one, SIM_KEYS_FIXED | SIM_KEYS_OUTPUT, key,
                                           sizeof key),
                         1);
    }
    char key[80];
    /* all six at once are still nothing but run-time keys; anything else is another class */
    assert_int_equal(sim_scenario_diff(&base, &all, SIM_KEYS_RUNTIME, key, sizeof key), 0);
    all.seed = 99;
    assert_int_equal(sim_scenario_diff(&base, &all, SIM_KEYS_RUNTIME | SIM_KEYS_OUTPUT, key,
                                       sizeof key),
                     1);
    assert_string_equal(key, "run.seed");
    all = base;
    all.steps = 7;
    strcpy(all.dir, "elsewhere");
    assert_int_equal(sim_scenario_diff(&base, &all, SIM_KEYS_OUTPUT, key, sizeof key), 0);
    assert_int_equal(sim_scenario_diff(&base, &all, SIM_KEYS_RUNTIME, key, sizeof key), 1);
    assert_string_equal(key, "run.steps");
}

/* A model of two species (sheep, wolves) and two fields (grass, wolf_scent): enough for the
 * lists; the ones that run give each a sense list. */
static const char two_by_two[] = "[world]\nwidth = 48\nheight = 40\n"
                                 "[run]\nseed = 3\n"
                                 "[field.grass]\ndiffusion = 0.2\nsweeps = 1\ndecay = 0\n"
                                 "[field.wolf_scent]\ndiffusion = 0.6\nsweeps = 3\n"
                                 "decay = 0.05\n"
                                 "[species.sheep]\ncount = 150\nradius = 3\nnoise = 0.1\n"
                                 "sense = grass:1, wolf_scent:-2\n"
                                 "[species.wolves]\ncount = 40\nradius = 5\nnoise = 0.2\n"
                                 "sense = occ.sheep:1\ndeposit = wolf_scent:1\n";

static void parse_scenario(const char *text, sim_scenario *sc)
{
    sim_err err;
    sim_scenario_defaults(sc);
    if (sim_scenario_parse_string(sc, text, "model.ini", &err) != SIM_OK)
        fail_msg("scenario: %s", err.msg);
}

/* Asserts that sc's list is `names`, in order, and that each name finds its index. */
static void assert_list(const sim_scenario *sc, const char *const *names, int n)
{
    char buf[SIM_EVENTS_KEY_MAX];
    assert_int_equal(sim_events_param_count(sc), n);
    for (int i = 0; i < n; i++) {
        assert_true(sim_events_param_name(sc, i, buf, sizeof buf) > 0);
        assert_string_equal(buf, names[i]);
        assert_int_equal(sim_events_param_find(sc, names[i]), i);
    }
    assert_int_equal(sim_events_param_name(sc, n, buf, sizeof buf), -1);
}

/* A model with named sections lists their keys, section by section, in place of the
 * shorthand's; a mixed scenario has the shorthand keys of the kind it does not name. Every
 * named key is a run-time key of the scenario's diff, and only those. */
static void test_param_list_named(void **state)
{
    (void)state;
    sim_scenario sc;
    parse_scenario(two_by_two, &sc);
    static const char *const named[] = {
        "species.sheep.noise",    "species.sheep.radius",     "species.wolves.noise",
        "species.wolves.radius",  "field.grass.diffusion",    "field.grass.sweeps",
        "field.grass.decay",      "field.wolf_scent.diffusion", "field.wolf_scent.sweeps",
        "field.wolf_scent.decay"};
    assert_list(&sc, named, 10);
    assert_int_equal(sim_events_param_find(&sc, "agents.noise"), -1);
    assert_int_equal(sim_events_param_find(&sc, "field.decay"), -1);
    assert_int_equal(sim_events_param_find(&sc, "species.sheep.count"), -1);
    assert_int_equal(sim_events_param_find(&sc, "species.sheep.deposit"), -1);
    /* values from the named sections, integers where the key is one */
    assert_true(sim_events_param_get(&sc, 0) == 0.1);
    assert_true(sim_events_param_get(&sc, 3) == 5);
    assert_true(sim_events_param_get(&sc, 7) == 0.6f);
    assert_true(sim_events_param_get(&sc, 8) == 3);
    for (int i = 0; i < 10; i++)
        assert_int_equal(sim_events_param_is_integer(&sc, i), i == 1 || i == 3 || i == 5 ||
                                                                   i == 8);
    char text[32];
    assert_int_equal(sim_events_param_format(&sc, 8, text, sizeof text), 1);
    assert_string_equal(text, "3");
    assert_int_equal(sim_events_param_format(&sc, 9, text, sizeof text), 12);
    assert_string_equal(text, "0.0500000007"); /* a float, exact */

    /* each one changed alone is that key, and a run-time one */
    for (int i = 0; i < 10; i++) {
        sim_scenario one = sc;
        sim_err err;
        char key[80];
        assert_int_equal(sim_events_param_set(&one, i, sim_events_param_nudge(&sc, i, 1), "t",
                                              &err),
                         SIM_OK);
        assert_int_equal(sim_scenario_diff(&sc, &one, 0, key, sizeof key), 1);
        assert_string_equal(key, named[i]);
        assert_int_equal(sim_scenario_diff(&sc, &one, SIM_KEYS_RUNTIME, key, sizeof key), 0);
        assert_int_equal(sim_scenario_diff(&sc, &one, SIM_KEYS_FIXED | SIM_KEYS_OUTPUT, key,
                                           sizeof key),
                         1);
    }
    /* the other named keys, and the sections themselves, stay fixed */
    sim_scenario other = sc;
    char key[80];
    other.species[1].count = 41;
    assert_int_equal(sim_scenario_diff(&sc, &other, SIM_KEYS_RUNTIME | SIM_KEYS_OUTPUT, key,
                                       sizeof key),
                     1);
    assert_string_equal(key, "species.wolves.count");
    other = sc;
    other.fields[0].growth = 0.5f;
    assert_int_equal(sim_scenario_diff(&sc, &other, SIM_KEYS_RUNTIME, key, sizeof key), 1);
    assert_string_equal(key, "field.grass.growth");
    other = sc;
    other.n_species = 1;
    assert_int_equal(sim_scenario_diff(&sc, &other, SIM_KEYS_RUNTIME, key, sizeof key), 1);
    assert_string_equal(key, "[species.*] sections");
    assert_int_equal(sim_scenario_diff(&sc, &other, SIM_KEYS_FIXED, key, sizeof key), 0);

    /* mixed: named species with the [field] shorthand, and named fields with [agents] */
    static const char *const species_only[] = {"species.ants.noise", "species.ants.radius",
                                               "field.diffusion", "field.sweeps", "field.decay"};
    parse_scenario("[species.ants]\ncount = 10\nsense = field:1\n", &sc);
    assert_list(&sc, species_only, 5);
    static const char *const fields_only[] = {"agents.noise", "agents.deposit", "agents.radius",
                                              "field.food.diffusion", "field.food.sweeps",
                                              "field.food.decay"};
    parse_scenario("[field.food]\nsweeps = 1\n", &sc);
    assert_list(&sc, fields_only, 6);
}

static void test_param_set_and_nudge(void **state)
{
    (void)state;
    sim_scenario sc, before;
    sim_scenario_defaults(&sc);
    sim_err err;
    enum { NOISE, DEPOSIT, RADIUS, DIFFUSION, SWEEPS, DECAY };
    assert_int_equal(sim_events_param_set(&sc, DIFFUSION, 0.1, "panel", &err), SIM_OK);
    assert_true(sc.diffusion == 0.1f);
    assert_int_equal(sim_events_param_set(&sc, NOISE, 0.1, "panel", &err), SIM_OK);
    assert_true(sc.noise == 0.1);
    before = sc;
    assert_int_equal(sim_events_param_set(&sc, RADIUS, 2.5, "panel", &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "panel: agents.radius: not an integer '2.5'");
    assert_int_equal(sim_events_param_set(&sc, NOISE, 2.0, "panel", &err), SIM_EINVAL);
    assert_string_equal(err.msg, "panel: agents.noise: out of range '2' (allowed 0 .. 1)");
    assert_int_equal(sim_events_param_set(&sc, NOISE, NAN, NULL, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "agents.noise: not a number");
    assert_int_equal(strncmp(err.msg, "agents.noise", 12), 0);
    assert_int_equal(sim_events_param_set(&sc, 6, 1.0, NULL, &err), SIM_EINVAL);
    hz_assert_same_scenario(&sc, &before);

    /* panel steps */
    sim_scenario_defaults(&sc); /* noise 0.3, deposit 1, radius 8, diffusion 0.5, sweeps 2 */
    assert_true(sim_events_param_nudge(&sc, NOISE, 1) == 0.31);
    assert_true(sim_events_param_nudge(&sc, NOISE, -1) == 0.29);
    assert_true(sim_events_param_nudge(&sc, DEPOSIT, 1) == 1.25);
    assert_true(sim_events_param_nudge(&sc, DEPOSIT, -1) == 0.8);
    assert_true(sim_events_param_nudge(&sc, RADIUS, 1) == 9);
    assert_true(sim_events_param_nudge(&sc, DIFFUSION, 1) == 0.625);
    assert_true(sim_events_param_nudge(&sc, SWEEPS, -1) == 1);
    sc.noise = 1.0;
    sc.radius = SIM_MAX_RADIUS;
    sc.diffusion = 1.0f;
    sc.sweeps = 0;
    sc.decay = 0.0f;
    sc.deposit = 0.0f;
    assert_true(sim_events_param_nudge(&sc, NOISE, 1) == 1.0);
    assert_true(sim_events_param_nudge(&sc, RADIUS, 1) == SIM_MAX_RADIUS);
    assert_true(sim_events_param_nudge(&sc, DIFFUSION, 1) == 1.0);
    assert_true(sim_events_param_nudge(&sc, SWEEPS, -1) == 0);
    assert_true(sim_events_param_nudge(&sc, DECAY, 1) == 0.001);
    assert_true(sim_events_param_nudge(&sc, DECAY, -1) == 0.0);
    assert_true(sim_events_param_nudge(&sc, DEPOSIT, 1) == 0.01);
    assert_true(sim_events_param_nudge(&sc, DEPOSIT, -1) == -0.01);
    sc.decay = 0.001f;
    assert_true(sim_events_param_nudge(&sc, DECAY, -1) == 0.0);
    sc.deposit = -1.0f;
    assert_true(sim_events_param_nudge(&sc, DEPOSIT, 1) == -0.8);
    sc.noise = 0.0;
    assert_true(sim_events_param_nudge(&sc, NOISE, -1) == 0.0);
    /* an open bound is never reached: the smallest diffusion stays */
    sc.diffusion = 1e-45f;
    double d = sim_events_param_nudge(&sc, DIFFUSION, -1);
    assert_true(d > 0.0);
    /* every step of every parameter from the defaults is a value the setter takes */
    for (int i = 0; i < 6; i++)
        for (int dir = -3; dir <= 3; dir++) {
            sim_scenario_defaults(&sc);
            for (int k = 0; k < 40; k++) {
                double v = sim_events_param_nudge(&sc, i, dir);
                char name[SIM_EVENTS_KEY_MAX];
                if (sim_events_param_set(&sc, i, v, "panel", &err) != SIM_OK)
                    fail_msg("%s step %d from the defaults: %s", name_of(&sc, i, name), dir,
                             err.msg);
            }
        }
}

/* Named keys take their shorthand counterparts' steps and ranges, and the setter writes the
 * named section (and nothing else) through the scenario's own check and message. */
static void test_param_set_and_nudge_named(void **state)
{
    (void)state;
    sim_scenario sc, before;
    parse_scenario(two_by_two, &sc);
    enum { SHEEP_NOISE, SHEEP_RADIUS, WOLF_NOISE, WOLF_RADIUS, GRASS_DIFFUSION, GRASS_SWEEPS,
           GRASS_DECAY, SCENT_DIFFUSION, SCENT_SWEEPS, SCENT_DECAY };
    /* sheep noise 0.1, radius 3; wolves 0.2, 5; grass 0.2, 1, 0; scent 0.6, 3, 0.05 */
    assert_true(sim_events_param_nudge(&sc, SHEEP_NOISE, 1) == 0.11);
    assert_true(sim_events_param_nudge(&sc, WOLF_NOISE, -1) == 0.19);
    assert_true(sim_events_param_nudge(&sc, WOLF_RADIUS, 1) == 6);
    assert_true(sim_events_param_nudge(&sc, GRASS_DIFFUSION, 1) == (double)0.2f * 1.25);
    assert_true(sim_events_param_nudge(&sc, GRASS_SWEEPS, -1) == 0);
    assert_true(sim_events_param_nudge(&sc, GRASS_DECAY, 1) == 0.001);
    assert_true(sim_events_param_nudge(&sc, GRASS_DECAY, -1) == 0.0);
    assert_true(sim_events_param_nudge(&sc, SCENT_DECAY, -1) == (double)0.05f / 1.25);
    sc.species[0].noise = 1.0;
    sc.species[1].radius = SIM_MAX_RADIUS;
    sc.fields[1].diffusion = 1.0f;
    assert_true(sim_events_param_nudge(&sc, SHEEP_NOISE, 1) == 1.0);
    assert_true(sim_events_param_nudge(&sc, WOLF_RADIUS, 1) == SIM_MAX_RADIUS);
    assert_true(sim_events_param_nudge(&sc, SCENT_DIFFUSION, 1) == 1.0);

    parse_scenario(two_by_two, &sc);
    sim_err err;
    before = sc;
    assert_int_equal(sim_events_param_set(&sc, WOLF_NOISE, 0.35, "panel", &err), SIM_OK);
    assert_true(sc.species[1].noise == 0.35);
    assert_int_equal(sim_events_param_set(&sc, SCENT_SWEEPS, 4, "panel", &err), SIM_OK);
    assert_true(sc.fields[1].sweeps == 4);
    assert_true(sc.noise == before.noise && sc.sweeps == before.sweeps); /* shorthand untouched */
    assert_true(sc.species[0].noise == 0.1 && sc.fields[0].sweeps == 1);
    before = sc;
    assert_int_equal(sim_events_param_set(&sc, SHEEP_NOISE, 2.0, "panel", &err), SIM_EINVAL);
    assert_string_equal(err.msg, "panel: species.sheep.noise: out of range '2' (allowed 0 .. 1)");
    assert_int_equal(sim_events_param_set(&sc, WOLF_RADIUS, 65, NULL, &err), SIM_EINVAL);
    assert_string_equal(err.msg, "species.wolves.radius: out of range '65' (allowed 0 .. 64, an "
                                 "integer)");
    assert_int_equal(sim_events_param_set(&sc, GRASS_DIFFUSION, 0, "panel", &err), SIM_EINVAL);
    hz_assert_contains(err.msg,
                       "panel: field.grass.diffusion: out of range '0' (allowed > 0 .. 1)");
    assert_int_equal(sim_events_param_set(&sc, SCENT_SWEEPS, 1.5, "panel", &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "field.wolf_scent.sweeps: not an integer '1.5'");
    assert_int_equal(sim_events_param_set(&sc, 10, 1.0, "panel", &err), SIM_EINVAL);
    hz_assert_same_scenario(&sc, &before);
    /* every step of every named parameter is a value the setter takes */
    for (int i = 0; i < 10; i++)
        for (int dir = -3; dir <= 3; dir += 6) {
            parse_scenario(two_by_two, &sc);
            for (int k = 0; k < 40; k++) {
                char name[SIM_EVENTS_KEY_MAX];
                if (sim_events_param_set(&sc, i, sim_events_param_nudge(&sc, i, dir), "panel",
                                         &err) != SIM_OK)
                    fail_msg("%s step %d: %s", name_of(&sc, i, name), dir, err.msg);
            }
        }
}

static sim *make(const sim_scenario *sc, int threads)
{
    sim *s = NULL;
    sim_err err;
    if (sim_create(sc, sim_cpu_backend(), threads, &s, &err) != SIM_OK)
        fail_msg("create: %s", err.msg);
    return s;
}

static uint64_t step_checksum(sim *s)
{
    sim_stats st;
    if (sim_step(s, 0, &st) != SIM_OK)
        fail_msg("step: %s", sim_errmsg(s));
    uint64_t c;
    assert_int_equal(sim_checksum(s, &c), SIM_OK);
    return c;
}

/* sim_set_params refuses what is not a run-time change and leaves the simulation as it was. */
static void test_set_params_refusals(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    sim *s = make(&sc, 2), *ref = make(&sc, 2);
    for (int k = 0; k < 3; k++)
        assert_true(step_checksum(s) == step_checksum(ref));

    sim_scenario bad = sc;
    bad.width = 41;
    bad.noise = 0.1; /* a run-time change beside it does not make it pass */
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "world.width: not a run-time parameter");
    bad = sc;
    bad.seed = 6;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "run.seed: not a run-time parameter");
    bad = sc;
    bad.count = 119;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "agents.count");
    bad = sc;
    bad.boundary = SIM_BOUNDARY_WALL;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "world.boundary");
    bad = sc;
    bad.noise = 2.0;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    assert_string_equal(sim_errmsg(s),
                        "set params: agents.noise: out of range '2' (allowed 0 .. 1)");
    bad = sc;
    bad.radius = SIM_MAX_RADIUS + 1;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "agents.radius: out of range '65'");
    bad = sc;
    bad.diffusion = NAN;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "field.diffusion: out of range");

    /* every allocation of the change failing in turn: SIM_ENOMEM, nothing leaked, unchanged */
    sim_scenario good = sc;
    good.noise = 0.05;
    long live = sim_alloc_live();
    int rc = SIM_ENOMEM, n;
    for (n = 1; n < 64 && rc != SIM_OK; n++) {
        sim_alloc_fail_at(n);
        rc = sim_set_params(s, &good);
        sim_alloc_fail_at(0);
        if (rc == SIM_OK)
            break;
        assert_int_equal(rc, SIM_ENOMEM);
        assert_true(sim_get_scenario(s)->noise == 0.3);
        assert_int_equal(sim_alloc_live(), live);
    }
    assert_int_equal(rc, SIM_OK);
    assert_true(n > 2); /* the host copy's two buffers, then the backend's own */
    assert_true(sim_get_scenario(s)->noise == 0.05);
    assert_int_equal(sim_steps_done(s), 3);
    /* and back: the failures changed nothing, so the runs agree again */
    assert_int_equal(sim_set_params(s, &sc), SIM_OK);
    for (int k = 0; k < 5; k++)
        assert_true(step_checksum(s) == step_checksum(ref));

    /* output.* and run.steps come from the new scenario; they change no bit of the run */
    good = sc;
    good.steps = 12345;
    good.frames_every = 3;
    strcpy(good.dir, "elsewhere");
    assert_int_equal(sim_set_params(s, &good), SIM_OK);
    assert_int_equal(sim_get_scenario(s)->steps, 12345);
    assert_string_equal(sim_get_scenario(s)->dir, "elsewhere");
    assert_true(step_checksum(s) == step_checksum(ref));
    sim_destroy(s);
    sim_destroy(ref);
}

/* The events of one step as the oracle applies them: the scenario's members set by hand. */
static void oracle_change(sim_scenario *sc, int64_t step)
{
    if (step == 5) {
        sc->noise = 0.05;
    } else if (step == 12) {
        sc->radius = 5;
    } else if (step == 20) {
        sc->diffusion = 0.25f;
        sc->sweeps = 3;
        sc->decay = 0.02f;
        sc->deposit = 1.5f;
    }
}

/* The oracle run: stopped at each event step, read out, recreated from its state with the
 * changed scenario (what a checkpoint resume does), painted; checksums after every step. */
static void oracle_run(const sim_scenario *start, int steps, int threads, uint64_t *sums)
{
    sim_scenario sc = *start;
    sim *s = make(&sc, threads);
    int64_t cells = (int64_t)sc.width * sc.height, n = sim_agent_count(s);
    float *field = malloc((size_t)cells * sizeof *field);
    uint32_t *agents = malloc((size_t)n * sizeof *agents);
    assert_true(field && agents);
    for (int k = 1; k <= steps; k++) {
        int64_t done = k - 1;
        if (done == 5 || done == 12 || done == 20) {
            assert_int_equal(sim_read_field(s, field), SIM_OK);
            assert_int_equal(sim_read_agents(s, agents), SIM_OK);
            sim_destroy(s);
            oracle_change(&sc, done);
            sim_err err;
            if (sim_create_from_state(&sc, sim_cpu_backend(), threads, done, field, agents, n,
                                      &s, &err) != SIM_OK)
                fail_msg("recreate at step %lld: %s", (long long)done, err.msg);
            if (done == 12)
                assert_int_equal(sim_paint(s, 10, 20, 4, 2.5f), SIM_OK);
        }
        sums[k] = step_checksum(s);
    }
    free(field);
    free(agents);
    sim_destroy(s);
}

static const char oracle_events[] = "step,event,value\n"
                                    "5,agents.noise,0.05\n"
                                    "12,agents.radius,5\n"
                                    "12,paint,10 20 4 2.5\n"
                                    "20,field.diffusion,0.25\n"
                                    "20,field.sweeps,3\n"
                                    "20,field.decay,0.02\n"
                                    "20,agents.deposit,1.5\n";

static void test_oracle(void **state)
{
    (void)state;
    enum { STEPS = 30 };
    static const int boundaries[] = {SIM_BOUNDARY_PERIODIC, SIM_BOUNDARY_WALL};
    for (size_t b = 0; b < 2; b++) {
        sim_scenario sc;
        small_scenario(&sc);
        sc.boundary = boundaries[b];
        uint64_t want[STEPS + 1], plain[STEPS + 1];
        oracle_run(&sc, STEPS, 2, want);

        sim_events e;
        sim_err err;
        parse(oracle_events, &e, SIM_OK, &err);
        assert_int_equal(sim_events_check(&e, &sc, &err), SIM_OK);
        sim *s = make(&sc, 1), *p = make(&sc, 1);
        size_t next = 0;
        for (int k = 1; k <= STEPS; k++) {
            if (sim_events_apply(&e, &next, s, &err) != SIM_OK)
                fail_msg("apply before step %d: %s", k, err.msg);
            uint64_t got = step_checksum(s);
            plain[k] = step_checksum(p);
            if (got != want[k])
                fail_msg("boundary %s, step %d: checksum %016llx with events, %016llx recreated "
                         "at each event step", sim_boundary_name(sc.boundary), k,
                         (unsigned long long)got, (unsigned long long)want[k]);
        }
        assert_int_equal(next, e.n);
        /* the scenario in force at the end holds every change */
        const sim_scenario *end = sim_get_scenario(s);
        assert_true(end->noise == 0.05 && end->radius == 5 && end->diffusion == 0.25f &&
                    end->sweeps == 3 && end->decay == 0.02f && end->deposit == 1.5f);
        /* the events matter: the same up to step 5, different afterwards */
        for (int k = 1; k <= 5; k++)
            assert_true(plain[k] == want[k]);
        for (int k = 7; k <= STEPS; k++)
            if (plain[k] == want[k])
                fail_msg("step %d: the run without events has the same checksum", k);
        sim_destroy(s);
        sim_destroy(p);
        sim_events_release(&e);
    }
}

/* Applying is in step order: an event whose step has passed is refused, not applied late. */
static void test_apply_order(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc);
    sim_events e;
    sim_err err;
    parse("step,event,value\n0,agents.noise,0.1\n2,agents.noise,0.2\n2,agents.noise,0.3\n"
          "2,agents.noise,0.25\n", &e, SIM_OK, &err);
    sim *s = make(&sc, 1);
    size_t next = 0;
    step_checksum(s);
    assert_int_equal(sim_events_apply(&e, &next, s, &err), SIM_EINVAL);
    hz_assert_contains(err.msg, "t.csv:2: event at step 0, but the simulation has done 1 steps");
    assert_int_equal(next, 0);
    next = 1; /* step 1: nothing due */
    assert_int_equal(sim_events_apply(&e, &next, s, &err), SIM_OK);
    assert_int_equal(next, 1);
    assert_true(sim_get_scenario(s)->noise == 0.3);
    step_checksum(s);
    /* step 2: three changes of one key, the last in the file wins */
    assert_int_equal(sim_events_apply(&e, &next, s, &err), SIM_OK);
    assert_int_equal(next, 4);
    assert_true(sim_get_scenario(s)->noise == 0.25);
    assert_int_equal(sim_events_apply(&e, &next, s, &err), SIM_OK); /* all done: nothing */
    sim_destroy(s);
    sim_events_release(&e);
}

/* sim_set_params on a model with named sections: the named run-time keys change and take
 * effect from the next step; the model's other keys and its sections are refused, naming
 * the key, and an out-of-range named value with the scenario's message. */
static void test_set_params_named(void **state)
{
    (void)state;
    sim_scenario sc;
    parse_scenario(two_by_two, &sc);
    sim *s = make(&sc, 1), *ref = make(&sc, 1);
    for (int k = 0; k < 3; k++)
        assert_true(step_checksum(s) == step_checksum(ref));

    sim_scenario bad = sc;
    bad.species[1].count = 41;
    bad.species[0].noise = 0.5; /* a run-time change beside it does not make it pass */
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "species.wolves.count: not a run-time parameter");
    hz_assert_contains(sim_errmsg(s), "species.NAME.noise|radius");
    bad = sc;
    snprintf(bad.species[0].sense, sizeof bad.species[0].sense, "grass:1");
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "species.sheep.sense: not a run-time parameter");
    bad = sc;
    bad.fields[0].growth = 0.1f;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "field.grass.growth: not a run-time parameter");
    bad = sc;
    bad.n_species = 1;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "[species.*] sections: not a run-time parameter");
    /* the shorthand keys the named sections replace: the model would ignore a change */
    bad = sc;
    bad.noise = 0.75;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "agents.noise: the scenario's named sections replace");
    bad = sc;
    bad.sweeps = sc.sweeps + 1;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "field.sweeps: the scenario's named sections replace");
    bad = sc;
    snprintf(bad.fields[1].name, sizeof bad.fields[1].name, "scent");
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "[field.wolf_scent]: not a run-time parameter");
    bad = sc;
    bad.species[0].noise = 2.0;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    assert_string_equal(sim_errmsg(s),
                        "set params: species.sheep.noise: out of range '2' (allowed 0 .. 1)");
    bad = sc;
    bad.fields[1].diffusion = 0.0f;
    assert_int_equal(sim_set_params(s, &bad), SIM_EINVAL);
    hz_assert_contains(sim_errmsg(s), "set params: field.wolf_scent.diffusion: out of range '0'");
    assert_true(sim_get_scenario(s)->species[0].noise == 0.1);
    /* nothing refused changed a bit */
    for (int k = 0; k < 3; k++)
        assert_true(step_checksum(s) == step_checksum(ref));

    /* a named noise: accepted, in the scenario, and every later step differs */
    sim_scenario good = sc;
    good.species[0].noise = 0.9;
    assert_int_equal(sim_set_params(s, &good), SIM_OK);
    assert_true(sim_get_scenario(s)->species[0].noise == 0.9);
    assert_int_equal(sim_steps_done(s), 6);
    for (int k = 0; k < 5; k++)
        if (step_checksum(s) == step_checksum(ref))
            fail_msg("step %d after species.sheep.noise = 0.9: the checksum of the unchanged run",
                     7 + k);
    sim_destroy(s);
    sim_destroy(ref);
}

/* The named oracle: stopped at each event step, its whole state read out and a new simulation
 * created from it with the scenario changed by hand (the checkpoint path). */
static void named_oracle_run(const sim_scenario *start, int steps, uint64_t *sums)
{
    sim_scenario sc = *start;
    sim *s = make(&sc, 1);
    for (int k = 1; k <= steps; k++) {
        int64_t done = k - 1;
        if (done == 4 || done == 9) {
            sim_state st;
            assert_int_equal(sim_read_state(s, &st), SIM_OK);
            sim_destroy(s);
            if (done == 4) {
                sc.species[0].noise = 0.6;
                sc.fields[1].diffusion = 0.3f;
            } else {
                sc.species[1].radius = 2;
                sc.species[1].noise = 0.0;
                sc.fields[0].sweeps = 2;
                sc.fields[1].decay = 0.2f;
            }
            sim_err err;
            int rc = sim_create_from_model_state(&sc, sim_cpu_backend(), 1, done, &st, &s, &err);
            sim_state_free(&st);
            if (rc != SIM_OK)
                fail_msg("recreate at step %lld: %s", (long long)done, err.msg);
        }
        sums[k] = step_checksum(s);
    }
    sim_destroy(s);
}

static const char named_events[] = "step,event,value\n"
                                   "4,species.sheep.noise,0.6\n"
                                   "4,field.wolf_scent.diffusion,0.3\n"
                                   "9,species.wolves.radius,2\n"
                                   "9,species.wolves.noise,0\n"
                                   "9,field.grass.sweeps,2\n"
                                   "9,field.wolf_scent.decay,0.2\n";

/* A model with named sections (the CPU model engine): named keys in an events file give the
 * checkpoint path's checksums, and change the run. */
static void test_named_oracle(void **state)
{
    (void)state;
    enum { STEPS = 20 };
    sim_scenario sc;
    parse_scenario(two_by_two, &sc);
    uint64_t want[STEPS + 1];
    named_oracle_run(&sc, STEPS, want);

    sim_events e;
    sim_err err;
    parse(named_events, &e, SIM_OK, &err);
    assert_int_equal(sim_events_check(&e, &sc, &err), SIM_OK);
    sim *s = make(&sc, 1), *p = make(&sc, 1);
    size_t next = 0;
    for (int k = 1; k <= STEPS; k++) {
        if (sim_events_apply(&e, &next, s, &err) != SIM_OK)
            fail_msg("apply before step %d: %s", k, err.msg);
        uint64_t got = step_checksum(s), plain = step_checksum(p);
        if (got != want[k])
            fail_msg("step %d: checksum %016llx with events, %016llx recreated at each event "
                     "step", k, (unsigned long long)got, (unsigned long long)want[k]);
        if ((k <= 4) != (plain == want[k]))
            fail_msg("step %d: the run without events %s", k,
                     k <= 4 ? "differs before the first event" : "has the same checksum");
    }
    assert_int_equal(next, e.n);
    const sim_scenario *end = sim_get_scenario(s);
    assert_true(end->species[0].noise == 0.6 && end->species[1].radius == 2 &&
                end->species[1].noise == 0.0 && end->fields[0].sweeps == 2 &&
                end->fields[1].diffusion == 0.3f && end->fields[1].decay == 0.2f);
    sim_destroy(s);
    sim_destroy(p);
    sim_events_release(&e);
}

/* A key the run's scenario has no parameter for: a section it lacks, or a shorthand key where
 * named sections stand in. sim_events_check refuses it up front and sim_events_apply when it
 * comes, naming the line, the key and the sections there are; a plain scenario refuses a named
 * key alike. */
static void test_named_refused(void **state)
{
    (void)state;
    sim_scenario sc;
    parse_scenario(two_by_two, &sc);
    static const struct {
        const char *text, *want;
    } cases[] = {
        {"step,event,value\n0,species.sheep.noise,0.2\n\n3,species.wolf.noise,0.2\n",
         "t.csv:4: species.wolf.noise: the scenario has no [species.wolf] section (allowed the "
         "keys of its sections species.sheep, species.wolves, field.grass, field.wolf_scent)"},
        {"step,event,value\n2,field.scent.decay,0.1\n",
         "t.csv:2: field.scent.decay: the scenario has no [field.scent] section (allowed the keys "
         "of its sections species.sheep, species.wolves, field.grass, field.wolf_scent)"},
        {"step,event,value\n0,agents.noise,0.2\n",
         "t.csv:2: agents.noise: the scenario has no [agents] section (allowed the keys of its "
         "sections species.sheep, species.wolves, field.grass, field.wolf_scent)"},
        {"step,event,value\n0,field.sweeps,3\n",
         "t.csv:2: field.sweeps: the scenario has no [field] section (allowed the keys of its "
         "sections species.sheep, species.wolves, field.grass, field.wolf_scent)"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        sim_events e;
        sim_err err;
        parse(cases[c].text, &e, SIM_OK, &err);
        assert_int_equal(sim_events_check(&e, &sc, &err), SIM_EINVAL);
        assert_string_equal(err.msg, cases[c].want);
        /* applied without the check: refused when its step comes, nothing changed */
        sim *s = make(&sc, 1);
        size_t next = 0;
        int rc = SIM_OK;
        for (int k = 0; k < 5 && rc == SIM_OK; k++) {
            rc = sim_events_apply(&e, &next, s, &err);
            step_checksum(s);
        }
        assert_int_equal(rc, SIM_EINVAL);
        assert_string_equal(err.msg, cases[c].want);
        assert_int_equal(next, e.n - 1); /* the refused line is each file's last */
        sim_destroy(s);
        sim_events_release(&e);
    }
    sim_scenario plain;
    small_scenario(&plain);
    sim_events e;
    sim_err err;
    parse("step,event,value\n1,species.sheep.radius,2\n", &e, SIM_OK, &err);
    assert_int_equal(sim_events_check(&e, &plain, &err), SIM_EINVAL);
    assert_string_equal(err.msg, "t.csv:2: species.sheep.radius: the scenario has no "
                                 "[species.sheep] section (allowed the keys of its sections "
                                 "agents, field)");
    sim_events_release(&e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_good),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_parse_named),
        cmocka_unit_test(test_check_against_world),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_format_round_trip),
        cmocka_unit_test(test_param_list),
        cmocka_unit_test(test_param_list_named),
        cmocka_unit_test(test_param_set_and_nudge),
        cmocka_unit_test(test_param_set_and_nudge_named),
        cmocka_unit_test(test_set_params_refusals),
        cmocka_unit_test(test_oracle),
        cmocka_unit_test(test_apply_order),
        cmocka_unit_test(test_set_params_named),
        cmocka_unit_test(test_named_oracle),
        cmocka_unit_test(test_named_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
