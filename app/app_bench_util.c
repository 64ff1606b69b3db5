/* app_bench_util.c - what the sections of `horizon bench` share: the median of repeats, a
 * temporary directory removed with its contents, and a `horizon` process of this binary. */
#include <ftw.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app.h"

extern char **environ;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double app_bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st;
    (void)type;
    (void)ftw;
    remove(path);
    return 0;
}

void app_bench_remove_tree(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int app_bench_run_self(char **argv)
{
    char self[1024];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return SIM_EIO;
    self[n] = '\0';
    argv[0] = self;
    pid_t pid;
    int rc = posix_spawn(&pid, self, NULL, NULL, argv, environ);
    argv[0] = NULL; /* self is gone when this returns */
    if (rc != 0)
        return SIM_EIO;
    int status = 0;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return SIM_EIO;
    return SIM_OK;
}
