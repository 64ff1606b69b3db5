/* sim_rules.h - the arithmetic of one step, shared verbatim by the CPU backend (C) and the CUDA
 * backend (.cu includes this file), so that both evaluate every formula in the same order.
 * Everything here is a small inline function of plain values; no state, no allocation. */
#ifndef SIM_RULES_H
#define SIM_RULES_H

#include <stdint.h>

#if defined(__CUDACC__)
#define SIM_HD __host__ __device__ __forceinline__
#else
#define SIM_HD static inline
#endif
/* The same, and in CUDA C++ usable in constant expressions (gpu/'s compiled-in radius). */
#if defined(__CUDACC__)
#define SIM_HD_CONST __host__ __device__ constexpr
#else
#define SIM_HD_CONST static inline
#endif

/* Float products and sums with explicit round-to-nearest and no contraction into FMA. On the
 * host -ffp-contract=off gives the same guarantee for plain operators. */
#if defined(__CUDA_ARCH__)
#define SIM_FMUL(a, b) __fmul_rn((a), (b))
#define SIM_FADD(a, b) __fadd_rn((a), (b))
#define SIM_FSUB(a, b) __fsub_rn((a), (b))
#else
#define SIM_FMUL(a, b) ((a) * (b))
#define SIM_FADD(a, b) ((a) + (b))
#define SIM_FSUB(a, b) ((a) - (b))
#endif

/* ---- Philox4x32-10 (Salmon et al., SC'11): counter-based, so every random number is a pure
 * function of (seed, step, agent, purpose) and any thread can compute any of them. ---- */
typedef struct sim_u32x4 {
    uint32_t v[4];
} sim_u32x4;

SIM_HD void sim_mulhilo32(uint32_t a, uint32_t b, uint32_t *hi, uint32_t *lo)
{
    uint64_t p = (uint64_t)a * (uint64_t)b;
    *hi = (uint32_t)(p >> 32);
    *lo = (uint32_t)p;
}

SIM_HD sim_u32x4 sim_philox4x32_10(sim_u32x4 ctr, uint32_t k0, uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint32_t hi0, lo0, hi1, lo1;
        sim_mulhilo32(0xD2511F53u, ctr.v[0], &hi0, &lo0);
        sim_mulhilo32(0xCD9E8D57u, ctr.v[2], &hi1, &lo1);
        sim_u32x4 next;
        next.v[0] = hi1 ^ ctr.v[1] ^ k0;
        next.v[1] = lo1;
        next.v[2] = hi0 ^ ctr.v[3] ^ k1;
        next.v[3] = lo0;
        ctr = next;
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
    return ctr;
}

/* Purposes: the fourth counter word, so that streams for different uses never overlap. */
enum { SIM_RNG_STEP = 0, SIM_RNG_PLACE = 1, SIM_RNG_FIELD = 2, SIM_RNG_EAT = 3, SIM_RNG_BIRTH = 4 };

/* Random words for (seed, step, index, purpose). */
SIM_HD sim_u32x4 sim_random(uint64_t seed, uint64_t step, uint32_t index, uint32_t purpose)
{
    sim_u32x4 c;
    c.v[0] = (uint32_t)step;
    c.v[1] = (uint32_t)(step >> 32);
    c.v[2] = index;
    c.v[3] = purpose;
    return sim_philox4x32_10(c, (uint32_t)seed, (uint32_t)(seed >> 32));
}

/* ---- The initial world (sim_world.c on the host, gpu_world.cu on the device) ---- */

/* A uniform float in [0, 1) from the top 24 bits of x (exact in float): the initial noise. */
SIM_HD float sim_unit24(uint32_t x)
{
    return SIM_FMUL((float)(x >> 8), 1.0f / 16777216.0f);
}

/* The initial value of cell i: initial + unit24 * init_noise (no noise: initial). */
SIM_HD float sim_initial_cell(uint64_t seed, uint64_t i, float initial, float init_noise)
{
    if (!(init_noise > 0.0f))
        return initial;
    const sim_u32x4 r = sim_random(seed, i, 0, SIM_RNG_FIELD);
    return SIM_FADD(initial, SIM_FMUL(sim_unit24(r.v[0]), init_noise));
}

/* The swap partner of step i of the placement shuffle of stream `index` over n_cand candidates:
 * uniform in [i, n_cand) (a 64-bit random word modulo the span). */
SIM_HD int64_t sim_shuffle_partner(uint64_t seed, uint32_t index, int64_t n_cand, int64_t i)
{
    const sim_u32x4 r = sim_random(seed, (uint64_t)i, index, SIM_RNG_PLACE);
    const uint64_t span = (uint64_t)(n_cand - i);
    const uint64_t wide = ((uint64_t)r.v[0] << 32) | r.v[1];
    return i + (int64_t)(wide % span);
}

