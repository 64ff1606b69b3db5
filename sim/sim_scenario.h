/* sim_scenario.h - the scenario: every parameter of a run, its defaults, INI parsing (libinih),
 * `--set section.key=value` overrides, validation with precise messages, and serialization. */
#ifndef SIM_SCENARIO_H
#define SIM_SCENARIO_H

#include <stdint.h>
#include <stdio.h>

#include "sim_status.h"

typedef enum sim_boundary {
    SIM_BOUNDARY_PERIODIC = 0, /* the grid wraps in x and y */
    SIM_BOUNDARY_WALL = 1,     /* zero flux: a cell outside mirrors its neighbour inside */
    SIM_BOUNDARY_FIXED = 2     /* a ring of ghost cells with one fixed value per edge */
} sim_boundary;

typedef enum sim_placement {
    SIM_PLACE_RANDOM = 0, /* distinct cells uniformly at random */
    SIM_PLACE_CENTER = 1, /* distinct random cells inside a centred disk, as dense as allowed */
    SIM_PLACE_MAP = 2     /* distinct random cells of a PNG mask (species only) */
} sim_placement;

typedef enum sim_colormap {
    SIM_CMAP_VIRIDIS = 0,
    SIM_CMAP_MAGMA = 1,
    SIM_CMAP_INFERNO = 2,
    SIM_CMAP_GRAY = 3
} sim_colormap;
#define SIM_CMAP_COUNT 4

#define SIM_MAX_DIM 65536           /* cells per side */
#define SIM_MAX_CELLS (1LL << 30)   /* width * height */
#define SIM_MAX_RADIUS 64           /* horizon radius in cells; keeps exact sums inside int64 */
#define SIM_PATH_MAX 1024
#define SIM_MAX_FIELDS 4     /* named [field.NAME] sections */
#define SIM_MAX_SPECIES 4    /* named [species.NAME] sections */
#define SIM_NAME_MAX 24      /* a field or species name: [a-z][a-z0-9_]*, at most 23 bytes */
#define SIM_LIST_MAX 256     /* the text of a list key (sense, deposit, uptake, eats) */


/* A [field.NAME] section (README, "The model"). Map paths are "" when not given; a relative
 * path in a file is taken relative to that file's directory when it is parsed. */
typedef struct sim_field_spec {
    char name[SIM_NAME_MAX];
    float diffusion, decay, initial, init_noise;
    int sweeps;
    char map[SIM_PATH_MAX];          /* initial values: initial + map_scale * map + noise */
    float map_scale;
    float growth;                    /* T' = min(T + growth, capacity) before diffusing */
    float capacity;
    char capacity_map[SIM_PATH_MAX]; /* per-cell capacity: capacity * map */
    char sources[SIM_PATH_MAX];      /* mask of cells held at source_value */
    float source_value;
} sim_field_spec;

/* A [species.NAME] section. The list keys are kept as text and resolved against the names of
 * the fields and species by sim_model_build (sim_model.h). */
typedef struct sim_species_spec {
    char name[SIM_NAME_MAX];
    int64_t count;                    /* -1: density */
    double density;                   /* of the cells that are not walls */
    int placement;                    /* sim_placement */
    char placement_map[SIM_PATH_MAX]; /* with placement = map */
    int radius;
    double noise;
    char sense[SIM_LIST_MAX];         /* "FIELD:w, occ.SPECIES:w, ..." integer weights */
    char deposit[SIM_LIST_MAX];       /* "FIELD:amount, ..." */
    float energy;                     /* at birth and at the start */
    char uptake[SIM_LIST_MAX];        /* "FIELD:amount" */
    float metabolism;
    int64_t max_age;                  /* 0: none */
    float birth_energy;               /* 0: no births */
    char eats[SIM_LIST_MAX];          /* "SPECIES:gain, ..." */
} sim_species_spec;

/* The keys whose values sim_scenario_validate checks against each other. */
enum { SIM_ORIGIN_WIDTH, SIM_ORIGIN_HEIGHT, SIM_ORIGIN_COUNT, SIM_ORIGIN_KEYS };

/* Where those keys got their values, so that a relation error names the line or option to
 * change rather than the whole scenario. */
typedef struct sim_scenario_origins {
    char where[SIM_ORIGIN_KEYS][SIM_PATH_MAX + 32]; /* "big.ini:5", "--set agents.count=9"; ""
                                                       for a default */
    uint32_t order[SIM_ORIGIN_KEYS]; /* a larger one was set later */
    uint32_t next;
} sim_scenario_origins;

