/* sim_model.h - the model of a scenario, resolved: its fields and species with every name in
 * their lists turned into an index, and the full state of a model world (several fields, agents
 * with species, energy, age and ids). The rules of a step are README's "The model"; this header
 * says what the numbers mean, sim_model_rules.h holds the arithmetic both engines share.
 *
 * A scenario without [field.NAME] or [species.NAME] sections is the model of one field named
 * "field" (the [field] shorthand) and one species named "agents" (the [agents] shorthand) that
 * senses field:1 and deposits agents.deposit into it, unclamped. Such a model without walls is
 * "plain": the single-model backends (sim_cpu.c, gpu/) run it, the model engines give the same
 * bits. */
#ifndef SIM_MODEL_H
#define SIM_MODEL_H

#include <stdint.h>

#include "sim_scenario.h"
#include "sim_status.h"

#define SIM_MAX_TERMS 8 /* entries of a sense list */
#define SIM_SENSE_WEIGHT_MAX 256
#define SIM_MAX_AGE_LIMIT 2147483647

/* A sense term: the disk sum of a source times an integer weight. Sources 0..n_fields-1 are the
 * fields; SIM_SRC_OCC + s is the occupancy of species s (1 per agent). */
#define SIM_SRC_OCC 8
typedef struct sim_model_term {
    int src;
    int32_t weight;
} sim_model_term;

typedef struct sim_model_field {
    float diffusion, decay, initial, init_noise, map_scale, growth, capacity, source_value;
    int sweeps;
    const char *map, *capacity_map, *sources; /* into the scenario; NULL when not given */
} sim_model_field;

typedef struct sim_model_species {
    int64_t count; /* resolved: count, or density times the cells that are not walls */
    int placement; /* sim_placement */
    const char *placement_map;
    int radius;
    double noise;
    uint64_t threshold; /* sim_noise_threshold(noise) */
    int n_sense;
    sim_model_term sense[SIM_MAX_TERMS];
    int n_deposit;
    int deposit_field[SIM_MAX_FIELDS];
    float deposit_amount[SIM_MAX_FIELDS];
    int deposit_clamp; /* 1: a negative deposit stops at 0 (named species); 0: the shorthand */
    int life;          /* energy, uptake, metabolism, age, births: on or off */
    float energy, metabolism, birth_energy;
    int32_t max_age;   /* 0: none */
    int uptake_field;  /* -1: none */
    float uptake;
    uint32_t eats;     /* bit p: eats species p */
    float gain[SIM_MAX_SPECIES];
} sim_model_species;

typedef struct sim_model {
    int width, height, periodic;
    int n_fields, n_species;
    sim_model_field field[SIM_MAX_FIELDS];
    sim_model_species species[SIM_MAX_SPECIES];
    char field_name[SIM_MAX_FIELDS][SIM_NAME_MAX];
    char species_name[SIM_MAX_SPECIES][SIM_NAME_MAX];
    const char *walls;   /* NULL: none */
    int output_field;    /* the field frames and the single-field reads show */
    int named;           /* 1: named sections (stats.csv gets per-species and per-field columns) */
    int extended;        /* 1: agents carry species and energy into the checksum */
    int plain;           /* 1: the single-model backends can run it */
    int64_t agents;      /* at the start */
} sim_model;

/* Resolves the scenario's model: names in the lists (sense, deposit, uptake, eats, output.field)
 * against the fields and species, counts against the cells. No file is read, so a species'
 * density counts every cell here; sim_model_world_init recounts it without the walls.
 * SIM_EINVAL with "species.prey.sense: unknown field 'gras' (fields: grass, scent)" and the
 * like. */
int sim_model_build(const sim_scenario *sc, sim_model *m, sim_err *err);

/* sim_model_build's checks alone (sim_scenario_validate calls it). */
int sim_model_check(const sim_scenario *sc, sim_err *err);

/* 1 when the scenario is plain (see above). */
int sim_model_is_plain(const sim_scenario *sc);

/* ---- The state of a model world ---- */

/* Agents are kept in the order of their ids (births append ids larger than every living one,
 * deaths remove): index order is id order. */
typedef struct sim_state {
    int n_fields;
    int64_t cells;
    float *field[SIM_MAX_FIELDS]; /* cells each */
    int64_t n, cap;               /* agents, and room for them in the arrays below */
    uint32_t *cell, *id;
    uint8_t *species;
    float *energy;
    int32_t *age;
    uint32_t next_id;             /* the id the next newborn gets */
    /* The maps, fixed for the run: walls (1 = wall), per field the capacity of each cell and
     * the source mask. NULL when the model has none. */
    uint8_t *walls;
    float *capacity[SIM_MAX_FIELDS];
    uint8_t *sources[SIM_MAX_FIELDS];
} sim_state;

/* Allocates a state for the model with room for cap agents (fields and maps as the model needs;
 * every array zeroed). */
int sim_state_alloc(const sim_model *m, int64_t cap, sim_state *st, sim_err *err);
void sim_state_free(sim_state *st);

/* The initial state: maps read from their PNGs, fields, placement of every species (README).
 * threads as for sim_world_init. For a plain model the field and agent cells equal
 * sim_world_init's. st is allocated here (sim_state_free it). */
int sim_model_world_init(const sim_scenario *sc, const sim_model *m, int threads,
                         sim_state *st, sim_err *err);

/* Reads the maps of the scenario into st (walls, capacity, sources), for a state restored from
 * a checkpoint that does not hold them. */
int sim_model_load_maps(const sim_scenario *sc, const sim_model *m, sim_state *st,
                        sim_err *err);

/* Checks a state against the model: cells inside the grid and not walls, one agent per cell,
 * species in range, ids strictly increasing and below next_id. SIM_EINVAL naming the first
 * offending agent. */
int sim_state_check(const sim_model *m, const sim_state *st, sim_err *err);

#endif
