/* test_map.c - sim_map, PNG maps to cell values: exact values for every gray depth, gray+alpha,
 * gray palettes and interlacing; nearest resampling against hand-worked tables and against the
 * naive oracle (decode at the map's own size, then pick pixels); one-line refusals that name
 * the file and the key; size limits checked before anything is allocated; no libpng output on
 * stderr; and an allocation-failure sweep that leaves nothing allocated.
 *
 * The PNGs are made by a small encoder written from the PNG spec with zlib alone, so the code
 * under test (libpng underneath) is checked against an independent writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "hz_test_util.h"
#include "sim_alloc.h"
#include "sim_map.h"

/* ---- a PNG encoder from the spec (filter 0, optionally Adam7) ---- */

enum { GRAY = 0, RGB = 2, PALETTE = 3, GRAY_ALPHA = 4, RGBA = 6 };

typedef struct png_spec {
    int w, h, depth, ctype, interlace;
    const uint16_t *px;  /* w*h*channels samples, row-major */
    const uint8_t *plte; /* nplte RGB triples */
    int nplte;
    const uint8_t *trns; /* ntrns bytes of tRNS, or NULL */
    int ntrns;
} png_spec;

typedef struct bytes {
    uint8_t *p;
    size_t len;
} bytes;

static void put(bytes *b, const void *p, size_t n)
{
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void put32(bytes *b, uint32_t v)
{
    uint8_t q[4] = {(uint8_t)(v >> 24), (uint8_t)(v >> 16), (uint8_t)(v >> 8), (uint8_t)v};
    put(b, q, 4);
}

static void put_chunk(bytes *b, const char *type, const uint8_t *body, size_t n)
{
    put32(b, (uint32_t)n);
    size_t at = b->len;
    put(b, type, 4);
    if (n)
        put(b, body, n);
    put32(b, (uint32_t)crc32(0, b->p + at, (uInt)(n + 4)));
}

static int channels(int ctype)
{
    return ctype == RGB ? 3 : ctype == GRAY_ALPHA ? 2 : ctype == RGBA ? 4 : 1;
}

/* n samples packed MSB first at depth bits (16: big-endian); returns the bytes written. */
static size_t pack(uint8_t *dst, const uint16_t *s, size_t n, int depth)
{
    if (depth == 16) {
        for (size_t i = 0; i < n; i++) {
            dst[2 * i] = (uint8_t)(s[i] >> 8);
            dst[2 * i + 1] = (uint8_t)s[i];
        }
        return 2 * n;
    }
    size_t nb = (n * (size_t)depth + 7) / 8;
    memset(dst, 0, nb);
    for (size_t i = 0; i < n; i++) {
        size_t bit = i * (size_t)depth;
        dst[bit / 8] |= (uint8_t)(s[i] << (8 - depth - bit % 8));
    }
    return nb;
}

/* The whole file in a malloc'ed buffer. */
static bytes encode(const png_spec *s)
{
    static const int adam7[7][4] = {{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4},
                                    {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}};
    static const int plain[1][4] = {{0, 0, 1, 1}};
    const int(*pass)[4] = s->interlace ? adam7 : plain;
    int c = channels(s->ctype), npass = s->interlace ? 7 : 1;
    size_t raw_cap = (size_t)s->h * 8 + (size_t)s->w * s->h * c * 2 + 64;
    uint8_t *raw = malloc(raw_cap);
    uint16_t *sub = malloc(((size_t)s->w * c + 1) * sizeof *sub);
    assert_true(raw && sub);
    size_t rlen = 0;
    for (int p = 0; p < npass; p++)
        for (int y = pass[p][1]; y < s->h; y += pass[p][3]) {
            size_t n = 0;
            for (int x = pass[p][0]; x < s->w; x += pass[p][2])
                for (int k = 0; k < c; k++)
                    sub[n++] = s->px[((size_t)y * s->w + x) * c + k];
            if (n == 0)
                break; /* an empty pass has no rows at all */
            raw[rlen++] = 0; /* filter: none */
            rlen += pack(raw + rlen, sub, n, s->depth);
        }
    uLongf zlen = compressBound(rlen);
    uint8_t *z = malloc(zlen);
    assert_non_null(z);
    assert_int_equal(compress2(z, &zlen, raw, rlen, 9), Z_OK);

    bytes b = {malloc(zlen + 2048), 0}; /* + every other chunk at its largest */
    assert_non_null(b.p);
    put(&b, "\x89PNG\r\n\x1a\n", 8);
    uint8_t ihdr[13];
    bytes hb = {ihdr, 0};
    put32(&hb, (uint32_t)s->w);
    put32(&hb, (uint32_t)s->h);
    uint8_t tail[5] = {(uint8_t)s->depth, (uint8_t)s->ctype, 0, 0, (uint8_t)s->interlace};
    put(&hb, tail, 5);
    put_chunk(&b, "IHDR", ihdr, 13);
    if (s->plte)
        put_chunk(&b, "PLTE", s->plte, (size_t)s->nplte * 3);
    if (s->trns)
        put_chunk(&b, "tRNS", s->trns, (size_t)s->ntrns);
    put_chunk(&b, "IDAT", z, zlen);
    put_chunk(&b, "IEND", NULL, 0);
    free(z);
    free(sub);
    free(raw);
    return b;
}

/* ---- fixture and checks ---- */

typedef struct fixture {
    char dir[64];
    char path[256];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f || hz_mkdtemp(f->dir, sizeof f->dir, "map") != 0) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    hz_rm_rf(f->dir);
    free(f);
    return 0;
}

