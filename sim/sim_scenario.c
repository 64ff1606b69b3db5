/* sim_scenario.c - the table of scenario keys: defaults, parsing, range checks, serialization.
 * One table drives everything, so a new key needs one line here and one in the header. */
#include "sim_scenario.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "sim_alloc.h"
#include "sim_model.h"
#include "sim_text.h"

/* K_TEXT: one line, may be empty. K_MAP: a PNG path, "" for none; a relative one is made
 * absolute against the scenario file's directory (files) or the working directory (--set). */
enum key_type { K_INT, K_I64, K_U64, K_FLOAT, K_DOUBLE, K_ENUM, K_PATH, K_BOOL, K_TEXT, K_MAP };

typedef struct key_def {
    const char *section, *name;
    int type;
    size_t offset;
    double lo, hi;         /* allowed closed range for numbers */
    int lo_open;           /* 1: lo itself is not allowed */
    const char *const *names; /* enum value names, NULL-terminated */
    const char *defval;    /* default, as text (parsed at start-up by sim_scenario_defaults) */
} key_def;


void sim_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
static const char *const boundary_names[] = {"periodic", "wall", "fixed", NULL};
static const char *const placement_names[] = {"random", "center", NULL};
static const char *const species_placement_names[] = {"random", "center", "map", NULL};
static const char *const resample_names[] = {"none", "nearest", NULL};
static const char *const colormap_names[] = {"viridis", "magma", "inferno", "gray", NULL};
/* A boolean's spellings, false then true in pairs: written back as 0 or 1 (INI) and false or
 * true (JSON); read in any letter case. */
static const char *const bool_names[] = {"0", "1", "false", "true", "no", "yes", "off", "on", NULL};

#define OFF(f) offsetof(sim_scenario, f)
static const key_def keys[] = {
    {"world", "width", K_INT, OFF(width), 1, SIM_MAX_DIM, 0, NULL, "512"},
    {"world", "height", K_INT, OFF(height), 1, SIM_MAX_DIM, 0, NULL, "512"},
    {"world", "boundary", K_ENUM, OFF(boundary), 0, 0, 0, boundary_names, "periodic"},
    {"world", "fixed_top", K_FLOAT, OFF(fixed_top), -1e6, 1e6, 0, NULL, "0"},
    {"world", "fixed_bottom", K_FLOAT, OFF(fixed_bottom), -1e6, 1e6, 0, NULL, "0"},
    {"world", "fixed_left", K_FLOAT, OFF(fixed_left), -1e6, 1e6, 0, NULL, "0"},
    {"world", "fixed_right", K_FLOAT, OFF(fixed_right), -1e6, 1e6, 0, NULL, "0"},
    {"world", "walls", K_MAP, OFF(walls), 0, 0, 0, NULL, ""},
    {"world", "map_resample", K_ENUM, OFF(map_resample), 0, 0, 0, resample_names, "none"},
    {"field", "diffusion", K_FLOAT, OFF(diffusion), 0, 1, 1, NULL, "0.5"},
    {"field", "sweeps", K_INT, OFF(sweeps), 0, 10000, 0, NULL, "2"},
    {"field", "decay", K_FLOAT, OFF(decay), 0, 0.999999, 0, NULL, "0.01"},
    {"field", "initial", K_FLOAT, OFF(initial), -1e6, 1e6, 0, NULL, "0"},
    {"field", "init_noise", K_FLOAT, OFF(init_noise), 0, 1e6, 0, NULL, "1"},
    {"agents", "count", K_I64, OFF(count), -1, (double)SIM_MAX_CELLS, 0, NULL, "-1"},
    {"agents", "density", K_DOUBLE, OFF(density), 0, 1, 0, NULL, "0.1"},
    {"agents", "radius", K_INT, OFF(radius), 0, SIM_MAX_RADIUS, 0, NULL, "8"},
    {"agents", "deposit", K_FLOAT, OFF(deposit), -1e6, 1e6, 0, NULL, "1"},
    {"agents", "noise", K_DOUBLE, OFF(noise), 0, 1, 0, NULL, "0.3"},
    {"agents", "placement", K_ENUM, OFF(placement), 0, 0, 0, placement_names, "random"},
    {"run", "seed", K_U64, OFF(seed), 0, 0, 0, NULL, "1"},
    {"run", "steps", K_I64, OFF(steps), 0, 1e15, 0, NULL, "500"},
    {"output", "dir", K_PATH, OFF(dir), 0, 0, 0, NULL, "horizon-out"},
    {"output", "frames_every", K_I64, OFF(frames_every), 0, 1e15, 0, NULL, "10"},
    {"output", "frame_width", K_INT, OFF(frame_width), 0, 16384, 0, NULL, "0"},
    {"output", "frame_height", K_INT, OFF(frame_height), 0, 16384, 0, NULL, "0"},
    {"output", "colormap", K_ENUM, OFF(colormap), 0, 0, 0, colormap_names, "viridis"},
    {"output", "range_max", K_FLOAT, OFF(range_max), 0, 1e12, 0, NULL, "0"},
    {"output", "legend", K_BOOL, OFF(legend), 0, 1, 0, NULL, "0"},
    {"output", "stats_every", K_I64, OFF(stats_every), 0, 1e15, 0, NULL, "1"},
    {"output", "dump_fields_every", K_I64, OFF(dump_fields_every), 0, 1e15, 0, NULL, "0"},
    {"output", "field", K_TEXT, OFF(output_field), 0, SIM_NAME_MAX, 0, NULL, ""},
    {"model", "description", K_TEXT, OFF(description), 0, SIM_PATH_MAX, 0, NULL, ""},
};
#define NKEYS (sizeof keys / sizeof keys[0])

/* The keys of the named sections, with offsets into sim_field_spec and sim_species_spec. The
 * defaults of a field are the [field] shorthand's. */
