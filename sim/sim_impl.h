/* sim_impl.h - the backend's side of the sim object: for a backend's own extensions (the CUDA
 * backend's tuning hook and bench) that take a sim and need their instance back. The app, the
 * renderer and the viewer never include it: they go through sim.h. Defined in sim.c. */
#ifndef SIM_IMPL_H
#define SIM_IMPL_H

#include "sim.h"

/* The instance that s's backend created (the `void *` its ops receive). The caller checks that
 * sim_get_backend(s) is its own table before it casts the pointer. */
void *sim_get_backend_state(sim *s);

#endif
