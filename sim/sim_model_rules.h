/* sim_model_rules.h - the arithmetic of the model phases beyond sim_rules.h (species, walls,
 * sources, growth, the life cycle), shared verbatim by the CPU model engine (sim_model_cpu.c)
 * and the CUDA one, so that both evaluate every formula in the same order. README's "The
 * model" states each rule in words. */
#ifndef SIM_MODEL_RULES_H
#define SIM_MODEL_RULES_H

#include <stdint.h>

#include "sim_rules.h"

/* The occupancy of a species as a sensed source: 1.0 in fixed point per agent. */
#define SIM_OCC_FIX 4096

/* Occupancy grid codes besides an agent's index. */
#define SIM_OCC_EMPTY (-1)
#define SIM_OCC_WALL (-2)

/* The one of m choices (m >= 1) that a random word picks: floor(word * m / 2^32). */
SIM_HD uint32_t sim_pick(uint32_t word, uint32_t m)
{
    return (uint32_t)(((uint64_t)word * m) >> 32);
}

/* A claim key for eating and births: as sim_claim_key, from another random word. The low half
 * is the agent's index, which orders agents as their ids do. */
SIM_HD uint64_t sim_claim_key_word(uint32_t word, uint32_t index)
{
    return ((uint64_t)(word | 1u) << 32) | index;
}

/* Deposit a into T; a named species' negative deposit stops at 0 (clamp = 1). */
SIM_HD float sim_deposit(float t, float a, int clamp)
{
    float v = SIM_FADD(t, a);
    if (clamp && a < 0.0f && v < 0.0f)
        v = 0.0f;
    return v;
}

/* Regrowth: T' = min(T + growth, cap). */
SIM_HD float sim_grow(float t, float growth, float cap)
{
    float v = SIM_FADD(t, growth);
    return v < cap ? v : cap;
}

/* Uptake: what an agent takes from a cell holding t, at most `amount`, never below 0. */
SIM_HD float sim_uptake_take(float t, float amount)
{
    if (!(t > 0.0f))
        return 0.0f;
    return t < amount ? t : amount;
}

/* Energy in the statistics: fixed point with 8 fraction bits, clamped to +-2^30, so that the
 * sum over agents is exact in any order. */
SIM_HD int64_t sim_energy_fix(float e)
{
    if (!(e == e))
        return 0;
    if (e > 1073741824.0f)
        e = 1073741824.0f;
    if (e < -1073741824.0f)
        e = -1073741824.0f;
    return (int64_t)SIM_FMUL(e, 256.0f);
}

/* The checksum term of an agent's species, energy and age (models with several species or a
 * life cycle), added to sim_checksum_agent's. */
SIM_HD uint64_t sim_checksum_life(uint32_t id, uint32_t species, uint32_t energy_bits,
                                  int32_t age)
{
    uint64_t a = ((uint64_t)energy_bits << 32) | (uint32_t)age;
    return sim_mix64(a ^ ((uint64_t)id * 0xD1B54A32D192ED03ull) ^
                     ((uint64_t)(species + 1) << 58));
}

/* The checksum of field f's cell i: sim_checksum_cell over the index i + f * cells, so field 0
 * is today's term. */
SIM_HD uint64_t sim_checksum_field_cell(int f, uint64_t cells, uint64_t i, uint32_t bits)
{
    return sim_checksum_cell(i + (uint64_t)f * cells, bits);
}

#endif
