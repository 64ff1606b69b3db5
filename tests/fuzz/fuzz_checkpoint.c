/* fuzz_checkpoint.c - libFuzzer harness for the checkpoint loader (sim_checkpoint_decode, the
 * code behind `horizon run --resume`). Each input is decoded twice: as it is (CRC checks and
 * everything before them) and with its CRCs recomputed (ckpt_fixup.h), so that mutations reach
 * the size, scenario and state checks behind them. What decodes must encode and decode to the
 * same state, and a small enough one must build a simulation that can take a step. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ckpt_fixup.h"
#include "sim.h"
#include "sim_alloc.h"
#include "sim_checkpoint.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decoded(const sim_checkpoint *ck)
{
    sim_err err;
    uint8_t *again;
    size_t len;
    if (sim_checkpoint_encode(ck, &again, &len, &err) != SIM_OK)
        abort();
    sim_checkpoint back;
    if (sim_checkpoint_decode(again, len, "re-encoded", &back, &err) != SIM_OK)
        abort();
    size_t cells = (size_t)ck->sc.width * (size_t)ck->sc.height;
    if (back.step != ck->step || back.n_agents != ck->n_agents ||
        memcmp(back.field, ck->field, cells * sizeof(float)) != 0 ||
        (ck->n_agents && memcmp(back.agents, ck->agents, (size_t)ck->n_agents * 4) != 0))
        abort();
    sim_checkpoint_release(&back);
    sim_free(again);
    /* Step it when that is cheap: odd worlds (1 cell wide, radius 64 on 3 cells) included. */
    if ((double)cells * (ck->sc.sweeps + 1) * (ck->sc.radius + 1) < 4e6) {
        sim *s;
        if (sim_checkpoint_restore(ck, sim_cpu_backend(), 1, &s, &err) != SIM_OK)
            abort(); /* the loader accepted a state that the simulation refuses */
        sim_stats st;
        if (sim_step(s, 1, &st) != SIM_OK || st.step != ck->step + 1)
            abort();
        sim_destroy(s);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    sim_checkpoint ck;
    sim_err err;
    if (sim_checkpoint_decode(data, size, "fuzz.hzc", &ck, &err) == SIM_OK) {
        decoded(&ck);
        sim_checkpoint_release(&ck);
    }
    uint8_t *fixed = malloc(size ? size : 1);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    ckpt_fixup(fixed, size, 1);
    if (sim_checkpoint_decode(fixed, size, "fuzz.hzc", &ck, &err) == SIM_OK) {
        decoded(&ck);
        sim_checkpoint_release(&ck);
    }
    free(fixed);
    return 0;
}
