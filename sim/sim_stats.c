/* sim_stats.c - the stats.csv row format (sim_stats.h). */
#include "sim_stats.h"

#include <inttypes.h>
#include <stdio.h>

void sim_stats_model_finish(const sim_model *m, const int64_t energy_fix[SIM_MAX_SPECIES],
                            float residual, uint64_t checksum, sim_stats *st)
{
    for (int s = 0; s < m->n_species; s++) {
        sim_species_stats *ss = &st->species[s];
        ss->energy = ss->count > 0 && m->species[s].life
                         ? (double)energy_fix[s] / 256.0 / (double)ss->count
                         : 0.0;
    }
    const sim_field_stats *of = &st->fields[m->output_field];
    st->field_total = of->total;
    st->field_mean = of->mean;
    st->field_max = of->max;
    st->residual = residual;
    st->checksum = checksum;
}

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
