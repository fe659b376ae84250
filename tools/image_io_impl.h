/*
 * image_io_impl.h - what the format files of the image I/O module share: the
 * reader and writer structures with their per-format operations, the error
 * helper and byte-order helpers. Not used outside tools/image_io*.c.
 */
#ifndef PIXSUM_TOOLS_IMAGE_IO_IMPL_H
#define PIXSUM_TOOLS_IMAGE_IO_IMPL_H

#include "image_io.h"
#include "out_file.h"

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

/* Per-format reading: read `rows` rows (the next ones) into buf. */
typedef struct pxio_reader_ops {
    int (*read)(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                char *err, size_t errlen);
    void (*close)(pxio_reader *r);
} pxio_reader_ops;

struct pxio_reader {
    const pxio_reader_ops *ops;
    char *path;
    pxio_info info;
    FILE *f;            /* the open file, for formats that read through stdio */
    off_t file_size;
    size_t row_bytes;   /* packed bytes of one row */
    size_t total_rows;  /* depth x height */
    size_t next_row;    /* rows handed out so far */
    size_t strip_rows;  /* suggested rows per read */
    int random_access;  /* 1: read() takes any next_row (pxio_reader_seek jumps) */
    void *state;        /* format-specific */
};

/* Per-format writing. `finish` completes the file (trailers, flush, close) and
 * returns 0 or -1; `discard` closes without care (after a failure). */
typedef struct pxio_writer_ops {
    int (*write)(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                 char *err, size_t errlen);
    int (*finish)(pxio_writer *w, char *err, size_t errlen);
    void (*discard)(pxio_writer *w);
} pxio_writer_ops;

struct pxio_writer {
    const pxio_writer_ops *ops;
    char *path;         /* the user's name (messages) */
    out_file out;       /* where the bytes go: a temporary or the target itself */
    int fd;             /* the output's descriptor (owned by `f` once opened) */
    FILE *f;
    pxio_info shape;
    pxio_write_options opt;
    size_t row_bytes;
    size_t total_rows;
    size_t next_row;
    int finished;       /* 1: finish() succeeded; the output waits for its commit */
    void *state;
};

/* Writes "path: message" into err. Returns -1. */
int pxio_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* The one place a reader sets the image's type and shape: checks the size with
 * pxio_check_size() (no width x height x depth x channels x sample size product
 * may overflow), then fills r->info's type, width, height, depth, channels,
 * r->row_bytes and r->total_rows, and *bytes (may be NULL) with the whole
 * image's packed size. Returns 0, or -1 with "PATH: image dimensions overflow:
 * ..." in err. */
int pxio_set_shape(pxio_reader *r, pixsum_type type, size_t width, size_t height, size_t depth,
                   size_t channels, size_t *bytes, char *err, size_t errlen);

/* 1 on a little-endian host. */
static inline int pxio_host_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Reverses the bytes of n elements of `size` bytes in place. */
void pxio_swap_bytes(void *buf, size_t n, size_t size);

/* Reads exactly n bytes from r->f; a short read is reported as a truncated
 * file (or the I/O error). */
int pxio_read_exact(pxio_reader *r, void *buf, size_t n, char *err, size_t errlen);

/* Writes exactly n bytes to w->f; failure (e.g. a full disk) is reported. */
int pxio_write_exact(pxio_writer *w, const void *buf, size_t n, char *err, size_t errlen);

/* Flushes and closes w->f (clearing it), reporting delayed write errors such
 * as a full disk. Returns 0 or -1. */
int pxio_close_stream(pxio_writer *w, char *err, size_t errlen);

/* Format entry points. Each open fills r->info, r->ops, r->row_bytes,
 * r->total_rows, r->strip_rows and r->state; r->f is open at offset 0 and
 * r->file_size set. Writers find w->f open on the output (except TIFF, which
 * uses w->fd) with w->shape checked by the format's accepts(); only the
 * formats that seek (TIFF, PFM) may count on a seekable file. */
int pxio_npy_open(pxio_reader *r, const pxio_options *opt, char *err, size_t errlen);
int pxio_pnm_open(pxio_reader *r, char *err, size_t errlen);
int pxio_pfm_open(pxio_reader *r, char *err, size_t errlen);
int pxio_png_open(pxio_reader *r, char *err, size_t errlen);
int pxio_jpeg_open(pxio_reader *r, char *err, size_t errlen);
int pxio_tiff_open(pxio_reader *r, const pxio_options *opt, char *err, size_t errlen);

int pxio_npy_create(pxio_writer *w, char *err, size_t errlen);
int pxio_pnm_create(pxio_writer *w, char *err, size_t errlen);
int pxio_pfm_create(pxio_writer *w, char *err, size_t errlen);
int pxio_png_create(pxio_writer *w, char *err, size_t errlen);
int pxio_jpeg_create(pxio_writer *w, char *err, size_t errlen);
int pxio_tiff_create(pxio_writer *w, char *err, size_t errlen);

#endif
