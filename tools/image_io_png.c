/*
 * image_io_png.c - PNG through Debian's libpng (when PIXSUM_HAVE_PNG).
 *
 * Reading: 1..16-bit gray, gray+alpha, RGB, RGBA and palette images; palette
 * and 1/2/4-bit images expand to u8, a tRNS chunk to an alpha channel; 16-bit
 * samples come back in host order as u16. Non-interlaced images are streamed
 * row by row; interlaced ones are decoded whole at open (Adam7 needs all rows).
 * Writing: u8/u16, 1..4 channels (gray, gray+alpha, RGB, RGBA), row by row.
 * libpng reports errors by longjmp; every function touching it sets a jump
 * point and turns the message into "PATH: PNG error: ...".
 */
#include "image_io_impl.h"

#ifdef PIXSUM_HAVE_PNG

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct png_state {
    png_structp png;
    png_infop info;
    char message[200];
    unsigned char *whole; /* interlaced images: every row, decoded at open */
    png_bytep *rows;      /* row pointers into `whole` (freed at close) */
} png_state;

static void png_error_fn(png_structp png, png_const_charp msg)
{
    png_state *s = png_get_error_ptr(png);
    snprintf(s->message, sizeof s->message, "%s", msg);
    png_longjmp(png, 1);
}

static void png_warning_fn(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg; /* warnings (e.g. an unknown chunk) do not stop us */
}

static void png_reader_close(pxio_reader *r)
{
    png_state *s = r->state;
    if (!s)
        return;
    if (s->png)
        png_destroy_read_struct(&s->png, &s->info, NULL);
    free(s->whole);
    free(s->rows);
    free(s);
    r->state = NULL;
}

static int png_reader_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                           char *err, size_t errlen)
{
    png_state *s = r->state;
    if (s->whole) {
        for (size_t i = 0; i < rows; i++)
            memcpy(buf + (ptrdiff_t)i * stride, s->whole + (r->next_row + i) * r->row_bytes,
                   r->row_bytes);
        return 0;
    }
    if (setjmp(png_jmpbuf(s->png)))
        return pxio_fail(err, errlen, r->path, "PNG error: %s (row %zu)", s->message,
                         r->next_row + 1);
    for (size_t i = 0; i < rows; i++)
        png_read_row(s->png, buf + (ptrdiff_t)i * stride, NULL);
    return 0;
}

static const pxio_reader_ops png_reader_ops = {png_reader_read, png_reader_close};

int pxio_png_open(pxio_reader *r, char *err, size_t errlen)
{
    png_state *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, r->path, "out of memory");
    r->state = s;
    r->ops = &png_reader_ops;
    s->png = png_create_read_struct(PNG_LIBPNG_VER_STRING, s, png_error_fn, png_warning_fn);
    if (!s->png || !(s->info = png_create_info_struct(s->png)))
        return pxio_fail(err, errlen, r->path, "out of memory");
    if (setjmp(png_jmpbuf(s->png)))
        return pxio_fail(err, errlen, r->path, "PNG error: %s", s->message);
    /* Dimensions up to 2^31-1 (the format's own limit). */
    png_set_user_limits(s->png, 0x7fffffff, 0x7fffffff);
    png_init_io(s->png, r->f);
    png_read_info(s->png, s->info);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(s->png, s->info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if (color == PNG_COLOR_TYPE_PALETTE)
        png_set_palette_to_rgb(s->png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8)
        png_set_expand_gray_1_2_4_to_8(s->png);
    if (png_get_valid(s->png, s->info, PNG_INFO_tRNS))
        png_set_tRNS_to_alpha(s->png);
    if (depth == 16 && pxio_host_le())
        png_set_swap(s->png);
    int passes = interlace != PNG_INTERLACE_NONE ? png_set_interlace_handling(s->png) : 1;
    png_read_update_info(s->png, s->info);
    size_t channels = png_get_channels(s->png, s->info);
    int out_depth = png_get_bit_depth(s->png, s->info);
    if (channels < 1 || channels > 4 || (out_depth != 8 && out_depth != 16))
        return pxio_fail(err, errlen, r->path, "unsupported PNG layout (%zu channels, %d bit)",
                         channels, out_depth);
    if (pxio_set_shape(r, out_depth == 16 ? PIXSUM_U16 : PIXSUM_U8, w, h, 1, channels, NULL,
                       err, errlen) != 0)
        return -1;
    snprintf(r->info.format, sizeof r->info.format, "png");
    static const char *const color_names[] = {"gray", "?", "RGB", "palette", "gray+alpha",
                                              "?", "RGBA"};
    snprintf(r->info.detail, sizeof r->info.detail, "PNG %s, %d bit%s",
             color >= 0 && color <= 6 ? color_names[color] : "?", depth,
             interlace != PNG_INTERLACE_NONE ? ", interlaced" : "");
    r->strip_rows = 64;
    if (png_get_rowbytes(s->png, s->info) != r->row_bytes)
        return pxio_fail(err, errlen, r->path, "internal error: PNG row size");
    if (passes > 1) {
        size_t bytes = r->row_bytes * h; /* checked by pxio_set_shape() */
        if (!(s->whole = malloc(bytes)))
            return pxio_fail(err, errlen, r->path, "out of memory for an interlaced PNG");
        if (!(s->rows = malloc(h * sizeof *s->rows)))
            return pxio_fail(err, errlen, r->path, "out of memory");
        for (size_t y = 0; y < h; y++)
            s->rows[y] = s->whole + y * r->row_bytes;
        png_read_image(s->png, s->rows);
    }
    return 0;
}

