/* app_output.c - output directory, stats.csv, .npy dumps and atomic file writes. */
#include "app_output.h"

#include "sim_outdir.h"
#include "sim_stats.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- which files are a run's own ----
 *
 * A run writes exactly these names, and --force and --resume remove only these: anything else in
 * the directory (notes, a frame the user renamed) is the user's and stays. */

/* 1 when `name` is PREFIX + a number as "%06lld" prints it (six digits, or more without a
 * leading zero) + SUFFIX, with the number in *num. frame_12.png or frame_best.png are not. */
static int numbered_name(const char *name, const char *prefix, const char *suffix, int64_t *num)
{
    size_t n = strlen(name), np = strlen(prefix), ns = strlen(suffix);
    if (n < np + 6 + ns || strncmp(name, prefix, np) != 0 || strcmp(name + n - ns, suffix) != 0)
        return 0;
    size_t digits = n - np - ns;
    const char *d = name + np;
    if (digits > 18 || (digits > 6 && d[0] == '0'))
        return 0;
    int64_t v = 0;
    for (size_t i = 0; i < digits; i++) {
        if (d[i] < '0' || d[i] > '9')
            return 0;
        v = v * 10 + (d[i] - '0');
    }
    *num = v;
    return 1;
}

/* The files of a run at the top of its directory (and their temporary names). */
static int top_level_own(const char *name)
{
    static const char *const own[] = {"stats.csv", "run.json", "checkpoint.hzc",
                                      "checkpoint.hzc.prev", "events.csv",
                                      SIM_OUTDIR_LOCK_NAME};
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        size_t n = strlen(own[i]);
        if (strncmp(name, own[i], n) == 0 && (name[n] == '\0' || strcmp(name + n, ".tmp") == 0))
            return 1;
    }
    return 0;
}

/* The numbered outputs of one subdirectory: final names and, with tmp, temporary ones. */
typedef struct out_series {
    const char *sub, *prefix, *suffix, *tmp_suffix;
} out_series;

static const out_series series[] = {
    {"frames", "frame_", ".png", ".png.tmp"},
    {"fields", "field_", ".npy", ".npy.tmp"},
};

/* What to do with a subdirectory's numbered files. */
enum { OWN_ALL, OWN_TMP, OWN_AFTER };

/* Removes the run's own files in DIR/SUB: every one (OWN_ALL), the temporary ones (OWN_TMP) or
 * the final ones numbered after `last` (OWN_AFTER). Other names are counted in *kept and the
 * first few listed in `kept_list`. */
static int remove_series(const char *dir, const out_series *se, int what, int64_t last,
                         int *kept, char *kept_list, size_t kept_n, sim_err *err)
{
    char path[SIM_PATH_MAX + 300];
    snprintf(path, sizeof path, "%s/%s", dir, se->sub);
    DIR *d = opendir(path);
    if (!d)
        return SIM_OK;
    struct dirent *e;
    int rc = SIM_OK;
    while ((e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            continue;
        int64_t v;
        int fin = numbered_name(name, se->prefix, se->suffix, &v);
        int tmp = !fin && numbered_name(name, se->prefix, se->tmp_suffix, &v);
        int go = what == OWN_ALL ? fin || tmp : what == OWN_TMP ? tmp : fin && v > last;
        if (!fin && !tmp && kept) {
            if ((*kept)++ < 4) {
                size_t used = strlen(kept_list);
                snprintf(kept_list + used, kept_n - used, "%s%s/%s", used ? ", " : "", se->sub,
                         name);
            }
        }
        if (!go)
            continue;
        char file[SIM_PATH_MAX + 600];
        snprintf(file, sizeof file, "%s/%s", path, name);
        if (unlink(file) != 0 && errno != ENOENT) {
            rc = sim_err_set(err, SIM_EIO, "%s: cannot remove earlier result: %s", file,
                             strerror(errno));
            break;
        }
    }
    closedir(d);
    return rc;
}

/* Whether DIR holds anything but the lock file. */
int app_output_dir_is_empty(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1;
    struct dirent *e;
    int empty = 1;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 &&
            strcmp(e->d_name, SIM_OUTDIR_LOCK_NAME) != 0) {
            empty = 0;
            break;
        }
    closedir(d);
    return empty;
}

