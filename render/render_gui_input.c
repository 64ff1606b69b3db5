/* render_gui_input.c - mouse and keyboard events into actions (render_gui_input.h). */
#include "render_gui_input.h"

#include <stdlib.h>
#include <string.h>

#define DRAG_SLOP 3 /* pixels a press may move and still be a click */

/* Window coordinates -> view pixels. */
static void to_view(int win_w, int win_h, int view_w, int view_h, int *x, int *y)
{
    if (win_w > 0 && win_h > 0 && (win_w != view_w || win_h != view_h)) {
        *x = (int)((int64_t)*x * view_w / win_w);
        *y = (int)((int64_t)*y * view_h / win_h);
    }
}

int render_gui_input_event(render_gui_input *in, const SDL_Event *ev, int win_w, int win_h,
                           int view_w, int view_h, render_gui_action *out)
{
    memset(out, 0, sizeof *out);
    switch (ev->type) {
    case SDL_QUIT:
        out->op = RENDER_GUI_ACT_QUIT;
        return 1;
    case SDL_KEYDOWN:
        out->op = RENDER_GUI_ACT_KEY;
        out->key = ev->key.keysym.sym;
        out->shift = (ev->key.keysym.mod & KMOD_SHIFT) != 0;
        return 1;
    case SDL_MOUSEWHEEL: {
        int x, y;
        SDL_GetMouseState(&x, &y);
        to_view(win_w, win_h, view_w, view_h, &x, &y);
        out->op = RENDER_GUI_ACT_ZOOM;
        out->x = x;
        out->y = y;
        out->notches = ev->wheel.direction == SDL_MOUSEWHEEL_FLIPPED ? -ev->wheel.y
                                                                     : ev->wheel.y;
        return 1;
    }
    case SDL_MOUSEBUTTONDOWN: {
        int x = ev->button.x, y = ev->button.y;
        to_view(win_w, win_h, view_w, view_h, &x, &y);
        if (ev->button.button == SDL_BUTTON_LEFT) {
            in->left_down = 1;
            in->dragging = 0;
            in->down_x = in->last_x = x;
            in->down_y = in->last_y = y;
            return 0;
        }
        if (ev->button.button == SDL_BUTTON_RIGHT) {
            in->right_down = 1;
            in->paint_x = x;
            in->paint_y = y;
            out->op = RENDER_GUI_ACT_PAINT;
            out->x0 = out->x = x;
            out->y0 = out->y = y;
            return 1;
        }
        return 0;
    }
    case SDL_MOUSEMOTION: {
        int x = ev->motion.x, y = ev->motion.y;
        to_view(win_w, win_h, view_w, view_h, &x, &y);
        if (in->right_down) {
            /* A fast drag skips pixels between events: the segment from the last position
             * lets the control layer draw a continuous stroke. */
            out->op = RENDER_GUI_ACT_PAINT;
            out->x0 = in->paint_x;
            out->y0 = in->paint_y;
            out->x = x;
            out->y = y;
            in->paint_x = x;
            in->paint_y = y;
            return 1;
        }
        if (!in->left_down)
            return 0;
        if (!in->dragging && abs(x - in->down_x) + abs(y - in->down_y) > DRAG_SLOP)
            in->dragging = 1;
        if (!in->dragging)
            return 0;
        out->op = RENDER_GUI_ACT_DRAG;
        out->x0 = in->down_x;
        out->y0 = in->down_y;
        out->x = in->last_x;
        out->y = in->last_y;
        out->x1 = x;
        out->y1 = y;
        in->last_x = x;
        in->last_y = y;
        return 1;
    }
    case SDL_MOUSEBUTTONUP: {
        int x = ev->button.x, y = ev->button.y;
        to_view(win_w, win_h, view_w, view_h, &x, &y);
        if (ev->button.button == SDL_BUTTON_LEFT && in->left_down) {
            int was_drag = in->dragging;
            in->left_down = in->dragging = 0;
            out->op = was_drag ? RENDER_GUI_ACT_DRAG_END : RENDER_GUI_ACT_CLICK;
            out->x = x;
            out->y = y;
            out->x0 = in->down_x;
            out->y0 = in->down_y;
            return 1;
        }
        if (ev->button.button == SDL_BUTTON_RIGHT)
            in->right_down = 0;
        return 0;
    }
    default:
        return 0;
    }
}

int render_gui_input_key_by_name(const char *name, SDL_Keycode *key, int *shift)
{
    static const struct {
        const char *name;
        SDL_Keycode key;
    } named[] = {
        {"space", SDLK_SPACE}, {"right", SDLK_RIGHT},   {"left", SDLK_LEFT},
        {"up", SDLK_UP},       {"down", SDLK_DOWN},     {"home", SDLK_HOME},
        {"tab", SDLK_TAB},     {"f1", SDLK_F1},         {"f2", SDLK_F2},
        {"esc", SDLK_ESCAPE},  {"escape", SDLK_ESCAPE}, {"plus", SDLK_PLUS},
        {"minus", SDLK_MINUS}, {"equals", SDLK_EQUALS}, {"comma", SDLK_COMMA},
        {"period", SDLK_PERIOD},
    };
    *shift = 0;
    if (strncmp(name, "shift+", 6) == 0) {
        *shift = 1;
        name += 6;
    }
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (SDL_strcasecmp(name, named[i].name) == 0) {
            *key = named[i].key;
            return 1;
        }
    if (strlen(name) != 1 || name[0] < 33 || name[0] > 126)
        return 0;
    char c = name[0];
    if (c >= 'A' && c <= 'Z') {
        *shift = 1;
        c = (char)(c - 'A' + 'a');
    }
    *key = (SDL_Keycode)c;
    return 1;
}
