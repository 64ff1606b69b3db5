/* render_gui_control.h - what the viewer's actions do: keys, clicks (inspect, select and follow
 * an agent, the parameter panel's buttons), drags (pan, or change a panel value), paint strokes,
 * zoom, and the script commands, which are turned into the very same actions. */
#ifndef RENDER_GUI_CONTROL_H
#define RENDER_GUI_CONTROL_H

#include "render_gui_app.h"

/* Carries out one action (render_gui_input.h). */
void render_gui_control_act(render_gui_app *a, const render_gui_action *act);

/* Runs script commands until one must wait; sets a->quit at the end. */
void render_gui_control_script(render_gui_app *a);

/* The viewer's key help, one line per key. */
extern const char render_gui_control_help[];

#endif