/* Removes the earlier run's files (--force) and says which other files stay. */
static int remove_earlier(const char *dir, sim_err *err)
{
    int kept = 0, rc = SIM_OK;
    char kept_list[400] = "";
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && rc == SIM_OK && (e = readdir(d)) != NULL) {
        const char *name = e->d_name;
        if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
            strcmp(name, SIM_OUTDIR_LOCK_NAME) == 0 || strcmp(name, "frames") == 0 ||
            strcmp(name, "fields") == 0)
            continue;
        if (!top_level_own(name)) {
            if (kept++ < 4) {
                size_t used = strlen(kept_list);
                snprintf(kept_list + used, sizeof kept_list - used, "%s%s", used ? ", " : "",
                         name);
            }
            continue;
        }
        char file[SIM_PATH_MAX + 300];
        snprintf(file, sizeof file, "%s/%s", dir, name);
        if (unlink(file) != 0 && errno != ENOENT)
            rc = sim_err_set(err, SIM_EIO, "%s: cannot remove earlier result: %s", file,
                             strerror(errno));
    }
    if (d)
        closedir(d);
    for (size_t i = 0; rc == SIM_OK && i < sizeof series / sizeof series[0]; i++)
        rc = remove_series(dir, &series[i], OWN_ALL, 0, &kept, kept_list, sizeof kept_list, err);
    if (rc == SIM_OK && kept > 0)
        fprintf(stderr, "horizon: --force kept %d file%s that %s not a run's output: %s%s\n", kept,
                kept == 1 ? "" : "s", kept == 1 ? "is" : "are", kept_list,
                kept > 4 ? ", ..." : "");
    return rc;
}

int app_output_claim(const char *dir, int force, int *lock_fd, sim_err *err)
{
    struct stat st;
    *lock_fd = -1;
    if (stat(dir, &st) != 0) {
        if (errno == ENOENT) {
            struct stat lst;
            if (lstat(dir, &lst) == 0)
                return sim_err_set(err, SIM_EINVAL, "%s: output directory: a symlink to a "
                                   "missing target", dir);
            return SIM_OK; /* made later, once the state is allocated */
        }
        return sim_err_set(err, SIM_EINVAL, "%s: output directory: %s", dir, strerror(errno));
    }
    if (!S_ISDIR(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, "%s: output directory: %s exists and is not a "
                           "directory", dir, dir);
    int rc = sim_outdir_lock(dir, lock_fd, err);
    if (rc != SIM_OK)
        return rc;
    if (!force && !app_output_dir_is_empty(dir)) {
        sim_outdir_unlock(*lock_fd);
        *lock_fd = -1;
        return sim_err_set(err, SIM_EINVAL, "%s: output directory is not empty; it may hold an "
                           "earlier run's results (use --force to replace them, or --out DIR)",
                           dir);
    }
    return SIM_OK;
}

int app_output_prepare(const char *dir, int force, int frames, int fields, int *lock_fd,
                       int *created, sim_err *err)
{
    *created = 0;
    int rc;
    if (*lock_fd < 0) {
        if ((rc = sim_outdir_make(dir, created, err)) != SIM_OK)
            return rc;
        if ((rc = sim_outdir_lock(dir, lock_fd, err)) != SIM_OK) {
            /* Made by us but locked by another process that got in between: it is theirs. */
            *created = 0;
            return rc;
        }
        /* Another process may have made it and written into it in the meantime. */
        if (!*created && !force && !app_output_dir_is_empty(dir))
            return sim_err_set(err, SIM_EINVAL, "%s: output directory is not empty; it may hold "
                               "an earlier run's results (use --force to replace them, or --out "
                               "DIR)", dir);
    }
    if (force && (rc = remove_earlier(dir, err)) != SIM_OK)
        return rc;
    char sub[SIM_PATH_MAX + 16];
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++) {
        if (!(i == 0 ? frames : fields))
            continue;
        snprintf(sub, sizeof sub, "%s/%s", dir, series[i].sub);
        if ((rc = sim_outdir_make(sub, NULL, err)) != SIM_OK)
            return rc;
    }
    if (access(dir, W_OK) != 0)
        return sim_err_set(err, SIM_EINVAL, "%s: output directory is not writable: %s", dir,
                           strerror(errno));
    return SIM_OK;
}

