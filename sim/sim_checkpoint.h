/* sim_checkpoint.h - checkpoints: the whole state of a run (scenario, step, RNG key, field,
 * agents) in one self-checking file, written so that a crash never leaves a half-written file
 * under the final name, and read back so that a hostile or damaged file is refused, never
 * trusted.
 *
 * File format, version 1. Every integer and float is little-endian, whatever the host.
 *
 *   header, 36 bytes:
 *     0  signature   8 bytes  89 'H' 'Z' 'C' 0D 0A 1A 0A  (PNG-style: catches text-mode damage)
 *     8  version     u32      SIM_CKPT_VERSION
 *    12  byte order  u32      0x0A0B0C0D, so the bytes are 0D 0C 0B 0A; a writer that got the
 *                             byte order wrong leaves 0A 0B 0C 0D, which the reader names
 *    16  sections    u32      4
 *    20  reserved    u32      0
 *    24  file size   u64      bytes in the whole file (truncation and trailing junk show)
 *    32  header CRC  u32      zlib CRC-32 of bytes 0..31
 *   then 4 sections, in this order, each:
 *     tag u32 (four ASCII letters), length u64, `length` bytes of payload,
 *     CRC u32 = zlib CRC-32 of tag, length and payload
 *   "SCEN" the scenario after overrides as INI text (sim_scenario_write_ini), at most
 *          SIM_CKPT_SCENARIO_MAX bytes; output.dir is written as "." (see below)
 *   "STEP" 56 bytes: step i64, RNG key u64 (the Philox key, = run.seed), agents i64,
 *          width u32, height u32, checkpoint period i64, backend name char[16] (NUL-padded)
 *   "FELD" width*height float32, row-major, y down
 *   "AGNT" agents u32 cell indices (y*width + x), agent id = position in the list
 *
 * Version 2, for a model that is not plain (sim_model.h; a plain one writes version 1, so that
 * its files stay as they were): the same header with 5 sections, and
 *   "STEP" as above, agents being the agents alive at the step
 *   "FELD" the model's n_fields fields one after the other, width*height float32 each
 *   "AGNT" as above (the agents in id order)
 *   "LIFE" next_id u32, then per agent (in the order of AGNT) four arrays of u32 words: ids,
 *          species, energy (float32) and age (int32)
 * The maps (walls, capacities, sources) are not in the file: a resumed run reads them again
 * from the files the scenario names.
 *
 * The output directory is not part of a checkpoint: a resumed run writes next to the
 * checkpoint file, wherever the directory has been moved to. */
#ifndef SIM_CHECKPOINT_H
#define SIM_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "sim.h"

#define SIM_CKPT_VERSION 2 /* the newest written; 1 is read too (and written for plain models) */
#define SIM_CKPT_HEADER_BYTES 36
#define SIM_CKPT_SCENARIO_MAX (64 * 1024) /* bytes of INI text */
#define SIM_CKPT_BACKEND_MAX 16           /* bytes of the backend name, NUL included */

/* A checkpoint in memory. field and agents are owned (sim_alloc.h) and sized once, by
 * sim_checkpoint_init or by a read, so that captures during a run allocate nothing. */
typedef struct sim_checkpoint {
    sim_scenario sc;          /* the scenario after overrides */
    int64_t step;             /* steps completed */
    uint64_t rng_key;         /* key of the counter-based generator (= sc.seed) */
    int64_t n_agents;
    int64_t checkpoint_every; /* the run's checkpoint period (0: only on signals), kept so a
                                 resumed run goes on checkpointing the same way */
    char backend[SIM_CKPT_BACKEND_MAX]; /* the backend that wrote it: "cpu", "cuda" */
    float *field;             /* width*height times n_fields */
    uint32_t *agents;         /* n_agents */
    /* Version 2 (a model that is not plain): else version 1, n_fields 1 and the rest NULL. */
    int version;
    int n_fields;
    uint32_t next_id;
    uint32_t *ids, *species;  /* n_agents each */
    float *energy;
    int32_t *age;
    int64_t cap;              /* room in agents and the arrays above */
} sim_checkpoint;

