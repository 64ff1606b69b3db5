/* app_models.c - the model library (app_models.h): where it lives, names resolved to files, and
 * `horizon models`, which lists it. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app.h"
#include "app_models.h"

#ifndef HORIZON_EXE_TO_MODELS
#define HORIZON_EXE_TO_MODELS "../share/horizon/models"
#endif

static const char models_usage[] =
    "usage: horizon models\n"
    "\n"
    "Lists the model library: one line per model, its name and what it is. A model is a\n"
    "scenario file NAME.ini in the library; its name goes wherever a scenario file does:\n"
    "\n"
    "  horizon run laplace --set world.width=400 --set world.height=200\n"
    "  horizon gui aggregation\n"
    "  horizon info laplace\n"
    "\n"
    "The library is the first of these directories that exists (a name is looked up in each in\n"
    "turn):\n"
    "  $HORIZON_DATA_DIR/models      when HORIZON_DATA_DIR is set\n"
    "  <prefix>/share/horizon/models beside the installed bin/horizon\n"
    "  assets/models                 in the source tree this horizon was built from\n"
    "\n"
    "An argument that names an existing file is always that file, not a model.\n";

/* 1 when s is a model name: [A-Za-z0-9_-]+, no longer than a file name may be. The rule keeps
 * paths ("maps/x.ini", "./laplace") and file names ("laplace.ini") out. */
static int is_name(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > NAME_MAX - 4)
        return 0;
    for (const char *p = s; *p; p++) {
        int ok = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                 (*p >= '0' && *p <= '9') || *p == '-' || *p == '_';
        if (!ok)
            return 0;
    }
    return 1;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir joined with rel, each leading "../" of rel taking the last component off dir, so that a
 * directory that does not exist still reads well in a message. 0 when it does not fit. */
static int join_folded(const char *dir, const char *rel, char *out, size_t n)
{
    char base[APP_MODELS_PATH_MAX];
    if (snprintf(base, sizeof base, "%s", dir) >= (int)sizeof base)
        return 0;
    while (strncmp(rel, "../", 3) == 0) {
        char *slash = strrchr(base, '/');
        if (!slash || slash == base)
            break;
        *slash = '\0';
        rel += 3;
    }
    return snprintf(out, n, "%s/%s", base, rel) < (int)n;
}

/* The installed library, from the executable's own path. 0 when /proc/self/exe cannot be
 * read (not Linux, or no /proc). */
static int installed_dir(char *out, size_t n)
{
    char exe[APP_MODELS_PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0 || (size_t)len >= sizeof exe - 1)
        return 0;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    return join_folded(exe[0] ? exe : "/", HORIZON_EXE_TO_MODELS, out, n);
}

int app_models_dirs(char dirs[APP_MODELS_MAX_DIRS][APP_MODELS_PATH_MAX])
{
    char cand[APP_MODELS_MAX_DIRS][APP_MODELS_PATH_MAX];
    int n_cand = 0;
    const char *env = getenv("HORIZON_DATA_DIR");
    if (env && env[0] &&
        snprintf(cand[n_cand], APP_MODELS_PATH_MAX, "%s/models", env) < APP_MODELS_PATH_MAX)
        n_cand++;
    if (installed_dir(cand[n_cand], APP_MODELS_PATH_MAX))
        n_cand++;
#ifdef HORIZON_SOURCE_MODELS_DIR
    snprintf(cand[n_cand++], APP_MODELS_PATH_MAX, "%s", HORIZON_SOURCE_MODELS_DIR);
#endif
    /* Existing directories as their real paths (a relative HORIZON_DATA_DIR, symlinks), and each
     * once: an install into the source tree would otherwise be looked in twice. */
    int n = 0;
    for (int i = 0; i < n_cand; i++) {
        char real[PATH_MAX];
        const char *d = realpath(cand[i], real) ? real : cand[i];
        int seen = 0;
        for (int j = 0; j < n; j++)
            seen |= strcmp(dirs[j], d) == 0;
        if (!seen && strlen(d) < APP_MODELS_PATH_MAX)
            snprintf(dirs[n++], APP_MODELS_PATH_MAX, "%s", d);
    }
    return n;
}

