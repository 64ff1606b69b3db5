/* sim_outdir.h - an output directory as a run, a resumed run or a viewer session owns it: made
 * like `mkdir -p` with errors that name the bad part of the path, and held under an exclusive
 * lock so that two processes never write into one directory at once. */
#ifndef SIM_OUTDIR_H
#define SIM_OUTDIR_H

#include "sim_status.h"

/* The lock file inside an output directory. It is never removed while the directory is in use
 * (removing a lock file races with a process that has just opened it); emptiness checks and
 * --force ignore it. */
#define SIM_OUTDIR_LOCK_NAME ".horizon.lock"

/* Makes DIR and its parents (mkdir -p). *created (may be NULL) is set to 1 when DIR itself did
 * not exist before. A path the user got wrong (a component that is a file, a dangling symlink,
 * no permission, a read-only file system, a name too long) is SIM_EINVAL with
 * "DIR: output directory: why"; other failures are SIM_EIO. */
int sim_outdir_make(const char *dir, int *created, sim_err *err);

/* Takes the exclusive lock of DIR (which must exist): flock() on DIR/.horizon.lock, which the
 * kernel releases when the process ends, however it ends, so a lock never outlives its holder.
 * Returns SIM_OK with *fd_out the lock's descriptor (close it, or sim_outdir_unlock, to release),
 * or SIM_EINVAL with "DIR: in use by pid N" (another process holds it; refused at once, never
 * waits), or SIM_EINVAL/SIM_EIO when the lock file cannot be made. */
int sim_outdir_lock(const char *dir, int *fd_out, sim_err *err);

/* Releases a lock from sim_outdir_lock; -1 is a no-op. */
void sim_outdir_unlock(int fd);

#endif
