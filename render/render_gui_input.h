/* render_gui_input.h - the viewer's mouse and keyboard, translated into actions: what the user
 * did, in view pixels, without knowing what it will change. The control layer
 * (render_gui_control.h) carries actions out; scripts produce the same actions, so a scripted
 * session takes the very same paths as a user. No SDL calls beyond reading the event. */
#ifndef RENDER_GUI_INPUT_H
#define RENDER_GUI_INPUT_H

#include <SDL.h>

enum {
    RENDER_GUI_ACT_NONE = 0,
    RENDER_GUI_ACT_KEY,   /* key, shift */
    RENDER_GUI_ACT_CLICK, /* a left press and release that did not move: x, y */
    RENDER_GUI_ACT_DRAG,  /* a left drag moved from (x, y) to (x1, y1); it began at (x0, y0) */
    RENDER_GUI_ACT_DRAG_END, /* the left button went up after a drag that began at (x0, y0) */
    RENDER_GUI_ACT_PAINT, /* the right button: a stroke segment from (x0, y0) to (x, y) */
    RENDER_GUI_ACT_ZOOM,  /* notches of the wheel at (x, y) */
    RENDER_GUI_ACT_QUIT
};

typedef struct render_gui_action {
    int op;
    SDL_Keycode key;
    int shift;
    int x, y;   /* where (view pixels) */
    int x0, y0; /* where a drag began / where a stroke segment starts */
    int x1, y1; /* where a drag moved to */
    double notches;
} render_gui_action;

typedef struct render_gui_input {
    int left_down, dragging, down_x, down_y, last_x, last_y;
    int right_down, paint_x, paint_y;
} render_gui_input;

/* Turns one SDL event into at most one action. (win_w, win_h): the window size in its own
 * coordinates, (view_w, view_h): the view's pixels (they differ on HiDPI screens and for a
 * fixed --size). Returns 1 when *out holds an action. */
int render_gui_input_event(render_gui_input *in, const SDL_Event *ev, int win_w, int win_h,
                           int view_w, int view_h, render_gui_action *out);

/* A script key name -> keycode (+ shift): a character (c, l, +, ...), or space, right, left,
 * up, down, home, tab, f1, f2, esc, escape, plus, minus, equals, comma, period; "shift+" adds
 * Shift, an upper-case letter implies it. Returns 0 for an unknown name. */
int render_gui_input_key_by_name(const char *name, SDL_Keycode *key, int *shift);

#endif
