/* sim.c - the simulation object: builds the initial state, owns one backend instance and the
 * step counter, keeps the last error message, and is the one place that calls into a backend
 * table: the version check at creation and the GPU-or-host choice of sim_compose live here. */
#include "sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_impl.h"
#include "sim_world.h"

struct sim {
    sim_scenario sc;
    sim_model model;
    const sim_backend_ops *ops;
    int engine; /* 1: ops is a model engine (create_state), the agent count changes */
    void *impl;
    int threads;
    int64_t step;
    int64_t n_agents;
    sim_err err;
    /* sim_compose's host copy of the state, for a backend without compose: NULL until the first
     * call, then width*height floats, n_agents cells (at least 1) and width*height flags. */
    float *h_field;
    uint32_t *h_agents;
    uint8_t *h_occ;
    int64_t h_agents_cap;
};

/* Refuses a table this build cannot drive: another version (its members may not be where this
 * sim.c looks for them, so nothing else of it is read), or a required member left NULL. */
static int check_ops(const sim_backend_ops *ops, sim_err *err)
{
    if (!ops)
        return sim_err_set(err, SIM_EINVAL, "no backend table");
    if (ops->version != SIM_BACKEND_VERSION)
        return sim_err_set(err, SIM_EINVAL,
                           "backend table of version %d, this build drives version %d "
                           "(SIM_BACKEND_VERSION in sim_backend.h)",
                           ops->version, SIM_BACKEND_VERSION);
    const char *name = ops->name ? ops->name : "(unnamed)";
    const char *missing = !ops->name          ? "name"
                          : !ops->create && !ops->create_state ? "create"
                          : !ops->destroy     ? "destroy"
                          : !ops->step        ? "step"
                          : !ops->step_batch  ? "step_batch"
                          : !ops->read_field  ? "read_field"
                          : !ops->read_agents ? "read_agents"
                          : !ops->checksum    ? "checksum"
                          : !ops->horizon     ? "horizon"
                          : !ops->paint       ? "paint"
                          : !ops->region_sums ? "region_sums"
                          : !ops->read_cells  ? "read_cells"
                          : !ops->agent_cells ? "agent_cells"
                          : ops->create_state && !ops->read_state ? "read_state"
                          : !ops->create_state && ops->read_state ? "create_state"
                                              : NULL;
    if (missing)
        return sim_err_set(err, SIM_EINVAL, "backend table \"%s\" has no %s", name, missing);
    return SIM_OK;
}

/* The table that runs sc's model: ops itself when it is a model engine or the model is plain,
 * else the model engine ops names. */
static int pick_engine(const sim_model *m, const sim_backend_ops *ops,
                       const sim_backend_ops **out, sim_err *err)
{
    int rc = check_ops(ops, err);
    if (rc != SIM_OK)
        return rc;
    *out = ops;
    if (ops->create_state || m->plain)
        return SIM_OK;
    const sim_backend_ops *mops = ops->models ? ops->models() : NULL;
    if (!mops)
        return sim_err_set(err, SIM_EINVAL, "the %s backend has no model engine: it runs only "
                           "one field and one species without walls or maps", ops->name);
    rc = check_ops(mops, err);
    if (rc == SIM_OK && !mops->create_state)
        rc = sim_err_set(err, SIM_EINVAL, "backend table \"%s\" names a model engine without "
                         "create_state", ops->name);
    if (rc == SIM_OK)
        *out = mops;
    return rc;
}

int sim_create_from_model_state(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                                int64_t step, const sim_state *st, sim **out, sim_err *err)
{
    *out = NULL;
    int rc = sim_scenario_validate(sc, err);
    if (rc != SIM_OK)
        return rc;
    sim *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    if ((rc = sim_model_build(sc, &s->model, err)) != SIM_OK ||
        (rc = pick_engine(&s->model, ops, &ops, err)) != SIM_OK ||
        (rc = sim_state_check(&s->model, st, err)) != SIM_OK)
        goto fail;
    s->sc = *sc;
    s->ops = ops;
    s->step = step;
    s->n_agents = st->n;
    s->threads = threads;
    if (ops->create_state) {
        s->engine = 1;
        rc = ops->create_state(sc, st, threads, &s->impl, err);
    } else {
        rc = ops->create(sc, st->field[0], st->cell, st->n, threads, &s->impl, err);
    }
    if (rc == SIM_OK) {
        *out = s;
        return SIM_OK;
    }
fail:
    sim_free(s);
    return rc;
}

