/* test_field_stats.c - the loops of a field's statistics (sim_field_stats.c) against plain
 * scalar ones written here from their contracts: sim_rows_stats (one pass with AVX-512F where the
 * processor has it, the separate loops elsewhere) gives each column's sum in row order, the
 * magnitude keys, the maximum and the checksum terms of the same cells, for widths that are and
 * are not multiples of 16 (the vector's masked tail), row ranges that start anywhere, an index
 * base, running values that it must add to, and every kind of float: NaNs of both signs,
 * infinities, zeros of both signs, subnormals and random bits. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_field_stats.h"
#include "sim_rules.h"

/* The running values that a call adds to (the oracle's and the function's start equal). */
typedef struct running {
    double part[600];
    uint32_t hi2, lo2;
    float mx;
    uint64_t sum;
} running;

static uint64_t rng_next(uint64_t *s)
{
    *s += 0x9E3779B97F4A7C15ull;
    return sim_mix64(*s);
}

static float from_bits(uint32_t b)
{
    float f;
    memcpy(&f, &b, sizeof f);
    return f;
}

static uint32_t bits_of(float f)
{
    uint32_t b;
    memcpy(&b, &f, sizeof b);
    return b;
}

/* The contracts, a cell at a time in row order. */
static void oracle(const float *field, int w, int y0, int y1, uint64_t base, running *r)
{
    for (int y = y0; y < y1; y++)
        for (int x = 0; x < w; x++) {
            const int64_t i = (int64_t)y * w + x;
            const float v = field[i];
            const uint32_t b = bits_of(v), k = b + b;
            r->part[x] += (double)v;
            r->hi2 = k > r->hi2 ? k : r->hi2;
            r->lo2 = k - 2u < r->lo2 ? k - 2u : r->lo2;
            if (v > r->mx)
                r->mx = v;
            r->sum += sim_checksum_cell(base + (uint64_t)i, b);
        }
}

static void assert_same(const running *want, const running *got, int w, const char *what)
{
    for (int x = 0; x < w; x++) {
        const double a = want->part[x], b = got->part[x];
        /* a NaN's payload is the addition's operand order, which C leaves open */
        if (isnan(a) && isnan(b))
            continue;
        if (memcmp(&a, &b, sizeof a) != 0) {
            print_error("%s: column %d: %a, want %a\n", what, x, b, a);
            fail();
        }
    }
    assert_int_equal(got->hi2, want->hi2);
    assert_int_equal(got->lo2, want->lo2);
    /* a zero maximum may come with either sign (sim_max_zero_sign settles it) */
    if (!(want->mx == 0.0f && got->mx == 0.0f) && bits_of(got->mx) != bits_of(want->mx)) {
        print_error("%s: maximum %a, want %a\n", what, (double)got->mx, (double)want->mx);
        fail();
    }
    assert_true(got->sum == want->sum);
}

/* sim_rows_stats against the oracle on rows y0 .. y1 - 1 of field, from the running start r0. */
static void check(const float *field, int w, int y0, int y1, uint64_t base, const running *r0,
                  const char *what)
{
    running want = *r0, got = *r0;
    oracle(field, w, y0, y1, base, &want);
    sim_rows_stats(field, w, y0, y1, base, got.part, &got.hi2, &got.lo2, &got.mx, &got.sum);
    assert_same(&want, &got, w, what);
}

static void fresh(running *r)
{
    memset(r, 0, sizeof *r);
    r->lo2 = 0xffffffffu;
    r->mx = -INFINITY;
}

/* A cell of every kind, at random. */
static float any_float(uint64_t *s)
{
    static const uint32_t special[] = {
        0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00000u,
        0x7f800001u, 0xffffffffu, 0x00000001u, 0x807fffffu, 0x7f7fffffu, 0xff7fffffu};
    const uint64_t r = rng_next(s);
    if (r % 8 == 0)
        return from_bits(special[(r >> 8) % (sizeof special / sizeof special[0])]);
    if (r % 8 == 1)
        return from_bits((uint32_t)(r >> 16));
    return (float)((double)(r >> 40) / 16777216.0 * 100.0 - 20.0);
}

