/* sim_stats.h - one stats.csv row, the same text wherever a row is written: `horizon run`,
 * sweeps' kept runs and the viewer's recorded sessions. */
#ifndef SIM_STATS_H
#define SIM_STATS_H

#include <stddef.h>

#include "sim_backend.h"
#include "sim_model.h"

/* The header line of stats.csv of a scenario without named sections, newline included. */
#define SIM_STATS_CSV_HEADER \
    "step,agents,moved,field_total,field_mean,field_max,residual,checksum\n"

/* Room for any header or row. */
#define SIM_STATS_ROW_MAX 2048

/* The header line for model m, newline included, into buf (SIM_STATS_ROW_MAX bytes suffice):
 * SIM_STATS_CSV_HEADER, and for a model with named sections (m->named) then per species
 * NAME.count, NAME.moved, NAME.births, NAME.deaths, NAME.energy and per field NAME.total,
 * NAME.mean, NAME.max. Returns the length. */
int sim_stats_csv_header(char *buf, size_t n, const sim_model *m);

/* Formats st as one stats.csv row, newline included, into buf (n bytes; SIM_STATS_ROW_MAX
 * always suffice): integers in decimal, field_total and field_mean with 17 significant digits,
 * field_max and residual with 9 (both parse back to the same bits), the checksum as 16 hex
 * digits; then, when st->n_species > 0, the groups of sim_stats_csv_header in the same formats
 * (energy and totals and means 17 digits, maxima 9). Returns the row's length. */
int sim_stats_csv_row(char *buf, size_t n, const sim_stats *st);

/* Completes a model engine's statistics once its per-field groups and species counts are in st:
 * each species' mean energy from energy_fix (the sum of sim_energy_fix over its living agents:
 * / 256 / count, 0 without a life cycle or agents), the output field's group copied into
 * field_total, field_mean and field_max, and residual and checksum. Both model engines end
 * their statistics here, so the rules are written once. */
void sim_stats_model_finish(const sim_model *m, const int64_t energy_fix[SIM_MAX_SPECIES],
                            float residual, uint64_t checksum, sim_stats *st);

#endif
