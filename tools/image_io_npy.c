/*
 * image_io_npy.c - NumPy .npy files without a library.
 *
 * A .npy file is the magic "\x93NUMPY", a major and minor version byte, the
 * header length (2 bytes little-endian in version 1, 4 bytes in versions 2
 * and 3), then a Python dict literal such as
 *   {'descr': '<u2', 'fortran_order': False, 'shape': (480, 640, 3), }
 * padded with spaces and a newline so the data starts at a multiple of 64,
 * then the array's bytes in C order. We read dtypes u1 u2 i2 i4 u4 u8 i8 f4 f8
 * of either byte order and write little-endian, version 1 unless the header
 * needs more than 65535 bytes.
 *
 * Shapes: (H,W); (H,W,C) with C in 1..4 (unless the reader asks for volumes
 * or batches, which read it as (D,H,W) / (N,H,W));
 * (D,H,W) otherwise; (D,H,W,C) with C in 1..4.
 */
#include "image_io_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct npy_state {
    int swap;       /* file byte order differs from the host's */
    size_t tsize;
} npy_state;

/* Finds the value after 'key': in the header dict; NULL if absent. */
static const char *npy_value(const char *hdr, const char *key)
{
    char quoted[32];
    for (int q = 0; q < 2; q++) {
        snprintf(quoted, sizeof quoted, q ? "\"%s\"" : "'%s'", key);
        const char *p = strstr(hdr, quoted);
        if (!p)
            continue;
        p += strlen(quoted);
        while (isspace((unsigned char)*p))
            p++;
        if (*p != ':')
            return NULL;
        p++;
        while (isspace((unsigned char)*p))
            p++;
        return p;
    }
    return NULL;
}

static pixsum_type npy_dtype(char kind, int bytes)
{
    switch (kind) {
    case 'u':
        return bytes == 1 ? PIXSUM_U8 : bytes == 2 ? PIXSUM_U16 : bytes == 4 ? PIXSUM_U32
               : bytes == 8 ? PIXSUM_U64 : PIXSUM_TYPE_NONE;
    case 'i':
        return bytes == 2 ? PIXSUM_I16 : bytes == 4 ? PIXSUM_I32 : bytes == 8 ? PIXSUM_I64
                                                                 : PIXSUM_TYPE_NONE;
    case 'f':
        return bytes == 4 ? PIXSUM_F32 : bytes == 8 ? PIXSUM_F64 : PIXSUM_TYPE_NONE;
    default:
        return PIXSUM_TYPE_NONE;
    }
}

void pxio_npy_dtype_text(const char *descr, char *buf, size_t size)
{
    /* the dtype string: byte order, kind, item size, e.g. <i8 |O >f2 <M8[ns] */
    char text[24];
    size_t n = 0;
    while (descr[n] && descr[n] != '\'' && descr[n] != '"' && n + 1 < sizeof text) {
        text[n] = descr[n];
        n++;
    }
    text[n] = '\0';
    const char *p = text;
    if (*p == '<' || *p == '>' || *p == '|' || *p == '=')
        p++;
    char kind = *p;
    long bytes = kind ? strtol(p + 1, NULL, 10) : 0;
    /* bits of a sane item size; a damaged header's size (any long) is not
     * multiplied (it could overflow) and the name then goes without it */
    long bits = bytes > 0 && bytes <= 4096 ? bytes * 8 : 0;
    char name[32], bits_text[24] = "";
    if (bits)
        snprintf(bits_text, sizeof bits_text, "%ld", bits);
    switch (kind) {
    case 'b': snprintf(name, sizeof name, "bool"); break;
    case 'i': snprintf(name, sizeof name, "int%s", bits_text); break;
    case 'u': snprintf(name, sizeof name, "uint%s", bits_text); break;
    case 'f': snprintf(name, sizeof name, "float%s", bits_text); break;
    case 'c': snprintf(name, sizeof name, "complex%s", bits_text); break;
    case 'O': snprintf(name, sizeof name, "object"); break;
    case 'S': snprintf(name, sizeof name, "bytes"); break;
    case 'U': snprintf(name, sizeof name, "str"); break;
    case 'V': snprintf(name, sizeof name, "void"); break;
    case 'M': snprintf(name, sizeof name, "datetime64"); break;
    case 'm': snprintf(name, sizeof name, "timedelta64"); break;
    default: snprintf(name, sizeof name, "unknown"); break;
    }
    if ((kind == 'i' || kind == 'u' || kind == 'f' || kind == 'c') && bytes <= 0)
        snprintf(name, sizeof name, "unknown");
    snprintf(buf, size, "%s ('%s')", name, text);
}