static const int widths[] = {1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 100, 512, 517};

static void test_every_width(void **state)
{
    (void)state;
    uint64_t s = 1;
    float *field = malloc(sizeof(float) * 600 * 9);
    assert_non_null(field);
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
        const int w = widths[k], h = 9;
        for (int i = 0; i < w * h; i++)
            field[i] = any_float(&s);
        char what[64];
        running r;
        fresh(&r);
        snprintf(what, sizeof what, "width %d, all rows", w);
        check(field, w, 0, h, 0, &r, what);
        snprintf(what, sizeof what, "width %d, rows 3..7, base 12345", w);
        check(field, w, 3, 7, 12345u, &r, what);
        /* running values that the call must keep where its cells do not beat them */
        for (int x = 0; x < w; x++)
            r.part[x] = (double)x * 0.25 - 3.0;
        r.hi2 = 0x7f000000u;
        r.lo2 = 0x00000010u;
        r.mx = 50.0f;
        r.sum = 0xdeadbeefcafef00dull;
        snprintf(what, sizeof what, "width %d, running values", w);
        check(field, w, 1, 8, 7u, &r, what);
        snprintf(what, sizeof what, "width %d, no rows", w);
        check(field, w, 4, 4, 0, &r, what);
    }
    free(field);
}

/* Fields whose maximum the integer order must get right: all negative (the least negative
 * wins), all NaN (no cell enters: the start stays), zeros of both signs, ordinary values. */
static void test_maximum_kinds(void **state)
{
    (void)state;
    enum { W = 37, H = 5 };
    float field[W * H];
    uint64_t s = 7;
    running r;
    fresh(&r);
    for (int i = 0; i < W * H; i++)
        field[i] = -1.0f - (float)(rng_next(&s) % 1000) / 8.0f;
    field[W * H - 3] = -0.5f;
    check(field, W, 0, H, 0, &r, "all negative");
    for (int i = 0; i < W * H; i++)
        field[i] = from_bits(i % 2 ? 0x7fc00000u : 0xffc00001u);
    check(field, W, 0, H, 0, &r, "all NaN");
    for (int i = 0; i < W * H; i++)
        field[i] = i % 3 ? -0.0f : 0.0f;
    check(field, W, 0, H, 0, &r, "zeros");
    for (int i = 0; i < W * H; i++)
        field[i] = from_bits((uint32_t)(rng_next(&s) % 0x00800000u)); /* subnormals */
    check(field, W, 0, H, 99u, &r, "subnormals");
    for (int i = 0; i < W * H; i++)
        field[i] = (float)(i % 17) * 0.125f;
    field[2 * W + 36] = 1e30f; /* in the tail of a row */
    check(field, W, 0, H, 0, &r, "largest in a tail");
}

/* A whole 512-wide field at the row blocks the callers use, against one call over all rows. */
static void test_blocks_add_up(void **state)
{
    (void)state;
    enum { W = 512, H = 64 };
    float *field = malloc(sizeof(float) * W * H);
    assert_non_null(field);
    uint64_t s = 3;
    for (int i = 0; i < W * H; i++)
        field[i] = (float)((double)(rng_next(&s) >> 40) / 16777216.0);
    running one, blocks;
    fresh(&one);
    fresh(&blocks);
    oracle(field, W, 0, H, 0, &one);
    for (int y0 = 0; y0 < H; y0 += 13) {
        const int y1 = y0 + 13 < H ? y0 + 13 : H;
        sim_rows_stats(field, W, y0, y1, 0, blocks.part, &blocks.hi2, &blocks.lo2, &blocks.mx,
                       &blocks.sum);
    }
    assert_same(&one, &blocks, W, "blocks of 13 rows");
    free(field);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_width),
        cmocka_unit_test(test_maximum_kinds),
        cmocka_unit_test(test_blocks_add_up),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
