/* sim_status.h - status codes and the per-object error message buffer shared by every layer. */
#ifndef SIM_STATUS_H
#define SIM_STATUS_H

#include <stddef.h>

/* Every fallible function returns one of these; 0 is success. The numbers are stable: the app
 * maps them to exit codes (SIM_EINVAL -> 2, SIM_ENODEV -> 2, SIM_ENOMEM/SIM_EDEVICE -> 3). */
typedef enum sim_status {
    SIM_OK = 0,
    SIM_EINVAL = 1,  /* bad input: scenario, option, file contents */
    SIM_ENOMEM = 2,  /* host allocation failed */
    SIM_EIO = 3,     /* a file could not be read or written */
    SIM_ENODEV = 4,  /* the requested backend or device is not available */
    SIM_EDEVMEM = 5, /* the device ran out of memory */
    SIM_EDEVICE = 6  /* any other device (CUDA) failure */
} sim_status;

/* A message buffer that lives with the object (or the caller) that failed. Functions that fail
 * write one line into it, without a trailing newline. */
typedef struct sim_err {
    char msg[512];
} sim_err;

/* Formats into err->msg (if err is not NULL) and returns code, so that call sites read
 * `return sim_err_set(err, SIM_EINVAL, "...", ...);`. */
int sim_err_set(sim_err *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* A short name for a status code ("invalid input", ...). */
const char *sim_status_name(int code);

#endif
