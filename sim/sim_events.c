/* sim_events.c - the events file (format in sim_events.h): parsing with line-exact messages,
 * the check against a scenario, applying one step's events to a simulation, the writers, and
 * the table of run-time parameters with their panel steps, from which a scenario's list is
 * made (the shorthand's keys, or each named section's). Values of parameters go through the
 * scenario's own key parser (sim_scenario_set_key), so a file and a scenario accept the same
 * texts and store the same bits. */
#include "sim_events.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim_alloc.h"
#include "sim_text.h"

/* ---- the run-time parameters ---- */

enum { P_INT, P_FLOAT, P_DOUBLE };
enum { PK_AGENTS, PK_FIELD }; /* the kind of section a parameter belongs to */
#define NO_NAMED ((size_t)-1)

typedef struct param_def {
    int kind;         /* PK_AGENTS: [agents] or a [species.NAME]; PK_FIELD: [field] or a
                         [field.NAME] */
    const char *key;  /* "noise" */
    int type;
    size_t offset;    /* of the shorthand's value in sim_scenario */
    size_t named;     /* of a named section's in sim_species_spec / sim_field_spec; NO_NAMED:
                         the shorthand's only (a species' deposit is a list) */
    double step;      /* additive panel step; 0: multiplicative by PANEL_FACTOR */
    double from_zero; /* multiplicative: the value a step up from 0 gives (0: 0 is not allowed) */
} param_def;

#define PANEL_FACTOR 1.25
#define OFF(f) offsetof(sim_scenario, f)
#define SOFF(f) offsetof(sim_species_spec, f)
#define FOFF(f) offsetof(sim_field_spec, f)
/* The order within a section is the panel's and the list's; SIM_KEYS_RUNTIME in
 * sim_scenario.c names the same keys (test_events checks that they agree). */
static const param_def params[] = {
    {PK_AGENTS, "noise", P_DOUBLE, OFF(noise), SOFF(noise), 0.01, 0},
    {PK_AGENTS, "deposit", P_FLOAT, OFF(deposit), NO_NAMED, 0, 0.01},
    {PK_AGENTS, "radius", P_INT, OFF(radius), SOFF(radius), 1, 0},
    {PK_FIELD, "diffusion", P_FLOAT, OFF(diffusion), FOFF(diffusion), 0, 0},
    {PK_FIELD, "sweeps", P_INT, OFF(sweeps), FOFF(sweeps), 1, 0},
    {PK_FIELD, "decay", P_FLOAT, OFF(decay), FOFF(decay), 0, 0.001},
};
#define NPARAMS ((int)(sizeof params / sizeof params[0]))

static const char allowed_events[] =
    "agents.noise|agents.deposit|agents.radius|field.diffusion|field.sweeps|field.decay|"
    "species.NAME.noise|species.NAME.radius|field.NAME.diffusion|field.NAME.sweeps|"
    "field.NAME.decay|paint";

/* One entry of a scenario's list: its definition, its section and where its value lives. */
typedef struct param_ref {
    const param_def *def;
    char section[SIM_NAME_MAX + 16]; /* "agents", "species.sheep" */
    size_t offset;                   /* of the value, from the scenario's start */
} param_ref;

/* Walks sc's list: the species' keys ([agents]'s when it has no [species.NAME], else each
 * named one's in section order), then the fields' likewise. Fills *r with entry `want` when
 * there is one (r may be NULL) and returns the number of entries. */
static int walk(const sim_scenario *sc, int want, param_ref *r)
{
    int n = 0;
    for (int kind = PK_AGENTS; kind <= PK_FIELD; kind++) {
        int named = kind == PK_AGENTS ? sc->n_species : sc->n_fields;
        for (int slot = 0; slot < (named > 0 ? named : 1); slot++)
            for (int d = 0; d < NPARAMS; d++) {
                const param_def *p = &params[d];
                if (p->kind != kind || (named > 0 && p->named == NO_NAMED))
                    continue;
                if (n++ != want || !r)
                    continue;
                r->def = p;
                if (named == 0) {
                    snprintf(r->section, sizeof r->section, "%s",
                             kind == PK_AGENTS ? "agents" : "field");
                    r->offset = p->offset;
                } else if (kind == PK_AGENTS) {
                    snprintf(r->section, sizeof r->section, "species.%s",
                             sc->species[slot].name);
                    r->offset = OFF(species) + (size_t)slot * sizeof(sim_species_spec) + p->named;
                } else {
                    snprintf(r->section, sizeof r->section, "field.%s", sc->fields[slot].name);
                    r->offset = OFF(fields) + (size_t)slot * sizeof(sim_field_spec) + p->named;
                }
            }
    }
    return n;
}

