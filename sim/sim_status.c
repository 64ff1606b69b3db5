/* sim_status.c - formatting of error messages and names of status codes. */
#include "sim_status.h"

#include <stdarg.h>
#include <stdio.h>

int sim_err_set(sim_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

const char *sim_status_name(int code)
{
    switch (code) {
    case SIM_OK: return "ok";
    case SIM_EINVAL: return "invalid input";
    case SIM_ENOMEM: return "out of memory";
    case SIM_EIO: return "input/output error";
    case SIM_ENODEV: return "no such device";
    case SIM_EDEVMEM: return "out of device memory";
    case SIM_EDEVICE: return "device error";
    default: return "unknown error";
    }
}