/* ---- Exact horizon sums: the field in fixed point with 12 fraction bits. Values are clamped to
 * +-2048 (so a cell is at most 2^23 in magnitude), NaN counts as 0. Multiplying by 2^12 is exact
 * in float; the cast truncates toward zero on CPU and GPU alike. The bounds are chosen so that
 * 32-bit arithmetic stays exact where the GPU wants it: a row span of a disk of radius
 * r <= SIM_MAX_RADIUS = 64 (at most 129 cells) is under 129 * 2^23 < 2^31, so prefix rows kept
 * modulo 2^32 give every span exactly, and a whole disk of at most 255 cells (r <= 9) is under
 * 2^31 too. A disk of radius 64 (~2^13.7 cells) sums to under 2^37: totals are int64. */
#define SIM_FIX_ONE 4096.0f
#define SIM_FIX_CLAMP 2048.0f
#define SIM_FIX_CELL_MAX (1 << 23) /* SIM_FIX_CLAMP * SIM_FIX_ONE: the largest |sim_fix| */

SIM_HD int32_t sim_fix32(float f)
{
    if (!(f == f))
        return 0;
    if (f > SIM_FIX_CLAMP)
        f = SIM_FIX_CLAMP;
    if (f < -SIM_FIX_CLAMP)
        f = -SIM_FIX_CLAMP;
    return (int32_t)SIM_FMUL(f, SIM_FIX_ONE);
}

SIM_HD int64_t sim_fix(float f)
{
    return (int64_t)sim_fix32(f);
}

/* The 9 candidate cells: 0 stays, then the 8 neighbours row by row from the upper left
 * (y grows downwards): 1=(-1,-1) 2=(0,-1) 3=(1,-1) 4=(-1,0) 5=(1,0) 6=(-1,1) 7=(0,1) 8=(1,1). */
#define SIM_NCAND 9
SIM_HD int sim_cand_slot(int c)
{
    return c == 0 ? 4 : (c - 1 < 4 ? c - 1 : c);
}
SIM_HD int sim_cand_dx(int c)
{
    return sim_cand_slot(c) % 3 - 1;
}
SIM_HD int sim_cand_dy(int c)
{
    return sim_cand_slot(c) / 3 - 1;
}

/* Half-width of row dy of the disk dx^2 + dy^2 <= r^2: the largest h with h^2 <= r^2 - dy^2,
 * in integers so that CPU and GPU agree without floating point. */
SIM_HD_CONST int sim_disk_halfwidth(int r, int dy)
{
    int rem = r * r - dy * dy;
    if (rem < 0)
        return -1;
    int h = 0;
    while ((h + 1) * (h + 1) <= rem)
        h++;
    return h;
}

/* Marks a candidate outside a non-periodic grid; never the argmax (stay is always valid). */
#define SIM_SUM_INVALID INT64_MIN

/* The noise threshold: a draw x (32 bits) picks a random candidate when x < threshold.
 * noise = 1 gives 2^32, above every draw. Computed once on the host. */
static inline uint64_t sim_noise_threshold(double noise)
{
    if (noise <= 0.0)
        return 0;
    if (noise >= 1.0)
        return 1ull << 32;
    return (uint64_t)(noise * 4294967296.0);
}

/* Decide: with the random words r of (seed, step, id, SIM_RNG_STEP), a random candidate when
 * r.v[0] < threshold, else the argmax of the sums with ties to the lower index. */
SIM_HD int sim_decide(const int64_t sums[SIM_NCAND], sim_u32x4 r, uint64_t threshold)
{
    if ((uint64_t)r.v[0] < threshold)
        return (int)(((uint64_t)r.v[1] * SIM_NCAND) >> 32);
    /* The best value is kept in a variable, not re-read as sums[best]: a variable index would
     * put the GPU's sums in local memory. */
    int best = 0;
    int64_t top = sums[0];
    for (int c = 1; c < SIM_NCAND; c++)
        if (sums[c] > top) {
            top = sums[c];
            best = c;
        }
    return best;
}

/* The claim priority of an agent: a hash word in the high half, the id in the low half, so keys
 * are distinct and the winner of a cell does not depend on thread timing. 0 means "no claim". */
SIM_HD uint64_t sim_claim_key(sim_u32x4 r, uint32_t id)
{
    return ((uint64_t)(r.v[2] | 1u) << 32) | id;
}

/* One Jacobi update of a cell: T' = (1-a)T + a * ((N+S)+(E+W))/4, in this order. */
SIM_HD float sim_jacobi(float c, float n, float s, float e, float w, float a, float one_minus_a)
{
    float nb = SIM_FMUL(SIM_FADD(SIM_FADD(n, s), SIM_FADD(e, w)), 0.25f);
    return SIM_FADD(SIM_FMUL(one_minus_a, c), SIM_FMUL(a, nb));
}

