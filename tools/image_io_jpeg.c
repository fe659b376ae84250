/*
 * image_io_jpeg.c - JPEG through Debian's libjpeg-turbo (when PIXSUM_HAVE_JPEG).
 *
 * Reading: 8-bit grayscale (1 channel) or colour decoded to RGB (3 channels),
 * streamed scanline by scanline. CMYK/YCCK files are refused. libjpeg only
 * warns about corrupt or truncated data ("premature end of data") and goes on
 * with grey filler; we treat every such warning as an error, so a damaged file
 * never yields an image.
 * Writing: u8 gray or RGB, quality 95, scanline by scanline.
 */
#include "image_io_impl.h"

#ifdef PIXSUM_HAVE_JPEG

#include <jerror.h>
#include <jpeglib.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct jpeg_errmgr {
    struct jpeg_error_mgr pub;
    jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
} jpeg_errmgr;

static void jpeg_error_exit_fn(j_common_ptr cinfo)
{
    jpeg_errmgr *e = (jpeg_errmgr *)cinfo->err;
    e->pub.format_message(cinfo, e->message);
    longjmp(e->jump, 1);
}

/* Warnings (msg_level -1) are corrupt-data reports: make them errors. */
static void jpeg_emit_fn(j_common_ptr cinfo, int msg_level)
{
    if (msg_level < 0)
        jpeg_error_exit_fn(cinfo);
}

typedef struct jpeg_rstate {
    struct jpeg_decompress_struct cinfo;
    jpeg_errmgr err;
    int started;
} jpeg_rstate;

static void jpeg_reader_close(pxio_reader *r)
{
    jpeg_rstate *s = r->state;
    if (!s)
        return;
    jpeg_destroy_decompress(&s->cinfo);
    free(s);
    r->state = NULL;
}

static int jpeg_reader_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                            char *err, size_t errlen)
{
    jpeg_rstate *s = r->state;
    if (setjmp(s->err.jump))
        return pxio_fail(err, errlen, r->path, "JPEG error: %s (row %zu)", s->err.message,
                         (size_t)s->cinfo.output_scanline + 1);
    for (size_t i = 0; i < rows; i++) {
        JSAMPROW row = buf + (ptrdiff_t)i * stride;
        if (jpeg_read_scanlines(&s->cinfo, &row, 1) != 1)
            return pxio_fail(err, errlen, r->path, "JPEG error: no data for row %zu",
                             r->next_row + i + 1);
    }
    if (r->next_row + rows == r->total_rows)
        jpeg_finish_decompress(&s->cinfo);
    return 0;
}

static const pxio_reader_ops jpeg_reader_ops = {jpeg_reader_read, jpeg_reader_close};

int pxio_jpeg_open(pxio_reader *r, char *err, size_t errlen)
{
    jpeg_rstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, r->path, "out of memory");
    s->cinfo.err = jpeg_std_error(&s->err.pub);
    s->err.pub.error_exit = jpeg_error_exit_fn;
    s->err.pub.emit_message = jpeg_emit_fn;
    if (setjmp(s->err.jump)) {
        if (r->state == NULL) {
            jpeg_destroy_decompress(&s->cinfo);
            free(s);
        }
        return pxio_fail(err, errlen, r->path, "JPEG error: %s", s->err.message);
    }
    jpeg_create_decompress(&s->cinfo);
    r->state = s;
    r->ops = &jpeg_reader_ops;
    jpeg_stdio_src(&s->cinfo, r->f);
    jpeg_read_header(&s->cinfo, TRUE);
    J_COLOR_SPACE in = s->cinfo.jpeg_color_space;
    if (in == JCS_CMYK || in == JCS_YCCK)
        return pxio_fail(err, errlen, r->path, "CMYK JPEG files are not supported");
    s->cinfo.out_color_space = in == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&s->cinfo);
    if (pxio_set_shape(r, PIXSUM_U8, s->cinfo.output_width, s->cinfo.output_height, 1,
                       (size_t)s->cinfo.output_components, NULL, err, errlen) != 0)
        return -1;
    snprintf(r->info.format, sizeof r->info.format, "jpeg");
    snprintf(r->info.detail, sizeof r->info.detail, "JPEG %s%s",
             in == JCS_GRAYSCALE ? "grayscale" : "colour",
             s->cinfo.progressive_mode ? ", progressive" : "");
    r->strip_rows = 16;
    return 0;
}

/* ---- writing --------------------------------------------------------- */

typedef struct jpeg_wstate {
    struct jpeg_compress_struct cinfo;
    jpeg_errmgr err;
} jpeg_wstate;

static void jpeg_wdiscard(pxio_writer *w)
{
    jpeg_wstate *s = w->state;
    if (!s)
        return;
    jpeg_destroy_compress(&s->cinfo);
    free(s);
    w->state = NULL;
}

static int jpeg_wwrite(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                       char *err, size_t errlen)
{
    jpeg_wstate *s = w->state;
    if (setjmp(s->err.jump))
        return pxio_fail(err, errlen, w->path, "JPEG write failed: %s", s->err.message);
    for (size_t i = 0; i < rows; i++) {
        JSAMPROW row = (JSAMPROW)(buf + (ptrdiff_t)i * stride);
        jpeg_write_scanlines(&s->cinfo, &row, 1);
    }
    if (ferror(w->f))
        return pxio_fail(err, errlen, w->path, "write failed (disk full?)");
    return 0;
}

static int jpeg_wfinish(pxio_writer *w, char *err, size_t errlen)
{
    jpeg_wstate *s = w->state;
    if (setjmp(s->err.jump))
        return pxio_fail(err, errlen, w->path, "JPEG write failed: %s", s->err.message);
    jpeg_finish_compress(&s->cinfo);
    jpeg_wdiscard(w);
    return pxio_close_stream(w, err, errlen);
}

static const pxio_writer_ops jpeg_writer_ops = {jpeg_wwrite, jpeg_wfinish, jpeg_wdiscard};

int pxio_jpeg_create(pxio_writer *w, char *err, size_t errlen)
{
    if (w->shape.width > JPEG_MAX_DIMENSION || w->shape.height > JPEG_MAX_DIMENSION)
        return pxio_fail(err, errlen, w->path, "too large for JPEG (%ld pixels a side)",
                         (long)JPEG_MAX_DIMENSION);
    jpeg_wstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, w->path, "out of memory");
    s->cinfo.err = jpeg_std_error(&s->err.pub);
    s->err.pub.error_exit = jpeg_error_exit_fn;
    jpeg_create_compress(&s->cinfo);
    w->state = s;
    w->ops = &jpeg_writer_ops;
    if (setjmp(s->err.jump))
        return pxio_fail(err, errlen, w->path, "JPEG write failed: %s", s->err.message);
    jpeg_stdio_dest(&s->cinfo, w->f);
    s->cinfo.image_width = (JDIMENSION)w->shape.width;
    s->cinfo.image_height = (JDIMENSION)w->shape.height;
    s->cinfo.input_components = (int)w->shape.channels;
    s->cinfo.in_color_space = w->shape.channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&s->cinfo);
    jpeg_set_quality(&s->cinfo, 95, TRUE);
    jpeg_start_compress(&s->cinfo, TRUE);
    return 0;
}

#else /* !PIXSUM_HAVE_JPEG */

int pxio_jpeg_open(pxio_reader *r, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, r->path,
                     "a JPEG file, but this pixsum was built without libjpeg");
}

int pxio_jpeg_create(pxio_writer *w, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, w->path, "this pixsum was built without libjpeg");
}

#endif
