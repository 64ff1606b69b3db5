/* sim_text.h - reading a whole input text file (a scenario, a sweep file, an events file) with
 * the errors a user can act on: cannot open, read error, too large, not text. */
#ifndef SIM_TEXT_H
#define SIM_TEXT_H

#include <stddef.h>

#include "sim_status.h"

/* Reads the file at path into *out (NUL-terminated, sim_free it) and its length into *len (may
 * be NULL). `what` names the kind of file in messages ("scenario", "sweep file"). Failures, with
 * the path first: SIM_EIO "cannot open WHAT: reason" or "read error: reason"; SIM_EINVAL "WHAT
 * larger than N MiB" (more than max_bytes) or "not a text file (contains a NUL byte)";
 * SIM_ENOMEM. *out is NULL on failure. */
int sim_text_read(const char *path, const char *what, size_t max_bytes, char **out, size_t *len,
                  sim_err *err);

#endif
