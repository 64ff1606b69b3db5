/* render_png.c - PNG write (temp file + fsync + rename) and read (any format -> RGBA8) via libpng.
 *
 * libpng reports errors by longjmp; every function here installs its own error handler that
 * keeps the message, so a failure becomes a status code and one line in sim_err instead of
 * text on stderr. Locals that change after setjmp are volatile, as longjmp requires. */
#include "render_png.h"

#include <errno.h>
#include <limits.h>
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What a libpng callback learnt before it jumped: the message, and errno of a failed I/O. */
typedef struct png_ctx {
    FILE *f;
    char msg[200];
    int io_errno; /* nonzero when the failure was the file, not the data */
} png_ctx;

static void on_error(png_structp png, png_const_charp msg)
{
    png_ctx *c = (png_ctx *)png_get_error_ptr(png);
    if (c->msg[0] == '\0')
        snprintf(c->msg, sizeof(c->msg), "%s", msg);
    png_longjmp(png, 1);
}

/* Warnings (a bad ancillary chunk, an odd gamma) do not stop a read: keep stderr quiet. */
static void on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

/* Our own write callback so that ENOSPC/EIO keep their errno for the message. */
static void write_data(png_structp png, png_bytep data, size_t n)
{
    png_ctx *c = (png_ctx *)png_get_io_ptr(png);
    if (fwrite(data, 1, n, c->f) != n) {
        c->io_errno = errno ? errno : EIO;
        png_error(png, "write failed");
    }
}

static void flush_data(png_structp png)
{
    (void)png; /* the file is flushed once, after the last row, in render_png_write */
}

/* Our own read callback so that a short file reads as "unexpected end of file". */
static void read_data(png_structp png, png_bytep data, size_t n)
{
    png_ctx *c = (png_ctx *)png_get_io_ptr(png);
    if (fread(data, 1, n, c->f) != n) {
        if (ferror(c->f)) {
            c->io_errno = errno ? errno : EIO;
            png_error(png, "read failed");
        }
        png_error(png, "unexpected end of file");
    }
}

/* libpng part of the write: header, rows, end. Returns 0, or -1 with the reason in c. */
static int encode(png_ctx *c, const uint8_t *rgba, int w, int h)
{
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, c, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        snprintf(c->msg, sizeof(c->msg), "out of memory in libpng");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        return -1;
    }
    png_set_write_fn(png, c, write_data, flush_data);
    /* Frames are written every few steps: speed over size, so zlib level 1. No row filter:
     * a colormapped frame holds at most 256 + 2 distinct RGBA quads, which deflate matches as
     * repeats; filters turn them into varied differences. On 1024^2 viridis frames NONE was
     * both the fastest and the smallest (smooth field 21 ms / 0.74 MB against SUB 31 ms /
     * 0.93 MB; noisy field 36 ms / 1.6 MB against 71-79 ms / 2.8 MB for SUB or UP). */
    png_set_compression_level(png, 1);
    png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
    png_set_IHDR(png, info, (png_uint_32)w, (png_uint_32)h, 8, PNG_COLOR_TYPE_RGB_ALPHA,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
    png_write_info(png, info);
    /* Row by row: no array of row pointers to allocate. */
    for (int y = 0; y < h; y++)
        png_write_row(png, (png_const_bytep)(rgba + (size_t)y * (size_t)w * 4));
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);
    return 0;
}

int render_png_write_tmp(const char *path, const uint8_t *rgba, int w, int h, sim_err *err)
{
    if (!path || !rgba || w <= 0 || h <= 0 || w > INT_MAX / 4)
        return sim_err_set(err, SIM_EINVAL, "%s: cannot write a %dx%d image",
                           path ? path : "(null)", w, h);
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return sim_err_set(err, SIM_EIO, "%s: path too long", path);

    png_ctx c;
    memset(&c, 0, sizeof(c));
    c.f = fopen(tmp, "wb");
    if (!c.f)
        return sim_err_set(err, SIM_EIO, "%s: cannot create %s: %s", path, tmp, strerror(errno));

    const char *what = NULL;
    int e = 0;
    if (encode(&c, rgba, w, h) != 0) {
        what = c.msg;
        e = c.io_errno;
    } else if (fflush(c.f) != 0) {
        what = "write failed";
        e = errno;
    } else if (fsync(fileno(c.f)) != 0) {
        /* Without it a crash after rename could leave an empty file under the final name. */
        what = "fsync failed";
        e = errno;
    }
    /* fclose can report the write that failed last (NFS, quotas): it must be checked too. */
    if (fclose(c.f) != 0 && !what) {
        what = "close failed";
        e = errno;
    }
    if (what) {
        remove(tmp);
        if (e)
            return sim_err_set(err, SIM_EIO, "%s: %s: %s", path, what, strerror(e));
        return sim_err_set(err, SIM_EIO, "%s: libpng: %s", path, what);
    }
    return SIM_OK;
}

int render_png_commit(const char *path, sim_err *err)
{
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp))
        return sim_err_set(err, SIM_EIO, "%s: path too long", path);
    if (rename(tmp, path) != 0) {
        int e = errno;
        remove(tmp);
        return sim_err_set(err, SIM_EIO, "%s: rename failed: %s", path, strerror(e));
    }
    return SIM_OK;
}