#define FOFF(f) offsetof(sim_field_spec, f)
#define SOFF(f) offsetof(sim_species_spec, f)
static const key_def field_keys[] = {
    {"field", "diffusion", K_FLOAT, FOFF(diffusion), 0, 1, 1, NULL, "0.5"},
    {"field", "sweeps", K_INT, FOFF(sweeps), 0, 10000, 0, NULL, "2"},
    {"field", "decay", K_FLOAT, FOFF(decay), 0, 0.999999, 0, NULL, "0.01"},
    {"field", "initial", K_FLOAT, FOFF(initial), -1e6, 1e6, 0, NULL, "0"},
    {"field", "init_noise", K_FLOAT, FOFF(init_noise), 0, 1e6, 0, NULL, "1"},
    {"field", "map", K_MAP, FOFF(map), 0, 0, 0, NULL, ""},
    {"field", "map_scale", K_FLOAT, FOFF(map_scale), -1e6, 1e6, 0, NULL, "1"},
    {"field", "growth", K_FLOAT, FOFF(growth), 0, 1e6, 0, NULL, "0"},
    {"field", "capacity", K_FLOAT, FOFF(capacity), 0, 1e6, 0, NULL, "1"},
    {"field", "capacity_map", K_MAP, FOFF(capacity_map), 0, 0, 0, NULL, ""},
    {"field", "sources", K_MAP, FOFF(sources), 0, 0, 0, NULL, ""},
    {"field", "source_value", K_FLOAT, FOFF(source_value), -1e6, 1e6, 0, NULL, "1"},
};
static const key_def species_keys[] = {
    {"species", "count", K_I64, SOFF(count), -1, (double)SIM_MAX_CELLS, 0, NULL, "-1"},
    {"species", "density", K_DOUBLE, SOFF(density), 0, 1, 0, NULL, "0.1"},
    {"species", "placement", K_ENUM, SOFF(placement), 0, 0, 0, species_placement_names, "random"},
    {"species", "placement_map", K_MAP, SOFF(placement_map), 0, 0, 0, NULL, ""},
    {"species", "radius", K_INT, SOFF(radius), 0, SIM_MAX_RADIUS, 0, NULL, "8"},
    {"species", "noise", K_DOUBLE, SOFF(noise), 0, 1, 0, NULL, "0.3"},
    {"species", "sense", K_TEXT, SOFF(sense), 0, SIM_LIST_MAX, 0, NULL, ""},
    {"species", "deposit", K_TEXT, SOFF(deposit), 0, SIM_LIST_MAX, 0, NULL, ""},
    {"species", "energy", K_FLOAT, SOFF(energy), 0, 1e6, 0, NULL, "10"},
    {"species", "uptake", K_TEXT, SOFF(uptake), 0, SIM_LIST_MAX, 0, NULL, ""},
    {"species", "metabolism", K_FLOAT, SOFF(metabolism), 0, 1e6, 0, NULL, "0"},
    {"species", "max_age", K_I64, SOFF(max_age), 0, 1e15, 0, NULL, "0"},
    {"species", "birth_energy", K_FLOAT, SOFF(birth_energy), 0, 1e6, 0, NULL, "0"},
    {"species", "eats", K_TEXT, SOFF(eats), 0, SIM_LIST_MAX, 0, NULL, ""},
};
#define NFKEYS (sizeof field_keys / sizeof field_keys[0])
#define NSKEYS (sizeof species_keys / sizeof species_keys[0])

static const key_def *find_key(const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
            return &keys[i];
    return NULL;
}

/* The index of the first key of a section (its slot in per-section tables), or -1. */
static int section_index(const char *section, size_t len)
{
    for (size_t i = 0; i < NKEYS; i++)
        if (strlen(keys[i].section) == len && memcmp(keys[i].section, section, len) == 0)
            return (int)i;
    return -1;
}

static int section_known(const char *section)
{
    return section_index(section, strlen(section)) >= 0;
}

/* The slot of sc->origin that remembers where key k was set, or -1 for a key that
 * sim_scenario_validate does not relate to others. */
static int origin_slot(const key_def *k)
{
    switch (k->offset) {
    case OFF(width): return SIM_ORIGIN_WIDTH;
    case OFF(height): return SIM_ORIGIN_HEIGHT;
    case OFF(count): return SIM_ORIGIN_COUNT;
    default: return -1;
    }
}

/* "(allowed 1 .. 65536)" or "(allowed periodic|wall|fixed)". */
static void allowed_text(const key_def *k, char *buf, size_t n)
{
    if (k->type == K_ENUM) {
        size_t used = (size_t)snprintf(buf, n, "(allowed ");
        for (int i = 0; k->names[i] && used < n; i++)
            used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? "|" : "", k->names[i]);
        if (used < n)
            snprintf(buf + used, n - used, ")");
    } else if (k->type == K_U64) {
        snprintf(buf, n, "(allowed 0 .. 18446744073709551615)");
    } else if (k->type == K_PATH) {
        snprintf(buf, n, "(allowed a path of 1 .. %d bytes)", SIM_PATH_MAX - 1);
    } else if (k->type == K_TEXT) {
        snprintf(buf, n, "(allowed one line of 0 .. %d bytes)", (int)k->hi - 1);
    } else if (k->type == K_BOOL) {
        snprintf(buf, n, "(allowed 0|1|true|false|yes|no|on|off)");
    } else {
        snprintf(buf, n, "(allowed %s%.9g .. %.9g%s)", k->lo_open ? "> " : "", k->lo, k->hi,
                 k->type == K_INT || k->type == K_I64 ? ", an integer" : "");
    }
}

static int bad_in(const key_def *k, const char *section, const char *where, const char *value,
                  const char *what, sim_err *err)
{
    char allowed[160];
    allowed_text(k, allowed, sizeof allowed);
    /* a long value would push the allowed range out of the one-line message */
    int n = strlen(value) > 64 ? 48 : 64;
    return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: %s '%.*s%s' %s", where, section, k->name,
                       what, n, value, strlen(value) > 64 ? "..." : "", allowed);
}

static int parse_number(const char *s, int integer, double *out)
{
    char *end;
    errno = 0;
    while (*s == ' ' || *s == '\t')
        s++;
    if (*s == '\0')
        return 0;
    double v;
    if (integer) {
        long long ll = strtoll(s, &end, 10);
        v = (double)ll;
    } else {
        v = strtod(s, &end);
    }
    while (*end == ' ' || *end == '\t')
        end++;
    if (*end != '\0' || errno == ERANGE || !isfinite(v))
        return 0;
    *out = v;
    return 1;
}

/* Whether a number is inside k's range. An open bound also refuses values that round to it as
 * a float (1e-60 -> 0); NaN is outside every range. */
static int in_range(const key_def *k, double v)
{
    return v >= k->lo && v <= k->hi && !(k->lo_open && v == k->lo) &&
           !(k->lo_open && k->type == K_FLOAT && (float)v == (float)k->lo);
}

