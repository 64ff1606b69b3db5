/* sim_stats.c - the stats.csv row format (sim_stats.h). */
#include "sim_stats.h"

#include <inttypes.h>
#include <stdio.h>

int sim_stats_csv_header(char *buf, size_t n, const sim_model *m)
{
    size_t used = (size_t)snprintf(buf, n, "%.*s", (int)(sizeof SIM_STATS_CSV_HEADER - 2),
                                   SIM_STATS_CSV_HEADER);
    static const char *const sp_cols[] = {"count", "moved", "births", "deaths", "energy"};
    static const char *const f_cols[] = {"total", "mean", "max"};
    for (int s = 0; m->named && s < m->n_species && used < n; s++)
        for (int c = 0; c < 5 && used < n; c++)
            used += (size_t)snprintf(buf + used, n - used, ",%s.%s", m->species_name[s],
                                     sp_cols[c]);
    for (int f = 0; m->named && f < m->n_fields && used < n; f++)
        for (int c = 0; c < 3 && used < n; c++)
            used += (size_t)snprintf(buf + used, n - used, ",%s.%s", m->field_name[f],
                                     f_cols[c]);
    if (used < n)
        used += (size_t)snprintf(buf + used, n - used, "\n");
    return (int)used;
}

int sim_stats_csv_row(char *buf, size_t n, const sim_stats *st)
{
    size_t used = (size_t)snprintf(buf, n, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%.17g,%.17g,%.9g,"
                                   "%.9g,%016" PRIx64, st->step, st->agents, st->moved,
                                   st->field_total, st->field_mean, (double)st->field_max,
                                   (double)st->residual, st->checksum);
    for (int s = 0; s < st->n_species && used < n; s++) {
        const sim_species_stats *p = &st->species[s];
        used += (size_t)snprintf(buf + used, n - used, ",%" PRId64 ",%" PRId64 ",%" PRId64
                                 ",%" PRId64 ",%.17g", p->count, p->moved, p->births, p->deaths,
                                 p->energy);
    }
    for (int f = 0; st->n_species > 0 && f < st->n_fields && used < n; f++) {
        const sim_field_stats *p = &st->fields[f];
        used += (size_t)snprintf(buf + used, n - used, ",%.17g,%.17g,%.9g", p->total, p->mean,
                                 (double)p->max);
    }
    if (used < n)
        used += (size_t)snprintf(buf + used, n - used, "\n");
    return (int)used;
}
