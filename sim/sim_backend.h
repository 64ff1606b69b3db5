/* sim_backend.h - the backend table: what a simulation engine (the CPU oracle in sim_cpu.c, the
 * CUDA engine in gpu/) must provide. The app picks a table at run time and hands it to sim.h, so
 * one binary can run and cross-check both; from then on only sim.h calls into the table. */
#ifndef SIM_BACKEND_H
#define SIM_BACKEND_H

#include <stdint.h>

#include "sim_model.h"
#include "sim_scenario.h"
#include "sim_status.h"
#include "sim_view.h"

/* Per species and per field statistics of a model engine's step (sim_model.h). */
typedef struct sim_species_stats {
    int64_t count, moved, births, deaths;
    double energy; /* mean energy of the living (sim_energy_fix summed, / 256 / count); 0 */
} sim_species_stats;

typedef struct sim_field_stats {
    double total, mean; /* as field_total and field_mean below */
    float max;
} sim_field_stats;

/* Statistics of one step. `moved` is always filled; the rest only when asked for. */
typedef struct sim_stats {
    int64_t step;        /* steps completed, counting this one */
    int64_t agents;
    int64_t moved;       /* agents that changed cell in this step */
    double field_total;  /* sum over columns of (sum over rows, in row order), in double */
    double field_mean;   /* field_total / cells */
    float field_max;
    float residual;      /* max |T' - T| over the last Jacobi sweep of the step (0: no sweep) */
    uint64_t checksum;   /* sim_checksum_* summed over cells and agents */
    /* Model engines only (0 from the single-model backends): per species (moved and count
     * always, the rest when asked for) and per field (when asked for). The fields above then
     * describe the output field; residual is the largest of the fields'. */
    int n_species, n_fields;
    sim_species_stats species[SIM_MAX_SPECIES];
    sim_field_stats fields[SIM_MAX_FIELDS];
} sim_stats;

/* The version of the table below. A table starts with the version it was written for and sim.h
 * refuses one of another version (SIM_EINVAL), as SQLite's VFS carries iVersion: a backend built
 * against an older sim_backend.h cannot be handed members it does not have. Raise it whenever a
 * member is added, removed, reordered or changes its contract.
 *   1: name, create, destroy, step, read_field, read_agents, checksum, horizon, paint, compose.
 *   2: + region_sums, read_cells, agent_cells.
 *   3: + step_batch.
 *   4: + models, create_state, read_state; sim_stats' species and fields groups.
 *   5: + create_fresh.
 *   6: + pin_host, unpin_host.
 *   7: + read_field_begin, read_wait. */
#define SIM_BACKEND_VERSION 7

/* The most steps one step_batch call (and sim_step_batch) may advance. A backend may size
 * buffers by it (the CUDA backend's read-back rings: 256 control blocks of 40 bytes). */
#define SIM_STEP_BATCH_MAX 256

/* A backend instance is an opaque pointer created by `create`. Every function returns a
 * sim_status and writes one line into err on failure. State: the field (width*height floats,
 * row-major, y down) and the agents (one cell index y*width+x per agent, agent id = index).
 *
 * Contract of `step`: advance from step index `step` (steps completed before) by one step of
 * DESIGN.md (sense, decide, move, deposit, diffuse, decay). When want_stats is non-zero, fill
 * every field of st, otherwise only st->moved (st may not be NULL).
 *
 * Contract of `step_batch`: advance n steps (1 <= n <= SIM_STEP_BATCH_MAX) from step index
 * `step`, exactly as n calls of `step` with steps step, step+1, ... would: the same state after
 * it, and in out[k] (zeroed by the caller) what `step` would have filled for step k of the batch
 * with want_stats[k] (want_stats NULL: no statistics for any step). It exists so that a backend
 * whose steps run asynchronously (CUDA) can queue them back to back and read `moved` and the
 * statistics back once, instead of waiting for the device after every step. On failure the
 * state is undefined (some steps may have run), as after a failed `step`.
 *
 * Tables are written with designated initializers (member by member in C++), so that a member
 * added later cannot shift the others. Every member but `compose` must be set. */
