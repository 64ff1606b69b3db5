/* sim_horizon.c - exact horizon sums on the CPU: prefix rows (O(r) per disk), sums over a sampled
 * region (the viewer's layer) and brute force. */
#include "sim_horizon.h"

#include <stddef.h>

#include "sim_clones.h"
#include "sim_rules.h"

void sim_disk_init(sim_disk *d, int r)
{
    d->r = r;
    for (int dy = -r; dy <= r; dy++)
        d->hw[dy + r] = sim_disk_halfwidth(r, dy);
}

void sim_horizon_prefix(const float *field, int w, int h, int64_t *prefix)
{
#pragma omp parallel for schedule(static)
    for (int y = 0; y < h; y++) {
        const float *row = field + (int64_t)y * w;
        int64_t *p = prefix + (int64_t)y * (w + 1);
        int64_t acc = 0;
        p[0] = 0;
        for (int x = 0; x < w; x++) {
            acc += sim_fix(row[x]);
            p[x + 1] = acc;
        }
    }
}

static int wrap(int v, int n)
{
    v %= n;
    return v < 0 ? v + n : v;
}

/* Sum of columns [x0, x0 + len) of one prefix row, wrapping around the row (len may exceed w:
 * whole turns add the row total). */
static int64_t row_span_periodic(const int64_t *p, int w, int x0, int len)
{
    int64_t total = p[w];
    int64_t sum = (int64_t)(len / w) * total;
    len %= w;
    int s = wrap(x0, w);
    if (s + len <= w)
        return sum + p[s + len] - p[s];
    return sum + (total - p[s]) + p[s + len - w];
}

int64_t sim_horizon_disk(const int64_t *prefix, int w, int h, int periodic, const sim_disk *d,
                         int x, int y)
{
    int r = d->r;
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++) {
        int hw = d->hw[dy + r];
        int yy = y + dy;
        if (periodic) {
            const int64_t *p = prefix + (int64_t)wrap(yy, h) * (w + 1);
            sum += row_span_periodic(p, w, x - hw, 2 * hw + 1);
        } else {
            if (yy < 0 || yy >= h)
                continue;
            int lo = x - hw < 0 ? 0 : x - hw;
            int hi = x + hw >= w ? w - 1 : x + hw;
            if (lo > hi)
                continue;
            const int64_t *p = prefix + (int64_t)yy * (w + 1);
            sum += p[hi + 1] - p[lo];
        }
    }
    return sum;
}

int64_t sim_horizon_disk_brute(const float *field, int w, int h, int periodic, int r, int x,
                               int y)
{
    int64_t sum = 0;
    for (int dy = -r; dy <= r; dy++)
        for (int dx = -r; dx <= r; dx++) {
            if (dx * dx + dy * dy > r * r)
                continue;
            int xx = x + dx, yy = y + dy;
            if (periodic) {
                xx = wrap(xx, w);
                yy = wrap(yy, h);
            } else if (xx < 0 || xx >= w || yy < 0 || yy >= h) {
                continue;
            }
            sum += sim_fix(field[(int64_t)yy * w + xx]);
        }
    return sum;
}

void sim_horizon_candidates(const int64_t *prefix, int w, int h, int periodic,
                            const sim_disk *d, int x, int y, int64_t sums[9])
{
    for (int c = 0; c < SIM_NCAND; c++) {
        int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
        if (periodic) {
            cx = wrap(cx, w);
            cy = wrap(cy, h);
        } else if (cx < 0 || cx >= w || cy < 0 || cy >= h) {
            sums[c] = SIM_SUM_INVALID;
            continue;
        }
        sums[c] = sim_horizon_disk(prefix, w, h, periodic, d, cx, cy);
    }
}

/* ---- Sums over a sampled region (sim_horizon.h). ---- */

/* The columns [xs[0] - r, xs[nx-1] + r] that every sampled disk of a row lies in. */
static int region_span(int r, const int32_t *xs, int nx)
{
    return xs[nx - 1] - xs[0] + 2 * r + 1;
}

