/* sim_horizon.c - exact horizon sums on the CPU: prefix rows (O(r) per disk) and brute force. */
#include "sim_horizon.h"

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
