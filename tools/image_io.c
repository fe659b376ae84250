/*
 * image_io.c - the format-independent half of the image I/O module: format
 * detection by magic bytes, the stream reader/writer bookkeeping (row counts;
 * the output file itself, temporary or in place, is tools/out_file.c's), and
 * the whole-image functions built on the streams. The formats live in
 * image_io_{npy,pnm,png,jpeg,tiff}.c, the helpers both use in image_io_util.c.
 */
#include "image_io_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- which formats this build has ------------------------------------ */

const char *pxio_formats_supported(void)
{
    return "npy pgm ppm pnm pfm"
#ifdef PIXSUM_HAVE_PNG
           " png"
#endif
#ifdef PIXSUM_HAVE_JPEG
           " jpeg"
#endif
#ifdef PIXSUM_HAVE_TIFF
           " tiff"
#endif
        ;
}

const char *pxio_formats_missing(void)
{
    static const char missing[] = ""
#ifndef PIXSUM_HAVE_PNG
                                  " png"
#endif
#ifndef PIXSUM_HAVE_JPEG
                                  " jpeg"
#endif
#ifndef PIXSUM_HAVE_TIFF
                                  " tiff"
#endif
        ;
    return missing[0] ? missing + 1 : missing;
}

/* ---- readers --------------------------------------------------------- */

void pxio_reader_close(pxio_reader *r)
{
    if (!r)
        return;
    if (r->ops && r->ops->close)
        r->ops->close(r);
    if (r->f)
        fclose(r->f);
    free(r->path);
    free(r);
}

int pxio_reader_open(const char *path, const pxio_options *opt, pxio_reader **reader,
                     pxio_info *info, char *err, size_t errlen)
{
    static const pxio_options defaults = {0};
    if (!reader)
        return pxio_fail(err, errlen, path, "internal error: no reader pointer");
    *reader = NULL;
    if (!path)
        return pxio_fail(err, errlen, path, "no file name");
    if (!opt)
        opt = &defaults;

    pxio_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->path = strdup(path))) {
        free(r);
        return pxio_fail(err, errlen, path, "out of memory");
    }
    r->f = fopen(path, "rb");
    if (!r->f) {
        int e = errno;
        pxio_reader_close(r);
        return pxio_fail(err, errlen, path, "cannot open: %s", strerror(e));
    }
    struct stat st;
    if (fstat(fileno(r->f), &st) != 0 || !S_ISREG(st.st_mode)) {
        pxio_reader_close(r);
        return pxio_fail(err, errlen, path, "not a regular file");
    }
    r->file_size = st.st_size;

    unsigned char magic[8] = {0};
    size_t got = fread(magic, 1, sizeof magic, r->f);
    rewind(r->f);
    int rc;
    if (got == 0) {
        rc = pxio_fail(err, errlen, path, "empty file");
    } else if (got >= 6 && memcmp(magic, "\x93NUMPY", 6) == 0) {
        rc = pxio_npy_open(r, opt, err, errlen);
    } else if (got >= 2 && magic[0] == 'P' && (magic[1] == 'F' || magic[1] == 'f')) {
        rc = pxio_pfm_open(r, err, errlen);
    } else if (got >= 2 && magic[0] == 'P' && magic[1] >= '1' && magic[1] <= '7') {
        rc = pxio_pnm_open(r, err, errlen);
    } else if (got >= 8 && memcmp(magic, "\x89PNG\r\n\x1a\n", 8) == 0) {
        rc = pxio_png_open(r, err, errlen);
    } else if (got >= 3 && magic[0] == 0xFF && magic[1] == 0xD8 && magic[2] == 0xFF) {
        rc = pxio_jpeg_open(r, err, errlen);
    } else if (got >= 4 && ((magic[0] == 'I' && magic[1] == 'I' &&
                             (magic[2] == 42 || magic[2] == 43) && magic[3] == 0) ||
                            (magic[0] == 'M' && magic[1] == 'M' && magic[2] == 0 &&
                             (magic[3] == 42 || magic[3] == 43)))) {
        rc = pxio_tiff_open(r, opt, err, errlen);
    } else {
        rc = pxio_fail(err, errlen, path,
                       "unknown file format (not npy, pgm/ppm, pfm, png, jpeg or tiff: "
                       "first bytes %02x %02x %02x %02x)",
                       magic[0], magic[1], magic[2], magic[3]);
    }
    if (rc == 0 && r->info.pages == 0) { /* formats without pages */
        r->info.pages = 1;
        if (opt->page_set && opt->page != 0)
            rc = pxio_fail(err, errlen, path, "--page %zu: a %s file holds one image (page 0)",
                           opt->page, r->info.format);
    }
    if (rc != 0) {
        pxio_reader_close(r);
        return -1;
    }
    if (r->strip_rows == 0) {
        /* About 4 MiB worth of rows. */
        size_t want = ((size_t)4 << 20) / (r->row_bytes ? r->row_bytes : 1);
        r->strip_rows = want ? want : 1;
    }
    if (r->strip_rows > r->total_rows)
        r->strip_rows = r->total_rows;
    if (info)
        *info = r->info;
    *reader = r;
    return 0;
}

