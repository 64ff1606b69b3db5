/* app_frames.h - the frame writer of a run: host buffers sized once, the current state composed
 * (on the device when the backend can, else on the host) and handed to a queue of PNG encoder
 * threads as DIR/frames/frame_NNNNNN.png. Shared by `horizon run` and `horizon sweep`. */
#ifndef APP_FRAMES_H
#define APP_FRAMES_H

#include <stdint.h>

#include "render_frame.h"
#include "render_queue.h"
#include "sim.h"

/* next_index: the number of the next frame (frame i shows step i*frames_every). */
typedef struct app_frames {
    render_queue *queue;
    sim_view view;
    float *field;
    uint32_t *agents;
    uint8_t *occ;
    int64_t next_index;
} app_frames;

/* Sizes the buffers for scenario sc with n_agents agents and starts the encoders. On failure
 * (SIM_ENOMEM, ...) the caller still calls app_frames_release. */
int app_frames_init(app_frames *fr, const sim_scenario *sc, int64_t n_agents, sim_err *err);

/* Composes the current state of s and queues it as DIR/frames/frame_<next_index>.png; returns
 * at once (or the first error of an earlier frame's write). */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err);

/* Waits for the queued frames, stops the encoders and frees the buffers; a zeroed struct is a
 * no-op. */
void app_frames_release(app_frames *fr);

#endif
