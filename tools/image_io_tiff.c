/*
 * image_io_tiff.c - TIFF and BigTIFF through Debian's libtiff (when
 * PIXSUM_HAVE_TIFF).
 *
 * Reading: striped or tiled, PlanarConfiguration contiguous, 1..4 samples per
 * pixel, unsigned 8/16/32/64-bit, signed 16/32/64-bit and IEEE float 32/64-bit
 * samples, any compression libtiff decodes. Rows are handed out from a band
 * buffer holding one strip (or one row of tiles), so memory stays bounded by
 * a strip whatever the image size. Any row can be read first (the reader is
 * random access: pxio_reader_seek jumps to its band). The first page of a
 * multi-page file is read.
 * Writing: striped, uncompressed, about 1 MiB per strip, row by row through
 * TIFFWriteScanline; BigTIFF when asked or when the file could pass 4 GiB.
 * libtiff reports errors through a global handler; we keep the last message
 * (per thread) and put it in our error text.
 */
#include "image_io_impl.h"

#ifdef PIXSUM_HAVE_TIFF

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <tiffio.h>
#include <unistd.h>

static _Thread_local char tiff_message[256];

static void tiff_error_handler(const char *module, const char *fmt, va_list ap)
{
    char text[200];
    vsnprintf(text, sizeof text, fmt, ap);
    snprintf(tiff_message, sizeof tiff_message, "%s%s%s", module ? module : "",
             module ? ": " : "", text);
}

static void tiff_warning_handler(const char *module, const char *fmt, va_list ap)
{
    (void)module, (void)fmt, (void)ap; /* unknown tags and the like */
}

static void tiff_handlers(void)
{
    TIFFSetErrorHandler(tiff_error_handler);
    TIFFSetWarningHandler(tiff_warning_handler);
    tiff_message[0] = '\0';
}

static const char *tiff_last(void)
{
    return tiff_message[0] ? tiff_message : "libtiff gave no reason";
}

typedef struct tiff_rstate {
    TIFF *tif;
    int tiled;
    uint32_t band_h;        /* rows per strip or tile height */
    uint32_t tile_w;
    size_t tsize;
    unsigned char *band;    /* one band: band_h rows of the full width */
    unsigned char *tile;    /* one tile (tiled files) */
    size_t band_first;      /* first image row in `band`; SIZE_MAX = none */
    size_t band_rows;       /* valid rows in `band` */
} tiff_rstate;

static void tiff_reader_close(pxio_reader *r)
{
    tiff_rstate *s = r->state;
    if (!s)
        return;
    if (s->tif)
        TIFFClose(s->tif);
    free(s->band);
    free(s->tile);
    free(s);
    r->state = NULL;
}

/* Loads the band holding image row y. */
static int tiff_load_band(pxio_reader *r, size_t y, char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    if (!s->band && !(s->band = malloc((size_t)s->band_h * r->row_bytes)))
        return pxio_fail(err, errlen, r->path, "out of memory for a band of %zu rows",
                         (size_t)s->band_h);
    size_t first = y / s->band_h * s->band_h;
    size_t rows = r->total_rows - first < s->band_h ? r->total_rows - first : s->band_h;
    tiff_message[0] = '\0';
    if (!s->tiled) {
        tstrip_t strip = TIFFComputeStrip(s->tif, (uint32_t)first, 0);
        tmsize_t want = (tmsize_t)(rows * r->row_bytes);
        tmsize_t got = TIFFReadEncodedStrip(s->tif, strip, s->band, want);
        if (got < want)
            return pxio_fail(err, errlen, r->path, "TIFF read failed at row %zu: %s",
                             first + 1, got < 0 ? tiff_last() : "strip too short (truncated?)");
    } else {
        tmsize_t ts = TIFFTileSize(s->tif);
        if (!s->tile && !(s->tile = malloc((size_t)ts)))
            return pxio_fail(err, errlen, r->path, "out of memory for a %u x %u tile",
                             s->tile_w, s->band_h);
        size_t tile_row_bytes = (size_t)s->tile_w * r->info.channels * s->tsize;
        for (size_t x = 0; x < r->info.width; x += s->tile_w) {
            ttile_t t = TIFFComputeTile(s->tif, (uint32_t)x, (uint32_t)first, 0, 0);
            if (TIFFReadEncodedTile(s->tif, t, s->tile, ts) < 0)
                return pxio_fail(err, errlen, r->path,
                                 "TIFF read failed at tile (%zu, %zu): %s", x, first,
                                 tiff_last());
            size_t cols = r->info.width - x < s->tile_w ? r->info.width - x : s->tile_w;
            size_t bytes = cols * r->info.channels * s->tsize;
            for (size_t i = 0; i < rows; i++)
                memcpy(s->band + i * r->row_bytes + x * r->info.channels * s->tsize,
                       s->tile + i * tile_row_bytes, bytes);
        }
    }
    s->band_first = first;
    s->band_rows = rows;
    return 0;
}