size_t sim_horizon_region_scratch_len(int r, const int32_t *xs, int nx, int threads)
{
    return (size_t)(threads > 0 ? threads : 1) * ((size_t)region_span(r, xs, nx) + 1);
}

/* pre[j] = sum of sim_fix over columns x0 .. x0 + j - 1 of one field row, j in [0, span]:
 * wrapped onto the row when periodic (a span wider than the row visits cells more than once, as
 * the brute force does), cells outside the row 0 otherwise. */
static void region_prefix(const float *row, int w, int periodic, int x0, int span, int64_t *pre)
{
    int64_t acc = 0;
    pre[0] = 0;
    if (periodic) {
        int xx = wrap(x0, w); /* then stepped, not divided: no % per cell */
        for (int j = 0; j < span; j++) {
            acc += sim_fix(row[xx]);
            pre[j + 1] = acc;
            if (++xx == w)
                xx = 0;
        }
        return;
    }
    int j = 0;
    for (; j < span && x0 + j < 0; j++) /* left of the grid */
        pre[j + 1] = 0;
    for (; j < span && x0 + j < w; j++) {
        acc += sim_fix(row[x0 + j]);
        pre[j + 1] = acc;
    }
    for (; j < span; j++) /* right of the grid */
        pre[j + 1] = acc;
}

void sim_horizon_region(const float *field, int w, int h, int periodic, int r, const int32_t *xs,
                        int nx, const int32_t *ys, int ny, int64_t *out, int64_t *scratch,
                        int threads)
{
    sim_disk d;
    sim_disk_init(&d, r);
    const int x0 = xs[0] - r, span = region_span(r, xs, nx);
    const int tasks = threads < 1 ? 1 : threads < ny ? threads : ny;
    /* One contiguous run of sampled rows per task, each with its own prefix row of scratch.
     * Integer sums: the split changes who computes a sum, never its bits. */
#pragma omp parallel for schedule(static) num_threads(tasks) if (tasks > 1)
    for (int t = 0; t < tasks; t++) {
        int64_t *pre = scratch + (size_t)t * ((size_t)span + 1);
        const int iy_end = (int)((int64_t)ny * (t + 1) / tasks);
        for (int iy = (int)((int64_t)ny * t / tasks); iy < iy_end; iy++) {
            int64_t *o = out + (size_t)iy * (size_t)nx;
            for (int ix = 0; ix < nx; ix++)
                o[ix] = 0;
            for (int dy = -r; dy <= r; dy++) {
                int yy = ys[iy] + dy;
                if (periodic)
                    yy = wrap(yy, h);
                else if (yy < 0 || yy >= h)
                    continue; /* a row outside the grid adds 0 */
                region_prefix(field + (int64_t)yy * w, w, periodic, x0, span, pre);
                const int hw = d.hw[dy + r];
                for (int ix = 0; ix < nx; ix++) {
                    int a = xs[ix] - hw - x0; /* >= 0 and a + 2hw + 1 <= span: hw <= r */
                    o[ix] += pre[a + 2 * hw + 1] - pre[a];
                }
            }
        }
    }
}

/* ---- Extended prefix rows (sim_horizon.h). ---- */

/* The dense row passes and fix_row below are compiled per vector width (SIM_CLONES): int64 and
 * uint32 adds and subtracts give the same bits in any of them. */

int64_t sim_hz_ext_rows_len(int w, int h, int r)
{
    return ((int64_t)h + 1) * ((int64_t)w + 2 * r + 3);
}

int64_t sim_hz_ext_offset_len(int h, int r)
{
    return (int64_t)h + 2 * r + 2;
}

