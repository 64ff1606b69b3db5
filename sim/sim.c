/* sim.c - the simulation object: builds the initial state, owns one backend instance and the
 * step counter, and keeps the last error message. */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_world.h"

struct sim {
    sim_scenario sc;
    const sim_backend_ops *ops;
    void *impl;
    int threads;
    int64_t step;
    int64_t n_agents;
    sim_err err;
};

int sim_create_from_state(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          int64_t step, const float *field, const uint32_t *agents,
                          int64_t n_agents, sim **out, sim_err *err)
{
    *out = NULL;
    int rc = sim_scenario_validate(sc, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_world_check_agents(sc, agents, n_agents, err);
    if (rc != SIM_OK)
        return rc;
    sim *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    s->sc = *sc;
    s->ops = ops;
    s->step = step;
    s->n_agents = n_agents;
    s->threads = threads;
    rc = ops->create(sc, field, agents, n_agents, threads, &s->impl, err);
    if (rc != SIM_OK) {
        sim_free(s);
        return rc;
    }
    *out = s;
    return SIM_OK;
}

int sim_create(const sim_scenario *sc, const sim_backend_ops *ops, int threads, sim **out,
               sim_err *err)
{
    *out = NULL;
    int rc = sim_scenario_validate(sc, err);
    if (rc != SIM_OK)
        return rc;
    int64_t cells = (int64_t)sc->width * sc->height;
    int64_t n = sim_scenario_agent_count(sc);
    float *field = sim_malloc_array((size_t)cells, sizeof *field);
    uint32_t *agents = sim_malloc_array((size_t)(n > 0 ? n : 1), sizeof *agents);
    if (!field || !agents) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory for a %dx%d world", sc->width,
                         sc->height);
        goto done;
    }
    rc = sim_world_init(sc, threads, field, agents, err);
    if (rc == SIM_OK)
        rc = sim_create_from_state(sc, ops, threads, 0, field, agents, n, out, err);
done:
    sim_free(field);
    sim_free(agents);
    return rc;
}

void sim_destroy(sim *s)
{
    if (!s)
        return;
    s->ops->destroy(s->impl);
    sim_free(s);
}

int sim_step(sim *s, int want_stats, sim_stats *st)
{
    memset(st, 0, sizeof *st);
    int rc = s->ops->step(s->impl, s->step, want_stats, st, &s->err);
    if (rc != SIM_OK)
        return rc;
    s->step++;
    st->step = s->step;
    st->agents = s->n_agents;
    return SIM_OK;
}

int sim_read_field(sim *s, float *out)
{
    return s->ops->read_field(s->impl, out, &s->err);
}

int sim_read_agents(sim *s, uint32_t *out)
{
    return s->ops->read_agents(s->impl, out, &s->err);
}

int sim_checksum(sim *s, uint64_t *out)
{
    return s->ops->checksum(s->impl, out, &s->err);
}

int sim_horizon(sim *s, const uint32_t *cells, int64_t n, int64_t *sums)
{
    return s->ops->horizon(s->impl, cells, n, sums, &s->err);
}

int sim_paint(sim *s, int x, int y, int radius, float amount)
{
    return s->ops->paint(s->impl, x, y, radius, amount, &s->err);
}

int64_t sim_steps_done(const sim *s) { return s->step; }
int64_t sim_agent_count(const sim *s) { return s->n_agents; }
const sim_scenario *sim_get_scenario(const sim *s) { return &s->sc; }
const sim_backend_ops *sim_get_backend(const sim *s) { return s->ops; }
void *sim_get_backend_state(sim *s) { return s->impl; }
int sim_threads(const sim *s) { return s->threads; }
const char *sim_errmsg(const sim *s) { return s->err.msg; }
