/* sim_map.h - scenario maps (walls, initial field values, capacities, sources, placement masks)
 * read from grayscale PNG files into per-cell values, through libpng.
 *
 * A map is a picture of the world: pixel (x, y) of a map of the world's size is cell (x, y),
 * y down, black 0 and white 1. Maps come from users, so every failure is one line that names
 * the file, the scenario key it was given for and what to do about it. */
#ifndef SIM_MAP_H
#define SIM_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "sim_status.h"

/* How a map whose size differs from the world's is brought to it. */
typedef enum sim_map_resample {
    SIM_MAP_RESAMPLE_NONE = 0,   /* refused */
    SIM_MAP_RESAMPLE_NEAREST = 1 /* each cell takes the pixel under its centre */
} sim_map_resample;

/* Pixels per side of the maps accepted (a 32768^2 16-bit map is 2 GiB of samples). */
#define SIM_MAP_MIN_SIDE 2
#define SIM_MAP_MAX_SIDE 32768

/* The largest map file sim_map_load reads, in bytes. */
#define SIM_MAP_FILE_MAX ((size_t)512 << 20)

/* Loads the grayscale PNG at path as width*height floats in [0, 1] into out, row-major, y down:
 * out[y*width+x] = g / maxval, g the pixel's gray value and maxval 2^depth-1 for depths 1, 2, 4,
 * 8 and 16, the division done once in float (so 16-bit 32768 is exactly 32768.0f/65535.0f).
 * Gray+alpha and tRNS are accepted, the alpha ignored. A palette PNG is accepted when every
 * palette entry is gray (r == g == b): a pixel is then its entry's gray value over 255.
 * Interlaced files are read as well.
 *
 * A PNG of another size than width x height is refused with SIM_MAP_RESAMPLE_NONE; with
 * SIM_MAP_RESAMPLE_NEAREST world cell (x, y) takes source pixel
 *   (sx, sy) = ((2x+1)*pw / (2*width), (2y+1)*ph / (2*height))
 * in 64-bit integer division (pw x ph the PNG's size): the pixel under the cell's centre.
 *
 * `what` names the map in messages (a scenario key, "field.food.map"). The caller owns out
 * (width*height floats); nothing is written outside it, and nothing is kept after the call.
 * Returns SIM_OK, or one line "PATH: WHAT: reason" in err and:
 *   SIM_EIO     the file cannot be opened or read ("cannot open: No such file or directory");
 *   SIM_EINVAL  "not a PNG file", "truncated or corrupt PNG (libpng: ...)", "1x1 map (allowed
 *               2 .. 32768 per side)", "300x200 map for a 256x256 world (set world.map_resample
 *               = nearest to resample)", "colour PNG (RGB); save it as 8- or 16-bit grayscale",
 *               colour palettes, a file over SIM_MAP_FILE_MAX, bad arguments;
 *   SIM_ENOMEM  an allocation (ours or libpng's) failed.
 * On failure out may be partly written; callers discard it. The size limits are checked on the
 * PNG header before anything is allocated or decoded. */
int sim_map_load(const char *path, const char *what, int width, int height, int resample,
                 float *out, sim_err *err);

/* Like sim_map_load, as a mask: out[i] = 1 where the value is >= 0.5 (8-bit 128 and up, 16-bit
 * 32768 and up), else 0. */
int sim_map_load_mask(const char *path, const char *what, int width, int height, int resample,
                      uint8_t *out, sim_err *err);

/* sim_map_load on a PNG already in memory (len bytes at data; the fuzzer's entry, and the one
 * both loaders go through). path is used only in messages; data is not kept. */
int sim_map_decode(const uint8_t *data, size_t len, const char *path, const char *what,
                   int width, int height, int resample, float *out, sim_err *err);

#endif
