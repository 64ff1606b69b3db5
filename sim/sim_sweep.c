/* sim_sweep.c - sweep files (format in sim_sweep.h): parsing with libinih, expansion of lists and
 * ranges into value texts, the run index arithmetic, and the checks that let a sweep of any size
 * be refused before its first run. Only the value lists are stored; a run's scenario is rebuilt
 * from the base and its index whenever it is asked for. */
#include "sim_sweep.h"

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <ini.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim_alloc.h"
#include "sim_text.h"

#define NAME_MAX_LEN 64   /* "section.key", NUL included; scenario keys are far shorter */
#define MAX_KNOWN 256     /* scenario keys (28 today) */
#define MAX_SECTIONS 16   /* distinct sections a sweep file may hold: [sweep] and the scenario's */
#define FILE_MAX (16u << 20)
#define BUILTIN_NAME "default.ini (built-in)" /* as `horizon run` names it */

typedef struct sweep_key {
    char name[NAME_MAX_LEN];          /* "agents.noise" */
    char section[NAME_MAX_LEN], key[NAME_MAX_LEN];
    int line;
    char *raw;      /* the value as written, continuation lines joined; NULL once expanded */
    size_t raw_len;
    int64_t n;      /* number of values */
    char *text;     /* the values, each NUL-terminated */
    size_t *off;    /* off[i]: start of value i in text */
    int64_t stride; /* grid: combinations between two consecutive values of this key */
} sweep_key;

struct sim_sweep {
    char path[SIM_PATH_MAX];
    char base_name[SIM_PATH_MAX];
    sim_scenario file_base; /* base + fixed values: tells --set failures from the file's */
    sim_scenario base;      /* file_base + --set */
    int replicates;
    int zip;
    int n_keys, cap_keys;
    sweep_key *keys;
    int64_t runs, combos;
    int seed_key; /* index of run.seed among the keys, -1 when not swept */
    int n_sets;   /* --set overrides applied to the base */
};

typedef struct fixed_value {
    char section[NAME_MAX_LEN], key[NAME_MAX_LEN];
    char value[INI_MAX_LINE];
    int line;
} fixed_value;

/* Everything load needs while libinih calls back; on the heap (it is ~30 KB). */
typedef struct load_ctx {
    sim_sweep *sw;
    const char *text; /* what the reader has not handed out yet */
    int line;         /* the line last handed to libinih (1-based) */
    int long_line;    /* line that did not fit libinih's buffer, 0 if none */
    int after_key;    /* a key line since the last section header (libinih's prev_name) */
    int cont;         /* the current line continues the previous key's value */
    int last_key;     /* swept key set by the previous key line, -1 if another kind of line */
    int failed;       /* line of the first error, 0 if none */
    int open_key;     /* last_key when it failed: its text may lack continuation lines */
    int long_open_key; /* last_key when the long line stopped the reader */
    int code;         /* its status */
    sim_err e;
    char sections[MAX_SECTIONS][NAME_MAX_LEN];
    int section_line[MAX_SECTIONS], n_sections;
    int sweep_line, base_line, replicates_line, combine_line;
    char base[SIM_PATH_MAX];
    fixed_value *fixed;
    int n_fixed, cap_fixed;
    sim_scenario scratch; /* where single values are tried out */
    char known[MAX_KNOWN][NAME_MAX_LEN];
    int n_known;
} load_ctx;

static int fail(load_ctx *ctx, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Records the first error only: libinih goes on calling after a refusal, and the earliest line
 * is the one worth fixing first. Returns code. */
static int fail(load_ctx *ctx, int code, const char *fmt, ...)
{
    if (!ctx->failed) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ctx->e.msg, sizeof ctx->e.msg, fmt, ap);
        va_end(ap);
        ctx->failed = ctx->line > 0 ? ctx->line : 1;
        ctx->code = code;
        ctx->open_key = ctx->last_key;
    }
    return code;
}

static const char *lskip(const char *s)
{
    while (*s && isspace((unsigned char)*s))
        s++;
    return s;
}