int pxio_read_rows(pxio_reader *r, size_t rows, void *buf, ptrdiff_t row_stride, char *err,
                   size_t errlen)
{
    if (!r || !buf)
        return pxio_fail(err, errlen, r ? r->path : NULL, "internal error: no reader/buffer");
    if (rows > r->total_rows - r->next_row)
        return pxio_fail(err, errlen, r->path, "internal error: %zu rows asked, %zu remain",
                         rows, r->total_rows - r->next_row);
    if (rows == 0)
        return 0;
    if (row_stride == 0)
        row_stride = (ptrdiff_t)r->row_bytes;
    if (r->ops->read(r, rows, buf, row_stride, err, errlen) != 0)
        return -1;
    r->next_row += rows;
    return 0;
}

int pxio_reader_seek(pxio_reader *r, size_t row, char *err, size_t errlen)
{
    if (!r)
        return pxio_fail(err, errlen, NULL, "internal error: no reader");
    if (row > r->total_rows)
        return pxio_fail(err, errlen, r->path, "internal error: row %zu asked, %zu in the file",
                         row, r->total_rows);
    if (r->random_access || row == r->next_row) {
        r->next_row = row;
        return 0;
    }
    if (row < r->next_row)
        return pxio_fail(err, errlen, r->path,
                         "cannot go back to row %zu (a %s file is read in order)", row,
                         r->info.format);
    /* Read forward and drop, a bounded band at a time. */
    size_t band = r->strip_rows ? r->strip_rows : 1;
    size_t most = ((size_t)4 << 20) / (r->row_bytes ? r->row_bytes : 1);
    if (band > most)
        band = most ? most : 1;
    void *buf = malloc(band * r->row_bytes);
    if (!buf)
        return pxio_fail(err, errlen, r->path, "out of memory for %zu rows", band);
    int st = 0;
    while (st == 0 && r->next_row < row) {
        size_t n = row - r->next_row < band ? row - r->next_row : band;
        st = pxio_read_rows(r, n, buf, 0, err, errlen);
    }
    free(buf);
    return st;
}

size_t pxio_reader_strip_rows(const pxio_reader *r)
{
    return r && r->strip_rows ? r->strip_rows : 1;
}

int pxio_probe(const char *path, const pxio_options *opt, pxio_info *info, char *err,
               size_t errlen)
{
    pxio_reader *r;
    if (pxio_reader_open(path, opt, &r, info, err, errlen) != 0)
        return -1;
    pxio_reader_close(r);
    return 0;
}

/* ---- writers --------------------------------------------------------- */

typedef enum { FMT_NONE, FMT_NPY, FMT_PNM, FMT_PFM, FMT_PNG, FMT_JPEG, FMT_TIFF } fmt_id;

static fmt_id format_of(const char *path, const char **ext_out)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(slash ? slash : path, '.');
    *ext_out = dot ? dot + 1 : "";
    if (!dot)
        return FMT_NONE;
    const char *e = dot + 1;
    if (!strcasecmp(e, "npy"))
        return FMT_NPY;
    if (!strcasecmp(e, "pgm") || !strcasecmp(e, "ppm") || !strcasecmp(e, "pnm"))
        return FMT_PNM;
    if (!strcasecmp(e, "pfm"))
        return FMT_PFM;
    if (!strcasecmp(e, "png"))
        return FMT_PNG;
    if (!strcasecmp(e, "jpg") || !strcasecmp(e, "jpeg"))
        return FMT_JPEG;
    if (!strcasecmp(e, "tif") || !strcasecmp(e, "tiff") || !strcasecmp(e, "btf") ||
        !strcasecmp(e, "tf8"))
        return FMT_TIFF;
    return FMT_NONE;
}

