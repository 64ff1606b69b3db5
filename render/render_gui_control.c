/* render_gui_control.c - the viewer's actions (render_gui_control.h). */
#include "render_gui_control.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render_frame.h"
#include "render_gui_core.h"
#include "render_gui_view.h"

#define WHEEL_FACTOR 1.25 /* zoom per wheel notch */
#define PANEL_DRAG_PX 12  /* pixels of horizontal drag per step of a panel value */

const char render_gui_control_help[] =
    "Horizon viewer - keys\n"
    "\n"
    "Space        pause / resume\n"
    "N, Right     one step\n"
    "+ / -        steps per frame (x2 / /2, up to 1024, then max)\n"
    "Wheel        zoom about the cursor\n"
    "Left drag    pan\n"
    "0, Home      fit the world to the window\n"
    "Left click   inspect a cell; on an agent: select and follow it\n"
    "F            follow the selected agent again\n"
    "I            close the inspect panel, drop the selection\n"
    "Right drag   paint the field with the brush\n"
    "[ / ]        brush radius\n"
    "Tab, F2      parameter panel: click [-] [+] or drag a value;\n"
    "             Up/Down pick, , and . change\n"
    "A            colour agents: plain / moved this step\n"
    "B            colour bar on / off\n"
    "C            next colormap\n"
    "L            next layer\n"
    "P            plotted statistics (all, or one)\n"
    "S            save a snapshot PNG of the view\n"
    "E            start / stop recording frames\n"
    "R            restart with the same seed\n"
    "Shift+R      restart with a new seed\n"
    "H, F1        this help\n"
    "Q, Esc       quit";

static void zoom_at(render_gui_app *a, double notches, int x, int y)
{
    double lo, hi;
    render_gui_view_limits(&a->cam.view, a->sc.width, a->sc.height, &lo, &hi);
    render_gui_view_zoom(&a->cam.view, pow(WHEEL_FACTOR, notches), x + 0.5, y + 0.5, lo, hi);
    a->cam.fitted = 0;
}

static void pan(render_gui_app *a, int dx, int dy)
{
    render_gui_view_pan(&a->cam.view, dx, dy);
    a->cam.fitted = 0;
    a->cam.follow = 0; /* the user takes the camera back */
}

/* Applies a changed scenario's parameters from the next step. */
static void change_params(render_gui_app *a, const sim_scenario *next)
{
    a->sc = *next;
    render_gui_sim_set_params(a->sim, &a->sc);
}

static void nudge(render_gui_app *a, int row, int dir)
{
    sim_scenario next = a->sc;
    sim_err err;
    if (render_gui_panel_nudge(&next, row, dir, &err) != SIM_OK) {
        render_gui_say(a, 0, "%s", err.msg);
        return;
    }
    change_params(a, &next);
}

/* A point on the parameter panel: the row and button it hits (0 when not on a row). */
static int panel_hit(render_gui_app *a, int x, int y, int *row, int *dir)
{
    const render_gui_rect *r = &a->params_at;
    if (!a->panel.open || x < r->x || y < r->y || x >= r->x + r->w || y >= r->y + r->h)
        return 0;
    int m = 6 * a->scale;
    return render_gui_panel_hit(&a->sc, x - r->x - m, y - r->y - m, a->scale, row, dir);
}

static int on_panel(render_gui_app *a, int x, int y)
{
    const render_gui_rect *r = &a->params_at;
    return a->panel.open && x >= r->x && y >= r->y && x < r->x + r->w && y < r->y + r->h;
}

/* Left click: a panel button; else inspect the cell under (x, y), selecting the agent standing
 * there (the camera follows it); a click on background closes the inspect panel. */
