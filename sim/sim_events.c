/* sim_events.c - the events file (format in sim_events.h): parsing with line-exact messages,
 * the check against a world, applying one step's events to a simulation, the writers, and the
 * table of run-time parameters with their panel steps. Values of parameters go through the
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

typedef struct param_def {
    const char *section, *key, *name;
    int type;
    size_t offset;
    double step;      /* additive panel step; 0: multiplicative by PANEL_FACTOR */
    double from_zero; /* multiplicative: the value a step up from 0 gives (0: 0 is not allowed) */
} param_def;

#define PANEL_FACTOR 1.25
#define OFF(f) offsetof(sim_scenario, f)
/* The order is the panel's and the index of the API; SIM_KEYS_RUNTIME in sim_scenario.c names
 * the same six keys (test_events checks that they agree). */
static const param_def params[] = {
    {"agents", "noise", "agents.noise", P_DOUBLE, OFF(noise), 0.01, 0},
    {"agents", "deposit", "agents.deposit", P_FLOAT, OFF(deposit), 0, 0.01},
    {"agents", "radius", "agents.radius", P_INT, OFF(radius), 1, 0},
    {"field", "diffusion", "field.diffusion", P_FLOAT, OFF(diffusion), 0, 0},
    {"field", "sweeps", "field.sweeps", P_INT, OFF(sweeps), 1, 0},
    {"field", "decay", "field.decay", P_FLOAT, OFF(decay), 0, 0.001},
};
#define NPARAMS ((int)(sizeof params / sizeof params[0]))

static const char allowed_events[] = "agents.noise|agents.deposit|agents.radius|"
                                     "field.diffusion|field.sweeps|field.decay|paint";

int sim_events_param_count(void) { return NPARAMS; }

const char *sim_events_param_name(int i)
{
    return i >= 0 && i < NPARAMS ? params[i].name : NULL;
}

int sim_events_param_is_integer(int i)
{
    return i >= 0 && i < NPARAMS && params[i].type == P_INT;
}

int sim_events_param_find(const char *name)
{
    for (int i = 0; i < NPARAMS; i++)
        if (strcmp(params[i].name, name) == 0)
            return i;
    return -1;
}

double sim_events_param_get(const sim_scenario *sc, int i)
{
    if (i < 0 || i >= NPARAMS)
        return 0.0;
    const char *field = (const char *)sc + params[i].offset;
    switch (params[i].type) {
    case P_INT: return *(const int *)field;
    case P_FLOAT: return *(const float *)field;
    default: return *(const double *)field;
    }
}

int sim_events_param_format(const sim_scenario *sc, int i, char *buf, size_t n)
{
    if (i < 0 || i >= NPARAMS)
        return -1;
    double v = sim_events_param_get(sc, i);
    /* %.9g reads back to the same float, %.17g to the same double */
    switch (params[i].type) {
    case P_INT: return snprintf(buf, n, "%d", (int)v);
    case P_FLOAT: return snprintf(buf, n, "%.9g", v);
    default: return snprintf(buf, n, "%.17g", v);
    }
}

int sim_events_param_set(sim_scenario *sc, int i, double v, const char *where, sim_err *err)
{
    if (i < 0 || i >= NPARAMS)
        return sim_err_set(err, SIM_EINVAL, "%s%sparameter %d: no such parameter (allowed 0 .. "
                           "%d)", where ? where : "", where ? ": " : "", i, NPARAMS - 1);
    /* %.17g reads back to v exactly, so the scenario's parser sees the very number: it rounds
     * it to a float once, and refuses a fraction for an integer key. */
    char text[64];
    snprintf(text, sizeof text, "%.17g", v);
    sim_scenario tmp = *sc;
    int rc = sim_scenario_set_key(&tmp, params[i].section, params[i].key, text,
                                  where ? where : "", err);
    if (rc != SIM_OK) {
        if (!where && err) /* drop the empty prefix's ": " */
            memmove(err->msg, err->msg + 2, strlen(err->msg + 2) + 1);
        return rc;
    }
    *sc = tmp;
    return SIM_OK;
}

double sim_events_param_nudge(const sim_scenario *sc, int i, int dir)
{
    if (i < 0 || i >= NPARAMS)
        return 0.0;
    const param_def *p = &params[i];
    double v = sim_events_param_get(sc, i), next;
    if (dir == 0)
        return v;
    double lo, hi;
    int lo_open;
    if (!sim_scenario_key_range(p->section, p->key, &lo, &hi, &lo_open))
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
    char step[32], event[32];
    if (!copy_field(step, sizeof step, fs, ns) || !parse_digits(step, SIM_EVENTS_MAX_STEP,
                                                                &ev->step))
        return sim_err_set(err, SIM_EINVAL, "%s: step '%.*s%s' is not a step number (allowed "
                           "0 .. %lld, an integer)", where, ns > 24 ? 24 : (int)ns, fs,
                           ns > 24 ? "..." : "", (long long)SIM_EVENTS_MAX_STEP);
    int param = copy_field(event, sizeof event, fe, ne) ? sim_events_param_find(event) : -1;
    int paint = param < 0 && ne == 5 && memcmp(fe, "paint", 5) == 0;
    if (param < 0 && !paint)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown event '%.*s%s' (allowed %s)", where,
                           ne > 32 ? 32 : (int)ne, fe, ne > 32 ? "..." : "", allowed_events);
    if (!copy_field(ev->value, sizeof ev->value, fv, nv))
        return sim_err_set(err, SIM_EINVAL, "%s: %.*s: value too long (allowed at most %d "
                           "characters)", where, (int)ne, fe, SIM_EVENTS_VALUE_MAX - 1);
    if (paint) {
        ev->kind = SIM_EVENT_PAINT;
        ev->param = -1;
        return parse_paint(ev->value, where, ev, err);
    }
    ev->kind = SIM_EVENT_SET;
    ev->param = param;
    /* the scenario's parser and range check, on a copy: the message reads as a scenario
     * file's, "FILE:LINE: agents.noise: out of range '2' (allowed 0 .. 1)" */
    sim_scenario tmp = *scratch;
    return sim_scenario_set_key(&tmp, params[param].section, params[param].key, ev->value,
                                where, err);
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

int sim_events_check(const sim_events *e, const sim_scenario *sc, sim_err *err)
{
    for (size_t i = 0; i < e->n; i++) {
        const sim_event *ev = &e->ev[i];
        if (ev->kind != SIM_EVENT_PAINT)
            continue;
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
        const param_def *p = &params[ev->param];
        if ((rc = sim_scenario_set_key(&sc, p->section, p->key, ev->value, where, err)) != SIM_OK)
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
    int i = sim_events_param_find(key);
    if (step < 0 || sim_events_param_format(sc, i, value, sizeof value) < 0)
        return -1;
    return snprintf(buf, n, "%" PRId64 ",%s,%s\n", step, params[i].name, value);
}

int sim_events_format_paint(char *buf, size_t n, int64_t step, int x, int y, int radius,
                            float amount)
{
    if (step < 0)
        return -1;
    return snprintf(buf, n, "%" PRId64 ",paint,%d %d %d %.9g\n", step, x, y, radius,
                    (double)amount);
}
