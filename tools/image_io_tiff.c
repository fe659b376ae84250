/*
 * image_io_tiff.c - TIFF and BigTIFF through Debian's libtiff (when
 * PIXSUM_HAVE_TIFF).
 *
 * Reading: striped or tiled, samples contiguous or in separate planes
 * (PlanarConfiguration 2, interleaved here), 1..4 samples per pixel, unsigned
 * 8/16/32/64-bit, signed 16/32/64-bit and IEEE float 32/64-bit samples, any
 * compression libtiff decodes. Rows are handed out from a band buffer holding
 * one strip (or one row of tiles), so memory stays bounded by a strip whatever
 * the image size. Any row can be read first (the reader is random access:
 * pxio_reader_seek jumps to its band). Pages: the first (or the one
 * pxio_options.page names) is the image; with pxio_options.volume or .batch
 * every page is a slice (all of one size and sample type), read page by page.
 * Writing: striped, uncompressed, about 1 MiB per strip, row by row through
 * TIFFWriteScanline (or tiled, or compressed, as asked); a 3-D view (a volume
 * or a batch) becomes one page per slice; BigTIFF when asked or when the file could pass 4 GiB.
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
    size_t page;            /* directory loaded now */
    size_t first_page;      /* the page of image slice 0 (--page N), else 0 */
    int tiled;
    int separate;           /* PlanarConfiguration 2: one plane per sample */
    uint32_t band_h;        /* rows per strip or tile height */
    uint32_t tile_w;
    size_t tsize;           /* bytes per sample */
    unsigned char *band;    /* one band: band_h rows of the full width */
    unsigned char *tile;    /* one tile, or one plane's strip (separate planes) */
    size_t tile_bytes;      /* allocated bytes of `tile` */
    size_t band_first;      /* first image row (slice * height + row) in `band`;
                               SIZE_MAX = none */
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

/* What a page holds: the fields every page of a multi-page read must share. */
typedef struct tiff_page {
    uint32_t w, h;
    uint16_t spp, bits, format, planar, photometric, compression;
} tiff_page;

static int tiff_read_page(TIFF *tif, tiff_page *pg)
{
    memset(pg, 0, sizeof *pg);
    pg->spp = 1, pg->bits = 1, pg->format = SAMPLEFORMAT_UINT, pg->planar = PLANARCONFIG_CONTIG;
    pg->compression = COMPRESSION_NONE;
    if (!TIFFGetField(tif, TIFFTAG_IMAGEWIDTH, &pg->w) ||
        !TIFFGetField(tif, TIFFTAG_IMAGELENGTH, &pg->h))
        return -1;
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLESPERPIXEL, &pg->spp);
    TIFFGetFieldDefaulted(tif, TIFFTAG_BITSPERSAMPLE, &pg->bits);
    TIFFGetFieldDefaulted(tif, TIFFTAG_SAMPLEFORMAT, &pg->format);
    TIFFGetFieldDefaulted(tif, TIFFTAG_PLANARCONFIG, &pg->planar);
    TIFFGetField(tif, TIFFTAG_PHOTOMETRIC, &pg->photometric);
    TIFFGetFieldDefaulted(tif, TIFFTAG_COMPRESSION, &pg->compression);
    return 0;
}

/* The strip or tile layout of the current directory (pages may differ in it). */
static int tiff_load_layout(pxio_reader *r, char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    uint32_t w = (uint32_t)r->info.width, h = (uint32_t)r->info.height;
    uint16_t planar = PLANARCONFIG_CONTIG, compression = COMPRESSION_NONE, photometric = 0;
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetFieldDefaulted(s->tif, TIFFTAG_COMPRESSION, &compression);
    TIFFGetField(s->tif, TIFFTAG_PHOTOMETRIC, &photometric);
    if (compression == COMPRESSION_JPEG && photometric == PHOTOMETRIC_YCBCR)
        TIFFSetField(s->tif, TIFFTAG_JPEGCOLORMODE, JPEGCOLORMODE_RGB);
    s->separate = planar == PLANARCONFIG_SEPARATE && r->info.channels > 1;
    s->tiled = TIFFIsTiled(s->tif);
    uint32_t band_h;
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
        if (TIFFTileSize(s->tif) <= 0) /* the tile buffer waits for the first read */
            return pxio_fail(err, errlen, r->path, "corrupt TIFF tile size %u x %u", tw, th);
        s->tile_w = tw;
        band_h = th;
    } else {
        uint32_t rps = h;
        TIFFGetFieldDefaulted(s->tif, TIFFTAG_ROWSPERSTRIP, &rps);
        band_h = rps == 0 || rps > h ? h : rps;
    }
    /* the band and the tile are allocated by the first read (tiff_load_band):
     * probing a tiny file whose header claims a huge image must not allocate
     * that size */
    if ((size_t)band_h * r->row_bytes / band_h != r->row_bytes)
        return pxio_fail(err, errlen, r->path, "corrupt TIFF: a band of %u rows of %u "
                         "pixels overflows", band_h, w);
    if (band_h != s->band_h) {
        free(s->band);
        s->band = NULL;
    }
    s->band_h = band_h;
    s->band_first = SIZE_MAX;
    return 0;
}

