/* sim_alloc.h - the one door through which the simulation (sim/, and any backend that wants it)
 * takes host memory, so that allocation failure can be tested: a switch makes the Nth allocation
 * from now fail, and counters show what is still allocated. */
#ifndef SIM_ALLOC_H
#define SIM_ALLOC_H

#include <stddef.h>

/* Like malloc/calloc/realloc/free. sim_malloc_array and sim_calloc return NULL (never wrap) when
 * n * size overflows size_t; all return NULL when the test switch says this one fails. Memory from
 * these functions must be released with sim_free, and only with it (the counters rely on it).
 * sim_realloc(NULL, n) is sim_malloc(n); on failure the old block stays valid and owned by the
 * caller. sim_free(NULL) is a no-op. Thread-safe. */
void *sim_malloc(size_t size);
void *sim_malloc_array(size_t n, size_t size);
void *sim_calloc(size_t n, size_t size);
void *sim_realloc(void *p, size_t size);
void sim_free(void *p);

/* Test hooks. sim_alloc_fail_at(n): allocation number n (1-based, counted from this call) and only
 * that one returns NULL; n = 0 switches failures off. */
void sim_alloc_fail_at(long n);
/* Allocations attempted since the last sim_alloc_fail_at call (failed ones included). */
long sim_alloc_attempts(void);
/* Blocks from sim_malloc & co. not yet freed (over the whole process). */
long sim_alloc_live(void);
/* The largest single request since the last sim_alloc_fail_at call, in bytes. */
size_t sim_alloc_largest(void);
/* Bytes of every request since the last sim_alloc_fail_at call (failed ones included; a realloc
 * counts its new size): what a create asked for, against its estimate. */
size_t sim_alloc_requested(void);

#endif
