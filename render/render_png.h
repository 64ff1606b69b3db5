/* render_png.h - PNG files through libpng: atomic RGBA8 frame writes and tolerant reads. */
#ifndef RENDER_PNG_H
#define RENDER_PNG_H

#include <stdint.h>

#include "sim_status.h"

/* Largest image render_png_read accepts, per side (a 16384^2 RGBA image is 1 GiB). */
#define RENDER_PNG_MAX_SIDE 16384

/* Writes w x h RGBA8 pixels (row-major, w*h*4 bytes) to path as an 8-bit RGBA PNG, tuned for
 * speed (zlib level 1, no row filter). The bytes go to "<path>.tmp", which is flushed,
 * fsync'ed and closed before rename() puts it under path, so a reader never sees a
 * half-written frame. Returns SIM_OK, SIM_EINVAL for bad arguments, or SIM_EIO with
 * "path: what failed: reason" in err; on any failure the temporary file is removed and path is
 * left as it was. */
int render_png_write(const char *path, const uint8_t *rgba, int w, int h, sim_err *err);

/* The two halves of render_png_write, for writers that must choose when a file appears under
 * its final name (the frame queue renames in frame order): write_tmp writes and fsyncs
 * PATH.tmp (removed again on failure); commit renames PATH.tmp to PATH. */
int render_png_write_tmp(const char *path, const uint8_t *rgba, int w, int h, sim_err *err);
int render_png_commit(const char *path, sim_err *err);

/* Reads any PNG (palette, gray, 16-bit, with or without alpha, interlaced or not) into a new
 * malloc'ed RGBA8 buffer (*w * *h * 4 bytes) that the caller frees. Images larger than
 * RENDER_PNG_MAX_SIDE on a side are refused before anything is allocated. Returns SIM_OK,
 * SIM_EIO ("path: cannot open: reason"), SIM_EINVAL ("path: not a PNG", "path: corrupt PNG:
 * libpng's message", "path: image is WxH, larger than ...") or SIM_ENOMEM; on failure *rgba is
 * NULL and *w, *h are 0. */
int render_png_read(const char *path, uint8_t **rgba, int *w, int *h, sim_err *err);

#endif
