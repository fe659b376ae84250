/*
 * fuzz_image.c - libFuzzer target for the image decoders of the pixsum tool
 * (tools/image_io*.c: .npy, PGM/PPM, PFM, PNG, JPEG, TIFF; the format is
 * detected from the magic bytes, so one target reaches every decoder).
 *
 * The image_io API takes paths, so the fuzz input is placed in an anonymous
 * in-memory file (memfd_create) and opened through /proc/self/fd/N: no disk
 * traffic, nothing left behind. Each input goes through the three reading
 * paths: pxio_probe(), the row stream (pxio_reader_open + pxio_read_rows in
 * strips of pxio_reader_strip_rows()), and pxio_read() whole; a decoded image
 * is then fed to the library (integral image and histogram) so that decoder
 * output with any shape or type also exercises the core. The reader options
 * (default, --batch, --volume, --page N: multi-page TIFFs) are chosen from
 * the input's length, so the file's bytes stay the decoder's alone.
 *
 * Allocations stay bounded: images whose packed size exceeds FUZZ_MAX_BYTES
 * are only probed (a header may claim any size; the decoders are expected to
 * reject a truncated body without allocating the claimed size, but the fuzzer
 * must not be killed by a legitimate large allocation either).
 *
 * Built two ways (tests/fuzz.cmake): with -fsanitize=fuzzer as a libFuzzer
 * target, and with fuzz_replay.c as a plain program that replays the seed
 * corpus (and every crash reproducer kept there) as a ctest.
 */
#include "image_io.h"
#include "pixsum.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_BYTES ((size_t)16 << 20)

/* Feeds a decoded image to the library; the statuses are not checked (any
 * status is fine), only the absence of crashes, leaks and UB. */
static void exercise_library(const pixsum_view *v)
{
    size_t w, h, d;
    pixsum_integral_shape(NULL, v, &w, &h, &d);
    size_t px = w * h * d;
    pixsum_type ot = pixsum_integral_type(v->type, px, 0);
    if (ot != PIXSUM_TYPE_NONE) {
        size_t bytes = pixsum_packed_bytes(ot, w, h, d, v->channels);
        if (bytes && bytes <= FUZZ_MAX_BYTES * 4) {
            void *out = malloc(bytes);
            if (out) {
                pixsum_view ov = pixsum_view_3d(out, ot, w, h, d, v->channels, 0, 0);
                (void)pixsum_integral(NULL, v, &ov);
                free(out);
            }
        }
    }
    pixsum_hist_info info;
    if (pixsum_hist_resolve(v, NULL, &info) == PIXSUM_OK && info.bins <= 65536) {
        size_t n = info.bins * info.channels;
        uint64_t *counts = malloc(n * sizeof *counts);
        if (counts) {
            (void)pixsum_histogram(NULL, v, NULL, counts, n, &info);
            free(counts);
        }
    }
}

/* Reads the whole stream strip by strip into one buffer (bounded). */
static void read_as_stream(const char *path, const pxio_options *opt)
{
    pxio_reader *r = NULL;
    pxio_info info;
    char err[256];
    if (pxio_reader_open(path, opt, &r, &info, err, sizeof err) != 0) {
        pxio_reader_close(r);
        return;
    }
    size_t rows = info.height * info.depth;
    size_t row_bytes = info.width * info.channels * pixsum_type_size(info.type);
    size_t strip = pxio_reader_strip_rows(r);
    if (strip == 0)
        abort(); /* documented as >= 1 */
    if (row_bytes > 0 && strip <= FUZZ_MAX_BYTES / row_bytes) {
        unsigned char *buf = malloc(strip * row_bytes);
        for (size_t done = 0; buf && done < rows;) {
            size_t n = rows - done < strip ? rows - done : strip;
            if (pxio_read_rows(r, n, buf, 0, err, sizeof err) != 0)
                break;
            done += n;
        }
        free(buf);
    }
    pxio_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int fd = memfd_create("pixsum-fuzz", 0);
    if (fd < 0)
        return 0;
    if (size > 0 && write(fd, data, size) != (ssize_t)size) {
        close(fd);
        return 0;
    }
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);

    pxio_options opt = {0};
    switch (size % 4) {
    case 1: opt.batch = 1; break;
    case 2: opt.volume = 1; break;
    case 3: opt.page_set = 1, opt.page = size > 0 ? data[size - 1] % 4 : 0; break;
    default: break;
    }
    pxio_info info;
    char err[256];
    memset(&info, 0, sizeof info);
    if (pxio_probe(path, &opt, &info, err, sizeof err) == 0) {
        if (info.pages == 0 || (info.pages > 1 && info.depth > 1 && info.depth != info.pages))
            abort(); /* every reader counts its pages; all pages read = depth */
        size_t bytes = pixsum_packed_bytes(info.type, info.width, info.height,
                                           info.depth ? info.depth : 1, info.channels);
        if (bytes != 0 && bytes <= FUZZ_MAX_BYTES) {
            read_as_stream(path, &opt);
            pxio_image img;
            if (pxio_read(path, &opt, &img, err, sizeof err) == 0) {
                if (pixsum_view_check(&img.view) != PIXSUM_OK)
                    abort(); /* a decoder handed out an invalid view */
                exercise_library(&img.view);
            }
            pxio_free(&img);
        }
    }
    close(fd);
    return 0;
}