/* Writes n bytes to DIR/name; returns the path (valid until the next call). */
static const char *save_raw(fixture *f, const char *name, const void *raw, size_t n)
{
    snprintf(f->path, sizeof f->path, "%s/%s", f->dir, name);
    assert_int_equal(hz_write_file(f->path, raw, n), 0);
    return f->path;
}

static const char *save_png(fixture *f, const char *name, const png_spec *s)
{
    bytes b = encode(s);
    save_raw(f, name, b.p, b.len);
    free(b.p);
    return f->path;
}

/* Same float to the last bit (and a readable failure). */
static void assert_same_float(float got, float want, int i)
{
    if (memcmp(&got, &want, sizeof got) != 0)
        fail_msg("cell %d: got %a (%.9g), want %a (%.9g)", i, (double)got, (double)got,
                 (double)want, (double)want);
}

/* A refusal: the code, and one line "PATH: WHAT: ..." containing `part`. */
static void assert_refusal(int rc, int want_rc, const sim_err *err, const char *path,
                           const char *what, const char *part)
{
    assert_int_equal(rc, want_rc);
    char prefix[512];
    snprintf(prefix, sizeof prefix, "%s: %s: ", path, what);
    if (strncmp(err->msg, prefix, strlen(prefix)) != 0)
        fail_msg("expected \"%s\" to start with \"%s\"", err->msg, prefix);
    assert_null(strchr(err->msg, '\n'));
    hz_assert_contains(err->msg, part);
}

/* Loads the map at path into a fresh w x h buffer with a guard float after it. */
static float *load(const char *path, int w, int h, int resample)
{
    float *out = malloc(((size_t)w * h + 1) * sizeof *out);
    assert_non_null(out);
    out[(size_t)w * h] = -7.0f;
    sim_err err = {{0}};
    int rc = sim_map_load(path, "test.map", w, h, resample, out, &err);
    if (rc != SIM_OK)
        fail_msg("%s", err.msg);
    assert_true(out[(size_t)w * h] == -7.0f); /* nothing written past the end */
    return out;
}

/* ---- values ---- */

