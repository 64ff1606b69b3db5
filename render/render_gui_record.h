/* render_gui_record.h - the viewer's files in the output directory: the directory's lock (taken
 * the first time the session writes there), S snapshots (the view without overlays, one PNG
 * written at once, named after the step) and E recordings (every new state shown, encoded on the
 * frame queue's worker threads into DIR/recording_NNN/frame_NNNNNN.png, with steps.csv giving
 * the step of each frame). Every function reports what it did, or why it failed, in one line of
 * `said` for the status line. */
#ifndef RENDER_GUI_RECORD_H
#define RENDER_GUI_RECORD_H

#include <stdint.h>
#include <stdio.h>

#include "render_queue.h"
#include "sim_scenario.h"

typedef struct render_gui_record {
    char dir[SIM_PATH_MAX]; /* output.dir */
    int lock;               /* the directory's lock, -1 until taken */
    render_queue *q;        /* the recording in progress, NULL when none */
    FILE *steps;            /* its steps.csv */
    char rec_dir[SIM_PATH_MAX + 32];
    int64_t index, step;    /* frames queued; step of the last one */
    uint64_t gen;
    int w, h;
} render_gui_record;

#define RENDER_GUI_SAID 1280 /* bytes for a status line */

void render_gui_record_init(render_gui_record *r, const char *dir);

/* Makes the directory and takes its lock, once (later calls return at once). 0 after writing
 * why into said. */
int render_gui_record_own_dir(render_gui_record *r, char *said);

/* Writes rgba (w x h) to path, or to DIR/snapshot_STEP.png (never over an earlier one) when path
 * is NULL. Returns a sim_status. */
int render_gui_record_snapshot(render_gui_record *r, const uint8_t *rgba, int w, int h,
                               int64_t step, const char *path, char *said);

/* Starts recording frames of w x h into a fresh DIR/recording_NNN/, or, when one is running,
 * stops it (waits for its frames) and says how many it wrote. */
void render_gui_record_toggle(render_gui_record *r, int w, int h, char *said);

/* Queues rgba as the next frame when it shows a state not recorded yet (step or gen differ from
 * the last). Stops the recording (saying why) when the size changed or a frame failed. Returns
 * 1 when said holds something to show. */
int render_gui_record_frame(render_gui_record *r, const uint8_t *rgba, int w, int h,
                            int64_t step, uint64_t gen, char *said);

/* Stops a recording in progress and releases the lock. */
void render_gui_record_close(render_gui_record *r, char *said);

#endif