/* Entry i of sc's list into *r; 0 for a bad i. */
static int resolve(const sim_scenario *sc, int i, param_ref *r)
{
    r->def = NULL;
    if (i >= 0)
        walk(sc, i, r);
    return r->def != NULL;
}

int sim_events_param_count(const sim_scenario *sc) { return walk(sc, -1, NULL); }

int sim_events_param_name(const sim_scenario *sc, int i, char *buf, size_t n)
{
    param_ref r;
    if (!resolve(sc, i, &r)) {
        if (n > 0)
            buf[0] = '\0';
        return -1;
    }
    return snprintf(buf, n, "%s.%s", r.section, r.def->key);
}

int sim_events_param_is_integer(const sim_scenario *sc, int i)
{
    param_ref r;
    return resolve(sc, i, &r) && r.def->type == P_INT;
}

int sim_events_param_find(const sim_scenario *sc, const char *name)
{
    char entry[SIM_EVENTS_KEY_MAX];
    for (int i = 0, n = sim_events_param_count(sc); i < n; i++)
        if (sim_events_param_name(sc, i, entry, sizeof entry) >= 0 && strcmp(entry, name) == 0)
            return i;
    return -1;
}

double sim_events_param_get(const sim_scenario *sc, int i)
{
    param_ref r;
    if (!resolve(sc, i, &r))
        return 0.0;
    const char *field = (const char *)sc + r.offset;
    switch (r.def->type) {
    case P_INT: return *(const int *)field;
    case P_FLOAT: return *(const float *)field;
    default: return *(const double *)field;
    }
}

int sim_events_param_format(const sim_scenario *sc, int i, char *buf, size_t n)
{
    param_ref r;
    if (!resolve(sc, i, &r))
        return -1;
    double v = sim_events_param_get(sc, i);
    /* %.9g reads back to the same float, %.17g to the same double */
    switch (r.def->type) {
    case P_INT: return snprintf(buf, n, "%d", (int)v);
    case P_FLOAT: return snprintf(buf, n, "%.9g", v);
    default: return snprintf(buf, n, "%.17g", v);
    }
}

/* Sets parameter i of sc from its text through the scenario's parser and range check (the
 * message reads as a scenario file's: "where: species.sheep.noise: out of range '2' (allowed
 * 0 .. 1)"). sc may be changed on failure (the shorthand flags): callers pass a copy. */
static int set_text(sim_scenario *sc, int i, const char *value, const char *where, sim_err *err)
{
    param_ref r;
    if (!resolve(sc, i, &r))
        return sim_err_set(err, SIM_EINVAL, "%s%sparameter %d: no such parameter (allowed 0 .. "
                           "%d)", where, *where ? ": " : "", i, sim_events_param_count(sc) - 1);
    return sim_scenario_set_key(sc, r.section, r.def->key, value, where, err);
}

int sim_events_param_set(sim_scenario *sc, int i, double v, const char *where, sim_err *err)
{
    /* %.17g reads back to v exactly, so the scenario's parser sees the very number: it rounds
     * it to a float once, and refuses a fraction for an integer key. */
    char text[64];
    snprintf(text, sizeof text, "%.17g", v);
    sim_scenario tmp = *sc;
    int rc = set_text(&tmp, i, text, where ? where : "", err);
    if (rc != SIM_OK) {
        if (!where && err && strncmp(err->msg, ": ", 2) == 0) /* drop the empty prefix's ": " */
            memmove(err->msg, err->msg + 2, strlen(err->msg + 2) + 1);
        return rc;
    }
    *sc = tmp;
    return SIM_OK;
}