static const char *npy_descr(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return "|u1";
    case PIXSUM_U16: return "<u2";
    case PIXSUM_I16: return "<i2";
    case PIXSUM_I32: return "<i4";
    case PIXSUM_U32: return "<u4";
    case PIXSUM_F32: return "<f4";
    case PIXSUM_F64: return "<f8";
    case PIXSUM_U64: return "<u8";
    case PIXSUM_I64: return "<i8";
    default: return NULL;
    }
}

static int npy_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                    char *err, size_t errlen)
{
    npy_state *s = r->state;
    if (stride == (ptrdiff_t)r->row_bytes) {
        if (pxio_read_exact(r, buf, rows * r->row_bytes, err, errlen) != 0)
            return -1;
        if (s->swap)
            pxio_swap_bytes(buf, rows * r->row_bytes / s->tsize, s->tsize);
        return 0;
    }
    for (size_t i = 0; i < rows; i++) {
        unsigned char *row = buf + (ptrdiff_t)i * stride;
        if (pxio_read_exact(r, row, r->row_bytes, err, errlen) != 0)
            return -1;
        if (s->swap)
            pxio_swap_bytes(row, r->row_bytes / s->tsize, s->tsize);
    }
    return 0;
}

static void npy_close(pxio_reader *r)
{
    free(r->state);
    r->state = NULL;
}

static const pxio_reader_ops npy_reader_ops = {npy_read, npy_close};