/* Trims blanks in place at both ends; returns the new start. */
static char *trim(char *s)
{
    s = (char *)lskip(s);
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* A whole, finite decimal number (blanks around allowed). */
static int parse_double(const char *s, size_t len, double *out)
{
    char buf[128];
    if (len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *t = trim(buf), *end;
    if (*t == '\0')
        return 0;
    errno = 0;
    double v = strtod(t, &end);
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* The shortest "%.Ng" text (N = 1 .. 17) that reads back within tol of v. With tol = 0 that is
 * v exactly (17 digits always are); a few ulps of slack turn the 0.05999999999999999 of
 * 0 + 0.3*3/15 into the 0.06 a user would type, which is no further from the exact
 * a + (b-a)*i/(n-1) than the computed double. Whole numbers are written without an exponent
 * ("10", not "1e+01"), as integer keys need. */
static void format_double(double v, double tol, char *buf, size_t n)
{
    /* Binary search: the error of the nearest N-digit number only shrinks as N grows (an
     * N-digit number is also an (N+1)-digit one), and 17 digits are exact. */
    int lo = 1, hi = 17;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        snprintf(buf, n, "%.*g", mid, v);
        if (fabs(strtod(buf, NULL) - v) <= tol)
            hi = mid;
        else
            lo = mid + 1;
    }
    snprintf(buf, n, "%.*g", lo, v);
    double w = strtod(buf, NULL);
    if (w == floor(w) && fabs(w) < 1e17)
        snprintf(buf, n, "%.0f", w == 0 ? 0.0 : w); /* exact digits; no "-0" */
}

/* ---- the scenario's keys, read from its own INI writer so that no table is duplicated ---- */

static int read_known_keys(load_ctx *ctx)
{
    size_t cap = 16384; /* the defaults take under 1 KB */
    char *buf = sim_calloc(1, cap);
    FILE *m = buf ? fmemopen(buf, cap - 1, "w") : NULL;
    if (!m) {
        sim_free(buf);
        return fail(ctx, SIM_ENOMEM, "%s: out of memory", ctx->sw->path);
    }
    sim_scenario def;
    sim_scenario_defaults(&def);
    sim_scenario_write_ini(&def, m);
    fclose(m);
    char section[NAME_MAX_LEN] = "";
    int rc = SIM_OK;
    for (char *l = buf, *next; *l && rc == SIM_OK; l = next) {
        size_t len = strcspn(l, "\n");
        next = l[len] ? l + len + 1 : l + len;
        size_t name = strcspn(l, " =\n");
        if (l[0] == '[' && len > 2 && len < sizeof section)
            snprintf(section, sizeof section, "%.*s", (int)(len - 2), l + 1);
        else if (name == 0 || name == len)
            continue; /* blank line */
        else if (ctx->n_known == MAX_KNOWN)
            rc = fail(ctx, SIM_EINVAL, "sim_sweep: more than %d scenario keys (raise MAX_KNOWN)",
                      MAX_KNOWN);
        else if (snprintf(ctx->known[ctx->n_known], NAME_MAX_LEN, "%s.%.*s", section, (int)name,
                          l) < NAME_MAX_LEN)
            ctx->n_known++; /* a longer name would not fit libinih's names anyway */
    }
    sim_free(buf);
    return rc;
}

static int key_known(const load_ctx *ctx, const char *full)
{
    for (int i = 0; i < ctx->n_known; i++)
        if (strcmp(ctx->known[i], full) == 0)
            return 1;
    return 0;
}

static int section_known(const load_ctx *ctx, const char *section)
{
    size_t len = strlen(section);
    for (int i = 0; i < ctx->n_known; i++)
        if (strncmp(ctx->known[i], section, len) == 0 && ctx->known[i][len] == '.')
            return 1;
    return 0;
}

/* Whether a section name is a named one, "field.NAME" or "species.NAME" (its keys are then
 * "field.NAME.KEY": the section is all but the last dot's part). */
static int named_section(const char *section)
{
    return strncmp(section, "field.", 6) == 0 || strncmp(section, "species.", 8) == 0;
}

/* "sweep|world|field|agents|run|output" */
static void section_list(const load_ctx *ctx, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "sweep");
    for (int i = 0; i < ctx->n_known && used < n; i++) {
        size_t len = strcspn(ctx->known[i], ".");
        int seen = 0;
        for (int j = 0; j < i; j++)
            seen |= strncmp(ctx->known[j], ctx->known[i], len + 1) == 0;
        if (!seen)
            used += (size_t)snprintf(buf + used, n - used, "|%.*s", (int)len, ctx->known[i]);
    }
}

/* ---- libinih callbacks ---- */

/* Section headers are checked here, where every line passes: libinih (built without
 * INI_CALL_HANDLER_ON_NEW_SECTION) never tells the handler about them. */
static void section_header(load_ctx *ctx, const char *name)
{
    for (int i = 0; i < ctx->n_sections; i++)
        if (strcmp(ctx->sections[i], name) == 0) {
            fail(ctx, SIM_EINVAL, "%s:%d: [%s]: duplicate (first at line %d)", ctx->sw->path,
                 ctx->line, name, ctx->section_line[i]);
            return;
        }
    if (strcmp(name, "sweep") != 0 && !section_known(ctx, name) && !named_section(name)) {
        char list[128];
        section_list(ctx, list, sizeof list);
        fail(ctx, SIM_EINVAL, "%s:%d: [%s]: unknown section (allowed %s|field.NAME|"
             "species.NAME)", ctx->sw->path, ctx->line, name, list);
        return;
    }
    if (named_section(name)) {
        /* the scratch scenario that checks values needs the section; whether the base has it
         * is checked when the base is built */
        char where[SIM_PATH_MAX + 16];
        sim_err e;
        snprintf(where, sizeof where, "%s:%d", ctx->sw->path, ctx->line);
        if (sim_scenario_add_section(&ctx->scratch, name, where, &e) != SIM_OK) {
            fail(ctx, SIM_EINVAL, "%s", e.msg);
            return;
        }
    }
    if (ctx->n_sections < MAX_SECTIONS) {
        snprintf(ctx->sections[ctx->n_sections], NAME_MAX_LEN, "%s", name);
        ctx->section_line[ctx->n_sections++] = ctx->line;
    }
    if (strcmp(name, "sweep") == 0)
        ctx->sweep_line = ctx->line;
}

/* Classifies a line as libinih will (comment, continuation, section, key) before it does. */
static void classify(load_ctx *ctx, const char *line)
{
    const char *start = line;
    if (ctx->line == 1 && strncmp(start, "\xEF\xBB\xBF", 3) == 0)
        start += 3;
    start = lskip(start);
    ctx->cont = 0;
    if (*start == '\0' || *start == ';' || *start == '#')
        return;
    if (ctx->after_key && start > line) {
        ctx->cont = 1;
        return;
    }
    if (*start != '[')
        return;
    /* the name runs to ']' unless an inline comment (" ;") comes first; libinih calls a header
     * without its ']' a syntax error and keeps the previous section */
    const char *p = start + 1;
    int was_space = 0;
    while (*p && *p != ']' && !(was_space && *p == ';')) {
        was_space = isspace((unsigned char)*p);
        p++;
    }
    if (*p != ']')
        return;
    char name[NAME_MAX_LEN];
    snprintf(name, sizeof name, "%.*s", (int)(p - start - 1), start + 1);
    ctx->after_key = 0;
    ctx->last_key = -1; /* a header ends any list */
    if (!ctx->failed)
        section_header(ctx, name);
}

/* Hands libinih one line at a time (as sim_scenario.c does), so that the line number, the
 * indentation and the section headers are known here. */
static char *reader(char *buf, int size, void *stream)
{
    load_ctx *ctx = stream;
    const char *s = ctx->text;
    if (*s == '\0' || ctx->long_line)
        return NULL;
    int n = 0;
    while (n < size - 1 && s[n] != '\0') {
        buf[n] = s[n];
        n++;
        if (buf[n - 1] == '\n')
            break;
    }
    buf[n] = '\0';
    if (n == size - 1 && buf[n - 1] != '\n' && s[n] == '\n') {
        n++; /* the line fits; only its newline did not */
    } else if (n == size - 1 && buf[n - 1] != '\n' && s[n] != '\0') {
        /* libinih would parse the rest as further lines: stop and report it */
        ctx->long_line = ctx->line + 1;
        ctx->long_open_key = ctx->last_key;
        return NULL;
    }
    ctx->text = s + n;
    ctx->line++;
    classify(ctx, buf);
    return buf;
}

static int sweep_key_index(const sim_sweep *sw, const char *name)
{
    for (int k = 0; k < sw->n_keys; k++)
        if (strcmp(sw->keys[k].name, name) == 0)
            return k;
    return -1;
}

/* base, replicates, combine. */
static int sweep_setting(load_ctx *ctx, const char *name, const char *value, const char *where)
{
    int *line = strcmp(name, "base") == 0         ? &ctx->base_line
                : strcmp(name, "replicates") == 0 ? &ctx->replicates_line
                : strcmp(name, "combine") == 0    ? &ctx->combine_line
                                                  : NULL;
    if (!line)
        return fail(ctx, SIM_EINVAL, "%s: sweep.%s: unknown key (allowed base|replicates|combine, "
                    "or a scenario key section.key to sweep)", where, name);
    if (*line)
        return fail(ctx, SIM_EINVAL, "%s: sweep.%s: duplicate (first at line %d)", where, name,
                    *line);
    *line = ctx->line;
    if (line == &ctx->base_line) {
        if (value[0] == '\0' || strlen(value) >= sizeof ctx->base)
            return fail(ctx, SIM_EINVAL, "%s: sweep.base: bad path '%s' (allowed default, or a "
                        "scenario .ini path of 1 .. %d bytes)", where, value, SIM_PATH_MAX - 1);
        snprintf(ctx->base, sizeof ctx->base, "%s", value);
    } else if (line == &ctx->replicates_line) {
        char *end;
        errno = 0;
        long long r = strtoll(value, &end, 10);
        if (value[0] == '\0' || *end != '\0' || errno == ERANGE)
            return fail(ctx, SIM_EINVAL, "%s: sweep.replicates: not an integer '%s' (allowed 1 .. "
                        "%d)", where, value, SIM_SWEEP_MAX_REPLICATES);
        if (r < 1 || r > SIM_SWEEP_MAX_REPLICATES)
            return fail(ctx, SIM_EINVAL, "%s: sweep.replicates: out of range '%s' (allowed 1 .. "
                        "%d)", where, value, SIM_SWEEP_MAX_REPLICATES);
        ctx->sw->replicates = (int)r;
    } else {
        if (strcmp(value, "grid") != 0 && strcmp(value, "zip") != 0)
            return fail(ctx, SIM_EINVAL, "%s: sweep.combine: unknown value '%s' (allowed "
                        "grid|zip)", where, value);
        ctx->sw->zip = strcmp(value, "zip") == 0;
    }
    return SIM_OK;
}

static int fixed_line(const load_ctx *ctx, const char *full)
{
    char name[2 * NAME_MAX_LEN + 2];
    for (int i = 0; i < ctx->n_fixed; i++) {
        snprintf(name, sizeof name, "%s.%s", ctx->fixed[i].section, ctx->fixed[i].key);
        if (strcmp(name, full) == 0)
            return ctx->fixed[i].line;
    }
    return 0;
}

/* A scenario key under [sweep]: its text is kept raw until the whole file is read, because
 * continuation lines may still add to it. */
static int swept_key(load_ctx *ctx, const char *name, const char *value, const char *where)
{
    sim_sweep *sw = ctx->sw;
    const char *last_dot = strrchr(name, '.');
    char named[NAME_MAX_LEN];
    snprintf(named, sizeof named, "%.*s", (int)(last_dot - name), name);
    const int is_named = last_dot != strchr(name, '.') && named_section(named);
    if (is_named) {
        /* the key and its values are checked on a scratch scenario that has the section; the
         * base must have it too (checked when the base is built) */
        sim_err e;
        if (sim_scenario_add_section(&ctx->scratch, named, where, &e) != SIM_OK)
            return fail(ctx, SIM_EINVAL, "%s", e.msg);
        if (!sim_scenario_has_key(named, last_dot + 1) &&
            sim_scenario_set_key(&ctx->scratch, named, last_dot + 1, "0", where, &e) != SIM_OK)
            return fail(ctx, SIM_EINVAL, "%s", e.msg);
    } else if (!key_known(ctx, name)) {
        /* the scenario module words the refusal, listing the keys it knows */
        char sec[256];
        snprintf(sec, sizeof sec, "%s", name);
        char *dot = strchr(sec, '.');
        *dot = '\0';
        sim_err e;
        if (sim_scenario_set_key(&ctx->scratch, sec, dot + 1, "0", where, &e) != SIM_OK)
            return fail(ctx, SIM_EINVAL, "%s", e.msg);
        return fail(ctx, SIM_EINVAL, "%s: %s: unknown scenario key", where, name);
    }
    int k = sweep_key_index(sw, name);
    if (k >= 0)
        return fail(ctx, SIM_EINVAL, "%s: %s: duplicate (first at line %d)", where, name,
                    sw->keys[k].line);
    int fl = fixed_line(ctx, name);
    if (fl)
        return fail(ctx, SIM_EINVAL, "%s: %s: swept here but fixed at line %d (give it in one "
                    "place)", where, name, fl);
    if (sw->n_keys == sw->cap_keys) {
        int cap = sw->cap_keys ? 2 * sw->cap_keys : 8;
        sweep_key *bigger = sim_realloc(sw->keys, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
        sw->keys = bigger;
        sw->cap_keys = cap;
    }
    sweep_key *sk = &sw->keys[sw->n_keys];
    memset(sk, 0, sizeof *sk);
    sk->raw_len = strlen(value);
    sk->raw = sim_malloc(sk->raw_len + 1);
    if (!sk->raw)
        return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
    memcpy(sk->raw, value, sk->raw_len + 1);
    snprintf(sk->name, sizeof sk->name, "%s", name);
    size_t dot = is_named ? (size_t)(last_dot - name) : strcspn(name, ".");
    snprintf(sk->section, sizeof sk->section, "%.*s", (int)dot, name);
    snprintf(sk->key, sizeof sk->key, "%s", name + dot + 1);
    sk->line = ctx->line;
    if (strcmp(name, "run.seed") == 0)
        sw->seed_key = sw->n_keys;
    ctx->last_key = sw->n_keys++;
    return SIM_OK;
}

/* An indented line after a swept key adds items to its list. libinih 55 leaves inline comments
 * on continuation lines, so they are cut here by its own rule (';' after a blank). */
static int continuation(load_ctx *ctx, const char *section, const char *name,
                        const char *value, const char *where)
{
    if (ctx->last_key < 0)
        return fail(ctx, SIM_EINVAL, "%s: %s%s%s: continuation line (only a list under [sweep] "
                    "may continue on an indented line)", where,
                    strcmp(section, "sweep") == 0 ? "sweep" : section, section[0] ? "." : "",
                    name);
    char buf[INI_MAX_LINE];
    snprintf(buf, sizeof buf, "%s", value);
    for (char *p = buf + 1; *p; p++)
        if (*p == ';' && isspace((unsigned char)p[-1])) {
            *p = '\0';
            break;
        }
    char *v = trim(buf);
    if (*v == '\0')
        return SIM_OK;
    sweep_key *sk = &ctx->sw->keys[ctx->last_key];
    size_t vlen = strlen(v);
    char *bigger = sim_realloc(sk->raw, sk->raw_len + vlen + 3);
    if (!bigger)
        return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
    sk->raw = bigger;
    /* the line break separates items unless the line already ended with a comma */
    const char *sep = sk->raw_len == 0 ? "" : sk->raw[sk->raw_len - 1] == ',' ? " " : ", ";
    sk->raw_len += (size_t)sprintf(sk->raw + sk->raw_len, "%s%s", sep, v);
    return SIM_OK;
}

/* A key of a scenario section: a fixed value for every run, tried on a scratch scenario now
 * (a key's own range does not depend on the others) and applied to the base later. */
static int fixed_key(load_ctx *ctx, const char *section, const char *name, const char *value,
                     const char *where)
{
    char full[2 * NAME_MAX_LEN + 2];
    snprintf(full, sizeof full, "%s.%s", section, name);
    if (key_known(ctx, full) || named_section(section)) {
        int fl = fixed_line(ctx, full);
        if (fl)
            return fail(ctx, SIM_EINVAL, "%s: %s: duplicate (first at line %d)", where, full, fl);
        int k = sweep_key_index(ctx->sw, full);
        if (k >= 0)
            return fail(ctx, SIM_EINVAL, "%s: %s: fixed here but swept at line %d (give it in "
                        "one place)", where, full, ctx->sw->keys[k].line);
    }
    sim_err e;
    if (sim_scenario_set_key(&ctx->scratch, section, name, value, where, &e) != SIM_OK)
        return fail(ctx, SIM_EINVAL, "%s", e.msg);
    if (ctx->n_fixed == ctx->cap_fixed) {
        int cap = ctx->cap_fixed ? 2 * ctx->cap_fixed : 16;
        fixed_value *bigger = sim_realloc(ctx->fixed, (size_t)cap * sizeof *bigger);
        if (!bigger)
            return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
        ctx->fixed = bigger;
        ctx->cap_fixed = cap;
    }
    fixed_value *fv = &ctx->fixed[ctx->n_fixed++];
    snprintf(fv->section, sizeof fv->section, "%s", section);
    snprintf(fv->key, sizeof fv->key, "%s", name);
    snprintf(fv->value, sizeof fv->value, "%s", value);
    fv->line = ctx->line;
    return SIM_OK;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    load_ctx *ctx = user;
    int cont = ctx->cont;
    ctx->after_key = 1; /* libinih sets prev_name before it calls, whatever we answer */
    ctx->cont = 0;
    if (ctx->failed)
        return 0;
    char where[SIM_PATH_MAX + 16];
    snprintf(where, sizeof where, "%s:%d", ctx->sw->path, ctx->line);
    int rc;
    if (cont)
        return continuation(ctx, section, name, value, where) == SIM_OK;
    ctx->last_key = -1;
    if (section[0] == '\0')
        rc = fail(ctx, SIM_EINVAL, "%s: %s: key outside any section (put it under [sweep] or a "
                  "scenario section)", where, name);
    else if (strcmp(section, "sweep") != 0)
        rc = fixed_key(ctx, section, name, value, where);
    else if (!strchr(name, '.'))
        rc = sweep_setting(ctx, name, value, where);
    else
        rc = swept_key(ctx, name, value, where);
    return rc == SIM_OK; /* libinih: nonzero goes on */
}

/* ---- expansion of one key's text into its values ---- */

/* Appends one value to sk->text (*used of *cap bytes taken, grown by doubling) and records its
 * offset. */
static int push_value(sweep_key *sk, size_t *cap, size_t *used, const char *v)
{
    size_t len = strlen(v) + 1;
    if (*used + len > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *used + len)
            c *= 2;
        char *bigger = sim_realloc(sk->text, c);
        if (!bigger)
            return SIM_ENOMEM;
        sk->text = bigger;
        *cap = c;
    }
    memcpy(sk->text + *used, v, len);
    sk->off[sk->n++] = *used;
    *used += len;
    return SIM_OK;
}

/* "A .. B / N" or "log A .. B / N" when the text before ".." is a number; *is_range = 0 else. */
static int expand_range(load_ctx *ctx, sweep_key *sk, const char *where, int *is_range)
{
    const char *p = sk->raw;
    int is_log = 0;
    double a, b;
    if (strncmp(p, "log", 3) == 0 && isspace((unsigned char)p[3])) {
        const char *q = lskip(p + 3), *dots = strstr(q, "..");
        if (dots && parse_double(q, (size_t)(dots - q), &a)) {
            is_log = 1;
            p = q;
        }
    }
    const char *dots = strstr(p, "..");
    *is_range = dots && parse_double(p, (size_t)(dots - p), &a);
    if (!*is_range)
        return SIM_OK;
    const char *slash = strchr(dots + 2, '/');
    if (!slash)
        return fail(ctx, SIM_EINVAL, "%s: %s: range '%s' needs a count (allowed [log] A .. B / "
                    "N, N = 2 .. %d)", where, sk->name, sk->raw, SIM_SWEEP_MAX_VALUES);
    if (!parse_double(dots + 2, (size_t)(slash - dots - 2), &b)) {
        const char *e0 = lskip(dots + 2), *e1 = slash;
        while (e1 > e0 && isspace((unsigned char)e1[-1]))
            e1--;
        return fail(ctx, SIM_EINVAL, "%s: %s: range '%s': end '%.*s' is not a number", where,
                    sk->name, sk->raw, (int)(e1 - e0), e0);
    }
    char nbuf[64];
    snprintf(nbuf, sizeof nbuf, "%s", slash + 1);
    char *nt = trim(nbuf), *end;
    errno = 0;
    long long n = strtoll(nt, &end, 10);
    if (*nt == '\0' || *end != '\0' || errno == ERANGE || n < 2 || n > SIM_SWEEP_MAX_VALUES)
        return fail(ctx, SIM_EINVAL, "%s: %s: range count '%s' out of range (allowed 2 .. %d, an "
                    "integer)", where, sk->name, nt, SIM_SWEEP_MAX_VALUES);
    if (is_log && (a <= 0 || b <= 0))
        return fail(ctx, SIM_EINVAL, "%s: %s: log range '%s' needs A > 0 and B > 0", where,
                    sk->name, sk->raw);
    sk->off = sim_malloc_array((size_t)n, sizeof *sk->off);
    if (!sk->off)
        return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
    size_t cap = 0, used = 0;
    /* the rounding error of the formulas below: a few ulps of the larger endpoint (linear) or
     * of the value (log) */
    double slack = 4 * DBL_EPSILON;
    for (long long i = 0; i < n; i++) {
        double t = (double)i / (double)(n - 1), v;
        /* the endpoints are the numbers written, not results of arithmetic */
        if (i == 0)
            v = a;
        else if (i == n - 1)
            v = b;
        else if (is_log)
            v = a * pow(b / a, t);
        else
            v = a + (b - a) * (double)i / (double)(n - 1);
        if (!isfinite(v))
            return fail(ctx, SIM_EINVAL, "%s: %s: range '%s' leaves the doubles", where,
                        sk->name, sk->raw);
        char text[320]; /* %.17g takes at most 24; the compiler counts up to 310 */
        double tol = i == 0 || i == n - 1 ? 0 /* exact */
                     : is_log             ? slack * fabs(v)
                                          : slack * fmax(fabs(a), fabs(b));
        format_double(v, tol, text, sizeof text);
        if (push_value(sk, &cap, &used, text) != SIM_OK)
            return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
    }
    return SIM_OK;
}

/* Items split at commas and trimmed, in place in a copy of the raw text. */
static int expand_list(load_ctx *ctx, sweep_key *sk, const char *where)
{
    int64_t items = 1;
    for (const char *p = sk->raw; *p; p++)
        items += *p == ',';
    if (items > SIM_SWEEP_MAX_VALUES)
        return fail(ctx, SIM_EINVAL, "%s: %s: %" PRId64 " values (allowed at most %d)", where,
                    sk->name, items, SIM_SWEEP_MAX_VALUES);
    sk->text = sim_malloc(sk->raw_len + 1);
    sk->off = sim_malloc_array((size_t)items, sizeof *sk->off);
    if (!sk->text || !sk->off)
        return fail(ctx, SIM_ENOMEM, "%s: out of memory", where);
    memcpy(sk->text, sk->raw, sk->raw_len + 1);
    char *item = sk->text;
    for (int64_t i = 0; i < items; i++) {
        char *comma = strchr(item, ',');
        if (comma)
            *comma = '\0';
        char *v = trim(item);
        if (*v == '\0' && items == 1)
            return fail(ctx, SIM_EINVAL, "%s: %s: no values (give a list v1, v2, ... or a range "
                        "A .. B / N)", where, sk->name);
        if (*v == '\0')
            return fail(ctx, SIM_EINVAL, "%s: %s: item %" PRId64 " of the list is empty", where,
                        sk->name, i + 1);
        sk->off[sk->n++] = (size_t)(v - sk->text);
        item = comma ? comma + 1 : item;
    }
    return SIM_OK;
}

static int expand(load_ctx *ctx, sweep_key *sk)
{
    char where[SIM_PATH_MAX + 16];
    snprintf(where, sizeof where, "%s:%d", ctx->sw->path, sk->line);
    ctx->line = sk->line;
    int is_range, rc = expand_range(ctx, sk, where, &is_range);
    if (rc == SIM_OK && !is_range)
        rc = expand_list(ctx, sk, where);
    /* every value as the key would take it from --set: the scenario's own message, our line */
    sim_err e;
    for (int64_t i = 0; rc == SIM_OK && i < sk->n; i++)
        if (sim_scenario_set_key(&ctx->scratch, sk->section, sk->key, sk->text + sk->off[i],
                                 where, &e) != SIM_OK)
            rc = fail(ctx, SIM_EINVAL, "%s", e.msg);
    sim_free(sk->raw);
    sk->raw = NULL;
    return rc;
}

/* ---- runs ---- */

static int64_t value_index(const sim_sweep *sw, int64_t combo, int k)
{
    return sw->zip ? combo : combo / sw->keys[k].stride % sw->keys[k].n;
}

static const char *value_text(const sim_sweep *sw, int64_t combo, int k)
{
    const sweep_key *sk = &sw->keys[k];
    return sk->text + sk->off[value_index(sw, combo, k)];
}

/* *out = from + the run's swept values (key `skip` left out; -1 for none) + its seed. */
static int build_run(const sim_sweep *sw, const sim_scenario *from, int64_t run, int skip,
                     sim_scenario *out, sim_err *err)
{
    int64_t combo = run / sw->replicates;
    *out = *from;
    for (int k = 0; k < sw->n_keys; k++) {
        if (k == skip)
            continue;
        char where[SIM_PATH_MAX + 16];
        snprintf(where, sizeof where, "%s:%d", sw->path, sw->keys[k].line);
        int rc = sim_scenario_set_key(out, sw->keys[k].section, sw->keys[k].key,
                                      value_text(sw, combo, k), where, err);
        if (rc != SIM_OK)
            return rc;
    }
    out->seed += (uint64_t)(run % sw->replicates); /* wraps modulo 2^64, as documented */
    return SIM_OK;
}

/* "agents.count=5000, world.width=64", cut short to fit. */
static void describe_run(const sim_sweep *sw, int64_t run, char *buf, size_t n)
{
    size_t used = (size_t)snprintf(buf, n, "run %" PRId64, run);
    for (int k = 0; k < sw->n_keys && used < n; k++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s=%s", k ? ", " : ": ",
                                 sw->keys[k].name, value_text(sw, run / sw->replicates, k));
    if (used >= n && n > 4)
        memcpy(buf + n - 4, "...", 4);
}

/* The swept key to blame for a validation failure: the one the message names (or whose section
 * it names), else the first one whose removal makes the run valid; -1 when none does. */
static int blame(const sim_sweep *sw, int64_t run, const char *msg)
{
    char token[NAME_MAX_LEN];
    snprintf(token, sizeof token, "%.*s", (int)strcspn(msg, ":"), msg);
    for (int k = 0; k < sw->n_keys; k++)
        if (strcmp(sw->keys[k].name, token) == 0 || strcmp(sw->keys[k].section, token) == 0)
            return k;
    for (int k = 0; k < sw->n_keys; k++) {
        sim_scenario sc;
        sim_err e;
        if (build_run(sw, &sw->base, run, k, &sc, &e) == SIM_OK &&
            sim_scenario_validate(&sc, &e) == SIM_OK)
            return k;
    }
    return -1;
}

/* Whether a validation message starts with where the value at fault came from: sim_scenario
 * keeps the `where` of the related keys (sweep lines, --set, the base's lines) and names it. */
static int names_origin(const sim_sweep *sw, const char *msg)
{
    const char *const from[] = {sw->path, sw->base_name, BUILTIN_NAME};
    for (size_t i = 0; i < sizeof from / sizeof from[0]; i++) {
        size_t len = strlen(from[i]);
        if (strncmp(msg, from[i], len) == 0 && msg[len] == ':')
            return 1;
    }
    return strncmp(msg, "--set ", 6) == 0;
}

/* Builds and validates one run; on failure, a message naming the line to change. */
static int check_run(const sim_sweep *sw, int64_t run, sim_scenario *sc, sim_err *err)
{
    sim_err inner;
    int rc = build_run(sw, &sw->base, run, -1, sc, err);
    if (rc != SIM_OK || (rc = sim_scenario_validate(sc, &inner)) == SIM_OK)
        return rc;
    char what[200];
    describe_run(sw, run, what, sizeof what);
    if (names_origin(sw, inner.msg))
        return sim_err_set(err, rc, "%s (%s)", inner.msg, what);
    /* a message without its origin: find the swept line to blame ourselves */
    int k = blame(sw, run, inner.msg);
    if (k >= 0)
        return sim_err_set(err, rc, "%s:%d: %s (%s)", sw->path, sw->keys[k].line, inner.msg,
                           what);
    sim_scenario plain;
    sim_err e;
    if (sw->n_sets > 0 &&
        build_run(sw, &sw->file_base, run, -1, &plain, &e) == SIM_OK &&
        sim_scenario_validate(&plain, &e) == SIM_OK)
        return sim_err_set(err, rc, "command line: %s (%s)", inner.msg, what);
    return sim_err_set(err, rc, "%s: %s (%s)", sw->path, inner.msg, what);
}

/* ---- load ---- */

/* The whole file, NUL-terminated, in *out (sim_free). */
static int read_text(const char *path, char **out, sim_err *err)
{
    return sim_text_read(path, "sweep file", FILE_MAX, out, NULL, err);
}

/* Parses the text into ctx and the sweep; expands every key. The first error by line wins. */
static int parse(load_ctx *ctx, const char *text)
{
    sim_sweep *sw = ctx->sw;
    ctx->text = text;
    int rc = ini_parse_stream(reader, ctx, handler, ctx);
    if (ctx->failed && ctx->code == SIM_ENOMEM)
        return SIM_ENOMEM;
    /* values are expanded only now that continuation lines are in; their errors still go in
     * line order with those found while reading, so expand the keys above the first error,
     * except one whose continuation lines may have been cut off by it */
    int stop = ctx->failed, open = ctx->failed ? ctx->open_key : -1;
    if (rc > 0 && (!stop || rc < stop)) {
        stop = rc;
        open = -1;
    }
    if (ctx->long_line && (!stop || ctx->long_line < stop)) {
        stop = ctx->long_line;
        open = ctx->long_open_key;
    }
    int failed = ctx->failed, code = ctx->code;
    sim_err first = ctx->e;
    ctx->failed = 0;
    for (int k = 0; k < sw->n_keys && (!stop || sw->keys[k].line < stop); k++)
        if (k != open && expand(ctx, &sw->keys[k]) != SIM_OK)
            return ctx->code;
    if (rc > 0 && (!failed || rc < failed))
        return fail(ctx, SIM_EINVAL, "%s:%d: syntax error (expected [section] or key = value)",
                    sw->path, rc);
    if (failed) {
        ctx->e = first;
        return code;
    }
    if (ctx->long_line)
        return fail(ctx, SIM_EINVAL, "%s:%d: line too long (allowed at most %d characters; "
                    "continue a list on indented lines)", sw->path, ctx->long_line,
                    INI_MAX_LINE - 1);
    if (rc < 0)
        return fail(ctx, SIM_ENOMEM, "%s: out of memory while parsing", sw->path);
    if (!ctx->sweep_line)
        return fail(ctx, SIM_EINVAL, "%s:1: no [sweep] section (a sweep file needs one, with "
                    "base, replicates, combine or keys to sweep)", sw->path);
    return SIM_OK;
}

/* Runs = product of the list lengths (grid) or their common length (zip), times R. */
static int count_runs(load_ctx *ctx)
{
    sim_sweep *sw = ctx->sw;
    double total = 1;
    int over_line = 0;
    const char *over_name = NULL;
    sw->combos = 1;
    for (int k = 0; k < sw->n_keys; k++) {
        sweep_key *sk = &sw->keys[k];
        if (sw->zip && sk->n != sw->keys[0].n) {
            ctx->line = sk->line;
            return fail(ctx, SIM_EINVAL, "%s:%d: %s: %" PRId64 " values, but %s (line %d) has %"
                        PRId64 " (combine = zip needs lists of one length)", sw->path, sk->line,
                        sk->name, sk->n, sw->keys[0].name, sw->keys[0].line, sw->keys[0].n);
        }
        if (!sw->zip || k == 0)
            total *= (double)sk->n;
        if (total > SIM_SWEEP_MAX_RUNS && !over_name) {
            over_line = sk->line;
            over_name = sk->name;
        }
    }
    total *= sw->replicates;
    if (total > SIM_SWEEP_MAX_RUNS && !over_name) {
        over_line = ctx->replicates_line;
        over_name = "sweep.replicates";
    }
    if (over_name) {
        ctx->line = over_line;
        return fail(ctx, SIM_EINVAL, total < 1e15 ? "%s:%d: %s: the sweep would have %.0f runs "
                    "(allowed at most %lld)" : "%s:%d: %s: the sweep would have %.3g runs "
                    "(allowed at most %lld)", sw->path, over_line, over_name, total,
                    SIM_SWEEP_MAX_RUNS);
    }
    /* the first key varies slowest: its stride is the product of the lengths after it */
    int64_t stride = 1;
    for (int k = sw->n_keys - 1; k >= 0; k--) {
        sw->keys[k].stride = sw->zip ? 1 : stride;
        if (!sw->zip)
            stride *= sw->keys[k].n;
    }
    sw->combos = sw->zip ? (sw->n_keys ? sw->keys[0].n : 1) : stride;
    sw->runs = sw->combos * sw->replicates;
    return SIM_OK;
}

static sim_sweep_resolver resolver;

void sim_sweep_set_resolver(sim_sweep_resolver fn)
{
    resolver = fn;
}

/* The base scenario, then the fixed values, then --set. */
static int build_base(load_ctx *ctx, char **sets, int n_sets)
{
    sim_sweep *sw = ctx->sw;
    sim_scenario *sc = &sw->base;
    sim_err e;
    int rc;
    sim_scenario_defaults(sc);
    if (!ctx->base_line || strcmp(ctx->base, "default") == 0) {
        snprintf(sw->base_name, sizeof sw->base_name, "default");
        rc = sim_scenario_parse_string(sc, sim_scenario_builtin_text(), BUILTIN_NAME, &e);
    } else {
        const char *slash = strrchr(sw->path, '/');
        int dir = ctx->base[0] == '/' || !slash ? 0 : (int)(slash - sw->path) + 1;
        if ((size_t)dir + strlen(ctx->base) >= sizeof sw->base_name) {
            ctx->line = ctx->base_line;
            return fail(ctx, SIM_EINVAL, "%s:%d: sweep.base: path too long (allowed at most %d "
                        "bytes, joined to the sweep file's directory)", sw->path, ctx->base_line,
                        SIM_PATH_MAX - 1);
        }
        memcpy(sw->base_name, sw->path, (size_t)dir); /* lengths checked just above */
        memcpy(sw->base_name + dir, ctx->base, strlen(ctx->base) + 1);
        struct stat st;
        rc = SIM_OK;
        /* not a file next to the sweep file, and no path: a model of the library */
        if (resolver && stat(sw->base_name, &st) != 0 && !strchr(ctx->base, '/'))
            rc = resolver(ctx->base, sw->base_name, sizeof sw->base_name, &e);
        if (rc == SIM_OK)
            rc = sim_scenario_parse_file(sc, sw->base_name, &e);
    }
    if (rc != SIM_OK) {
        ctx->line = ctx->base_line;
        /* a base that cannot be opened is a mistake in the sweep file, hence EINVAL */
        return fail(ctx, rc == SIM_EIO ? SIM_EINVAL : rc, "%s:%d: sweep.base: %s", sw->path,
                    ctx->base_line ? ctx->base_line : ctx->sweep_line, e.msg);
    }
    for (int i = 0; i < ctx->n_fixed; i++) {
        const fixed_value *fv = &ctx->fixed[i];
        char where[SIM_PATH_MAX + 16];
        snprintf(where, sizeof where, "%s:%d", sw->path, fv->line);
        if ((rc = sim_scenario_set_key(sc, fv->section, fv->key, fv->value, where, &e)) != SIM_OK)
            return fail(ctx, rc, "%s", e.msg);
    }
    sw->file_base = *sc;
    sw->n_sets = n_sets;
    for (int i = 0; i < n_sets; i++) {
        size_t name = strcspn(sets[i], "=");
        for (int k = 0; sets[i][name] && k < sw->n_keys; k++)
            if (strlen(sw->keys[k].name) == name && strncmp(sw->keys[k].name, sets[i], name) == 0)
                return fail(ctx, SIM_EINVAL, "--set %s: %s is swept (%s:%d); change its list "
                            "there", sets[i], sw->keys[k].name, sw->path, sw->keys[k].line);
        /* checked together below, run by run, so that their order does not matter */
        if ((rc = sim_scenario_assign(sc, sets[i], &e)) != SIM_OK)
            return fail(ctx, rc, "%s", e.msg);
    }
    return SIM_OK;
}

/* Every run when there are few enough; else the ends and each value alone on the base. */
static int validate_runs(load_ctx *ctx)
{
    sim_sweep *sw = ctx->sw;
    sim_scenario sc;
    int rc;
    if (sw->runs <= SIM_SWEEP_VALIDATE_ALL) {
        for (int64_t run = 0; run < sw->runs; run++)
            if ((rc = check_run(sw, run, &sc, &ctx->e)) != SIM_OK)
                return rc;
        return SIM_OK;
    }
    if ((rc = check_run(sw, 0, &sc, &ctx->e)) != SIM_OK ||
        (rc = check_run(sw, sw->runs - 1, &sc, &ctx->e)) != SIM_OK)
        return rc;
    for (int k = 0; k < sw->n_keys; k++) {
        const sweep_key *sk = &sw->keys[k];
        for (int64_t i = 0; i < sk->n; i++) {
            sim_err e;
            char where[SIM_PATH_MAX + 16];
            snprintf(where, sizeof where, "%s:%d", sw->path, sk->line);
            sc = sw->base;
            rc = sim_scenario_set_key(&sc, sk->section, sk->key, sk->text + sk->off[i], where,
                                      &ctx->e);
            if (rc == SIM_OK && (rc = sim_scenario_validate(&sc, &e)) != SIM_OK)
                sim_err_set(&ctx->e, rc, "%s%s%s (%s=%s on the base)",
                            names_origin(sw, e.msg) ? "" : where,
                            names_origin(sw, e.msg) ? "" : ": ", e.msg, sk->name,
                            sk->text + sk->off[i]);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

int sim_sweep_load(const char *path, char **sets, int n_sets, sim_sweep **out, sim_err *err)
{
    if (out)
        *out = NULL;
    if (!path || !out || n_sets < 0 || (n_sets > 0 && !sets))
        return sim_err_set(err, SIM_EINVAL, "sim_sweep_load: bad arguments");
    if (strlen(path) >= SIM_PATH_MAX)
        return sim_err_set(err, SIM_EINVAL, "%.64s...: sweep file path too long (allowed at "
                           "most %d bytes)", path, SIM_PATH_MAX - 1);
    char *text = NULL;
    sim_sweep *sw = sim_calloc(1, sizeof *sw);
    load_ctx *ctx = sim_calloc(1, sizeof *ctx);
    if (!sw || !ctx) {
        sim_free(sw);
        sim_free(ctx);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    snprintf(sw->path, sizeof sw->path, "%s", path);
    sw->replicates = 1;
    sw->seed_key = -1;
    ctx->sw = sw;
    ctx->last_key = ctx->open_key = ctx->long_open_key = -1;
    sim_scenario_defaults(&ctx->scratch);
    int rc = read_text(path, &text, &ctx->e);
    if (rc == SIM_OK && (rc = read_known_keys(ctx)) == SIM_OK && (rc = parse(ctx, text)) ==
        SIM_OK && (rc = count_runs(ctx)) == SIM_OK && (rc = build_base(ctx, sets, n_sets)) ==
        SIM_OK)
        rc = validate_runs(ctx);
    if (rc == SIM_OK) {
        *out = sw;
    } else {
        if (err)
            *err = ctx->e;
        sim_sweep_destroy(sw);
    }
    sim_free(text);
    sim_free(ctx->fixed);
    sim_free(ctx);
    return rc;
}

void sim_sweep_destroy(sim_sweep *sw)
{
    if (!sw)
        return;
    for (int k = 0; k < sw->n_keys; k++) {
        sim_free(sw->keys[k].raw);
        sim_free(sw->keys[k].text);
        sim_free(sw->keys[k].off);
    }
    sim_free(sw->keys);
    sim_free(sw);
}

/* ---- accessors ---- */

int64_t sim_sweep_runs(const sim_sweep *sw) { return sw->runs; }
int sim_sweep_keys(const sim_sweep *sw) { return sw->n_keys; }
int sim_sweep_replicates(const sim_sweep *sw) { return sw->replicates; }
const char *sim_sweep_combine(const sim_sweep *sw) { return sw->zip ? "zip" : "grid"; }
const char *sim_sweep_path(const sim_sweep *sw) { return sw->path; }
const char *sim_sweep_base_name(const sim_sweep *sw) { return sw->base_name; }
const sim_scenario *sim_sweep_base(const sim_sweep *sw) { return &sw->base; }

const char *sim_sweep_key(const sim_sweep *sw, int k)
{
    return k >= 0 && k < sw->n_keys ? sw->keys[k].name : NULL;
}

int sim_sweep_key_line(const sim_sweep *sw, int k)
{
    return k >= 0 && k < sw->n_keys ? sw->keys[k].line : 0;
}

int64_t sim_sweep_key_values(const sim_sweep *sw, int k)
{
    return k >= 0 && k < sw->n_keys ? sw->keys[k].n : 0;
}

const char *sim_sweep_key_value(const sim_sweep *sw, int k, int64_t i)
{
    if (k < 0 || k >= sw->n_keys || i < 0 || i >= sw->keys[k].n)
        return NULL;
    return sw->keys[k].text + sw->keys[k].off[i];
}

int64_t sim_sweep_value_index(const sim_sweep *sw, int64_t run, int k)
{
    if (run < 0 || run >= sw->runs || k < 0 || k >= sw->n_keys)
        return -1;
    return value_index(sw, run / sw->replicates, k);
}

const char *sim_sweep_value(const sim_sweep *sw, int64_t run, int k)
{
    int64_t i = sim_sweep_value_index(sw, run, k);
    return i < 0 ? NULL : sw->keys[k].text + sw->keys[k].off[i];
}

int sim_sweep_replicate(const sim_sweep *sw, int64_t run)
{
    return run >= 0 && run < sw->runs ? (int)(run % sw->replicates) : -1;
}

uint64_t sim_sweep_seed(const sim_sweep *sw, int64_t run)
{
    if (run < 0 || run >= sw->runs)
        return 0;
    uint64_t seed = sw->base.seed;
    if (sw->seed_key >= 0) /* checked at load by the scenario's own parser of run.seed */
        seed = strtoull(value_text(sw, run / sw->replicates, sw->seed_key), NULL, 10);
    return seed + (uint64_t)(run % sw->replicates);
}

int sim_sweep_scenario(const sim_sweep *sw, int64_t run, sim_scenario *out, sim_err *err)
{
    if (run < 0 || run >= sw->runs)
        return sim_err_set(err, SIM_EINVAL, "%s: run %" PRId64 " out of range (allowed 0 .. %"
                           PRId64 ")", sw->path, run, sw->runs - 1);
    return check_run(sw, run, out, err);
}

/* Appends " --set ARG" (no space first), single-quoting ARG when a shell would read into it. */
static void append_set(char *buf, size_t n, size_t *used, const char *arg)
{
    int plain = *arg != '\0';
    for (const char *p = arg; *p; p++)
        plain &= isalnum((unsigned char)*p) || strchr("._-+=/:,@%^", *p) != NULL;
    if (*used < n)
        *used += (size_t)snprintf(buf + *used, n - *used, "%s--set %s", *used ? " " : "",
                                  plain ? "" : "'");
    for (const char *p = arg; *p && *used < n; p++)
        *used += (size_t)snprintf(buf + *used, n - *used, *p == '\'' && !plain ? "'\\''" : "%c",
                                  *p);
    if (!plain && *used < n)
        *used += (size_t)snprintf(buf + *used, n - *used, "'");
}

void sim_sweep_run_args(const sim_sweep *sw, int64_t run, char *buf, size_t n)
{
    if (n == 0)
        return;
    buf[0] = '\0';
    if (run < 0 || run >= sw->runs)
        return;
    size_t used = 0;
    char arg[SIM_PATH_MAX + 2 * NAME_MAX_LEN];
    for (int k = 0; k < sw->n_keys; k++) {
        if (k == sw->seed_key)
            continue;
        snprintf(arg, sizeof arg, "%s=%s", sw->keys[k].name, sim_sweep_value(sw, run, k));
        append_set(buf, n, &used, arg);
    }
    snprintf(arg, sizeof arg, "run.seed=%" PRIu64, sim_sweep_seed(sw, run));
    append_set(buf, n, &used, arg);
}

void sim_sweep_write_json(const sim_sweep *sw, FILE *f, int indent)
{
    int in = indent + 2;
    fprintf(f, "{\n%*s\"file\": ", in, "");
    sim_json_string(f, sw->path);
    fprintf(f, ",\n%*s\"base\": ", in, "");
    sim_json_string(f, sw->base_name);
    fprintf(f, ",\n%*s\"combine\": \"%s\",\n%*s\"replicates\": %d,\n%*s\"runs\": %" PRId64
            ",\n%*s\"seed\": %" PRIu64 ",\n%*s\"keys\": [",
            in, "", sim_sweep_combine(sw), in, "", sw->replicates, in, "", sw->runs, in, "",
            sw->base.seed, in, "");
    for (int k = 0; k < sw->n_keys; k++) {
        const sweep_key *sk = &sw->keys[k];
        fprintf(f, "%s\n%*s{\"key\": \"%s\", \"line\": %d, \"values\": [", k ? "," : "", in + 2,
                "", sk->name, sk->line);
        for (int64_t i = 0; i < sk->n; i++) {
            if (i)
                fputs(", ", f);
            sim_json_string(f, sk->text + sk->off[i]);
        }
        fputs("]}", f);
    }
    if (sw->n_keys)
        fprintf(f, "\n%*s", in, "");
    fprintf(f, "],\n%*s\"scenario\": ", in, "");
    sim_scenario_write_json(&sw->base, f, in);
    fprintf(f, "\n%*s}", indent, "");
}
