/* fuzz_map.c - libFuzzer harness for the scenario map reader (sim_map_decode, the code every map
 * file goes through). Each input is tried three ways, so that mutations get past libpng's CRC
 * and zlib checks to the transforms and the row walk behind them:
 *   1. as it is;
 *   2. with every chunk's CRC recomputed;
 *   3. as the recipe of a valid PNG built here: its first bytes pick the size (2..41 a side),
 *      a legal colour type and depth, interlacing and a palette, the rest is the filtered
 *      scanline data, which is deflated into the IDAT.
 * Each PNG is decoded for three worlds: 8x8 with no resampling (so 8x8 maps decode), 5x3 and
 * 40x24 with nearest resampling (shrinking and growing). A decoded map must be all values in
 * [0, 1]; a refusal must be one line that names the file and the key; either way nothing
 * allocated may stay allocated and nothing past the map may be written. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "sim_alloc.h"
#include "sim_map.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode_one(const uint8_t *png, size_t size, int w, int h, int resample)
{
    static float out[40 * 24 + 1];
    out[w * h] = 7.0f; /* a guard just past the map */
    sim_err err;
    err.msg[0] = '\0';
    long live = sim_alloc_live();
    int rc = sim_map_decode(png, size, "fuzz.png", "fuzz.map", w, h, resample, out, &err);
    if (sim_alloc_live() != live) {
        fprintf(stderr, "%dx%d: %ld blocks left allocated\n", w, h, sim_alloc_live() - live);
        abort();
    }
    if (out[w * h] != 7.0f)
        abort();
    if (rc == SIM_OK) {
        for (int i = 0; i < w * h; i++)
            if (!(out[i] >= 0.0f && out[i] <= 1.0f)) {
                fprintf(stderr, "%dx%d: cell %d is %g\n", w, h, i, (double)out[i]);
                abort();
            }
        return;
    }
    if ((rc != SIM_EINVAL && rc != SIM_ENOMEM) || strchr(err.msg, '\n') ||
        strncmp(err.msg, "fuzz.png: fuzz.map: ", 20) != 0 || strlen(err.msg) <= 20) {
        fprintf(stderr, "%dx%d: bad failure %d \"%s\"\n", w, h, rc, err.msg);
        abort();
    }
}

static void decode_all(const uint8_t *png, size_t size)
{
    decode_one(png, size, 8, 8, SIM_MAP_RESAMPLE_NONE);
    decode_one(png, size, 5, 3, SIM_MAP_RESAMPLE_NEAREST);
    decode_one(png, size, 40, 24, SIM_MAP_RESAMPLE_NEAREST);
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Recomputes the CRC of every whole chunk after the signature, as far as the lengths allow. */
static void fix_crcs(uint8_t *b, size_t len)
{
    size_t pos = 8;
    while (len >= pos && len - pos >= 12) {
        uint32_t n = get32(b + pos);
        if (n > len - pos - 12)
            return;
        put32(b + pos + 8 + n, (uint32_t)crc32(0, b + pos + 4, n + 4));
        pos += (size_t)n + 12;
    }
}

/* Appends a chunk (length, type, body, CRC) at b + *at. */
static void chunk(uint8_t *b, size_t *at, const char *type, const uint8_t *body, size_t n)
{
    put32(b + *at, (uint32_t)n);
    memcpy(b + *at + 4, type, 4);
    if (n)
        memcpy(b + *at + 8, body, n);
    put32(b + *at + 8 + n, (uint32_t)crc32(0, b + *at + 4, (uInt)n + 4));
    *at += n + 12;
}

/* Way 3: a valid PNG from the input's recipe (see the top), decoded. Recipe bytes: width,
 * height, format, flags (bit 0 interlace, bit 1 a colour palette entry), palette size; then
 * the palette's grays, then the scanlines. */
static void decode_recipe(const uint8_t *d, size_t size)
{
    static const uint8_t formats[][2] = {{0, 1}, {0, 2}, {0, 4}, {0, 8}, {0, 16}, {3, 1},
                                         {3, 2}, {3, 4}, {3, 8}, {4, 8}, {4, 16}, {2, 8},
                                         {6, 16}};
    enum { HEAD = 5 };
    if (size < HEAD)
        return;
    const uint8_t *f = formats[d[2] % (sizeof formats / sizeof formats[0])];
    int ctype = f[0], depth = f[1], npal = 1 + d[4] % 32;
    size_t pal_bytes = ctype == 3 ? (size_t)npal : 0;
    if (size < HEAD + pal_bytes)
        return;
    uint8_t ihdr[13];
    put32(ihdr, 2 + d[0] % 40u);
    put32(ihdr + 4, 2 + d[1] % 40u);
    ihdr[8] = (uint8_t)depth;
    ihdr[9] = (uint8_t)ctype;
    ihdr[10] = ihdr[11] = 0;
    ihdr[12] = d[3] & 1;
    uint8_t plte[3 * 32];
    for (int i = 0; i < npal && ctype == 3; i++)
        plte[3 * i] = plte[3 * i + 1] = plte[3 * i + 2] = d[HEAD + i];
    if (d[3] & 2)
        plte[0] ^= 1;

    const uint8_t *rows = d + HEAD + pal_bytes;
    size_t nrows = size - HEAD - pal_bytes;
    uLongf zlen = compressBound(nrows);
    uint8_t *png = malloc(8 + 25 + 12 + sizeof plte + 12 + zlen + 12);
    uint8_t *z = malloc(zlen);
    if (png && z && compress2(z, &zlen, rows, nrows, 1) == Z_OK) {
        size_t at = 8;
        memcpy(png, "\x89PNG\r\n\x1a\n", 8);
        chunk(png, &at, "IHDR", ihdr, 13);
        if (ctype == 3)
            chunk(png, &at, "PLTE", plte, 3 * (size_t)npal);
        chunk(png, &at, "IDAT", z, zlen);
        chunk(png, &at, "IEND", NULL, 0);
        decode_all(png, at);
    }
    free(z);
    free(png);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode_all(data, size);
    uint8_t *fixed = malloc(size ? size : 1);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    fix_crcs(fixed, size);
    decode_all(fixed, size);
    free(fixed);
    decode_recipe(data, size);
    return 0;
}
