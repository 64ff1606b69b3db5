/* test_checkpoint.c - sim_checkpoint: a resumed simulation matches an uninterrupted one bit for
 * bit; files survive the round trip and keep the previous one as .prev; and every damaged or
 * hostile file (each single-byte change, each truncation, wrong version, wrong byte order,
 * absurd sizes, bad agents, field values no run produces) is refused with a message saying which, without large
 * allocations or leaks; a failed write leaves the last good checkpoint in place. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz/ckpt_fixup.h"
#include "hz_test_util.h"
#include "sim.h"
#include "sim_alloc.h"
#include "sim_checkpoint.h"

/* A small world with every kind of state: noise, random placement, a few hundred agents. */
static void small_scenario(sim_scenario *sc, int w, int h)
{
    sim_scenario_defaults(sc);
    sc->width = w;
    sc->height = h;
    sc->density = 0.1;
    sc->radius = 3;
    sc->noise = 0.3;
    sc->sweeps = 2;
    sc->seed = 0x123456789abcdef0ull; /* a key above 2^53 must survive the text round trip */
}

static void run_steps(sim *s, int n)
{
    sim_stats st;
    for (int i = 0; i < n; i++)
        assert_int_equal(sim_step(s, 1, &st), SIM_OK);
}

/* An encoded checkpoint of scenario sc after `steps` steps. */
static uint8_t *make_image_of(const sim_scenario *scenario, int steps, size_t *len)
{
    sim_scenario sc = *scenario;
    sim_err err;
    sim *s;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 2, &s, &err), SIM_OK);
    run_steps(s, steps);
    sim_checkpoint ck;
    assert_int_equal(sim_checkpoint_init(&ck, &sc, &err), SIM_OK);
    assert_int_equal(sim_checkpoint_capture(&ck, s, 7, &err), SIM_OK);
    uint8_t *buf;
    assert_int_equal(sim_checkpoint_encode(&ck, &buf, len, &err), SIM_OK);
    assert_int_equal((uint64_t)*len, sim_checkpoint_file_size(&ck));
    sim_checkpoint_release(&ck);
    sim_destroy(s);
    return buf;
}

/* An encoded checkpoint of the small scenario after `steps` steps. */
static uint8_t *make_image(int w, int h, int steps, size_t *len)
{
    sim_scenario sc;
    small_scenario(&sc, w, h);
    return make_image_of(&sc, steps, len);
}

/* Decoding must fail with a message containing `want` (one of several, '|'-separated), and
 * leave nothing allocated. */
static void expect_refused(const uint8_t *buf, size_t len, const char *want)
{
    long live = sim_alloc_live();
    sim_checkpoint ck;
    sim_err err = {{0}};
    int rc = sim_checkpoint_decode(buf, len, "t.hzc", &ck, &err);
    if (rc == SIM_OK)
        fail_msg("accepted a bad checkpoint (expected '%s')", want);
    assert_int_equal(rc, SIM_EINVAL);
    assert_int_equal(sim_alloc_live(), live);
    char alts[256];
    snprintf(alts, sizeof alts, "%s", want);
    for (char *a = strtok(alts, "|"); a; a = strtok(NULL, "|"))
        if (strstr(err.msg, a))
            return;
    fail_msg("message '%s' does not say '%s'", err.msg, want);
}

