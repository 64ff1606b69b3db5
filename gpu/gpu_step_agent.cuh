/* gpu_step_agent.cuh - one agent's move in a step (DESIGN.md's step 3 and 4), the device
 * routine that the step's move kernel (gpu_step.cu) and the resident kernel of small worlds
 * (gpu_step_resident.cu) both run, so that the two paths cannot drift apart. Internal to gpu/
 * (CUDA C++; device code). */
#ifndef GPU_STEP_AGENT_CUH
#define GPU_STEP_AGENT_CUH

#include <stdint.h>

extern "C" {
#include "sim_rules.h"
}

/* The move of one agent at cell c whose decision is t (its own cell, or a claimed one whose
 * claim word it tried to win with `key`). A claimer whose key is still the target's claim word
 * wins and moves: its old cell is vacated in the bitmap, the target occupied (bits only it
 * changes, through atomics because neighbours share the word). No other thread writes those
 * cells' words meanwhile: the target was empty at the start (no one leaves it) and the old cell
 * was occupied (no one claimed it). The winner's claim word is left for the caller to reset
 * (losers of the same cell may still be reading it). Returns the final cell; *moved is 1 when
 * it moved. The pointers may be global or shared memory (gpu_step_resident.cu). */
__device__ __forceinline__ uint32_t gpu_step_move_cell(uint32_t c, uint32_t t,
                                                       unsigned long long key,
                                                       const unsigned long long *claim,
                                                       uint32_t *occ, int *moved)
{
    *moved = 0;
    if (t == c || claim[t] != key)
        return c;
    atomicAnd(&occ[c >> 5], ~(1u << (c & 31)));
    atomicOr(&occ[t >> 5], 1u << (t & 31));
    *moved = 1;
    return t;
}

/* Agent q in tile order, at cell cellq[q], with its decision in target[q] and key[q]:
 * gpu_step_move_cell; a winner resets its claim word at once (a loser that reads it after sees
 * 0, not its own key, and loses just the same), and cells[ids[q]] follows the move. Then the
 * deposit on the final cell (one agent per cell) unless `fold` leaves it to the first Jacobi
 * pass; target[q] becomes the final cell, which is returned; *moved is 1 when it moved. */
__device__ __forceinline__ uint32_t gpu_step_move_agent(int64_t q, const uint32_t *ids,
                                                        const uint32_t *cellq, uint32_t *target,
                                                        const unsigned long long *key,
                                                        unsigned long long *claim, uint32_t *occ,
                                                        uint32_t *cells, float *field,
                                                        float deposit, int fold, int *moved)
{
    const uint32_t t = target[q];
    /* the key is read only for a claim (it was written only then) */
    const uint32_t c = gpu_step_move_cell(cellq[q], t, t == cellq[q] ? 0ull : key[q], claim,
                                          occ, moved);
    if (*moved) {
        claim[c] = 0;
        cells[ids[q]] = c;
    }
    if (!fold)
        field[c] = SIM_FADD(field[c], deposit);
    target[q] = c;
    return c;
}

#endif