/* ---- writing --------------------------------------------------------- */

typedef struct png_wstate {
    png_structp png;
    png_infop info;
    char message[200];
} png_wstate;

static void png_wdiscard(pxio_writer *w)
{
    png_wstate *s = w->state;
    if (!s)
        return;
    if (s->png)
        png_destroy_write_struct(&s->png, &s->info);
    free(s);
    w->state = NULL;
}

static void png_werror_fn(png_structp png, png_const_charp msg)
{
    png_wstate *s = png_get_error_ptr(png);
    snprintf(s->message, sizeof s->message, "%s", msg);
    png_longjmp(png, 1);
}

static int png_wwrite(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                      char *err, size_t errlen)
{
    png_wstate *s = w->state;
    if (setjmp(png_jmpbuf(s->png)))
        return pxio_fail(err, errlen, w->path, "PNG write failed: %s", s->message);
    for (size_t i = 0; i < rows; i++)
        png_write_row(s->png, buf + (ptrdiff_t)i * stride);
    if (ferror(w->f))
        return pxio_fail(err, errlen, w->path, "write failed (disk full?)");
    return 0;
}

static int png_wfinish(pxio_writer *w, char *err, size_t errlen)
{
    png_wstate *s = w->state;
    if (setjmp(png_jmpbuf(s->png)))
        return pxio_fail(err, errlen, w->path, "PNG write failed: %s", s->message);
    png_write_end(s->png, NULL);
    png_wdiscard(w);
    return pxio_close_stream(w, err, errlen);
}

static const pxio_writer_ops png_writer_ops = {png_wwrite, png_wfinish, png_wdiscard};

int pxio_png_create(pxio_writer *w, char *err, size_t errlen)
{
    if (w->shape.width > 0x7fffffff || w->shape.height > 0x7fffffff)
        return pxio_fail(err, errlen, w->path, "too large for PNG (2^31-1 pixels a side)");
    png_wstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, w->path, "out of memory");
    w->state = s;
    w->ops = &png_writer_ops;
    s->png = png_create_write_struct(PNG_LIBPNG_VER_STRING, s, png_werror_fn, png_warning_fn);
    if (!s->png || !(s->info = png_create_info_struct(s->png)))
        return pxio_fail(err, errlen, w->path, "out of memory");
    if (setjmp(png_jmpbuf(s->png)))
        return pxio_fail(err, errlen, w->path, "PNG write failed: %s", s->message);
    static const int color[5] = {0, PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                 PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    int depth = w->shape.type == PIXSUM_U16 ? 16 : 8;
    png_init_io(s->png, w->f);
    png_set_IHDR(s->png, s->info, (png_uint_32)w->shape.width, (png_uint_32)w->shape.height,
                 depth, color[w->shape.channels], PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(s->png, s->info);
    if (depth == 16 && pxio_host_le())
        png_set_swap(s->png);
    return 0;
}

#else /* !PIXSUM_HAVE_PNG */

int pxio_png_open(pxio_reader *r, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, r->path, "a PNG file, but this pixsum was built without libpng");
}

int pxio_png_create(pxio_writer *w, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, w->path, "this pixsum was built without libpng");
}

#endif