int pxio_npy_open(pxio_reader *r, const pxio_options *opt, char *err, size_t errlen)
{
    unsigned char pre[12];
    size_t got = fread(pre, 1, 10, r->f);
    if (got < 10)
        return pxio_fail(err, errlen, r->path, "truncated .npy header");
    int major = pre[6], minor = pre[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, r->f) != 2)
            return pxio_fail(err, errlen, r->path, "truncated .npy header");
        hlen = (size_t)pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 |
               (size_t)pre[11] << 24;
        hstart = 12;
    } else {
        return pxio_fail(err, errlen, r->path, "unsupported .npy version %d.%d", major, minor);
    }
    if ((off_t)(hstart + hlen) > r->file_size || hlen > ((size_t)1 << 24))
        return pxio_fail(err, errlen, r->path,
                         "truncated or corrupt .npy header (header length %zu, file %lld "
                         "bytes)",
                         hlen, (long long)r->file_size);
    char *hdr = malloc(hlen + 1);
    if (!hdr)
        return pxio_fail(err, errlen, r->path, "out of memory");
    if (fread(hdr, 1, hlen, r->f) != hlen) {
        free(hdr);
        return pxio_fail(err, errlen, r->path, "truncated .npy header");
    }
    hdr[hlen] = '\0';

    int rc = -1;
    const char *descr = npy_value(hdr, "descr");
    const char *fortran = npy_value(hdr, "fortran_order");
    const char *shape = npy_value(hdr, "shape");
    if (!descr || !fortran || !shape || (*descr != '\'' && *descr != '"') || *shape != '(') {
        pxio_fail(err, errlen, r->path,
                  "corrupt .npy header (needs 'descr', 'fortran_order' and 'shape')");
        goto out;
    }
    /* dtype: byte order, kind, size, e.g. <u2 (a header cut short after the
     * opening quote must not be read past its end) */
    if (descr[1] == '\0' || descr[2] == '\0') {
        pxio_fail(err, errlen, r->path, "corrupt .npy header (the dtype is cut short)");
        goto out;
    }
    char order = descr[1], kind = descr[2];
    char *end;
    long bytes = strtol(descr + 3, &end, 10);
    char dtype[64];
    pxio_npy_dtype_text(descr + 1, dtype, sizeof dtype);
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        pxio_fail(err, errlen, r->path, "unsupported .npy dtype %s (structured or unknown)",
                  dtype);
        goto out;
    }
    pixsum_type type = *end == '\'' || *end == '"' ? npy_dtype(kind, (int)bytes)
                                                   : PIXSUM_TYPE_NONE;
    if (type == PIXSUM_TYPE_NONE) {
        pxio_fail(err, errlen, r->path,
                  "unsupported .npy dtype %s (pixsum reads u1 u2 u4 u8 i2 i4 i8 f4 f8)",
                  dtype);
        goto out;
    }
    if (strncmp(fortran, "False", 5) != 0) {
        pxio_fail(err, errlen, r->path,
                  "Fortran-order .npy arrays are not supported (save with "
                  "np.ascontiguousarray)");
        goto out;
    }
    /* shape tuple */
    size_t dims[8];
    int nd = 0;
    const char *p = shape + 1;
    for (;;) {
        while (isspace((unsigned char)*p) || *p == ',')
            p++;
        if (*p == ')')
            break;
        if (!isdigit((unsigned char)*p) || nd == 8) {
            pxio_fail(err, errlen, r->path, "corrupt .npy shape");
            goto out;
        }
        errno = 0;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno || v > SIZE_MAX || end == p) {
            pxio_fail(err, errlen, r->path, "absurd .npy dimension (%.20s...)", p);
            goto out;
        }
        dims[nd++] = (size_t)v;
        p = end;
    }
    size_t W, H, D = 1, C = 1;
    if (nd == 2) {
        H = dims[0], W = dims[1];
    } else if (nd == 3 && dims[2] >= 1 && dims[2] <= 4 && !opt->volume && !opt->batch) {
        H = dims[0], W = dims[1], C = dims[2];
    } else if (nd == 3) {
        D = dims[0], H = dims[1], W = dims[2];
    } else if (nd == 4) {
        D = dims[0], H = dims[1], W = dims[2], C = dims[3];
        if (C < 1 || C > 4) {
            pxio_fail(err, errlen, r->path,
                      ".npy shape (D,H,W,C) needs 1..4 channels, not %zu", C);
            goto out;
        }
    } else {
        pxio_fail(err, errlen, r->path,
                  "unsupported .npy rank %d (pixsum reads (H,W), (H,W,C), (D,H,W), (D,H,W,C))",
                  nd);
        goto out;
    }
    if (W == 0 || H == 0 || D == 0) {
        pxio_fail(err, errlen, r->path, "empty .npy array (a dimension is 0)");
        goto out;
    }
    size_t total;
    if (pxio_set_shape(r, type, W, H, D, C, &total, err, errlen) != 0)
        goto out;
    off_t data_off = (off_t)(hstart + hlen);
    if ((unsigned long long)(r->file_size - data_off) < (unsigned long long)total) {
        pxio_fail(err, errlen, r->path,
                  "truncated .npy file: the header promises %zu bytes of data, the file "
                  "holds %lld",
                  total, (long long)(r->file_size - data_off));
        goto out;
    }
    npy_state *s = calloc(1, sizeof *s);
    if (!s) {
        pxio_fail(err, errlen, r->path, "out of memory");
        goto out;
    }
    s->tsize = pixsum_type_size(type);
    s->swap = s->tsize > 1 && ((order == '>') == pxio_host_le()) && order != '|' &&
              order != '=';
    r->state = s;
    r->ops = &npy_reader_ops;
    snprintf(r->info.format, sizeof r->info.format, "npy");
    snprintf(r->info.detail, sizeof r->info.detail, "NumPy v%d.%d, dtype %s, %d-D", major, minor,
             dtype, nd);
    snprintf(r->info.sample, sizeof r->info.sample, ".npy dtype %s", dtype);
    if (fseeko(r->f, data_off, SEEK_SET) != 0) {
        pxio_fail(err, errlen, r->path, "seek failed: %s", strerror(errno));
        goto out;
    }
    rc = 0;
