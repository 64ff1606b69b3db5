/* sim_clones.h - SIM_CLONES: a function compiled for AVX-512, for AVX2 and for the baseline ISA,
 * one picked at load time (GCC and clang target_clones), so that its loops vectorise as wide as
 * the machine allows. Only for code whose bits do not depend on the vector width: integer
 * arithmetic, and float operations done per element in a fixed order (-ffp-contract=off, no
 * reassociation). Empty elsewhere, and in the AddressSanitizer build, which keeps one plain
 * version of each. Internal to sim/. */
#ifndef SIM_CLONES_H
#define SIM_CLONES_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SIM_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SIM_CLONES
#endif

#endif
