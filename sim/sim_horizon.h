/* sim_horizon.h - exact horizon sums on the CPU: per-row prefix sums of the fixed-point field
 * (O(r) per disk) and the brute-force disk sum they are tested against (O(r^2)).
 *
 * The fixed point is sim_fix (sim_rules.h): 12 fraction bits, |cell| <= 2^23. The CPU keeps its
 * prefix rows in int64, where nothing can overflow; the GPU keeps them modulo 2^32, which is
 * exact for every row span (at most 129 cells) because each span is under 2^31. Both give the
 * same int64 disk sums, bit for bit. */
#ifndef SIM_HORIZON_H
#define SIM_HORIZON_H

#include <stddef.h>
#include <stdint.h>

/* Row half-widths of the disk of radius r: hw[dy + r] for dy in -r..r. */
typedef struct sim_disk {
    int r;
    int hw[2 * 64 + 1];
} sim_disk;

void sim_disk_init(sim_disk *d, int r);

/* prefix[(w+1)*y + x] = sum of sim_fix(field) over row y, columns 0..x-1. Uses OpenMP. */
void sim_horizon_prefix(const float *field, int w, int h, int64_t *prefix);

/* Disk sum around (x, y) from the prefix rows. Periodic: offsets wrap (a disk wider than the
 * grid counts cells more than once, exactly as the brute force does); bounded: cells outside
 * the grid count 0. */
int64_t sim_horizon_disk(const int64_t *prefix, int w, int h, int periodic, const sim_disk *d,
                         int x, int y);

/* The same sum by visiting every offset (dx, dy) with dx^2 + dy^2 <= r^2. */
int64_t sim_horizon_disk_brute(const float *field, int w, int h, int periodic, int r, int x,
                               int y);

/* The 9 candidate sums of an agent at (x, y); SIM_SUM_INVALID for candidates outside a bounded
 * grid. */
void sim_horizon_candidates(const int64_t *prefix, int w, int h, int periodic,
                            const sim_disk *d, int x, int y, int64_t sums[9]);

/* ---- Sums over a sampled region (the viewer's horizon layer, sim_region_sums). The region is
 * the nx x ny cells (xs[ix], ys[iy]), xs and ys strictly increasing inside the grid, as a view
 * samples a zoomed or shrunk picture of the world. For each sampled row y and each disk row dy,
 * one prefix sum of row y + dy over the columns [xs[0] - r, xs[nx-1] + r] (wrapped when
 * periodic, cells outside a bounded grid 0) turns the disk's span around every sampled x into
 * two lookups: O(ny (2r+1) (span + nx)) with span <= w + 2r, touching only the rows and columns
 * the region needs. Exact integers: out equals sim_horizon_disk / sim_horizon_disk_brute bit for
 * bit. ---- */

/* int64 entries of scratch sim_horizon_region needs for this region and thread count
 * (threads <= 0 counts as 1): one prefix row of the column span per thread. */
size_t sim_horizon_region_scratch_len(int r, const int32_t *xs, int nx, int threads);

/* out[iy * nx + ix] = the disk sum of radius r (0..SIM_MAX_RADIUS) at (xs[ix], ys[iy]) of the
 * w x h field. The caller checked xs, ys (strictly increasing, inside the grid, nx, ny >= 1) and
 * owns scratch (sim_horizon_region_scratch_len entries, same r, xs, nx, threads). OpenMP over
 * sampled rows when threads > 1; the bits do not depend on threads. Cannot fail. */
void sim_horizon_region(const float *field, int w, int h, int periodic, int r, const int32_t *xs,
                        int nx, const int32_t *ys, int ny, int64_t *out, int64_t *scratch,
                        int threads);

/* ---- The fast path: extended prefix rows. Each row carries a halo of r + 1 prefix entries on
 * both sides, so that the sum of any span [x - hw, x + hw] of a candidate column x in
 * [-1, w] is one subtraction, ext[x + hw + 1] - ext[x - hw], with no % and no branch:
 *   periodic: ext[k] = P[k mod w] + floor(k / w) * (row total)  (whole turns included, as the
 *             brute force counts them);
 *   bounded:  ext[k] = P[clamp(k, 0, w)]  (cells outside count 0),
 * where P is the plain prefix row. Rows outside a bounded grid map to an all-zero row, rows of a
 * periodic grid wrap, through a table of row offsets, so a disk is 2r+1 subtractions and adds.
 * Integers throughout: the sums are the same bits as sim_horizon_disk's. ---- */
typedef struct sim_hz_ext {
    int w, h, r, periodic;
    int64_t stride;  /* entries per extended row: w + 2r + 3 */
    int64_t *rows;   /* (h + 1) * stride: h extended rows, then the zero row */
    int64_t *offset; /* h + 2r + 2 entries: offset[yy + r + 1] = start of row yy's entry 0 */
    uint32_t *rows32; /* NULL, or the same rows modulo 2^32 (sim_hz_ext_attach32) */
    int64_t maxabs;   /* max |sim_fix(cell)| of the field at the last build; -1 none yet */
} sim_hz_ext;