static void test_resume_is_bit_identical(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc, 40, 24);
    sim_err err;
    sim *a, *b;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 2, &a, &err), SIM_OK);
    run_steps(a, 9);
    sim_checkpoint ck, back;
    assert_int_equal(sim_checkpoint_init(&ck, &sc, &err), SIM_OK);
    assert_int_equal(sim_checkpoint_capture(&ck, a, 5, &err), SIM_OK);
    uint8_t *buf;
    size_t len;
    assert_int_equal(sim_checkpoint_encode(&ck, &buf, &len, &err), SIM_OK);
    assert_int_equal(sim_checkpoint_decode(buf, len, "mem", &back, &err), SIM_OK);
    assert_int_equal(back.step, 9);
    assert_int_equal(back.rng_key, sc.seed);
    assert_int_equal(back.checkpoint_every, 5);
    assert_string_equal(back.backend, "cpu");
    assert_int_equal(back.n_agents, ck.n_agents);
    assert_memory_equal(back.field, ck.field, sizeof(float) * 40 * 24);
    assert_memory_equal(back.agents, ck.agents, sizeof(uint32_t) * (size_t)ck.n_agents);
    sim_scenario expect = sc;
    strcpy(expect.dir, "."); /* the output directory is not part of a checkpoint */
    char *want = hz_scenario_ini(&expect), *got = hz_scenario_ini(&back.sc);
    assert_string_equal(got, want);
    free(want);
    free(got);

    /* The oracle: the resumed simulation (on 1 thread) and the original (on 2) step on
     * identically, checksum by checksum. */
    assert_int_equal(sim_checkpoint_restore(&back, sim_cpu_backend(), 1, &b, &err), SIM_OK);
    assert_int_equal(sim_steps_done(b), 9);
    for (int i = 0; i < 12; i++) {
        sim_stats sa, sb;
        assert_int_equal(sim_step(a, 1, &sa), SIM_OK);
        assert_int_equal(sim_step(b, 1, &sb), SIM_OK);
        assert_int_equal(sa.step, sb.step);
        assert_int_equal(sa.checksum, sb.checksum);
        assert_int_equal(sa.moved, sb.moved);
    }
    sim_free(buf);
    sim_checkpoint_release(&ck);
    sim_checkpoint_release(&back);
    sim_destroy(a);
    sim_destroy(b);
}

static void test_no_agents_round_trip(void **state)
{
    (void)state;
    sim_scenario sc;
    small_scenario(&sc, 7, 5);
    sc.count = 0;
    sim_err err;
    sim *s;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &s, &err), SIM_OK);
    run_steps(s, 2);
    sim_checkpoint ck, back;
    assert_int_equal(sim_checkpoint_init(&ck, &sc, &err), SIM_OK);
    assert_int_equal(sim_checkpoint_capture(&ck, s, 0, &err), SIM_OK);
    uint8_t *buf;
    size_t len;
    assert_int_equal(sim_checkpoint_encode(&ck, &buf, &len, &err), SIM_OK);
    assert_int_equal(sim_checkpoint_decode(buf, len, "mem", &back, &err), SIM_OK);
    assert_int_equal(back.n_agents, 0);
    sim_free(buf);
    sim_checkpoint_release(&ck);
    sim_checkpoint_release(&back);
    sim_destroy(s);
}

static int make_tmpdir(char *buf, size_t n)
{
    snprintf(buf, n, "/tmp/hz_ckpt_XXXXXX");
    return mkdtemp(buf) ? 0 : -1;
}

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(dir);
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0;
}