/* Makes page `page` (of the file) the current directory. */
static int tiff_go_to_page(pxio_reader *r, size_t page, char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    if (s->page == page)
        return 0;
    tiff_message[0] = '\0';
    if (!TIFFSetDirectory(s->tif, (tdir_t)page))
        return pxio_fail(err, errlen, r->path, "cannot read TIFF page %zu: %s", page,
                         tiff_last());
    s->page = page;
    return tiff_load_layout(r, err, errlen);
}

/* A buffer of at least n bytes in s->tile. */
static int tiff_tile_buffer(pxio_reader *r, size_t n, char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    if (s->tile_bytes >= n)
        return 0;
    free(s->tile);
    s->tile_bytes = 0;
    if (!(s->tile = malloc(n)))
        return pxio_fail(err, errlen, r->path, "out of memory for a TIFF block of %zu bytes", n);
    s->tile_bytes = n;
    return 0;
}

/* Loads the band holding image row y (slice y / height, its row y % height). */
static int tiff_load_band(pxio_reader *r, size_t y, char *err, size_t errlen)
{
    tiff_rstate *s = r->state;
    size_t height = r->info.height, slice = y / height;
    if (tiff_go_to_page(r, s->first_page + slice, err, errlen) != 0)
        return -1;
    if (!s->band && !(s->band = malloc((size_t)s->band_h * r->row_bytes)))
        return pxio_fail(err, errlen, r->path, "out of memory for a band of %zu rows",
                         (size_t)s->band_h);
    size_t first = y % height / s->band_h * s->band_h; /* row within the page */
    size_t rows = height - first < s->band_h ? height - first : s->band_h;
    size_t ch = r->info.channels, planes = s->separate ? ch : 1;
    size_t px = (s->separate ? 1 : ch) * s->tsize; /* bytes per pixel of one block */
    tiff_message[0] = '\0';
    for (size_t plane = 0; plane < planes; plane++) {
        if (!s->tiled) {
            tstrip_t strip = TIFFComputeStrip(s->tif, (uint32_t)first, (tsample_t)plane);
            size_t plane_bytes = rows * r->info.width * px;
            unsigned char *dst = s->band;
            if (s->separate) {
                if (tiff_tile_buffer(r, plane_bytes, err, errlen) != 0)
                    return -1;
                dst = s->tile;
            }
            tmsize_t got = TIFFReadEncodedStrip(s->tif, strip, dst, (tmsize_t)plane_bytes);
            if (got < (tmsize_t)plane_bytes)
                return pxio_fail(err, errlen, r->path, "TIFF read failed at row %zu: %s",
                                 first + 1,
                                 got < 0 ? tiff_last() : "strip too short (truncated?)");
            if (s->separate) /* sample `plane` of every pixel */
                for (size_t i = 0; i < rows * r->info.width; i++)
                    memcpy(s->band + (i * ch + plane) * s->tsize, s->tile + i * s->tsize,
                           s->tsize);
            continue;
        }
        tmsize_t ts = TIFFTileSize(s->tif);
        if (ts <= 0 || tiff_tile_buffer(r, (size_t)ts, err, errlen) != 0)
            return ts <= 0 ? pxio_fail(err, errlen, r->path, "corrupt TIFF tile size") : -1;
        size_t tile_row_bytes = (size_t)s->tile_w * px;
        if ((size_t)ts < tile_row_bytes * rows)
            return pxio_fail(err, errlen, r->path, "corrupt TIFF: tiles of %lld bytes",
                             (long long)ts);
        for (size_t x = 0; x < r->info.width; x += s->tile_w) {
            ttile_t t = TIFFComputeTile(s->tif, (uint32_t)x, (uint32_t)first, 0,
                                        (tsample_t)plane);
            if (TIFFReadEncodedTile(s->tif, t, s->tile, ts) < 0)
                return pxio_fail(err, errlen, r->path,
                                 "TIFF read failed at tile (%zu, %zu): %s", x, first,
                                 tiff_last());
            size_t cols = r->info.width - x < s->tile_w ? r->info.width - x : s->tile_w;
            for (size_t i = 0; i < rows; i++) {
                unsigned char *row = s->band + i * r->row_bytes + x * ch * s->tsize;
                const unsigned char *src = s->tile + i * tile_row_bytes;
                if (!s->separate) {
                    memcpy(row, src, cols * px);
                    continue;
                }
                for (size_t k = 0; k < cols; k++)
                    memcpy(row + (k * ch + plane) * s->tsize, src + k * s->tsize, s->tsize);
            }
        }
    }
    s->band_first = slice * height + first;
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

static const char *tiff_format_name(uint16_t format)
{
    return format == SAMPLEFORMAT_INT ? "signed" : format == SAMPLEFORMAT_IEEEFP ? "float"
                                                                                 : "unsigned";
}

int pxio_tiff_open(pxio_reader *r, const pxio_options *opt, char *err, size_t errlen)
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
    size_t pages = TIFFNumberOfDirectories(s->tif);
    if (pages == 0)
        return pxio_fail(err, errlen, r->path, "corrupt TIFF: no image directory");
    int all_pages = opt->volume || opt->batch;
    if (opt->page_set && opt->page >= pages)
        return pxio_fail(err, errlen, r->path, "--page %zu: this TIFF has %zu page%s "
                         "(0..%zu)", opt->page, pages, pages == 1 ? "" : "s", pages - 1);
    s->first_page = opt->page_set ? opt->page : 0;
    if (s->first_page && !TIFFSetDirectory(s->tif, (tdir_t)s->first_page))
        return pxio_fail(err, errlen, r->path, "cannot read TIFF page %zu: %s",
                         s->first_page, tiff_last());
    s->page = s->first_page;
    tiff_page pg;
    if (tiff_read_page(s->tif, &pg) != 0)
        return pxio_fail(err, errlen, r->path, "corrupt TIFF: no image size");
    if (pg.w == 0 || pg.h == 0)
        return pxio_fail(err, errlen, r->path, "empty TIFF (%u x %u)", pg.w, pg.h);
    if (pg.spp < 1 || pg.spp > 4)
        return pxio_fail(err, errlen, r->path,
                         "unsupported TIFF: %u samples per pixel (pixsum takes 1..4)", pg.spp);
    pixsum_type type = tiff_type(pg.format, pg.bits);
    if (type == PIXSUM_TYPE_NONE)
        return pxio_fail(err, errlen, r->path,
                         "unsupported TIFF bit depth: %u-bit %s samples (pixsum reads unsigned "
                         "8/16/32/64, signed 16/32/64, float 32/64)",
                         pg.bits, tiff_format_name(pg.format));
    if (pg.photometric == PHOTOMETRIC_PALETTE)
        return pxio_fail(err, errlen, r->path, "palette TIFF files are not supported");
    /* --volume / --batch: every page is a slice, and all must match page 0 */
    size_t depth = 1;
    if (all_pages && pages > 1) {
        for (size_t k = 1; k < pages; k++) {
            tiff_page other;
            tiff_message[0] = '\0';
            if (!TIFFSetDirectory(s->tif, (tdir_t)k) || tiff_read_page(s->tif, &other) != 0)
                return pxio_fail(err, errlen, r->path, "cannot read TIFF page %zu: %s", k,
                                 tiff_message[0] ? tiff_last() : "no image size");
            if (other.w != pg.w || other.h != pg.h || other.spp != pg.spp ||
                other.bits != pg.bits || other.format != pg.format)
                return pxio_fail(err, errlen, r->path,
                                 "page %zu is %u x %u x %u %u-bit %s, page 0 %u x %u x %u "
                                 "%u-bit %s: the pages of a %s must match (read one with "
                                 "--page N)", k, other.w, other.h, other.spp, other.bits,
                                 tiff_format_name(other.format), pg.w, pg.h, pg.spp, pg.bits,
                                 tiff_format_name(pg.format), opt->batch ? "batch" : "volume");
        }
        if (!TIFFSetDirectory(s->tif, 0))
            return pxio_fail(err, errlen, r->path, "cannot read TIFF page 0: %s", tiff_last());
        depth = pages;
    }
    s->tsize = pixsum_type_size(type);
    if (pxio_set_shape(r, type, pg.w, pg.h, depth, pg.spp, NULL, err, errlen) != 0)
        return -1;
    r->info.pages = pages;
    snprintf(r->info.sample, sizeof r->info.sample, "TIFF %u-bit %s samples", pg.bits,
             pg.format == SAMPLEFORMAT_INT      ? "signed integer"
             : pg.format == SAMPLEFORMAT_IEEEFP ? "float"
                                                : "unsigned integer");
    s->band_h = 0;
    if (tiff_load_layout(r, err, errlen) != 0)
        return -1;
    r->strip_rows = s->band_h;
    snprintf(r->info.format, sizeof r->info.format, "tiff");
    char comp[32];
    const TIFFCodec *codec = TIFFFindCODEC(pg.compression);
    snprintf(comp, sizeof comp, "%s", codec ? codec->name : "unknown compression");
    if (s->tiled)
        snprintf(r->info.detail, sizeof r->info.detail, "%s, tiled %u x %u, %s%s",
                 TIFFIsBigTIFF(s->tif) ? "BigTIFF" : "TIFF", s->tile_w, s->band_h, comp,
                 s->separate ? ", planar-separate" : "");
    else
        snprintf(r->info.detail, sizeof r->info.detail, "%s, striped %u rows/strip, %s%s",
                 TIFFIsBigTIFF(s->tif) ? "BigTIFF" : "TIFF", s->band_h, comp,
                 s->separate ? ", planar-separate" : "");
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
    size_t y0 = (w->next_row - 1) % w->shape.height / s->tile * s->tile; /* band's first
                                                                            row in its page */
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

static int tiff_set_fields(pxio_writer *w, size_t page, char *err, size_t errlen);

/* Before image row y (slice y / height): a slice's first row past the first
 * slice closes the page before it and opens the next one. */
static int tiff_page_turn(pxio_writer *w, size_t y, char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    if (y == 0 || y % w->shape.height != 0)
        return 0;
    if (!TIFFWriteDirectory(s->tif))
        return pxio_fail(err, errlen, w->path, "TIFF write failed at page %zu: %s",
                         y / w->shape.height - 1, tiff_last());
    return tiff_set_fields(w, y / w->shape.height, err, errlen);
}

static int tiff_wwrite(pxio_writer *w, size_t rows, const unsigned char *buf, ptrdiff_t stride,
                       char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    tiff_message[0] = '\0';
    if (s->tile) {
        for (size_t i = 0; i < rows; i++) {
            if (tiff_page_turn(w, w->next_row, err, errlen) != 0) {
                w->next_row -= i;
                return -1;
            }
            memcpy(s->band + s->band_rows * w->row_bytes, buf + (ptrdiff_t)i * stride,
                   w->row_bytes);
            s->band_rows++;
            w->next_row++; /* tiff_flush_band() reads the position */
            int full = s->band_rows == s->tile || w->next_row % w->shape.height == 0;
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
        size_t y = w->next_row + i;
        if (tiff_page_turn(w, y, err, errlen) != 0)
            return -1;
        if (TIFFWriteScanline(s->tif, (void *)(buf + (ptrdiff_t)i * stride),
                              (uint32_t)(y % w->shape.height), 0) < 0)
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

/* The tags of page `page` (of w->shape.depth): one image of the shape's width,
 * height, channels and type; pages of a multi-page file are marked as such. */
static int tiff_set_fields(pxio_writer *w, size_t page, char *err, size_t errlen)
{
    tiff_wstate *s = w->state;
    const pxio_info *sh = &w->shape;
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
    if (s->tile) {
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
    if (sh->depth > 1) {
        TIFFSetField(s->tif, TIFFTAG_SUBFILETYPE, FILETYPE_PAGE);
        TIFFSetField(s->tif, TIFFTAG_PAGENUMBER, (uint16_t)(page < 65535 ? page : 65535),
                     (uint16_t)(sh->depth < 65535 ? sh->depth : 65535));
    }
    return 0;
}

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
    }
    return tiff_set_fields(w, 0, err, errlen);
}

#else /* !PIXSUM_HAVE_TIFF */

int pxio_tiff_open(pxio_reader *r, const pxio_options *opt, char *err, size_t errlen)
{
    (void)opt;
    return pxio_fail(err, errlen, r->path, "a TIFF file, but this pixsum was built without libtiff");
}

int pxio_tiff_create(pxio_writer *w, char *err, size_t errlen)
{
    return pxio_fail(err, errlen, w->path, "this pixsum was built without libtiff");
}

#endif
