/*
 * out_file.h - how every output file of the pixsum tool is created, written
 * and put in place: the one mechanism under the image writers (image_io.c),
 * the text outputs and plots (text_out.c), the bench JSON and the MPI tables.
 * The user's path is resolved first, symbolic link by symbolic link (a link
 * stays a link: its final target is what gets written). A regular file, or a
 * name that does not exist yet, is written to a hidden temporary
 * ".NAME.pixsum-XXXXXX" in the target's directory, carrying the old file's
 * mode and owner (new files: 0666 & ~umask), and renamed over the target only
 * on commit. A FIFO, a character device or a descriptor named through /proc
 * (/dev/stdout, /dev/fd/N, /proc/self/fd/N) is written in place, streamed,
 * with no temporary (nothing another process holds open is ever renamed
 * over); directories, block devices and sockets are refused. Live
 * temporaries sit in a registry that a SIGINT/SIGTERM/SIGHUP/SIGXFSZ handler
 * (and exit) empties before the signal ends the process with its usual
 * status. A command with several outputs finishes them all, then renames
 * them back to back with out_file_commit_all().
 *
 * Errors: functions returning int return 0 or -1, after writing one line
 * "PATH: problem" into err (errlen bytes; err may be NULL), PATH being the
 * user's name of the output, never a temporary's.
 */
#ifndef PIXSUM_TOOLS_OUT_FILE_H
#define PIXSUM_TOOLS_OUT_FILE_H

#include <stdarg.h>
#include <stddef.h>

/* How an open output reaches its name. */
typedef enum out_kind {
    OUT_FILE_NONE = 0, /* not open (zeroed, committed or abandoned) */
    OUT_FILE_TEMP,     /* through a temporary renamed over the target on commit */
    OUT_FILE_IN_PLACE  /* written straight into the FIFO, device or descriptor */
} out_kind;

/* An output being written. Fields are read-only for callers. */
typedef struct out_file {
    out_kind kind;
    char *path;   /* the user's name, for messages */
    char *target; /* TEMP: the file the rename replaces (symlinks followed) */
    char *tmp;    /* TEMP: the temporary; NULL once renamed or removed */
    int fd;       /* open descriptor; -1 once closed or handed over */
    int slot;     /* TEMP: registry slot of tmp, or -1 */
} out_file;

/* out_file_open() flags. */
enum {
    OUT_FILE_SEEKS = 1,  /* the encoder seeks back: refuse what cannot seek */
    OUT_FILE_REGULAR = 2 /* only a regular file will do (MPI-IO): refuse the rest */
};

/* Opens the output `path` for writing (see the rules above). `what` names
 * the kind of output for refusals ("a TIFF file", "an MPI table"; NULL: "this
 * output"). On success o->fd is open for writing at offset 0 (a descriptor of
 * ours: at its current offset) and nothing under `path` has changed yet.
 * Returns 0, or -1 with err filled ("PATH: ...") and *o closed (kind NONE):
 * a refused target, a temporary that cannot be created, or an existing file
 * whose owner or mode the new file cannot keep (the old file stays as is). */
int out_file_open(out_file *o, const char *path, unsigned flags, const char *what, char *err,
                  size_t errlen);

/* Hands o->fd over to the caller (a FILE*, libtiff), who closes it from
 * then on; returns it (-1 if none) and sets o->fd to -1. */
int out_file_take_fd(out_file *o);

/* Closes o->fd if still held. Returns 0, or -1 when close() reports a write
 * error (err filled; the output is not abandoned, call out_file_abort()). */
int out_file_close(out_file *o, char *err, size_t errlen);

/* Puts one finished output in place: closes o->fd if still held, renames
 * the temporary over the target (nothing to do in place). Returns 0, or -1
 * with err filled and the temporary removed. *o is closed either way. */
int out_file_commit(out_file *o, char *err, size_t errlen);

/* Commits n finished outputs as one: first closes every descriptor still
 * held (any failure abandons them all, changing nothing), then renames the
 * temporaries back to back. A rename that fails after an earlier one
 * succeeded cannot undo it: the message says which outputs were already
 * replaced, and the later temporaries are removed. NULL entries are skipped.
 * Returns 0 or -1 (err filled); every *v[i] is closed either way. */
int out_file_commit_all(out_file *const *v, size_t n, char *err, size_t errlen);

/* Abandons an output: closes o->fd, removes the temporary (in place: what
 * was streamed stays), frees. Safe on a closed or zeroed out_file. */
void out_file_abort(out_file *o);

/* Writes "PATH: <fmt formatted>" into err (errlen bytes, truncated; nothing
 * when err is NULL or errlen 0); PATH "(no file)" when NULL. Returns -1: the
 * tools' error convention, shared by image_io's pxio_fail(). */
int out_file_vfail(char *err, size_t errlen, const char *path, const char *fmt, va_list ap);

#endif
