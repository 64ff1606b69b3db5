/* render_gui_script.c - parsing of viewer scripts (see render_gui_script.h). */
#include "render_gui_script.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *name;
    int op, nargs, text; /* numbers wanted, and whether a text argument comes first */
    long lo, hi;         /* range of every number */
} ops[] = {
    {"step", RENDER_GUI_CMD_STEP, 1, 0, 0, 1000000000L},
    {"key", RENDER_GUI_CMD_KEY, 0, 1, 0, 0},
    {"click", RENDER_GUI_CMD_CLICK, 2, 0, -100000, 100000},
    {"drag", RENDER_GUI_CMD_DRAG, 4, 0, -100000, 100000},
    {"paint", RENDER_GUI_CMD_PAINT, 2, 0, -100000, 100000},
    {"stroke", RENDER_GUI_CMD_STROKE, 4, 0, -100000, 100000},
    {"wheel", RENDER_GUI_CMD_WHEEL, 3, 0, -100000, 100000},
    {"resize", RENDER_GUI_CMD_RESIZE, 2, 0, 1, 16384},
    {"wait", RENDER_GUI_CMD_WAIT, 1, 0, 0, 1000000},
    {"snapshot", RENDER_GUI_CMD_SNAPSHOT, 0, 1, 0, 0},
    {"quit", RENDER_GUI_CMD_QUIT, 0, 0, 0, 0},
};

void render_gui_script_free(render_gui_script *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->cmd[i].text);
    free(s->cmd);
    s->cmd = NULL;
    s->n = 0;
}

/* Next whitespace-separated word of *p (modified in place); NULL at the end. */
static char *word(char **p)
{
    char *s = *p;
    while (*s == ' ' || *s == '\t' || *s == '\r')
        s++;
    if (*s == '\0')
        return NULL;
    char *start = s;
    while (*s && *s != ' ' && *s != '\t' && *s != '\r')
        s++;
    if (*s)
        *s++ = '\0';
    *p = s;
    return start;
}

/* Parses one line into c; returns 0 for a blank line, 1 for a command, or minus a sim_status
 * with err set. */
static int parse_line(char *line, const char *name, int ln, render_gui_cmd *c, sim_err *err)
{
    char *hash = strchr(line, '#');
    if (hash)
        *hash = '\0';
    char *p = line, *w = word(&p);
    if (!w)
        return 0;
    size_t k;
    for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
        if (strcmp(w, ops[k].name) == 0)
            break;
    if (k == sizeof ops / sizeof ops[0]) {
        return -sim_err_set(err, SIM_EINVAL, "%s:%d: unknown command '%s' (allowed step, key, "
                            "click, drag, paint, wheel, resize, wait, snapshot, quit)", name, ln,
                            w);
    }
    memset(c, 0, sizeof *c);
    c->op = ops[k].op;
    c->line = ln;
    if (ops[k].text) {
        char *t = word(&p);
        if (!t) {
            return -sim_err_set(err, SIM_EINVAL, "%s:%d: %s needs a %s", name, ln, ops[k].name,
                                c->op == RENDER_GUI_CMD_KEY ? "key name" : "file name");
        }
        if (!(c->text = strdup(t)))
            return -sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    for (int i = 0; i < ops[k].nargs; i++) {
        char *t = word(&p), *end;
        if (!t) {
            sim_err_set(err, SIM_EINVAL, "%s:%d: %s needs %d number%s", name, ln, ops[k].name,
                        ops[k].nargs, ops[k].nargs > 1 ? "s" : "");
            goto bad;
        }
        errno = 0;
        long v = strtol(t, &end, 10);
        if (*end || errno || v < ops[k].lo || v > ops[k].hi) {
            sim_err_set(err, SIM_EINVAL, "%s:%d: %s: '%s' is not an integer in %ld .. %ld", name,
                        ln, ops[k].name, t, ops[k].lo, ops[k].hi);
            goto bad;
        }
        c->arg[i] = v;
    }
    char *extra = word(&p);
    if (extra) {
        sim_err_set(err, SIM_EINVAL, "%s:%d: %s: unexpected '%s'", name, ln, ops[k].name, extra);
        goto bad;
    }
    return 1;
bad:
    free(c->text);
    c->text = NULL;
    return -SIM_EINVAL;
}

int render_gui_script_parse(const char *text, const char *name, render_gui_script *out,
                            sim_err *err)
{
    out->cmd = NULL;
    out->n = 0;
    char *copy = strdup(text);
    if (!copy)
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    int cap = 0, ln = 0, rc = SIM_OK;
    for (char *line = copy, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        ln++;
        render_gui_cmd c;
        int got = parse_line(line, name, ln, &c, err);
        if (got < 0) {
            rc = -got;
            break;
        }
        if (got == 0)
            continue;
        if (out->n == cap) {
            int ncap = cap ? cap * 2 : 16;
            render_gui_cmd *g = realloc(out->cmd, (size_t)ncap * sizeof *g);
            if (!g) {
                free(c.text);
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
            out->cmd = g;
            cap = ncap;
        }
        out->cmd[out->n++] = c;
    }
    free(copy);
    if (rc != SIM_OK)
        render_gui_script_free(out);
    return rc;
}

int render_gui_script_load(const char *path, render_gui_script *out, sim_err *err)
{
    out->cmd = NULL;
    out->n = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (len + 2 > cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            char *t = realloc(text, ncap);
            if (!t) {
                free(text);
                fclose(f);
                return sim_err_set(err, SIM_ENOMEM, "out of memory reading %s", path);
            }
            text = t;
            cap = ncap;
        }
        text[len++] = (char)c;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return sim_err_set(err, SIM_EIO, "%s: read error", path);
    }
    int rc = render_gui_script_parse(text ? (text[len] = '\0', text) : "", path, out, err);
    free(text);
    return rc;
}
