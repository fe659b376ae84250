/*
 * out_file.c - output files of the pixsum tool (see out_file.h): resolving
 * the user's path to what must be written (a temporary beside a regular
 * target, or the FIFO / device / descriptor itself), creating the temporary
 * with the old file's mode and owner, the registry of live temporaries that
 * the signal handler and exit remove, and the commits (renames back to back).
 */
#include "out_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#endif

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

int out_file_vfail(char *err, size_t errlen, const char *path, const char *fmt, va_list ap)
{
    if (!err || errlen == 0)
        return -1;
    int n = snprintf(err, errlen, "%s: ", path ? path : "(no file)");
    if (n < 0 || (size_t)n >= errlen)
        return -1;
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    return -1;
}

static int fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_file_vfail(err, errlen, path, fmt, ap);
    va_end(ap);
    return -1;
}

/* ---- the registry of live temporaries ------------------------------------ */

/* Slots hold the paths in preallocated storage, so that the handler only
 * reads memory and calls unlink() (async-signal-safe). A slot is FREE, CLAIMED
 * (being filled: the handler skips it) or LIVE (the file exists: remove it). */
enum { SLOT_FREE = 0, SLOT_CLAIMED = 1, SLOT_LIVE = 2 };
#define OUT_FILE_SLOTS 16

static atomic_int slot_state[OUT_FILE_SLOTS];
static char slot_path[OUT_FILE_SLOTS][PATH_MAX];

/* The signals that end a run and must not leave temporaries behind. */
static const int cleanup_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGXFSZ};
#define N_CLEANUP_SIGNALS (sizeof cleanup_signals / sizeof cleanup_signals[0])
static struct sigaction previous_action[N_CLEANUP_SIGNALS];
static atomic_int handlers_installed;

/* Removes every live temporary. Async-signal-safe. */
static void remove_live_temporaries(void)
{
    for (int i = 0; i < OUT_FILE_SLOTS; i++)
        if (atomic_load(&slot_state[i]) == SLOT_LIVE)
            unlink(slot_path[i]);
}

/* The handler: removes the temporaries, puts back the disposition found at
 * install time (the default, normally) and raises the signal again; it is
 * delivered when the handler returns, so the shell sees the usual 128+N. */
static void on_cleanup_signal(int sig)
{
    int saved = errno;
    remove_live_temporaries();
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
        if (cleanup_signals[i] == sig)
            sigaction(sig, &previous_action[i], NULL);
    raise(sig);
    errno = saved;
}

static void remove_at_exit(void)
{
    remove_live_temporaries();
}

/* Installs the handler once, for the signals not ignored (nohup's SIGHUP,
 * a background job's SIGINT stay ignored). */
static void install_handlers(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&handlers_installed, &expected, 1))
        return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_cleanup_signal;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
        sigaddset(&sa.sa_mask, cleanup_signals[i]);
    sa.sa_flags = SA_RESTART;
    for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++) {
        if (sigaction(cleanup_signals[i], NULL, &previous_action[i]) != 0)
            continue;
        if (!(previous_action[i].sa_flags & SA_SIGINFO) &&
            previous_action[i].sa_handler == SIG_IGN)
            continue;
        sigaction(cleanup_signals[i], &sa, NULL);
    }
    atexit(remove_at_exit);
}

/* Blocks (block = 1) or restores the cleanup signals in this thread around
 * the creation and registration of a temporary, so that a signal cannot come
 * between the two and leave the file unknown to the handler. */
static void block_signals(int block, sigset_t *old)
{
    if (block) {
        sigset_t set;
        sigemptyset(&set);
        for (size_t i = 0; i < N_CLEANUP_SIGNALS; i++)
            sigaddset(&set, cleanup_signals[i]);
        pthread_sigmask(SIG_BLOCK, &set, old);
    } else {
        pthread_sigmask(SIG_SETMASK, old, NULL);
    }
}

