/* outpath.h - the one way dcsim writes an output file (traces, sweep files,
 * compare tables): the target is checked first (path length, an existing
 * target must be a regular file, never one of the run's inputs by
 * st_dev/st_ino), the file is written as NAME.tmp.<pid> and renamed over
 * NAME, so NAME is always the old file or the new one, whole. Temporaries of
 * dead processes (NAME.tmp.<pid> whose pid is gone) are removed when a writer
 * next writes NAME. Writers that rewrite NAME for a long time (dcsim sweep)
 * also hold an advisory lock on NAME.lock (docs/scaling.md).
 */
#ifndef DCSIM_APP_OUTPATH_H
#define DCSIM_APP_OUTPATH_H

#include <limits.h>
#include <stddef.h>

#include "error.h"

/* the longest output path: PATH_MAX less room for ".tmp.<pid>" and ".lock" */
#define OUTPATH_MAX (PATH_MAX - 32)

typedef struct outpath {
    char path[PATH_MAX]; /* NAME */
    char tmp[PATH_MAX];  /* NAME.tmp.<pid> */
    char lock[PATH_MAX]; /* NAME.lock, while locked */
    const char *what;    /* "the trace", "the sweep file": for messages (static) */
    int lock_fd;         /* -1 when not locked */
} outpath;

/* Check path as an output and name its temporary. inputs (n_inputs paths,
 * NULL entries skipped) are the files the run reads: a target that is one of
 * them is refused. Creates and removes the temporary once, so an unwritable
 * folder fails now, not after the work. Fails with SIM_ERR_INPUT (too long,
 * not a regular file, an input) or SIM_ERR_IO (cannot create it), naming path. */
int outpath_init(outpath *op, const char *path, const char *what, const char *const *inputs,
                 size_t n_inputs, sim_error *err);

/* Take the advisory lock NAME.lock (fcntl F_SETLK, not waiting): a second
 * process writing the same NAME is refused (SIM_ERR_INPUT). */
int outpath_lock(outpath *op, sim_error *err);

/* Remove NAME.tmp.<pid> files whose process is gone (this machine's pids). */
void outpath_remove_stale(const outpath *op);

/* Rename the finished temporary over NAME (fsync'd first, and the folder
 * after, when sync is set), after checking NAME once more. On failure the
 * temporary is removed and NAME is untouched (SIM_ERR_INPUT or SIM_ERR_IO). */
int outpath_commit(outpath *op, int sync, sim_error *err);

/* Remove the temporary (an unfinished write). */
void outpath_discard(const outpath *op);

/* Release the lock (and remove NAME.lock). No-op when not locked. */
void outpath_fini(outpath *op);

#endif