static void test_file_write_keeps_prev(void **state)
{
    (void)state;
    char dir[64], path[128], prev[160], tmp[160];
    assert_int_equal(make_tmpdir(dir, sizeof dir), 0);
    snprintf(path, sizeof path, "%s/checkpoint.hzc", dir);
    snprintf(prev, sizeof prev, "%s.prev", path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    sim_scenario sc;
    small_scenario(&sc, 16, 16);
    sim_err err;
    sim *s;
    assert_int_equal(sim_create(&sc, sim_cpu_backend(), 1, &s, &err), SIM_OK);
    sim_checkpoint ck, back;
    assert_int_equal(sim_checkpoint_init(&ck, &sc, &err), SIM_OK);
    for (int k = 1; k <= 3; k++) {
        run_steps(s, 1);
        assert_int_equal(sim_checkpoint_capture(&ck, s, 1, &err), SIM_OK);
        assert_int_equal(sim_checkpoint_write(&ck, path, &err), SIM_OK);
        assert_false(file_exists(tmp));
    }
    assert_int_equal(sim_checkpoint_read(path, &back, &err), SIM_OK);
    assert_int_equal(back.step, 3);
    sim_checkpoint_release(&back);
    assert_int_equal(sim_checkpoint_read(prev, &back, &err), SIM_OK);
    assert_int_equal(back.step, 2);
    sim_checkpoint_release(&back);

    /* Reading what is not there, or not a file, names the path and the reason. */
    char missing[160];
    snprintf(missing, sizeof missing, "%s/nope.hzc", dir);
    assert_int_equal(sim_checkpoint_read(missing, &back, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, missing));
    assert_non_null(strstr(err.msg, "No such file"));
    assert_int_equal(sim_checkpoint_read(dir, &back, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "not a regular file"));

    /* A write into a directory that vanished fails with the path and the OS reason, and leaves
     * no temporary file. */
    char gone[160];
    snprintf(gone, sizeof gone, "%s/gone/checkpoint.hzc", dir);
    assert_int_equal(sim_checkpoint_write(&ck, gone, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, "gone/checkpoint.hzc.tmp"));
    assert_non_null(strstr(err.msg, "No such file or directory"));

    /* A write that runs out of space (RLIMIT_FSIZE stands in for a full disk: the same short
     * writes, EFBIG instead of ENOSPC) fails cleanly; the last good checkpoint stays. */
    struct rlimit old, small = {1024, 1024};
    getrlimit(RLIMIT_FSIZE, &old);
    small.rlim_max = old.rlim_max;
    void (*old_xfsz)(int) = signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    run_steps(s, 1);
    assert_int_equal(sim_checkpoint_capture(&ck, s, 1, &err), SIM_OK);
    int rc = sim_checkpoint_write(&ck, path, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, old_xfsz);
    assert_int_equal(rc, SIM_EIO);
    assert_non_null(strstr(err.msg, "checkpoint.hzc.tmp: write failed: File too large"));
    assert_false(file_exists(tmp));
    assert_int_equal(sim_checkpoint_read(path, &back, &err), SIM_OK);
    assert_int_equal(back.step, 3);
    sim_checkpoint_release(&back);

    sim_checkpoint_release(&ck);
    sim_destroy(s);
    rm_dir(dir);
}

static void test_every_byte_change_is_refused(void **state)
{
    (void)state;
    size_t len;
    uint8_t *good = make_image(12, 10, 3, &len);
    uint8_t *bad = malloc(len);
    for (size_t i = 0; i < len; i++) {
        for (int bit = 0; bit < 8; bit += 7) { /* the lowest and the highest bit */
            memcpy(bad, good, len);
            bad[i] ^= (uint8_t)(1u << bit);
            expect_refused(bad, len, "corrupt|signature|version|byte order|truncated|after the end");
        }
    }
    free(bad);
    sim_free(good);
}

static void test_every_truncation_is_refused(void **state)
{
    (void)state;
    size_t len;
    uint8_t *good = make_image(12, 10, 3, &len);
    for (size_t n = 0; n < len; n++)
        expect_refused(good, n, "truncated");
    /* and one byte too many */
    uint8_t *more = malloc(len + 1);
    memcpy(more, good, len);
    more[len] = 0;
    expect_refused(more, len + 1, "after the end");
    free(more);
    sim_free(good);
}

static void test_version_and_byte_order(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_image(12, 10, 1, &len);
    ckpt_fixup_put(buf + 8, 3, 4); /* a newer format, CRC intact */
    ckpt_fixup(buf, len, 0);
    expect_refused(buf, len, "checkpoint format version 3; this horizon reads versions 1 and 2");
    sim_free(buf);
    /* version 2 on a plain model's 4 sections: the header says too few sections */
    buf = make_image(12, 10, 1, &len);
    ckpt_fixup_put(buf + 8, 2, 4);
    ckpt_fixup(buf, len, 0);
    expect_refused(buf, len, "4 sections");
    sim_free(buf);

    /* A header written in big-endian order (what a writer that ignored byte order would leave
     * on a big-endian host): every 4-byte field swapped, the 8-byte size too. */
    buf = make_image(12, 10, 1, &len);
    uint64_t size = ckpt_fixup_get(buf + 24, 8);
    for (int i = 8; i < 24; i += 4)
        for (int j = 0; j < 2; j++) {
            uint8_t t = buf[i + j];
            buf[i + j] = buf[i + 3 - j];
            buf[i + 3 - j] = t;
        }
    for (int j = 0; j < 8; j++)
        buf[24 + j] = (uint8_t)(size >> (56 - 8 * j));
    expect_refused(buf, len, "wrong byte order: the checkpoint is big-endian");
    sim_free(buf);

    /* Not a checkpoint at all. */
    const char text[] = "[world]\nwidth = 64\nheight = 64\n......................................";
    expect_refused((const uint8_t *)text, sizeof text, "not a Horizon checkpoint");
}

/* Offsets of the sections of an image: SCEN payload at 36+12. */
static size_t section_at(const uint8_t *buf, int index)
{
    size_t pos = 36;
    for (int i = 0; i < index; i++)
        pos += 12 + (size_t)ckpt_fixup_get(buf + pos + 4, 8) + 4;
    return pos;
}

/* Rebuilds an image with another scenario text (CRCs and size fixed). */
static uint8_t *with_scenario(const uint8_t *buf, size_t len, const char *text, size_t *out_len)
{
    size_t s0 = section_at(buf, 0), s1 = section_at(buf, 1);
    size_t n = strlen(text);
    *out_len = len - (s1 - s0) + 12 + n + 4;
    uint8_t *out = malloc(*out_len);
    memcpy(out, buf, s0);
    memcpy(out + s0, "SCEN", 4);
    ckpt_fixup_put(out + s0 + 4, n, 8);
    memcpy(out + s0 + 12, text, n);
    memcpy(out + s0 + 12 + n + 4, buf + s1, len - s1);
    ckpt_fixup(out, *out_len, 1);
    return out;
}

static void test_hostile_sizes(void **state)
{
    (void)state;
    size_t len, n2;
    uint8_t *buf = make_image(12, 10, 1, &len);

    /* A scenario claiming a 65536 x 16384 world (2^30 cells, a 4 GiB field) in a tiny file:
     * refused as truncated before the field is allocated. */
    uint8_t *big = with_scenario(buf, len, "[world]\nwidth = 65536\nheight = 16384\n[agents]\n"
                                 "count = 0\n[run]\nseed = 1311768467463790320\n", &n2);
    /* make the step section agree, so that the size check is what stops it */
    size_t st = section_at(big, 1) + 12;
    ckpt_fixup_put(big + st + 16, 0, 8);
    ckpt_fixup_put(big + st + 24, 65536, 4);
    ckpt_fixup_put(big + st + 28, 16384, 4);
    ckpt_fixup(big, n2, 1);
    sim_alloc_fail_at(0); /* resets the largest-request counter */
    expect_refused(big, n2, "field section of 480 bytes (expected 4294967296)");
    /* ... and with the field section claiming its 4 GiB: */
    ckpt_fixup_put(big + section_at(big, 2) + 4, 4294967296ull, 8);
    ckpt_fixup(big, n2, 0);
    expect_refused(big, n2, "truncated checkpoint");
    assert_true(sim_alloc_largest() < 1024 * 1024);
    free(big);

    /* Section lengths near 2^64: refused by the length checks, nothing allocated. */
    uint8_t *evil = malloc(len);
    const uint64_t lengths[] = {UINT64_MAX, UINT64_MAX - 11, 1ull << 62, 65537};
    for (size_t i = 0; i < sizeof lengths / sizeof lengths[0]; i++)
        for (int sec = 0; sec < 4; sec++) {
            memcpy(evil, buf, len);
            ckpt_fixup_put(evil + section_at(buf, sec) + 4, lengths[i], 8);
            ckpt_fixup(evil, len, 0);
            sim_alloc_fail_at(0);
            expect_refused(evil, len, "section of|truncated");
            assert_true(sim_alloc_largest() < 1024 * 1024);
        }
    free(evil);

    /* A world over the cell cap in the scenario text. */
    big = with_scenario(buf, len, "[world]\nwidth = 65536\nheight = 65536\n", &n2);
    expect_refused(big, n2, "cells (allowed at most");
    free(big);
    /* A scenario that does not parse, and one with a NUL byte. */
    big = with_scenario(buf, len, "[world]\nwidth = -3\n", &n2);
    expect_refused(big, n2, "[scenario]:2: world.width: out of range");
    free(big);
    big = with_scenario(buf, len, "[world]\nwidth = 12\n", &n2);
    big[section_at(big, 0) + 12 + 3] = '\0';
    ckpt_fixup(big, n2, 0);
    expect_refused(big, n2, "NUL byte");
    free(big);
    sim_free(buf);
}

static void test_inconsistent_state(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = make_image(12, 10, 2, &len);
    uint8_t *bad = malloc(len);
    size_t st = section_at(buf, 1) + 12, ag = section_at(buf, 3) + 12;

    memcpy(bad, buf, len);
    ckpt_fixup_put(bad + st + 8, 42, 8); /* RNG key */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "RNG key 42 differs from run.seed");

    memcpy(bad, buf, len);
    ckpt_fixup_put(bad + st + 16, 5, 8); /* agent count */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "agents, the scenario has");

    memcpy(bad, buf, len);
    ckpt_fixup_put(bad + st + 24, 13, 4); /* width */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "13x10 cells in the step section");

    memcpy(bad, buf, len);
    ckpt_fixup_put(bad + st, UINT64_MAX, 8); /* step -1 */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "step -1");

    memcpy(bad, buf, len);
    memset(bad + st + 40, 'x', 16); /* backend name without its NUL */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "backend name");

    memcpy(bad, buf, len);
    ckpt_fixup_put(bad + ag + 4, 120, 4); /* agent 1 outside the 12x10 grid */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "agent 1: cell 120 outside");

    memcpy(bad, buf, len);
    memcpy(bad + ag + 4, bad + ag, 4); /* two agents on one cell */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "already holds another agent");

    memcpy(bad, buf, len);
    memcpy(bad + section_at(buf, 2), "AGNT", 4); /* sections out of order */
    ckpt_fixup(bad, len, 0);
    expect_refused(bad, len, "expected the field section");
    free(bad);
    sim_free(buf);
}

