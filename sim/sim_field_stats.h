/* sim_field_stats.h - the loops of a field's statistics (column sums, checksum terms, maximum and
 * its sign), shared by the CPU backend (sim_cpu.c) and the CPU model engine (sim_model_cpu.c):
 * compiled for the widest vectors the machine has (SIM_CLONES), with the bits of the plain loops.
 * Internal to sim/. */
#ifndef SIM_FIELD_STATS_H
#define SIM_FIELD_STATS_H

#include <stdint.h>

/* Rows y0 .. y1 - 1 of a w-wide field added into colsum[x0 .. x1 - 1], each column's rows in
 * row order, in double: the same additions in the same order per column as a column at a time,
 * so the same bits, whatever rows and columns each call takes. */
void sim_column_sums(const float *field, int w, int y0, int y1, int x0, int x1, double *colsum);

/* Of rows y0 .. y1 - 1 of a w-wide field (cells c = y0 w .. y1 w - 1): sim_column_sums of all
 * columns into part (w doubles, added to); the magnitudes of the cells into the keys *hi2 and
 * *lo2 (sim_rules.h's; start them at 0 and 0xffffffff), from which sim_mags_exact tells whether
 * partial column sums can be added in any order; the largest value into *mx (*mx becomes the
 * larger, NaN never entering; a zero of either sign: the sign is settled over the whole field by
 * sim_max_zero_sign); and the sum modulo 2^64 of the checksum terms sim_checksum_cell(base + c,
 * bits of field[c]) added into *sum (base: the first index of this field's cells, f x cells for
 * a model's field f). One pass over the cells where the processor has AVX-512F, two elsewhere,
 * with the same results. */
void sim_rows_stats(const float *field, int w, int y0, int y1, uint64_t base, double *part,
                    uint32_t *hi2, uint32_t *lo2, float *mx, uint64_t *sum);

/* sim_colsum_exact (sim_rules.h) of the magnitude keys of sim_rows_stats over a field of h rows. */
int sim_mags_exact(uint32_t hi2, uint32_t lo2, int h);

/* Thread k of nt's columns [*x0, *x1) of a w-wide row: even shares that start on multiples of 8
 * columns (on a 64-byte-aligned row of doubles no two threads write one cache line). */
void sim_column_share(int w, int k, int nt, int *x0, int *x1);

/* Thread k of nt's share of a w x h field's statistics: the column sums of its share of the
 * columns (sim_column_share) over every row into colsum (zeroed first), and the maximum and
 * checksum terms (as sim_rows_stats's) of its even share of the cells. One thread (nt == 1) takes
 * the whole field a block of rows at a time with sim_rows_stats. */
void sim_field_share(const float *field, int w, int h, uint64_t base, int k, int nt,
                     double *colsum, float *mx, uint64_t *sum);

/* The field total: the column sums added in column order. */
double sim_column_total(const double *colsum, int w);

/* The field maximum mx of the cells field[0 .. cells - 1] (found with NaN never entering and
 * -0 == +0, so of either sign when it is a zero) with the sign every backend gives it: -0 ranks
 * below +0, so a zero maximum is +0 when any cell is +0 and -0 otherwise. Only a zero maximum
 * reads the field again. */
float sim_max_zero_sign(const float *field, int64_t cells, float mx);

#endif