static void test_gray8_exact(void **state)
{
    const uint16_t px[12] = {0, 1, 2, 127, 128, 129, 200, 254, 255, 17, 99, 3};
    png_spec s = {.w = 4, .h = 3, .depth = 8, .ctype = GRAY, .px = px};
    float *out = load(save_png(*state, "g8.png", &s), 4, 3, SIM_MAP_RESAMPLE_NONE);
    for (int i = 0; i < 12; i++)
        assert_same_float(out[i], (float)px[i] / 255.0f, i);
    assert_same_float(out[8], 1.0f, 8);
    free(out);
}

static void test_gray16_exact(void **state)
{
    const uint16_t px[6] = {0, 1, 32767, 32768, 65534, 65535};
    png_spec s = {.w = 3, .h = 2, .depth = 16, .ctype = GRAY, .px = px};
    float *out = load(save_png(*state, "g16.png", &s), 3, 2, SIM_MAP_RESAMPLE_NONE);
    assert_same_float(out[5], 1.0f, 5);
    assert_same_float(out[3], 32768.0f / 65535.0f, 3);
    assert_same_float(out[0], 0.0f, 0);
    for (int i = 0; i < 6; i++)
        assert_same_float(out[i], (float)px[i] / 65535.0f, i);
    free(out);
}

/* Depths 1, 2 and 4, plain and interlaced, on an odd width so rows end in padding bits. */
static void test_low_depths(void **state)
{
    enum { W = 7, H = 5 };
    uint16_t px[W * H];
    for (int depth = 1; depth <= 4; depth *= 2) {
        int maxval = (1 << depth) - 1;
        for (int i = 0; i < W * H; i++)
            px[i] = (uint16_t)((i * 5 + i / W) % (maxval + 1));
        for (int il = 0; il <= 1; il++) {
            png_spec s = {.w = W, .h = H, .depth = depth, .ctype = GRAY, .interlace = il,
                          .px = px};
            float *out = load(save_png(*state, "low.png", &s), W, H,
                              SIM_MAP_RESAMPLE_NONE);
            for (int i = 0; i < W * H; i++)
                assert_same_float(out[i], (float)px[i] / (float)maxval, i);
            free(out);
        }
    }
}

/* Gray+alpha (8 and 16 bits) and gray with tRNS: the alpha never changes a value. */
static void test_alpha_ignored(void **state)
{
    uint16_t ga[2 * 4 * 3];
    for (int i = 0; i < 12; i++) {
        ga[2 * i] = (uint16_t)(i * 23);
        ga[2 * i + 1] = (uint16_t)(255 - i * 20);
    }
    png_spec s = {.w = 4, .h = 3, .depth = 8, .ctype = GRAY_ALPHA, .px = ga};
    float *out = load(save_png(*state, "ga8.png", &s), 4, 3, SIM_MAP_RESAMPLE_NONE);
    for (int i = 0; i < 12; i++)
        assert_same_float(out[i], (float)ga[2 * i] / 255.0f, i);
    free(out);

    for (int i = 0; i < 12; i++) {
        ga[2 * i] = (uint16_t)(i * 5957);
        ga[2 * i + 1] = (uint16_t)(i * 1000);
    }
    s.depth = 16;
    s.interlace = 1;
    out = load(save_png(*state, "ga16.png", &s), 4, 3, SIM_MAP_RESAMPLE_NONE);
    for (int i = 0; i < 12; i++)
        assert_same_float(out[i], (float)ga[2 * i] / 65535.0f, i);
    free(out);

    const uint16_t g[4] = {0, 5, 5, 255};
    const uint8_t trns[2] = {0, 5}; /* gray 5 transparent */
    png_spec t = {.w = 2, .h = 2, .depth = 8, .ctype = GRAY, .px = g, .trns = trns, .ntrns = 2};
    out = load(save_png(*state, "trns.png", &t), 2, 2, SIM_MAP_RESAMPLE_NONE);
    for (int i = 0; i < 4; i++)
        assert_same_float(out[i], (float)g[i] / 255.0f, i);
    free(out);
}