/* Makes a relative K_MAP path absolute against base (a directory; NULL: the working
 * directory) into out (SIM_PATH_MAX bytes). 0 when it does not fit. */
static int absolute_path(const char *value, const char *base, char *out)
{
    char cwd[SIM_PATH_MAX];
    if (value[0] == '/' || value[0] == '\0')
        return snprintf(out, SIM_PATH_MAX, "%s", value) < SIM_PATH_MAX;
    if (!base) {
        if (!getcwd(cwd, sizeof cwd))
            return 0;
        base = cwd;
    }
    return snprintf(out, SIM_PATH_MAX, "%s/%s", base, value) < SIM_PATH_MAX;
}

/* The directory K_MAP paths of the text being parsed are relative to (sim_scenario_parse_file
 * sets it for the duration of the parse; NULL: the working directory). */
static _Thread_local const char *map_base;

/* Why the text value v of key k (a path, a text, a map) could not be written into a scenario
 * file and read back as itself, or NULL: a file holds one line a value, of at most
 * INI_MAX_LINE - 1 characters once written as "key = value", libinih drops the blanks around
 * the value, and reads a ';' after a blank as the start of a comment, including one at the
 * value's start once written as "key = ;...". Refused when set, so that every scenario
 * sim_scenario_write_ini writes reads back the same. */
static const char *not_ini_text(const key_def *k, const char *v)
{
    if (strpbrk(v, "\r\n"))
        return "not one line";
    size_t n = strlen(v);
    /* output.dir (the one K_PATH) may be longer: checkpoints hold "." in its place */
    if (k->type != K_PATH && strlen(k->name) + 3 + n > INI_MAX_LINE - 1)
        return "longer than a line of a scenario file holds (199 characters, 'key = ' included)";
    if (n && (isspace((unsigned char)v[0]) || isspace((unsigned char)v[n - 1])))
        return "blanks around it (a scenario file drops them)";
    if (v[0] == ';')
        return "starts with ';' (a scenario file reads it as a comment)";
    for (size_t i = 1; i < n; i++)
        if (v[i] == ';' && isspace((unsigned char)v[i - 1]))
            return "a ';' after a blank (a scenario file reads the rest as a comment)";
    return NULL;
}

/* Parses value by k's type and range into the struct at base (sc, or one of its named
 * sections). */
static int set_value(void *base, const key_def *k, const char *section, const char *value,
                     const char *where, sim_err *err)
{
    char *field = (char *)base + k->offset;
    switch (k->type) {
    case K_ENUM:
        for (int i = 0; k->names[i]; i++)
            if (strcmp(k->names[i], value) == 0) {
                *(int *)field = i;
                return SIM_OK;
            }
        return bad_in(k, section, where, value, "unknown value", err);
    case K_BOOL:
        for (int i = 0; bool_names[i]; i++)
            if (strcasecmp(bool_names[i], value) == 0) {
                *(int *)field = i % 2;
                return SIM_OK;
            }
        return bad_in(k, section, where, value, "not a boolean", err);
    case K_MAP: {
        char full[SIM_PATH_MAX];
        const char *why = not_ini_text(k, value);
        if (why)
            return bad_in(k, section, where, value, why, err);
        if (!absolute_path(value, map_base, full))
            return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: path too long (at most %d bytes "
                               "once made absolute)", where, section, k->name,
                               SIM_PATH_MAX - 1);
        /* the absolute path is what a written scenario holds */
        if ((why = not_ini_text(k, full)) != NULL)
            return bad_in(k, section, where, full, why, err);
        memcpy(field, full, strlen(full) + 1);
        return SIM_OK;
    }
    case K_PATH:
    case K_TEXT: {
        /* a K_TEXT's hi is its buffer's size */
        size_t cap = k->type == K_TEXT ? (size_t)k->hi : SIM_PATH_MAX;
        if (strlen(value) >= cap)
            return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: value too long (at most %zu bytes, "
                               "got %zu)", where, section, k->name, cap - 1, strlen(value));
        if (value[0] == '\0' && k->type == K_PATH)
            return bad_in(k, section, where, value, "bad path", err);
        const char *why = not_ini_text(k, value);
        if (why)
            return bad_in(k, section, where, value, why, err);
        memcpy(field, value, strlen(value) + 1);
        return SIM_OK;
    }
    case K_U64: {
        char *end;
        errno = 0;
        /* strtoull would skip blanks and wrap "-1" around; base 10 like every other key */
        if (value[0] < '0' || value[0] > '9')
            return bad_in(k, section, where, value, "not an unsigned integer", err);
        unsigned long long u = strtoull(value, &end, 10);
        if (*end != '\0' || errno == ERANGE)
            return bad_in(k, section, where, value, "not an unsigned integer", err);
        *(uint64_t *)field = (uint64_t)u;
        return SIM_OK;
    }
    default: {
        int integer = k->type == K_INT || k->type == K_I64;
        double v;
        if (!parse_number(value, integer, &v))
            return bad_in(k, section, where, value, integer ? "not an integer" : "not a number", err);
        if (!in_range(k, v))
            return bad_in(k, section, where, value, "out of range", err);
        if (k->type == K_INT)
            *(int *)field = (int)v;
        else if (k->type == K_I64)
            *(int64_t *)field = (int64_t)v;
        else if (k->type == K_FLOAT)
            *(float *)field = (float)v;
        else
            *(double *)field = v;
        return SIM_OK;
    }
    }
}

/* A named section's kind: its key table, the struct of slot `slot` and the count of slots. */
typedef struct named_kind {
    const char *prefix; /* "field", "species" */
    const key_def *keys;
    size_t nkeys;
    int max;
} named_kind;

static const named_kind named_kinds[2] = {
    {"field", field_keys, NFKEYS, SIM_MAX_FIELDS},
    {"species", species_keys, NSKEYS, SIM_MAX_SPECIES},
};

static void *named_base(sim_scenario *sc, int kind, int slot)
{
    return kind == 0 ? (void *)&sc->fields[slot] : (void *)&sc->species[slot];
}

static int *named_count(sim_scenario *sc, int kind)
{
    return kind == 0 ? &sc->n_fields : &sc->n_species;
}

static const char *named_name(const sim_scenario *sc, int kind, int slot)
{
    return kind == 0 ? sc->fields[slot].name : sc->species[slot].name;
}

