/* sim_model.c - resolving a scenario's model, and the initial state of a model world. */
#include "sim_model.h"

#include <math.h>
#include <stdio.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_backend.h"
#include "sim_map.h"
#include "sim_rules.h"
#include "sim_world.h"

/* ---- Lists: "NAME:number, NAME:number" ---- */

/* Splits the next entry off *p: the name into name (SIM_NAME_MAX + 4 bytes, room for "occ."),
 * the number's text into num. Entries are separated by commas and/or blanks. 0 at the end of
 * the list, -1 for an entry without ':' or with an over-long part. */
static int next_entry(const char **p, char *name, char *num)
{
    const char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == ',')
        s++;
    if (*s == '\0')
        return 0;
    const char *colon = s;
    while (*colon && *colon != ':' && *colon != ',' && *colon != ' ')
        colon++;
    if (*colon != ':' || colon == s || (size_t)(colon - s) >= SIM_NAME_MAX + 4)
        return -1;
    memcpy(name, s, (size_t)(colon - s));
    name[colon - s] = '\0';
    const char *e = colon + 1;
    while (*e && *e != ',' && *e != ' ' && *e != '\t')
        e++;
    if (e == colon + 1 || (size_t)(e - colon - 1) >= 32)
        return -1;
    memcpy(num, colon + 1, (size_t)(e - colon - 1));
    num[e - colon - 1] = '\0';
    *p = e;
    return 1;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

static int find_name(const char names[][SIM_NAME_MAX], int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0)
            return i;
    return -1;
}

/* "grass, scent" into buf: the names a message offers. */
static const char *name_list(const char names[][SIM_NAME_MAX], int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "", names[i]);
    return buf;
}

typedef struct list_ctx {
    const sim_model *m;
    const char *key; /* "species.prey.sense" */
    sim_err *err;
} list_ctx;

static int list_error(const list_ctx *c, const char *what, const char *entry)
{
    return sim_err_set(c->err, SIM_EINVAL, "%s: %s '%s'", c->key, what, entry);
}

static int field_index(const list_ctx *c, const char *name, int *out)
{
    char names[160];
    *out = find_name(c->m->field_name, c->m->n_fields, name);
    if (*out < 0)
        return sim_err_set(c->err, SIM_EINVAL, "%s: unknown field '%s' (fields: %s)", c->key,
                           name, name_list(c->m->field_name, c->m->n_fields, names, sizeof names));
    return SIM_OK;
}

static int species_index(const list_ctx *c, const char *name, int *out)
{
    char names[160];
    *out = find_name(c->m->species_name, c->m->n_species, name);
    if (*out < 0)
        return sim_err_set(c->err, SIM_EINVAL, "%s: unknown species '%s' (species: %s)", c->key,
                           name, name_list(c->m->species_name, c->m->n_species, names,
                                           sizeof names));
    return SIM_OK;
}

static int parse_sense(const list_ctx *c, const char *text, sim_model_species *sp)
{
    char name[SIM_NAME_MAX + 4], num[32];
    int rc;
    const char *p = text;
    while ((rc = next_entry(&p, name, num)) != 0) {
        if (rc < 0)
            return list_error(c, "bad entry (expected FIELD:weight or occ.SPECIES:weight) in", text);
        double w;
        if (!parse_double(num, &w) || w != floor(w) || w == 0 || fabs(w) > SIM_SENSE_WEIGHT_MAX)
            return sim_err_set(c->err, SIM_EINVAL, "%s: weight '%s' of %s (allowed a non-zero "
                               "integer in -%d .. %d)", c->key, num, name, SIM_SENSE_WEIGHT_MAX,
                               SIM_SENSE_WEIGHT_MAX);
        if (sp->n_sense >= SIM_MAX_TERMS)
            return sim_err_set(c->err, SIM_EINVAL, "%s: too many terms (allowed at most %d)",
                               c->key, SIM_MAX_TERMS);
        int src;
        if (strncmp(name, "occ.", 4) == 0) {
            if (species_index(c, name + 4, &src) != SIM_OK)
                return SIM_EINVAL;
            src += SIM_SRC_OCC;
        } else if (field_index(c, name, &src) != SIM_OK) {
            return SIM_EINVAL;
        }
        for (int i = 0; i < sp->n_sense; i++)
            if (sp->sense[i].src == src)
                return list_error(c, "source given twice:", name);
        sp->sense[sp->n_sense].src = src;
        sp->sense[sp->n_sense].weight = (int32_t)w;
        sp->n_sense++;
    }
    return SIM_OK;
}