/* Gray palettes read as the entry's gray over 255; a colour entry or an index past the palette
 * is refused. */
static void test_palette(void **state)
{
    fixture *f = *state;
    const uint8_t pal[4 * 3] = {0, 0, 0, 51, 51, 51, 200, 200, 200, 255, 255, 255};
    const uint8_t trns[1] = {0};
    const uint16_t idx[6] = {3, 2, 1, 0, 1, 3};
    png_spec s = {.w = 3, .h = 2, .depth = 4, .ctype = PALETTE, .px = idx, .plte = pal,
                  .nplte = 4, .trns = trns, .ntrns = 1};
    float *out = load(save_png(f, "pal4.png", &s), 3, 2, SIM_MAP_RESAMPLE_NONE);
    for (int i = 0; i < 6; i++)
        assert_same_float(out[i], (float)pal[3 * idx[i]] / 255.0f, i);
    free(out);

    float buf[6];
    sim_err err = {{0}};
    const uint8_t colour[2 * 3] = {7, 7, 7, 255, 0, 0};
    const uint16_t idx2[6] = {0, 1, 0, 1, 0, 1};
    png_spec c = {.w = 3, .h = 2, .depth = 8, .ctype = PALETTE, .px = idx2, .plte = colour,
                  .nplte = 2};
    const char *path = save_png(f, "colour_pal.png", &c);
    assert_refusal(sim_map_load(path, "field.food.map", 3, 2, 0, buf, &err), SIM_EINVAL, &err,
                   path, "field.food.map",
                   "colour palette PNG (entry 1 is 255,0,0); save it as 8- or 16-bit grayscale");

    const uint16_t past[6] = {0, 1, 2, 3, 4, 1}; /* index 4 of a 4-entry palette */
    png_spec p = {.w = 3, .h = 2, .depth = 8, .ctype = PALETTE, .px = past, .plte = pal,
                  .nplte = 4};
    path = save_png(f, "past.png", &p);
    assert_refusal(sim_map_load(path, "w", 3, 2, 0, buf, &err), SIM_EINVAL, &err, path, "w",
                   "palette index 4 of a 4-entry palette");
}

/* Interlaced and plain files of the same pixels give the same map, at its size and resampled
 * both ways. */
static void test_interlaced(void **state)
{
    enum { W = 13, H = 11 };
    uint16_t px[W * H];
    hz_rng r = {42};
    for (int i = 0; i < W * H; i++)
        px[i] = (uint16_t)hz_below(&r, 65536);
    png_spec s = {.w = W, .h = H, .depth = 16, .ctype = GRAY, .px = px};
    const int sizes[3][2] = {{W, H}, {5, 4}, {30, 21}};
    for (int k = 0; k < 3; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        s.interlace = 0;
        float *plain = load(save_png(*state, "plain.png", &s), w, h, 1);
        s.interlace = 1;
        float *adam7 = load(save_png(*state, "adam7.png", &s), w, h, 1);
        for (int i = 0; i < w * h; i++)
            assert_same_float(adam7[i], plain[i], i);
        if (k == 0)
            for (int i = 0; i < w * h; i++)
                assert_same_float(plain[i], (float)px[i] / 65535.0f, i);
        free(plain);
        free(adam7);
    }
}

/* ---- resampling ---- */

/* Hand-worked: 3x2 onto 7x5 takes columns 0 0 1 1 1 2 2 and rows 0 0 1 1 1
 * (sx = (2x+1)*3/14, sy = (2y+1)*2/10); 4x4 onto 2x2 takes columns and rows 1 and 3. */
