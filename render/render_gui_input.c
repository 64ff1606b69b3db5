/* render_gui_input.c - the viewer's controls: keys, mouse (zoom about the cursor, pan, inspect,
 * paint) and the script commands, which drive the very same handlers. */
#include "render_gui_app.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render_colormap.h"
#include "render_frame.h"
#include "render_gui_view.h"

#define DRAG_SLOP 3         /* pixels a press may move and still be a click */
#define WHEEL_FACTOR 1.25   /* zoom per wheel notch */

/* Window coordinates -> view pixels (they differ on HiDPI screens and for a fixed size). */
static void to_view(render_gui_app *a, int *x, int *y)
{
    int ww, wh;
    SDL_GetWindowSize(a->win, &ww, &wh);
    if (ww > 0 && wh > 0 && (ww != a->view.w || wh != a->view.h)) {
        *x = (int)((int64_t)*x * a->view.w / ww);
        *y = (int)((int64_t)*y * a->view.h / wh);
    }
}

static void zoom_at(render_gui_app *a, double notches, int x, int y)
{
    double lo, hi;
    render_gui_view_limits(&a->view, a->sc.width, a->sc.height, &lo, &hi);
    render_gui_view_zoom(&a->view, pow(WHEEL_FACTOR, notches), x + 0.5, y + 0.5, lo, hi);
    a->fitted = 0;
}

static void pan(render_gui_app *a, int dx, int dy)
{
    render_gui_view_pan(&a->view, dx, dy);
    a->fitted = 0;
}

/* Left click: inspect the cell under (x, y); a click on background closes the panel. */
static void click(render_gui_app *a, int x, int y)
{
    if (a->show_help) {
        a->show_help = 0;
        return;
    }
    int cx, cy;
    if (render_gui_view_cell(&a->view, x, y, a->sc.width, a->sc.height, &cx, &cy)) {
        a->probe_on = 1;
        a->probe_x = cx;
        a->probe_y = cy;
    } else {
        a->probe_on = 0;
    }
    render_gui_sim_probe(a->sim, a->probe_on, a->probe_x, a->probe_y);
}

/* The brush amount: a quarter of the latest field maximum, so that a stroke shows whatever the
 * scenario's scale; at least the deposit of one agent-step. */
static float brush_amount(render_gui_app *a)
{
    render_gui_sim_history(a->sim, &a->hist, &a->hist_serial); /* the latest, for scripts */
    float amount = fabsf(a->sc.deposit);
    if (a->hist.n > 0) {
        double m = render_gui_plot_at(&a->hist, RENDER_GUI_STAT_MAX, a->hist.n - 1);
        if (isfinite(m) && 0.25 * m > amount)
            amount = (float)(0.25 * m);
    }
    return amount > 0.0f ? amount : 1.0f;
}

/* Right button: paint the field around the cell under (x, y), once per cell entered. */
static void paint(render_gui_app *a, int x, int y, int first)
{
    int cx, cy;
    if (!render_gui_view_cell(&a->view, x, y, a->sc.width, a->sc.height, &cx, &cy))
        return;
    if (!first && cx == a->paint_x && cy == a->paint_y)
        return;
    a->paint_x = cx;
    a->paint_y = cy;
    render_gui_sim_paint(a->sim, cx, cy, a->brush, brush_amount(a));
}

void render_gui_app_key(render_gui_app *a, SDL_Keycode key, int shift)
{
    switch (key) {
    case SDLK_SPACE:
        render_gui_app_set_running(a, !a->running);
        break;
    case SDLK_n:
    case SDLK_RIGHT:
        render_gui_app_set_running(a, 0);
        render_gui_sim_steps(a->sim, 1);
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS: /* '+' is Shift+'=' on most layouts */
    case SDLK_KP_PLUS:
        if (a->spf_level < RENDER_GUI_SPF_LEVELS - 1)
            a->spf_level++;
        render_gui_app_set_running(a, a->running);
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        if (a->spf_level > 0)
            a->spf_level--;
        render_gui_app_set_running(a, a->running);
        break;
    case SDLK_0:
    case SDLK_KP_0:
    case SDLK_HOME:
        render_gui_app_fit(a);
        break;
    case SDLK_c:
        a->cmap = (a->cmap + 1) % SIM_CMAP_COUNT;
        render_view_colormap(&a->view, a->cmap);
        break;
    case SDLK_l:
        /* field + agents -> field -> agents -> horizon sums -> field + agents */
        a->view.layer = (a->view.layer + 1) % SIM_LAYER_COUNT;
        break;
    case SDLK_p:
        a->stat = (a->stat + 1) % RENDER_GUI_STAT_COUNT;
        break;
    case SDLK_s:
        render_gui_app_snapshot(a, NULL);
        break;
    case SDLK_e:
        render_gui_app_record_toggle(a);
        break;
    case SDLK_r: {
        uint64_t seed = a->sc.seed + (shift ? 1 : 0);
        a->sc.seed = seed;
        render_gui_sim_restart(a->sim, seed);
        render_gui_app_say(a, "restarted with seed %llu", (unsigned long long)seed);
        break;
    }
    case SDLK_h:
    case SDLK_F1:
        a->show_help = !a->show_help;
        break;
    case SDLK_i:
        a->probe_on = 0;
        render_gui_sim_probe(a->sim, 0, 0, 0);
        break;
    case SDLK_LEFTBRACKET:
        a->brush = a->brush > 0 ? a->brush - 1 : 0;
        render_gui_app_say(a, "brush radius %d cells", a->brush);
        break;
    case SDLK_RIGHTBRACKET:
        a->brush = a->brush < SIM_MAX_RADIUS ? a->brush + 1 : SIM_MAX_RADIUS;
        render_gui_app_say(a, "brush radius %d cells", a->brush);
        break;
    case SDLK_q:
    case SDLK_ESCAPE:
        a->quit = 1;
        break;
    default:
        break;
    }
}