typedef struct sim_backend_ops {
    int version;      /* SIM_BACKEND_VERSION */
    const char *name; /* "cpu", "cuda" */
    int (*create)(const sim_scenario *sc, const float *field, const uint32_t *agents,
                  int64_t n_agents, int threads, void **out, sim_err *err);
    void (*destroy)(void *b); /* NULL is a no-op */
    int (*step)(void *b, int64_t step, int want_stats, sim_stats *st, sim_err *err);
    int (*step_batch)(void *b, int64_t step, int n, const uint8_t *want_stats, sim_stats *out,
                      sim_err *err);
    int (*read_field)(void *b, float *out, sim_err *err);
    int (*read_agents)(void *b, uint32_t *cells, sim_err *err);
    int (*checksum)(void *b, uint64_t *out, sim_err *err);
    /* The 9 candidate horizon sums (fixed point, SIM_SUM_INVALID outside a bounded grid) of
     * agents placed at the given cells, for n cells: sums[9*i + c]. For tests and the viewer. */
    int (*horizon)(void *b, const uint32_t *cells, int64_t n, int64_t *sums, sim_err *err);
    /* Adds `amount` to every cell within `radius` of (x, y) (a brush, for the viewer). */
    int (*paint)(void *b, int x, int y, int radius, float amount, sim_err *err);
    /* Composes a w*h RGBA image of the view (sim_view.h) where the state lives. May be NULL:
     * sim_compose then reads the field and agents and composes on the host with the same
     * per-pixel rule (sim_view_compose). Called only with a view sim_compose checked. */
    int (*compose)(void *b, const sim_view *view, uint8_t *rgba, sim_err *err);

    /* The reads behind sim_region_sums, sim_read_cells and sim_agent_cells (sim.h has their
     * contracts): only what the viewer shows leaves the backend. Called only with arguments
     * sim.h checked, so they validate nothing: n >= 1 (sim.h answers n = 0 itself), every
     * array non-NULL, every index in range.
     *
     * out[iy * nx + ix] = the exact fixed-point disk sum of radius sc->radius at (xs[ix],
     * ys[iy]), the bits of sim_horizon_disk (periodic wraps; otherwise cells outside count 0);
     * xs strictly increasing in [0, width), ys in [0, height), nx, ny >= 1. */
    int (*region_sums)(void *b, const int32_t *xs, int nx, const int32_t *ys, int ny,
                       int64_t *out, sim_err *err);
    /* values[i] = the field at cells[i] (< width*height), agents[i] = the id of the agent on it
     * or -1. */
    int (*read_cells)(void *b, const uint32_t *cells, int64_t n, float *values, int64_t *agents,
                      sim_err *err);
    /* cells[i] = the cell of agent ids[i] (in [0, n_agents)). */
    int (*agent_cells)(void *b, const int64_t *ids, int64_t n, uint32_t *cells, sim_err *err);

    /* ---- Model engines (sim_model.h) ----
     * A single-model backend runs plain models only and names, in `models`, the model engine
     * of its kind (NULL: none), which sim.h uses for every other model. A model engine has
     * `models` NULL, create_state and read_state set and `create` NULL (never called).
     *
     * create_state: a backend for the scenario's model from the state st (checked by sim.h:
     * sim_state_check); the backend copies what it needs. The agent count then changes with
     * births and deaths: each step's st->agents says how many there are after it.
     * read_state: the whole state into st, which the caller allocated (sim_state_alloc) with
     * room for the current agents; sets st->n and st->next_id. read_field, paint, region_sums
     * and read_cells act on the output field; `horizon` gives the scores of the first species;
     * ids in read_cells and agent_cells are indices into the agent arrays. */
    const struct sim_backend_ops *(*models)(void);
    int (*create_state)(const sim_scenario *sc, const sim_state *st, int threads, void **out,
                        sim_err *err);
    int (*read_state)(void *b, sim_state *st, sim_err *err);

    /* Optional (NULL: sim.h builds the world on the host with sim_world_init and calls
     * `create`): a single-model backend's instance for the initial world of a plain scenario
     * with a random placement (sim.h builds a centred one on the host), which the backend builds
     * itself, the same field and agent cells as sim_world_init's, bit for bit (the CUDA backend
     * places a billion agents on the device in seconds; the host's shuffle and an upload of the
     * world took minutes). */
    int (*create_fresh)(const sim_scenario *sc, int threads, void **out, sim_err *err);

    /* Optional (NULL: nothing to do): pin_host makes the host buffer p of `bytes` bytes quick
     * for read_field and read_agents to copy into, until unpin_host(p) (the CUDA backend
     * page-locks it: a read is then one DMA at the link's speed, not a copy staged through
     * the driver's buffers). Returns 1 when it did, 0 when it could not (the buffer works as
     * before). Process-wide, not per instance: unpin_host may come after the instances are
     * destroyed. */
    int (*pin_host)(void *p, size_t bytes);
    void (*unpin_host)(void *p);

    /* Optional (NULL: sim.h reads with read_field, which waits): read_field_begin starts a
     * copy of the current field into out (width*height floats, best pinned) and returns at
     * once with a ticket in *ticket; read_wait(b, ticket) waits until that copy is in out.
     * The instance may step meanwhile: what is copied is the field at the begin. Copies end in
     * the order they began (a begin may wait for earlier ones), and a ticket stays good after
     * later begins; read_wait may be called from another thread than the one that steps. A
     * backend may answer a begin with a plain read and the ticket -1 (read_wait(-1) returns
     * at once). */
    int (*read_field_begin)(void *b, float *out, int *ticket, sim_err *err);
    int (*read_wait)(void *b, int ticket, sim_err *err);
} sim_backend_ops;