int app_output_remove_runs(const char *runs, sim_err *err)
{
    DIR *d = opendir(runs);
    if (!d)
        return SIM_OK;
    struct dirent *e;
    int rc = SIM_OK;
    while (rc == SIM_OK && (e = readdir(d)) != NULL) {
        int64_t v;
        if (!numbered_name(e->d_name, "run_", "", &v))
            continue;
        char run[SIM_PATH_MAX + 300], file[SIM_PATH_MAX + 400];
        snprintf(run, sizeof run, "%s/%s", runs, e->d_name);
        rc = remove_series(run, &series[0], OWN_ALL, 0, NULL, NULL, 0, err);
        for (int tmp = 0; rc == SIM_OK && tmp < 2; tmp++) {
            snprintf(file, sizeof file, "%s/stats.csv%s", run, tmp ? ".tmp" : "");
            if (unlink(file) != 0 && errno != ENOENT)
                rc = sim_err_set(err, SIM_EIO, "%s: cannot remove: %s", file, strerror(errno));
        }
        snprintf(file, sizeof file, "%s/frames", run);
        rmdir(file);
        rmdir(run); /* kept when the user put something else there */
    }
    closedir(d);
    rmdir(runs);
    return rc;
}

void app_output_abandon(const char *dir, int lock_fd)
{
    if (lock_fd < 0)
        return; /* not ours to clean */
    for (size_t i = 0; i < sizeof series / sizeof series[0]; i++) {
        char sub[SIM_PATH_MAX + 16];
        remove_series(dir, &series[i], OWN_ALL, 0, NULL, NULL, 0, NULL);
        snprintf(sub, sizeof sub, "%s/%s", dir, series[i].sub);
        rmdir(sub);
    }
    static const char *const top[] = {"stats.csv", "run.json", "checkpoint.hzc", "events.csv",
                                      SIM_OUTDIR_LOCK_NAME};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        char file[SIM_PATH_MAX + 64];
        snprintf(file, sizeof file, "%s/%s", dir, top[i]);
        unlink(file);
    }
    sim_outdir_unlock(lock_fd);
    rmdir(dir); /* fails, and keeps it, if anything else is in it */
}

/* The stats.csv header of sc's model (plain scenarios: SIM_STATS_CSV_HEADER). */
static void stats_header_text(const sim_scenario *sc, char *buf, size_t n)
{
    sim_model *m = malloc(sizeof *m);
    if (m && sim_model_build(sc, m, NULL) == SIM_OK)
        sim_stats_csv_header(buf, n, m);
    else
        snprintf(buf, n, "%s", SIM_STATS_CSV_HEADER);
    free(m);
}

void app_stats_header(FILE *f, const sim_scenario *sc)
{
    char head[SIM_STATS_ROW_MAX];
    stats_header_text(sc, head, sizeof head);
    fputs(head, f);
}

/* Opens DIR/stats.csv with `mode` ("w" new, "ab" append), unbuffered: each row is one
 * write(), and after a failed write nothing is left in a buffer that fclose could append
 * behind the truncation in app_stats_row. */
static int stats_fopen(const char *dir, const char *mode, FILE **out, char *path, size_t n,
                       sim_err *err)
{
    snprintf(path, n, "%s/stats.csv", dir);
    FILE *f = fopen(path, mode);
    if (!f)
        return sim_err_set(err, SIM_EIO, "%s: cannot %s: %s", path,
                           mode[0] == 'w' ? "create" : "open", strerror(errno));
    setvbuf(f, NULL, _IONBF, 0);
    *out = f;
    return SIM_OK;
}

int app_stats_open(const char *dir, const sim_scenario *sc, FILE **out, sim_err *err)
{
    char path[SIM_PATH_MAX + 16];
    FILE *f = NULL;
    int rc = stats_fopen(dir, "w", &f, path, sizeof path, err);
    if (rc != SIM_OK)
        return rc;
    app_stats_header(f, sc);
    if (fflush(f) != 0) {
        int e = errno;
        fclose(f);
        return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(e));
    }
    *out = f;
    return SIM_OK;
}

/* Whole rows, in one write: a killed run leaves only whole rows behind. A full disk can take
 * part of the write: the file is cut back to where it was. */