static int claim_slot(void)
{
    for (int i = 0; i < OUT_FILE_SLOTS; i++) {
        int expected = SLOT_FREE;
        if (atomic_compare_exchange_strong(&slot_state[i], &expected, SLOT_CLAIMED))
            return i;
    }
    return -1;
}

static void release_slot(int slot)
{
    if (slot >= 0)
        atomic_store(&slot_state[slot], SLOT_FREE);
}

/* ---- path resolution ------------------------------------------------------- */

/* The directory part of `path` ("." when there is none); malloc'ed. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    size_t n = (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

/* 1 if the link `path` lives in /proc: a descriptor's or a process's link,
 * which only the kernel can follow (its text may be "pipe:[123]"). */
static int on_procfs(const char *path)
{
#ifdef __linux__
    char *dir = dir_of(path);
    struct statfs fs;
    int proc = dir && statfs(dir, &fs) == 0 && fs.f_type == 0x9fa0; /* PROC_SUPER_MAGIC */
    free(dir);
    return proc;
#else
    (void)path;
    return 0;
#endif
}

/* Follows the symbolic links of `path` one at a time. Returns the final name
 * (malloc'ed; it may not exist: *exists 0), with *st filled when it exists,
 * or with *magic 1 when the last link lives in /proc. NULL on failure, errno
 * set (ELOOP after 40 links). */
static char *resolve_links(const char *path, struct stat *st, int *exists, int *magic)
{
    char *cur = strdup(path);
    *exists = 0;
    *magic = 0;
    for (int hops = 0; cur; hops++) {
        if (lstat(cur, st) != 0) {
            if (errno == ENOENT)
                return cur; /* a new file (a missing directory shows at creation) */
            break;
        }
        *exists = 1;
        if (!S_ISLNK(st->st_mode))
            return cur;
        if (on_procfs(cur)) {
            *magic = 1;
            return cur;
        }
        if (hops == 40) {
            errno = ELOOP;
            break;
        }
        char link[PATH_MAX];
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0)
            break;
        if (n == (ssize_t)sizeof link - 1) {
            errno = ENAMETOOLONG;
            break;
        }
        link[n] = '\0';
        char *next;
        if (link[0] == '/' || !strchr(cur, '/')) {
            next = strdup(link);
        } else {
            char *dir = dir_of(cur);
            size_t len = dir ? strlen(dir) + 1 + (size_t)n + 1 : 0;
            next = dir ? malloc(len) : NULL;
            if (next)
                snprintf(next, len, "%s/%s", dir, link);
            free(dir);
        }
        free(cur);
        cur = next;
        *exists = 0;
        if (!cur)
            errno = ENOMEM;
    }
    int e = errno;
    free(cur);
    errno = e;
    return NULL;
}

/* If the /proc link `link` names one of this process's descriptors
 * (/proc/self/fd/N, which /dev/stdout and /dev/fd/N lead to) open for
 * writing, returns N; else -1. */
static int own_descriptor(const char *link)
{
    const char *base = strrchr(link, '/');
    base = base ? base + 1 : link;
    if (!*base || strspn(base, "0123456789") != strlen(base) || strlen(base) > 9)
        return -1;
    int fd = atoi(base);
    char *dir = dir_of(link);
    struct stat a, b;
    int same = dir && stat(dir, &a) == 0 && stat("/proc/self/fd", &b) == 0 &&
               a.st_dev == b.st_dev && a.st_ino == b.st_ino;
    free(dir);
    if (!same)
        return -1;
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY)
        return -1;
    return fd;
}

static const char *type_name(mode_t m)
{
    return S_ISDIR(m)    ? "a directory"
           : S_ISBLK(m)  ? "a block device"
           : S_ISSOCK(m) ? "a socket"
           : S_ISFIFO(m) ? "a FIFO"
           : S_ISCHR(m)  ? "a character device"
           : S_ISREG(m)  ? "a regular file"
                         : "not a regular file";
}