static int parse_deposit(const list_ctx *c, const char *text, sim_model_species *sp)
{
    char name[SIM_NAME_MAX + 4], num[32];
    int rc;
    const char *p = text;
    while ((rc = next_entry(&p, name, num)) != 0) {
        if (rc < 0)
            return list_error(c, "bad entry (expected FIELD:amount) in", text);
        double a;
        if (!parse_double(num, &a) || fabs(a) > 1e6)
            return sim_err_set(c->err, SIM_EINVAL, "%s: amount '%s' of %s (allowed -1e6 .. 1e6)",
                               c->key, num, name);
        int f;
        if (field_index(c, name, &f) != SIM_OK)
            return SIM_EINVAL;
        for (int i = 0; i < sp->n_deposit; i++)
            if (sp->deposit_field[i] == f)
                return list_error(c, "field given twice:", name);
        sp->deposit_field[sp->n_deposit] = f;
        sp->deposit_amount[sp->n_deposit] = (float)a;
        sp->n_deposit++;
    }
    return SIM_OK;
}

static int parse_uptake(const list_ctx *c, const char *text, sim_model_species *sp)
{
    char name[SIM_NAME_MAX + 4], num[32];
    const char *p = text;
    int rc = next_entry(&p, name, num);
    sp->uptake_field = -1;
    if (rc == 0)
        return SIM_OK;
    double a;
    char more_name[SIM_NAME_MAX + 4], more_num[32];
    if (rc < 0 || next_entry(&p, more_name, more_num) != 0)
        return list_error(c, "expected one FIELD:amount, got", text);
    if (!parse_double(num, &a) || a <= 0 || a > 1e6)
        return sim_err_set(c->err, SIM_EINVAL, "%s: amount '%s' (allowed > 0 .. 1e6)", c->key,
                           num);
    if (field_index(c, name, &sp->uptake_field) != SIM_OK)
        return SIM_EINVAL;
    sp->uptake = (float)a;
    return SIM_OK;
}

static int parse_eats(const list_ctx *c, const char *text, int self, sim_model_species *sp)
{
    char name[SIM_NAME_MAX + 4], num[32];
    int rc;
    const char *p = text;
    while ((rc = next_entry(&p, name, num)) != 0) {
        if (rc < 0)
            return list_error(c, "bad entry (expected SPECIES:gain) in", text);
        double g;
        if (!parse_double(num, &g) || g < 0 || g > 1e6)
            return sim_err_set(c->err, SIM_EINVAL, "%s: gain '%s' of %s (allowed 0 .. 1e6)",
                               c->key, num, name);
        int s;
        if (species_index(c, name, &s) != SIM_OK)
            return SIM_EINVAL;
        if (s == self)
            return list_error(c, "a species cannot eat itself:", name);
        if (sp->eats & (1u << s))
            return list_error(c, "species given twice:", name);
        sp->eats |= 1u << s;
        sp->gain[s] = (float)g;
    }
    return SIM_OK;
}

static void shorthand_model(const sim_scenario *sc, sim_model *m)
{
    if (sc->n_fields == 0) {
        m->n_fields = 1;
        snprintf(m->field_name[0], SIM_NAME_MAX, "field");
        sim_model_field *f = &m->field[0];
        f->diffusion = sc->diffusion;
        f->decay = sc->decay;
        f->initial = sc->initial;
        f->init_noise = sc->init_noise;
        f->sweeps = sc->sweeps;
        f->map_scale = 1.0f;
        f->capacity = 1.0f;
        f->source_value = 1.0f;
    }
    if (sc->n_species == 0) {
        m->n_species = 1;
        snprintf(m->species_name[0], SIM_NAME_MAX, "agents");
        sim_model_species *sp = &m->species[0];
        sp->count = sim_scenario_agent_count(sc);
        sp->placement = sc->placement;
        sp->radius = sc->radius;
        sp->noise = sc->noise;
        sp->n_sense = 1;
        sp->sense[0].src = 0;
        sp->sense[0].weight = 1;
        sp->n_deposit = 1;
        sp->deposit_field[0] = 0;
        sp->deposit_amount[0] = sc->deposit;
        sp->deposit_clamp = 0;
        sp->uptake_field = -1;
    }
}