/* Offset of cell (x, y) of the field in an image of a w-cell-wide world. */
static size_t cell_at(const uint8_t *buf, int w, int x, int y)
{
    return section_at(buf, 2) + 12 + 4 * ((size_t)y * (size_t)w + (size_t)x);
}

/* A copy of the image with cell (x, y) set to v and the CRCs recomputed: a state that every
 * CRC check passes. */
static uint8_t *with_cell(const uint8_t *buf, size_t len, int w, int x, int y, float v)
{
    uint8_t *out = malloc(len);
    assert_non_null(out);
    memcpy(out, buf, len);
    uint32_t bits;
    memcpy(&bits, &v, 4);
    ckpt_fixup_put(out + cell_at(out, w, x, y), bits, 4);
    ckpt_fixup(out, len, 0);
    return out;
}

static void expect_decodes(const uint8_t *buf, size_t len)
{
    sim_checkpoint ck;
    sim_err err = {{0}};
    if (sim_checkpoint_decode(buf, len, "t.hzc", &ck, &err) != SIM_OK)
        fail_msg("refused a checkpoint a run can write: %s", err.msg);
    sim_checkpoint_release(&ck);
}

/* The lowest field value in an image of a w x h world. */
static float field_min(const uint8_t *buf, int w, int h)
{
    float lo = INFINITY;
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++) {
            float v;
            uint32_t bits = (uint32_t)ckpt_fixup_get(buf + cell_at(buf, w, x, y), 4);
            memcpy(&v, &bits, 4);
            lo = v < lo ? v : lo;
        }
    return lo;
}