/* ---- opening --------------------------------------------------------------- */

/* Whether something of type `m` may be written in place under `flags`:
 * directories and block devices never, sockets only as a descriptor of ours
 * (own: a named socket cannot be opened), anything but a regular file not for
 * an output that must be regular (MPI-IO) or that seeks (on a pipe seeks
 * fail; on /dev/null they "succeed" and libtiff then fails). Checked before
 * opening: opening a device or a FIFO is not free of effects. Returns 0 or -1
 * (err filled). */
static int refuse_in_place(const char *path, mode_t m, int own, unsigned flags,
                           const char *what, char *err, size_t errlen)
{
    if (S_ISDIR(m) || S_ISBLK(m) || (S_ISSOCK(m) && !own) ||
        !(S_ISREG(m) || S_ISFIFO(m) || S_ISCHR(m) || S_ISSOCK(m)))
        return fail(err, errlen, path, "is %s: not written (outputs are regular files, FIFOs "
                    "or character devices)", type_name(m));
    if ((flags & OUT_FILE_REGULAR) && !S_ISREG(m))
        return fail(err, errlen, path, "is %s; %s must be a regular file", type_name(m), what);
    if ((flags & OUT_FILE_SEEKS) && !S_ISREG(m))
        return fail(err, errlen, path, "is %s, and %s is written with seeks (write it to a "
                    "regular file, or use .npy)", type_name(m), what);
    return 0;
}

/* Creates the temporary beside o->target and registers it. */
static int create_temporary(out_file *o, char *err, size_t errlen)
{
    const char *slash = strrchr(o->target, '/');
    size_t dirlen = slash ? (size_t)(slash - o->target) + 1 : 0;
    const char *base = o->target + dirlen;
    size_t n = dirlen + 1 + strlen(base) + sizeof ".pixsum-XXXXXX";
    if (n > PATH_MAX)
        return fail(err, errlen, o->path, "cannot create output: %s", strerror(ENAMETOOLONG));
    o->tmp = malloc(n);
    if (!o->tmp)
        return fail(err, errlen, o->path, "out of memory");
    install_handlers();
    sigset_t old;
    block_signals(1, &old);
    o->slot = claim_slot();
    if (o->slot < 0) {
        block_signals(0, &old);
        return fail(err, errlen, o->path, "internal error: more than %d outputs at once",
                    OUT_FILE_SLOTS);
    }
    static const char chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    static uint64_t counter;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t x = ((uint64_t)ts.tv_nsec << 20) ^ (uint64_t)ts.tv_sec ^
                 ((uint64_t)getpid() << 40) ^ (uintptr_t)o;
    int e = EEXIST;
    for (int tries = 0; tries < 1000 && e == EEXIST; tries++) {
        /* splitmix64 of a per-process sequence */
        uint64_t z = (x += 0x9e3779b97f4a7c15ull + counter++);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        char suffix[7];
        for (int k = 0; k < 6; k++, z >>= 6)
            suffix[k] = chars[z % (sizeof chars - 1)];
        suffix[6] = '\0';
        snprintf(o->tmp, n, "%.*s.%s.pixsum-%s", (int)dirlen, o->target, base, suffix);
        /* read and write: libtiff reads back the directory chain of a multi-page file */
        o->fd = open(o->tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0600);
        e = o->fd >= 0 ? 0 : errno;
    }
    if (o->fd >= 0) {
        memcpy(slot_path[o->slot], o->tmp, strlen(o->tmp) + 1);
        atomic_store(&slot_state[o->slot], SLOT_LIVE);
    } else {
        release_slot(o->slot);
        o->slot = -1;
        free(o->tmp);
        o->tmp = NULL;
    }
    block_signals(0, &old);
    if (o->fd < 0)
        return fail(err, errlen, o->path, "cannot create output: %s", strerror(e));
    return 0;
}