/* The kind of a section "field.NAME" or "species.NAME" (0, 1), or -1; *name is then NAME. */
static int named_kind_of(const char *section, const char **name)
{
    for (int k = 0; k < 2; k++) {
        size_t n = strlen(named_kinds[k].prefix);
        if (strncmp(section, named_kinds[k].prefix, n) == 0 && section[n] == '.') {
            *name = section + n + 1;
            return k;
        }
    }
    return -1;
}

int sim_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= SIM_NAME_MAX || !(name[0] >= 'a' && name[0] <= 'z'))
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
              name[i] == '_'))
            return 0;
    return 1;
}

/* The slot of the named section, added (with its defaults) when it is new. -1 with the
 * message in err for a bad name or one section too many. */
static int named_slot(sim_scenario *sc, int kind, const char *name, const char *where,
                      sim_err *err)
{
    const named_kind *nk = &named_kinds[kind];
    int *count = named_count(sc, kind);
    for (int i = 0; i < *count; i++)
        if (strcmp(named_name(sc, kind, i), name) == 0)
            return i;
    if (!sim_name_valid(name) || strcmp(name, "occ") == 0) {
        sim_err_set(err, SIM_EINVAL, "%s: [%s.%s]: bad name (allowed a lower-case letter, then "
                    "letters, digits or _, at most %d bytes; not 'occ')", where, nk->prefix, name,
                    SIM_NAME_MAX - 1);
        return -1;
    }
    if (*count >= nk->max) {
        sim_err_set(err, SIM_EINVAL, "%s: [%s.%s]: too many %s sections (allowed at most %d)",
                    where, nk->prefix, name, nk->prefix, nk->max);
        return -1;
    }
    int slot = (*count)++;
    void *base = named_base(sc, kind, slot);
    memset(base, 0, kind == 0 ? sizeof(sim_field_spec) : sizeof(sim_species_spec));
    for (size_t i = 0; i < nk->nkeys; i++) {
        int rc = set_value(base, &nk->keys[i], nk->prefix, nk->keys[i].defval, "default", NULL);
        (void)rc; /* constants, checked by the tests */
    }
    snprintf((char *)base, SIM_NAME_MAX, "%s", name); /* name is the first member of both */
    return slot;
}

static int set_named_key(sim_scenario *sc, int kind, const char *section, const char *name,
                         const char *key, const char *value, const char *where, sim_err *err)
{
    const named_kind *nk = &named_kinds[kind];
    const key_def *k = NULL;
    for (size_t i = 0; i < nk->nkeys; i++)
        if (strcmp(nk->keys[i].name, key) == 0)
            k = &nk->keys[i];
    if (!k) {
        char names[320];
        size_t used = 0;
        names[0] = '\0';
        for (size_t i = 0; i < nk->nkeys && used < sizeof names; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", used ? "|" : "",
                                     nk->keys[i].name);
        return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: unknown key (allowed %s)", where, section,
                           key, names);
    }
    /* Sections come from their headers (or sim_scenario_add_section): a key of a section the
     * scenario lacks is a mistake (a misspelt --set or swept name), never a new species. */
    const int count = *named_count(sc, kind);
    int slot = -1;
    for (int i = 0; i < count; i++)
        if (strcmp(named_name(sc, kind, i), name) == 0)
            slot = i;
    if (slot < 0) {
        if (count >= nk->max) /* a header past the last slot got none */
            return sim_err_set(err, SIM_EINVAL, "%s: [%s]: too many %s sections (allowed at "
                               "most %d)", where, section, nk->prefix, nk->max);
        char names[SIM_MAX_SPECIES * (SIM_NAME_MAX + 2) + 8];
        size_t used = 0;
        names[0] = '\0';
        for (int i = 0; i < count; i++)
            used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "",
                                     named_name(sc, kind, i));
        return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: the scenario has no [%s] section (its "
                           "%s sections: %s)", where, section, key, section, nk->prefix,
                           count ? names : "none");
    }
    return set_value(named_base(sc, kind, slot), k, section, value, where, err);
}

/* The definition of a key of a fixed section or of "field.NAME" / "species.NAME" (any NAME),
 * or NULL. */
static const key_def *any_key(const char *section, const char *key)
{
    const char *name;
    int kind = named_kind_of(section, &name);
    if (kind < 0)
        return find_key(section, key);
    for (size_t i = 0; i < named_kinds[kind].nkeys; i++)
        if (strcmp(named_kinds[kind].keys[i].name, key) == 0)
            return &named_kinds[kind].keys[i];
    return NULL;
}

int sim_scenario_has_key(const char *section, const char *key)
{
    return any_key(section, key) != NULL;
}

int sim_scenario_add_section(sim_scenario *sc, const char *section, const char *where,
                             sim_err *err)
{
    const char *name;
    int kind = named_kind_of(section, &name);
    if (kind < 0)
        return sim_err_set(err, SIM_EINVAL, "%s: [%s]: not a named section (field.NAME or "
                           "species.NAME)", where, section);
    return named_slot(sc, kind, name, where, err) < 0 ? SIM_EINVAL : SIM_OK;
}

int sim_scenario_set_key(sim_scenario *sc, const char *section, const char *key,
                         const char *value, const char *where, sim_err *err)
{
    const char *name;
    int kind = named_kind_of(section, &name);
    if (kind >= 0)
        return set_named_key(sc, kind, section, name, key, value, where, err);
    const key_def *k = find_key(section, key);
    if (!k) {
        if (!section_known(section))
            return sim_err_set(err, SIM_EINVAL,
                               "%s: [%s]: unknown section (allowed world|field|agents|run|output|model|"
                               "field.NAME|species.NAME)",
                               where, section);
        char names[256];
        size_t used = 0;
        names[0] = '\0';
        for (size_t i = 0; i < NKEYS && used < sizeof names; i++)
            if (strcmp(keys[i].section, section) == 0)
                used += (size_t)snprintf(names + used, sizeof names - used, "%s%s",
                                         used ? "|" : "", keys[i].name);
        return sim_err_set(err, SIM_EINVAL, "%s: %s.%s: unknown key (allowed %s)", where, section,
                           key, names);
    }
    if (strcmp(section, "field") == 0 && strcmp(where, "default") != 0)
        sc->shorthand |= 1;
    if (strcmp(section, "agents") == 0 && strcmp(where, "default") != 0)
        sc->shorthand |= 2;
    int rc = set_value(sc, k, section, value, where, err);
    int slot = origin_slot(k);
    if (rc == SIM_OK && slot >= 0) {
        snprintf(sc->origin.where[slot], sizeof sc->origin.where[slot], "%s", where);
        sc->origin.order[slot] = ++sc->origin.next;
    }
    return rc;
}

