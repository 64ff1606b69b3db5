/* fuzz_png.c - libFuzzer harness for the PNG reader (render_png_read), the one place Horizon
 * reads images it did not write. render_png_read takes a path, so each input goes through a
 * file of this process (in /dev/shm when there is one: no disk traffic). A decoded image must
 * have the size it claims. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render_png.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) {
        const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/hz_fuzz_png_%d.png", dir, (int)getpid());
    }
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (size && fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    uint8_t *rgba;
    int w, h;
    sim_err err;
    int rc = render_png_read(path, &rgba, &w, &h, &err);
    if (rc == SIM_OK) {
        if (w < 1 || h < 1 || w > RENDER_PNG_MAX_SIDE || h > RENDER_PNG_MAX_SIDE)
            abort();
        volatile uint8_t sink = rgba[(size_t)w * (size_t)h * 4 - 1]; /* the whole buffer */
        (void)sink;
        free(rgba);
    } else if (rgba || w || h || err.msg[0] == '\0') {
        abort();
    }
    unlink(path);
    return 0;
}