/* Gives the temporary the mode and owner of the file it replaces (old), or
 * the usual 0666 & ~umask for a new file. */
static int set_mode_and_owner(out_file *o, const struct stat *old, char *err, size_t errlen)
{
    if (!old) {
        mode_t mask = umask(0);
        umask(mask);
        fchmod(o->fd, 0666 & ~mask); /* not fatal: the file is only more private */
        return 0;
    }
    struct stat now;
    if (fstat(o->fd, &now) != 0)
        return fail(err, errlen, o->path, "cannot examine the new file: %s", strerror(errno));
    /* Owner first: chown clears the set-id bits that fchmod then restores. */
    if ((now.st_uid != old->st_uid || now.st_gid != old->st_gid) &&
        fchown(o->fd, old->st_uid, old->st_gid) != 0)
        return fail(err, errlen, o->path,
                    "the new file cannot keep the owner of the old one (uid %lu, gid %lu): "
                    "%s; left as it was",
                    (unsigned long)old->st_uid, (unsigned long)old->st_gid, strerror(errno));
    if (fchmod(o->fd, old->st_mode & 07777) != 0)
        return fail(err, errlen, o->path,
                    "the new file cannot keep the mode %04lo of the old one: %s; left as it was",
                    (unsigned long)(old->st_mode & 07777), strerror(errno));
    return 0;
}

int out_file_open(out_file *o, const char *path, unsigned flags, const char *what, char *err,
                  size_t errlen)
{
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->slot = -1;
    if (!what)
        what = "this output";
    if (!path || !*path)
        return fail(err, errlen, path, "no output file name");
    o->path = strdup(path);
    if (!o->path)
        return fail(err, errlen, path, "out of memory");
    struct stat st;
    int exists, magic;
    char *final = resolve_links(path, &st, &exists, &magic);
    if (!final) {
        fail(err, errlen, path, "cannot resolve: %s", strerror(errno));
        out_file_abort(o);
        return -1;
    }
    int rc = 0;
    if (magic) {
        /* /dev/stdout, /dev/fd/N, /proc/.../fd/N: in place, whatever they
         * lead to. One of our own descriptors is duplicated (its offset and
         * O_APPEND hold, as for a shell redirection); another is opened. */
        o->kind = OUT_FILE_IN_PLACE;
        int own = own_descriptor(final);
        if (own >= 0) {
            if (fstat(own, &st) != 0)
                rc = fail(err, errlen, path, "cannot examine: %s", strerror(errno));
            else
                rc = refuse_in_place(path, st.st_mode, 1, flags, what, err, errlen);
            if (rc == 0 && own == STDOUT_FILENO)
                fflush(stdout); /* what was printed goes first */
            if (rc == 0 && (o->fd = fcntl(own, F_DUPFD_CLOEXEC, 0)) < 0)
                rc = fail(err, errlen, path, "cannot open for writing: %s", strerror(errno));
            if (rc == 0 && (flags & OUT_FILE_SEEKS)) {
                int fl = fcntl(o->fd, F_GETFL);
                if (lseek(o->fd, 0, SEEK_CUR) != 0 || (fl >= 0 && (fl & O_APPEND)))
                    rc = fail(err, errlen, path,
                              "%s is written with seeks from the start of the file, and this "
                              "descriptor appends or is past it (write to a file name)",
                              what);
            }
        } else if (stat(final, &st) != 0) {
            rc = fail(err, errlen, path, "cannot open: %s", strerror(errno));
        } else if ((rc = refuse_in_place(path, st.st_mode, 0, flags, what, err, errlen)) == 0 &&
                   (o->fd = open(final, O_WRONLY | O_NOCTTY | O_CLOEXEC |
                                            (S_ISREG(st.st_mode) ? O_TRUNC : 0))) < 0) {
            rc = fail(err, errlen, path, "cannot open for writing: %s", strerror(errno));
        }
    } else if (!exists || S_ISREG(st.st_mode)) {
        o->kind = OUT_FILE_TEMP;
        o->target = final;
        final = NULL;
        rc = create_temporary(o, err, errlen);
        if (rc == 0)
            rc = set_mode_and_owner(o, exists ? &st : NULL, err, errlen);
    } else {
        /* A FIFO or a character device: in place (the rest is refused). */
        o->kind = OUT_FILE_IN_PLACE;
        if ((rc = refuse_in_place(path, st.st_mode, 0, flags, what, err, errlen)) == 0 &&
            (o->fd = open(final, O_WRONLY | O_NOCTTY | O_CLOEXEC)) < 0)
            rc = fail(err, errlen, path, "cannot open for writing: %s", strerror(errno));
    }
    free(final);
    if (rc != 0) {
        out_file_abort(o);
        return -1;
    }
    return 0;
}

