/* app_frames.h - the frame writer of a run: the current state composed by sim_compose (on the
 * device when the backend can, else on the host) into a buffer of a queue of PNG encoder
 * threads, written as DIR/frames/frame_NNNNNN.png, with a colour bar of the frame's range in
 * its bottom-right corner when output.legend is on (render_legend_stamp). Shared by
 * `horizon run` and `horizon sweep`. */
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
    int legend;             /* output.legend */
    char legend_label[64];  /* render_legend_label's words for the frames' range */
    float *field;           /* legend with an automatic range: host copy of the field (cells
                               floats) for the frame max it prints; NULL otherwise */
    int64_t cells;
    const sim_backend_ops *pinned; /* the backend that page-locked the frame buffers, or NULL */
} app_frames;

/* Sets up the view for scenario sc and starts `workers` PNG encoders (1 .. 64, with two frame
 * buffers each); with output.legend and an automatic range, also allocates the host copy of the
 * field (width*height floats, once per run). On failure (SIM_ENOMEM, ...) the caller still
 * calls app_frames_release. */
int app_frames_init(app_frames *fr, const sim_scenario *sc, int workers, sim_err *err);

/* Page-locks the encoder queue's frame buffers for backend ops (sim_pin_host), so that a GPU's
 * composition is copied into them by DMA instead of through a staging copy (a 1024^2 frame is
 * 4 MiB); nothing when ops cannot (the CPU backend). Undone by app_frames_release. */
void app_frames_pin(app_frames *fr, const sim_backend_ops *ops);

/* Composes the current state of s (sim_compose), stamps the legend when output.legend is on
 * (range [0, output.range_max] when that is > 0, else [0, the frame's field max], the value the
 * composition scaled by; a max <= 0 is printed as it is, every cell then has entry 0), and queues it as DIR/frames/frame_<next_index>.png; returns at once
 * (or the first error of an earlier frame's write, or the composition's or field read's status
 * with sim_errmsg(s) copied into err). */
int app_frames_emit(app_frames *fr, sim *s, const char *dir, sim_err *err);

/* Waits for the queued frames, stops the encoders and frees the field copy; a zeroed struct is
 * a no-op. */
void app_frames_release(app_frames *fr);

#endif
