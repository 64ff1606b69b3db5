/* app_batch.c - batch lengths for sim_step_batch (see app_batch.h). */
#include "app_batch.h"

#include "sim.h"

void app_batch_init(app_batch *b, double bound_s)
{
    b->cap = 1;
    b->bound_s = bound_s;
}

void app_batch_took(app_batch *b, int n, double seconds)
{
    if (n < 1)
        return;
    const double per_step = seconds > 0.0 ? seconds / n : 0.0;
    if (per_step * 2.0 * b->cap <= b->bound_s) {
        b->cap = b->cap * 2 > SIM_STEP_BATCH_MAX ? SIM_STEP_BATCH_MAX : b->cap * 2;
    } else if (per_step * b->cap > b->bound_s) {
        /* slower than the bound allows: as many as fit it (per_step > 0 here) */
        double fit = b->bound_s / per_step;
        b->cap = fit < 1.0 ? 1 : (int)fit;
    }
}

int64_t app_batch_next_due(int64_t done, int64_t every)
{
    if (every <= 0 || every > INT64_MAX - done)
        return INT64_MAX;
    return (done / every + 1) * every;
}