out:
    free(hdr);
    return rc;
}

/* ---- writing --------------------------------------------------------- */

typedef struct npy_wstate {
    size_t tsize;
    int swap;
    unsigned char *scratch; /* one row, for byte swapping on big-endian hosts */
} npy_wstate;

static int npy_write(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                     char *err, size_t errlen)
{
    npy_wstate *s = w->state;
    if (!s->swap && stride == (ptrdiff_t)w->row_bytes)
        return pxio_write_exact(w, buf, rows * w->row_bytes, err, errlen);
    for (size_t i = 0; i < rows; i++) {
        const unsigned char *row = buf + (ptrdiff_t)i * stride;
        if (s->swap) {
            memcpy(s->scratch, row, w->row_bytes);
            pxio_swap_bytes(s->scratch, w->row_bytes / s->tsize, s->tsize);
            row = s->scratch;
        }
        if (pxio_write_exact(w, row, w->row_bytes, err, errlen) != 0)
            return -1;
    }
    return 0;
}

static int npy_finish(pxio_writer *w, char *err, size_t errlen)
{
    npy_wstate *s = w->state;
    free(s->scratch);
    free(s);
    w->state = NULL;
    return pxio_close_stream(w, err, errlen);
}

static void npy_discard(pxio_writer *w)
{
    npy_wstate *s = w->state;
    if (s)
        free(s->scratch);
    free(s);
    w->state = NULL;
}

static const pxio_writer_ops npy_writer_ops = {npy_write, npy_finish, npy_discard};

int pxio_npy_create(pxio_writer *w, char *err, size_t errlen)
{
    const pxio_info *sh = &w->shape;
    char dict[256];
    char shape[128];
    if (sh->depth > 1)
        snprintf(shape, sizeof shape, sh->channels > 1 ? "(%zu, %zu, %zu, %zu)" : "(%zu, %zu, %zu)",
                 sh->depth, sh->height, sh->width, sh->channels);
    else if (sh->channels > 1)
        snprintf(shape, sizeof shape, "(%zu, %zu, %zu)", sh->height, sh->width, sh->channels);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu)", sh->height, sh->width);
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     npy_descr(sh->type), shape);
    /* magic(6) + version(2) + length(2) + dict + padding + '\n' = multiple of 64 */
    size_t total = 10 + (size_t)n + 1;
    size_t padded = (total + 63) / 64 * 64;
    unsigned char hdr[320];
    size_t hlen = padded - 10;
    memcpy(hdr, "\x93NUMPY\x01\x00", 8);
    hdr[8] = (unsigned char)(hlen & 0xff);
    hdr[9] = (unsigned char)(hlen >> 8);
    memcpy(hdr + 10, dict, (size_t)n);
    memset(hdr + 10 + n, ' ', padded - 10 - (size_t)n - 1);
    hdr[padded - 1] = '\n';
    npy_wstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, w->path, "out of memory");
    s->tsize = pixsum_type_size(sh->type);
    s->swap = !pxio_host_le() && s->tsize > 1;
    if (s->swap && !(s->scratch = malloc(w->row_bytes))) {
        free(s);
        return pxio_fail(err, errlen, w->path, "out of memory");
    }
    w->state = s;
    w->ops = &npy_writer_ops;
    return pxio_write_exact(w, hdr, padded, err, errlen);
}
