/*
 * image_io_pnm.c - Netpbm PGM/PPM (P2 P3 P5 P6) and PFM (PF Pf) without a
 * library.
 *
 * PGM/PPM: a text header "P5 <width> <height> <maxval>" (comments '#' to end of
 * line allowed between fields), one whitespace byte, then rows top-down.
 * maxval <= 255: one byte per sample (u8); up to 65535: two bytes, big-endian
 * (u16). P2/P3 hold the samples as decimal text. Samples are returned as
 * stored, not rescaled to the full type range.
 *
 * PFM: "PF" (RGB) or "Pf" (gray), "<width> <height>", a scale whose sign gives
 * the byte order (negative = little-endian), each on its own line, then f32
 * samples with the BOTTOM row first. We return rows top-down and write
 * little-endian with scale -1.
 */
#include "image_io_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Reads one header token (skipping whitespace and comments) into tok. */
static int header_token(FILE *f, char *tok, size_t n)
{
    int c;
    for (;;) {
        c = fgetc(f);
        if (c == '#') {
            while (c != '\n' && c != '\r' && c != EOF)
                c = fgetc(f);
        }
        if (c == EOF)
            return -1;
        if (!isspace(c))
            break;
    }
    size_t i = 0;
    while (c != EOF && !isspace(c) && c != '#') {
        if (i + 1 < n)
            tok[i++] = (char)c;
        c = fgetc(f);
    }
    tok[i] = '\0';
    if (c == '#')
        ungetc(c, f);
    return 0;
}

static int header_number(pxio_reader *r, const char *what, unsigned long long max,
                         size_t *out, char *err, size_t errlen)
{
    char tok[32];
    if (header_token(r->f, tok, sizeof tok) != 0)
        return pxio_fail(err, errlen, r->path, "truncated header (no %s)", what);
    char *end;
    errno = 0;
    unsigned long long v = strtoull(tok, &end, 10);
    if (*end || end == tok || tok[0] == '-')
        return pxio_fail(err, errlen, r->path, "corrupt header: %s '%s' is not a number",
                         what, tok);
    if (errno || v > max)
        return pxio_fail(err, errlen, r->path, "absurd %s %s", what, tok);
    if (v == 0)
        return pxio_fail(err, errlen, r->path, "%s is 0", what);
    *out = (size_t)v;
    return 0;
}

typedef struct pnm_state {
    int ascii;
    size_t maxval;
    off_t data_off;
    int pfm_swap;       /* PFM byte order differs from the host's */
    size_t pfm_height;
    unsigned char *tmp; /* PFM: rows of one read in file order */
    size_t tmp_rows;
} pnm_state;

static void pnm_close(pxio_reader *r)
{
    pnm_state *s = r->state;
    if (s)
        free(s->tmp);
    free(s);
    r->state = NULL;
}

static int pnm_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                    char *err, size_t errlen)
{
    pnm_state *s = r->state;
    size_t samples = r->info.width * r->info.channels;
    int wide = r->info.type == PIXSUM_U16;
    for (size_t i = 0; i < rows; i++) {
        unsigned char *row = buf + (ptrdiff_t)i * stride;
        if (!s->ascii) {
            if (pxio_read_exact(r, row, r->row_bytes, err, errlen) != 0)
                return -1;
            if (wide && pxio_host_le())
                pxio_swap_bytes(row, samples, 2);
            if (wide) {
                const uint16_t *v = (const uint16_t *)row;
                for (size_t k = 0; k < samples; k++)
                    if (v[k] > s->maxval)
                        return pxio_fail(err, errlen, r->path,
                                         "sample %u in row %zu exceeds maxval %zu", v[k],
                                         r->next_row + i, s->maxval);
            } else if (s->maxval < 255) {
                for (size_t k = 0; k < samples; k++)
                    if (row[k] > s->maxval)
                        return pxio_fail(err, errlen, r->path,
                                         "sample %u in row %zu exceeds maxval %zu", row[k],
                                         r->next_row + i, s->maxval);
            }
            continue;
        }
        for (size_t k = 0; k < samples; k++) {
            char tok[24];
            if (header_token(r->f, tok, sizeof tok) != 0)
                return pxio_fail(err, errlen, r->path,
                                 "truncated file: pixel data ends early (row %zu of %zu)",
                                 r->next_row + i + 1, r->total_rows);
            char *end;
            unsigned long v = strtoul(tok, &end, 10);
            if (*end || tok[0] == '-')
                return pxio_fail(err, errlen, r->path, "corrupt sample '%s' in row %zu", tok,
                                 r->next_row + i);
            if (v > s->maxval)
                return pxio_fail(err, errlen, r->path, "sample %lu in row %zu exceeds maxval %zu",
                                 v, r->next_row + i, s->maxval);
            if (wide)
                ((uint16_t *)row)[k] = (uint16_t)v;
            else
                row[k] = (unsigned char)v;
        }
    }
    return 0;
}