/* A plain bundle of parameters (public, copied by value). Units: cells, steps, field units. */
typedef struct sim_scenario {
    /* [world] */
    int width, height;
    int boundary; /* sim_boundary */
    float fixed_top, fixed_bottom, fixed_left, fixed_right;
    /* [field] */
    float diffusion; /* a in T' = (1-a)T + a*avg(neighbours), (0, 1] */
    int sweeps;      /* Jacobi sweeps per step, 0.. */
    float decay;     /* fraction lost per step after the sweeps, [0, 1) */
    float initial;   /* initial value of every cell */
    float init_noise; /* plus a uniform random amount in [0, init_noise) per cell */
    /* [agents] */
    int64_t count;   /* -1: use density */
    double density;  /* agents per cell when count is -1, [0, 1] */
    int radius;      /* horizon radius r in cells, 0..SIM_MAX_RADIUS */
    float deposit;   /* added to the agent's cell every step */
    double noise;    /* probability of a random candidate instead of the best, [0, 1] */
    int placement;   /* sim_placement */
    /* [run] */
    uint64_t seed;
    int64_t steps;
    /* [output] */
    char dir[SIM_PATH_MAX];
    int64_t frames_every;     /* 0: no frames */
    int frame_width, frame_height; /* 0: derived from the world size */
    int colormap;             /* sim_colormap */
    float range_max;          /* colormap maps [0, range_max]; 0: the frame's own maximum */
    int legend;               /* 1: frames carry a colour bar with their range; 0 or 1 */
    int64_t stats_every;      /* 0: no stats rows */
    int64_t dump_fields_every; /* 0: no .npy dumps */
    /* [model] */
    char description[SIM_PATH_MAX]; /* one line for `horizon models`; "" none */
    /* [world] walls and maps, [output] field */
    char walls[SIM_PATH_MAX];        /* PNG mask of wall cells; "" none */
    int map_resample;                /* sim_map_resample (sim_map.h): none, nearest */
    char output_field[SIM_NAME_MAX]; /* the field frames show; "" the first */
    /* [field.NAME] and [species.NAME], in the order of their first appearance */
    int n_fields, n_species;
    sim_field_spec fields[SIM_MAX_FIELDS];
    sim_species_spec species[SIM_MAX_SPECIES];
    /* Not part of the scenario's value: never written, and to be left out of comparisons
     * (compare sim_scenario_write_ini texts, or clear it). */
    sim_scenario_origins origin;
    /* Which shorthand sections were given (1: [field], 2: [agents]) other than by default:
     * they cannot be mixed with named sections of their kind. Not a value either. */
    int shorthand;
} sim_scenario;

/* Fills sc with the built-in defaults of every key (the values documented in the README). */
void sim_scenario_defaults(sim_scenario *sc);

/* The text of the built-in default scenario (assets/scenarios/default.ini, embedded at build). */
const char *sim_scenario_builtin_text(void);

/* Parses INI text on top of the current contents of sc. `name` is used in messages.
 * On failure returns SIM_EINVAL with "name:line: section.key: what is wrong (allowed ...)"
 * in err; sc may then be partly updated and must be discarded. A key or a section given twice
 * in the text is refused ("name:7: agents.noise: duplicate (first at line 4)", "name:9:
 * [agents]: duplicate section (first at line 3)"): the last one would silently win. */
int sim_scenario_parse_string(sim_scenario *sc, const char *text, const char *name, sim_err *err);

/* Reads and parses a file (see parse_string); SIM_EIO if it cannot be read. */
int sim_scenario_parse_file(sim_scenario *sc, const char *path, sim_err *err);

/* Applies one "section.key=value" override. SIM_EINVAL with "--set ARG: what" on failure (a
 * long ARG, a path, shortened to its start and "..."). */
int sim_scenario_set(sim_scenario *sc, const char *assignment, sim_err *err);

/* Like sim_scenario_set without the check of relations between keys, so that a series of
 * overrides can be applied in any order and checked once with sim_scenario_validate. */
int sim_scenario_assign(sim_scenario *sc, const char *assignment, sim_err *err);

/* Sets one key by section and name (the common path of files and --set); `where` prefixes the
 * message ("file:12" or "--set ARG", or the option a value came from) and, for the keys that
 * sim_scenario_validate relates, is kept in sc->origin. */