int sim_model_build(const sim_scenario *sc, sim_model *m, sim_err *err)
{
    memset(m, 0, sizeof *m);
    m->width = sc->width;
    m->height = sc->height;
    m->periodic = sc->boundary == SIM_BOUNDARY_PERIODIC;
    m->named = sc->n_fields > 0 || sc->n_species > 0;
    m->walls = sc->walls[0] ? sc->walls : NULL;
    shorthand_model(sc, m);
    for (int f = 0; f < sc->n_fields; f++) {
        const sim_field_spec *fs = &sc->fields[f];
        sim_model_field *mf = &m->field[f];
        snprintf(m->field_name[f], SIM_NAME_MAX, "%s", fs->name);
        mf->diffusion = fs->diffusion;
        mf->decay = fs->decay;
        mf->initial = fs->initial;
        mf->init_noise = fs->init_noise;
        mf->sweeps = fs->sweeps;
        mf->map_scale = fs->map_scale;
        mf->growth = fs->growth;
        mf->capacity = fs->capacity;
        mf->source_value = fs->source_value;
        mf->map = fs->map[0] ? fs->map : NULL;
        mf->capacity_map = fs->capacity_map[0] ? fs->capacity_map : NULL;
        mf->sources = fs->sources[0] ? fs->sources : NULL;
    }
    if (sc->n_fields > 0)
        m->n_fields = sc->n_fields;
    for (int s = 0; s < sc->n_species; s++)
        snprintf(m->species_name[s], SIM_NAME_MAX, "%s", sc->species[s].name);
    if (sc->n_species > 0)
        m->n_species = sc->n_species;

    int64_t cells = (int64_t)sc->width * sc->height, total = 0;
    for (int s = 0; s < sc->n_species; s++) {
        const sim_species_spec *ss = &sc->species[s];
        sim_model_species *sp = &m->species[s];
        char key[SIM_NAME_MAX + 32];
        list_ctx c = {m, key, err};
        sp->count = ss->count >= 0 ? ss->count : (int64_t)floor(ss->density * (double)cells);
        sp->placement = ss->placement;
        sp->placement_map = ss->placement_map[0] ? ss->placement_map : NULL;
        sp->radius = ss->radius;
        sp->noise = ss->noise;
        sp->deposit_clamp = 1;
        sp->energy = ss->energy;
        sp->metabolism = ss->metabolism;
        sp->birth_energy = ss->birth_energy;
        if (ss->max_age > SIM_MAX_AGE_LIMIT)
            return sim_err_set(err, SIM_EINVAL, "species.%s.max_age: %lld (allowed 0 .. %d)",
                               ss->name, (long long)ss->max_age, SIM_MAX_AGE_LIMIT);
        sp->max_age = (int32_t)ss->max_age;
        snprintf(key, sizeof key, "species.%s.sense", ss->name);
        if (parse_sense(&c, ss->sense, sp) != SIM_OK)
            return SIM_EINVAL;
        snprintf(key, sizeof key, "species.%s.deposit", ss->name);
        if (parse_deposit(&c, ss->deposit, sp) != SIM_OK)
            return SIM_EINVAL;
        snprintf(key, sizeof key, "species.%s.uptake", ss->name);
        if (parse_uptake(&c, ss->uptake, sp) != SIM_OK)
            return SIM_EINVAL;
        snprintf(key, sizeof key, "species.%s.eats", ss->name);
        if (parse_eats(&c, ss->eats, s, sp) != SIM_OK)
            return SIM_EINVAL;
        sp->life = sp->metabolism > 0 || sp->max_age > 0 || sp->birth_energy > 0 ||
                   sp->uptake_field >= 0 || sp->eats != 0;
        if (sp->life && !(sp->energy > 0))
            return sim_err_set(err, SIM_EINVAL, "species.%s.energy: 0 with a life cycle (agents "
                               "would die at once; allowed > 0 .. 1e6)", ss->name);
        if (sp->placement == SIM_PLACE_MAP && !sp->placement_map)
            return sim_err_set(err, SIM_EINVAL, "species.%s.placement: map without "
                               "species.%s.placement_map", ss->name, ss->name);
        if (sp->placement != SIM_PLACE_MAP && sp->placement_map)
            return sim_err_set(err, SIM_EINVAL, "species.%s.placement_map: given, but placement "
                               "is %s (set placement = map)", ss->name,
                               sim_placement_name(sp->placement));
    }
    for (int s = 0; s < m->n_species; s++) {
        m->species[s].threshold = sim_noise_threshold(m->species[s].noise);
        if (m->species[s].count > cells - total)
            return sim_err_set(err, SIM_EINVAL, "species.%s: %lld agents do not fit (%lld cells, "
                               "%lld taken by the species before it)", m->species_name[s],
                               (long long)m->species[s].count, (long long)cells,
                               (long long)total);
        total += m->species[s].count;
        if (m->species[s].life)
            m->extended = 1;
    }
    if (m->n_species > 1)
        m->extended = 1;
    m->agents = total;
    if (sc->output_field[0]) {
        char names[160];
        m->output_field = find_name(m->field_name, m->n_fields, sc->output_field);
        if (m->output_field < 0)
            return sim_err_set(err, SIM_EINVAL, "output.field: unknown field '%s' (fields: %s)",
                               sc->output_field,
                               name_list(m->field_name, m->n_fields, names, sizeof names));
    }
    for (int f = 0; f < m->n_fields; f++)
        if (m->field[f].growth > 0 && m->field[f].capacity_map == NULL &&
            !(m->field[f].capacity > 0))
            return sim_err_set(err, SIM_EINVAL, "field.%s.capacity: 0 with growth (nothing could "
                               "grow)", m->field_name[f]);
    const sim_model_field *f0 = &m->field[0];
    const sim_model_species *s0 = &m->species[0];
    /* a model with named sections is never plain: the single-model backends read the
     * shorthand keys, which its sections replace */
    m->plain = !m->named && m->n_fields == 1 && m->n_species == 1 && !m->walls && !f0->map &&
               !f0->capacity_map && !f0->sources && f0->growth == 0 && !s0->life &&
               s0->placement != SIM_PLACE_MAP && s0->n_sense == 1 && s0->sense[0].src == 0 &&
               s0->sense[0].weight == 1 && s0->n_deposit == 1 && s0->deposit_field[0] == 0 &&
               (s0->deposit_clamp == 0 || s0->deposit_amount[0] >= 0) && f0->map_scale == 1.0f;
    return SIM_OK;
}

