/* sim_clones.h - SIM_CLONES: a function compiled for AVX-512 (x86-64-v4: with its 64-bit
 * multiplication, which the checksum's hash needs; AVX-512F alone multiplies 64-bit lanes by three
 * 32-bit products), for AVX2 and for the baseline ISA, one picked at load time (GCC and clang
 * target_clones), so that its loops vectorise as wide as the machine allows. Only for code whose
 * bits do not depend on the vector width: integer arithmetic, and float operations done per
 * element in a fixed order (-ffp-contract=off, no reassociation). Empty elsewhere, and in the
 * AddressSanitizer build, which keeps one plain version of each. Only on static functions: clang
 * 14 gives a clones function with external linkage no symbol of its own name, so another file's
 * call to it does not link (a plain function that calls the static one is the entry point, as in
 * sim_field_stats.c). Internal to sim/. */
#ifndef SIM_CLONES_H
#define SIM_CLONES_H

#include <stdint.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SIM_CLONES __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))
#else
#define SIM_CLONES
#endif

/* Sixteen floats, and sixteen 32-bit integers, as one GCC/clang vector, for the loops that the
 * compiler leaves scalar by itself (a running maximum kept in an array of lanes): each clone
 * lowers them to its own registers (one AVX-512 register, two AVX2 ones, four SSE ones). Their
 * float operations are per element in the order written, so the bits are the scalar loop's. */
typedef float sim_v16f __attribute__((vector_size(64)));
typedef int32_t sim_v16i __attribute__((vector_size(64)));

/* Lane by lane, *m becomes the larger of *x and *m (`x > m ? x : m`: m where x is NaN). By
 * pointer: a vector passed by value outside the AVX-512 clone changes the calling convention. */
static inline void sim_v16f_max_into(sim_v16f *m, const sim_v16f *x)
{
    const sim_v16i gt = *x > *m; /* all ones where x is larger; never where x is NaN */
    *m = (sim_v16f)(((sim_v16i)*x & gt) | ((sim_v16i)*m & ~gt));
}

#endif
