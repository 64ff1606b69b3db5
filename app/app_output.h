/* app_output.h - the files of a run: the output directory (refused when it holds results),
 * stats.csv (streamed), field dumps (.npy) and run.json, each written so that no file under its
 * final name is ever half-written. */
#ifndef APP_OUTPUT_H
#define APP_OUTPUT_H

#include <stdint.h>
#include <stdio.h>

#include "sim.h"

/* A fresh run's directory is claimed in two parts, so that a run that cannot allocate its state
 * leaves no directory behind, and a second process is refused before anything is touched:
 *
 * app_output_claim, before the state is allocated: when DIR exists, takes its lock
 * (sim_outdir_lock: "DIR: in use by pid N" when another process holds it) and refuses a
 * directory that holds anything but the lock file unless force. When DIR does not exist, does
 * nothing (*lock_fd stays -1). A bad path (a file, a dangling symlink) is SIM_EINVAL.
 *
 * app_output_prepare, once the state is allocated: makes DIR when it was not there (*created = 1)
 * and locks it, removes the earlier run's files when force (stats.csv, run.json, checkpoint
 * files, events.csv, frames/frame_NNNNNN.png, fields/field_NNNNNN.npy and their .tmp names:
 * exactly the names a run writes; anything else stays, and a line on stderr says what was
 * kept), and makes
 * DIR/frames and DIR/fields as asked.
 *
 * app_output_abandon: after a failure before the run wrote any result, removes what
 * app_output_prepare made in a directory it created, the directory too, and releases the lock. */
int app_output_claim(const char *dir, int force, int *lock_fd, sim_err *err);
int app_output_prepare(const char *dir, int force, int frames, int fields, int *lock_fd,
                       int *created, sim_err *err);
void app_output_abandon(const char *dir, int lock_fd);

/* Whether DIR holds nothing but (perhaps) its lock file; a missing DIR is empty. */
int app_output_dir_is_empty(const char *dir);

/* A sweep's per-run files: removes RUNS/run_NNNNNN/stats.csv and frames/frame_NNNNNN.png (and
 * their temporary names), then the directories that are left empty. Other files stay. */
int app_output_remove_runs(const char *runs, sim_err *err);

/* stats.csv: a header row, then rows, whole rows in each write (the stream is unbuffered), so
 * a killed run leaves whole rows only. A write that fails (disk full) is cut off again and
 * SIM_EIO returned with the path and the OS reason: the rows before it stay. app_stats_reopen
 * appends to an existing file (a resumed run). app_stats_rows writes the rows st[i] (i < n)
 * whose keep[i] is not 0 (all of them for keep NULL), as many in a write as fit 64 KiB. */
int app_stats_open(const char *dir, const sim_scenario *sc, FILE **out, sim_err *err);
int app_stats_reopen(const char *dir, FILE **out, sim_err *err);
int app_stats_row(FILE *f, const sim_stats *st, const char *path, sim_err *err);
int app_stats_rows(FILE *f, const sim_stats *st, int n, const uint8_t *keep, const char *path,
                   sim_err *err);
void app_stats_header(FILE *f, const sim_scenario *sc); /* the header of sc's model */

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


#endif