void sim_hz_ext_init(sim_hz_ext *e, int w, int h, int r, int periodic, int64_t *rows,
                     int64_t *offset)
{
    e->w = w;
    e->h = h;
    e->r = r;
    e->periodic = periodic;
    e->stride = (int64_t)w + 2 * r + 3;
    e->rows = rows;
    e->offset = offset;
    e->rows32 = NULL;
    e->maxabs = -1;
    if (rows) { /* NULL: the 32-bit rows only (sim_hz_ext_build32_rows) */
        int64_t *zero = rows + (int64_t)h * e->stride;
        for (int64_t k = 0; k < e->stride; k++)
            zero[k] = 0;
    }
    for (int yy = -r - 1; yy <= h + r; yy++) {
        int64_t row;
        if (periodic)
            row = wrap(yy, h);
        else
            row = yy < 0 || yy >= h ? h : yy;
        offset[yy + r + 1] = row * e->stride + r + 1;
    }
}

void sim_hz_ext_attach32(sim_hz_ext *e, uint32_t *rows32)
{
    e->rows32 = rows32;
    e->maxabs = -1; /* rows32 holds nothing until the next build */
    if (!rows32)
        return;
    uint32_t *zero = rows32 + (int64_t)e->h * e->stride;
    for (int64_t k = 0; k < e->stride; k++)
        zero[k] = 0;
}

int sim_hz_ext_fits32(const sim_hz_ext *e, const sim_disk *d)
{
    if (!e->rows32 || e->maxabs < 0 || d->r != e->r)
        return 0;
    int64_t cells = 0;
    for (int j = 0; j <= 2 * d->r; j++)
        cells += 2 * (int64_t)d->hw[j] + 1;
    return e->maxabs * cells < ((int64_t)1 << 31);
}

/* floor(k / w) for w > 0. */
static int64_t floor_div(int64_t k, int64_t w)
{
    return k >= 0 ? k / w : -((-k + w - 1) / w);
}

void sim_hz_ext_build(sim_hz_ext *e, const float *field, int threads)
{
    const int w = e->w, h = e->h, r = e->r, periodic = e->periodic;
    int64_t maxabs = 0;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1) \
    reduction(max : maxabs)
    for (int y = 0; y < h; y++) {
        const float *row = field + (int64_t)y * w;
        int64_t *p = e->rows + (int64_t)y * e->stride + r + 1; /* p[k], k in [-r-1, w+r+1] */
        uint32_t *p32 = e->rows32 ? e->rows32 + (int64_t)y * e->stride + r + 1 : NULL;
        int64_t acc = 0, m = 0;
        p[0] = 0;
        if (p32) {
            p32[0] = 0;
            for (int x = 0; x < w; x++) {
                int64_t v = sim_fix(row[x]);
                acc += v;
                p[x + 1] = acc;
                p32[x + 1] = (uint32_t)acc;
                v = v < 0 ? -v : v;
                m = v > m ? v : m;
            }
        } else {
            for (int x = 0; x < w; x++) {
                int64_t v = sim_fix(row[x]);
                acc += v;
                p[x + 1] = acc;
                v = v < 0 ? -v : v;
                m = v > m ? v : m;
            }
        }
        maxabs = m > maxabs ? m : maxabs;
        /* The halo: whole turns of the row (periodic) or the clamped ends (bounded). */
        for (int k = -r - 1; k <= w + r + 1; k = k == -1 ? w + 1 : k + 1) {
            if (periodic) {
                int64_t q = floor_div(k, w);
                p[k] = p[k - q * w] + q * acc;
            } else {
                p[k] = k < 0 ? 0 : acc;
            }
            if (p32)
                p32[k] = (uint32_t)p[k];
        }
    }
    e->maxabs = maxabs;
}

void sim_hz_ext_candidates(const sim_hz_ext *e, const sim_disk *d, int x, int y,
                           int64_t sums[9])
{
    const int r = d->r;
    int64_t acc[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}; /* [cdy + 1][cdx + 1] */
    const int64_t *off = e->offset + y + r + 1;
    /* Row y + k is shared by the candidates of row y + cdy, where it is the disk's row
     * k - cdy; the three columns x - 1, x, x + 1 read neighbouring prefix entries. */
    for (int k = -r - 1; k <= r + 1; k++) {
        const int64_t *row = e->rows + off[k] + x;
        for (int cdy = -1; cdy <= 1; cdy++) {
            int dy = k - cdy;
            if (dy < -r || dy > r)
                continue;
            int hw = d->hw[dy + r];
            const int64_t *hi = row + hw + 1, *lo = row - hw;
            acc[cdy + 1][0] += hi[-1] - lo[-1];
            acc[cdy + 1][1] += hi[0] - lo[0];
            acc[cdy + 1][2] += hi[1] - lo[1];
        }
    }
    for (int c = 0; c < SIM_NCAND; c++) {
        int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
        int slot = sim_cand_slot(c);
        if (!e->periodic && (cx < 0 || cx >= e->w || cy < 0 || cy >= e->h))
            sums[c] = SIM_SUM_INVALID;
        else
            sums[c] = acc[slot / 3][slot % 3];
    }
}

