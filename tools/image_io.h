/*
 * image_io.h - image file reading and writing for the pixsum tool (the core
 * library has no file dependency; this module sits on top of it).
 *
 * Two levels:
 *   - whole images:  pxio_read() fills a packed pixsum_view over an owned
 *     buffer, pxio_write() writes any view, the format chosen by extension;
 *   - streams:       pxio_reader_open() / pxio_read_rows() hand out rows in
 *     order, pxio_writer_open() / pxio_write_rows() / pxio_writer_commit()
 *     take them in order, so a file larger than memory can be processed a
 *     strip at a time. The whole-image functions are built on the streams.
 *
 * Rows: an image has depth x height rows of width x channels samples; the
 * stream numbers them slice after slice, top row first. Buffers passed to the
 * stream calls hold packed rows (width x channels x type size bytes each)
 * unless a row stride is given.
 *
 * Formats (read: detected by magic bytes; write: chosen by extension):
 *   .npy           NumPy v1/v2/v3 headers, C order, little-endian; dtypes u1 u2
 *                  i2 i4 u4 u8 i8 f4 f8. Shapes (H,W), (H,W,C) with C <= 4,
 *                  (D,H,W,C). A 3-D shape whose last axis is 1..4 is read as
 *                  channels (H,W,C); a 3-D shape whose last axis is larger is a
 *                  volume (D,H,W); pxio_options.volume forces (D,H,W). Volumes
 *                  are written (D,H,W) for one channel, (D,H,W,C) otherwise.
 *   .pgm .ppm .pnm P2/P5 (gray) and P3/P6 (RGB), maxval up to 255 (u8) or
 *                  65535 (u16, big-endian in the binary forms). Written as P5/P6.
 *   .pfm           PF (RGB) and Pf (gray) f32, either byte order; rows are stored
 *                  bottom-up in the file and returned top-down.
 *   .png           (libpng) 1..16-bit gray, gray+alpha, RGB, RGBA, palette;
 *                  palette and 1/2/4-bit images expand to u8 (gray scaled to
 *                  0..255). Written u8/u16.
 *   .jpg .jpeg     (libjpeg-turbo) 8-bit gray or RGB. Written u8, quality 95.
 *   .tif .tiff     (libtiff) classic TIFF and BigTIFF, striped or tiled,
 *                  contiguous samples, unsigned 8/16/32/64, signed 16/32/64 and
 *                  float 32/64 bits, 1..4 samples per pixel. Written striped
 *                  (or tiled, pxio_write_options.tile), uncompressed unless
 *                  pxio_write_options.compression names a codec; BigTIFF when the file could pass 4 GiB or
 *                  the name ends in .btf/.tf8 or pxio_write_options.bigtiff.
 *                  Multi-page files: page 0, or the page pxio_options.page
 *                  names, or with .volume / .batch every page as a slice (all
 *                  of one shape and type). Planar-separate samples are read
 *                  and interleaved. A 3-D view is written one page per slice.
 *
 * Errors: every function returning int returns 0 on success and -1 on failure,
 * after writing one line "PATH: what went wrong" into err (errlen bytes; err
 * may be NULL). Writers never leave partial output under the final name: the
 * output goes through tools/out_file.h (a temporary beside the target, with
 * its mode and owner, renamed on commit; FIFOs and character devices written
 * in place; symlinks followed) and any failure (including a full disk)
 * removes the temporary. Several outputs of one command are finished first,
 * then committed together (pxio_writer_commit_all()).
 */
#ifndef PIXSUM_TOOLS_IMAGE_IO_H
#define PIXSUM_TOOLS_IMAGE_IO_H

#include "pixsum.h"

#include <stddef.h>

/* What a file holds. */
typedef struct pxio_info {
    pixsum_type type;
    size_t width, height, depth, channels;
    char format[8];     /* "npy", "pgm", "ppm", "pfm", "png", "jpeg", "tiff" */
    char detail[160];   /* human-readable extras: header version, layout, ... */
    char sample[80];    /* the file's own name of its sample type where it says more
                           than `type` (".npy dtype int64 ('<i8')"), else "" */
    size_t pages;       /* images the file holds (TIFF pages); 1 for the other
                           formats (readers only) */
} pxio_info;

/* Reader options (NULL = defaults, all zero). */
typedef struct pxio_options {
    int volume;    /* 1: read a 3-D .npy shape as (D,H,W), never (H,W,C), and
                      every page of a TIFF as a slice */
    int batch;     /* 1: a stack of images, one per slice: a 3-D .npy shape is
                      (N,H,W), a 4-D one (N,H,W,C); every page of a TIFF */
    int page_set;  /* 1: read page `page` (0-based) of a TIFF instead of page
                      0; other formats have only page 0 */
    size_t page;
} pxio_options;

/* Writer options (NULL = defaults, all zero). */
typedef struct pxio_write_options {
    int bigtiff;   /* 1: write BigTIFF whatever the size */
    unsigned tile; /* TIFF: > 0 writes square tiles of this size (a multiple of
                      16) instead of strips */
    const char *compression; /* TIFF: NULL or "none", "deflate", "lzw", "zstd" */
} pxio_write_options;

/* An image read whole: `view` is packed and points into `data`, which the
 * image owns. */
typedef struct pxio_image {
    pixsum_view view;
    void *data;
    pxio_info info;
} pxio_image;

/* Names of the formats this build can read and write, and of those left out
 * for want of a library (e.g. "png jpeg"); static strings. */
const char *pxio_formats_supported(void);
const char *pxio_formats_missing(void);

