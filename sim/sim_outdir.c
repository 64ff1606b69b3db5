/* sim_outdir.c - making and locking output directories (see sim_outdir.h). */
#include "sim_outdir.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_scenario.h"

/* Errors that mean the path itself is wrong (the user's to fix: exit 2), as opposed to the
 * system failing to write (exit 1). */
static int path_status(int e)
{
    switch (e) {
    case ENOTDIR:
    case ENOENT:
    case EEXIST:
    case EACCES:
    case EPERM:
    case EROFS:
    case ENAMETOOLONG:
    case ELOOP:
        return SIM_EINVAL;
    default:
        return SIM_EIO;
    }
}

int sim_outdir_make(const char *dir, int *created, sim_err *err)
{
    char buf[SIM_PATH_MAX + 64];
    if (created)
        *created = 0;
    if (dir[0] == '\0')
        return sim_err_set(err, SIM_EINVAL, "output directory: empty path");
    if (strlen(dir) >= sizeof buf)
        return sim_err_set(err, SIM_EINVAL, "%.64s...: output directory: path too long", dir);
    strcpy(buf, dir);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        int made = mkdir(buf, 0777) == 0;
        int e = errno;
        struct stat st;
        if (!made && e != EEXIST)
            return sim_err_set(err, path_status(e), "%s: output directory: cannot create %s: %s",
                               dir, buf, strerror(e));
        if (stat(buf, &st) != 0) {
            /* mkdir said EEXIST but stat fails: a symlink to nowhere */
            e = errno;
            return sim_err_set(err, path_status(e), "%s: output directory: %s is %s", dir, buf,
                               e == ENOENT ? "a symlink to a missing target" : strerror(e));
        }
        if (!S_ISDIR(st.st_mode))
            return sim_err_set(err, SIM_EINVAL, "%s: output directory: %s exists and is not a "
                               "directory", dir, buf);
        *p = saved;
        if (saved == '\0') {
            if (created)
                *created = made;
            break;
        }
        while (p[1] == '/') /* "a//b" */
            p++;
    }
    if (access(dir, W_OK) != 0)
        return sim_err_set(err, path_status(errno), "%s: output directory is not writable: %s",
                           dir, strerror(errno));
    return SIM_OK;
}

int sim_outdir_lock(const char *dir, int *fd_out, sim_err *err)
{
    char path[SIM_PATH_MAX + 64];
    *fd_out = -1;
    if (snprintf(path, sizeof path, "%s/" SIM_OUTDIR_LOCK_NAME, dir) >= (int)sizeof path)
        return sim_err_set(err, SIM_EINVAL, "%.64s...: output directory: path too long", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0)
        return sim_err_set(err, path_status(errno), "%s: cannot create the lock file %s: %s",
                           dir, SIM_OUTDIR_LOCK_NAME, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        char text[32] = "";
        ssize_t n = 0;
        /* The holder writes its pid right after it locks: give it up to 50 ms to appear. */
        for (int tries = 0; e == EWOULDBLOCK && tries < 50; tries++) {
            n = pread(fd, text, sizeof text - 1, 0);
            if (n > 0 && memchr(text, '\n', (size_t)n))
                break;
            usleep(1000);
        }
        close(fd);
        if (e != EWOULDBLOCK)
            return sim_err_set(err, SIM_EIO, "%s: cannot lock %s: %s", dir, SIM_OUTDIR_LOCK_NAME,
                               strerror(e));
        text[n > 0 ? n : 0] = '\0';
        text[strcspn(text, "\n")] = '\0';
        if (text[0])
            return sim_err_set(err, SIM_EINVAL, "%s: in use by pid %s", dir, text);
        return sim_err_set(err, SIM_EINVAL, "%s: in use by another process", dir);
    }
    /* Ours now: record who holds it, for the message of the next one who tries. */
    char pid[32];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)n, 0) != n) {
        /* The lock holds without the pid; only the message of a refused process is poorer. */
    }
    *fd_out = fd;
    return SIM_OK;
}

void sim_outdir_unlock(int fd)
{
    if (fd >= 0)
        close(fd); /* closing the last descriptor releases the flock */
}