int render_png_write(const char *path, const uint8_t *rgba, int w, int h, sim_err *err)
{
    int rc = render_png_write_tmp(path, rgba, w, h, err);
    return rc == SIM_OK ? render_png_commit(path, err) : rc;
}

/* Reads the signature and IHDR size fields straight from the file, so that an absurd size is
 * refused with a clear message before libpng or we allocate anything for it. Returns SIM_OK and
 * rewinds the file, or an error. */
static int peek_header(FILE *f, const char *path, sim_err *err)
{
    uint8_t b[24];
    size_t n = fread(b, 1, sizeof(b), f);
    if (n < 8 || png_sig_cmp(b, 0, 8) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: not a PNG", path);
    if (n < sizeof(b) || memcmp(b + 12, "IHDR", 4) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt PNG: no IHDR chunk", path);
    uint32_t iw = (uint32_t)b[16] << 24 | (uint32_t)b[17] << 16 | (uint32_t)b[18] << 8 | b[19];
    uint32_t ih = (uint32_t)b[20] << 24 | (uint32_t)b[21] << 16 | (uint32_t)b[22] << 8 | b[23];
    if (iw > RENDER_PNG_MAX_SIDE || ih > RENDER_PNG_MAX_SIDE)
        return sim_err_set(err, SIM_EINVAL, "%s: image is %ux%u, larger than %dx%d", path,
                           (unsigned)iw, (unsigned)ih, RENDER_PNG_MAX_SIDE, RENDER_PNG_MAX_SIDE);
    rewind(f);
    return SIM_OK;
}

int render_png_read(const char *path, uint8_t **rgba, int *w, int *h, sim_err *err)
{
    *rgba = NULL;
    *w = 0;
    *h = 0;
    png_ctx c;
    memset(&c, 0, sizeof(c));
    c.f = fopen(path, "rb");
    if (!c.f)
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    int rc = peek_header(c.f, path, err);
    if (rc != SIM_OK) {
        fclose(c.f);
        return rc;
    }

    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &c, on_error, on_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        fclose(c.f);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory in libpng", path);
    }
    uint8_t *volatile img = NULL;
    png_bytep *volatile rows = NULL;
    volatile int status = SIM_EINVAL;
    if (setjmp(png_jmpbuf(png))) {
        free(rows);
        free(img);
        png_destroy_read_struct(&png, &info, NULL);
        fclose(c.f);
        if (c.io_errno)
            return sim_err_set(err, SIM_EIO, "%s: %s: %s", path, c.msg, strerror(c.io_errno));
        if (status == SIM_ENOMEM)
            return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
        return sim_err_set(err, SIM_EINVAL, "%s: corrupt PNG: %s", path, c.msg);
    }
    png_set_read_fn(png, &c, read_data);
    /* The same bound inside libpng, should the header change between peek and read. */
    png_set_user_limits(png, RENDER_PNG_MAX_SIDE, RENDER_PNG_MAX_SIDE);
    /* Only the pixels matter here. libpng allocates a variable-length metadata chunk at the
     * length its header claims before reading a byte of it, so a 92-byte file claiming an
     * 800 MB tEXt chunk took 800 MB (found by tests/fuzz/fuzz_png; png_set_chunk_malloc_max
     * does not stop it in libpng 1.6.39). Skipped chunks are read and dropped in small pieces. */
    static const png_byte skip[] = "iCCP\0iTXt\0tEXt\0zTXt\0sPLT\0eXIf\0pCAL\0sCAL";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skip, (int)(sizeof skip / 5));
    png_read_info(png, info);

    /* Normalise every colour type and depth to 8-bit RGBA. */
    int ctype = png_get_color_type(png, info);
    png_set_expand(png); /* palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha */
    png_set_scale_16(png);
    if (ctype == PNG_COLOR_TYPE_GRAY || ctype == PNG_COLOR_TYPE_GRAY_ALPHA)
        png_set_gray_to_rgb(png);
    if (!(ctype & PNG_COLOR_MASK_ALPHA) && !png_get_valid(png, info, PNG_INFO_tRNS))
        png_set_add_alpha(png, 0xff, PNG_FILLER_AFTER);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);

    png_uint_32 iw = png_get_image_width(png, info);
    png_uint_32 ih = png_get_image_height(png, info);
    size_t stride = (size_t)iw * 4; /* iw, ih <= 16384: no overflow below */
    if (png_get_rowbytes(png, info) != stride)
        png_error(png, "unexpected row size after conversion to RGBA");
    img = malloc(stride * ih);
    rows = malloc(sizeof(png_bytep) * ih);
    if (!img || !rows) {
        status = SIM_ENOMEM;
        png_error(png, "out of memory");
    }
    for (png_uint_32 y = 0; y < ih; y++)
        rows[y] = img + (size_t)y * stride;
    png_read_image(png, rows);
    png_read_end(png, NULL);

    free(rows);
    png_destroy_read_struct(&png, &info, NULL);
    fclose(c.f);
    *rgba = img;
    *w = (int)iw;
    *h = (int)ih;
    return SIM_OK;
}