/* out[x] = sum over the disk's rows j of row_j[x + hw_j + 1] - row_j[x - hw_j], x in [0, n). */
SIM_CLONES static void dense_span(const int64_t *const *rowp, const int *hw, int rows, int n,
                                  int64_t *restrict out)
{
    for (int x = 0; x < n; x++)
        out[x] = 0;
    for (int j = 0; j < rows; j++) {
        const int64_t *restrict hi = rowp[j] + hw[j] + 1;
        const int64_t *restrict lo = rowp[j] - hw[j];
        for (int x = 0; x < n; x++)
            out[x] += hi[x] - lo[x];
    }
}

/* Columns per block of the dense pass: 2r+1 extended rows of this many int64 stay in L2
 * (r = 32, 512 columns: 65 x 4 KiB = 260 KiB) while consecutive output rows reuse them. */
#define HZ_DENSE_BLOCK 512

/* dense_span modulo 2^32, 8 lanes per AVX2 register: exact when every disk sum lies in
 * (-2^31, 2^31) (sim_hz_ext_fits32), so its residue, read as a signed 32-bit value, is it. */
#define HZ_DENSE_BLOCK32 1024

SIM_CLONES static void dense_span32(const uint32_t *const *rowp, const int *hw, int rows, int n,
                                    int64_t *restrict out)
{
    uint32_t acc[HZ_DENSE_BLOCK32];
    for (int x = 0; x < n; x++)
        acc[x] = 0;
    int j = 0;
    for (; j + 1 < rows; j += 2) {
        const uint32_t *restrict hi0 = rowp[j] + hw[j] + 1;
        const uint32_t *restrict lo0 = rowp[j] - hw[j];
        const uint32_t *restrict hi1 = rowp[j + 1] + hw[j + 1] + 1;
        const uint32_t *restrict lo1 = rowp[j + 1] - hw[j + 1];
        for (int x = 0; x < n; x++)
            acc[x] += (hi0[x] - lo0[x]) + (hi1[x] - lo1[x]);
    }
    for (; j < rows; j++) {
        const uint32_t *restrict hi = rowp[j] + hw[j] + 1;
        const uint32_t *restrict lo = rowp[j] - hw[j];
        for (int x = 0; x < n; x++)
            acc[x] += hi[x] - lo[x];
    }
    /* Two's complement without implementation-defined casts: a ^ 2^31 - 2^31. */
    for (int x = 0; x < n; x++)
        out[x] = (int64_t)(acc[x] ^ 0x80000000u) - (int64_t)0x80000000u;
}

static void dense32(const sim_hz_ext *e, const sim_disk *d, int64_t *out, int threads)
{
    const int w = e->w, h = e->h, r = d->r;
    const int blocks = (w + HZ_DENSE_BLOCK32 - 1) / HZ_DENSE_BLOCK32;
    const int64_t tasks = (int64_t)blocks * h;
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t t = 0; t < tasks; t++) {
        int b = (int)(t / h), y = (int)(t % h);
        int x0 = b * HZ_DENSE_BLOCK32;
        int n = w - x0 < HZ_DENSE_BLOCK32 ? w - x0 : HZ_DENSE_BLOCK32;
        const uint32_t *rowp[2 * 64 + 1];
        for (int j = 0; j <= 2 * r; j++)
            rowp[j] = e->rows32 + e->offset[y + j + 1] + x0; /* row y + (j - r) */
        dense_span32(rowp, d->hw, 2 * r + 1, n, out + (int64_t)y * w + x0);
    }
}