int sim_model_check(const sim_scenario *sc, sim_err *err)
{
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return sim_err_set(err, SIM_ENOMEM, "out of memory checking the model");
    int rc = sim_model_build(sc, m, err);
    sim_free(m);
    return rc;
}

int sim_model_is_plain(const sim_scenario *sc)
{
    sim_model *m = sim_malloc(sizeof *m);
    if (!m)
        return 0;
    int plain = sim_model_build(sc, m, NULL) == SIM_OK && m->plain;
    sim_free(m);
    return plain;
}

/* ---- State ---- */

void sim_state_free(sim_state *st)
{
    if (!st)
        return;
    for (int f = 0; f < SIM_MAX_FIELDS; f++) {
        sim_free(st->field[f]);
        sim_free(st->capacity[f]);
        sim_free(st->sources[f]);
    }
    sim_free(st->cell);
    sim_free(st->id);
    sim_free(st->species);
    sim_free(st->energy);
    sim_free(st->age);
    sim_free(st->walls);
    memset(st, 0, sizeof *st);
}

int sim_state_alloc(const sim_model *m, int64_t cap, sim_state *st, sim_err *err)
{
    memset(st, 0, sizeof *st);
    size_t cells = (size_t)m->width * (size_t)m->height, n = (size_t)(cap > 0 ? cap : 1);
    st->n_fields = m->n_fields;
    st->cells = (int64_t)cells;
    st->cap = cap;
    int ok = 1;
    for (int f = 0; f < m->n_fields; f++) {
        st->field[f] = sim_calloc(cells, sizeof(float));
        ok = ok && st->field[f];
        if (m->field[f].growth > 0) {
            st->capacity[f] = sim_calloc(cells, sizeof(float));
            ok = ok && st->capacity[f];
        }
        if (m->field[f].sources) {
            st->sources[f] = sim_calloc(cells, 1);
            ok = ok && st->sources[f];
        }
    }
    if (m->walls) {
        st->walls = sim_calloc(cells, 1);
        ok = ok && st->walls;
    }
    st->cell = sim_calloc(n, sizeof *st->cell);
    st->id = sim_calloc(n, sizeof *st->id);
    st->species = sim_calloc(n, sizeof *st->species);
    st->energy = sim_calloc(n, sizeof *st->energy);
    st->age = sim_calloc(n, sizeof *st->age);
    if (!ok || !st->cell || !st->id || !st->species || !st->energy || !st->age) {
        sim_state_free(st);
        return sim_err_set(err, SIM_ENOMEM, "out of memory for the state of a %dx%d world with "
                           "%d fields and room for %lld agents", m->width, m->height,
                           m->n_fields, (long long)cap);
    }
    return SIM_OK;
}