double sim_events_param_nudge(const sim_scenario *sc, int i, int dir)
{
    param_ref r;
    if (!resolve(sc, i, &r))
        return 0.0;
    const param_def *p = r.def;
    double v = sim_events_param_get(sc, i), next;
    if (dir == 0)
        return v;
    double lo, hi;
    int lo_open;
    if (!sim_scenario_key_range(r.section, p->key, &lo, &hi, &lo_open))
        return v; /* every parameter is numeric: not reached */
    if (p->step > 0) {
        /* to the next multiple of the step in that direction (0.3 + 0.01 is 0.31, not
         * 0.31000000000000005); the inverse of 0.01 and 1 is exact */
        double inv = 1.0 / p->step, u = v * inv;
        next = (dir > 0 ? floor(u + 1e-9) + dir : ceil(u - 1e-9) + dir) / inv;
    } else if (v == 0.0) {
        next = dir > 0 ? p->from_zero : (lo < 0 ? -p->from_zero : 0.0);
    } else {
        /* up makes a positive value larger and a negative one nearer 0 */
        next = v * pow(PANEL_FACTOR, v > 0 ? dir : -dir);
        if (p->from_zero > 0 && fabs(next) < p->from_zero && fabs(next) < fabs(v))
            next = 0.0;
    }
    if (next > hi)
        next = hi;
    if (next < lo || (lo_open && next == lo))
        next = lo_open ? v : lo;
    return next;
}

/* ---- parsing ---- */

/* Trims blanks off both ends of [*s, *s + *n). */
static void trim(const char **s, size_t *n)
{
    while (*n > 0 && (**s == ' ' || **s == '\t')) {
        (*s)++;
        (*n)--;
    }
    while (*n > 0 && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
        (*n)--;
}

/* Copies [s, s + n) into buf as a string, or returns 0 when it does not fit. */
static int copy_field(char *buf, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return 1;
}

/* A decimal integer made of digits only (no sign, no blanks), at most `max`. */
static int parse_digits(const char *s, int64_t max, int64_t *out)
{
    if (*s == '\0')
        return 0;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return 0;
        if (v > (max - (*s - '0')) / 10)
            return 0;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 1;
}

/* Parses a paint value "X Y RADIUS AMOUNT" into ev (X and Y only >= 0 here: the world is not
 * known yet). */
static int parse_paint(const char *value, const char *where, sim_event *ev, sim_err *err)
{
    char tok[4][SIM_EVENTS_VALUE_MAX];
    int ntok = 0;
    const char *p = value;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0')
            break;
        size_t n = strcspn(p, " \t");
        if (ntok == 4 || !copy_field(tok[ntok], sizeof tok[ntok], p, n)) {
            ntok = 5;
            break;
        }
        ntok++;
        p += n;
    }
    if (ntok != 4)
        return sim_err_set(err, SIM_EINVAL, "%s: paint: '%.48s%s' is not X Y RADIUS AMOUNT "
                           "(allowed four fields separated by blanks: integers X, Y, RADIUS and "
                           "a number AMOUNT)", where, value, strlen(value) > 48 ? "..." : "");
    int64_t v[3];
    static const char *const what[3] = {"x", "y", "radius"};
    for (int i = 0; i < 3; i++) {
        int64_t max = i == 2 ? SIM_MAX_RADIUS : SIM_MAX_DIM - 1;
        if (!parse_digits(tok[i], max, &v[i]))
            return sim_err_set(err, SIM_EINVAL, "%s: paint: %s '%s' out of range (allowed 0 .. "
                               "%lld, an integer%s)", where, what[i], tok[i], (long long)max,
                               i == 2 ? "" : ", inside the world");
    }
    char *end;
    errno = 0;
    double a = strtod(tok[3], &end);
    /* read as the scenario reads a float key: the decimal to a double, then to a float */
    if (*end != '\0' || end == tok[3] || errno == ERANGE || !isfinite(a) || !isfinite((float)a))
        return sim_err_set(err, SIM_EINVAL, "%s: paint: amount '%s' is not a finite number "
                           "(allowed a finite number, at most %g in size)", where, tok[3],
                           3.4028234663852886e38);
    ev->x = (int)v[0];
    ev->y = (int)v[1];
    ev->radius = (int)v[2];
    ev->amount = (float)a;
    return SIM_OK;
}

