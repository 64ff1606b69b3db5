/* hz_test_util.h - small helpers shared by the unit tests: a test-local PRNG (independent of the
 * Philox generator under test), temporary directories, whole-file reads, substring asserts and
 * scenario comparison.
 * Include after <cmocka.h>. Everything is static inline so that unused helpers cost nothing. */
#ifndef HZ_TEST_UTIL_H
#define HZ_TEST_UTIL_H

#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim_scenario.h"

/* xorshift64*: deterministic test data that owes nothing to the code under test. */
typedef struct hz_rng {
    uint64_t s;
} hz_rng;

static inline uint64_t hz_next(hz_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545F4914F6CDD1Dull;
}

/* Uniform in [0, n). */
static inline uint64_t hz_below(hz_rng *r, uint64_t n)
{
    return hz_next(r) % n;
}

/* Uniform float in [lo, hi). */
static inline float hz_uniform(hz_rng *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((double)(hz_next(r) >> 40) / 16777216.0);
}

/* Creates a fresh directory /tmp/hz_TAG_XXXXXX into buf; returns 0 on success. */
static inline int hz_mkdtemp(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/hz_%s_XXXXXX", tag);
    return mkdtemp(buf) ? 0 : -1;
}

static inline int hz_rm_one(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
    (void)sb;
    (void)type;
    (void)ftw;
    return remove(path);
}

/* rm -rf path (depth first, no symlinks followed). */
static inline void hz_rm_rf(const char *path)
{
    nftw(path, hz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The whole file in a malloc'ed buffer with a NUL after it; NULL if it cannot be read. */
static inline char *hz_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    for (;;) {
        if (!buf)
            break;
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        char *bigger = realloc(buf, 2 * cap + 1);
        if (!bigger) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = bigger;
        cap *= 2;
    }
    fclose(f);
    if (buf) {
        buf[n] = '\0';
        if (len)
            *len = n;
    }
    return buf;
}

static inline int hz_write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t put = fwrite(data, 1, len, f);
    return fclose(f) == 0 && put == len ? 0 : -1;
}

/* Fails the test, showing both strings, unless needle occurs in haystack. */
#define hz_assert_contains(haystack, needle)                                                     \
    do {                                                                                         \
        const char *hz_h = (haystack), *hz_n = (needle);                                         \
        if (!strstr(hz_h, hz_n))                                                                 \
            fail_msg("expected \"%s\" in \"%s\"", hz_n, hz_h);                                   \
    } while (0)

/* The scenario as INI text (malloc'ed): its values, without the bookkeeping of where they came
 * from, so that two scenarios compare by what they mean. */
static inline char *hz_scenario_ini(const sim_scenario *sc)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    assert_non_null(m);
    sim_scenario_write_ini(sc, m);
    fclose(m);
    return text;
}

/* Equal values, every float and double written exactly. */
static inline void hz_assert_same_scenario(const sim_scenario *a, const sim_scenario *b)
{
    char *ta = hz_scenario_ini(a), *tb = hz_scenario_ini(b);
    assert_string_equal(ta, tb);
    free(ta);
    free(tb);
}

#endif