int sim_scenario_set_key(sim_scenario *sc, const char *section, const char *key,
                         const char *value, const char *where, sim_err *err);

/* 1 when section (a fixed one, or "field.NAME" / "species.NAME") has the key, else 0. */
int sim_scenario_has_key(const char *section, const char *key);

/* Adds the named section "field.NAME" or "species.NAME" with its defaults, as its header in a
 * file does (nothing when it exists). sim_scenario_set_key refuses the keys of a named section
 * the scenario does not have. SIM_EINVAL for a bad name or one section too many. */
int sim_scenario_add_section(sim_scenario *sc, const char *section, const char *where,
                             sim_err *err);

/* Checks the relations between keys: width*height against SIM_MAX_CELLS, agents.count against
 * the cells. The message starts with where the key to change got its value (sc->origin: the
 * later-set of width and height; agents.count), e.g. "big.ini:5: agents.count: 300000 is more
 * than the 262144 cells of the 512x512 world (...)"; no prefix for a value nobody set. */
int sim_scenario_validate(const sim_scenario *sc, sim_err *err);

/* Classes of keys, for sim_scenario_diff. */
enum {
    /* The parameters a running simulation may change (sim_set_params, sim_events.h):
     * agents.noise, agents.deposit, agents.radius, field.diffusion, field.sweeps, field.decay,
     * and of the named sections species.NAME.noise, species.NAME.radius,
     * field.NAME.diffusion, field.NAME.sweeps, field.NAME.decay. */
    SIM_KEYS_RUNTIME = 1,
    /* output.* and run.steps: what a run writes and how long it goes, never the state. */
    SIM_KEYS_OUTPUT = 2,
    /* every other key: the world, its boundary, the initial state, the seed; the named
     * sections themselves (which there are, and their order) */
    SIM_KEYS_FIXED = 4,
    SIM_KEYS_ALL = 7
};

/* The first key, in table order, whose value differs between a and b, leaving out the classes
 * in `ignore` (SIM_KEYS_* or'ed): returns 1 and writes "section.key" into key (n bytes), or
 * returns 0 when they agree. The named sections follow the fixed ones: a different set of them
 * is "[species.*] sections" or "[species.NAME]" (SIM_KEYS_FIXED; with that class ignored, only
 * the keys of sections that match by position and name are compared), a key of one
 * "species.NAME.key". Numbers compare bit for bit, paths as text; sc->origin is not a value and
 * is never compared. */
int sim_scenario_diff(const sim_scenario *a, const sim_scenario *b, int ignore, char *key,
                      size_t n);

/* Checks the value of every key of the classes `which` (SIM_KEYS_* or'ed), the named sections'
 * included, against its allowed range (the check that parsing a value does), for a scenario
 * whose members were set directly rather than parsed. SIM_EINVAL with "where: section.key: out
 * of range 'V' (allowed ...)" (section "species.NAME" for a named one) for the first one
 * outside, in table order. */
int sim_scenario_check_values(const sim_scenario *sc, int which, const char *where,
                              sim_err *err);

/* The allowed range of a numeric key of section (a fixed one, or "field.NAME" / "species.NAME"
 * for any NAME): 1 with *lo, *hi and *lo_open (1: lo itself is not allowed), or 0 for an
 * unknown or non-numeric key. */
int sim_scenario_key_range(const char *section, const char *key, double *lo, double *hi,
                           int *lo_open);

/* 1 when name is a valid field or species name: a lower-case letter, then lower-case letters,
 * digits or '_', at most SIM_NAME_MAX - 1 bytes. */
int sim_name_valid(const char *name);

/* Number of agents the scenario asks for (count, or density * cells rounded down). */
int64_t sim_scenario_agent_count(const sim_scenario *sc);

/* Writes the scenario as INI text that parses back to the same values (exact floats). */
void sim_scenario_write_ini(const sim_scenario *sc, FILE *f);

/* Writes s as a JSON string literal (quotes, backslashes and control characters escaped). */
void sim_json_string(FILE *f, const char *s);

/* Writes the scenario as one JSON object {"world": {...}, ...} without a trailing newline. */
void sim_scenario_write_json(const sim_scenario *sc, FILE *f, int indent);

/* Names of enum values, for messages and output. */
const char *sim_boundary_name(int b);
const char *sim_colormap_name(int c);
const char *sim_placement_name(int p);
/* Parses a colormap name; returns -1 when unknown. */
int sim_colormap_from_name(const char *name);

#endif