/* The index of run-time key `key` in *tmp, a copy of the parse's scratch scenario (the run's
 * is not known yet) that has the key: the scratch's own shorthand keys, or, for
 * species.NAME.KEY and field.NAME.KEY with a valid NAME, the copy with that section added.
 * -1 when no scenario has such a parameter. */
static int scratch_param(const char *key, const sim_scenario *scratch, sim_scenario *tmp)
{
    *tmp = *scratch;
    int i = sim_events_param_find(tmp, key);
    const char *dot = strrchr(key, '.');
    if (i >= 0 || !dot)
        return i;
    char section[SIM_EVENTS_KEY_MAX];
    snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
    /* refuses a fixed section, a bad name and 'occ' */
    if (sim_scenario_add_section(tmp, section, "", NULL) != SIM_OK)
        return -1;
    return sim_events_param_find(tmp, key);
}

/* Parses one non-empty, non-comment line of the body into ev. */
static int parse_line(const char *s, size_t n, const char *where, sim_event *ev,
                      const sim_scenario *scratch, sim_err *err)
{
    const char *c1 = memchr(s, ',', n);
    const char *c2 = c1 ? memchr(c1 + 1, ',', (size_t)(s + n - c1 - 1)) : NULL;
    if (!c2)
        return sim_err_set(err, SIM_EINVAL, "%s: '%.*s%s' is not step,event,value (allowed three "
                           "fields separated by commas)", where, n > 48 ? 48 : (int)n, s,
                           n > 48 ? "..." : "");
    const char *fs = s, *fe = c1 + 1, *fv = c2 + 1;
    size_t ns = (size_t)(c1 - s), ne = (size_t)(c2 - c1 - 1), nv = (size_t)(s + n - fv);
    trim(&fs, &ns);
    trim(&fe, &ne);
    trim(&fv, &nv);
    char step[32];
    if (!copy_field(step, sizeof step, fs, ns) || !parse_digits(step, SIM_EVENTS_MAX_STEP,
                                                                &ev->step))
        return sim_err_set(err, SIM_EINVAL, "%s: step '%.*s%s' is not a step number (allowed "
                           "0 .. %lld, an integer)", where, ns > 24 ? 24 : (int)ns, fs,
                           ns > 24 ? "..." : "", (long long)SIM_EVENTS_MAX_STEP);
    sim_scenario tmp;
    int paint = ne == 5 && memcmp(fe, "paint", 5) == 0;
    int param = !paint && copy_field(ev->key, sizeof ev->key, fe, ne)
                    ? scratch_param(ev->key, scratch, &tmp)
                    : -1;
    if (param < 0 && !paint)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown event '%.*s%s' (allowed %s)", where,
                           ne > 48 ? 48 : (int)ne, fe, ne > 48 ? "..." : "", allowed_events);
    if (!copy_field(ev->value, sizeof ev->value, fv, nv))
        return sim_err_set(err, SIM_EINVAL, "%s: %.*s: value too long (allowed at most %d "
                           "characters)", where, (int)ne, fe, SIM_EVENTS_VALUE_MAX - 1);
    if (paint) {
        ev->kind = SIM_EVENT_PAINT;
        ev->key[0] = '\0';
        return parse_paint(ev->value, where, ev, err);
    }
    ev->kind = SIM_EVENT_SET;
    /* the scenario's parser and range check, on the copy: the message reads as a scenario
     * file's, "FILE:LINE: agents.noise: out of range '2' (allowed 0 .. 1)" */
    return set_text(&tmp, param, ev->value, where, err);
}

void sim_events_release(sim_events *e)
{
    if (!e)
        return;
    sim_free(e->ev);
    sim_free(e->text);
    memset(e, 0, sizeof *e);
}

