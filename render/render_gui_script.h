/* render_gui_script.h - the viewer's script language for deterministic runs (`--script FILE`):
 * one command per line, '#' starts a comment.
 *
 *   step N              run N steps (the viewer pauses first) and wait for them
 *   key NAME            press a key: a character (c, l, +, ...), or space, right, home, f1, esc,
 *                       plus, minus, equals; "shift+r" adds Shift
 *   click X Y           left click at pixel (X, Y): inspect that cell
 *   drag X0 Y0 X1 Y1    left drag: pan
 *   paint X Y           right click at pixel (X, Y): paint with the brush
 *   stroke X0 Y0 X1 Y1  right drag from (X0, Y0) to (X1, Y1) in one fast motion: a stroke
 *   wheel X Y N         N wheel notches at (X, Y) (> 0 zooms in)
 *   resize W H          make the view W x H pixels
 *   wait N              draw N frames
 *   snapshot FILE       save the current view (no overlays) as PNG, like the S key
 *   quit                end (also at the end of the file)
 *
 * Every command waits until the simulation has settled, so a script gives the same pictures
 * on every run. */
#ifndef RENDER_GUI_SCRIPT_H
#define RENDER_GUI_SCRIPT_H

#include "sim_status.h"

enum {
    RENDER_GUI_CMD_STEP,
    RENDER_GUI_CMD_KEY,
    RENDER_GUI_CMD_CLICK,
    RENDER_GUI_CMD_DRAG,
    RENDER_GUI_CMD_PAINT,
    RENDER_GUI_CMD_STROKE,
    RENDER_GUI_CMD_WHEEL,
    RENDER_GUI_CMD_RESIZE,
    RENDER_GUI_CMD_WAIT,
    RENDER_GUI_CMD_SNAPSHOT,
    RENDER_GUI_CMD_QUIT
};

typedef struct render_gui_cmd {
    int op;       /* RENDER_GUI_CMD_* */
    int line;     /* in the file, for messages */
    long arg[4];  /* numbers, in order */
    char *text;   /* key name or file name (owned by the script) */
} render_gui_cmd;

typedef struct render_gui_script {
    render_gui_cmd *cmd;
    int n;
} render_gui_script;

/* Parses script text; `name` prefixes messages. On failure returns SIM_EINVAL with
 * "name:LINE: what is wrong" (or SIM_ENOMEM) in err and leaves *out empty. */
int render_gui_script_parse(const char *text, const char *name, render_gui_script *out,
                            sim_err *err);

/* Reads and parses a file (SIM_EIO when it cannot be read). */
int render_gui_script_load(const char *path, render_gui_script *out, sim_err *err);

void render_gui_script_free(render_gui_script *s); /* leaves it empty; an empty one is fine */

#endif
