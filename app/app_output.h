/* app_output.h - the files of a run: the output directory (refused when it holds results),
 * stats.csv (streamed), field dumps (.npy) and run.json, each written so that no file under its
 * final name is ever half-written. */
#ifndef APP_OUTPUT_H
#define APP_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* Makes DIR (and parents) and DIR/frames when frames are on. A directory that exists and is
 * not empty is refused (SIM_EINVAL) unless force, in which case the results of the earlier run
 * (stats.csv, run.json, frames/frame_*.png, fields/field_*.npy, checkpoint files) are removed
 * first, so the new run's files are never mixed with old ones. */
int app_output_prepare(const char *dir, int force, int frames, int fields, sim_err *err);

/* stats.csv: a header row, then one row per call, each in one write (the stream is unbuffered),
 * so a killed run leaves whole rows only. A row that fails (disk full) is cut off again and
 * SIM_EIO returned with the path and the OS reason. app_stats_reopen appends to an existing
 * file (a resumed run). */
int app_stats_open(const char *dir, FILE **out, sim_err *err);
int app_stats_reopen(const char *dir, FILE **out, sim_err *err);
int app_stats_row(FILE *f, const sim_stats *st, const char *path, sim_err *err);
void app_stats_header(FILE *f);

/* Makes DIR ready for a run resumed from a checkpoint at `step` of scenario sc: removes the
 * temporary files of interrupted writes, run.json, frames numbered after step/frames_every and
 * field dumps after step, and cuts stats.csv back to its whole rows of steps <= step (a
 * missing stats.csv is started again). Warns on stderr when rows or the last frame before the
 * checkpoint are missing. SIM_EIO/SIM_EINVAL with the path on failure. */
int app_output_resume(const char *dir, int64_t step, const sim_scenario *sc, sim_err *err);

/* Writes a float32 field as a NumPy .npy file (shape (height, width), C order) atomically. */
int app_write_npy(const char *path, const float *field, int width, int height, sim_err *err);

/* Writes `size` bytes atomically: path.tmp, fsync, rename, directory fsync. */
int app_write_atomic(const char *path, const void *data, size_t size, sim_err *err);

/* Creates directories along a path (like mkdir -p). */
int app_mkdirs(const char *path, sim_err *err);

#endif
