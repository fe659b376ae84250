/*
 * mpi_npy.c - the .npy header reader and writer of the MPI-IO paths
 * (mpi_cli.h): they need the exact byte offset of the data, and the writer's
 * header length must be known to every rank without communication (it
 * depends only on the type and shape).
 */
#include "image_io.h"
#include "mpi_cli.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    pixsum_type type;
    const char *descr; /* without the byte-order character */
} dtypes[] = {
    {PIXSUM_U8, "u1"},  {PIXSUM_U16, "u2"}, {PIXSUM_I16, "i2"}, {PIXSUM_I32, "i4"},
    {PIXSUM_U32, "u4"}, {PIXSUM_F32, "f4"}, {PIXSUM_F64, "f8"}, {PIXSUM_U64, "u8"},
    {PIXSUM_I64, "i8"},
};

static int fail(char *err, size_t errlen, const char *path, const char *what)
{
    if (err && errlen)
        snprintf(err, errlen, "%s: %s", path, what);
    return -1;
}

/* Pointer just after `key` ('descr' etc., with its quotes and colon) in the
 * header dictionary, spaces skipped; NULL if absent. */
static const char *dict_value(const char *dict, const char *key)
{
    char pattern[32];
    snprintf(pattern, sizeof pattern, "'%s'", key);
    const char *p = strstr(dict, pattern);
    if (!p)
        return NULL;
    p += strlen(pattern);
    while (*p == ' ')
        p++;
    if (*p != ':')
        return NULL;
    p++;
    while (*p == ' ')
        p++;
    return p;
}

int mpi_npy_read_header(const char *path, mpi_npy_header *h, char *err, size_t errlen)
{
    const uint16_t probe = 1;
    if (*(const uint8_t *)&probe != 1)
        return fail(err, errlen, path, "the MPI .npy reader needs a little-endian machine");
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, errlen, path, "cannot open");
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, f);
    if (got < 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        fclose(f);
        return fail(err, errlen, path, "not a .npy file");
    }
    int major = pre[6];
    uint64_t hlen, start;
    if (major == 1) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8;
        start = 10;
    } else if ((major == 2 || major == 3) && got == 12) {
        hlen = (uint64_t)pre[8] | (uint64_t)pre[9] << 8 | (uint64_t)pre[10] << 16 |
               (uint64_t)pre[11] << 24;
        start = 12;
    } else {
        fclose(f);
        return fail(err, errlen, path, "unknown .npy format version");
    }
    if (hlen > (1u << 20)) {
        fclose(f);
        return fail(err, errlen, path, ".npy header longer than 1 MiB");
    }
    char *dict = malloc(hlen + 1);
    if (!dict || fseek(f, (long)start, SEEK_SET) != 0 || fread(dict, 1, hlen, f) != hlen) {
        free(dict);
        fclose(f);
        return fail(err, errlen, path, "truncated .npy header");
    }
    fclose(f);
    dict[hlen] = '\0';
    memset(h, 0, sizeof *h);
    h->data_offset = start + hlen;

    const char *d = dict_value(dict, "descr"), *fo = dict_value(dict, "fortran_order"),
               *sh = dict_value(dict, "shape");
    int rc = -1;
    if (!d || !fo || !sh || (*d != '\'' && *d != '"')) {
        fail(err, errlen, path, "malformed .npy header");
        goto done;
    }
    if (strncmp(fo, "False", 5) != 0) {
        fail(err, errlen, path, "Fortran-order .npy arrays are not supported");
        goto done;
    }
    char order = d[1], dtype[64], why[160];
    const char *code = d + 2;
    pxio_npy_dtype_text(d + 1, dtype, sizeof dtype);
    if (order != '<' && order != '|' && order != '=') {
        snprintf(why, sizeof why, "big-endian .npy data (dtype %s) is not supported", dtype);
        fail(err, errlen, path, why);
        goto done;
    }
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (strncmp(code, dtypes[i].descr, 2) == 0 && (code[2] == '\'' || code[2] == '"'))
            h->type = dtypes[i].type;
    if (h->type == PIXSUM_TYPE_NONE) {
        snprintf(why, sizeof why, "unsupported .npy dtype %s (u1 u2 i2 i4 u4 f4 f8 u8 i8)",
                 dtype);
        fail(err, errlen, path, why);
        goto done;
    }
    if (*sh != '(') {
        fail(err, errlen, path, "malformed .npy shape");
        goto done;
    }
    uint64_t dims[4];
    int nd = 0;
    const char *p = sh + 1;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ')')
            break;
        char *end;
        unsigned long long v = strtoull(p, &end, 10);
        if (end == p || nd == 4) {
            fail(err, errlen, path, "malformed or unsupported .npy shape");
            goto done;
        }
        dims[nd++] = v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
    }
    if (nd == 2 || (nd == 3 && dims[2] >= 1 && dims[2] <= 4)) {
        h->height = (size_t)dims[0];
        h->width = (size_t)dims[1];
        h->channels = nd == 3 ? (size_t)dims[2] : 1;
    } else {
        fail(err, errlen, path,
             "the MPI path reads 2-D images: shape (H, W) or (H, W, C) with C <= 4");
        goto done;
    }
    if (h->width == 0 || h->height == 0) {
        fail(err, errlen, path, "empty image");
        goto done;
    }
    if ((uint64_t)h->width != dims[1] || (uint64_t)h->height != dims[0]) {
        fail(err, errlen, path, "image dimensions overflow");
        goto done;
    }
    if (pxio_check_size(path, h->type, h->width, h->height, 1, h->channels, NULL, err,
                        errlen) != 0)
        goto done;
    rc = 0;
done:
    free(dict);
    return rc;
}

size_t mpi_npy_make_header(pixsum_type type, size_t width, size_t height, size_t channels,
                           char *buf, size_t cap)
{
    const char *descr = NULL;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
        if (dtypes[i].type == type)
            descr = dtypes[i].descr;
    if (!descr)
        return 0;
    char dict[256], shape[96];
    if (channels > 1)
        snprintf(shape, sizeof shape, "(%zu, %zu, %zu)", height, width, channels);
    else
        snprintf(shape, sizeof shape, "(%zu, %zu)", height, width);
    int n = snprintf(dict, sizeof dict, "{'descr': '%c%s', 'fortran_order': False, 'shape': %s, }",
                     type == PIXSUM_U8 ? '|' : '<', descr, shape);
    if (n < 0 || (size_t)n >= sizeof dict)
        return 0;
    /* magic (6) + version (2) + length (2) + dict + spaces + '\n', to 64 bytes */
    size_t total = 10 + (size_t)n + 1;
    total = (total + 63) / 64 * 64;
    if (total > cap || total - 10 > 65535)
        return 0;
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    size_t hlen = total - 10;
    buf[8] = (char)(hlen & 0xff);
    buf[9] = (char)(hlen >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}
