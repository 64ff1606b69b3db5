/* sim_text.c - whole input files as text (sim_text.h). */
#include "sim_text.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim_alloc.h"

int sim_text_read(const char *path, const char *what, size_t max_bytes, char **out, size_t *len,
                  sim_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot open %s: %s", path, what, strerror(errno));
    size_t cap = 4096, n = 0, got;
    char *text = sim_malloc(cap);
    int rc = SIM_OK;
    if (!text)
        goto nomem;
    do {
        if (n + 1 >= cap) {
            if (cap > max_bytes) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: %s larger than %zu MiB", path, what,
                                 max_bytes >> 20);
                goto done;
            }
            char *bigger = sim_realloc(text, cap * 2);
            if (!bigger)
                goto nomem;
            text = bigger;
            cap *= 2;
        }
        got = fread(text + n, 1, cap - n - 1, f);
        n += got;
    } while (got > 0);
    text[n] = '\0';
    if (ferror(f))
        rc = sim_err_set(err, SIM_EIO, "%s: read error: %s", path, strerror(errno));
    else if (strlen(text) != n)
        rc = sim_err_set(err, SIM_EINVAL, "%s: not a text file (contains a NUL byte)", path);
    goto done;
nomem:
    rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
done:
    fclose(f);
    if (rc == SIM_OK) {
        *out = text;
        if (len)
            *len = n;
    } else {
        sim_free(text);
    }
    return rc;
}