static int stats_write(FILE *f, const char *buf, size_t n, const char *path, sim_err *err)
{
    off_t before = ftello(f);
    if (fwrite(buf, 1, n, f) != n || fflush(f) != 0) {
        int e = errno;
        if (before >= 0 && ftruncate(fileno(f), before) == 0)
            fseeko(f, before, SEEK_SET);
        return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(e));
    }
    return SIM_OK;
}

/* Rows gathered per write: two system calls a write (the position, the write) cost a small
 * world's run more than its steps when every row had its own. */
#define STATS_CHUNK (32 * SIM_STATS_ROW_MAX)

int app_stats_rows(FILE *f, const sim_stats *st, int n, const uint8_t *keep, const char *path,
                   sim_err *err)
{
    char buf[STATS_CHUNK];
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        if (keep && !keep[i])
            continue;
        if (STATS_CHUNK - used < SIM_STATS_ROW_MAX) {
            int rc = stats_write(f, buf, used, path, err);
            if (rc != SIM_OK)
                return rc;
            used = 0;
        }
        used += (size_t)sim_stats_csv_row(buf + used, STATS_CHUNK - used, &st[i]);
    }
    return used > 0 ? stats_write(f, buf, used, path, err) : SIM_OK;
}

int app_stats_row(FILE *f, const sim_stats *st, const char *path, sim_err *err)
{
    return app_stats_rows(f, st, 1, NULL, path, err);
}

int app_write_atomic(const char *path, const void *data, size_t size, sim_err *err)
{
    char tmp[SIM_PATH_MAX + 64];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0)
        return sim_err_set(err, SIM_EIO, "%s: cannot create: %s", tmp, strerror(errno));
    const char *p = data;
    size_t left = size;
    while (left > 0) {
        ssize_t w = write(fd, p, left);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            goto fail;
        }
        p += w;
        left -= (size_t)w;
    }
    if (fsync(fd) != 0)
        goto fail;
    if (close(fd) != 0) {
        fd = -1;
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0)
        goto fail;
    /* Make the rename itself durable. */
    char dir[SIM_PATH_MAX + 64];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    return SIM_OK;
fail : {
    int e = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    return sim_err_set(err, SIM_EIO, "%s: write failed: %s", path, strerror(e));
}
}

int app_write_npy(const char *path, const float *field, int width, int height, sim_err *err)
{
    /* NPY v1.0: magic, version, little-endian header length, a dict padded with spaces to a
     * multiple of 64 bytes and ending in a newline, then the raw little-endian floats. */
    char dict[128];
    int n = snprintf(dict, sizeof dict, "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, "
                     "%d), }", height, width);
    size_t header = 10 + (size_t)n + 1;
    size_t padded = (header + 63) / 64 * 64;
    size_t body = (size_t)width * (size_t)height * sizeof(float);
    unsigned char *buf = malloc(padded + body);
    if (!buf)
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    uint16_t hlen = (uint16_t)(padded - 10);
    buf[8] = (unsigned char)(hlen & 0xff);
    buf[9] = (unsigned char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', padded - 10 - (size_t)n - 1);
    buf[padded - 1] = '\n';
    memcpy(buf + padded, field, body); /* x86-64 and the GPU hosts are little-endian */
    int rc = app_write_atomic(path, buf, padded + body, err);
    free(buf);
    return rc;
}

/* ---- resuming into an existing output directory ---- */

/* Cuts stats.csv back to its header and the whole rows of steps <= step. A partial last line
 * (a run killed mid-write) and rows after the checkpoint go. */
static int stats_cut(const char *dir, const sim_scenario *sc, int64_t step, int64_t every,
                     sim_err *err)
{
    char head[SIM_STATS_ROW_MAX];
    stats_header_text(sc, head, sizeof head);
    char path[SIM_PATH_MAX + 16];
    snprintf(path, sizeof path, "%s/stats.csv", dir);
    FILE *f = fopen(path, "r+b");
    if (!f && errno != ENOENT)
        return sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path, strerror(errno));
    off_t keep = 0;
    int64_t last = -1;
    int lines = 0, rc = SIM_OK;
    char line[SIM_STATS_ROW_MAX + 16];
    while (f && fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (line[n - 1] != '\n')
            break; /* partial (or absurdly long) last line */
        if (lines++ == 0) {
            if (strcmp(line, head) != 0) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: not the stats.csv of a Horizon run "
                                 "(unexpected header)", path);
                break;
            }
            keep = ftello(f);
            continue;
        }
        char *end;
        errno = 0;
        long long v = strtoll(line, &end, 10);
        if (end == line || *end != ',' || errno == ERANGE || v > step)
            break;
        last = v;
        keep = ftello(f);
    }
    if (rc == SIM_OK && f && ferror(f))
        rc = sim_err_set(err, SIM_EIO, "%s: read error: %s", path, strerror(errno));
    if (rc == SIM_OK && f && ftruncate(fileno(f), keep) != 0)
        rc = sim_err_set(err, SIM_EIO, "%s: cannot truncate: %s", path, strerror(errno));
    if (f)
        fclose(f);
    if (rc != SIM_OK)
        return rc;
    if (keep == 0) { /* missing, empty or a partial header: start it again */
        FILE *g;
        if ((rc = app_stats_open(dir, sc, &g, err)) != SIM_OK)
            return rc;
        fclose(g);
    }
    int64_t want = every > 0 ? step / every * every : 0;
    if (every > 0 && want > 0 && last != want)
        fprintf(stderr, "horizon: warning: %s ends at step %lld, the checkpoint is at step %lld: "
                "rows %s are missing\n", path, (long long)(last < 0 ? 0 : last),
                (long long)step, last < 0 ? "up to the checkpoint" : "in between");
    return SIM_OK;
}

