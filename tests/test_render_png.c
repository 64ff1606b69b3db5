/* test_render_png.c - PNG write/read: exact round trips, every input format, atomic writes and
 * clear errors for missing directories, truncated files, non-PNG files and absurd sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <dirent.h>
#include <png.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "render_png.h"

typedef struct fixture {
    char dir[64];
    char path[256];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    if (!f)
        return -1;
    snprintf(f->dir, sizeof(f->dir), "/tmp/hz_png_XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    *state = f;
    return 0;
}

/* Removes every file the test left and the directory itself. */
static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    if (d) {
        struct dirent *e;
        char p[512];
        while ((e = readdir(d)) != NULL) {
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            snprintf(p, sizeof(p), "%s/%s", f->dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(f->dir);
    free(f);
    return 0;
}

static const char *in_dir(fixture *f, const char *name)
{
    snprintf(f->path, sizeof(f->path), "%s/%s", f->dir, name);
    return f->path;
}

/* Number of entries in the fixture's directory (besides . and ..). */
static int count_files(fixture *f)
{
    DIR *d = opendir(f->dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    closedir(d);
    return n;
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(data, 1, n, fp), n);
    assert_int_equal(fclose(fp), 0);
}

static uint8_t *pattern(int w, int h, uint32_t seed)
{
    uint8_t *p = malloc((size_t)w * h * 4);
    assert_non_null(p);
    for (size_t i = 0; i < (size_t)w * h * 4; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (uint8_t)(seed >> 24);
    }
    return p;
}

static void test_round_trip(void **state)
{
    fixture *f = *state;
    const int w = 37, h = 23;
    uint8_t *img = pattern(w, h, 1);
    sim_err err = {{0}};
    const char *path = in_dir(f, "a.png");
    assert_int_equal(render_png_write(path, img, w, h, &err), SIM_OK);

    uint8_t *back = NULL;
    int bw = 0, bh = 0;
    assert_int_equal(render_png_read(path, &back, &bw, &bh, &err), SIM_OK);
    assert_int_equal(bw, w);
    assert_int_equal(bh, h);
    assert_memory_equal(back, img, (size_t)w * h * 4);
    free(back);

    /* Overwriting goes through the temp file too and leaves only the final name. */
    uint8_t *img2 = pattern(w, h, 2);
    assert_int_equal(render_png_write(path, img2, w, h, &err), SIM_OK);
    assert_int_equal(render_png_read(path, &back, &bw, &bh, &err), SIM_OK);
    assert_memory_equal(back, img2, (size_t)w * h * 4);
    assert_int_equal(count_files(f), 1);
    assert_int_equal(access(in_dir(f, "a.png.tmp"), F_OK), -1);
    free(back);
    free(img2);
    free(img);
}

static void test_write_missing_dir(void **state)
{
    fixture *f = *state;
    uint8_t px[4] = {1, 2, 3, 4};
    sim_err err = {{0}};
    const char *path = in_dir(f, "missing/b.png");
    assert_int_equal(render_png_write(path, px, 1, 1, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "No such file or directory"));
    assert_int_equal(count_files(f), 0);

    /* Bad arguments are refused, not written. */
    assert_int_equal(render_png_write(in_dir(f, "c.png"), px, 0, 1, &err), SIM_EINVAL);
    assert_int_equal(count_files(f), 0);
}

/* A failing write (here: the temp name is taken by a directory) leaves the old file intact. */
static void test_write_failure_keeps_old(void **state)
{
    fixture *f = *state;
    uint8_t *img = pattern(8, 8, 3);
    sim_err err = {{0}};
    char path[256];
    snprintf(path, sizeof(path), "%s", in_dir(f, "d.png"));
    assert_int_equal(render_png_write(path, img, 8, 8, &err), SIM_OK);
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.tmp", path);
    assert_int_equal(mkdir(tmp, 0700), 0);
    uint8_t *img2 = pattern(8, 8, 4);
    assert_int_equal(render_png_write(path, img2, 8, 8, &err), SIM_EIO);
    assert_non_null(strstr(err.msg, path));
    rmdir(tmp);
    uint8_t *back = NULL;
    int w, h;
    assert_int_equal(render_png_read(path, &back, &w, &h, &err), SIM_OK);
    assert_memory_equal(back, img, 8 * 8 * 4);
    free(back);
    free(img2);
    free(img);
}

/* A disk that fills up mid-frame: a file size limit makes write() fail with EFBIG the way
 * ENOSPC would. The frame must fail with the reason and leave neither file behind. */
static void test_write_disk_full(void **state)
{
    fixture *f = *state;
    const int w = 256, h = 256; /* 256 KiB of noise: deflate cannot shrink it under the limit */
    uint8_t *img = pattern(w, h, 6);
    struct rlimit old, lim;
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
    lim = old;
    lim.rlim_cur = 16384;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN); /* get EFBIG instead of being killed */
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
    sim_err err = {{0}};
    const char *path = in_dir(f, "full.png");
    int rc = render_png_write(path, img, w, h, &err);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    assert_int_equal(rc, SIM_EIO);
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "File too large"));
    assert_int_equal(count_files(f), 0);
    free(img);
}