/* "A, B, C": the directories for a message. */
static void list_dirs(char dirs[][APP_MODELS_PATH_MAX], int n, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; i < n && used < size; i++) {
        int w = snprintf(out + used, size - used, "%s%s", i ? ", " : "", dirs[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n == 0)
        snprintf(out, size, "nowhere: no HORIZON_DATA_DIR and no library built in");
}

int app_models_resolve(const char *arg, char *path, size_t n, sim_err *err)
{
    struct stat st;
    if (!path || n == 0) /* also tells the compiler, whose sanitizer build warns otherwise */
        return sim_err_set(err, SIM_EINVAL, "models: no room for the path");
    if ((stat(arg, &st) == 0 && !S_ISDIR(st.st_mode)) || !is_name(arg)) {
        if (snprintf(path, n, "%s", arg) >= (int)n)
            return sim_err_set(err, SIM_EINVAL, "%.64s...: path too long", arg);
        return SIM_OK;
    }
    char dirs[APP_MODELS_MAX_DIRS][APP_MODELS_PATH_MAX];
    int n_dirs = app_models_dirs(dirs);
    for (int i = 0; i < n_dirs; i++) {
        if (snprintf(path, n, "%s/%s.ini", dirs[i], arg) >= (int)n)
            continue;
        if (stat(path, &st) == 0 && !S_ISDIR(st.st_mode))
            return SIM_OK;
    }
    path[0] = '\0';
    char where[400];
    list_dirs(dirs, n_dirs, where, sizeof where);
    return sim_err_set(err, SIM_EINVAL,
                       "no scenario file or model named '%s' (see `horizon models`; looked in %s)",
                       arg, where);
}

/* ---- horizon models ---- */

/* scandir's filter: NAME.ini files whose NAME is a model name (what the lookup can find). */
static int model_file(const struct dirent *e)
{
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".ini") != 0)
        return 0;
    char stem[NAME_MAX + 1];
    snprintf(stem, sizeof stem, "%.*s", (int)(len - 4), e->d_name);
    return is_name(stem);
}

/* By byte value, not the locale: the same order everywhere. */
static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* One line of the listing: the name padded to `width`, then the description, or why there is
 * none. A file that does not parse is listed with the parser's message, without the directory
 * the header already gives. */
static void print_model(const char *dir, const char *file, int width)
{
    char path[APP_MODELS_PATH_MAX + NAME_MAX + 2];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int name_len = (int)strlen(file) - 4;
    sim_scenario sc;
    sim_err err = {{0}};
    sim_scenario_defaults(&sc);
    int rc = sim_scenario_parse_file(&sc, path, &err);
    printf("  %-*.*s  ", width, name_len, file);
    if (rc != SIM_OK) {
        size_t dl = strlen(dir);
        const char *msg = err.msg;
        if (strncmp(msg, dir, dl) == 0 && msg[dl] == '/')
            msg += dl + 1;
        printf("(does not parse: %s)\n", msg);
    } else {
        printf("%s\n", sc.description[0] ? sc.description : "(no description)");
    }
}

int app_models_main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            fputs(models_usage, stdout);
            return APP_EXIT_OK;
        }
        fprintf(stderr, "horizon models: unexpected argument '%s' (see horizon models --help)\n",
                argv[i]);
        return APP_EXIT_USAGE;
    }
    char dirs[APP_MODELS_MAX_DIRS][APP_MODELS_PATH_MAX];
    int n_dirs = app_models_dirs(dirs), lib = -1;
    for (int i = 0; i < n_dirs && lib < 0; i++)
        if (is_dir(dirs[i]))
            lib = i;
    if (lib < 0) {
        char where[400];
        list_dirs(dirs, n_dirs, where, sizeof where);
        fprintf(stderr, "horizon models: no model library found (looked in %s; set "
                "HORIZON_DATA_DIR to a directory that holds models/)\n", where);
        return APP_EXIT_FAIL;
    }
    struct dirent **ents = NULL;
    int n = scandir(dirs[lib], &ents, model_file, by_name);
    if (n < 0) {
        fprintf(stderr, "horizon models: %s: %s\n", dirs[lib], strerror(errno));
        return APP_EXIT_FAIL;
    }
    /* The names line up in one column, at least as wide as the longest shipped name. */
    int width = 12;
    for (int i = 0; i < n; i++) {
        int len = (int)strlen(ents[i]->d_name) - 4;
        width = len > width ? len : width;
    }
    printf("models in %s:\n", dirs[lib]);
    if (n == 0)
        printf("  (none: no NAME.ini files)\n");
    for (int i = 0; i < n; i++) {
        print_model(dirs[lib], ents[i]->d_name, width);
        free(ents[i]);
    }
    free(ents);
    return APP_EXIT_OK;
}