static void test_nearest_tables(void **state)
{
    const uint16_t a[6] = {10, 20, 30, 40, 50, 60};
    png_spec s = {.w = 3, .h = 2, .depth = 8, .ctype = GRAY, .px = a};
    float *out = load(save_png(*state, "a.png", &s), 7, 5, SIM_MAP_RESAMPLE_NEAREST);
    const int cols[7] = {0, 0, 1, 1, 1, 2, 2}, rows[5] = {0, 0, 1, 1, 1};
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 7; x++)
            assert_same_float(out[y * 7 + x], (float)a[rows[y] * 3 + cols[x]] / 255.0f,
                              y * 7 + x);
    free(out);

    uint16_t b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (uint16_t)(i * 16);
    png_spec t = {.w = 4, .h = 4, .depth = 8, .ctype = GRAY, .px = b};
    out = load(save_png(*state, "b.png", &t), 2, 2, SIM_MAP_RESAMPLE_NEAREST);
    const int want[4] = {1 * 4 + 1, 1 * 4 + 3, 3 * 4 + 1, 3 * 4 + 3};
    for (int i = 0; i < 4; i++)
        assert_same_float(out[i], (float)b[want[i]] / 255.0f, i);
    free(out);
}

/* The oracle: the map decoded at its own size, then cell (x, y) picked by the formula of
 * sim_map.h, against the resampling decoder, over random map and world sizes. */
static void test_nearest_oracle(void **state)
{
    hz_rng r = {7};
    for (int trial = 0; trial < 40; trial++) {
        int pw = 2 + (int)hz_below(&r, 40), ph = 2 + (int)hz_below(&r, 40);
        int w = 1 + (int)hz_below(&r, 90), h = 1 + (int)hz_below(&r, 90);
        int depth = trial % 2 ? 16 : 8, il = trial % 3 == 0;
        uint16_t *px = malloc((size_t)pw * ph * sizeof *px);
        assert_non_null(px);
        for (int i = 0; i < pw * ph; i++)
            px[i] = (uint16_t)hz_below(&r, depth == 16 ? 65536 : 256);
        png_spec s = {.w = pw, .h = ph, .depth = depth, .ctype = GRAY, .interlace = il,
                      .px = px};
        const char *path = save_png(*state, "r.png", &s);
        float *full = load(path, pw, ph, SIM_MAP_RESAMPLE_NONE);
        float *got = load(path, w, h, SIM_MAP_RESAMPLE_NEAREST);
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                int64_t sx = (2 * (int64_t)x + 1) * pw / (2 * (int64_t)w);
                int64_t sy = (2 * (int64_t)y + 1) * ph / (2 * (int64_t)h);
                assert_same_float(got[y * w + x], full[sy * pw + sx], y * w + x);
            }
        free(got);
        free(full);
        free(px);
    }
}

/* The largest map accepted loads, up to its last cell; one pixel more is refused. */
static void test_max_side(void **state)
{
    fixture *f = *state;
    const int w = SIM_MAP_MAX_SIDE;
    uint16_t *px = malloc((size_t)w * 2 * sizeof *px);
    assert_non_null(px);
    for (int i = 0; i < w * 2; i++)
        px[i] = (uint16_t)(i % 251);
    png_spec s = {.w = w, .h = 2, .depth = 8, .ctype = GRAY, .px = px};
    float *out = load(save_png(f, "max.png", &s), w, 2, SIM_MAP_RESAMPLE_NONE);
    assert_same_float(out[2 * w - 1], (float)px[2 * w - 1] / 255.0f, 2 * w - 1);
    free(out);
    free(px);
}

/* ---- refusals ---- */