/* ---- closing, committing, abandoning ---------------------------------------- */

int out_file_take_fd(out_file *o)
{
    int fd = o->kind != OUT_FILE_NONE ? o->fd : -1;
    o->fd = -1;
    return fd;
}

int out_file_close(out_file *o, char *err, size_t errlen)
{
    if (o->kind == OUT_FILE_NONE || o->fd < 0)
        return 0;
    int rc = close(o->fd);
    o->fd = -1;
    if (rc != 0 && errno != EINTR)
        return fail(err, errlen, o->path, "write failed: %s", strerror(errno));
    return 0;
}

/* Frees a committed or abandoned output and zeroes it (kind NONE). */
static void release(out_file *o)
{
    free(o->path);
    free(o->target);
    free(o->tmp);
    memset(o, 0, sizeof *o);
    o->fd = -1;
    o->slot = -1;
}

void out_file_abort(out_file *o)
{
    if (!o || o->kind == OUT_FILE_NONE) {
        if (o && o->path) /* an open that failed before choosing a kind */
            release(o);
        return;
    }
    if (o->fd >= 0)
        close(o->fd);
    o->fd = -1;
    if (o->tmp && o->slot >= 0) {
        unlink(o->tmp);
        release_slot(o->slot);
    }
    release(o);
}

int out_file_commit(out_file *o, char *err, size_t errlen)
{
    out_file *one[1] = {o};
    return out_file_commit_all(one, 1, err, errlen);
}

int out_file_commit_all(out_file *const *v, size_t n, char *err, size_t errlen)
{
    /* Everything that can fail before a rename fails here, changing nothing. */
    for (size_t i = 0; i < n; i++) {
        if (!v[i] || v[i]->kind == OUT_FILE_NONE)
            continue;
        if (out_file_close(v[i], err, errlen) != 0) {
            for (size_t k = 0; k < n; k++)
                if (v[k])
                    out_file_abort(v[k]);
            return -1;
        }
    }
    /* The renames, back to back: the only step that cannot be undone (an
     * earlier rename stays if a later one fails), kept as short as can be. */
    int rc = 0;
    char done[512] = "";
    for (size_t i = 0; i < n; i++) {
        out_file *o = v[i];
        if (!o || o->kind == OUT_FILE_NONE)
            continue;
        if (rc != 0 || o->kind != OUT_FILE_TEMP) {
            out_file_abort(o); /* after a failure: drop; in place: already written */
            continue;
        }
        if (rename(o->tmp, o->target) != 0) {
            int e = errno;
            if (done[0])
                rc = fail(err, errlen, o->path, "cannot put the new file in place: %s "
                          "(already replaced: %s)", strerror(e), done);
            else
                rc = fail(err, errlen, o->path, "cannot put the new file in place: %s",
                          strerror(e));
            out_file_abort(o);
            continue;
        }
        release_slot(o->slot);
        size_t used = strlen(done);
        snprintf(done + used, sizeof done - used, "%s%s", used ? ", " : "", o->path);
        release(o);
    }
    return rc;
}