void sim_scenario_defaults(sim_scenario *sc)
{
    memset(sc, 0, sizeof *sc);
    for (size_t i = 0; i < NKEYS; i++) {
        int rc = sim_scenario_set_key(sc, keys[i].section, keys[i].name, keys[i].defval,
                                      "default", NULL);
        (void)rc; /* the defaults are constants checked by the tests */
    }
    memset(&sc->origin, 0, sizeof sc->origin); /* a default is nobody's doing */
}

/* libinih reads line by line through this reader, which counts lines so that the handler can
 * name the line of a bad key (the Debian build has no INI_HANDLER_LINENO). */
typedef struct parse_ctx {
    sim_scenario *sc;
    const char *name;
    const char *text; /* remaining text */
    int line;
    int failed;    /* first line refused (a bad or duplicate key or section), 0 if none */
    int long_line; /* line that did not fit libinih's buffer, 0 if none */
    int in_key;    /* a key line since the last section header: libinih's multi-line state */
    int key_line[NKEYS];     /* line that set each key in this text, 0 if none */
    int section_line[NKEYS]; /* line of each section's header, by section_index; 0 if none */
    /* the same for the named sections: by kind, slot and key; headers by their text */
    int named_key_line[2][SIM_MAX_SPECIES > SIM_MAX_FIELDS ? SIM_MAX_SPECIES : SIM_MAX_FIELDS]
                      [NFKEYS > NSKEYS ? NFKEYS : NSKEYS];
    char named_header[2 * (SIM_MAX_FIELDS + SIM_MAX_SPECIES)][SIM_NAME_MAX + 16];
    int named_header_line[2 * (SIM_MAX_FIELDS + SIM_MAX_SPECIES)];
    sim_err *err;
} parse_ctx;

/* libinih does not tell the handler about section headers, so the reader spots them by
 * libinih's rules, to refuse a section given twice: blanks skipped (and a UTF-8 BOM on line
 * 1), ';' and '#' start comments, an indented line after a key continues that key's value,
 * and "[name]" ends at the first ']' unless a ';' after a blank starts a comment first.
 * Returns 0, or SIM_EINVAL with the message in ctx->err. */
