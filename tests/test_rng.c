/* test_rng.c - the counter-based generator: Philox4x32-10 against the published Random123
 * known-answer vectors (kat_vectors), the counter layout of sim_random, and the statistics of
 * sim_decide's noise draw (how often, and which candidate). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim_rules.h"

/* Random123 kat_vectors, "philox4x32 10": counter (4 words), key (2 words) -> output. */
static const struct {
    uint32_t ctr[4], key[2], out[4];
} kat[] = {
    {{0x00000000u, 0x00000000u, 0x00000000u, 0x00000000u},
     {0x00000000u, 0x00000000u},
     {0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}},
    {{0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
     {0xffffffffu, 0xffffffffu},
     {0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}},
    {{0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
     {0xa4093822u, 0x299f31d0u},
     {0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}},
};

static void test_philox_known_answers(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof kat / sizeof kat[0]; i++) {
        sim_u32x4 c;
        memcpy(c.v, kat[i].ctr, sizeof c.v);
        sim_u32x4 r = sim_philox4x32_10(c, kat[i].key[0], kat[i].key[1]);
        for (int k = 0; k < 4; k++) {
            if (r.v[k] != kat[i].out[k])
                fail_msg("vector %zu word %d: got %08x, expected %08x", i, k, r.v[k],
                         kat[i].out[k]);
        }
    }
}

/* sim_random is Philox with counter (step lo, step hi, index, purpose) and key (seed lo, hi). */
static void test_random_counter_layout(void **state)
{
    (void)state;
    const uint64_t seed = 0x299f31d0a4093822ull;
    const uint64_t step = 0x85a308d3243f6a88ull;
    sim_u32x4 r = sim_random(seed, step, 0x13198a2eu, 0x03707344u);
    assert_int_equal(r.v[0], 0xd16cfe09u);
    assert_int_equal(r.v[1], 0x94fdccebu);
    assert_int_equal(r.v[2], 0x5001e420u);
    assert_int_equal(r.v[3], 0x24126ea1u);

    /* Every input word matters: changing any one changes the output. */
    sim_u32x4 base = sim_random(1, 2, 3, SIM_RNG_STEP);
    sim_u32x4 v[5] = {sim_random(2, 2, 3, SIM_RNG_STEP), sim_random(1ull | 1ull << 32, 2, 3, 0),
                      sim_random(1, 3, 3, SIM_RNG_STEP), sim_random(1, 2, 4, SIM_RNG_STEP),
                      sim_random(1, 2, 3, SIM_RNG_PLACE)};
    for (int i = 0; i < 5; i++)
        assert_true(memcmp(&base, &v[i], sizeof base) != 0);
    sim_u32x4 hi = sim_random(1, 2ull | 1ull << 32, 3, SIM_RNG_STEP);
    assert_true(memcmp(&base, &hi, sizeof base) != 0);
}

/* Each of the 128 output bits is set about half the time over many counters. */
static void test_philox_bit_balance(void **state)
{
    (void)state;
    enum { N = 20000 };
    static int ones[128];
    memset(ones, 0, sizeof ones);
    for (uint32_t i = 0; i < N; i++) {
        sim_u32x4 r = sim_random(12345, 7, i, SIM_RNG_STEP);
        for (int w = 0; w < 4; w++)
            for (int b = 0; b < 32; b++)
                ones[w * 32 + b] += (r.v[w] >> b) & 1u;
    }
    /* Binomial(N, 1/2): sd = 70.7; 6 sd leaves no room for a stuck or biased bit. */
    for (int b = 0; b < 128; b++)
        if (ones[b] < N / 2 - 425 || ones[b] > N / 2 + 425)
            fail_msg("bit %d set %d times of %d", b, ones[b], N);
}

static void test_noise_threshold(void **state)
{
    (void)state;
    assert_true(sim_noise_threshold(0.0) == 0);
    assert_true(sim_noise_threshold(-1.0) == 0);
    assert_true(sim_noise_threshold(1.0) == (1ull << 32));
    assert_true(sim_noise_threshold(0.5) == (1ull << 31));
    assert_true(sim_noise_threshold(0.25) == (1ull << 30));
}

/* noise = 1: every candidate equally likely (chi-square over 9 bins), whatever the sums. */
static void test_decide_random_uniform(void **state)
{
    (void)state;
    enum { N = 90000 };
    int64_t sums[SIM_NCAND] = {0, 0, 0, 0, 0, 0, 0, 0, 1000};
    long count[SIM_NCAND] = {0};
    uint64_t thr = sim_noise_threshold(1.0);
    for (uint32_t i = 0; i < N; i++) {
        int c = sim_decide(sums, sim_random(99, 3, i, SIM_RNG_STEP), thr);
        assert_true(c >= 0 && c < SIM_NCAND);
        count[c]++;
    }
    double expect = (double)N / SIM_NCAND, chi2 = 0.0;
    for (int c = 0; c < SIM_NCAND; c++)
        chi2 += (count[c] - expect) * (count[c] - expect) / expect;
    /* 8 degrees of freedom: P(chi2 > 26.1) = 0.001. */
    if (chi2 > 26.1)
        fail_msg("chi-square %.2f over 9 candidates (counts %ld %ld %ld %ld %ld %ld %ld %ld %ld)",
                 chi2, count[0], count[1], count[2], count[3], count[4], count[5], count[6],
                 count[7], count[8]);
}

/* noise = 0.25: a quarter of the decisions are random; the rest pick the argmax. */
static void test_decide_noise_fraction(void **state)
{
    (void)state;
    enum { N = 40000 };
    int64_t sums[SIM_NCAND] = {5, 1, 2, 3, 9, 4, 0, 8, 7}; /* argmax 4 */
    uint64_t thr = sim_noise_threshold(0.25);
    long not_best = 0;
    for (uint32_t i = 0; i < N; i++)
        not_best += sim_decide(sums, sim_random(5, 11, i, SIM_RNG_STEP), thr) != 4;
    /* Random picks land on the argmax 1/9 of the time: expect N * 0.25 * 8/9 = 8889. */
    double expect = N * 0.25 * 8.0 / 9.0, sd = 82.0; /* sqrt(N p (1-p)), p = 2/9 */
    if (not_best < expect - 6 * sd || not_best > expect + 6 * sd)
        fail_msg("%ld non-argmax decisions of %d, expected about %.0f", not_best, N, expect);
}

/* noise = 0: the argmax, ties to the lower index, whatever the random words. */
static void test_decide_argmax(void **state)
{
    (void)state;
    sim_u32x4 zero = {{0, 0, 0, 0}};
    int64_t a[SIM_NCAND] = {3, 7, 7, 1, 0, 7, -5, 2, 6};
    assert_int_equal(sim_decide(a, zero, 0), 1);
    int64_t b[SIM_NCAND] = {4, 4, 4, 4, 4, 4, 4, 4, 4};
    assert_int_equal(sim_decide(b, zero, 0), 0);
    int64_t c[SIM_NCAND] = {SIM_SUM_INVALID, SIM_SUM_INVALID, -3, SIM_SUM_INVALID, -1,
                            SIM_SUM_INVALID, -1, -2, SIM_SUM_INVALID};
    c[0] = -10;
    assert_int_equal(sim_decide(c, zero, 0), 4);
    int64_t d[SIM_NCAND] = {0, 0, 0, 0, 0, 0, 0, 0, 1};
    assert_int_equal(sim_decide(d, zero, 0), 8);
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(sim_decide(a, sim_random(1, 1, i, SIM_RNG_STEP), 0), 1);
}

/* Claim keys are distinct per agent and never 0 (0 means "no claim"). */
static void test_claim_key(void **state)
{
    (void)state;
    sim_u32x4 zero = {{0, 0, 0, 0}};
    assert_true(sim_claim_key(zero, 0) != 0);
    for (uint32_t id = 0; id < 1000; id++) {
        uint64_t k = sim_claim_key(sim_random(3, 4, id, SIM_RNG_STEP), id);
        assert_true(k != 0);
        assert_int_equal((uint32_t)k, id);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_philox_known_answers),
        cmocka_unit_test(test_random_counter_layout),
        cmocka_unit_test(test_philox_bit_balance),
        cmocka_unit_test(test_noise_threshold),
        cmocka_unit_test(test_decide_random_uniform),
        cmocka_unit_test(test_decide_noise_fraction),
        cmocka_unit_test(test_decide_argmax),
        cmocka_unit_test(test_claim_key),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
