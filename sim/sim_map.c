/* sim_map.c - grayscale PNG maps to per-cell values (sim_map.h).
 *
 * A map file is read whole into memory and decoded from there, so that the fuzzer
 * (tests/fuzz/fuzz_map.c) runs the very code every map goes through. The signature and the
 * IHDR size are checked by hand first, so that a map of the wrong size costs nothing; libpng
 * then decodes one row at a time, and only the rows the world samples are kept.
 *
 * libpng reports errors by longjmp. Its allocations go through sim_malloc (so the
 * fault-injection test reaches them too), its errors into the job below, its warnings nowhere.
 * Everything allocated hangs off the job, which lives in the caller of the function that sets
 * the jump: nothing needs to be volatile, and one cleanup path frees it all. */
#include "sim_map.h"

#include <errno.h>
#include <png.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_alloc.h"

/* One decode: the input, the output and everything allocated on the way. */
typedef struct map_job {
    const uint8_t *data; /* the PNG */
    size_t len, pos;     /* its length; how much of it libpng has taken */
    int width, height;   /* the world */
    float *fout;         /* values, or (when NULL) ... */
    uint8_t *mout;       /* ... a mask */
    uint32_t pw, ph;     /* the PNG's size */
    int depth16;         /* samples are 16-bit big-endian; else one byte each, through lut */
    int npal;            /* palette entries (palette PNGs) */
    float lut[256];      /* the value of a byte sample; -1 for an index past the palette */
    uint32_t *cols;      /* cols[x]: the source column of world column x */
    uint8_t *rows;       /* decoded rows kept (read_rows) */
    int oom;             /* one of libpng's allocations failed */
    int rc;              /* the failure ... */
    char why[240];       /* ... and its reason, without path and key */
} map_job;