static int check_section_line(parse_ctx *ctx, const char *line_text, int line)
{
    const char *s = line_text;
    if (line == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
        s += 3;
    const char *start = s;
    while (*start && isspace((unsigned char)*start))
        start++;
    if (*start == '\0' || *start == ';' || *start == '#')
        return 0;
    if (ctx->in_key && start > line_text)
        return 0; /* a continuation line; the handler sees it as a second value of the key */
    if (*start != '[') {
        ctx->in_key = 1;
        return 0;
    }
    const char *end = start + 1;
    while (*end && *end != ']' && !(*end == ';' && isspace((unsigned char)end[-1])))
        end++;
    if (*end != ']')
        return 0; /* libinih reports the syntax error */
    ctx->in_key = 0;
    size_t len = (size_t)(end - start - 1);
    int idx = section_index(start + 1, len);
    if (idx < 0 && len < SIM_NAME_MAX + 16) {
        char header[SIM_NAME_MAX + 16];
        memcpy(header, start + 1, len);
        header[len] = '\0';
        const char *name;
        int kind = named_kind_of(header, &name);
        if (kind < 0)
            return 0;
        int n = (int)(sizeof ctx->named_header / sizeof ctx->named_header[0]);
        for (int i = 0; i < n; i++) {
            if (ctx->named_header_line[i] && strcmp(ctx->named_header[i], header) == 0)
                return sim_err_set(ctx->err, SIM_EINVAL, "%s:%d: [%s]: duplicate section "
                                   "(first at line %d)", ctx->name, line, header,
                                   ctx->named_header_line[i]);
            if (!ctx->named_header_line[i]) {
                memcpy(ctx->named_header[i], header, len + 1);
                ctx->named_header_line[i] = line;
                /* the section exists from its header on, keys or not */
                char where[SIM_PATH_MAX + 32];
                snprintf(where, sizeof where, "%s:%d", ctx->name, line);
                return named_slot(ctx->sc, kind, name, where, ctx->err) < 0 ? SIM_EINVAL : 0;
            }
        }
        return 0; /* more sections than slots: refused at the first key of one too many */
    }
    if (idx < 0)
        return 0; /* unknown: refused at its first key, and harmless without one */
    if (ctx->section_line[idx])
        return sim_err_set(ctx->err, SIM_EINVAL, "%s:%d: [%s]: duplicate section (first at "
                           "line %d)", ctx->name, line, keys[idx].section,
                           ctx->section_line[idx]);
    ctx->section_line[idx] = line;
    return 0;
}

static char *reader(char *buf, int size, void *stream)
{
    parse_ctx *ctx = stream;
    const char *s = ctx->text;
    if (*s == '\0')
        return NULL;
    int n = 0;
    while (n < size - 1 && s[n] != '\0') {
        buf[n] = s[n];
        n++;
        if (buf[n - 1] == '\n')
            break;
    }
    buf[n] = '\0';
    if (!ctx->failed && check_section_line(ctx, buf, ctx->line + 1) != SIM_OK) {
        ctx->failed = ctx->line + 1;
        return NULL; /* the first error of the text; nothing after it matters */
    }
    if (n == size - 1 && buf[n - 1] != '\n' && s[n] == '\n') {
        n++; /* the line fits; only its newline did not */
    } else if (n == size - 1 && buf[n - 1] != '\n' && s[n] != '\0') {
        /* libinih would cut the line into pieces and parse each as a line (a shortened value,
         * bogus line numbers): stop here and report it */
        ctx->long_line = ctx->line + 1;
        return NULL;
    }
    ctx->text = s + n;
    if (n > 0 && s[n - 1] == '\n')
        ctx->line++;
    return buf;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
    parse_ctx *ctx = user;
    if (ctx->failed)
        return 0;
    char where[SIM_PATH_MAX + 32];
    /* the reader has counted the newline of the current line already, unless it is the last */
    int line = ctx->line + (ctx->text[0] == '\0' && ctx->text[-1] != '\n' ? 1 : 0);
    snprintf(where, sizeof where, "%s:%d", ctx->name, line);
    /* A second value (a repeated key, or libinih's continuation of the value on an indented
     * line) would silently replace the first. --set overrides are another matter: they are
     * applied to the parsed scenario, not to the text. */
    const key_def *k = find_key(section, name);
    int *seen = k ? &ctx->key_line[k - keys] : NULL;
    const char *sname;
    int kind = named_kind_of(section, &sname);
    if (kind >= 0) {
        const named_kind *nk = &named_kinds[kind];
        int *count = named_count(ctx->sc, kind);
        for (int slot = 0; slot < *count; slot++)
            if (strcmp(named_name(ctx->sc, kind, slot), sname) == 0)
                for (size_t i = 0; i < nk->nkeys; i++)
                    if (strcmp(nk->keys[i].name, name) == 0)
                        seen = &ctx->named_key_line[kind][slot][i];
    }
    if (seen && *seen) {
        sim_err_set(ctx->err, SIM_EINVAL, "%s: %s.%s: duplicate (first at line %d)", where,
                    section, name, *seen);
        ctx->failed = line;
        return 0;
    }
    if (sim_scenario_set_key(ctx->sc, section, name, value, where, ctx->err) != SIM_OK) {
        ctx->failed = line;
        return 0;
    }
    if (kind >= 0 && !seen) {
        /* the section was new: its slot is the last one */
        const named_kind *nk = &named_kinds[kind];
        int slot = *named_count(ctx->sc, kind) - 1;
        for (size_t i = 0; i < nk->nkeys; i++)
            if (strcmp(nk->keys[i].name, name) == 0)
                seen = &ctx->named_key_line[kind][slot][i];
    }
    if (seen)
        *seen = line;
    return 1;
}

int sim_scenario_parse_string(sim_scenario *sc, const char *text, const char *name, sim_err *err)
{
    parse_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.sc = sc;
    ctx.name = name;
    ctx.text = text;
    ctx.err = err;
    int rc = ini_parse_stream(reader, &ctx, handler, &ctx);
    /* Report the first error of the text, whatever its kind; parsing stops at a long line. */
    if (rc > 0 && (!ctx.failed || rc < ctx.failed))
        return sim_err_set(err, SIM_EINVAL, "%s:%d: syntax error (expected [section] or key = "
                           "value)", name, rc);
    if (ctx.failed)
        return SIM_EINVAL;
    if (ctx.long_line)
        return sim_err_set(err, SIM_EINVAL, "%s:%d: line too long (allowed at most %d "
                           "characters; give longer values with --set)", name, ctx.long_line,
                           INI_MAX_LINE - 1);
    if (rc < 0)
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory while parsing", name);
    return sim_scenario_validate(sc, err); /* its message names the line at fault */
}

int sim_scenario_parse_file(sim_scenario *sc, const char *path, sim_err *err)
{
    char *text;
    int rc = sim_text_read(path, "scenario", 16u << 20, &text, NULL, err);
    if (rc != SIM_OK)
        return rc;
    /* Map paths in the file are relative to its directory, made absolute. */
    char dir[SIM_PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", (int)(slash == path ? 1 : slash - path), path);
    char base[SIM_PATH_MAX];
    if (!absolute_path(dir, NULL, base))
        snprintf(base, sizeof base, "%s", dir);
    map_base = base;
    rc = sim_scenario_parse_string(sc, text, path, err);
    map_base = NULL;
    sim_free(text);
    return rc;
}

int sim_scenario_set(sim_scenario *sc, const char *assignment, sim_err *err)
{
    int rc = sim_scenario_assign(sc, assignment, err);
    return rc != SIM_OK ? rc : sim_scenario_validate(sc, err);
}

int sim_scenario_assign(sim_scenario *sc, const char *assignment, sim_err *err)
{
    /* The value (a path of up to SIM_PATH_MAX - 1 bytes) is not copied, and the message names
     * the argument by its start only: what is wrong with a long value follows anyway. */
    char where[96];
    if (strlen(assignment) > 64)
        snprintf(where, sizeof where, "--set %.48s...", assignment);
    else
        snprintf(where, sizeof where, "--set %s", assignment);
    const char *eq = strchr(assignment, '=');
    const char *dot = NULL; /* the last one before '=': species.NAME.key */
    for (const char *p = assignment; eq && p < eq; p++)
        if (*p == '.')
            dot = p;
    if (!eq || !dot || dot > eq)
        return sim_err_set(err, SIM_EINVAL, "%s: expected section.key=value (e.g. "
                           "world.width=256)", where);
    char section[64], key[64];
    size_t ns = (size_t)(dot - assignment), nk = (size_t)(eq - dot - 1);
    if (ns >= sizeof section || nk >= sizeof key)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown key (no section or key name is longer "
                           "than %zu bytes)", where, sizeof key - 1);
    memcpy(section, assignment, ns);
    section[ns] = '\0';
    memcpy(key, dot + 1, nk);
    key[nk] = '\0';
    return sim_scenario_set_key(sc, section, key, eq + 1, where, err);
}

int64_t sim_scenario_agent_count(const sim_scenario *sc)
{
    int64_t cells = (int64_t)sc->width * sc->height;
    if (sc->count >= 0)
        return sc->count;
    return (int64_t)floor(sc->density * (double)cells);
}

int sim_scenario_validate(const sim_scenario *sc, sim_err *err)
{
    const sim_scenario_origins *o = &sc->origin;
    int64_t cells = (int64_t)sc->width * sc->height;
    /* Of width and height, the one set last made the world too large (or, after a series of
     * overrides, too small for the agents): that is the line or option to name. */
    int size_slot = o->order[SIM_ORIGIN_HEIGHT] >= o->order[SIM_ORIGIN_WIDTH]
                        ? SIM_ORIGIN_HEIGHT
                        : SIM_ORIGIN_WIDTH;
    const char *size_key = size_slot == SIM_ORIGIN_HEIGHT ? "world.height" : "world.width";
    const char *where = o->where[size_slot];
    if (cells > SIM_MAX_CELLS)
        return sim_err_set(err, SIM_EINVAL, "%s%s%s: width*height = %d*%d = %lld cells (allowed "
                           "at most %lld)", where, *where ? ": " : "", size_key, sc->width,
                           sc->height, (long long)cells, (long long)SIM_MAX_CELLS);
    if (sc->count > cells) {
        /* The count is named; when the world size was set after it (an override that shrank
         * the world), say where, too. */
        char later[SIM_PATH_MAX + 64] = "";
        if (o->where[size_slot][0] && o->order[size_slot] > o->order[SIM_ORIGIN_COUNT])
            snprintf(later, sizeof later, "; %s from %s", size_key, o->where[size_slot]);
        where = o->where[SIM_ORIGIN_COUNT];
        return sim_err_set(err, SIM_EINVAL, "%s%sagents.count: %lld is more than the %lld cells "
                           "of the %dx%d world (allowed 0 .. %lld, or -1 to use "
                           "agents.density%s)", where, *where ? ": " : "", (long long)sc->count,
                           (long long)cells, sc->width, sc->height, (long long)cells, later);
    }
    if (sc->n_fields > 0 && (sc->shorthand & 1))
        return sim_err_set(err, SIM_EINVAL, "[field]: cannot be mixed with [field.NAME] sections "
                           "(give every field a name)");
    if (sc->n_species > 0 && (sc->shorthand & 2))
        return sim_err_set(err, SIM_EINVAL, "[agents]: cannot be mixed with [species.NAME] "
                           "sections (give every species a name)");
    return sim_model_check(sc, err); /* the names in lists, counts against cells */
}

/* The keys a running simulation may change, and those that never touch the state
 * (SIM_KEYS_*). sim_events.c lists the run-time ones again, with their panel steps; its test
 * checks that the two lists agree. */
static int key_class(const key_def *k)
{
    switch (k->offset) {
    case OFF(noise):
    case OFF(deposit):
    case OFF(radius):
    case OFF(diffusion):
    case OFF(sweeps):
    case OFF(decay): return SIM_KEYS_RUNTIME;
    case OFF(steps): return SIM_KEYS_OUTPUT;
    default: return strcmp(k->section, "output") == 0 ? SIM_KEYS_OUTPUT : SIM_KEYS_FIXED;
    }
}

/* The same for a key of a named section of kind `kind`: a species' noise and radius and a
 * field's diffusion, sweeps and decay change at run time as their shorthand counterparts do;
 * every other key (counts, lists, maps, energies) shapes the model or its initial state. A
 * species' deposit is a list here, so it is not one of them. */
static int named_key_class(int kind, const key_def *k)
{
    int runtime = kind == 0 ? k->offset == FOFF(diffusion) || k->offset == FOFF(sweeps) ||
                                  k->offset == FOFF(decay)
                            : k->offset == SOFF(noise) || k->offset == SOFF(radius);
    return runtime ? SIM_KEYS_RUNTIME : SIM_KEYS_FIXED;
}

static size_t key_bytes(const key_def *k)
{
    switch (k->type) {
    case K_INT:
    case K_ENUM:
    case K_BOOL: return sizeof(int);
    case K_I64: return sizeof(int64_t);
    case K_U64: return sizeof(uint64_t);
    case K_FLOAT: return sizeof(float);
    case K_DOUBLE: return sizeof(double);
    default: return 0; /* K_PATH, K_TEXT, K_MAP: compared as text */
    }
}

/* Whether key k differs between the structs at a and b (a scenario, or a named section). */
static int value_differs(const key_def *k, const char *a, const char *b)
{
    if (k->type == K_PATH || k->type == K_TEXT || k->type == K_MAP)
        return strncmp(a + k->offset, b + k->offset, SIM_PATH_MAX) != 0;
    /* bits, not ==: -0 and 0 write differently, so they are different values here */
    return memcmp(a + k->offset, b + k->offset, key_bytes(k)) != 0;
}

int sim_scenario_diff(const sim_scenario *a, const sim_scenario *b, int ignore, char *key,
                      size_t n)
{
    for (size_t i = 0; i < NKEYS; i++) {
        const key_def *k = &keys[i];
        if (!(key_class(k) & ignore) && value_differs(k, (const char *)a, (const char *)b)) {
            snprintf(key, n, "%s.%s", k->section, k->name);
            return 1;
        }
    }
    for (int kind = 0; kind < 2; kind++) {
        const named_kind *nk = &named_kinds[kind];
        int na = *named_count((sim_scenario *)a, kind), nb = *named_count((sim_scenario *)b, kind);
        /* the sections themselves are fixed: a running model gains or loses none */
        if (na != nb) {
            if (ignore & SIM_KEYS_FIXED)
                continue;
            snprintf(key, n, "[%s.*] sections", nk->prefix);
            return 1;
        }
        for (int slot = 0; slot < na; slot++) {
            const char *fa = named_base((sim_scenario *)a, kind, slot);
            const char *fb = named_base((sim_scenario *)b, kind, slot);
            if (strcmp(fa, fb) != 0) {
                if (ignore & SIM_KEYS_FIXED)
                    continue;
                snprintf(key, n, "[%s.%s]", nk->prefix, fa);
                return 1;
            }
            for (size_t i = 0; i < nk->nkeys; i++) {
                const key_def *k = &nk->keys[i];
                if (!(named_key_class(kind, k) & ignore) && value_differs(k, fa, fb)) {
                    snprintf(key, n, "%s.%s.%s", nk->prefix, fa, k->name);
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* Checks the value of key k in the struct at base (a scenario, or a named section `section`)
 * against its range, as sim_scenario_check_values does. */
static int check_value(const key_def *k, const char *base, const char *section,
                       const char *where, sim_err *err)
{
    const char *field = base + k->offset;
    char text[64];
    double v;
    switch (k->type) {
    case K_INT:
    case K_BOOL: v = *(const int *)field; snprintf(text, sizeof text, "%d", (int)v); break;
    case K_I64:
        v = (double)*(const int64_t *)field;
        snprintf(text, sizeof text, "%" PRId64, *(const int64_t *)field);
        break;
    case K_FLOAT: v = *(const float *)field; snprintf(text, sizeof text, "%.9g", v); break;
    case K_DOUBLE: v = *(const double *)field; snprintf(text, sizeof text, "%.17g", v); break;
    case K_ENUM: {
        int e = *(const int *)field, count = 0;
        while (k->names[count])
            count++;
        if (e < 0 || e >= count) {
            snprintf(text, sizeof text, "%d", e);
            return bad_in(k, section, where, text, "unknown value", err);
        }
        return SIM_OK;
    }
    case K_PATH:
    case K_TEXT: {
        /* a K_TEXT's hi is its buffer's size */
        size_t cap = k->type == K_TEXT ? (size_t)k->hi : SIM_PATH_MAX;
        if ((k->type == K_PATH && field[0] == '\0') || !memchr(field, '\0', cap))
            return bad_in(k, section, where, "", k->type == K_PATH ? "bad path" : "bad text",
                          err);
        return SIM_OK;
    }
    default: return SIM_OK; /* K_U64: every value is allowed; K_MAP: checked when read */
    }
    return in_range(k, v) ? SIM_OK : bad_in(k, section, where, text, "out of range", err);
}

int sim_scenario_check_values(const sim_scenario *sc, int which, const char *where,
                              sim_err *err)
{
    int rc;
    for (size_t i = 0; i < NKEYS; i++)
        if ((key_class(&keys[i]) & which) &&
            (rc = check_value(&keys[i], (const char *)sc, keys[i].section, where, err)) != SIM_OK)
            return rc;
    for (int kind = 0; kind < 2; kind++) {
        const named_kind *nk = &named_kinds[kind];
        for (int slot = 0; slot < *named_count((sim_scenario *)sc, kind); slot++) {
            char section[SIM_NAME_MAX + 16];
            snprintf(section, sizeof section, "%s.%s", nk->prefix, named_name(sc, kind, slot));
            for (size_t i = 0; i < nk->nkeys; i++)
                if ((named_key_class(kind, &nk->keys[i]) & which) &&
                    (rc = check_value(&nk->keys[i], named_base((sim_scenario *)sc, kind, slot),
                                      section, where, err)) != SIM_OK)
                    return rc;
        }
    }
    return SIM_OK;
}

int sim_scenario_key_range(const char *section, const char *key, double *lo, double *hi,
                           int *lo_open)
{
    const key_def *k = any_key(section, key);
    if (!k || k->type == K_ENUM || k->type == K_PATH || k->type == K_TEXT || k->type == K_U64 ||
        k->type == K_BOOL)
        return 0;
    *lo = k->lo;
    *hi = k->hi;
    *lo_open = k->lo_open;
    return 1;
}

static void write_value(const key_def *k, const void *base, FILE *f, int json)
{
    const char *field = (const char *)base + k->offset;
    switch (k->type) {
    case K_INT: fprintf(f, "%d", *(const int *)field); break;
    case K_I64: fprintf(f, "%" PRId64, *(const int64_t *)field); break;
    case K_U64: fprintf(f, "%" PRIu64, *(const uint64_t *)field); break;
    case K_FLOAT: fprintf(f, "%.9g", (double)*(const float *)field); break;
    case K_DOUBLE: fprintf(f, "%.17g", *(const double *)field); break;
    case K_ENUM: fprintf(f, json ? "\"%s\"" : "%s", k->names[*(const int *)field]); break;
    case K_BOOL: fputs(bool_names[(json ? 2 : 0) + (*(const int *)field != 0)], f); break;
    case K_PATH:
    case K_TEXT:
    case K_MAP:
        if (!json) {
            fputs(field, f);
            break;
        }
        sim_json_string(f, field);
        break;
    }
}

/* Whether the INI and JSON texts leave out key k: a shorthand section when named sections of
 * its kind stand in for it. */
static int shorthand_hidden(const sim_scenario *sc, const key_def *k)
{
    return (sc->n_fields > 0 && strcmp(k->section, "field") == 0) ||
           (sc->n_species > 0 && strcmp(k->section, "agents") == 0);
}

/* Calls emit for every section to write, in order: the fixed ones (less the hidden
 * shorthands), then the named ones. */
typedef void (*section_fn)(const char *title, const key_def *ks, size_t n, const void *base,
                           FILE *f, int indent, int *first);

static void for_each_section(const sim_scenario *sc, section_fn emit, FILE *f, int indent)
{
    int first = 1;
    for (size_t i = 0; i < NKEYS;) {
        size_t j = i;
        while (j < NKEYS && strcmp(keys[j].section, keys[i].section) == 0)
            j++;
        if (!shorthand_hidden(sc, &keys[i]))
            emit(keys[i].section, &keys[i], j - i, sc, f, indent, &first);
        i = j;
    }
    for (int kind = 0; kind < 2; kind++)
        for (int slot = 0; slot < *named_count((sim_scenario *)sc, kind); slot++) {
            char title[SIM_NAME_MAX + 16];
            snprintf(title, sizeof title, "%s.%s", named_kinds[kind].prefix,
                     named_name(sc, kind, slot));
            emit(title, named_kinds[kind].keys, named_kinds[kind].nkeys,
                 named_base((sim_scenario *)sc, kind, slot), f, indent, &first);
        }
}

static void ini_section(const char *title, const key_def *ks, size_t n, const void *base,
                        FILE *f, int indent, int *first)
{
    (void)indent;
    fprintf(f, "%s[%s]\n", *first ? "" : "\n", title);
    *first = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s = ", ks[i].name);
        write_value(&ks[i], base, f, 0);
        fputc('\n', f);
    }
}

static void json_section(const char *title, const key_def *ks, size_t n, const void *base,
                         FILE *f, int indent, int *first)
{
    fprintf(f, "%s\n%*s\"%s\": {", *first ? "" : ",", indent + 2, "", title);
    *first = 0;
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%s\n%*s\"%s\": ", i ? "," : "", indent + 4, "", ks[i].name);
        write_value(&ks[i], base, f, 1);
    }
    fprintf(f, "\n%*s}", indent + 2, "");
}

void sim_scenario_write_ini(const sim_scenario *sc, FILE *f)
{
    for_each_section(sc, ini_section, f, 0);
}

void sim_scenario_write_json(const sim_scenario *sc, FILE *f, int indent)
{
    fputs("{", f);
    for_each_section(sc, json_section, f, indent);
    fprintf(f, "\n%*s}", indent, "");
}

const char *sim_boundary_name(int b)
{
    return b >= 0 && b < 3 ? boundary_names[b] : "?";
}

const char *sim_colormap_name(int c)
{
    return c >= 0 && c < SIM_CMAP_COUNT ? colormap_names[c] : "?";
}

const char *sim_placement_name(int p)
{
    return p >= 0 && p < 3 ? species_placement_names[p] : "?";
}

int sim_colormap_from_name(const char *name)
{
    for (int i = 0; colormap_names[i]; i++)
        if (strcmp(colormap_names[i], name) == 0)
            return i;
    return -1;
}