static const pxio_reader_ops pnm_reader_ops = {pnm_read, pnm_close};

int pxio_pnm_open(pxio_reader *r, char *err, size_t errlen)
{
    char magic[4];
    if (header_token(r->f, magic, sizeof magic) != 0 || strlen(magic) != 2)
        return pxio_fail(err, errlen, r->path, "corrupt PNM header");
    char kind = magic[1];
    if (kind == '1' || kind == '4')
        return pxio_fail(err, errlen, r->path,
                         "PBM bitmaps (P%c) are not supported; use PGM (P2/P5)", kind);
    if (kind == '7')
        return pxio_fail(err, errlen, r->path, "PAM (P7) files are not supported");
    size_t w, h, maxval;
    if (header_number(r, "width", (1ull << 40), &w, err, errlen) != 0 ||
        header_number(r, "height", (1ull << 40), &h, err, errlen) != 0 ||
        header_number(r, "maxval", 0xFFFFFFFFull, &maxval, err, errlen) != 0)
        return -1;
    if (maxval > 65535)
        return pxio_fail(err, errlen, r->path,
                         "unsupported bit depth: maxval %zu is above 65535", maxval);
    /* The header ends with exactly one whitespace byte, which header_token has
     * consumed after maxval. */
    size_t channels = (kind == '3' || kind == '6') ? 3 : 1;
    pixsum_type type = maxval <= 255 ? PIXSUM_U8 : PIXSUM_U16;
    size_t bytes;
    if (pxio_set_shape(r, type, w, h, 1, channels, &bytes, err, errlen) != 0)
        return -1;
    pnm_state *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, r->path, "out of memory");
    r->state = s;
    r->ops = &pnm_reader_ops; /* from here on, close() frees the state */
    s->ascii = kind == '2' || kind == '3';
    s->maxval = maxval;
    s->data_off = ftello(r->f);
    if (!s->ascii && (unsigned long long)(r->file_size - s->data_off) < bytes)
        return pxio_fail(err, errlen, r->path,
                         "truncated file: the header promises %zu bytes of pixels, the file "
                         "holds %lld",
                         bytes, (long long)(r->file_size - s->data_off));
    snprintf(r->info.format, sizeof r->info.format, channels == 3 ? "ppm" : "pgm");
    snprintf(r->info.detail, sizeof r->info.detail, "P%c (%s), maxval %zu", kind,
             s->ascii ? "text" : "binary", maxval);
    return 0;
}

/* ---- PFM reading ----------------------------------------------------- */

static int pfm_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                    char *err, size_t errlen)
{
    pnm_state *s = r->state;
    /* Top-down rows y0 .. y0+rows-1 are file rows H-y0-rows .. H-1-y0. */
    size_t y0 = r->next_row;
    size_t first_file_row = s->pfm_height - y0 - rows;
    if (rows > s->tmp_rows) {
        unsigned char *t = realloc(s->tmp, rows * r->row_bytes);
        if (!t)
            return pxio_fail(err, errlen, r->path, "out of memory");
        s->tmp = t;
        s->tmp_rows = rows;
    }
    if (fseeko(r->f, s->data_off + (off_t)(first_file_row * r->row_bytes), SEEK_SET) != 0)
        return pxio_fail(err, errlen, r->path, "seek failed: %s", strerror(errno));
    if (pxio_read_exact(r, s->tmp, rows * r->row_bytes, err, errlen) != 0)
        return -1;
    for (size_t i = 0; i < rows; i++) {
        unsigned char *dst = buf + (ptrdiff_t)i * stride;
        memcpy(dst, s->tmp + (rows - 1 - i) * r->row_bytes, r->row_bytes);
        if (s->pfm_swap)
            pxio_swap_bytes(dst, r->row_bytes / 4, 4);
    }
    return 0;
}

static const pxio_reader_ops pfm_reader_ops = {pfm_read, pnm_close};

