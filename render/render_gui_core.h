/* render_gui_core.h - the viewer's core operations on its state (render_gui_app.h), used by the
 * frame loop (render_gui.c) and the controls (render_gui_control.c): the clock, the status
 * line, the camera fit, pausing, and composing the world image from the latest published
 * state. */
#ifndef RENDER_GUI_CORE_H
#define RENDER_GUI_CORE_H

#include "render_gui_app.h"

double render_gui_now(void);

/* Shows a message on the status line for 5 s; echo: also print it on stdout ("horizon gui:
 * ..."), for what a user may want in a terminal log (files written, failures). */
void render_gui_say(render_gui_app *a, int echo, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

void render_gui_fit(render_gui_app *a);
void render_gui_set_running(render_gui_app *a, int on);
void render_gui_resize_view(render_gui_app *a, int w, int h);

/* Brings the world image up to date with the latest published state and the camera (and
 * queues it to a recording in progress); returns 1 when it holds a picture. */
int render_gui_compose(render_gui_app *a);

#endif