/* Sizes the buffers of ck for scenario sc (cells and agent count) and zeroes the rest.
 * SIM_ENOMEM on failure, with ck left empty (safe to release). */
int sim_checkpoint_init(sim_checkpoint *ck, const sim_scenario *sc, sim_err *err);

/* Frees the buffers; ck becomes empty. NULL and an empty ck are fine. */
void sim_checkpoint_release(sim_checkpoint *ck);

/* Copies the state of s (scenario, step, field, agents, backend name) into ck, whose buffers
 * must have been sized for s's scenario. Allocates nothing for a plain model; a version-2
 * capture reads the state through sim_read_state and grows the agent arrays when the agents
 * have outgrown them. On a backend failure returns its status with the message in err. */
int sim_checkpoint_capture(sim_checkpoint *ck, sim *s, int64_t checkpoint_every, sim_err *err);

/* sim_checkpoint_capture whose field copy of a plain model runs beside the next steps
 * (sim_read_field_begin): ck->field is complete once sim_read_wait(s, *field_ticket) returns,
 * and must not be read before. *field_ticket is -1 when the capture is already complete
 * (another backend, a version-2 capture). */
int sim_checkpoint_capture_begin(sim_checkpoint *ck, sim *s, int64_t checkpoint_every,
                                 int *field_ticket, sim_err *err);

/* Builds a simulation on backend ops from ck (sim_create_from_state with ck's scenario, step,
 * field and agents). Same contract as sim_create. */
int sim_checkpoint_restore(const sim_checkpoint *ck, const sim_backend_ops *ops, int threads,
                           sim **out, sim_err *err);

/* Writes ck to path crash-safely: the bytes go to "path.tmp", which is fsync'ed; an existing
 * path is kept as "path.prev" (hard link, or rename where links are not supported); then
 * "path.tmp" is renamed to path and the directory fsync'ed. At every moment path is either
 * absent, the previous complete checkpoint or the new complete one. On failure returns SIM_EIO
 * with "path.tmp: what failed: OS reason" in err, removes the temporary file, and leaves path
 * and path.prev as they were. */
int sim_checkpoint_write(const sim_checkpoint *ck, const char *path, sim_err *err);

/* Reads and checks a checkpoint file into ck (which must be empty; it is released again on
 * failure). Every size is checked against the file before anything is allocated. Failures:
 * SIM_EIO (cannot open/read, with the OS reason), SIM_ENOMEM, or SIM_EINVAL with one of
 * "not a Horizon checkpoint", "truncated", "format version N", "big-endian", "corrupt ... (CRC
 * mismatch)", or what is inconsistent, always prefixed by the path. A valid CRC does not make
 * a state possible: agents outside the grid or sharing a cell, a NaN or infinite field value
 * ("non-finite field value at cell x,y"), and a value below 0 when the scenario's deposit,
 * initial value and fixed edges are all >= 0 ("field value -1 at cell x,y is below 0, which no
 * run of this scenario produces") are refused too. */
int sim_checkpoint_read(const char *path, sim_checkpoint *ck, sim_err *err);

/* Flags of sim_checkpoint_read_flags. SIM_CKPT_ANY_SIGN: no floor under the field values (NaN
 * and infinities are still refused), for a run with events (sim_events.h), which can take the
 * field below every source of its scenario: a paint of a negative amount, or a deposit that was
 * negative for a while and is not any more. */
#define SIM_CKPT_ANY_SIGN 1

/* sim_checkpoint_read with flags (0: the same). */
int sim_checkpoint_read_flags(const char *path, int flags, sim_checkpoint *ck, sim_err *err);

/* The same two operations on a memory image of the file (for tests and fuzzing). encode
 * allocates *out (sim_free it) of exactly *len bytes; decode names the data `name` in
 * messages. */
int sim_checkpoint_encode(const sim_checkpoint *ck, uint8_t **out, size_t *len, sim_err *err);
int sim_checkpoint_decode(const uint8_t *data, size_t len, const char *name, sim_checkpoint *ck,
                          sim_err *err);

/* The exact size of ck's file in bytes, or 0 when ck's scenario text would be too long. */
uint64_t sim_checkpoint_file_size(const sim_checkpoint *ck);

#endif