static void test_size_mismatch(void **state)
{
    const uint16_t a[6] = {0};
    png_spec s = {.w = 3, .h = 2, .depth = 8, .ctype = GRAY, .px = a};
    const char *path = save_png(*state, "small.png", &s);
    float out[35];
    sim_err err = {{0}};
    assert_refusal(sim_map_load(path, "world.walls", 7, 5, SIM_MAP_RESAMPLE_NONE, out, &err),
                   SIM_EINVAL, &err, path, "world.walls",
                   "3x2 map for a 7x5 world (set world.map_resample = nearest to resample)");
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A well-formed 8-bit gray IHDR of any size, then IEND: no pixels at all. */
static size_t header_only(uint8_t b[45], uint32_t w, uint32_t h)
{
    memcpy(b, "\x89PNG\r\n\x1a\n", 8);
    put_be32(b + 8, 13);
    memcpy(b + 12, "IHDR", 4);
    put_be32(b + 16, w);
    put_be32(b + 20, h);
    b[24] = 8;
    b[25] = b[26] = b[27] = b[28] = 0;
    put_be32(b + 29, (uint32_t)crc32(0, b + 12, 17));
    put_be32(b + 33, 0);
    memcpy(b + 37, "IEND", 4);
    put_be32(b + 41, (uint32_t)crc32(0, b + 37, 4));
    return 45;
}

static void test_refusals(void **state)
{
    fixture *f = *state;
    float out[64 * 64];
    sim_err err = {{0}};
    const char *what = "world.walls";

    const char *path = save_raw(f, "text.png", "hello, this is not an image\n", 28);
    assert_refusal(sim_map_load(path, what, 8, 8, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "not a PNG file");
    path = save_raw(f, "empty.png", "", 0);
    assert_refusal(sim_map_load(path, what, 8, 8, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "not a PNG file");

    /* A valid map cut in half, and cut inside its header. */
    uint16_t px[64 * 64];
    hz_rng r = {3};
    for (int i = 0; i < 64 * 64; i++)
        px[i] = (uint16_t)hz_below(&r, 256);
    png_spec s = {.w = 64, .h = 64, .depth = 8, .ctype = GRAY, .px = px};
    bytes b = encode(&s);
    assert_true(b.len > 1000);
    path = save_raw(f, "cut.png", b.p, b.len / 2);
    assert_refusal(sim_map_load(path, what, 64, 64, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "truncated or corrupt PNG (libpng: ");
    path = save_raw(f, "cut.png", b.p, 20);
    assert_refusal(sim_map_load(path, what, 64, 64, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "truncated or corrupt PNG");
    /* A flipped bit in the image data: libpng's CRC check. */
    b.p[b.len - 30] ^= 0x10;
    path = save_raw(f, "flipped.png", b.p, b.len);
    assert_refusal(sim_map_load(path, what, 64, 64, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "truncated or corrupt PNG (libpng: ");
    free(b.p);

    const uint16_t one[1] = {128};
    png_spec tiny = {.w = 1, .h = 1, .depth = 8, .ctype = GRAY, .px = one};
    path = save_png(f, "1x1.png", &tiny);
    assert_refusal(sim_map_load(path, what, 1, 1, 1, out, &err), SIM_EINVAL, &err, path, what,
                   "1x1 map (allowed 2 .. 32768 per side)");

    /* 65536 x 2: refused on the header, before libpng exists: not one allocation. */
    uint8_t hdr[45];
    size_t n = header_only(hdr, 65536, 2);
    sim_alloc_fail_at(0);
    assert_refusal(sim_map_decode(hdr, n, "wide.png", what, 8, 8, 1, out, &err), SIM_EINVAL,
                   &err, "wide.png", what, "65536x2 map (allowed 2 .. 32768 per side)");
    assert_int_equal(sim_alloc_attempts(), 0);
    path = save_raw(f, "wide.png", hdr, n);
    assert_refusal(sim_map_load(path, what, 8, 8, 1, out, &err), SIM_EINVAL, &err, path, what,
                   "65536x2 map (allowed 2 .. 32768 per side)");
    n = header_only(hdr, SIM_MAP_MAX_SIDE + 1, 2);
    assert_refusal(sim_map_decode(hdr, n, "w.png", what, 8, 8, 1, out, &err), SIM_EINVAL, &err,
                   "w.png", what, "32769x2 map");

    uint16_t rgb[2 * 2 * 4] = {0};
    png_spec c = {.w = 2, .h = 2, .depth = 8, .ctype = RGB, .px = rgb};
    path = save_png(f, "rgb.png", &c);
    assert_refusal(sim_map_load(path, what, 2, 2, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "colour PNG (RGB); save it as 8- or 16-bit grayscale");
    c.ctype = RGBA;
    c.depth = 16;
    path = save_png(f, "rgba.png", &c);
    assert_refusal(sim_map_load(path, what, 2, 2, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "colour PNG (RGBA); save it as 8- or 16-bit grayscale");

    snprintf(f->path, sizeof f->path, "%s/missing.png", f->dir);
    assert_refusal(sim_map_load(f->path, what, 2, 2, 0, out, &err), SIM_EIO, &err, f->path,
                   what, "cannot open: No such file or directory");
    assert_refusal(sim_map_load(f->dir, what, 2, 2, 0, out, &err), SIM_EIO, &err, f->dir, what,
                   "read error: Is a directory");

    /* Over the file cap: a sparse file, refused on its size without being read. */
    path = save_raw(f, "huge.png", hdr, n);
    assert_int_equal(truncate(path, (off_t)SIM_MAP_FILE_MAX + 1), 0);
    assert_refusal(sim_map_load(path, what, 2, 2, 0, out, &err), SIM_EINVAL, &err, path, what,
                   "file larger than 512 MiB");

    /* Arguments no map fits. */
    assert_refusal(sim_map_decode(hdr, n, "a.png", what, 0, 2, 0, out, &err), SIM_EINVAL, &err,
                   "a.png", what, "0x2 world");
    assert_refusal(sim_map_decode(hdr, n, "a.png", what, 2, 2, 5, out, &err), SIM_EINVAL, &err,
                   "a.png", what, "resample mode 5");
}

/* libpng says nothing on stderr: not for corrupt data, not for a warning it recovers from (an
 * ancillary chunk with a bad CRC, which is dropped). */
static void test_quiet(void **state)
{
    fixture *f = *state;
    const uint16_t px[4] = {0, 85, 170, 255};
    png_spec s = {.w = 2, .h = 2, .depth = 8, .ctype = GRAY, .px = px};
    bytes b = encode(&s);
    /* After IHDR (8 + 25 bytes): a tIME chunk whose CRC is wrong. */
    uint8_t *odd = malloc(b.len + 19);
    assert_non_null(odd);
    memcpy(odd, b.p, 33);
    static const uint8_t time_chunk[19] = {0, 0, 0, 7, 't', 'I', 'M', 'E', 7, 233, 1, 1,
                                           0, 0, 0, 0xde, 0xad, 0xbe, 0xef};
    memcpy(odd + 33, time_chunk, 19);
    memcpy(odd + 52, b.p + 33, b.len - 33);

    char log[300];
    snprintf(log, sizeof log, "%s/stderr.txt", f->dir);
    fflush(stderr);
    int saved = dup(2), fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    assert_true(saved >= 0 && fd >= 0);
    dup2(fd, 2);
    close(fd);
    float out[4];
    sim_err err = {{0}};
    int rc_odd = sim_map_decode(odd, b.len + 19, "odd.png", "m", 2, 2, 0, out, &err);
    int rc_cut = sim_map_decode(b.p, b.len - 14, "cut.png", "m", 2, 2, 0, out, &err);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    assert_int_equal(rc_odd, SIM_OK);
    assert_same_float(out[1], 85.0f / 255.0f, 1);
    assert_int_equal(rc_cut, SIM_EINVAL);
    struct stat st;
    assert_int_equal(stat(log, &st), 0);
    assert_int_equal(st.st_size, 0);
    free(odd);
    free(b.p);
}

/* ---- masks ---- */

static void test_mask(void **state)
{
    fixture *f = *state;
    uint8_t m[5];
    sim_err err = {{0}};
    const uint16_t p8[4] = {127, 128, 0, 255};
    png_spec s = {.w = 2, .h = 2, .depth = 8, .ctype = GRAY, .px = p8};
    m[4] = 9;
    assert_int_equal(sim_map_load_mask(save_png(f, "m8.png", &s), "sources", 2, 2, 0, m,
                                       &err), SIM_OK);
    const uint8_t want8[5] = {0, 1, 0, 1, 9};
    assert_memory_equal(m, want8, 5);

    const uint16_t p16[4] = {32767, 32768, 1, 65535};
    s.px = p16;
    s.depth = 16;
    assert_int_equal(sim_map_load_mask(save_png(f, "m16.png", &s), "sources", 2, 2, 0, m,
                                       &err), SIM_OK);
    assert_memory_equal(m, want8, 5);

    /* Resampled and 1-bit: a 2x2 checkerboard onto 4x4. */
    const uint16_t p1[4] = {1, 0, 0, 1};
    s.px = p1;
    s.depth = 1;
    uint8_t big[17];
    big[16] = 9;
    assert_int_equal(sim_map_load_mask(save_png(f, "m1.png", &s), "sources", 4, 4, 1, big,
                                       &err), SIM_OK);
    const uint8_t want1[17] = {1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1, 9};
    assert_memory_equal(big, want1, 17);

    const char *path = save_raw(f, "m.txt", "P5\n", 3);
    assert_refusal(sim_map_load_mask(path, "agents.placement_map", 2, 2, 0, m, &err),
                   SIM_EINVAL, &err, path, "agents.placement_map", "not a PNG file");
}

/* ---- allocation failures ---- */

/* Every allocation of a load (the file buffer, libpng's own, the row and column buffers) made
 * to fail in turn: a clean SIM_ENOMEM naming the file, or a load that got by without it (libpng
 * drops what it can live without), and nothing left allocated. Plain and interlaced, resampled. */
static void test_alloc_failures(void **state)
{
    uint16_t px[9 * 7];
    for (int i = 0; i < 63; i++)
        px[i] = (uint16_t)(i * 1000);
    float out[5 * 4];
    sim_err err = {{0}};
    for (int il = 0; il <= 1; il++) {
        png_spec s = {.w = 9, .h = 7, .depth = 16, .ctype = GRAY, .interlace = il, .px = px};
        const char *path = save_png(*state, "a.png", &s);
        long live = sim_alloc_live();
        sim_alloc_fail_at(0);
        assert_int_equal(sim_map_load(path, "cap", 5, 4, 1, out, &err), SIM_OK);
        long total = sim_alloc_attempts(), failed = 0;
        assert_true(total > 4); /* the file, libpng's structs, the rows and columns */
        for (long n = 1; n <= total; n++) {
            sim_alloc_fail_at(n);
            int rc = sim_map_load(path, "cap", 5, 4, 1, out, &err);
            sim_alloc_fail_at(0);
            assert_int_equal(sim_alloc_live(), live);
            if (rc != SIM_OK) {
                assert_refusal(rc, SIM_ENOMEM, &err, path, "cap", "out of memory");
                failed++;
            }
        }
        assert_true(failed > 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_gray8_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_gray16_exact, setup, teardown),
        cmocka_unit_test_setup_teardown(test_low_depths, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alpha_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_palette, setup, teardown),
        cmocka_unit_test_setup_teardown(test_interlaced, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nearest_tables, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nearest_oracle, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_side, setup, teardown),
        cmocka_unit_test_setup_teardown(test_size_mismatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_quiet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_mask, setup, teardown),
        cmocka_unit_test_setup_teardown(test_alloc_failures, setup, teardown),
    };
    return cmocka_run_group_tests_name("map", tests, NULL, NULL);
}