int pxio_pfm_open(pxio_reader *r, char *err, size_t errlen)
{
    char magic[4], tok[64];
    if (header_token(r->f, magic, sizeof magic) != 0 || strlen(magic) != 2)
        return pxio_fail(err, errlen, r->path, "corrupt PFM header");
    size_t channels = magic[1] == 'F' ? 3 : 1;
    size_t w, h;
    if (header_number(r, "width", (1ull << 40), &w, err, errlen) != 0 ||
        header_number(r, "height", (1ull << 40), &h, err, errlen) != 0)
        return -1;
    if (header_token(r->f, tok, sizeof tok) != 0)
        return pxio_fail(err, errlen, r->path, "truncated PFM header (no scale)");
    char *end;
    double scale = strtod(tok, &end);
    if (*end || scale == 0.0)
        return pxio_fail(err, errlen, r->path, "corrupt PFM scale '%s'", tok);
    size_t bytes;
    if (pxio_set_shape(r, PIXSUM_F32, w, h, 1, channels, &bytes, err, errlen) != 0)
        return -1;
    pnm_state *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, r->path, "out of memory");
    r->state = s;
    r->ops = &pfm_reader_ops; /* from here on, close() frees the state */
    s->data_off = ftello(r->f);
    s->pfm_height = h;
    s->pfm_swap = (scale < 0) != pxio_host_le();
    if ((unsigned long long)(r->file_size - s->data_off) < bytes)
        return pxio_fail(err, errlen, r->path,
                         "truncated file: the header promises %zu bytes of pixels, the file "
                         "holds %lld",
                         bytes, (long long)(r->file_size - s->data_off));
    snprintf(r->info.format, sizeof r->info.format, "pfm");
    snprintf(r->info.detail, sizeof r->info.detail, "%s, %s-endian, scale %g", magic,
             scale < 0 ? "little" : "big", scale < 0 ? -scale : scale);
    return 0;
}

/* ---- writing --------------------------------------------------------- */

typedef struct pnm_wstate {
    unsigned char *row; /* one row in file byte order */
    off_t data_off;     /* PFM: where the bottom row starts */
} pnm_wstate;

static void pnm_discard(pxio_writer *w)
{
    pnm_wstate *s = w->state;
    if (s)
        free(s->row);
    free(s);
    w->state = NULL;
}

static int pnm_finish(pxio_writer *w, char *err, size_t errlen)
{
    pnm_discard(w);
    return pxio_close_stream(w, err, errlen);
}

static int pnm_write(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                     char *err, size_t errlen)
{
    pnm_wstate *s = w->state;
    int wide = w->shape.type == PIXSUM_U16;
    for (size_t i = 0; i < rows; i++) {
        const unsigned char *row = buf + (ptrdiff_t)i * stride;
        if (wide && pxio_host_le()) {
            memcpy(s->row, row, w->row_bytes);
            pxio_swap_bytes(s->row, w->row_bytes / 2, 2);
            row = s->row;
        }
        if (pxio_write_exact(w, row, w->row_bytes, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static const pxio_writer_ops pnm_writer_ops = {pnm_write, pnm_finish, pnm_discard};

/* Gives the writer its state (a row buffer for byte swapping) and its ops.
 * Returns the state, or NULL after reporting "out of memory". */
static pnm_wstate *writer_state(pxio_writer *w, const pxio_writer_ops *ops, char *err,
                                size_t errlen)
{
    pnm_wstate *s = calloc(1, sizeof *s);
    if (!s || !(s->row = malloc(w->row_bytes))) {
        free(s);
        pxio_fail(err, errlen, w->path, "out of memory");
        return NULL;
    }
    w->state = s;
    w->ops = ops;
    return s;
}

int pxio_pnm_create(pxio_writer *w, char *err, size_t errlen)
{
    if (!writer_state(w, &pnm_writer_ops, err, errlen))
        return -1;
    char hdr[96];
    int n = snprintf(hdr, sizeof hdr, "P%c\n%zu %zu\n%u\n", w->shape.channels == 3 ? '6' : '5',
                     w->shape.width, w->shape.height,
                     w->shape.type == PIXSUM_U16 ? 65535u : 255u);
    return pxio_write_exact(w, hdr, (size_t)n, err, errlen);
}

static int pfm_write(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                     char *err, size_t errlen)
{
    pnm_wstate *s = w->state;
    for (size_t i = 0; i < rows; i++) {
        size_t y = w->next_row + i;
        off_t at = s->data_off + (off_t)((w->shape.height - 1 - y) * w->row_bytes);
        if (fseeko(w->f, at, SEEK_SET) != 0)
            return pxio_fail(err, errlen, w->path, "seek failed: %s", strerror(errno));
        const unsigned char *row = buf + (ptrdiff_t)i * stride;
        if (!pxio_host_le()) {
            memcpy(s->row, row, w->row_bytes);
            pxio_swap_bytes(s->row, w->row_bytes / 4, 4);
            row = s->row;
        }
        if (pxio_write_exact(w, row, w->row_bytes, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static const pxio_writer_ops pfm_writer_ops = {pfm_write, pnm_finish, pnm_discard};

int pxio_pfm_create(pxio_writer *w, char *err, size_t errlen)
{
    pnm_wstate *s = writer_state(w, &pfm_writer_ops, err, errlen);
    if (!s)
        return -1;
    char hdr[96];
    int n = snprintf(hdr, sizeof hdr, "P%c\n%zu %zu\n-1.0\n", w->shape.channels == 3 ? 'F' : 'f',
                     w->shape.width, w->shape.height);
    s->data_off = n;
    return pxio_write_exact(w, hdr, (size_t)n, err, errlen);
}