/* A map that cannot be read is bad input, like a scenario file that cannot: SIM_EINVAL (exit 2)
 * rather than the I/O status an output failure gets. */
static int map_rc(int rc)
{
    return rc == SIM_EIO ? SIM_EINVAL : rc;
}

int sim_model_load_maps(const sim_scenario *sc, const sim_model *m, sim_state *st,
                        sim_err *err)
{
    const int w = m->width, h = m->height, rs = sc->map_resample;
    int64_t cells = (int64_t)w * h;
    float *tmp = NULL;
    int rc = SIM_OK;
    if (m->walls) {
        rc = map_rc(sim_map_load_mask(m->walls, "world.walls", w, h, rs, st->walls, err));
        if (rc != SIM_OK)
            return rc;
    }
    for (int f = 0; f < m->n_fields && rc == SIM_OK; f++) {
        const sim_model_field *mf = &m->field[f];
        char what[SIM_NAME_MAX + 32];
        if (mf->sources) {
            snprintf(what, sizeof what, "field.%s.sources", m->field_name[f]);
            rc = map_rc(sim_map_load_mask(mf->sources, what, w, h, rs, st->sources[f], err));
        }
        if (rc == SIM_OK && st->capacity[f]) {
            if (mf->capacity_map) {
                if (!tmp && !(tmp = sim_malloc_array((size_t)cells, sizeof *tmp))) {
                    rc = sim_err_set(err, SIM_ENOMEM, "out of memory reading maps");
                    break;
                }
                snprintf(what, sizeof what, "field.%s.capacity_map", m->field_name[f]);
                rc = map_rc(sim_map_load(mf->capacity_map, what, w, h, rs, tmp, err));
                for (int64_t i = 0; rc == SIM_OK && i < cells; i++)
                    st->capacity[f][i] = SIM_FMUL(mf->capacity, tmp[i]);
            } else {
                for (int64_t i = 0; i < cells; i++)
                    st->capacity[f][i] = mf->capacity;
            }
        }
    }
    sim_free(tmp);
    return rc;
}

/* The fields' initial values: initial, plus map_scale times the map, plus noise; walls 0,
 * sources their value. */