/* Checks that the format can hold the shape; fills err naming the problem. */
static int format_accepts(fmt_id fmt, const char *ext, const pxio_writer *w, char *err,
                          size_t errlen)
{
    const pxio_info *s = &w->shape;
    pixsum_type t = s->type;
    const char *tn = pixsum_type_name(t);
    switch (fmt) {
    case FMT_NPY:
        return 0;
    case FMT_PNM: {
        int want = !strcasecmp(ext, "pgm") ? 1 : !strcasecmp(ext, "ppm") ? 3 : 0;
        if (t != PIXSUM_U8 && t != PIXSUM_U16)
            return pxio_fail(err, errlen, w->path,
                             "PGM/PPM holds u8 or u16 samples, not %s (use .npy or .tif)",
                             tn);
        if ((want && s->channels != (size_t)want) ||
            (!want && s->channels != 1 && s->channels != 3))
            return pxio_fail(err, errlen, w->path,
                             "%s holds %s, not %zu channels (use .npy, .png or .tif)", ext,
                             want == 1 ? "1 channel" : want == 3 ? "3 channels" : "1 or 3 channels",
                             s->channels);
        break;
    }
    case FMT_PFM:
        if (t != PIXSUM_F32)
            return pxio_fail(err, errlen, w->path,
                             "PFM holds f32 samples, not %s (use .npy or .tif)", tn);
        if (s->channels != 1 && s->channels != 3)
            return pxio_fail(err, errlen, w->path,
                             "PFM holds 1 or 3 channels, not %zu (use .npy or .tif)",
                             s->channels);
        break;
    case FMT_PNG:
        if (t != PIXSUM_U8 && t != PIXSUM_U16)
            return pxio_fail(err, errlen, w->path,
                             "PNG holds u8 or u16 samples, not %s (use .npy or .tif)", tn);
        break;
    case FMT_JPEG:
        if (t != PIXSUM_U8)
            return pxio_fail(err, errlen, w->path,
                             "JPEG holds u8 samples, not %s (use .png, .npy or .tif)", tn);
        if (s->channels != 1 && s->channels != 3)
            return pxio_fail(err, errlen, w->path,
                             "JPEG holds 1 or 3 channels, not %zu (use .png or .tif)",
                             s->channels);
        break;
    case FMT_TIFF:
        return 0; /* a 3-D view: one page per slice */
    case FMT_NONE:
        return pxio_fail(err, errlen, w->path, "internal error: no format");
    }
    if (s->depth != 1)
        return pxio_fail(err, errlen, w->path,
                         "%s holds 2-D images; a volume or batch (depth %zu) needs .npy or "
                         ".tif (one page per slice)", ext,
                         s->depth);
    return 0;
}

static void writer_free(pxio_writer *w)
{
    free(w->path);
    free(w);
}

void pxio_writer_abort(pxio_writer *w)
{
    if (!w)
        return;
    if (!w->finished) { /* finish() has already closed and freed these */
        if (w->ops && w->ops->discard)
            w->ops->discard(w);
        if (w->f)
            fclose(w->f);
        else if (w->fd >= 0)
            close(w->fd);
    }
    out_file_abort(&w->out); /* removes the temporary, if still there */
    writer_free(w);
}