/* ---- Checksum: a sum modulo 2^64 of one term per cell (index, float bits) and one per agent
 * (id, cell), so any reduction order gives the same value. ---- */

/* sim_mix64's shifts and multipliers (also the CUDA backend's gpu_mix64, which computes it on
 * 32-bit halves), and the word an agent's (id << 32 | cell) is xored with. */
#define SIM_MIX_SHIFT1 30
#define SIM_MIX_MUL1 0xBF58476D1CE4E5B9ull
#define SIM_MIX_SHIFT2 27
#define SIM_MIX_MUL2 0x94D049BB133111EBull
#define SIM_MIX_SHIFT3 31
#define SIM_CHECKSUM_AGENT_XOR 0xD6E8FEB86659FD93ull

SIM_HD uint64_t sim_mix64(uint64_t x)
{
    x ^= x >> SIM_MIX_SHIFT1;
    x *= SIM_MIX_MUL1;
    x ^= x >> SIM_MIX_SHIFT2;
    x *= SIM_MIX_MUL2;
    x ^= x >> SIM_MIX_SHIFT3;
    return x;
}

#define SIM_CHECKSUM_GOLDEN 0x9E3779B97F4A7C15ull

/* A cell's term from g = index * SIM_CHECKSUM_GOLDEN (mod 2^64): the value's bits xored with
 * g's high half, times g's low half made odd, one 32 x 32 -> 64-bit product. A pass over
 * consecutive cells steps g by additions. Any change of one cell changes the sum: the product
 * of a nonzero difference under 2^32 and an odd factor under 2^32 is not 0 modulo 2^64. (The
 * per-cell finalizer of the agents' term costs some 25 instructions a cell; this one 3-5, and
 * a field has far more cells than agents.) */
SIM_HD uint64_t sim_checksum_cell_scaled(uint64_t index_golden, uint32_t bits)
{
    return (uint64_t)(bits ^ (uint32_t)(index_golden >> 32)) *
           (uint64_t)((uint32_t)index_golden | 1u);
}

SIM_HD uint64_t sim_checksum_cell(uint64_t index, uint32_t bits)
{
    return sim_checksum_cell_scaled(index * SIM_CHECKSUM_GOLDEN, bits);
}

SIM_HD uint64_t sim_checksum_agent(uint32_t id, uint32_t cell)
{
    return sim_mix64((((uint64_t)id << 32) | cell) ^ SIM_CHECKSUM_AGENT_XOR);
}

/* ---- Column sums in any order ---- */

/* Whether the column sums of a field of h rows, added in any order, are the column sums in row
 * order (README, "The statistics, exactly"), from its cells' magnitudes m = bits & 0x7fffffff:
 * mag_hi the largest m, mag_lo the largest of 2^32 - m over the nonzero m (0 when every cell
 * is a zero). Every cell is then a multiple of q, the unit in the last place of the smallest
 * nonzero magnitude (exponent field emin, at least 1: q = 2^(emin - 150)), and under
 * 2^(emax - 126) in magnitude (emax: the largest exponent field), so every sum of some of a
 * column's cells is a multiple of q under h * 2^(emax - 126). When that is at most 2^53 q, each
 * such sum is a double, so every addition is exact, in whatever order: emax - emin <=
 * 29 - ceil(log2 h). A NaN or an infinity (exponent field 255) never passes. */
SIM_HD int sim_colsum_exact(uint32_t mag_hi, uint32_t mag_lo, int h)
{
    if (mag_lo == 0u)
        return 1; /* every cell a zero */
    const int emax = (int)(mag_hi >> 23);
    int emin = (int)((0u - mag_lo) >> 23);
    if (emin < 1)
        emin = 1;
    int lg = 0;
    while (lg < 31 && (1 << lg) < h)
        lg++;
    return emax - emin <= 29 - lg;
}

/* While the cells are added, both backends keep the magnitudes as keys k = bits + bits (mod
 * 2^32: twice bits & 0x7fffffff, the sign shifted out): hi2 the largest k, lo2 the least k - 2,
 * where a zero's wraps to the top (start them at 0 and 0xffffffff). sim_colsum_exact's mag_hi
 * and mag_lo from them: */
SIM_HD uint32_t sim_mag_hi_of_keys(uint32_t hi2)
{
    return hi2 >> 1;
}

SIM_HD uint32_t sim_mag_lo_of_keys(uint32_t lo2)
{
    return lo2 >= 0xfffffffeu ? 0u : 0u - ((lo2 >> 1) + 1u); /* 0: only zeros */
}

#endif