static int init_fields(const sim_scenario *sc, const sim_model *m, int threads, sim_state *st,
                       sim_err *err)
{
    const int64_t cells = st->cells;
    int team = threads > 0 ? threads : omp_get_max_threads();
    float *map = NULL;
    for (int f = 0; f < m->n_fields; f++) {
        const sim_model_field *mf = &m->field[f];
        if (mf->map) {
            char what[SIM_NAME_MAX + 16];
            snprintf(what, sizeof what, "field.%s.map", m->field_name[f]);
            if (!map && !(map = sim_malloc_array((size_t)cells, sizeof *map)))
                return sim_err_set(err, SIM_ENOMEM, "out of memory reading %s", what);
            int rc = map_rc(sim_map_load(mf->map, what, m->width, m->height, sc->map_resample,
                                         map, err));
            if (rc != SIM_OK) {
                sim_free(map);
                return rc;
            }
        }
        float *out = st->field[f];
        const uint8_t *walls = st->walls, *src = st->sources[f];
        const float *fmap = mf->map ? map : NULL;
#pragma omp parallel for schedule(static) num_threads(team)
        for (int64_t i = 0; i < cells; i++) {
            float v = mf->initial;
            if (fmap)
                v = v + SIM_FMUL(mf->map_scale, fmap[i]);
            if (mf->init_noise > 0.0f) {
                sim_u32x4 r = sim_random(sc->seed, (uint64_t)i, (uint32_t)f, SIM_RNG_FIELD);
                v = v + sim_world_unit24(r.v[0]) * mf->init_noise;
            }
            if (src && src[i])
                v = mf->source_value;
            if (walls && walls[i])
                v = 0.0f;
            out[i] = v;
        }
    }
    sim_free(map);
    return SIM_OK;
}

/* Places species s: its candidate cells (free: no wall, no agent of an earlier species) in cell
 * order, then a partial Fisher-Yates shuffle by Philox (seed, i, s, SIM_RNG_PLACE); the first
 * `count` become its agents. */
static int place_species(const sim_scenario *sc, const sim_model *m, int s, int threads,
                         uint8_t *taken, uint32_t *cand, sim_state *st, sim_err *err)
{
    const sim_model_species *sp = &m->species[s];
    const int w = m->width, h = m->height;
    const int64_t cells = st->cells, n = sp->count;
    int64_t n_cand = 0;
    if (sp->placement == SIM_PLACE_MAP) {
        char what[SIM_NAME_MAX + 32];
        snprintf(what, sizeof what, "species.%s.placement_map", m->species_name[s]);
        uint8_t *mask = sim_malloc_array((size_t)cells, 1);
        if (!mask)
            return sim_err_set(err, SIM_ENOMEM, "out of memory reading %s", what);
        int rc = map_rc(sim_map_load_mask(sp->placement_map, what, w, h, sc->map_resample, mask,
                                          err));
        for (int64_t i = 0; rc == SIM_OK && i < cells; i++)
            if (mask[i] && !taken[i])
                cand[n_cand++] = (uint32_t)i;
        sim_free(mask);
        if (rc != SIM_OK)
            return rc;
        if (n_cand < n)
            return sim_err_set(err, SIM_EINVAL, "%s: %lld free cells for %lld agents of "
                               "species %s", what, (long long)n_cand, (long long)n,
                               m->species_name[s]);
    } else if (sp->placement == SIM_PLACE_CENTER) {
        double radius = sqrt((double)n * 2.0 / 3.14159265358979);
        double cx = (w - 1) * 0.5, cy = (h - 1) * 0.5;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++) {
                double dx = x - cx, dy = y - cy;
                int64_t i = (int64_t)y * w + x;
                if (dx * dx + dy * dy <= radius * radius && !taken[i])
                    cand[n_cand++] = (uint32_t)i;
            }
    }
    if (n_cand < n) {
        n_cand = 0;
        for (int64_t i = 0; i < cells; i++)
            if (!taken[i])
                cand[n_cand++] = (uint32_t)i;
    }
    if (n_cand < n)
        return sim_err_set(err, SIM_EINVAL, "species.%s: %lld agents do not fit in the %lld "
                           "free cells", m->species_name[s], (long long)n, (long long)n_cand);
    sim_world_shuffle(sc->seed, (uint32_t)s, cand, n_cand, n, threads);
    for (int64_t i = 0; i < n; i++) {
        int64_t a = st->n++;
        st->cell[a] = cand[i];
        st->id[a] = (uint32_t)a;
        st->species[a] = (uint8_t)s;
        st->energy[a] = sp->life ? sp->energy : 0.0f;
        st->age[a] = 0;
        taken[st->cell[a]] = 1;
    }
    return SIM_OK;
}

