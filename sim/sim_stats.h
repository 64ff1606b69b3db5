/* sim_stats.h - one stats.csv row, the same text wherever a row is written: `horizon run`,
 * sweeps' kept runs and the viewer's recorded sessions. */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stddef.h>

#include "sim_backend.h"

/* The header line of stats.csv, newline included. */
#define SIM_STATS_CSV_HEADER \
    "step,agents,moved,field_total,field_mean,field_max,residual,checksum\n"

/* Formats st as one stats.csv row, newline included, into buf (n bytes; 256 always suffice):
 * integers in decimal, field_total and field_mean with 17 significant digits, field_max and
 * residual with 9 (both parse back to the same bits), the checksum as 16 hex digits. Returns
 * the row's length. */
int sim_stats_csv_row(char *buf, size_t n, const sim_stats *st);

#endif