/* NaN and infinite field values, and negative ones where the scenario has no negative source,
 * behind valid CRCs: refused, naming the cell, instead of a resumed run writing nan into
 * stats.csv. */
static void test_impossible_field_values(void **state)
{
    (void)state;
    size_t len;
    uint8_t *good = make_image(12, 10, 3, &len), *bad;
    static const struct {
        int x, y;
        float v;
        const char *want;
    } cases[] = {
        {5, 3, NAN, "t.hzc: corrupt checkpoint: non-finite field value at cell 5,3 (nan)"},
        {11, 9, INFINITY, "t.hzc: corrupt checkpoint: non-finite field value at cell 11,9 (inf)"},
        {0, 0, -INFINITY, "non-finite field value at cell 0,0 (-inf)"},
        {5, 3, -1.0f, "t.hzc: corrupt checkpoint: field value -1 at cell 5,3 is below 0, which "
                      "no run of this scenario produces"},
        {7, 0, -1e-45f, "field value -1.4013e-45 at cell 7,0 is below 0"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        bad = with_cell(good, len, 12, cases[i].x, cases[i].y, cases[i].v);
        expect_refused(bad, len, cases[i].want);
        free(bad);
    }
    /* -0 is not below 0, and there is no ceiling to invent */
    bad = with_cell(good, len, 12, 1, 1, -0.0f);
    expect_decodes(bad, len);
    free(bad);
    bad = with_cell(good, len, 12, 1, 1, 3e38f);
    expect_decodes(bad, len);
    free(bad);
    sim_free(good);

    /* A negative deposit, initial value or fixed edge makes negative values real (and no
     * floor exact: see field_floor in sim_checkpoint.c); only non-finite ones are refused. */
    for (int source = 0; source < 3; source++) {
        sim_scenario sc;
        small_scenario(&sc, 12, 10);
        if (source == 0) {
            sc.deposit = -5.0f;
        } else if (source == 1) {
            sc.initial = -2.0f;
        } else {
            sc.boundary = SIM_BOUNDARY_FIXED;
            sc.fixed_left = -3.0f;
        }
        good = make_image_of(&sc, 4, &len);
        assert_true(field_min(good, 12, 10) < 0.0f);
        expect_decodes(good, len);
        bad = with_cell(good, len, 12, 2, 3, -1e6f);
        expect_decodes(bad, len);
        free(bad);
        bad = with_cell(good, len, 12, 2, 3, NAN);
        expect_refused(bad, len, "non-finite field value at cell 2,3");
        free(bad);
        sim_free(good);
    }
}

/* The floor holds for real runs: scenarios whose sources are all >= 0 (zeros and -0 among
 * them), on every boundary, with tiny and full diffusion, with and without decay, never write
 * a checkpoint that the check refuses. */
static void test_field_floor_holds_for_runs(void **state)
{
    (void)state;
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 24; i++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        sim_scenario sc;
        small_scenario(&sc, 12, 10);
        sc.boundary = (int)(r >> 33) % 3;
        sc.diffusion = i % 4 == 0   ? 1e-6f
                       : i % 4 == 1 ? 1.0f
                                    : (float)((r >> 40) % 1000 + 1) / 1000.0f;
        sc.decay = (i % 3 == 0) ? 0.0f : 0.2f;
        sc.sweeps = 1 + (int)((r >> 20) % 5);
        sc.initial = (i % 5 == 0) ? -0.0f : 0.0f;
        sc.init_noise = (i % 2) ? 0.0f : 3.0f;
        sc.deposit = (i % 7 == 0) ? 0.0f : 1.5f;
        sc.fixed_top = 0.0f;
        sc.fixed_bottom = 4.0f;
        sc.fixed_left = -0.0f;
        sc.fixed_right = 1e-30f;
        size_t len;
        uint8_t *img = make_image_of(&sc, 20, &len);
        expect_decodes(img, len);
        sim_free(img);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resume_is_bit_identical),
        cmocka_unit_test(test_no_agents_round_trip),
        cmocka_unit_test(test_file_write_keeps_prev),
        cmocka_unit_test(test_every_byte_change_is_refused),
        cmocka_unit_test(test_every_truncation_is_refused),
        cmocka_unit_test(test_version_and_byte_order),
        cmocka_unit_test(test_hostile_sizes),
        cmocka_unit_test(test_inconsistent_state),
        cmocka_unit_test(test_impossible_field_values),
        cmocka_unit_test(test_field_floor_holds_for_runs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