void sim_hz_ext_dense(const sim_hz_ext *e, const sim_disk *d, int64_t *out, int threads)
{
    sim_hz_ext_dense_width(e, d, out, threads, sim_hz_ext_fits32(e, d));
}

void sim_hz_ext_dense_width(const sim_hz_ext *e, const sim_disk *d, int64_t *out, int threads,
                            int bits32)
{
    if (bits32 && e->rows32) {
        dense32(e, d, out, threads);
        return;
    }
    const int w = e->w, h = e->h, r = d->r;
    const int blocks = (w + HZ_DENSE_BLOCK - 1) / HZ_DENSE_BLOCK;
    const int64_t tasks = (int64_t)blocks * h;
    /* Block-major order, so that each thread's contiguous share walks down a column block. */
#pragma omp parallel for schedule(static) num_threads(threads) if (threads > 1)
    for (int64_t t = 0; t < tasks; t++) {
        int b = (int)(t / h), y = (int)(t % h);
        int x0 = b * HZ_DENSE_BLOCK;
        int n = w - x0 < HZ_DENSE_BLOCK ? w - x0 : HZ_DENSE_BLOCK;
        const int64_t *rowp[2 * 64 + 1];
        for (int j = 0; j <= 2 * r; j++)
            rowp[j] = e->rows + e->offset[y + j + 1] + x0; /* row y + (j - r) */
        dense_span(rowp, d->hw, 2 * r + 1, n, out + (int64_t)y * w + x0);
    }
}

/* ---- The CPU step's path: 32-bit rows (sim_horizon.h). ---- */

/* sim_fix32 of a row into p[1 .. w] and its largest magnitude: no dependence between cells, so
 * it vectorises (the scan that follows cannot). */
SIM_CLONES static int32_t fix_row(const float *restrict row, int w, uint32_t *restrict p)
{
    int32_t m = 0;
    for (int x = 0; x < w; x++) {
        int32_t v = sim_fix32(row[x]);
        p[x + 1] = (uint32_t)v;
        v = v < 0 ? -v : v;
        m = v > m ? v : m;
    }
    return m;
}

void sim_hz_ext_build32_rows(sim_hz_ext *e, const float *field, int32_t *rowmax, int y0, int y1)
{
    const int w = e->w, r = e->r, periodic = e->periodic;
    for (int y = y0; y < y1; y++) {
        uint32_t *p = e->rows32 + (int64_t)y * e->stride + r + 1; /* p[k], k in [-r-1, w+r+1] */
        rowmax[y] = fix_row(field + (int64_t)y * w, w, p);
        /* The prefix sums, modulo 2^32: exact for every span (sim_horizon.h). */
        uint32_t acc = 0;
        p[0] = 0;
        for (int x = 1; x <= w; x++) {
            acc += p[x];
            p[x] = acc;
        }
        if (periodic) {
            /* p[k] = p[k mod w] + floor(k / w) * total: step j = k mod w and q = floor(k / w)
             * outwards from the row instead of dividing. */
            uint32_t q = (uint32_t)-1;
            for (int k = -1, j = w - 1; k >= -r - 1; k--) {
                p[k] = p[j] + q * acc;
                if (--j < 0) {
                    j += w;
                    q--;
                }
            }
            q = 1;
            for (int k = w + 1, j = 1; k <= w + r + 1; k++) {
                if (j >= w) {
                    j -= w;
                    q++;
                }
                p[k] = p[j] + q * acc;
                j++;
            }
        } else {
            for (int k = -r - 1; k < 0; k++)
                p[k] = 0;
            for (int k = w + 1; k <= w + r + 1; k++)
                p[k] = acc;
        }
    }
}