static void test_read_errors(void **state)
{
    fixture *f = *state;
    sim_err err = {{0}};
    uint8_t *back = (uint8_t *)&err;
    int w = -1, h = -1;

    const char *missing = in_dir(f, "nope.png");
    assert_int_equal(render_png_read(missing, &back, &w, &h, &err), SIM_EIO);
    assert_null(back);
    assert_int_equal(w, 0);
    assert_non_null(strstr(err.msg, missing));

    const char *text = in_dir(f, "text.png");
    write_bytes(text, "hello, this is not an image\n", 28);
    assert_int_equal(render_png_read(text, &back, &w, &h, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "not a PNG"));
    assert_null(back);

    /* A real PNG cut in half, and cut right after its signature. */
    const int iw = 64, ih = 64;
    uint8_t *img = pattern(iw, ih, 5);
    char full[256];
    snprintf(full, sizeof(full), "%s", in_dir(f, "full.png"));
    assert_int_equal(render_png_write(full, img, iw, ih, &err), SIM_OK);
    FILE *fp = fopen(full, "rb");
    assert_non_null(fp);
    uint8_t buf[65536];
    size_t n = fread(buf, 1, sizeof(buf), fp);
    fclose(fp);
    assert_true(n > 100 && n < sizeof(buf));

    const char *cut = in_dir(f, "cut.png");
    write_bytes(cut, buf, n / 2);
    assert_int_equal(render_png_read(cut, &back, &w, &h, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "corrupt PNG"));
    assert_null(back);
    write_bytes(cut, buf, 12);
    assert_int_equal(render_png_read(cut, &back, &w, &h, &err), SIM_EINVAL);

    /* A flipped byte inside the image data: libpng's CRC check catches it. */
    buf[n / 2] ^= 0x55;
    const char *flipped = in_dir(f, "flipped.png");
    write_bytes(flipped, buf, n);
    assert_int_equal(render_png_read(flipped, &back, &w, &h, &err), SIM_EINVAL);
    assert_null(back);
    free(img);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A well-formed header declaring 100000 x 100000 RGBA: refused before any allocation. */
static void test_huge_dimensions(void **state)
{
    fixture *f = *state;
    uint8_t b[8 + 25 + 12];
    const uint8_t sig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    memcpy(b, sig, 8);
    put_be32(b + 8, 13);
    memcpy(b + 12, "IHDR", 4);
    put_be32(b + 16, 100000);
    put_be32(b + 20, 100000);
    b[24] = 8; /* bit depth */
    b[25] = 6; /* RGBA */
    b[26] = b[27] = b[28] = 0;
    put_be32(b + 29, (uint32_t)crc32(0, b + 12, 17)); /* over type and data */
    put_be32(b + 33, 0);
    memcpy(b + 37, "IEND", 4);
    put_be32(b + 41, (uint32_t)crc32(0, b + 37, 4));

    const char *path = in_dir(f, "huge.png");
    write_bytes(path, b, sizeof(b));
    sim_err err = {{0}};
    uint8_t *back = NULL;
    int w, h;
    assert_int_equal(render_png_read(path, &back, &w, &h, &err), SIM_EINVAL);
    assert_null(back);
    assert_non_null(strstr(err.msg, "100000x100000"));

    /* The same header at 16385 x 1 is still one pixel too wide. */
    put_be32(b + 16, 16385);
    put_be32(b + 20, 1);
    put_be32(b + 29, (uint32_t)crc32(0, b + 12, 17));
    write_bytes(path, b, sizeof(b));
    assert_int_equal(render_png_read(path, &back, &w, &h, &err), SIM_EINVAL);
    assert_non_null(strstr(err.msg, "16385x1"));
}

/* Writes a PNG in an arbitrary format with libpng directly (rows of packed samples). */
static void write_raw(const char *path, int w, int h, int depth, int ctype, int interlace,
                      const uint8_t *data, size_t stride, const png_color *pal, int npal,
                      const uint8_t *trans, int ntrans)
{
    FILE *fp = fopen(path, "wb");
    assert_non_null(fp);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    assert_non_null(info);
    if (setjmp(png_jmpbuf(png)))
        fail_msg("libpng failed writing %s", path);
    png_init_io(png, fp);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, depth, ctype, interlace,
                 PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    if (pal)
        png_set_PLTE(png, info, pal, npal);
    if (trans)
        png_set_tRNS(png, info, trans, ntrans, NULL);
    png_write_info(png, info);
    png_bytep rows[16];
    assert_true(h <= 16);
    for (int y = 0; y < h; y++)
        rows[y] = (png_bytep)(data + (size_t)y * stride);
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    fclose(fp);
}

static void read_expect(const char *path, int w, int h, const uint8_t *want)
{
    sim_err err = {{0}};
    uint8_t *back = NULL;
    int bw, bh;
    assert_int_equal(render_png_read(path, &back, &bw, &bh, &err), SIM_OK);
    assert_int_equal(bw, w);
    assert_int_equal(bh, h);
    assert_memory_equal(back, want, (size_t)w * h * 4);
    free(back);
}

static void test_read_formats(void **state)
{
    fixture *f = *state;
    /* 8-bit gray, 2x2. */
    const uint8_t gray[4] = {0, 85, 170, 255};
    const uint8_t gray_rgba[16] = {0, 0, 0, 255, 85, 85, 85, 255, 170, 170, 170, 255,
                                   255, 255, 255, 255};
    write_raw(in_dir(f, "g8.png"), 2, 2, 8, PNG_COLOR_TYPE_GRAY, PNG_INTERLACE_NONE, gray, 2,
              NULL, 0, NULL, 0);
    read_expect(in_dir(f, "g8.png"), 2, 2, gray_rgba);

    /* 16-bit gray with alpha: samples scale to 8 bits (0x8080 -> 0x80). */
    const uint8_t ga16[8] = {0x80, 0x80, 0xff, 0xff, 0x00, 0x00, 0x40, 0x40};
    const uint8_t ga16_rgba[8] = {0x80, 0x80, 0x80, 0xff, 0x00, 0x00, 0x00, 0x40};
    write_raw(in_dir(f, "ga16.png"), 2, 1, 16, PNG_COLOR_TYPE_GRAY_ALPHA, PNG_INTERLACE_NONE,
              ga16, 8, NULL, 0, NULL, 0);
    read_expect(in_dir(f, "ga16.png"), 2, 1, ga16_rgba);

    /* 2-bit palette with a transparent entry. */
    const png_color pal[3] = {{10, 20, 30}, {40, 50, 60}, {70, 80, 90}};
    const uint8_t trans[3] = {255, 0, 128};
    const uint8_t idx[1] = {0x24}; /* 00 10 01 00: entries 0, 2, 1, 0 */
    const uint8_t pal_rgba[16] = {10, 20, 30, 255, 70, 80, 90, 128, 40, 50, 60, 0,
                                  10, 20, 30, 255};
    write_raw(in_dir(f, "p2.png"), 4, 1, 2, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, idx, 1,
              pal, 3, trans, 3);
    read_expect(in_dir(f, "p2.png"), 4, 1, pal_rgba);

    /* Interlaced RGB, 9x9 (so every Adam7 pass has pixels): alpha added as 255. */
    uint8_t rgb[9 * 9 * 3], rgb_rgba[9 * 9 * 4];
    for (int i = 0; i < 81; i++) {
        for (int c = 0; c < 3; c++)
            rgb[3 * i + c] = rgb_rgba[4 * i + c] = (uint8_t)(i * 3 + c * 50);
        rgb_rgba[4 * i + 3] = 255;
    }
    write_raw(in_dir(f, "rgb_i.png"), 9, 9, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_ADAM7, rgb, 27,
              NULL, 0, NULL, 0);
    read_expect(in_dir(f, "rgb_i.png"), 9, 9, rgb_rgba);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_missing_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_failure_keeps_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_disk_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_huge_dimensions, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_formats, setup, teardown),
    };
    return cmocka_run_group_tests_name("render_png", tests, NULL, NULL);
}
