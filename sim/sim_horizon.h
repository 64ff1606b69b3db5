/* sim_horizon.h - exact horizon sums on the CPU: per-row prefix sums of the fixed-point field
 * (O(r) per disk) and the brute-force disk sum they are tested against (O(r^2)).
 *
 * The fixed point is sim_fix (sim_rules.h): 12 fraction bits, |cell| <= 2^23. The CPU keeps its
 * prefix rows in int64, where nothing can overflow; the GPU keeps them modulo 2^32, which is
 * exact for every row span (at most 129 cells) because each span is under 2^31. Both give the
 * same int64 disk sums, bit for bit. */
#ifndef SIM_HORIZON_H
#define SIM_HORIZON_H

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

#endif