void render_gui_app_event(render_gui_app *a, const SDL_Event *ev)
{
    switch (ev->type) {
    case SDL_QUIT:
        a->quit = 1;
        break;
    case SDL_KEYDOWN:
        render_gui_app_key(a, ev->key.keysym.sym, (ev->key.keysym.mod & KMOD_SHIFT) != 0);
        break;
    case SDL_MOUSEWHEEL: {
        int x, y;
        SDL_GetMouseState(&x, &y);
        to_view(a, &x, &y);
        double n = ev->wheel.y;
        if (ev->wheel.direction == SDL_MOUSEWHEEL_FLIPPED)
            n = -n;
        zoom_at(a, n, x, y);
        break;
    }
    case SDL_MOUSEBUTTONDOWN: {
        int x = ev->button.x, y = ev->button.y;
        to_view(a, &x, &y);
        if (ev->button.button == SDL_BUTTON_LEFT) {
            a->left_down = 1;
            a->dragging = 0;
            a->down_x = a->last_x = x;
            a->down_y = a->last_y = y;
        } else if (ev->button.button == SDL_BUTTON_RIGHT) {
            a->right_down = 1;
            paint(a, x, y, 1);
        }
        break;
    }
    case SDL_MOUSEMOTION: {
        int x = ev->motion.x, y = ev->motion.y;
        to_view(a, &x, &y);
        if (a->left_down) {
            if (!a->dragging && abs(x - a->down_x) + abs(y - a->down_y) > DRAG_SLOP)
                a->dragging = 1;
            if (a->dragging) {
                pan(a, x - a->last_x, y - a->last_y);
                a->last_x = x;
                a->last_y = y;
            }
        }
        if (a->right_down)
            paint(a, x, y, 0);
        break;
    }
    case SDL_MOUSEBUTTONUP: {
        int x = ev->button.x, y = ev->button.y;
        to_view(a, &x, &y);
        if (ev->button.button == SDL_BUTTON_LEFT && a->left_down) {
            if (!a->dragging)
                click(a, x, y);
            a->left_down = a->dragging = 0;
        } else if (ev->button.button == SDL_BUTTON_RIGHT) {
            a->right_down = 0;
        }
        break;
    }
    default:
        break;
    }
}

/* A script key name -> keycode (+ shift). Returns 0 for an unknown name. */
static int key_by_name(const char *name, SDL_Keycode *key, int *shift)
{
    static const struct {
        const char *name;
        SDL_Keycode key;
    } named[] = {
        {"space", SDLK_SPACE}, {"right", SDLK_RIGHT},   {"home", SDLK_HOME},
        {"f1", SDLK_F1},       {"esc", SDLK_ESCAPE},    {"escape", SDLK_ESCAPE},
        {"plus", SDLK_PLUS},   {"minus", SDLK_MINUS},   {"equals", SDLK_EQUALS},
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

void render_gui_app_script(render_gui_app *a)
{
    if (a->wait_frames > 0) {
        a->wait_frames--;
        return;
    }
    while (!a->quit) {
        /* Every command starts from a settled state, so its effect is reproducible. */
        if (!render_gui_sim_settled(a->sim)) {
            SDL_Delay(1);
            return;
        }
        /* ...and shown (and recorded) before the next command changes it. */
        render_gui_app_compose(a);
        if (a->pc >= a->script.n) {
            a->quit = 1;
            return;
        }
        const render_gui_cmd *c = &a->script.cmd[a->pc++];
        const long *v = c->arg;
        switch (c->op) {
        case RENDER_GUI_CMD_STEP:
            render_gui_app_set_running(a, 0);
            render_gui_sim_steps(a->sim, v[0]);
            return;
        case RENDER_GUI_CMD_KEY: {
            SDL_Keycode key;
            int shift;
            if (!key_by_name(c->text, &key, &shift)) {
                a->rc = sim_err_set(&a->err, SIM_EINVAL, "%s:%d: key: unknown key '%s'",
                                    a->cfg->script, c->line, c->text);
                a->quit = 1;
                return;
            }
            render_gui_app_key(a, key, shift);
            if (a->running) /* a script steps only when told to */
                render_gui_app_set_running(a, 0);
            return;
        }
        case RENDER_GUI_CMD_CLICK:
            click(a, (int)v[0], (int)v[1]);
            return;
        case RENDER_GUI_CMD_DRAG:
            pan(a, (int)(v[2] - v[0]), (int)(v[3] - v[1]));
            return;
        case RENDER_GUI_CMD_PAINT:
            paint(a, (int)v[0], (int)v[1], 1);
            return;
        case RENDER_GUI_CMD_WHEEL:
            zoom_at(a, (double)v[2], (int)v[0], (int)v[1]);
            return;
        case RENDER_GUI_CMD_RESIZE:
            SDL_SetWindowSize(a->win, (int)v[0], (int)v[1]);
            render_gui_app_resize_view(a, (int)v[0], (int)v[1]);
            return;
        case RENDER_GUI_CMD_WAIT:
            a->wait_frames = (int)v[0];
            return;
        case RENDER_GUI_CMD_SNAPSHOT: {
            int rc = render_gui_app_snapshot(a, c->text);
            if (rc != SIM_OK) {
                a->rc = sim_err_set(&a->err, rc, "%s:%d: snapshot %s: %s", a->cfg->script,
                                    c->line, c->text, a->status_text);
                a->quit = 1;
            }
            return;
        }
        case RENDER_GUI_CMD_QUIT:
            a->quit = 1;
            return;
        default:
            return;
        }
    }
}