static int tiff_reader_read(pxio_reader *r, size_t rows, unsigned char *buf, ptrdiff_t stride,
                            char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    for (size_t i = 0; i < rows; i++) {
        size_t y = r->next_row + i;
        if (s->band_first == SIZE_MAX || y < s->band_first || y >= s->band_first + s->band_rows)
            if (tiff_load_band(r, y, err, errlen) != 0)
                return -1;
        memcpy(buf + (ptrdiff_t)i * stride, s->band + (y - s->band_first) * r->row_bytes,
               r->row_bytes);
    }
    return 0;
}

static const pxio_reader_ops tiff_reader_ops = {tiff_reader_read, tiff_reader_close};

static pixsum_type tiff_type(uint16_t format, uint16_t bits)
{
    switch (format) {
    case SAMPLEFORMAT_UINT:
        return bits == 8 ? PIXSUM_U8 : bits == 16 ? PIXSUM_U16 : bits == 32 ? PIXSUM_U32
               : bits == 64 ? PIXSUM_U64 : PIXSUM_TYPE_NONE;
    case SAMPLEFORMAT_INT:
        return bits == 16 ? PIXSUM_I16 : bits == 32 ? PIXSUM_I32 : bits == 64 ? PIXSUM_I64
                                                                  : PIXSUM_TYPE_NONE;
    case SAMPLEFORMAT_IEEEFP:
        return bits == 32 ? PIXSUM_F32 : bits == 64 ? PIXSUM_F64 : PIXSUM_TYPE_NONE;
    default:
        return PIXSUM_TYPE_NONE;
    }
}