int sim_events_parse_string(const char *text, const char *name, sim_events *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", name);
    size_t len = strlen(text), cap = 0;
    sim_scenario scratch;
    sim_scenario_defaults(&scratch);
    int rc = SIM_OK, line = 0;
    if (!(out->text = sim_malloc(len + 1))) {
        rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
        goto fail;
    }
    memcpy(out->text, text, len + 1);
    out->len = len;
    const char *p = text;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a UTF-8 byte order mark, as spreadsheets write it */
    while (*p || line == 0) {
        size_t n = strcspn(p, "\n");
        const char *s = p;
        p += n + (p[n] == '\n');
        line++;
        if (n > 0 && s[n - 1] == '\r')
            n--;
        char where[SIM_PATH_MAX + 32];
        snprintf(where, sizeof where, "%s:%d", name, line);
        if (line == 1) {
            if (n != strlen(SIM_EVENTS_HEADER) || memcmp(s, SIM_EVENTS_HEADER, n) != 0) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: header '%.*s%s' (allowed exactly "
                                 SIM_EVENTS_HEADER ")", where, n > 48 ? 48 : (int)n, s,
                                 n > 48 ? "..." : "");
                goto fail;
            }
            continue;
        }
        const char *t = s;
        size_t tn = n;
        trim(&t, &tn);
        if (tn == 0 || t[0] == '#')
            continue;
        if (out->n == cap) {
            size_t more = cap ? 2 * cap : 64;
            sim_event *bigger = sim_realloc(out->ev, more * sizeof *bigger);
            if (!bigger) {
                rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory for %zu events", name, more);
                goto fail;
            }
            out->ev = bigger;
            cap = more;
        }
        sim_event *ev = &out->ev[out->n];
        memset(ev, 0, sizeof *ev);
        ev->line = line;
        if ((rc = parse_line(s, n, where, ev, &scratch, err)) != SIM_OK)
            goto fail;
        if (out->n > 0 && ev->step < out->ev[out->n - 1].step) {
            const sim_event *prev = &out->ev[out->n - 1];
            rc = sim_err_set(err, SIM_EINVAL, "%s: step %" PRId64 " comes after step %" PRId64
                             " (line %d) (allowed steps that never decrease down the file)",
                             where, ev->step, prev->step, prev->line);
            goto fail;
        }
        out->n++;
    }
    return SIM_OK;
fail:
    sim_events_release(out);
    return rc;
}

int sim_events_load(const char *path, sim_events *out, sim_err *err)
{
    memset(out, 0, sizeof *out);
    char *text;
    int rc = sim_text_read(path, "events file", SIM_EVENTS_FILE_MAX, &text, NULL, err);
    if (rc != SIM_OK)
        return rc;
    rc = sim_events_parse_string(text, path, out, err);
    sim_free(text);
    return rc;
}

/* The sections of sc's run-time parameters, "species.sheep, species.wolves, field.grass", into
 * buf (n bytes). */
static void sections_text(const sim_scenario *sc, char *buf, size_t n)
{
    char last[SIM_NAME_MAX + 16] = "";
    size_t used = 0;
    param_ref r;
    buf[0] = '\0';
    /* a section's keys are next to each other in the list */
    for (int i = 0; resolve(sc, i, &r) && used < n; i++) {
        if (strcmp(r.section, last) == 0)
            continue;
        used += (size_t)snprintf(buf + used, n - used, "%s%s", used ? ", " : "", r.section);
        memcpy(last, r.section, sizeof last);
    }
}

/* Refuses a key with no parameter in sc: a named section sc lacks, or a shorthand key of a
 * model whose named sections stand in for that section (the model would ignore it). */
static int check_key(const sim_events *e, const sim_event *ev, const sim_scenario *sc,
                     sim_err *err)
{
    if (sim_events_param_find(sc, ev->key) >= 0)
        return SIM_OK;
    char have[(SIM_MAX_FIELDS + SIM_MAX_SPECIES) * (SIM_NAME_MAX + 16)];
    sections_text(sc, have, sizeof have);
    const char *dot = strrchr(ev->key, '.'); /* every parsed key has one */
    return sim_err_set(err, SIM_EINVAL, "%s:%d: %s: the scenario has no [%.*s] section (allowed "
                       "the keys of its sections %s)", e->name, ev->line, ev->key,
                       (int)(dot - ev->key), ev->key, have);
}

