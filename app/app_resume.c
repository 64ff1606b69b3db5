/* app_resume.c - loading a checkpoint for `horizon run --resume`, and the check that the
 * command line changes nothing but what may change. */
#include "app_resume.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The first scenario key whose value differs between a and b (output.dir aside): 1 with
 * "section.key: 'A' in the checkpoint, 'B' asked" in what, 0 when they agree, -1 without
 * memory. Compares the INI text, so that every key counts, present and future. */
static int scenario_diff(const sim_scenario *a, const sim_scenario *b, char *what, size_t n)
{
    sim_scenario x = *a, y = *b;
    strcpy(x.dir, ".");
    strcpy(y.dir, ".");
    char *ta = NULL, *tb = NULL;
    size_t la, lb;
    FILE *ma = open_memstream(&ta, &la), *mb = open_memstream(&tb, &lb);
    int rc = -1;
    if (ma && mb) {
        sim_scenario_write_ini(&x, ma);
        sim_scenario_write_ini(&y, mb);
    }
    if (ma)
        fclose(ma);
    if (mb)
        fclose(mb);
    if (ma && mb && ta && tb) {
        rc = 0;
        char section[64] = "";
        for (char *p = ta, *q = tb; *p && *q;) {
            size_t lp = strcspn(p, "\n"), lq = strcspn(q, "\n");
            if (p[0] == '[')
                snprintf(section, sizeof section, "%.*s", (int)(lp > 2 ? lp - 2 : 0), p + 1);
            if (lp != lq || memcmp(p, q, lp) != 0) {
                size_t k = strcspn(p, " =");
                const char *va = p + k + (p[k] == ' ' ? 3 : 0), *vb = q + k + (q[k] == ' ' ? 3 : 0);
                snprintf(what, n, "%s.%.*s: '%.*s' in the checkpoint, '%.*s' asked", section,
                         (int)k, p, (int)(p + lp - va), va, (int)(q + lq - vb), vb);
                rc = 1;
                break;
            }
            p += lp + (p[lp] != '\0');
            q += lq + (q[lq] != '\0');
        }
    }
    free(ta);
    free(tb);
    return rc;
}

/* Whether two paths name the same directory. */
static int same_dir(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

int app_resume_load(const char *path, const char *scenario_file, int force, char **sets,
                    int n_sets, sim_scenario *sc, sim_checkpoint *ck)
{
    static const char only[] = "only --steps (the total), --backend, --threads, "
                               "--checkpoint-every, --progress and --quiet may change";
    if (scenario_file || force) {
        fprintf(stderr, "horizon run: --resume takes the scenario and the output directory from "
                "the checkpoint; '%s' cannot be given with it (%s)\n",
                scenario_file ? scenario_file : "--force", only);
        return SIM_EINVAL;
    }
    sim_err err;
    char dir[SIM_PATH_MAX];
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (n >= sizeof dir) {
        fprintf(stderr, "horizon: %s: path too long\n", path);
        return SIM_EINVAL;
    } else if (!slash) {
        strcpy(dir, ".");
    } else {
        memcpy(dir, path, n ? n : 1); /* "/checkpoint.hzc" lives in "/" */
        dir[n ? n : 1] = '\0';
    }
    /* A run with events (DIR/events.csv) may have painted or deposited the field below 0 */
    char events[SIM_PATH_MAX + 16];
    snprintf(events, sizeof events, "%s/events.csv", dir);
    int rc = sim_checkpoint_read_flags(path, access(events, F_OK) == 0 ? SIM_CKPT_ANY_SIGN : 0,
                                       ck, &err);
    if (rc != SIM_OK) {
        fprintf(stderr, "horizon: %s\n", err.msg);
        return rc;
    }
    *sc = ck->sc;
    strcpy(sc->dir, dir);
    for (int i = 0; rc == SIM_OK && i < n_sets; i++)
        if ((rc = sim_scenario_assign(sc, sets[i], &err)) != SIM_OK)
            fprintf(stderr, "horizon: %s\n", err.msg);
    if (rc == SIM_OK && (rc = sim_scenario_validate(sc, &err)) != SIM_OK)
        fprintf(stderr, "horizon: %s\n", err.msg);
    char what[256];
    sim_scenario asked = *sc;
    asked.steps = ck->sc.steps;
    if (rc == SIM_OK && strcmp(sc->dir, dir) != 0 && !same_dir(sc->dir, dir)) {
        fprintf(stderr, "horizon run: --out %s: a resumed run writes next to its checkpoint, "
                "in %s (%s)\n", sc->dir, dir, only);
        rc = SIM_EINVAL;
    } else if (rc == SIM_OK && (n = (size_t)scenario_diff(&ck->sc, &asked, what, sizeof what))) {
        if ((int)n < 0)
            fprintf(stderr, "horizon: out of memory\n");
        else
            fprintf(stderr, "horizon run: --resume: %s; the run goes on with the checkpoint's "
                    "scenario (%s)\n", what, only);
        rc = (int)n < 0 ? SIM_ENOMEM : SIM_EINVAL;
    }
    strcpy(sc->dir, dir);
    if (rc == SIM_OK && sc->steps < ck->step) {
        fprintf(stderr, "horizon: --steps %lld: the checkpoint is at step %lld already (--steps "
                "counts the steps of the whole run)\n", (long long)sc->steps,
                (long long)ck->step);
        rc = SIM_EINVAL;
    }
    if (rc != SIM_OK) {
        sim_checkpoint_release(ck);
        return rc;
    }
    ck->sc = *sc;
    return SIM_OK;
}