/* out[x] = the sum of the rows' spans, each span read as a signed 32-bit value, in int64. */
SIM_CLONES static void dense_span_wide(const uint32_t *const *rowp, const int *hw, int rows, int n,
                                       int64_t *restrict out)
{
    for (int x = 0; x < n; x++)
        out[x] = 0;
    for (int j = 0; j < rows; j++) {
        const uint32_t *restrict hi = rowp[j] + hw[j] + 1;
        const uint32_t *restrict lo = rowp[j] - hw[j];
        for (int x = 0; x < n; x++)
            out[x] += (int64_t)((hi[x] - lo[x]) ^ 0x80000000u) - (int64_t)0x80000000u;
    }
}

void sim_hz_ext_dense_row(const sim_hz_ext *e, const sim_disk *d, const int32_t *rowmax,
                          int32_t allmax, int y, int64_t *out)
{
    const int w = e->w, h = e->h, r = d->r;
    const int64_t n = SIM_HZ_DENSE_ROW(w);
    if (!e->periodic && (y < 0 || y >= h)) {
        for (int64_t x = 0; x < n; x++)
            out[x] = SIM_SUM_INVALID;
        return;
    }
    const uint32_t *rowp[2 * 64 + 1];
    int64_t cells = 0;
    for (int j = 0; j <= 2 * r; j++) {
        rowp[j] = e->rows32 + e->offset[y + j + 1] - 1; /* row y + (j - r) at column -1 */
        cells += 2 * (int64_t)d->hw[j] + 1;
    }
    /* The largest cell of the grid, else of the 2r+1 rows, bounds every disk sum of the row. */
    int narrow = (int64_t)allmax * cells < ((int64_t)1 << 31);
    if (!narrow) {
        int64_t m = 0;
        for (int j = 0; j <= 2 * r; j++) {
            int64_t row = (e->offset[y + j + 1] - r - 1) / e->stride; /* h: the zero row */
            if (row < h && rowmax[row] > m)
                m = rowmax[row];
        }
        narrow = m * cells < ((int64_t)1 << 31);
    }
    for (int64_t x0 = 0; x0 < n; x0 += HZ_DENSE_BLOCK32) {
        int nb = (int)(n - x0 < HZ_DENSE_BLOCK32 ? n - x0 : HZ_DENSE_BLOCK32);
        const uint32_t *blk[2 * 64 + 1];
        for (int j = 0; j <= 2 * r; j++)
            blk[j] = rowp[j] + x0;
        if (narrow)
            dense_span32(blk, d->hw, 2 * r + 1, nb, out + x0);
        else
            dense_span_wide(blk, d->hw, 2 * r + 1, nb, out + x0);
    }
    if (!e->periodic) {
        out[0] = SIM_SUM_INVALID;
        out[w + 1] = SIM_SUM_INVALID;
    }
}

void sim_hz_ext_candidates32(const sim_hz_ext *e, const sim_disk *d, int x, int y,
                             int64_t sums[9])
{
    const int r = d->r;
    int64_t acc[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}; /* [cdy + 1][cdx + 1] */
    const int64_t *off = e->offset + y + r + 1;
    for (int k = -r - 1; k <= r + 1; k++) {
        const uint32_t *row = e->rows32 + off[k] + x;
        for (int cdy = -1; cdy <= 1; cdy++) {
            int dy = k - cdy;
            if (dy < -r || dy > r)
                continue;
            int hw = d->hw[dy + r];
            const uint32_t *hi = row + hw + 1, *lo = row - hw;
            for (int cdx = -1; cdx <= 1; cdx++)
                acc[cdy + 1][cdx + 1] +=
                    (int64_t)((hi[cdx] - lo[cdx]) ^ 0x80000000u) - (int64_t)0x80000000u;
        }
    }
    for (int c = 0; c < SIM_NCAND; c++) {
        int cx = x + sim_cand_dx(c), cy = y + sim_cand_dy(c);
        int slot = sim_cand_slot(c);
        if (!e->periodic && (cx < 0 || cx >= e->w || cy < 0 || cy >= e->h))
            sums[c] = SIM_SUM_INVALID;
        else
            sums[c] = acc[slot / 3][slot % 3];
    }
}
