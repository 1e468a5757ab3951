/* outpath.c - check, write-to-temporary, rename, lock: see outpath.h. Every
 * buffer holds PATH_MAX bytes and every path is checked to fit before use,
 * so no name is ever silently cut (a cut NAME.tmp.<pid> was NAME itself). */
#define _GNU_SOURCE
#include "outpath.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the folder of path (".", "/" or the part before the last slash) */
static void folder_of(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        snprintf(dir, size, ".");
    else
        slash[slash == dir ? 1 : 0] = '\0';
}

static int check_target(const outpath *op, const char *const *inputs, size_t n_inputs,
                        sim_error *err)
{
    struct stat st, in;
    if (stat(op->path, &st) != 0)
        return 0; /* not there (or unreachable: the probe will say why) */
    if (S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_ERR_INPUT, op->path, 0, "cannot write %s: it is a directory",
                             op->what);
    if (!S_ISREG(st.st_mode))
        return sim_error_set(err, SIM_ERR_INPUT, op->path, 0,
                             "cannot write %s: it exists and is not a regular file (a device, "
                             "pipe or socket); dcsim replaces only regular files", op->what);
    for (size_t i = 0; i < n_inputs; i++)
        if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == st.st_dev &&
            in.st_ino == st.st_ino)
            return sim_error_set(err, SIM_ERR_INPUT, op->path, 0,
                                 "cannot write %s: it is %s, an input of this run; choose "
                                 "another name", op->what, inputs[i]);
    return 0;
}

int outpath_init(outpath *op, const char *path, const char *what, const char *const *inputs,
                 size_t n_inputs, sim_error *err)
{
    memset(op, 0, sizeof *op);
    op->lock_fd = -1;
    op->what = what;
    size_t len = strlen(path);
    if (len > OUTPATH_MAX) {
        char shown[48];
        snprintf(shown, sizeof shown, "%.40s...", path);
        return sim_error_set(err, SIM_ERR_INPUT, shown, 0,
                             "cannot write %s: the path is %zu bytes long, at most %d allowed",
                             what, len, OUTPATH_MAX);
    }
    memcpy(op->path, path, len + 1);
    snprintf(op->tmp, sizeof op->tmp, "%s.tmp.%ld", path, (long)getpid());
    if (check_target(op, inputs, n_inputs, err))
        return err->code;
    /* find out with a plain open why a path is unwritable: HDF5 does not say */
    int fd = open(op->tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return sim_error_set(err, SIM_ERR_IO, path, 0, "cannot write %s: %s", what,
                             strerror(errno));
    close(fd);
    unlink(op->tmp);
    return 0;
}

int outpath_lock(outpath *op, sim_error *err)
{
    snprintf(op->lock, sizeof op->lock, "%s.lock", op->path);
    /* the lock file is removed by its holder when done: a lock taken on a
     * file that is no longer (or not yet again) NAME.lock does not count */
    for (int attempt = 0; attempt < 100; attempt++) {
        int fd = open(op->lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
            return sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot lock %s: %s: %s",
                                 op->what, op->lock, strerror(errno));
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (fcntl(fd, F_SETLK, &fl) != 0) {
            int e = errno;
            if (e != EAGAIN && e != EACCES) {
                close(fd);
                return sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot lock %s: %s: %s",
                                     op->what, op->lock, strerror(e));
            }
            struct flock who = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
            long pid = fcntl(fd, F_GETLK, &who) == 0 && who.l_type != F_UNLCK ? (long)who.l_pid
                                                                              : 0;
            close(fd);
            char holder[64] = "";
            if (pid > 0)
                snprintf(holder, sizeof holder, " (process %ld)", pid);
            return sim_error_set(err, SIM_ERR_INPUT, op->path, 0,
                                 "cannot write %s: another dcsim%s is writing it and holds "
                                 "its lock file %s; wait for it to finish, or choose another -o",
                                 op->what, holder, op->lock);
        }
        struct stat held, named;
        if (fstat(fd, &held) == 0 && stat(op->lock, &named) == 0 && held.st_dev == named.st_dev &&
            held.st_ino == named.st_ino) {
            op->lock_fd = fd;
            return 0;
        }
        close(fd); /* removed by its last holder meanwhile: take the new one */
    }
    return sim_error_set(err, SIM_ERR_IO, op->path, 0, "cannot lock %s: %s keeps changing",
                         op->what, op->lock);
}

void outpath_remove_stale(const outpath *op)
{
    char dir[PATH_MAX], base[PATH_MAX];
    folder_of(op->path, dir, sizeof dir);
    const char *slash = strrchr(op->path, '/');
    snprintf(base, sizeof base, "%s.tmp.", slash ? slash + 1 : op->path);
    size_t bl = strlen(base);
    DIR *d = opendir(dir);
    if (!d)
        return;
    for (struct dirent *e = readdir(d); e; e = readdir(d)) {
        if (strncmp(e->d_name, base, bl) || e->d_name[bl] < '1' || e->d_name[bl] > '9')
            continue;
        char *end = NULL;
        errno = 0;
        long pid = strtol(e->d_name + bl, &end, 10);
        if (errno || *end || pid == (long)getpid() || (pid_t)pid != pid)
            continue;
        if (kill((pid_t)pid, 0) < 0 && errno == ESRCH)
            unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

static void fsync_path(const char *path, int flags)
{
    int fd = open(path, flags | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

int outpath_commit(outpath *op, int sync, sim_error *err)
{
    struct stat st;
    if (stat(op->path, &st) == 0 && !S_ISREG(st.st_mode)) { /* replaced while we worked */
        outpath_discard(op);
        return sim_error_set(err, SIM_ERR_INPUT, op->path, 0,
                             "cannot write %s: it exists and is not a regular file (a device, "
                             "pipe or socket); dcsim replaces only regular files", op->what);
    }
    if (sync)
        fsync_path(op->tmp, O_RDONLY);
    if (rename(op->tmp, op->path) != 0) {
        int e = errno;
        outpath_discard(op);
        return sim_error_set(err, SIM_ERR_IO, op->path, 0,
                             "cannot move the finished %s into place: %s", op->what, strerror(e));
    }
    if (sync) {
        char dir[PATH_MAX];
        folder_of(op->path, dir, sizeof dir);
        fsync_path(dir, O_RDONLY | O_DIRECTORY); /* the rename itself */
    }
    return 0;
}

void outpath_discard(const outpath *op)
{
    if (op->tmp[0])
        unlink(op->tmp);
}

void outpath_fini(outpath *op)
{
    if (op->lock_fd < 0)
        return;
    unlink(op->lock); /* while still held: see outpath_lock */
    close(op->lock_fd);
    op->lock_fd = -1;
}