int pxio_tiff_open(pxio_reader *r, char *err, size_t errlen)
{
    tiff_handlers();
    tiff_rstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, r->path, "out of memory");
    r->state = s;
    r->ops = &tiff_reader_ops;
    s->band_first = SIZE_MAX;
    r->random_access = 1; /* tiff_reader_read() loads the band of any row */
    s->tif = TIFFOpen(r->path, "rm");
    if (!s->tif)
        return pxio_fail(err, errlen, r->path, "not a readable TIFF: %s", tiff_last());
    uint32_t w = 0, h = 0;
    uint16_t spp = 1, bits = 1, format = SAMPLEFORMAT_UINT, planar = PLANARCONFIG_CONTIG;
    uint16_t photometric = 0, compression = COMPRESSION_NONE;
    if (!TIFFGetField(s->tif, TIFFTAG_IMAGEWIDTH, &w) ||
        !TIFFGetField(s->tif, TIFFTAG_IMAGELENGTH, &h))
        return pxio_fail(err, errlen, r->path, "corrupt TIFF: no image size");
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_BITSPERSAMPLE, &bits);
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_SAMPLEFORMAT, &format);
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(s->tif, TIFFTAG_PHOTOMETRIC, &photometric);
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_COMPRESSION, &compression);
    if (w == 0 || h == 0)
        return pxio_fail(err, errlen, r->path, "empty TIFF (%u x %u)", w, h);
    if (spp < 1 || spp > 4)
        return pxio_fail(err, errlen, r->path,
                         "unsupported TIFF: %u samples per pixel (pixsum takes 1..4)", spp);
    pixsum_type type = tiff_type(format, bits);
    if (type == PIXSUM_TYPE_NONE)
        return pxio_fail(err, errlen, r->path,
                         "unsupported TIFF bit depth: %u-bit %s samples (pixsum reads unsigned "
                         "8/16/32/64, signed 16/32/64, float 32/64)",
                         bits,
                         format == SAMPLEFORMAT_INT      ? "signed"
                         : format == SAMPLEFORMAT_IEEEFP ? "float"
                                                         : "unsigned");
    if (photometric == PHOTOMETRIC_PALETTE)
        return pxio_fail(err, errlen, r->path, "palette TIFF files are not supported");
    if (planar != PLANARCONFIG_CONTIG && spp > 1)
        return pxio_fail(err, errlen, r->path,
                         "planar-separate TIFF (PlanarConfiguration 2) is not supported");
    if (compression == COMPRESSION_JPEG && photometric == PHOTOMETRIC_YCBCR)
        TIFFSetField(s->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    s->tsize = pixsum_type_size(type);
    s->tiled = TIFFIsTiled(s->tif);
    if (pxio_set_shape(r, type, w, h, 1, spp, NULL, err, errlen) != 0)
        return -1;
    snprintf(r->info.sample, sizeof r->info.sample, "TIFF %u-bit %s samples", bits,
             format == SAMPLEFORMAT_INT      ? "signed integer"
             : format == SAMPLEFORMAT_IEEEFP ? "float"
                                             : "unsigned integer");
    if (s->tiled) {
        uint32_t tw = 0, th = 0;
        TIFFGetField(s->tif, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(s->tif, TIFFTAG_TILELENGTH, &th);
        /* tiles may overhang the image (a 100 x 100 image in 256 x 256 tiles), but
         * not by more than a 4096-pixel tile: a 2 KB fuzz input claimed a
         * 16 GiB tile for a tiny image */
        uint32_t most_w = (w > 4096 ? w : 4096) + 16, most_h = (h > 4096 ? h : 4096) + 16;
        if (tw == 0 || th == 0 || tw > most_w || th > most_h)
            return pxio_fail(err, errlen, r->path, "corrupt TIFF tile size %u x %u for a "
                             "%u x %u image", tw, th, w, h);
        s->tile_w = tw;
        s->band_h = th;
        if (TIFFTileSize(s->tif) <= 0) /* the tile buffer waits for the first read */
            return pxio_fail(err, errlen, r->path, "corrupt TIFF tile size %u x %u", tw, th);
    } else {
        uint32_t rps = h;
        TIFFGetFieldDefaulted(s->tif, TIFFTAG_ROWSPERSTRIP, &rps);
        s->band_h = rps == 0 || rps > h ? h : rps;
    }
    size_t band_bytes = (size_t)s->band_h * r->row_bytes;
    /* the band and the tile are allocated by the first read (tiff_load_band):
     * probing a tiny file whose header claims a huge image must not allocate
     * that size */
    if (band_bytes / s->band_h != r->row_bytes)
        return pxio_fail(err, errlen, r->path, "corrupt TIFF: a band of %u rows of %u "
                         "pixels overflows", s->band_h, w);
    r->strip_rows = s->band_h;
    snprintf(r->info.format, sizeof r->info.format, "tiff");
    char comp[32];
    const TIFFCodec *codec = TIFFFindCODEC(compression);
    snprintf(comp, sizeof comp, "%s", codec ? codec->name : "unknown compression");
    if (s->tiled)
        snprintf(r->info.detail, sizeof r->info.detail, "%s, tiled %u x %u, %s",
                 TIFFIsBigTIFF(s->tif) ? "BigTIFF" : "TIFF", s->tile_w, s->band_h, comp);
    else
        snprintf(r->info.detail, sizeof r->info.detail, "%s, striped %u rows/strip, %s",
                 TIFFIsBigTIFF(s->tif) ? "BigTIFF" : "TIFF", s->band_h, comp);
    return 0;
}

/* ---- writing --------------------------------------------------------- */

typedef struct tiff_wstate {
    TIFF *tif;
    uint32_t tile;         /* 0: striped */
    unsigned char *band;   /* tiled: `tile` rows of the full width */
    unsigned char *tilebuf;
    size_t band_rows;      /* rows collected in `band` */
} tiff_wstate;

/* Tiled writing: cuts the collected band into tiles (zero-padded at the right
 * and bottom edges) and writes them. */
static int tiff_flush_band(pxio_writer *w, char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    size_t px = w->shape.channels * pixsum_type_size(w->shape.type);
    size_t y0 = (w->next_row - 1) / s->tile * s->tile; /* band's first image row */
    for (size_t x = 0; x < w->shape.width; x += s->tile) {
        size_t cols = w->shape.width - x < s->tile ? w->shape.width - x : s->tile;
        memset(s->tilebuf, 0, (size_t)s->tile * s->tile * px);
        for (size_t r = 0; r < s->band_rows; r++)
            memcpy(s->tilebuf + r * s->tile * px, s->band + r * w->row_bytes + x * px,
                   cols * px);
        ttile_t t = TIFFComputeTile(s->tif, (uint32_t)x, (uint32_t)y0, 0, 0);
        if (TIFFWriteEncodedTile(s->tif, t, s->tilebuf, (tmsize_t)((size_t)s->tile * s->tile * px)) < 0)
            return pxio_fail(err, errlen, w->path, "TIFF write failed: %s", tiff_last());
    }
    s->band_rows = 0;
    return 0;
}

static void tiff_wdiscard(pxio_writer *w)
{
    tiff_wstate *s = w->state;
    if (!s)
        return;
    if (s->tif) {
        TIFFClose(s->tif); /* closes the descriptor too */
        w->fd = -1;
    }
    free(s->band);
    free(s->tilebuf);
    free(s);
    w->state = NULL;
}

static int tiff_wwrite(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                       char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    tiff_message[0] = '\0';
    if (s->tile) {
        for (size_t i = 0; i < rows; i++) {
            memcpy(s->band + s->band_rows * w->row_bytes, buf + (ptrdiff_t)i * stride,
                   w->row_bytes);
            s->band_rows++;
            w->next_row++; /* tiff_flush_band() reads the position */
            int full = s->band_rows == s->tile || w->next_row == w->total_rows;
            int rc = full ? tiff_flush_band(w, err, errlen) : 0;
            if (rc != 0) {
                w->next_row -= i + 1;
                return -1;
            }
        }
        w->next_row -= rows; /* pxio_write_rows() advances it */
        return 0;
    }
    for (size_t i = 0; i < rows; i++) {
        if (TIFFWriteScanline(s->tif, (void *)(buf + (ptrdiff_t)i * stride),
                              (uint32_t)(w->next_row + i), 0) < 0)
            return pxio_fail(err, errlen, w->path, "TIFF write failed: %s", tiff_last());
    }
    return 0;
}

static int tiff_wfinish(pxio_writer *w, char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    tiff_message[0] = '\0';
    int ok = TIFFFlush(s->tif);
    /* TIFFClose() closes the descriptor but cannot report a failing close;
     * flush first and sync the descriptor so a full disk shows up here. */
    if (ok && fsync(w->fd) != 0 && errno != EINVAL)
        ok = 0;
    TIFFClose(s->tif);
    s->tif = NULL;
    w->fd = -1;
    free(s->band);
    free(s->tilebuf);
    free(s);
    w->state = NULL;
    if (!ok)
        return pxio_fail(err, errlen, w->path, "TIFF write failed: %s",
                         tiff_message[0] ? tiff_message : strerror(errno));
    return 0;
}

static const pxio_writer_ops tiff_writer_ops = {tiff_wwrite, tiff_wfinish, tiff_wdiscard};

int pxio_tiff_create(pxio_writer *w, char *err, size_t errlen)
{
    tiff_handlers();
    const pxio_info *sh = &w->shape;
    if (sh->width > UINT32_MAX || sh->height > UINT32_MAX)
        return pxio_fail(err, errlen, w->path, "too large for TIFF (2^32-1 pixels a side)");
    size_t n = strlen(w->path);
    int big = w->opt.bigtiff ||
              (n >= 4 && (!strcasecmp(w->path + n - 4, ".btf") ||
                          !strcasecmp(w->path + n - 4, ".tf8")));
    /* Classic TIFF offsets are 32-bit: leave a margin for the strip tables. */
    unsigned long long data = (unsigned long long)w->row_bytes * w->total_rows;
    if (data > 0xF0000000ull)
        big = 1;
    tiff_wstate *s = calloc(1, sizeof *s);
    if (!s)
        return pxio_fail(err, errlen, w->path, "out of memory");
    w->state = s;
    w->ops = &tiff_writer_ops;
    s->tif = TIFFFdOpen(w->fd, w->path, big ? "w8" : "w");
    if (!s->tif)
        return pxio_fail(err, errlen, w->path, "cannot create TIFF: %s", tiff_last());
    uint16_t format = sh->type == PIXSUM_F32 || sh->type == PIXSUM_F64 ? SAMPLEFORMAT_IEEEFP
                      : sh->type == PIXSUM_I16 || sh->type == PIXSUM_I32 || sh->type == PIXSUM_I64
                          ? SAMPLEFORMAT_INT
                          : SAMPLEFORMAT_UINT;
    uint16_t bits = (uint16_t)(8 * pixsum_type_size(sh->type));
    int rgb = sh->channels >= 3 && (sh->type == PIXSUM_U8 || sh->type == PIXSUM_U16);
    size_t rps = ((size_t)1 << 20) / w->row_bytes;
    if (rps < 1)
        rps = 1;
    if (rps > sh->height)
        rps = sh->height;
    TIFFSetField(s->tif, TIFFTAG_IMAGEWIDTH, (uint32_t)sh->width);
    TIFFSetField(s->tif, TIFFTAG_IMAGELENGTH, (uint32_t)sh->height);
    TIFFSetField(s->tif, TIFFTAG_SAMPLESPERPIXEL, (uint16_t)sh->channels);
    TIFFSetField(s->tif, TIFFTAG_BITSPERSAMPLE, bits);
    TIFFSetField(s->tif, TIFFTAG_SAMPLEFORMAT, format);
    TIFFSetField(s->tif, TIFFTAG_PLANARCONFIG, PLANARCONFIG_CONTIG);
    TIFFSetField(s->tif, TIFFTAG_PHOTOMETRIC, rgb ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK);
    uint16_t codec = COMPRESSION_NONE;
    const char *cname = w->opt.compression;
    if (cname && *cname && strcmp(cname, "none") != 0) {
        if (!strcmp(cname, "deflate"))
            codec = COMPRESSION_ADOBE_DEFLATE;
        else if (!strcmp(cname, "lzw"))
            codec = COMPRESSION_LZW;
        else if (!strcmp(cname, "zstd"))
            codec = COMPRESSION_ZSTD;
        else
            return pxio_fail(err, errlen, w->path,
                             "unknown TIFF compression '%s' (none, deflate, lzw, zstd)", cname);
        if (!TIFFIsCODECConfigured(codec))
            return pxio_fail(err, errlen, w->path,
                             "this libtiff cannot write %s-compressed TIFF", cname);
    }
    TIFFSetField(s->tif, TIFFTAG_COMPRESSION, codec);
    if (w->opt.tile) {
        if (w->opt.tile % 16 || w->opt.tile > 65536)
            return pxio_fail(err, errlen, w->path,
                             "TIFF tile size %u is not a multiple of 16 (16..65536)", w->opt.tile);
        s->tile = w->opt.tile;
        size_t px = sh->channels * pixsum_type_size(sh->type);
        s->band = malloc((size_t)s->tile * w->row_bytes);
        s->tilebuf = malloc((size_t)s->tile * s->tile * px);
        if (!s->band || !s->tilebuf)
            return pxio_fail(err, errlen, w->path, "out of memory for %u-row tiles", s->tile);
        TIFFSetField(s->tif, TIFFTAG_TILEWIDTH, s->tile);
        TIFFSetField(s->tif, TIFFTAG_TILELENGTH, s->tile);
    } else {
        TIFFSetField(s->tif, TIFFTAG_ROWSPERSTRIP, (uint32_t)rps);
    }
    TIFFSetField(s->tif, TIFFTAG_SOFTWARE, "pixsum");
    size_t extra = sh->channels - (rgb ? 3 : 1);
    if (extra > 0) {
        uint16_t kinds[3] = {EXTRASAMPLE_UNSPECIFIED, EXTRASAMPLE_UNSPECIFIED,
                             EXTRASAMPLE_UNSPECIFIED};
        if (rgb || sh->channels == 2)
            kinds[0] = (sh->type == PIXSUM_U8 || sh->type == PIXSUM_U16)
                           ? EXTRASAMPLE_UNASSALPHA
                           : EXTRASAMPLE_UNSPECIFIED;
        TIFFSetField(s->tif, TIFFTAG_EXTRASAMPLES, (uint16_t)extra, kinds);
    }
    return 0;
}

#else /* !PIXSUM_HAVE_TIFF */

int pxio_tiff_open(pxio_reader *r, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, r->path, "a TIFF file, but this pixsum was built without libtiff");
}

int pxio_tiff_create(pxio_writer *w, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, w->path, "this pixsum was built without libtiff");
}

#endif