/* Records the first failure (a later one is usually its consequence) and returns rc. */
static int refuse(map_job *j, int rc, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

static int refuse(map_job *j, int rc, const char *fmt, ...)
{
    if (j->rc == SIM_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(j->why, sizeof j->why, fmt, ap);
        va_end(ap);
        j->rc = rc;
    }
    return j->rc;
}

static png_voidp lib_alloc(png_structp png, png_alloc_size_t n)
{
    void *p = sim_malloc(n);
    if (!p)
        ((map_job *)png_get_mem_ptr(png))->oom = 1;
    return p;
}

static void lib_free(png_structp png, png_voidp p)
{
    (void)png;
    sim_free(p);
}

/* libpng's errors: keep the message, jump back to read_png. A failed allocation makes libpng
 * say "Out of Memory"; the flag tells it from bad data. */
static void lib_error(png_structp png, png_const_charp msg)
{
    map_job *j = png_get_error_ptr(png);
    if (j->oom)
        refuse(j, SIM_ENOMEM, "out of memory (in libpng)");
    else
        refuse(j, SIM_EINVAL, "truncated or corrupt PNG (libpng: %s)", msg);
    png_longjmp(png, 1);
}

/* Warnings (a bad ancillary chunk, an odd gamma) do not stop a map: keep stderr quiet. */
static void lib_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static void read_mem(png_structp png, png_bytep dst, size_t n)
{
    map_job *j = png_get_io_ptr(png);
    if (n > j->len - j->pos)
        png_error(png, "unexpected end of file");
    memcpy(dst, j->data + j->pos, n);
    j->pos += n;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The source pixel under the centre of world cell i of n, for a source of m pixels:
 * (2i+1)*m / (2n). i < 2^31 and m <= 32768 keep the product inside 64 bits. */
static uint32_t src_index(int i, uint32_t m, int n)
{
    return (uint32_t)((2 * (int64_t)i + 1) * (int64_t)m / (2 * (int64_t)n));
}

/* Signature and IHDR size, read straight from the bytes: a map of the wrong size is refused
 * before libpng allocates anything for it. */
static int check_header(map_job *j, int resample)
{
    if (png_sig_cmp(j->data, 0, j->len < 8 ? j->len : 8) != 0)
        return refuse(j, SIM_EINVAL, "not a PNG file");
    /* signature, chunk length and type, then width and height */
    if (j->len < 8 + 8 + 8 || memcmp(j->data + 12, "IHDR", 4) != 0)
        return refuse(j, SIM_EINVAL, "truncated or corrupt PNG (no IHDR chunk)");
    j->pw = be32(j->data + 16);
    j->ph = be32(j->data + 20);
    if (j->pw < SIM_MAP_MIN_SIDE || j->pw > SIM_MAP_MAX_SIDE || j->ph < SIM_MAP_MIN_SIDE ||
        j->ph > SIM_MAP_MAX_SIDE)
        return refuse(j, SIM_EINVAL, "%ux%u map (allowed %d .. %d per side)", (unsigned)j->pw,
                      (unsigned)j->ph, SIM_MAP_MIN_SIDE, SIM_MAP_MAX_SIDE);
    if (resample == SIM_MAP_RESAMPLE_NONE &&
        (j->pw != (uint32_t)j->width || j->ph != (uint32_t)j->height))
        return refuse(j, SIM_EINVAL,
                      "%ux%u map for a %dx%d world (set world.map_resample = nearest to resample)",
                      (unsigned)j->pw, (unsigned)j->ph, j->width, j->height);
    return SIM_OK;
}

/* A palette is a map only when every entry is gray; an index then stands for its gray/255. */
static int gray_palette(png_structp png, png_infop info, map_job *j)
{
    png_colorp pal = NULL;
    if (!png_get_PLTE(png, info, &pal, &j->npal) || j->npal < 1)
        return refuse(j, SIM_EINVAL, "truncated or corrupt PNG (palette PNG without a palette)");
    for (int i = 0; i < j->npal; i++)
        if (pal[i].red != pal[i].green || pal[i].green != pal[i].blue)
            return refuse(j, SIM_EINVAL,
                          "colour palette PNG (entry %d is %d,%d,%d); save it as 8- or 16-bit "
                          "grayscale", i, pal[i].red, pal[i].green, pal[i].blue);
    for (int i = 0; i < 256; i++)
        j->lut[i] = i < j->npal ? (float)pal[i].red / 255.0f : -1.0f;
    png_set_packing(png); /* 1, 2, 4-bit indexes to one byte each, unscaled */
    return SIM_OK;
}

/* Sets libpng's transforms so that a row comes out as one sample per pixel: a byte (looked up
 * in lut) or a 16-bit big-endian word. */
static int choose_transforms(png_structp png, png_infop info, map_job *j)
{
    int ctype = png_get_color_type(png, info);
    int depth = png_get_bit_depth(png, info);
    switch (ctype) {
    case PNG_COLOR_TYPE_GRAY:
    case PNG_COLOR_TYPE_GRAY_ALPHA:
        if (ctype == PNG_COLOR_TYPE_GRAY_ALPHA)
            png_set_strip_alpha(png);
        /* Below 8 bits libpng scales g to g*255/maxval, an integer; (float)(g*255/maxval)/255
         * and (float)g/maxval are both the one rounding of the same rational, so the values
         * stay g/maxval to the last bit. tRNS is not expanded: it stays ignored. */
        if (depth < 8)
            png_set_expand_gray_1_2_4_to_8(png);
        j->depth16 = depth == 16;
        for (int i = 0; i < 256; i++)
            j->lut[i] = (float)i / 255.0f;
        return SIM_OK;
    case PNG_COLOR_TYPE_PALETTE:
        return gray_palette(png, info, j);
    default:
        return refuse(j, SIM_EINVAL, "colour PNG (%s); save it as 8- or 16-bit grayscale",
                      ctype == PNG_COLOR_TYPE_RGB ? "RGB" : "RGBA");
    }
}

/* One decoded source row into world row y. Returns SIM_OK, or the failure in j. */
static int convert_row(map_job *j, const uint8_t *row, int y)
{
    float *fo = j->fout ? j->fout + (size_t)y * (size_t)j->width : NULL;
    uint8_t *mo = j->mout ? j->mout + (size_t)y * (size_t)j->width : NULL;
    for (int x = 0; x < j->width; x++) {
        uint32_t sx = j->cols[x];
        float v;
        if (j->depth16) {
            v = (float)((uint32_t)row[2 * sx] << 8 | row[2 * sx + 1]) / 65535.0f;
        } else {
            v = j->lut[row[sx]];
            if (v < 0.0f)
                return refuse(j, SIM_EINVAL, "corrupt PNG (palette index %d of a %d-entry palette)",
                              row[sx], j->npal);
        }
        if (fo)
            fo[x] = v;
        else
            mo[x] = v >= 0.5f;
    }
    return SIM_OK;
}

/* The rows, pass by pass. World row y reads source row src_index(y), and the source rows come
 * in order, so one walk over them serves all world rows. A plain PNG needs one row buffer,
 * converted as soon as it is read; an interlaced one fills its rows over seven passes, so each
 * sampled row keeps a buffer until the last pass (at most min(ph, height) of them), and the rows
 * no cell samples share a scratch one. */
static int read_rows(png_structp png, map_job *j, int passes)
{
    size_t rowbytes = (size_t)j->pw * (j->depth16 ? 2 : 1);
    size_t kept = 0; /* distinct source rows sampled, when they must be kept */
    if (passes > 1)
        for (int y = 0; y < j->height; y++)
            kept += y == 0 || src_index(y, j->ph, j->height) != src_index(y - 1, j->ph, j->height);
    j->cols = sim_malloc_array((size_t)j->width, sizeof *j->cols);
    j->rows = sim_calloc(kept + 1, rowbytes); /* zeroed: libpng merges passes into them */
    if (!j->cols || !j->rows)
        return refuse(j, SIM_ENOMEM, "out of memory (%zu rows of %zu bytes)", kept + 1, rowbytes);
    for (int x = 0; x < j->width; x++)
        j->cols[x] = src_index(x, j->pw, j->width);
    uint8_t *scratch = j->rows + kept * rowbytes;

    for (int pass = 0; pass < passes; pass++) {
        int y = 0;
        size_t slot = 0;
        for (uint32_t sy = 0; sy < j->ph; sy++) {
            int sampled = y < j->height && src_index(y, j->ph, j->height) == sy;
            uint8_t *row = sampled && passes > 1 ? j->rows + slot++ * rowbytes : scratch;
            png_read_row(png, row, NULL);
            for (; y < j->height && src_index(y, j->ph, j->height) == sy; y++)
                if (pass == passes - 1 && convert_row(j, row, y) != SIM_OK)
                    return j->rc;
        }
    }
    /* The rest of the file: a missing IEND or a bad CRC after the pixels is still corruption. */
    png_read_end(png, NULL);
    return SIM_OK;
}

/* Everything that calls into libpng after the jump is set (read_png). */
static int read_png_body(png_structp png, png_infop info, map_job *j)
{
    png_set_read_fn(png, j, read_mem);
    /* The same bound inside libpng; check_header has already applied it. */
    png_set_user_limits(png, SIM_MAP_MAX_SIDE, SIM_MAP_MAX_SIDE);
    /* A map is only pixels. libpng allocates a metadata chunk at the length its header claims
     * before reading it (see render_png.c: 800 MB for a 92-byte file); skipped chunks are read
     * and dropped in small pieces. */
    static const png_byte skip[] = "iCCP\0iTXt\0tEXt\0zTXt\0sPLT\0eXIf\0pCAL\0sCAL";
    png_set_keep_unknown_chunks(png, PNG_HANDLE_CHUNK_NEVER, skip, (int)(sizeof skip / 5));
    png_read_info(png, info);
    if (choose_transforms(png, info, j) != SIM_OK)
        return j->rc;
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    /* What the transforms promise, checked before a row lands in a buffer sized from it. */
    if (png_get_image_width(png, info) != j->pw || png_get_image_height(png, info) != j->ph ||
        png_get_rowbytes(png, info) != (size_t)j->pw * (j->depth16 ? 2 : 1))
        return refuse(j, SIM_EINVAL, "unsupported PNG layout (%u bytes per row)",
                      (unsigned)png_get_rowbytes(png, info));
    return read_rows(png, j, passes);
}

/* The function that owns the jump holds no state of its own, so no local can be clobbered. */
static int read_png(png_structp png, png_infop info, map_job *j)
{
    if (setjmp(png_jmpbuf(png)))
        return j->rc;
    return read_png_body(png, info, j);
}

/* Both loaders and sim_map_decode end here, with j's input and output set. */
static int decode(map_job *j, const char *path, const char *what, int resample, sim_err *err)
{
    if ((!j->data && j->len) || j->width < 1 || j->height < 1 ||
        (size_t)j->width > SIZE_MAX / sizeof(float) / (size_t)j->height ||
        (!j->fout && !j->mout) || (resample != SIM_MAP_RESAMPLE_NONE &&
                                   resample != SIM_MAP_RESAMPLE_NEAREST))
        return sim_err_set(err, SIM_EINVAL, "%s: %s: cannot load a map for a %dx%d world "
                           "(resample mode %d)", path, what, j->width, j->height, resample);
    if (check_header(j, resample) == SIM_OK) {
        png_structp png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, j, lib_error,
                                                   lib_warning, j, lib_alloc, lib_free);
        png_infop info = png ? png_create_info_struct(png) : NULL;
        if (info)
            read_png(png, info, j);
        else
            refuse(j, SIM_ENOMEM, "out of memory (in libpng)");
        png_destroy_read_struct(&png, &info, NULL);
    }
    sim_free(j->cols);
    sim_free(j->rows);
    j->cols = NULL;
    j->rows = NULL;
    if (j->rc != SIM_OK)
        return sim_err_set(err, j->rc, "%s: %s: %s", path, what, j->why);
    return SIM_OK;
}

/* The whole file at path in a new sim_malloc'ed buffer. A regular file is read at the size
 * fstat gives, and refused at once when over the cap; anything else (a pipe) grows the buffer
 * as the bytes come, up to one byte past the cap, which is how "too large" shows there. */
static int read_file(const char *path, const char *what, uint8_t **out, size_t *len,
                     sim_err *err)
{
    *out = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: %s: cannot open: %s", path, what, strerror(errno));
    size_t cap = 64 << 10, n = 0;
    uint8_t *buf = NULL;
    int rc = SIM_OK;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode)) {
        if ((uint64_t)st.st_size > SIM_MAP_FILE_MAX)
            goto too_large;
        cap = (size_t)st.st_size + 1; /* + 1: the end shows without growing the buffer */
    }
    if (!(buf = sim_malloc(cap)))
        goto nomem;
    for (;;) {
        if (n == cap) { /* the file grew since fstat, or has no size */
            if (cap > SIM_MAP_FILE_MAX)
                goto too_large;
            size_t grown = cap > SIM_MAP_FILE_MAX / 2 ? SIM_MAP_FILE_MAX + 1 : cap * 2;
            uint8_t *bigger = sim_realloc(buf, grown);
            if (!bigger)
                goto nomem;
            buf = bigger;
            cap = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        rc = sim_err_set(err, SIM_EIO, "%s: %s: read error: %s", path, what, strerror(errno));
    goto done;
too_large:
    rc = sim_err_set(err, SIM_EINVAL, "%s: %s: file larger than %zu MiB", path, what,
                     SIM_MAP_FILE_MAX >> 20);
    goto done;
nomem:
    rc = sim_err_set(err, SIM_ENOMEM, "%s: %s: out of memory", path, what);
done:
    fclose(f);
    if (rc != SIM_OK) {
        sim_free(buf);
        return rc;
    }
    *out = buf;
    *len = n;
    return SIM_OK;
}

static int load(map_job *j, const char *path, const char *what, int resample, sim_err *err)
{
    what = what ? what : "map";
    if (!path)
        return sim_err_set(err, SIM_EINVAL, "(null): %s: no map file named", what);
    uint8_t *buf;
    int rc = read_file(path, what, &buf, &j->len, err);
    if (rc != SIM_OK)
        return rc;
    j->data = buf;
    rc = decode(j, path, what, resample, err);
    sim_free(buf);
    return rc;
}

int sim_map_load(const char *path, const char *what, int width, int height, int resample,
                 float *out, sim_err *err)
{
    map_job j = {.width = width, .height = height, .fout = out};
    return load(&j, path, what, resample, err);
}

int sim_map_load_mask(const char *path, const char *what, int width, int height, int resample,
                      uint8_t *out, sim_err *err)
{
    map_job j = {.width = width, .height = height, .mout = out};
    return load(&j, path, what, resample, err);
}

int sim_map_decode(const uint8_t *data, size_t len, const char *path, const char *what,
                   int width, int height, int resample, float *out, sim_err *err)
{
    map_job j = {.data = data, .len = len, .width = width, .height = height, .fout = out};
    return decode(&j, path ? path : "(memory)", what ? what : "map", resample, err);
}