/* The CPU backend (OpenMP; bit-identical for any thread count). */
const sim_backend_ops *sim_cpu_backend(void);

/* The CPU model engine (sim_model_cpu.c): every model, the oracle of the CUDA one. */
const sim_backend_ops *sim_cpu_model_backend(void);

/* A backend's memory for a scenario at its start, split the way README's "Memory" states its
 * bounds: shared state per cell (claims, occupancy, cell codes, walls) at most SIM_MEM_SHARED_MAX
 * bytes, each field at most SIM_MEM_FIELD_MAX bytes per cell (its values and its share of the
 * sweeps' scratch), each agent at most SIM_MEM_AGENT_MAX(life_attrs) bytes. The fixed maps
 * (capacity maps, source masks) and the rows, rings and scratch that grow with neither the cells
 * nor the agents are reported beside them. */
typedef struct sim_mem {
    double shared_per_cell; /* bytes per cell: claims, occupancy, codes, walls */
    double field_per_cell;  /* bytes per cell of one field, the mean over the fields */
    double maps_per_cell;   /* bytes per cell of every capacity map and source mask together */
    double per_agent;       /* bytes per agent, every per-agent array */
    int n_fields;
    int life_attrs;         /* per-agent life-cycle attributes held (energy, age): 0 or 2 */
    size_t other;           /* bytes neither per cell nor per agent */
    size_t total;           /* every byte at the start */
} sim_mem;

#define SIM_MEM_SHARED_MAX 12.0
#define SIM_MEM_FIELD_MAX 8.0
#define SIM_MEM_AGENT_MAX(attrs) (64.0 + 8.0 * (attrs))

/* 1 when e is within the bounds above, else 0. */
int sim_mem_within(const sim_mem *e);

/* One line for `horizon info`: "12.0 B/cell shared + 8.0 B/cell per field x 2 + ... (within
 * the bounds 12, 8, 80)". */
void sim_mem_describe(const sim_mem *e, char *buf, size_t len);

/* The CPU model engine's memory for a scenario's model at its start with threads threads (0:
 * OpenMP's default); births grow the per-agent arrays, by doubling. SIM_EINVAL for a bad
 * model. */
int sim_cpu_model_memory(const sim_scenario *sc, int threads, sim_mem *out);

/* Host memory in bytes the CPU model engine allocates for a scenario's model at its start
 * (sim_cpu_model_memory's total), for `horizon info`; 0 for a bad model. */
size_t sim_cpu_model_estimate_bytes(const sim_scenario *sc);

/* The CPU backend's memory (the one-field, one-species fast path, sim_cpu.c) for a scenario
 * with threads threads (0: OpenMP's default), split as sim_mem states it: its arrays, exactly
 * as create allocates them (the struct and allocator rounding aside). 12 B/cell shared, 8 B/cell
 * for the field; the prefix rows live in the field's spare buffer, whose rows are 2r + 3
 * entries longer than the cells' (in other, with the rest that grows with rows or threads). */
void sim_cpu_memory(const sim_scenario *sc, int threads, sim_mem *out);

/* Tests: from now on the CPU backend instance `state` (sim_get_backend_state of a sim on
 * sim_cpu_backend) splits its rows among its threads at random every step (from seed), instead
 * of by their speed, to show that the split never changes a result. */
void sim_cpu_scramble_bands(void *state, uint64_t seed);

/* Host memory in bytes that the CPU backend's create allocates for a scenario (its arrays; the
 * struct and allocator rounding aside) with OpenMP's default threads: sim_cpu_memory's total,
 * for `horizon info`. */
size_t sim_cpu_estimate_bytes(const sim_scenario *sc);

#endif
