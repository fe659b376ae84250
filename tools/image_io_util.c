/*
 * image_io_util.c - the helpers every part of the image I/O module uses: the
 * one-line error text, the checked image size, the reader's shape, byte
 * swapping, and exact reads and writes with their error messages. The format
 * files (image_io_{npy,pnm,pfm,png,jpeg,tiff}.c) and the format-independent
 * image_io.c both call these; nothing here calls back into either, so the
 * module's dependencies run one way: image_io.c -> formats -> this file.
 */
#include "image_io_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int pxio_fail(char *err, size_t errlen, const char *path, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    out_file_vfail(err, errlen, path, fmt, ap);
    va_end(ap);
    return -1;
}

int pxio_check_size(const char *path, pixsum_type type, size_t width, size_t height,
                    size_t depth, size_t channels, size_t *bytes, char *err, size_t errlen)
{
    /* every byte count of the image - a row, a slice, the whole - must fit a
     * ptrdiff_t: views and row strides are signed */
    size_t n = pixsum_type_size(type);
    const size_t dims[4] = {channels, width, height, depth};
    int over = n == 0;
    for (int i = 0; i < 4 && !over; i++) {
        if (dims[i] != 0 && n > (size_t)PTRDIFF_MAX / dims[i])
            over = 1;
        else
            n *= dims[i];
    }
    if (over) {
        char shape[96];
        if (depth > 1)
            snprintf(shape, sizeof shape, "%zu x %zu x %zu", width, height, depth);
        else
            snprintf(shape, sizeof shape, "%zu x %zu", width, height);
        return pxio_fail(err, errlen, path,
                         "image dimensions overflow: %s pixels of %zu %s sample(s) would need "
                         "more than 2^63 bytes",
                         shape, channels, pixsum_type_name(type));
    }
    if (bytes)
        *bytes = n;
    return 0;
}

int pxio_set_shape(pxio_reader *r, pixsum_type type, size_t width, size_t height, size_t depth,
                   size_t channels, size_t *bytes, char *err, size_t errlen)
{
    if (pxio_check_size(r->path, type, width, height, depth, channels, bytes, err, errlen) != 0)
        return -1;
    r->info.type = type;
    r->info.width = width;
    r->info.height = height;
    r->info.depth = depth;
    r->info.channels = channels;
    r->row_bytes = width * channels * pixsum_type_size(type);
    r->total_rows = height * depth;
    return 0;
}

void pxio_swap_bytes(void *buf, size_t n, size_t size)
{
    unsigned char *p = buf;
    if (size < 2)
        return;
    for (size_t i = 0; i < n; i++, p += size)
        for (size_t a = 0, b = size - 1; a < b; a++, b--) {
            unsigned char t = p[a];
            p[a] = p[b];
            p[b] = t;
        }
}

int pxio_read_exact(pxio_reader *r, void *buf, size_t n, char *err, size_t errlen)
{
    size_t got = fread(buf, 1, n, r->f);
    if (got == n)
        return 0;
    if (ferror(r->f))
        return pxio_fail(err, errlen, r->path, "read error: %s", strerror(errno));
    return pxio_fail(err, errlen, r->path,
                     "truncated file: pixel data ends early (row %zu of %zu)",
                     r->next_row + 1, r->total_rows);
}

int pxio_write_exact(pxio_writer *w, const void *buf, size_t n, char *err, size_t errlen)
{
    if (n == 0 || fwrite(buf, 1, n, w->f) == n)
        return 0;
    return pxio_fail(err, errlen, w->path, "write failed: %s",
                     errno ? strerror(errno) : "unknown error");
}

int pxio_close_stream(pxio_writer *w, char *err, size_t errlen)
{
    FILE *f = w->f;
    w->f = NULL;
    w->fd = -1;
    errno = 0;
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return pxio_fail(err, errlen, w->path, "write failed: %s",
                         e ? strerror(e) : "unknown error");
    return 0;
}
