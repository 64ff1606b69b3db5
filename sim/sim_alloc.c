/* sim_alloc.c - the allocation hook of the simulation: thin wrappers around the C allocator that
 * count, and (for tests) fail on demand.
 *
 * The counters below are the one mutable process-wide state in sim/. STYLE.md asks for none, but
 * a fault-injection switch must be reachable from code that has no handle to pass it through
 * (sim_create allocates before any object exists), exactly like SQLite's malloc test hooks. They
 * are C11 atomics, touched only when memory is taken or given back, never in a step loop. */
#include "sim_alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

static atomic_long fail_at;     /* 0: never fail; else the attempt number that fails */
static atomic_long attempts;    /* attempts since the last sim_alloc_fail_at */
static atomic_long live;        /* blocks handed out and not freed */
static atomic_size_t largest;   /* largest request since the last sim_alloc_fail_at */
static atomic_size_t requested; /* bytes asked for since the last sim_alloc_fail_at */

/* Counts one attempt of `size` bytes; returns 1 when this attempt must fail. */
static int should_fail(size_t size)
{
    size_t big = atomic_load(&largest);
    while (size > big && !atomic_compare_exchange_weak(&largest, &big, size))
        ;
    atomic_fetch_add(&requested, size);
    long n = atomic_fetch_add(&attempts, 1) + 1;
    long f = atomic_load(&fail_at);
    return f > 0 && n == f;
}

void *sim_malloc(size_t size)
{
    if (should_fail(size))
        return NULL;
    /* malloc(0) may return NULL; one byte keeps "NULL means failure" true. */
    void *p = malloc(size ? size : 1);
    if (p)
        atomic_fetch_add(&live, 1);
    return p;
}

void *sim_malloc_array(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    return sim_malloc(n * size);
}

void *sim_calloc(size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        return NULL;
    if (should_fail(n * size))
        return NULL;
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (p)
        atomic_fetch_add(&live, 1);
    return p;
}

void *sim_realloc(void *p, size_t size)
{
    if (!p)
        return sim_malloc(size);
    if (should_fail(size))
        return NULL;
    return realloc(p, size ? size : 1); /* same block count whether it moves or not */
}

void sim_free(void *p)
{
    if (!p)
        return;
    atomic_fetch_sub(&live, 1);
    free(p);
}

void sim_alloc_fail_at(long n)
{
    atomic_store(&fail_at, n > 0 ? n : 0);
    atomic_store(&attempts, 0);
    atomic_store(&largest, 0);
    atomic_store(&requested, 0);
}

long sim_alloc_attempts(void)
{
    return atomic_load(&attempts);
}

long sim_alloc_live(void)
{
    return atomic_load(&live);
}

size_t sim_alloc_largest(void)
{
    return atomic_load(&largest);
}

size_t sim_alloc_requested(void)
{
    return atomic_load(&requested);
}