int pxio_writer_open(const char *path, const pxio_info *shape, const pxio_write_options *opt,
                     pxio_writer **writer, char *err, size_t errlen)
{
    if (!writer || !shape)
        return pxio_fail(err, errlen, path, "internal error: no writer/shape");
    *writer = NULL;
    if (!path || !*path)
        return pxio_fail(err, errlen, path, "no output file name");
    const char *ext;
    fmt_id fmt = format_of(path, &ext);
    if (fmt == FMT_NONE)
        return pxio_fail(err, errlen, path,
                         "cannot tell the output format from the extension '%s' "
                         "(use .npy .pgm .ppm .pnm .pfm .png .jpg .tif .tiff)",
                         ext);
#ifndef PIXSUM_HAVE_PNG
    if (fmt == FMT_PNG)
        return pxio_fail(err, errlen, path, "this pixsum was built without libpng");
#endif
#ifndef PIXSUM_HAVE_JPEG
    if (fmt == FMT_JPEG)
        return pxio_fail(err, errlen, path, "this pixsum was built without libjpeg");
#endif
#ifndef PIXSUM_HAVE_TIFF
    if (fmt == FMT_TIFF)
        return pxio_fail(err, errlen, path, "this pixsum was built without libtiff");
#endif
    size_t tsize = pixsum_type_size(shape->type);
    if (tsize == 0 || shape->channels < 1 || shape->channels > 4 || shape->width == 0 ||
        shape->height == 0 || shape->depth == 0)
        return pxio_fail(err, errlen, path, "internal error: bad image shape to write");
    if (pixsum_packed_bytes(shape->type, shape->width, shape->height, shape->depth,
                            shape->channels) == 0)
        return pxio_fail(err, errlen, path, "image dimensions overflow");

    pxio_writer *w = calloc(1, sizeof *w);
    if (!w)
        return pxio_fail(err, errlen, path, "out of memory");
    w->fd = -1;
    w->out.fd = -1;
    w->shape = *shape;
    if (opt)
        w->opt = *opt;
    w->row_bytes = shape->width * shape->channels * tsize;
    w->total_rows = shape->height * shape->depth;
    w->path = strdup(path);
    if (!w->path) {
        writer_free(w);
        return pxio_fail(err, errlen, path, "out of memory");
    }
    if (format_accepts(fmt, ext, w, err, errlen) != 0) {
        writer_free(w);
        return -1;
    }

    /* The output (tools/out_file.h): a hidden temporary beside a regular
     * target, renamed on commit, or the FIFO / device itself. TIFF and PFM
     * seek back while writing: they refuse what cannot seek. */
    int seeks = fmt == FMT_TIFF || fmt == FMT_PFM;
    if (out_file_open(&w->out, path, seeks ? OUT_FILE_SEEKS : 0,
                      fmt == FMT_TIFF ? "a TIFF file" : fmt == FMT_PFM ? "a PFM file" : NULL,
                      err, errlen) != 0) {
        writer_free(w);
        return -1;
    }
    w->fd = out_file_take_fd(&w->out);

    int rc;
    if (fmt == FMT_TIFF) {
        rc = pxio_tiff_create(w, err, errlen);
    } else {
        w->f = fdopen(w->fd, "wb");
        if (!w->f) {
            int e = errno;
            pxio_writer_abort(w);
            return pxio_fail(err, errlen, path, "cannot open output: %s", strerror(e));
        }
        switch (fmt) {
        case FMT_NPY: rc = pxio_npy_create(w, err, errlen); break;
        case FMT_PNM: rc = pxio_pnm_create(w, err, errlen); break;
        case FMT_PFM: rc = pxio_pfm_create(w, err, errlen); break;
        case FMT_PNG: rc = pxio_png_create(w, err, errlen); break;
        case FMT_JPEG: rc = pxio_jpeg_create(w, err, errlen); break;
        default: rc = pxio_fail(err, errlen, path, "internal error: format"); break;
        }
    }
    if (rc != 0) {
        pxio_writer_abort(w);
        return -1;
    }
    *writer = w;
    return 0;
}

int pxio_write_rows(pxio_writer *w, size_t rows, const void *buf, ptrdiff_t row_stride,
                    char *err, size_t errlen)
{
    if (!w || !buf)
        return pxio_fail(err, errlen, w ? w->path : NULL, "internal error: no writer/buffer");
    if (rows > w->total_rows - w->next_row)
        return pxio_fail(err, errlen, w->path, "internal error: %zu rows given, %zu remain",
                         rows, w->total_rows - w->next_row);
    if (rows == 0)
        return 0;
    if (row_stride == 0)
        row_stride = (ptrdiff_t)w->row_bytes;
    if (w->ops->write(w, rows, buf, row_stride, err, errlen) != 0)
        return -1;
    w->next_row += rows;
    return 0;
}

int pxio_writer_finish(pxio_writer *w, char *err, size_t errlen)
{
    if (!w)
        return pxio_fail(err, errlen, NULL, "internal error: no writer");
    if (w->finished)
        return 0;
    if (w->next_row != w->total_rows) {
        pxio_fail(err, errlen, w->path, "internal error: %zu of %zu rows written",
                  w->next_row, w->total_rows);
    } else if (w->ops->finish(w, err, errlen) == 0) {
        /* finish() has closed the file (and cleared f / fd). */
        w->finished = 1;
        return 0;
    }
    /* Abandon the output now; pxio_writer_abort() frees the rest. */
    if (w->ops->discard)
        w->ops->discard(w);
    if (w->f)
        fclose(w->f);
    else if (w->fd >= 0)
        close(w->fd);
    w->f = NULL;
    w->fd = -1;
    out_file_abort(&w->out);
    return -1;
}