/* The checked size of an image: *bytes (may be NULL) = width x height x depth
 * x channels x the sample size of `type`, every partial product kept at most
 * PTRDIFF_MAX (views use signed strides). Returns 0, or -1 with "PATH: image
 * dimensions overflow: ..." in err. Every reader (image_io_*.c, mpi_npy.c)
 * checks its header's dimensions with it. */
int pxio_check_size(const char *path, pixsum_type type, size_t width, size_t height,
                    size_t depth, size_t channels, size_t *bytes, char *err, size_t errlen);

/* Describes a NumPy dtype string (the text of a .npy header's 'descr' between
 * its quotes, e.g. "<i8", "|O", ">f2") as "int64 ('<i8')", "object ('|O')",
 * "float16 ('>f2')" into buf. Used by every message naming a .npy dtype. */
void pxio_npy_dtype_text(const char *descr, char *buf, size_t size);

/* ---- whole images ---------------------------------------------------- */

/* Reads the image at `path` into *img (zeroed first). Returns 0 or -1 (err
 * filled). On failure *img holds nothing to free (pxio_free is still safe). */
int pxio_read(const char *path, const pxio_options *opt, pxio_image *img, char *err,
              size_t errlen);

/* Frees what pxio_read() allocated and zeroes *img. Accepts NULL. */
void pxio_free(pxio_image *img);

/* Writes the view `v` (any strides) to `path` in the format named by its
 * extension. Returns 0 or -1 (err filled; no file left under `path`). Fails
 * for a type/channel count the format cannot hold, naming the formats that can. */
int pxio_write(const char *path, const pixsum_view *v, const pxio_write_options *opt,
               char *err, size_t errlen);

/* Fills *info from the header of `path` without reading pixels. */
int pxio_probe(const char *path, const pxio_options *opt, pxio_info *info, char *err,
               size_t errlen);

/* ---- streams --------------------------------------------------------- */

typedef struct pxio_reader pxio_reader;
typedef struct pxio_writer pxio_writer;

/* Opens `path` for reading rows in order; fills *info. */
int pxio_reader_open(const char *path, const pxio_options *opt, pxio_reader **reader,
                     pxio_info *info, char *err, size_t errlen);

/* Reads the next `rows` rows into `buf` (rows apart by `row_stride` bytes; 0 =
 * packed). Fails on a truncated or corrupt file, or when asked for more rows
 * than remain. */
int pxio_read_rows(pxio_reader *reader, size_t rows, void *buf, ptrdiff_t row_stride,
                   char *err, size_t errlen);

/* Moves the reader to row `row` (0..depth x height): the next read starts
 * there. TIFF/BigTIFF readers jump straight to the strip or tile row holding
 * it; the other formats read forward and drop the rows in between (they
 * cannot go back). Returns 0 or -1 (err filled). */
int pxio_reader_seek(pxio_reader *reader, size_t row, char *err, size_t errlen);

/* Suggested number of rows per read (a strip or tile row of the file, or a
 * few MiB worth); >= 1. */
size_t pxio_reader_strip_rows(const pxio_reader *reader);

/* Closes a reader. Accepts NULL. */
void pxio_reader_close(pxio_reader *reader);

/* Opens a writer for an image of the shape and type in `shape` (format and
 * detail ignored) to `path`, choosing the format by extension. Nothing appears
 * under a regular (or new) `path` until pxio_writer_commit() succeeds; a FIFO
 * or character device is written as the rows come (TIFF and PFM, which seek,
 * refuse one that cannot seek). */
int pxio_writer_open(const char *path, const pxio_info *shape,
                     const pxio_write_options *opt, pxio_writer **writer, char *err,
                     size_t errlen);

/* Appends `rows` rows from `buf` (rows apart by `row_stride` bytes; 0 = packed). */
int pxio_write_rows(pxio_writer *writer, size_t rows, const void *buf,
                    ptrdiff_t row_stride, char *err, size_t errlen);

/* Checks that every row was written, completes the format (trailers), flushes
 * and closes the file: it is whole, but not yet under its final name. On
 * failure the output is abandoned (temporary removed) and -1 returned; the
 * writer must still be freed (pxio_writer_abort()). Idempotent. */
int pxio_writer_finish(pxio_writer *writer, char *err, size_t errlen);

/* pxio_writer_finish(), then renames the file to its final name. Frees the
 * writer whatever the outcome; on failure the temporary is removed. */
int pxio_writer_commit(pxio_writer *writer, char *err, size_t errlen);

/* Commits n writers (NULL entries skipped) as one: finishes them all and,
 * only if every one succeeded, renames them back to back
 * (out_file_commit_all()); else removes them all. Frees every writer. */
int pxio_writer_commit_all(pxio_writer *const *writers, size_t n, char *err, size_t errlen);

/* The output of a finished writer (pxio_writer_finish(), pxio_write_staged()),
 * for out_file_commit_all() beside outputs of other kinds; the writer is
 * then freed with pxio_writer_abort(). NULL for NULL. */
struct out_file *pxio_writer_out(pxio_writer *writer);

/* Abandons a writer: closes and removes the temporary. Accepts NULL. */
void pxio_writer_abort(pxio_writer *writer);

/* pxio_write() without the commit: writes the whole file (to its temporary)
 * and returns the finished writer in *writer, for pxio_writer_commit_all()
 * with the command's other outputs (or pxio_writer_abort()). Returns 0 or -1
 * (err filled; nothing left, *writer NULL). */
int pxio_write_staged(const char *path, const pixsum_view *v, const pxio_write_options *opt,
                      pxio_writer **writer, char *err, size_t errlen);

#endif