int sim_events_check(const sim_events *e, const sim_scenario *sc, sim_err *err)
{
    for (size_t i = 0; i < e->n; i++) {
        const sim_event *ev = &e->ev[i];
        if (ev->kind == SIM_EVENT_SET) {
            int rc = check_key(e, ev, sc, err);
            if (rc != SIM_OK)
                return rc;
            continue;
        }
        if (ev->x >= sc->width || ev->y >= sc->height)
            return sim_err_set(err, SIM_EINVAL, "%s:%d: paint: %s %d is outside the %dx%d world "
                               "(allowed 0 .. %d)", e->name, ev->line,
                               ev->x >= sc->width ? "x" : "y",
                               ev->x >= sc->width ? ev->x : ev->y, sc->width, sc->height,
                               (ev->x >= sc->width ? sc->width : sc->height) - 1);
    }
    return SIM_OK;
}

size_t sim_events_first_at(const sim_events *e, int64_t step)
{
    size_t lo = 0, hi = e->n; /* steps are sorted: the first at >= step by bisection */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (e->ev[mid].step < step)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t sim_events_count_from(const sim_events *e, int64_t step)
{
    return e->n - sim_events_first_at(e, step);
}

int sim_events_apply(const sim_events *e, size_t *next, sim *s, sim_err *err)
{
    const int64_t step = sim_steps_done(s);
    size_t i = *next, end = i;
    if (i >= e->n || e->ev[i].step > step)
        return SIM_OK;
    if (e->ev[i].step < step)
        return sim_err_set(err, SIM_EINVAL, "%s:%d: event at step %" PRId64 ", but the "
                           "simulation has done %" PRId64 " steps already (events apply in step "
                           "order)", e->name, e->ev[i].line, e->ev[i].step, step);
    while (end < e->n && e->ev[end].step == step)
        end++;
    /* The step's key changes, in file order, into one scenario: one new backend instance. */
    sim_scenario sc = *sim_get_scenario(s);
    int first_set = -1, rc;
    for (size_t j = i; j < end; j++) {
        const sim_event *ev = &e->ev[j];
        if (ev->kind != SIM_EVENT_SET)
            continue;
        char where[SIM_PATH_MAX + 32];
        snprintf(where, sizeof where, "%s:%d", e->name, ev->line);
        if ((rc = check_key(e, ev, &sc, err)) != SIM_OK ||
            (rc = set_text(&sc, sim_events_param_find(&sc, ev->key), ev->value, where, err)) !=
                SIM_OK)
            return rc;
        if (first_set < 0)
            first_set = ev->line;
    }
    char key[80];
    /* values that change nothing (a knob turned and back) need no new instance */
    if (first_set >= 0 &&
        sim_scenario_diff(sim_get_scenario(s), &sc, SIM_KEYS_OUTPUT | SIM_KEYS_FIXED, key,
                          sizeof key) &&
        (rc = sim_set_params(s, &sc)) != SIM_OK)
        return sim_err_set(err, rc, "%s:%d: %s", e->name, first_set, sim_errmsg(s));
    for (size_t j = i; j < end; j++) {
        const sim_event *ev = &e->ev[j];
        if (ev->kind != SIM_EVENT_PAINT)
            continue;
        if ((rc = sim_paint(s, ev->x, ev->y, ev->radius, ev->amount)) != SIM_OK) {
            *next = j;
            return sim_err_set(err, rc, "%s:%d: paint: %s", e->name, ev->line, sim_errmsg(s));
        }
    }
    *next = end;
    return SIM_OK;
}

/* ---- writing ---- */

void sim_events_write_header(FILE *f)
{
    fputs(SIM_EVENTS_HEADER "\n", f);
}

int sim_events_format_set(char *buf, size_t n, int64_t step, const char *key,
                          const sim_scenario *sc)
{
    char value[SIM_EVENTS_VALUE_MAX];
    if (step < 0 || sim_events_param_format(sc, sim_events_param_find(sc, key), value,
                                            sizeof value) < 0)
        return -1;
    return snprintf(buf, n, "%" PRId64 ",%s,%s\n", step, key, value);
}

int sim_events_format_paint(char *buf, size_t n, int64_t step, int x, int y, int radius,
                            float amount)
{
    if (step < 0)
        return -1;
    return snprintf(buf, n, "%" PRId64 ",paint,%d %d %d %.9g\n", step, x, y, radius,
                    (double)amount);
}
