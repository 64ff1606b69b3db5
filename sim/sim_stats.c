/* sim_stats.c - the stats.csv row format (sim_stats.h). */
#include "sim_stats.h"

#include <inttypes.h>
#include <stdio.h>

int sim_stats_csv_row(char *buf, size_t n, const sim_stats *st)
{
    return snprintf(buf, n, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%.17g,%.17g,%.9g,%.9g,%016" PRIx64
                    "\n", st->step, st->agents, st->moved, st->field_total, st->field_mean,
                    (double)st->field_max, (double)st->residual, st->checksum);
}