out_file *pxio_writer_out(pxio_writer *w)
{
    return w ? &w->out : NULL;
}

int pxio_writer_commit(pxio_writer *w, char *err, size_t errlen)
{
    return pxio_writer_commit_all(&w, 1, err, errlen);
}

int pxio_writer_commit_all(pxio_writer *const *ws, size_t n, char *err, size_t errlen)
{
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        if (ws[i] && pxio_writer_finish(ws[i], err, errlen) != 0)
            rc = -1;
    if (rc != 0) {
        for (size_t i = 0; i < n; i++)
            pxio_writer_abort(ws[i]);
        return -1;
    }
    /* Every file is complete: put them in place back to back. */
    out_file **outs = malloc((n ? n : 1) * sizeof *outs);
    if (!outs) {
        pxio_fail(err, errlen, n ? ws[0]->path : NULL, "out of memory");
        rc = -1;
    } else {
        for (size_t i = 0; i < n; i++)
            outs[i] = ws[i] ? &ws[i]->out : NULL;
        rc = out_file_commit_all(outs, n, err, errlen);
        free(outs);
    }
    for (size_t i = 0; i < n; i++)
        pxio_writer_abort(ws[i]); /* frees (removes what was not committed) */
    return rc;
}

/* ---- whole images ---------------------------------------------------- */

void pxio_free(pxio_image *img)
{
    if (!img)
        return;
    free(img->data);
    memset(img, 0, sizeof *img);
}

int pxio_read(const char *path, const pxio_options *opt, pxio_image *img, char *err,
              size_t errlen)
{
    if (!img)
        return pxio_fail(err, errlen, path, "internal error: no image");
    memset(img, 0, sizeof *img);
    pxio_reader *r;
    pxio_info info;
    if (pxio_reader_open(path, opt, &r, &info, err, errlen) != 0)
        return -1;
    size_t bytes = pixsum_packed_bytes(info.type, info.width, info.height, info.depth,
                                       info.channels);
    void *data = bytes ? malloc(bytes) : NULL;
    if (!data) {
        pxio_reader_close(r);
        return pxio_fail(err, errlen, path, "out of memory: the image needs %zu bytes",
                         bytes);
    }
    int rc = pxio_read_rows(r, r->total_rows, data, 0, err, errlen);
    pxio_reader_close(r);
    if (rc != 0) {
        free(data);
        return -1;
    }
    img->data = data;
    img->info = info;
    img->view = pixsum_view_3d(data, info.type, info.width, info.height, info.depth,
                               info.channels, 0, 0);
    return 0;
}

int pxio_write(const char *path, const pixsum_view *v, const pxio_write_options *opt,
               char *err, size_t errlen)
{
    pxio_writer *w;
    if (pxio_write_staged(path, v, opt, &w, err, errlen) != 0)
        return -1;
    return pxio_writer_commit(w, err, errlen);
}

int pxio_write_staged(const char *path, const pixsum_view *v, const pxio_write_options *opt,
                      pxio_writer **writer, char *err, size_t errlen)
{
    *writer = NULL;
    if (!v || !v->data)
        return pxio_fail(err, errlen, path, "internal error: no image to write");
    pxio_info shape;
    memset(&shape, 0, sizeof shape);
    shape.type = v->type;
    shape.width = v->width;
    shape.height = v->height;
    shape.depth = v->depth ? v->depth : 1;
    shape.channels = v->channels;
    pxio_writer *w;
    if (pxio_writer_open(path, &shape, opt, &w, err, errlen) != 0)
        return -1;
    ptrdiff_t rs = v->row_stride ? v->row_stride
                                 : (ptrdiff_t)(v->width * v->channels * pixsum_type_size(v->type));
    ptrdiff_t ss = v->slice_stride ? v->slice_stride : rs * (ptrdiff_t)v->height;
    for (size_t z = 0; z < shape.depth; z++) {
        const char *slice = (const char *)v->data + (ptrdiff_t)z * ss;
        if (pxio_write_rows(w, v->height, slice, rs, err, errlen) != 0) {
            pxio_writer_abort(w);
            return -1;
        }
    }
    if (pxio_writer_finish(w, err, errlen) != 0) {
        pxio_writer_abort(w);
        return -1;
    }
    *writer = w;
    return 0;
}