static void click(render_gui_app *a, int x, int y)
{
    if (a->show_help) {
        a->show_help = 0;
        return;
    }
    int row, dir;
    if (panel_hit(a, x, y, &row, &dir)) {
        a->panel.row = row;
        if (dir)
            nudge(a, row, dir);
        return;
    }
    if (on_panel(a, x, y))
        return;
    int cx, cy;
    render_gui_pick *p = &a->pick;
    if (!render_gui_view_cell(&a->cam.view, x, y, a->sc.width, a->sc.height, &cx, &cy)) {
        p->probe_on = 0;
        a->cam.follow = 0;
        render_gui_sim_select(a->sim, -1);
        render_gui_sim_probe(a->sim, 0, 0, 0);
        return;
    }
    p->probe_on = 1;
    p->probe_x = cx;
    p->probe_y = cy;
    /* The simulation thread selects whoever stands there once it has read the cell (after the
     * step in progress, however long): the window goes on meanwhile. */
    a->cam.follow = 1;
    render_gui_sim_select_at(a->sim, cx, cy);
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

/* Right button: a stroke segment from pixel (x0, y0) to (x1, y1): discs along the cells between
 * them, about half a brush radius apart, so that a fast drag leaves a continuous stroke. */
static void paint(render_gui_app *a, int x0, int y0, int x1, int y1, int first)
{
    int ax, ay, bx, by;
    const sim_view *v = &a->cam.view;
    if (!render_gui_view_cell(v, x1, y1, a->sc.width, a->sc.height, &bx, &by))
        return;
    if (first || !render_gui_view_cell(v, x0, y0, a->sc.width, a->sc.height, &ax, &ay)) {
        ax = bx;
        ay = by;
    } else if (bx == a->pick.paint_x && by == a->pick.paint_y) {
        return;
    }
    float amount = brush_amount(a);
    if (first) {
        render_gui_sim_paint(a->sim, bx, by, a->pick.brush, amount);
    } else {
        int gap = a->pick.brush / 2 > 1 ? a->pick.brush / 2 : 1;
        int span = abs(bx - ax) > abs(by - ay) ? abs(bx - ax) : abs(by - ay);
        int n = (span + gap - 1) / gap;
        n = n > 0 ? n : 1;
        for (int i = 1; i <= n; i++)
            render_gui_sim_paint(a->sim, ax + (int)lround((double)(bx - ax) * i / n),
                                 ay + (int)lround((double)(by - ay) * i / n), a->pick.brush,
                                 amount);
    }
    a->pick.paint_x = bx;
    a->pick.paint_y = by;
}

static void set_spf(render_gui_app *a, int up)
{
    int s = a->pace.spf;
    if (up)
        s = s == 0 ? 0 : s >= RENDER_GUI_SPF_MAX ? 0 : s * 2;
    else
        s = s == 0 ? RENDER_GUI_SPF_MAX : s > 1 ? s / 2 : 1;
    a->pace.spf = s;
    render_gui_set_running(a, a->pace.running);
}

/* Keys of the open parameter panel; returns 1 when the key was the panel's. */
static int panel_key(render_gui_app *a, SDL_Keycode key)
{
    int rows = render_gui_panel_rows(&a->sc);
    switch (key) {
    case SDLK_UP:
        a->panel.row = (a->panel.row + rows - 1) % rows;
        return 1;
    case SDLK_DOWN:
        a->panel.row = (a->panel.row + 1) % rows;
        return 1;
    case SDLK_COMMA:
    case SDLK_LESS:
        nudge(a, a->panel.row, -1);
        return 1;
    case SDLK_PERIOD:
    case SDLK_GREATER:
        nudge(a, a->panel.row, 1);
        return 1;
    default:
        return 0;
    }
}

static void key(render_gui_app *a, SDL_Keycode k, int shift)
{
    if (a->panel.open && panel_key(a, k))
        return;
    sim_view *v = &a->cam.view;
    switch (k) {
    case SDLK_SPACE:
        render_gui_set_running(a, !a->pace.running);
        break;
    case SDLK_n:
    case SDLK_RIGHT:
        render_gui_set_running(a, 0);
        render_gui_sim_steps(a->sim, 1);
        break;
    case SDLK_PLUS:
    case SDLK_EQUALS: /* '+' is Shift+'=' on most layouts */
    case SDLK_KP_PLUS:
        set_spf(a, 1);
        break;
    case SDLK_MINUS:
    case SDLK_KP_MINUS:
        set_spf(a, 0);
        break;
    case SDLK_0:
    case SDLK_KP_0:
    case SDLK_HOME:
        render_gui_fit(a);
        break;
    case SDLK_a:
        a->cam.agent_mode = (a->cam.agent_mode + 1) % RENDER_GUI_AGENT_MODES;
        break;
    case SDLK_b:
        a->cam.legend = !a->cam.legend;
        break;
    case SDLK_c:
        a->cam.cmap = (a->cam.cmap + 1) % SIM_CMAP_COUNT;
        render_view_colormap(v, a->cam.cmap);
        break;
    case SDLK_f:
        a->cam.follow = 1; /* whenever an agent is selected */
        break;
    case SDLK_l:
        /* field + agents -> field -> agents -> horizon sums -> field + agents */
        v->layer = (v->layer + 1) % SIM_LAYER_COUNT;
        break;
    case SDLK_p:
        a->plot_mask = render_gui_plot_next_mask(a->plot_mask);
        break;
    case SDLK_s: {
        if (!render_gui_compose(a)) {
            render_gui_say(a, 1, "no picture yet to save");
            break;
        }
        char said[RENDER_GUI_SAID];
        render_gui_record_snapshot(&a->rec, a->world.px, a->world.view.w, a->world.view.h,
                                   a->world.step, NULL, said);
        render_gui_say(a, 1, "%s", said);
        break;
    }
    case SDLK_e: {
        char said[RENDER_GUI_SAID];
        render_gui_record_toggle(&a->rec, v->w, v->h, said);
        a->world.valid = 0; /* record the current state at once */
        render_gui_say(a, 1, "%s", said);
        break;
    }
    case SDLK_r: {
        uint64_t seed = a->sc.seed + (shift ? 1 : 0);
        a->sc.seed = seed;
        a->cam.follow = 0;
        render_gui_sim_select(a->sim, -1);
        render_gui_sim_restart(a->sim, seed);
        render_gui_say(a, 1, "restarted with seed %llu", (unsigned long long)seed);
        break;
    }
    case SDLK_TAB:
    case SDLK_F2:
        a->panel.open = !a->panel.open;
        break;
    case SDLK_h:
    case SDLK_F1:
        a->show_help = !a->show_help;
        break;
    case SDLK_i:
        a->pick.probe_on = 0;
        a->cam.follow = 0;
        render_gui_sim_select(a->sim, -1);
        render_gui_sim_probe(a->sim, 0, 0, 0);
        break;
    case SDLK_LEFTBRACKET:
        a->pick.brush = a->pick.brush > 0 ? a->pick.brush - 1 : 0;
        render_gui_say(a, 0, "brush radius %d cells", a->pick.brush);
        break;
    case SDLK_RIGHTBRACKET:
        a->pick.brush = a->pick.brush < SIM_MAX_RADIUS ? a->pick.brush + 1 : SIM_MAX_RADIUS;
        render_gui_say(a, 0, "brush radius %d cells", a->pick.brush);
        break;
    case SDLK_q:
    case SDLK_ESCAPE:
        a->quit = 1;
        break;
    default:
        break;
    }
}

/* A left drag: pans, or, when it began on a panel row, changes that row's value by one step per
 * PANEL_DRAG_PX pixels of horizontal travel. */
static void drag(render_gui_app *a, const render_gui_action *act)
{
    int row, dir;
    render_gui_pick *p = &a->pick;
    if (p->panel_drag_row < 0 && panel_hit(a, act->x0, act->y0, &row, &dir)) {
        p->panel_drag_row = row;
        p->panel_drag_x = act->x0;
        a->panel.row = row;
    }
    if (p->panel_drag_row >= 0) {
        while (act->x1 - p->panel_drag_x >= PANEL_DRAG_PX) {
            nudge(a, p->panel_drag_row, 1);
            p->panel_drag_x += PANEL_DRAG_PX;
        }
        while (p->panel_drag_x - act->x1 >= PANEL_DRAG_PX) {
            nudge(a, p->panel_drag_row, -1);
            p->panel_drag_x -= PANEL_DRAG_PX;
        }
        return;
    }
    if (on_panel(a, act->x0, act->y0))
        return;
    pan(a, act->x1 - act->x, act->y1 - act->y);
}

void render_gui_control_act(render_gui_app *a, const render_gui_action *act)
{
    switch (act->op) {
    case RENDER_GUI_ACT_QUIT:
        a->quit = 1;
        break;
    case RENDER_GUI_ACT_KEY:
        key(a, act->key, act->shift);
        break;
    case RENDER_GUI_ACT_CLICK:
        click(a, act->x, act->y);
        break;
    case RENDER_GUI_ACT_DRAG:
        drag(a, act);
        break;
    case RENDER_GUI_ACT_DRAG_END:
        a->pick.panel_drag_row = -1;
        break;
    case RENDER_GUI_ACT_PAINT:
        paint(a, act->x0, act->y0, act->x, act->y, act->x0 == act->x && act->y0 == act->y);
        break;
    case RENDER_GUI_ACT_ZOOM:
        zoom_at(a, act->notches, act->x, act->y);
        break;
    default:
        break;
    }
}

/* One script command, as the action a user's input would make where there is one. */
static void command(render_gui_app *a, const render_gui_cmd *c)
{
    const long *v = c->arg;
    render_gui_action act;
    memset(&act, 0, sizeof act);
    switch (c->op) {
    case RENDER_GUI_CMD_STEP:
        render_gui_set_running(a, 0);
        render_gui_sim_steps(a->sim, v[0]);
        return;
    case RENDER_GUI_CMD_KEY:
        act.op = RENDER_GUI_ACT_KEY;
        if (!render_gui_input_key_by_name(c->text, &act.key, &act.shift)) {
            a->rc = sim_err_set(&a->err, SIM_EINVAL, "%s:%d: key: unknown key '%s'",
                                a->cfg->script, c->line, c->text);
            a->quit = 1;
            return;
        }
        render_gui_control_act(a, &act);
        if (a->pace.running) /* a script steps only when told to */
            render_gui_set_running(a, 0);
        return;
    case RENDER_GUI_CMD_CLICK:
        act.op = RENDER_GUI_ACT_CLICK;
        act.x = (int)v[0];
        act.y = (int)v[1];
        render_gui_control_act(a, &act);
        return;
    case RENDER_GUI_CMD_DRAG:
        act.op = RENDER_GUI_ACT_DRAG;
        act.x0 = act.x = (int)v[0];
        act.y0 = act.y = (int)v[1];
        act.x1 = (int)v[2];
        act.y1 = (int)v[3];
        render_gui_control_act(a, &act);
        act.op = RENDER_GUI_ACT_DRAG_END;
        render_gui_control_act(a, &act);
        return;
    case RENDER_GUI_CMD_PAINT:
        act.op = RENDER_GUI_ACT_PAINT;
        act.x0 = act.x = (int)v[0];
        act.y0 = act.y = (int)v[1];
        render_gui_control_act(a, &act);
        return;
    case RENDER_GUI_CMD_STROKE:
        act.op = RENDER_GUI_ACT_PAINT;
        act.x0 = act.x = (int)v[0];
        act.y0 = act.y = (int)v[1];
        render_gui_control_act(a, &act); /* the press */
        act.x = (int)v[2];
        act.y = (int)v[3];
        render_gui_control_act(a, &act); /* one fast motion to the end */
        return;
    case RENDER_GUI_CMD_WHEEL:
        act.op = RENDER_GUI_ACT_ZOOM;
        act.x = (int)v[0];
        act.y = (int)v[1];
        act.notches = (double)v[2];
        render_gui_control_act(a, &act);
        return;
    case RENDER_GUI_CMD_RESIZE:
        SDL_SetWindowSize(a->win, (int)v[0], (int)v[1]);
        render_gui_resize_view(a, (int)v[0], (int)v[1]);
        return;
    case RENDER_GUI_CMD_WAIT:
        a->run.wait_frames = (int)v[0];
        return;
    case RENDER_GUI_CMD_SNAPSHOT: {
        char said[RENDER_GUI_SAID];
        int rc = SIM_EIO;
        if (render_gui_compose(a))
            rc = render_gui_record_snapshot(&a->rec, a->world.px, a->world.view.w,
                                            a->world.view.h, a->world.step, c->text, said);
        else
            snprintf(said, sizeof said, "no picture yet to save");
        render_gui_say(a, 1, "%s", said);
        if (rc != SIM_OK) {
            a->rc = sim_err_set(&a->err, rc, "%s:%d: snapshot %s: %s", a->cfg->script, c->line,
                                c->text, said);
            a->quit = 1;
        }
        return;
    }
    case RENDER_GUI_CMD_QUIT:
    default:
        a->quit = 1;
        return;
    }
}

void render_gui_control_script(render_gui_app *a)
{
    if (a->run.wait_frames > 0) {
        a->run.wait_frames--;
        return;
    }
    if (a->quit)
        return;
    /* Every command starts from a settled state, so its effect is reproducible... */
    if (!render_gui_sim_settled(a->sim)) {
        SDL_Delay(1);
        return;
    }
    /* ...and shown (and recorded) before the next command changes it. */
    render_gui_compose(a);
    if (a->run.pc >= a->run.script.n) {
        a->quit = 1;
        return;
    }
    command(a, &a->run.script.cmd[a->run.pc++]);
}
