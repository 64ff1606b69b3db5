/* app_frames.h - the frame writer of a run: the current state composed by sim_compose (on the
 * device when the backend can, else on the host) into a buffer of a queue of PNG encoder
 * threads, written as DIR/frames/frame_NNNNNN.png. Shared by `horizon run` and `horizon sweep`. */
#ifndef APP_FRAMES_H
#define APP_FRAMES_H

#include <stdint.h>

#include "render_frame.h"
#include "render_queue.h"
#include "sim.h"

/* view: the scenario's frame size, colormap and range, the whole world fitted; next_index: the
 * number of the next frame (frame i shows step i*frames_every). */
typedef struct app_frames {
    render_queue *queue;
    sim_view view;
    int64_t next_index;
} app_frames;

/* Sets up the view for scenario sc and starts the encoders. On failure (SIM_ENOMEM, ...) the
 * caller still calls app_frames_release. */
int app_frames_init(app_frames *fr, const sim_scenario *sc, sim_err *err);

/* Composes the current state of s (sim_compose) and queues it as
 * DIR/frames/frame_<next_index>.png; returns at once (or the first error of an earlier frame's
 * write, or the composition's status with sim_errmsg(s) copied into err). */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err);

/* Waits for the queued frames and stops the encoders; a zeroed struct is a no-op. */
void app_frames_release(app_frames *fr);

#endif