int sim_create_from_state(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                          int64_t step, const float *field, const uint32_t *agents,
                          int64_t n_agents, sim **out, sim_err *err)
{
    *out = NULL;
    int rc = check_ops(ops, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_scenario_validate(sc, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_world_check_agents(sc, agents, n_agents, threads, err);
    if (rc != SIM_OK)
        return rc;
    sim *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    s->sc = *sc;
    if ((rc = sim_model_build(sc, &s->model, err)) != SIM_OK) {
        sim_free(s);
        return rc;
    }
    if (!s->model.plain && !ops->create_state) {
        sim_free(s);
        return sim_err_set(err, SIM_EINVAL, "a saved single-field state for a model that is "
                           "not plain (use sim_create_from_model_state)");
    }
    s->ops = ops;
    s->step = step;
    s->n_agents = n_agents;
    s->threads = threads;
    if (ops->create_state) {
        /* a plain state handed to a model engine: one field, species 0, ids = indices */
        sim_state st;
        rc = sim_state_alloc(&s->model, n_agents, &st, err);
        if (rc == SIM_OK) {
            memcpy(st.field[0], field, (size_t)st.cells * sizeof *field);
            for (int64_t i = 0; i < n_agents; i++) {
                st.cell[i] = agents[i];
                st.id[i] = (uint32_t)i;
            }
            st.n = n_agents;
            st.next_id = (uint32_t)n_agents;
            s->engine = 1;
            rc = ops->create_state(sc, &st, threads, &s->impl, err);
            sim_state_free(&st);
        }
    } else {
        rc = ops->create(sc, field, agents, n_agents, threads, &s->impl, err);
    }
    if (rc != SIM_OK) {
        sim_free(s);
        return rc;
    }
    *out = s;
    return SIM_OK;
}

/* A plain scenario's initial world built by the backend itself (sim_backend.h). */
static int create_fresh(const sim_scenario *sc, const sim_backend_ops *ops, int threads,
                        sim **out, sim_err *err)
{
    sim *s = sim_calloc(1, sizeof *s);
    if (!s)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    s->sc = *sc;
    s->ops = ops;
    s->n_agents = sim_scenario_agent_count(sc);
    s->threads = threads;
    /* from the copy: a model points into the scenario it was built from */
    int rc = sim_model_build(&s->sc, &s->model, err);
    if (rc == SIM_OK)
        rc = ops->create_fresh(sc, threads, &s->impl, err);
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
    int rc = check_ops(ops, err); /* before building a world the backend would refuse */
    if (rc != SIM_OK)
        return rc;
    rc = sim_scenario_validate(sc, err);
    if (rc != SIM_OK)
        return rc;
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    const sim_backend_ops *engine = ops;
    if ((rc = sim_model_build(sc, m, err)) == SIM_OK)
        rc = pick_engine(m, ops, &engine, err);
    if (rc == SIM_OK && engine->create_state) {
        sim_state st;
        rc = sim_model_world_init(sc, m, threads, &st, err);
        if (rc == SIM_OK) {
            rc = sim_create_from_model_state(sc, engine, threads, 0, &st, out, err);
            sim_state_free(&st);
        }
    }
    sim_free(m);
    if (rc != SIM_OK || engine->create_state)
        return rc;
    /* a random placement the backend may build itself; a centred one is built here */
    if (ops->create_fresh && sc->placement == SIM_PLACE_RANDOM)
        return create_fresh(sc, ops, threads, out, err);
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
    sim_free(s->h_field);
    sim_free(s->h_agents);
    sim_free(s->h_occ);
    sim_free(s);
}

/* The per-species and per-field groups exist for models with named sections only (stats.csv
 * names them in its header); a single-model backend running a named plain model has one of
 * each, filled from its totals. */
static void finish_stats(const sim *s, sim_stats *st)
{
    if (!s->model.named) {
        st->n_species = st->n_fields = 0;
        return;
    }
    if (s->engine)
        return;
    st->n_species = st->n_fields = 1;
    st->species[0].count = st->agents;
    st->species[0].moved = st->moved;
    st->fields[0].total = st->field_total;
    st->fields[0].mean = st->field_mean;
    st->fields[0].max = st->field_max;
}

int sim_step(sim *s, int want_stats, sim_stats *st)
{
    memset(st, 0, sizeof *st);
    int rc = s->ops->step(s->impl, s->step, want_stats, st, &s->err);
    if (rc != SIM_OK)
        return rc;
    s->step++;
    st->step = s->step;
    if (s->engine)
        s->n_agents = st->agents;
    st->agents = s->n_agents;
    finish_stats(s, st);
    return SIM_OK;
}

int sim_step_batch(sim *s, int n, const uint8_t *want_stats, sim_stats *out)
{
    if (n < 1 || n > SIM_STEP_BATCH_MAX)
        return sim_err_set(&s->err, SIM_EINVAL, "step_batch: n = %d (allowed 1 .. %d)", n,
                           SIM_STEP_BATCH_MAX);
    if (!out)
        return sim_err_set(&s->err, SIM_EINVAL, "step_batch: NULL output");
    memset(out, 0, (size_t)n * sizeof *out);
    int rc = s->ops->step_batch(s->impl, s->step, n, want_stats, out, &s->err);
    if (rc != SIM_OK)
        return rc;
    /* What sim_step sets itself, whatever the backend wrote there. */
    for (int k = 0; k < n; k++) {
        out[k].step = s->step + k + 1;
        if (!s->engine)
            out[k].agents = s->n_agents;
        finish_stats(s, &out[k]);
    }
    if (s->engine)
        s->n_agents = out[n - 1].agents;
    s->step += n;
    return SIM_OK;
}

int sim_read_field(sim *s, float *out)
{
    return s->ops->read_field(s->impl, out, &s->err);
}

int sim_read_field_begin(sim *s, float *out, int *ticket)
{
    *ticket = -1;
    if (!s->ops->read_field_begin)
        return s->ops->read_field(s->impl, out, &s->err);
    return s->ops->read_field_begin(s->impl, out, ticket, &s->err);
}

int sim_read_wait(sim *s, int ticket, sim_err *err)
{
    if (ticket < 0 || !s->ops->read_wait)
        return SIM_OK;
    return s->ops->read_wait(s->impl, ticket, err);
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

/* One axis of a sampled region: n >= 1 samples, strictly increasing, in [0, limit). */
static int check_axis(const int32_t *v, int n, int limit, const char *name, sim_err *err)
{
    if (n < 1)
        return sim_err_set(err, SIM_EINVAL, "region_sums: n%s = %d (at least 1)", name, n);
    if (!v)
        return sim_err_set(err, SIM_EINVAL, "region_sums: %ss is NULL", name);
    for (int i = 0; i < n; i++) {
        if (v[i] < 0 || v[i] >= limit)
            return sim_err_set(err, SIM_EINVAL, "region_sums: %ss[%d] = %d outside [0, %d)", name,
                               i, (int)v[i], limit);
        if (i > 0 && v[i] <= v[i - 1])
            return sim_err_set(err, SIM_EINVAL,
                               "region_sums: %ss[%d] = %d after %ss[%d] = %d (strictly increasing)",
                               name, i, (int)v[i], name, i - 1, (int)v[i - 1]);
    }
    return SIM_OK;
}

int sim_region_sums(sim *s, const int32_t *xs, int nx, const int32_t *ys, int ny, int64_t *out)
{
    int rc = check_axis(xs, nx, s->sc.width, "x", &s->err);
    if (rc == SIM_OK)
        rc = check_axis(ys, ny, s->sc.height, "y", &s->err);
    if (rc != SIM_OK)
        return rc;
    if (!out)
        return sim_err_set(&s->err, SIM_EINVAL, "region_sums: NULL output");
    return s->ops->region_sums(s->impl, xs, nx, ys, ny, out, &s->err);
}

int sim_read_cells(sim *s, const uint32_t *cells, int64_t n, float *values, int64_t *agents)
{
    if (n < 0 || (n > 0 && (!cells || !values || !agents)))
        return sim_err_set(&s->err, SIM_EINVAL, "read_cells: %lld cells%s (n >= 0, arrays not "
                           "NULL)", (long long)n, n < 0 ? "" : " with a NULL array");
    const int64_t limit = (int64_t)s->sc.width * s->sc.height;
    for (int64_t i = 0; i < n; i++)
        if ((int64_t)cells[i] >= limit)
            return sim_err_set(&s->err, SIM_EINVAL, "read_cells: cells[%lld] = %u outside "
                               "[0, %lld) (%dx%d world)", (long long)i, cells[i],
                               (long long)limit, s->sc.width, s->sc.height);
    return n > 0 ? s->ops->read_cells(s->impl, cells, n, values, agents, &s->err) : SIM_OK;
}

int sim_agent_cells(sim *s, const int64_t *ids, int64_t n, uint32_t *cells)
{
    if (n < 0 || (n > 0 && (!ids || !cells)))
        return sim_err_set(&s->err, SIM_EINVAL, "agent_cells: %lld ids%s (n >= 0, arrays not "
                           "NULL)", (long long)n, n < 0 ? "" : " with a NULL array");
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= s->n_agents)
            return sim_err_set(&s->err, SIM_EINVAL, "agent_cells: ids[%lld] = %lld outside "
                               "[0, %lld) (the agents)", (long long)i, (long long)ids[i],
                               (long long)s->n_agents);
    return n > 0 ? s->ops->agent_cells(s->impl, ids, n, cells, &s->err) : SIM_OK;
}

/* The view checks that hold for every backend, so that both refuse the same views (the CUDA
 * compose op has limits of its own, e.g. a side of at most 65535 pixels). A NaN or infinite
 * origin or scale would make sim_view_sample convert a non-finite double to int. */
static int check_view(const sim_view *v, sim_err *err)
{
    if (v->layer != SIM_LAYER_FIELD_AGENTS && v->layer != SIM_LAYER_FIELD &&
        v->layer != SIM_LAYER_AGENTS)
        return sim_err_set(err, SIM_EINVAL,
                           "compose: layer %d is not a layer of the state (allowed %d..%d)",
                           v->layer, SIM_LAYER_FIELD_AGENTS, SIM_LAYER_AGENTS);
    if (v->w < 1 || v->h < 1)
        return sim_err_set(err, SIM_EINVAL, "compose: image size %dx%d (each side >= 1)", v->w,
                           v->h);
    if (!(v->scale > 0.0) || !isfinite(v->scale) || !isfinite(v->x0) || !isfinite(v->y0))
        return sim_err_set(err, SIM_EINVAL,
                           "compose: view origin (%g, %g), scale %g (finite, scale > 0)", v->x0,
                           v->y0, v->scale);
    return SIM_OK;
}

/* Allocates the host copy on the first call (all three or none). */
static int host_copy(sim *s)
{
    if (s->h_field && s->n_agents > s->h_agents_cap) {
        int64_t cap = s->n_agents * 2;
        uint32_t *a = sim_realloc(s->h_agents, (size_t)cap * sizeof *a);
        if (!a)
            return sim_err_set(&s->err, SIM_ENOMEM, "compose: out of memory for %lld agents",
                               (long long)cap);
        s->h_agents = a;
        s->h_agents_cap = cap;
    }
    if (s->h_field)
        return SIM_OK;
    s->h_agents_cap = s->n_agents > 0 ? s->n_agents : 1;
    size_t cells = (size_t)s->sc.width * (size_t)s->sc.height;
    s->h_field = sim_malloc_array(cells, sizeof *s->h_field);
    s->h_agents = sim_malloc_array((size_t)(s->n_agents > 0 ? s->n_agents : 1),
                                   sizeof *s->h_agents);
    s->h_occ = sim_malloc(cells);
    if (s->h_field && s->h_agents && s->h_occ)
        return SIM_OK;
    sim_free(s->h_field);
    sim_free(s->h_agents);
    sim_free(s->h_occ);
    s->h_field = NULL;
    s->h_agents = NULL;
    s->h_occ = NULL;
    return sim_err_set(&s->err, SIM_ENOMEM, "compose: out of memory for a host copy of the %dx%d "
                       "world", s->sc.width, s->sc.height);
}

int sim_compose(sim *s, const sim_view *view, uint8_t *rgba)
{
    int rc = check_view(view, &s->err);
    if (rc != SIM_OK)
        return rc;
    if (s->ops->compose)
        return s->ops->compose(s->impl, view, rgba, &s->err);
    if ((rc = host_copy(s)) != SIM_OK)
        return rc;
    int64_t cells = (int64_t)s->sc.width * s->sc.height;
    if (s->engine && s->model.n_species > 1) {
        /* each species in its colour */
        if ((rc = s->ops->read_field(s->impl, s->h_field, &s->err)) != SIM_OK ||
            (rc = sim_read_occupancy(s, s->h_occ)) != SIM_OK)
            return rc;
        float fmax = view->range_max <= 0.0f ? sim_view_field_max(s->h_field, cells) : 0.0f;
        sim_view_compose(view, s->h_field, s->sc.width, s->sc.height, s->h_occ, fmax, rgba);
        return SIM_OK;
    }
    if ((rc = s->ops->read_field(s->impl, s->h_field, &s->err)) != SIM_OK)
        return rc;
    if ((rc = s->ops->read_agents(s->impl, s->h_agents, &s->err)) != SIM_OK)
        return rc;
    sim_view_occupancy(s->h_agents, s->n_agents, s->h_occ, cells);
    /* The field max only matters to an automatic range (sim_view_inv ignores it otherwise): no
     * pass over the field for a fixed one. */
    float field_max = view->range_max <= 0.0f ? sim_view_field_max(s->h_field, cells) : 0.0f;
    sim_view_compose(view, s->h_field, s->sc.width, s->sc.height, s->h_occ, field_max, rgba);
    return SIM_OK;
}

int sim_compose_in_backend(const sim *s) { return s->ops->compose != NULL; }

/* The shorthand run-time key of a that b changes although a's named sections replace it (the
 * model ignores it), or NULL. */
static const char *shadowed_change(const sim_scenario *a, const sim_scenario *b)
{
    if (a->n_species > 0) {
        if (memcmp(&a->noise, &b->noise, sizeof a->noise) != 0)
            return "agents.noise";
        if (memcmp(&a->deposit, &b->deposit, sizeof a->deposit) != 0)
            return "agents.deposit";
        if (a->radius != b->radius)
            return "agents.radius";
    }
    if (a->n_fields > 0) {
        if (memcmp(&a->diffusion, &b->diffusion, sizeof a->diffusion) != 0)
            return "field.diffusion";
        if (a->sweeps != b->sweeps)
            return "field.sweeps";
        if (memcmp(&a->decay, &b->decay, sizeof a->decay) != 0)
            return "field.decay";
    }
    return NULL;
}

/* The state is read out of the old instance and a new one is built from it with the new
 * scenario: the path of a checkpoint resume, so the bits after a change are those of a run
 * resumed with the new values (the random numbers depend only on seed, step and agent id). The
 * old instance goes only once the new one exists. */
int sim_set_params(sim *s, const sim_scenario *sc)
{
    char key[80];
    if (sim_scenario_diff(&s->sc, sc, SIM_KEYS_RUNTIME | SIM_KEYS_OUTPUT, key, sizeof key))
        return sim_err_set(&s->err, SIM_EINVAL, "%s: not a run-time parameter, it cannot change "
                           "while the simulation runs (allowed agents.noise|deposit|radius, "
                           "field.diffusion|sweeps|decay, species.NAME.noise|radius, "
                           "field.NAME.diffusion|sweeps|decay of the scenario's sections)", key);
    const char *shadowed = shadowed_change(&s->sc, sc);
    if (shadowed)
        return sim_err_set(&s->err, SIM_EINVAL, "%s: the scenario's named sections replace this "
                           "key, the model does not read it (change the %s.NAME key instead)",
                           shadowed, shadowed[0] == 'a' ? "species" : "field");
    int rc = sim_scenario_check_values(sc, SIM_KEYS_RUNTIME, "set params", &s->err);
    if (rc != SIM_OK)
        return rc;
    if (s->engine) {
        sim_state st;
        void *impl = NULL;
        if ((rc = sim_read_state(s, &st)) != SIM_OK)
            return rc;
        rc = s->ops->create_state(sc, &st, s->threads, &impl, &s->err);
        sim_state_free(&st);
        if (rc != SIM_OK)
            return rc;
        s->ops->destroy(s->impl);
        s->impl = impl;
        s->sc = *sc;
        /* from the copy: the model's map paths point into the scenario it was built from */
        return sim_model_build(&s->sc, &s->model, &s->err);
    }
    size_t cells = (size_t)s->sc.width * (size_t)s->sc.height;
    float *field = sim_malloc_array(cells, sizeof *field);
    uint32_t *agents = sim_malloc_array((size_t)(s->n_agents > 0 ? s->n_agents : 1),
                                        sizeof *agents);
    void *impl = NULL;
    if (!field || !agents) {
        rc = sim_err_set(&s->err, SIM_ENOMEM, "set params: out of memory for a host copy of "
                         "the %dx%d world", s->sc.width, s->sc.height);
        goto done;
    }
    if ((rc = s->ops->read_field(s->impl, field, &s->err)) != SIM_OK ||
        (rc = s->ops->read_agents(s->impl, agents, &s->err)) != SIM_OK ||
        (rc = s->ops->create(sc, field, agents, s->n_agents, s->threads, &impl, &s->err)) !=
            SIM_OK)
        goto done;
    s->ops->destroy(s->impl);
    s->impl = impl;
    s->sc = *sc;
done:
    sim_free(field);
    sim_free(agents);
    return rc;
}

int sim_read_state(sim *s, sim_state *st)
{
    int rc = sim_state_alloc(&s->model, s->n_agents, st, &s->err);
    if (rc != SIM_OK)
        return rc;
    if (s->engine) {
        rc = s->ops->read_state(s->impl, st, &s->err);
    } else {
        rc = s->ops->read_field(s->impl, st->field[0], &s->err);
        if (rc == SIM_OK)
            rc = s->ops->read_agents(s->impl, st->cell, &s->err);
        for (int64_t i = 0; i < s->n_agents; i++)
            st->id[i] = (uint32_t)i;
        st->n = s->n_agents;
        st->next_id = (uint32_t)s->n_agents;
    }
    if (rc != SIM_OK)
        sim_state_free(st);
    return rc;
}

int sim_read_occupancy(sim *s, uint8_t *occ)
{
    int64_t cells = (int64_t)s->sc.width * s->sc.height;
    if (!(s->engine && s->model.n_species > 1)) {
        uint32_t *cellv = sim_malloc_array((size_t)(s->n_agents > 0 ? s->n_agents : 1),
                                           sizeof *cellv);
        if (!cellv)
            return sim_err_set(&s->err, SIM_ENOMEM, "occupancy: out of memory");
        int rc = s->ops->read_agents(s->impl, cellv, &s->err);
        if (rc == SIM_OK)
            sim_view_occupancy(cellv, s->n_agents, occ, cells);
        sim_free(cellv);
        return rc;
    }
    sim_state st;
    int rc = sim_read_state(s, &st);
    if (rc != SIM_OK)
        return rc;
    memset(occ, 0, (size_t)cells);
    for (int64_t i = 0; i < st.n; i++)
        occ[st.cell[i]] = sim_view_species_code(st.species[i]);
    sim_state_free(&st);
    return SIM_OK;
}

const sim_model *sim_get_model(const sim *s) { return &s->model; }

int64_t sim_steps_done(const sim *s) { return s->step; }
int64_t sim_agent_count(const sim *s) { return s->n_agents; }
const sim_scenario *sim_get_scenario(const sim *s) { return &s->sc; }
const sim_backend_ops *sim_get_backend(const sim *s) { return s->ops; }

int sim_pin_host(const sim_backend_ops *ops, void *p, size_t bytes)
{
    return ops && ops->pin_host && p && bytes > 0 ? ops->pin_host(p, bytes) != 0 : 0;
}

void sim_unpin_host(const sim_backend_ops *ops, void *p)
{
    if (ops && ops->unpin_host && p)
        ops->unpin_host(p);
}
void *sim_get_backend_state(sim *s) { return s->impl; }
int sim_threads(const sim *s) { return s->threads; }
const char *sim_errmsg(const sim *s) { return s->err.msg; }
