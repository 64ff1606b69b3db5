/* sim_world.c - initial field and agent placement, from the seed, on the host. */
#include "sim_world.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_rules.h"

float sim_world_unit24(uint32_t x)
{
    return (float)(x >> 8) * (1.0f / 16777216.0f);
}

uint32_t sim_world_pick(uint64_t seed, uint32_t index, uint32_t *cand, int64_t n_cand, int64_t i)
{
    sim_u32x4 r = sim_random(seed, (uint64_t)i, index, SIM_RNG_PLACE);
    uint64_t span = (uint64_t)(n_cand - i);
    uint64_t wide = ((uint64_t)r.v[0] << 32) | r.v[1];
    int64_t j = i + (int64_t)(wide % span);
    uint32_t t = cand[i];
    cand[i] = cand[j];
    cand[j] = t;
    return cand[i];
}

/* Distinct cells chosen uniformly among `cand` (a list of n_cand cell indices, shuffled in
 * place): a partial Fisher-Yates shuffle driven by Philox, so the result depends only on the
 * seed. The first n entries become the agents. */
static void pick_distinct(uint64_t seed, uint32_t *cand, int64_t n_cand, uint32_t *agents,
                          int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        agents[i] = sim_world_pick(seed, 0, cand, n_cand, i);
}

int sim_world_init(const sim_scenario *sc, int threads, float *field, uint32_t *agents,
                   sim_err *err)
{
    int w = sc->width, h = sc->height;
    int64_t cells = (int64_t)w * h;
    int64_t n = sim_scenario_agent_count(sc);
    if (n > cells)
        return sim_err_set(err, SIM_EINVAL, "agents: %lld agents do not fit in %lld cells",
                           (long long)n, (long long)cells);

    /* The caller's thread count: a sweep runs many worlds at once, one thread each, and a team
     * of every core per world would oversubscribe the machine many times over. */
    int team = threads > 0 ? threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(team)
    for (int64_t i = 0; i < cells; i++) {
        float v = sc->initial;
        if (sc->init_noise > 0.0f) {
            sim_u32x4 r = sim_random(sc->seed, (uint64_t)i, 0, SIM_RNG_FIELD);
            v = v + sim_world_unit24(r.v[0]) * sc->init_noise;
        }
        field[i] = v;
    }
    if (n == 0)
        return SIM_OK;

    /* Candidate cells: all of them, or those of a centred disk just large enough to hold the
     * agents at 50% density (the whole grid if that disk does not fit). */
    uint32_t *cand = sim_malloc_array((size_t)cells, sizeof *cand);
    if (!cand)
        return sim_err_set(err, SIM_ENOMEM, "out of memory placing %lld agents", (long long)n);
    int64_t n_cand = 0;
    if (sc->placement == SIM_PLACE_CENTER) {
        double radius = sqrt((double)n * 2.0 / 3.14159265358979);
        double cx = (w - 1) * 0.5, cy = (h - 1) * 0.5;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double dx = x - cx, dy = y - cy;
                if (dx * dx + dy * dy <= radius * radius)
                    cand[n_cand++] = (uint32_t)((int64_t)y * w + x);
            }
    }
    if (n_cand < n) {
        n_cand = cells;
        for (int64_t i = 0; i < cells; i++)
            cand[i] = (uint32_t)i;
    }
    pick_distinct(sc->seed, cand, n_cand, agents, n);
    sim_free(cand);
    return SIM_OK;
}

int sim_world_check_agents(const sim_scenario *sc, const uint32_t *agents, int64_t n,
                           sim_err *err)
{
    int64_t cells = (int64_t)sc->width * sc->height;
    uint8_t *seen = sim_calloc((size_t)cells, 1);
    if (!seen)
        return sim_err_set(err, SIM_ENOMEM, "out of memory checking %lld agents", (long long)n);
    int rc = SIM_OK;
    for (int64_t i = 0; i < n; i++) {
        if ((int64_t)agents[i] >= cells) {
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u outside the %dx%d grid",
                             (long long)i, agents[i], sc->width, sc->height);
            break;
        }
        if (seen[agents[i]]++) {
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u already holds another agent",
                             (long long)i, agents[i]);
            break;
        }
    }
    sim_free(seen);
    return rc;
}