int app_output_resume(const char *dir, int64_t step, const sim_scenario *sc, sim_err *err)
{
    struct stat st;
    if (stat(dir, &st) != 0)
        return sim_err_set(err, SIM_EIO, "%s: output directory: %s", dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return sim_err_set(err, SIM_EINVAL, "%s: not a directory", dir);
    if (access(dir, W_OK) != 0)
        return sim_err_set(err, SIM_EIO, "%s: output directory is not writable: %s", dir,
                           strerror(errno));
    /* Temporary files of interrupted writes (their final names hold the last whole version),
     * and run.json: the run is not finished any more. */
    static const char *const stale[] = {"checkpoint.hzc.tmp", "checkpoint.hzc.prev.tmp",
                                        "run.json", "run.json.tmp", "events.csv.tmp"};
    int rc = SIM_OK;
    for (size_t i = 0; rc == SIM_OK && i < sizeof stale / sizeof stale[0]; i++) {
        char file[SIM_PATH_MAX + 64];
        snprintf(file, sizeof file, "%s/%s", dir, stale[i]);
        if (unlink(file) != 0 && errno != ENOENT)
            rc = sim_err_set(err, SIM_EIO, "%s: cannot remove: %s", file, strerror(errno));
    }
    for (size_t i = 0; rc == SIM_OK && i < sizeof series / sizeof series[0]; i++)
        rc = remove_series(dir, &series[i], OWN_TMP, 0, NULL, NULL, 0, err);
    if (rc == SIM_OK && sc->frames_every > 0)
        rc = remove_series(dir, &series[0], OWN_AFTER, step / sc->frames_every, NULL, NULL, 0,
                           err);
    if (rc == SIM_OK && sc->dump_fields_every > 0)
        rc = remove_series(dir, &series[1], OWN_AFTER, step, NULL, NULL, 0, err);
    char sub[SIM_PATH_MAX + 16];
    if (rc == SIM_OK && sc->frames_every > 0) {
        snprintf(sub, sizeof sub, "%s/frames", dir);
        rc = sim_outdir_make(sub, NULL, err);
        char last[SIM_PATH_MAX + 64];
        snprintf(last, sizeof last, "%s/frames/frame_%06lld.png", dir,
                 (long long)(step / sc->frames_every));
        if (rc == SIM_OK && access(last, F_OK) != 0)
            fprintf(stderr, "horizon: warning: %s is missing; frame numbers go on after it\n",
                    last);
    }
    if (rc == SIM_OK && sc->dump_fields_every > 0) {
        snprintf(sub, sizeof sub, "%s/fields", dir);
        rc = sim_outdir_make(sub, NULL, err);
    }
    if (rc == SIM_OK && sc->stats_every > 0)
        rc = stats_cut(dir, sc, step, sc->stats_every, err);
    return rc;
}

int app_stats_reopen(const char *dir, FILE **out, sim_err *err)
{
    char path[SIM_PATH_MAX + 16];
    return stats_fopen(dir, "ab", out, path, sizeof path, err);
}