/* Entries the caller allocates for rows (int64) and offset (int64). */
int64_t sim_hz_ext_rows_len(int w, int h, int r);
int64_t sim_hz_ext_offset_len(int h, int r);

/* Fills e's geometry and the row offsets (rows and offset already point at caller memory of
 * the sizes above). Once per world: the offsets depend only on (h, r, periodic). */
void sim_hz_ext_init(sim_hz_ext *e, int w, int h, int r, int periodic, int64_t *rows,
                     int64_t *offset);

/* Optional 32-bit copy of the rows for the dense pass (sim_hz_ext_rows_len uint32 entries of
 * caller memory, laid out as rows; call after sim_hz_ext_init). Every build then also writes
 * each prefix entry modulo 2^32, and sim_hz_ext_dense sums in uint32 lanes whenever that is
 * exact (sim_hz_ext_fits32). */
void sim_hz_ext_attach32(sim_hz_ext *e, uint32_t *rows32);

/* Whether the dense pass of the last build may run in 32 bits: rows32 is attached and
 * maxabs * (cells of the disk) < 2^31, so that every disk sum lies in (-2^31, 2^31) and its
 * value modulo 2^32, from the rows modulo 2^32, gives it exactly. */
int sim_hz_ext_fits32(const sim_hz_ext *e, const sim_disk *d);

/* Builds the extended prefix rows of the field (and rows32, and maxabs); OpenMP over rows when
 * threads > 1. */
void sim_hz_ext_build(sim_hz_ext *e, const float *field, int threads);

/* The 9 candidate sums of an agent at (x, y), as sim_horizon_candidates: the 2r+3 rows that the
 * candidates' disks touch are visited once and shared by the candidates of their 3 columns. */
void sim_hz_ext_candidates(const sim_hz_ext *e, const sim_disk *d, int x, int y,
                           int64_t sums[9]);

/* The disk sum of every cell into out (w * h, row-major): 2r+1 vectorisable row passes per
 * output row. Worth it when agents' candidates cover a good part of the grid. OpenMP over rows
 * when threads > 1. In uint32 lanes from rows32 when sim_hz_ext_fits32, else in int64: the
 * same bits either way. */
void sim_hz_ext_dense(const sim_hz_ext *e, const sim_disk *d, int64_t *out, int threads);

/* The dense pass with its width chosen by the caller (tests): bits32 != 0 needs fits32. */
void sim_hz_ext_dense_width(const sim_hz_ext *e, const sim_disk *d, int64_t *out, int threads,
                            int bits32);

/* ---- The CPU step's path: 32-bit prefix rows only. Every row span of a disk (at most 129
 * cells of at most 2^23) lies in (-2^31, 2^31), so its difference of two entries modulo 2^32,
 * read as a signed 32-bit value, is the span exactly; spans summed in int64 then give any disk
 * sum exactly, and spans summed modulo 2^32 give it exactly whenever the disk's cells bound it
 * below 2^31 (the row maxima below). No int64 rows: 4 B per cell instead of 12. ---- */

/* Builds the rows32 of rows [y0, y1) (e->rows32 attached, e->rows may be NULL) and rowmax[y] =
 * max |sim_fix(cell)| over row y (caller memory, h entries). No OpenMP: callers split rows among
 * their threads themselves. No division: the periodic halo steps through whole turns. */
void sim_hz_ext_build32_rows(sim_hz_ext *e, const float *field, int32_t *rowmax, int y0, int y1);

/* Entries of one dense row: columns -1 .. w. */
#define SIM_HZ_DENSE_ROW(w) ((int64_t)(w) + 2)

/* The disk sums of output row y (-1 <= y <= h; a periodic y wraps) at columns -1 .. w into
 * out[x + 1], from rows32 (built for every row), rowmax and allmax (the largest of rowmax): in
 * uint32 lanes when allmax, or else the 2r+1 rows' maxima, bound the sum below 2^31, else span by
 * span in int64; the same bits either way. Bounded grids: SIM_SUM_INVALID at columns -1 and w
 * and for the whole of rows -1 and h, so that a candidate outside the grid reads as invalid with
 * no test. */
void sim_hz_ext_dense_row(const sim_hz_ext *e, const sim_disk *d, const int32_t *rowmax,
                          int32_t allmax, int y, int64_t *out);

/* sim_hz_ext_candidates from rows32 (span by span in int64: exact for any field). */
void sim_hz_ext_candidates32(const sim_hz_ext *e, const sim_disk *d, int x, int y,
                             int64_t sums[9]);

#endif