int sim_model_world_init(const sim_scenario *sc, const sim_model *m_in, int threads,
                         sim_state *st, sim_err *err)
{
    sim_model m = *m_in;
    int rc = sim_state_alloc(&m, m.agents, st, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_model_load_maps(sc, &m, st, err);
    if (rc == SIM_OK)
        rc = init_fields(sc, &m, threads, st, err);
    if (rc != SIM_OK) {
        sim_state_free(st);
        return rc;
    }
    /* Densities count the cells that are not walls. */
    int64_t open = st->cells;
    if (st->walls) {
        open = 0;
        for (int64_t i = 0; i < st->cells; i++)
            open += !st->walls[i];
    }
    int64_t total = 0;
    for (int s = 0; s < m.n_species; s++) {
        const sim_species_spec *ss = s < sc->n_species ? &sc->species[s] : NULL;
        if (ss && ss->count < 0)
            m.species[s].count = (int64_t)floor(ss->density * (double)open);
        total += m.species[s].count;
    }
    if (total > st->cap) {
        sim_state_free(st);
        rc = sim_state_alloc(&m, total, st, err);
        if (rc == SIM_OK)
            rc = sim_model_load_maps(sc, &m, st, err);
        if (rc == SIM_OK)
            rc = init_fields(sc, &m, threads, st, err);
        if (rc != SIM_OK) {
            sim_state_free(st);
            return rc;
        }
    }
    uint8_t *taken = sim_calloc((size_t)st->cells, 1);
    uint32_t *cand = sim_malloc_array((size_t)st->cells, sizeof *cand);
    if (!taken || !cand) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory placing %lld agents", (long long)total);
    } else {
        if (st->walls)
            memcpy(taken, st->walls, (size_t)st->cells);
        for (int s = 0; s < m.n_species && rc == SIM_OK; s++)
            rc = place_species(sc, &m, s, threads, taken, cand, st, err);
    }
    sim_free(taken);
    sim_free(cand);
    st->next_id = (uint32_t)st->n;
    if (rc != SIM_OK)
        sim_state_free(st);
    return rc;
}

int sim_state_check(const sim_model *m, const sim_state *st, sim_err *err)
{
    uint8_t *seen = sim_calloc((size_t)st->cells, 1);
    if (!seen)
        return sim_err_set(err, SIM_ENOMEM, "out of memory checking %lld agents",
                           (long long)st->n);
    int rc = SIM_OK;
    for (int64_t i = 0; i < st->n && rc == SIM_OK; i++) {
        uint32_t c = st->cell[i];
        if ((int64_t)c >= st->cells)
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u outside the %dx%d grid",
                             (long long)i, c, m->width, m->height);
        else if (seen[c]++)
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u already holds another agent",
                             (long long)i, c);
        else if (st->walls && st->walls[c])
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: cell %u is a wall", (long long)i, c);
        else if (st->species[i] >= m->n_species)
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: species %d of %d", (long long)i,
                             st->species[i], m->n_species);
        else if ((i > 0 && st->id[i] <= st->id[i - 1]) || st->id[i] >= st->next_id)
            rc = sim_err_set(err, SIM_EINVAL, "agent %lld: id %u out of order (ids must rise "
                             "and stay below %u)", (long long)i, st->id[i], st->next_id);
    }
    sim_free(seen);
    return rc;
}

int sim_mem_within(const sim_mem *e)
{
    return e->shared_per_cell <= SIM_MEM_SHARED_MAX && e->field_per_cell <= SIM_MEM_FIELD_MAX &&
           e->per_agent <= SIM_MEM_AGENT_MAX(e->life_attrs);
}

void sim_mem_describe(const sim_mem *e, char *buf, size_t len)
{
    snprintf(buf, len,
             "%.1f B/cell shared + %.1f B/cell per field x %d + %.1f B/cell of maps + %.1f "
             "B/agent + %.1f MiB other; bounds %.0f, %.0f, %.0f B/agent: %s",
             e->shared_per_cell, e->field_per_cell, e->n_fields, e->maps_per_cell, e->per_agent,
             (double)e->other / 1048576.0, SIM_MEM_SHARED_MAX, SIM_MEM_FIELD_MAX,
             SIM_MEM_AGENT_MAX(e->life_attrs), sim_mem_within(e) ? "within" : "OVER");
}
