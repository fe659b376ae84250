/*
 * fuzz_api.c - libFuzzer target for the public C API of libpixsum.
 *
 * The fuzz input is read as a little program: a header of parameter bytes
 * (operation, input type, sizes, channels, strides and their signs, a
 * misalignment, output type, shape error, method, threads, wrap, padded,
 * histogram bins/range/mask, boxes) followed by the pixel bytes, which are
 * repeated to fill the image. Sizes are small (at most 48 x 48 x 3), so every
 * allocation stays bounded whatever the input.
 *
 * Properties checked (abort() = a finding):
 *   - no crash, leak, out-of-bounds access or UB (ASan/UBSan);
 *   - a failed call leaves its output untouched (documented for
 *     pixsum_integral*, pixsum_histogram*, pixsum_equalize);
 *   - a successful integer integral equals the scalar reference method
 *     serial.2wh bit for bit (same wrap/padded settings);
 *   - a band's integer table continued from the row above it
 *     (pixsum_integral_carry()) equals the whole image's lower rows, and a
 *     tile's table with carries from the whole table
 *     (pixsum_integral_carry_tile()) equals the whole table's part;
 *   - histograms over the library's own edges (pixsum_histogram_edges(),
 *     pixsum_histogram_weighted() with unit weights) equal the counts, and
 *     over fuzzed edges fail untouched or add up to the pixels;
 *   - an image equalised by its own histogram (pixsum_equalize_counts())
 *     equals pixsum_equalize()'s result;
 *   - a successful histogram agrees with hist.scalar, and its in-range,
 *     below, above and NaN counts add up to the pixels considered;
 *   - the slices as a batch (pixsum_histogram_batch()) equal the single-image
 *     histograms and, with one range for the batch, add up to the whole's;
 *   - box sums on a successful table succeed or fail with a status, and
 *     box statistics never give a negative variance;
 *   - a box filter (pixsum_box_filter()) either fails leaving its output
 *     untouched or, for integer outputs of integer images, equals the sums
 *     (or rounded means) of the windows computed here from the definition,
 *     and never gives a negative variance;
 *   - the slices as a batch of box filters (pixsum_box_filter() of depth N),
 *     equalisations (pixsum_equalize_batch()) and Otsu thresholds
 *     (pixsum_otsu_batch()) fail leaving their outputs untouched (the first
 *     two) or equal the single-image calls on each slice;
 *   - in CUDA builds, pixsum_cuda_integral_batch[_sq]() on a batch's host
 *     views answer with a status and, when they refuse, write nothing;
 *   - pixsum_cuda_histogram_batch() on a batch's host views returns the CPU
 *     batch's error code, its own refusals, or (a valid request, on a device
 *     number no system has) UNAVAILABLE, and writes nothing;
 *   - pixsum_cuda_box_filter() on the same request returns the CPU's error
 *     code, or (a valid request, on a device number no system has)
 *     UNAVAILABLE, and writes nothing;
 *   - local thresholds and normalisation (pixsum_threshold_local(),
 *     pixsum_normalize_local()) fail leaving their outputs untouched or write
 *     masks of only 0 and the foreground value; their CUDA entries validate
 *     as the CPU ones do and write nothing;
 *   - every property above holds with the CPU kernels capped at any ISA
 *     (pixsum_cpu_force_isa()), and an unknown ISA name is refused.
 */
#define PIXSUM_EXPERIMENTAL /* pixsum_cpu_force_isa(), pixsum_cpu_isa() */
#include "pixsum.h"
#include "pixsum_cuda.h"
#include "../ref_border.h"

#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A cursor over the fuzz input; reads past the end give zeros. */
typedef struct reader {
    const uint8_t *p;
    size_t n, pos;
} reader;

static unsigned take_u8(reader *r)
{
    return r->pos < r->n ? r->p[r->pos++] : 0;
}

static uint64_t take_u64(reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)take_u8(r) << (8 * i);
    return v;
}

static double take_f64(reader *r)
{
    uint64_t bits = take_u64(r);
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

#define FILL 0xA5

/* True if every byte of buf equals FILL. */
static int untouched(const unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != FILL)
            return 0;
    return 1;
}

static int is_integer_type(pixsum_type t)
{
    return t != PIXSUM_F32 && t != PIXSUM_F64;
}

/* A strided image in an owned buffer. */
typedef struct image {
    unsigned char *mem; /* what to free */
    size_t mem_bytes;
    pixsum_view view;
} image;

/* Builds a view of the given shape with row/slice gaps (in elements), stride
 * signs and a byte misalignment; fills the samples from the pixel bytes.
 * Returns 0, or -1 when the shape is out of the fuzzer's bounds. */
static int make_image(image *img, pixsum_type type, size_t w, size_t h, size_t d,
                      size_t c, size_t row_gap, size_t slice_gap, int neg_rows,
                      int neg_slices, size_t misalign, const uint8_t *pixels,
                      size_t npixels)
{
    memset(img, 0, sizeof *img);
    size_t es = pixsum_type_size(type);
    if (es == 0)
        es = 1; /* an invalid type: still give the library some memory */
    size_t row = w * c * es;
    size_t rs = row + row_gap * es;
    size_t ss = rs * h + slice_gap * es;
    size_t span = ss * (d ? d - 1 : 0) + rs * (h ? h - 1 : 0) + row;
    img->mem_bytes = span + misalign + 16;
    img->mem = malloc(img->mem_bytes);
    if (!img->mem)
        return -1;
    for (size_t i = 0; i < img->mem_bytes; i++)
        img->mem[i] = npixels ? pixels[i % npixels] : (unsigned char)i;
    unsigned char *base = img->mem + misalign;
    if (neg_rows && h > 1)
        base += rs * (h - 1);
    if (neg_slices && d > 1)
        base += ss * (d - 1);
    img->view = pixsum_view_3d(base, type, w, h, d, c,
                               neg_rows ? -(ptrdiff_t)rs : (ptrdiff_t)rs,
                               neg_slices ? -(ptrdiff_t)ss : (ptrdiff_t)ss);
    return 0;
}

static void free_image(image *img)
{
    free(img->mem);
    memset(img, 0, sizeof *img);
}

static const pixsum_type output_types[] = {PIXSUM_U32, PIXSUM_U64, PIXSUM_I64, PIXSUM_F32,
                                           PIXSUM_F64, PIXSUM_U8,  PIXSUM_I32, PIXSUM_TYPE_NONE};

/* Integral (which 0), squared (1), tilted (2) or batched (3: each slice an
 * image) table, checked against serial.2wh (per slice for a batch), then
 * boxes. */
static void fuzz_integral(reader *r, pixsum_ctx *ctx, const image *in, int which)
{
    unsigned sel = take_u8(r);
    pixsum_type ot = output_types[sel % (sizeof output_types / sizeof output_types[0])];
    size_t count = in->view.width * in->view.height * in->view.depth;
    if (ot == PIXSUM_TYPE_NONE)
        ot = pixsum_integral_type(in->view.type, count, which == 1);
    int shape_err = (int)(take_u8(r) % 8) - 1; /* mostly 0, sometimes off by one */
    if (shape_err > 1 || shape_err < -1)
        shape_err = 0;
    size_t w, h, d;
    pixsum_integral_shape(ctx, &in->view, &w, &h, &d);
    if (which == 2) {
        w = in->view.width + 1;
        h = in->view.height + 1;
        d = 1;
    } else if (which == 3) {
        d = in->view.depth; /* a batch: no padded slice */
        count = in->view.width * in->view.height;
        if (sel & 0x80)
            ot = pixsum_integral_type(in->view.type, count, 0);
    }
    w = (size_t)((ptrdiff_t)w + shape_err);
    if (w == 0 || w > 64 || h > 64 || d > 8)
        return;
    size_t es = pixsum_type_size(ot) ? pixsum_type_size(ot) : 8;
    size_t bytes = w * h * d * in->view.channels * es;
    if (bytes == 0)
        return;
    unsigned char *out = malloc(bytes), *sq = malloc(bytes), *ref = malloc(bytes);
    if (!out || !sq || !ref)
        goto done;
    memset(out, FILL, bytes);
    memset(sq, FILL, bytes);
    pixsum_view ov = pixsum_view_3d(out, ot, w, h, d, in->view.channels, 0, 0);
    pixsum_view sv = pixsum_view_3d(sq, ot, w, h, d, in->view.channels, 0, 0);
    int st;
#ifdef PIXSUM_HAVE_CUDA
    if (which == 3) { /* the CUDA batch entries on the same (host) views */
        unsigned pick = take_u8(r);
        int cst = (pick & 1) ? pixsum_cuda_integral_batch(ctx, &in->view, &ov, NULL)
                             : pixsum_cuda_integral_batch_sq(ctx, &in->view,
                                                             (pick & 2) ? &ov : NULL, &sv, NULL);
        if (cst != PIXSUM_OK && (!untouched(out, bytes) || !untouched(sq, bytes)))
            abort(); /* a refused request writes nothing */
        memset(out, FILL, bytes);
        memset(sq, FILL, bytes);
    }
#endif
    if (which == 0)
        st = pixsum_integral(ctx, &in->view, &ov);
    else if (which == 1)
        st = pixsum_integral_sq(ctx, &in->view, (take_u8(r) & 1) ? &ov : NULL, &sv);
    else if (which == 3)
        st = pixsum_integral_batch(ctx, &in->view, &ov, NULL);
    else
        st = pixsum_integral_tilted(ctx, &in->view, &ov);
    if (st != PIXSUM_OK) {
        if (!untouched(out, bytes) || !untouched(sq, bytes))
            abort(); /* documented: on error the output is left untouched */
        goto done;
    }
    /* the scalar reference must agree bit for bit on integer outputs */
    if (is_integer_type(ot)) {
        pixsum_ctx *rc = pixsum_ctx_new();
        intptr_t wrap = 0, padded = 0;
        pixsum_ctx_get(ctx, PIXSUM_PARAM_WRAP, &wrap);
        pixsum_ctx_get(ctx, PIXSUM_PARAM_PADDED, &padded);
        if (!rc || pixsum_ctx_set_method(rc, "serial.2wh") != PIXSUM_OK ||
            pixsum_ctx_set(rc, PIXSUM_PARAM_WRAP, wrap) != PIXSUM_OK ||
            pixsum_ctx_set(rc, PIXSUM_PARAM_PADDED, padded) != PIXSUM_OK)
            abort();
        memset(ref, FILL, bytes);
        pixsum_view rv = pixsum_view_3d(ref, ot, w, h, d, in->view.channels, 0, 0);
        int rst;
        const unsigned char *got = out;
        if (which == 0)
            rst = pixsum_integral(rc, &in->view, &rv);
        else if (which == 1) {
            rst = pixsum_integral_sq(rc, &in->view, NULL, &rv);
            got = sq;
        } else if (which == 3) { /* slice by slice, each a 2-D image */
            rst = PIXSUM_OK;
            for (size_t z = 0; z < d && rst == PIXSUM_OK; z++) {
                pixsum_view si, so;
                pixsum_view_roi3d(&in->view, 0, 0, z, in->view.width, in->view.height, 1, &si);
                pixsum_view_roi3d(&rv, 0, 0, z, w, h, 1, &so);
                rst = pixsum_integral(rc, &si, &so);
            }
        } else
            rst = pixsum_integral_tilted(rc, &in->view, &rv);
        pixsum_ctx_free(rc);
        if (rst != PIXSUM_OK || memcmp(got, ref, bytes) != 0)
            abort(); /* a method disagrees with the reference */
    }
    if (which >= 2)
        goto done;
    /* box queries on the table (and the squared one for stats) */
    pixsum_box boxes[4];
    size_t nb = 1 + take_u8(r) % 4;
    for (size_t i = 0; i < nb; i++) {
        unsigned bits = take_u8(r);
        boxes[i].x = (bits & 1) ? take_u64(r) : take_u8(r) % (in->view.width + 1);
        boxes[i].y = (bits & 2) ? take_u64(r) : take_u8(r) % (in->view.height + 1);
        boxes[i].z = take_u8(r) % (in->view.depth + 1);
        boxes[i].w = (bits & 4) ? take_u64(r) : take_u8(r) % (in->view.width + 1);
        boxes[i].h = (bits & 8) ? take_u64(r) : take_u8(r) % (in->view.height + 1);
        boxes[i].d = take_u8(r) % (in->view.depth + 1);
    }
    const pixsum_view *table = which == 1 ? &sv : &ov;
    unsigned char sums[4 * 4 * 8];
    (void)pixsum_box_sums(ctx, table, boxes, nb, sums);
    if (which == 1 && (take_u8(r) & 1)) {
        /* stats need a plain table of the same shape and type: compute it */
        memset(out, FILL, bytes);
        if (pixsum_integral(ctx, &in->view, &ov) == PIXSUM_OK) {
            double mean[16], var[16];
            if (pixsum_box_stats(ctx, &ov, &sv, boxes, nb, mean, var) == PIXSUM_OK)
                for (size_t i = 0; i < nb * in->view.channels; i++)
                    if (var[i] < 0)
                        abort(); /* documented: never negative */
        }
    }
done:
    free(out);
    free(sq);
    free(ref);
}

/* Histogram with fuzzed bins, range and mask, checked against hist.scalar. */
/* The slices of `in` as a batch (pixsum_histogram_batch()): a failure leaves
 * the counts untouched (shared range: everything is checked first); each
 * image's counts equal pixsum_histogram() of that slice with the range
 * reported for it; with the shared range, the images add up to the whole
 * view's histogram `whole` (of `whole_info`, counted with the same spec). */
static void fuzz_histogram_batch(reader *r, pixsum_ctx *ctx, const image *in,
                                 const pixsum_hist_spec *spec, const uint64_t *whole,
                                 const pixsum_hist_info *whole_info)
{
    unsigned flags = take_u8(r) % 3; /* 2: an unknown flag */
    size_t n = in->view.depth, per = whole_info->bins * whole_info->channels;
    size_t len = n * per - (take_u8(r) % 8 == 0 ? 1 : 0), bytes = (len ? len : 1) * 8;
    uint64_t *counts = malloc(bytes), *one = malloc(per * sizeof *one);
    pixsum_hist_info *infos = calloc(n, sizeof *infos);
    if (!counts || !one || !infos)
        goto done;
    memset(counts, FILL, bytes);
    int st = pixsum_histogram_batch(ctx, &in->view, spec, flags, counts, len, infos);
    if ((flags == 2 || len < n * per) && st == PIXSUM_OK)
        abort();
#ifdef PIXSUM_HAVE_CUDA
    {
        /* the CUDA batch on the same (host) views, on a device no system has
         * (1024): the CPU's validation error, or its own refusals (no range
         * for a type that needs one, bins or alignment it does not take), or
         * UNAVAILABLE for a valid request; it never writes */
        uint64_t *g = malloc(bytes);
        pixsum_ctx *gctx = pixsum_ctx_new();
        if (g && gctx && pixsum_ctx_set(gctx, PIXSUM_PARAM_CUDA_DEVICE, 1024) == PIXSUM_OK) {
            memset(g, FILL, bytes);
            int gst = pixsum_cuda_histogram_batch(gctx, &in->view, spec, flags, g, len, NULL,
                                                  NULL);
            int own = gst == PIXSUM_ERR_INVALID_ARG || gst == PIXSUM_ERR_UNSUPPORTED;
            /* the CPU's context method may answer instead of validation */
            int valid = st == PIXSUM_OK || st == PIXSUM_ERR_NO_MEMORY ||
                        st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_UNAVAILABLE;
            if (gst == PIXSUM_OK || (valid ? gst != PIXSUM_ERR_UNAVAILABLE && !own
                                           : gst != st && !own))
                abort(); /* the CUDA batch's validation differs from the CPU's */
            if (!untouched((unsigned char *)g, bytes))
                abort();
        }
        pixsum_ctx_free(gctx);
        free(g);
    }
#endif
    if (st != PIXSUM_OK) {
        if (flags != 1 && !untouched((unsigned char *)counts, bytes))
            abort();
        goto done;
    }
    for (size_t z = 0; z < n; z++) {
        pixsum_view slice, mslice;
        pixsum_hist_spec s1 = {whole_info->bins, infos[z].lo, infos[z].hi, NULL};
        if (pixsum_view_roi3d(&in->view, 0, 0, z, in->view.width, in->view.height, 1,
                              &slice) != PIXSUM_OK)
            abort();
        if (spec->mask) {
            if (pixsum_view_roi3d(spec->mask, 0, 0, z, in->view.width, in->view.height, 1,
                                  &mslice) != PIXSUM_OK)
                abort();
            s1.mask = &mslice;
        }
        if (pixsum_histogram(ctx, &slice, &s1, one, per, NULL) != PIXSUM_OK ||
            memcmp(one, counts + z * per, per * sizeof *one) != 0)
            abort();
        if (flags == 0 && (infos[z].lo != whole_info->lo || infos[z].hi != whole_info->hi))
            abort();
    }
    for (size_t i = 0; flags == 0 && i < per; i++) {
        uint64_t sum = 0;
        for (size_t z = 0; z < n; z++)
            sum += counts[z * per + i];
        if (sum != whole[i])
            abort();
    }
done:
    free(counts);
    free(one);
    free(infos);
}

/* Histograms over edges (pixsum_histogram_edges / _weighted), density,
 * centres and Otsu's result: with the library's own edges and no flag the
 * counts equal pixsum_histogram()'s `counts` (of `info`); fuzzed edges
 * (unsorted, NaN, infinite) either fail leaving the output untouched or give
 * bins, below, above and NaN counts that add up to the pixels; weights of
 * 1 give the counts. */
static void fuzz_histogram_edges(reader *r, pixsum_ctx *ctx, const image *in,
                                 const pixsum_hist_spec *spec, const uint64_t *counts,
                                 const pixsum_hist_info *info)
{
    size_t bins = info->bins, ch = info->channels, n = bins * ch;
    double *e = malloc((bins + 1) * sizeof *e), *sums = malloc(n * sizeof *sums);
    uint64_t *got = malloc(n * sizeof *got);
    if (!e || !sums || !got)
        goto done;
    for (size_t i = 0; i <= bins; i++)
        e[i] = pixsum_hist_edge(bins, info->lo, info->hi, i);
    pixsum_hist_edges_spec es = {e, bins + 1, 0, spec->mask, NULL};
    pixsum_hist_info ei;
    if (pixsum_histogram_edges(ctx, &in->view, &es, got, n, &ei) != PIXSUM_OK ||
        memcmp(got, counts, n * sizeof *got) != 0)
        abort();
    if (pixsum_histogram_weighted(ctx, &in->view, &es, sums, n, NULL) != PIXSUM_OK)
        abort();
    for (size_t i = 0; i < n; i++)
        if (sums[i] != (double)counts[i])
            abort();
    double *dens = malloc(n * sizeof *dens), *cen = malloc(bins * sizeof *cen);
    if (dens && cen) {
        (void)pixsum_hist_density(info, (take_u8(r) & 1) ? e : NULL, counts, NULL, dens);
        if (pixsum_hist_centers(info, NULL, 0, cen) != PIXSUM_OK)
            abort();
    }
    free(dens);
    free(cen);
    /* fuzzed edges and flags; the image as its own weights where it may be */
    size_t ne = 1 + take_u8(r) % 12;
    double fe[12];
    for (size_t i = 0; i < ne; i++)
        fe[i] = (take_u8(r) & 1) ? take_f64(r) : (double)(int8_t)take_u8(r);
    pixsum_hist_edges_spec fs = {fe, ne, take_u8(r) % 6, spec->mask, NULL};
    size_t fn = (ne > 1 ? ne - 1 : 1) * ch;
    if (fn > n)
        goto done;
    memset(got, FILL, n * sizeof *got);
    int st = pixsum_histogram_edges(ctx, &in->view, &fs, got, fn, &ei);
    if (st != PIXSUM_OK && !untouched((unsigned char *)got, n * sizeof *got))
        abort();
    if (st == PIXSUM_OK)
        for (size_t c = 0; c < ch; c++) {
            uint64_t t = 0;
            for (size_t i = 0; i < ne - 1; i++)
                t += got[c * (ne - 1) + i];
            if (t != ei.in_range[c] ||
                t + ei.below[c] + ei.above[c] + ei.nan[c] != ei.pixels)
                abort();
        }
    fs.weights = (take_u8(r) & 1) ? &in->view : NULL;
    memset(sums, FILL, n * sizeof *sums);
    st = pixsum_histogram_weighted(ctx, &in->view, &fs, sums, fn, NULL);
    if (st != PIXSUM_OK && !untouched((unsigned char *)sums, n * sizeof *sums))
        abort();
    pixsum_otsu_result o;
    if (pixsum_otsu_image(ctx, &in->view, spec, take_u8(r) % 6, &o) == PIXSUM_OK &&
        !o.constant && !(o.lower <= o.center && o.center <= o.threshold))
        abort();
done:
    free(e);
    free(sums);
    free(got);
}

static void fuzz_histogram(reader *r, pixsum_ctx *ctx, const image *in, const uint8_t *px,
                           size_t npx)
{
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    unsigned mode = take_u8(r);
    if (mode & 1)
        spec.bins = take_u8(r) | (size_t)take_u8(r) << 8 | (size_t)(take_u8(r) & 1) << 16;
    if (mode & 2) {
        spec.lo = take_f64(r);
        spec.hi = take_f64(r);
    } else if (mode & 4) {
        spec.lo = (double)(int8_t)take_u8(r);
        spec.hi = spec.lo + 1 + take_u8(r);
    }
    image mask;
    memset(&mask, 0, sizeof mask);
    if (mode & 8) {
        size_t mw = in->view.width + ((mode & 16) ? 1 : 0);
        if (make_image(&mask, PIXSUM_U8, mw, in->view.height, in->view.depth, 1,
                       take_u8(r) % 3, 0, 0, 0, 0, px, npx) != 0)
            return;
        spec.mask = &mask.view;
    }
    pixsum_hist_info info;
    size_t spec_bins = 0;
    int bins_st = pixsum_hist_bins(&in->view, &spec, &spec_bins);
    int resolve_st = pixsum_hist_resolve(&in->view, &spec, &info);
    /* the bin count from the spec alone is the resolved one */
    if (resolve_st == PIXSUM_OK && (bins_st != PIXSUM_OK || spec_bins != info.bins))
        abort();
    if (resolve_st != PIXSUM_OK || info.bins > 70000) {
        free_image(&mask);
        return;
    }
    size_t n = info.bins * info.channels;
    if (take_u8(r) % 8 == 0 && n > 0)
        n--; /* a counts buffer one too short must be refused */
    size_t bytes = (n ? n : 1) * sizeof(uint64_t);
    uint64_t *counts = malloc(bytes), *ref = malloc(bytes);
    if (!counts || !ref)
        goto done;
    memset(counts, FILL, bytes);
    int st = pixsum_histogram(ctx, &in->view, &spec, counts, n, &info);
    if (st != PIXSUM_OK) {
        if (!untouched((unsigned char *)counts, bytes))
            abort();
        goto done;
    }
    for (size_t c = 0; c < info.channels; c++) {
        uint64_t in_bins = 0;
        for (size_t i = 0; i < info.bins; i++)
            in_bins += counts[c * info.bins + i];
        if (in_bins != info.in_range[c] ||
            info.in_range[c] + info.below[c] + info.above[c] + info.nan[c] != info.pixels)
            abort();
    }
    pixsum_ctx *rc = pixsum_ctx_new();
    if (!rc || pixsum_ctx_set_method(rc, "hist.scalar") != PIXSUM_OK)
        abort();
    pixsum_hist_info rinfo;
    int rst = pixsum_histogram(rc, &in->view, &spec, ref, n, &rinfo);
    pixsum_ctx_free(rc);
    if (rst != PIXSUM_OK || memcmp(ref, counts, n * sizeof *counts) != 0)
        abort(); /* every method gives bit-identical counts */
    /* the reported edges: lo first, hi last, never decreasing */
    if (pixsum_hist_edge(info.bins, info.lo, info.hi, 0) != info.lo ||
        pixsum_hist_edge(info.bins, info.lo, info.hi, info.bins) != info.hi ||
        !isnan(pixsum_hist_edge(info.bins, info.lo, info.hi, info.bins + 1)))
        abort();
    for (size_t i = 0, k = take_u8(r); i < 8; i++, k = k * 7 + 1) {
        size_t e = k % info.bins;
        if (!(pixsum_hist_edge(info.bins, info.lo, info.hi, e) <=
              pixsum_hist_edge(info.bins, info.lo, info.hi, e + 1)))
            abort();
    }
    /* raw (bins, lo, hi): NaN or an edge within [lo, hi] */
    double flo = take_f64(r), fhi = take_f64(r);
    size_t fbins = take_u8(r) | (size_t)take_u8(r) << 8, fi = take_u8(r);
    double fe = pixsum_hist_edge(fbins, flo, fhi, fi);
    if (!isnan(fe) && !(fe >= flo && fe <= fhi))
        abort();
    /* derived histograms */
    double *rel = malloc(n * sizeof *rel);
    if (rel) {
        (void)pixsum_hist_relative(&info, counts, take_u8(r) & 3, rel);
        free(rel);
    }
    (void)pixsum_hist_cumulative(&info, counts, ref);
    fuzz_histogram_batch(r, ctx, in, &spec, counts, &info);
    fuzz_histogram_edges(r, ctx, in, &spec, counts, &info);
done:
    free(counts);
    free(ref);
    free_image(&mask);
}

/* Integral histogram with a small memory limit: a few queries, the same boxes
 * as one batch (equal counts when all are good, nothing written when one is
 * bad), then a rebuild with other bins that must answer as a new table. */
static void fuzz_ihist(reader *r, pixsum_ctx *ctx, const image *in)
{
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.bins = take_u8(r);
    pixsum_ihist *ih = NULL;
    int st = pixsum_ihist_new(ctx, &in->view, &spec, (size_t)1 << 22, &ih);
    if (st != PIXSUM_OK) {
        if (ih)
            abort(); /* documented: *out is NULL on error */
        return;
    }
    pixsum_hist_info info;
    if (pixsum_ihist_info(ih, &info) != PIXSUM_OK)
        abort();
    enum { Q = 3 };
    size_t cell = info.bins * info.channels;
    uint64_t *counts = malloc(Q * cell * sizeof *counts), *batch = malloc(Q * cell * sizeof *batch);
    pixsum_box boxes[Q];
    int all_ok = 1;
    for (int q = 0; counts && batch && q < Q; q++) {
        size_t x = take_u8(r) % (in->view.width + 2), y = take_u8(r) % (in->view.height + 2);
        size_t w = take_u8(r) % (in->view.width + 2), h = take_u8(r) % (in->view.height + 2);
        boxes[q] = (pixsum_box){x, y, 0, w, h, 1};
        all_ok &= pixsum_ihist_query(ih, x, y, w, h, counts + q * cell) == PIXSUM_OK;
    }
    if (counts && batch) {
        memset(batch, FILL, Q * cell * sizeof *batch);
        st = pixsum_ihist_queries(ctx, ih, boxes, Q, batch);
        if ((st == PIXSUM_OK) != all_ok)
            abort(); /* the batch refuses exactly when a single query does */
        if (st == PIXSUM_OK ? memcmp(batch, counts, Q * cell * sizeof *batch) != 0
                            : !untouched((const unsigned char *)batch, Q * cell * sizeof *batch))
            abort();
    }
    free(counts);
    free(batch);
    spec.bins = take_u8(r);
    pixsum_ihist *fresh = NULL;
    int fst = pixsum_ihist_new(ctx, &in->view, &spec, (size_t)1 << 22, &fresh);
    if (pixsum_ihist_rebuild(ctx, ih, &in->view, &spec, (size_t)1 << 22) != fst)
        abort(); /* a rebuild refuses exactly what a new build refuses */
    if (fst == PIXSUM_OK) {
        pixsum_hist_info a, b;
        pixsum_ihist_info(ih, &a);
        pixsum_ihist_info(fresh, &b);
        uint64_t *qa = malloc(a.bins * a.channels * sizeof *qa);
        uint64_t *qb = malloc(b.bins * b.channels * sizeof *qb);
        if (memcmp(&a, &b, sizeof a) != 0 ||
            (qa && qb &&
             (pixsum_ihist_query(ih, 0, 0, in->view.width, in->view.height, qa) != PIXSUM_OK ||
              pixsum_ihist_query(fresh, 0, 0, in->view.width, in->view.height, qb) !=
                  PIXSUM_OK ||
              memcmp(qa, qb, a.bins * a.channels * sizeof *qa) != 0)))
            abort();
        free(qa);
        free(qb);
    }
    pixsum_ihist_free(fresh);
    pixsum_ihist_free(ih);
}

/* Equalisation in place or out of place. */
static void fuzz_equalize(reader *r, pixsum_ctx *ctx, const image *in)
{
    if (take_u8(r) & 1) {
        (void)pixsum_equalize(ctx, &in->view, &in->view, NULL);
        return;
    }
    size_t bytes = pixsum_packed_bytes(in->view.type, in->view.width, in->view.height,
                                       in->view.depth, in->view.channels);
    if (bytes == 0)
        return;
    unsigned char *out = malloc(bytes);
    if (!out)
        return;
    memset(out, FILL, bytes);
    pixsum_view ov = pixsum_view_3d(out, in->view.type, in->view.width, in->view.height,
                                    in->view.depth, in->view.channels, 0, 0);
    if (pixsum_equalize(ctx, &in->view, &ov, NULL) != PIXSUM_OK && !untouched(out, bytes))
        abort();
    free(out);
    /* with a bin count, and to floats (pixsum_equalize_bins()): a failure
     * writes nothing */
    pixsum_type ot = (take_u8(r) & 1) ? PIXSUM_F64 : in->view.type;
    size_t obytes = pixsum_packed_bytes(ot, in->view.width, in->view.height, in->view.depth,
                                        in->view.channels);
    unsigned char *o2 = obytes ? malloc(obytes) : NULL;
    if (!o2)
        return;
    memset(o2, FILL, obytes);
    pixsum_view v2 = pixsum_view_3d(o2, ot, in->view.width, in->view.height, in->view.depth,
                                    in->view.channels, 0, 0);
    size_t bins = take_u8(r) | (size_t)(take_u8(r) & 3) << 8;
    if (pixsum_equalize_bins(ctx, &in->view, &v2, NULL, bins) != PIXSUM_OK &&
        !untouched(o2, obytes))
        abort();
    free(o2);
}
/* pixsum_integral_carry(): the image split at a fuzzed row, the lower band's
 * table continuing the upper band's last row (or a fuzzed carry), with the
 * fuzzed context. On success with the upper band's row as carry, an integer
 * table must equal the lower rows of the whole-image table (same context);
 * on error the band's table is left untouched. */
static void fuzz_carry(reader *r, pixsum_ctx *ctx, const image *in)
{
    const pixsum_view *v = &in->view;
    size_t h = v->height, n = v->width * v->channels;
    unsigned sel = take_u8(r);
    pixsum_type ot = output_types[sel % (sizeof output_types / sizeof output_types[0])];
    if (ot == PIXSUM_TYPE_NONE)
        ot = pixsum_integral_type(v->type, v->width * h * v->depth, 0);
    if (v->depth != 1 || h < 2 || v->width > 64 || h > 64 || pixsum_type_size(ot) == 0)
        return;
    size_t es = pixsum_type_size(ot), k = 1 + take_u8(r) % (h - 1);
    size_t bytes = n * h * es;
    unsigned char *whole = malloc(bytes), *band = malloc(bytes), *carry = malloc(n * es);
    if (!whole || !band || !carry)
        goto done;
    pixsum_view bottom;
    if (pixsum_view_roi(v, 0, k, v->width, h - k, &bottom) != PIXSUM_OK)
        goto done; /* the fuzzed image view itself is invalid */
    pixsum_view wv = pixsum_view_2d(whole, ot, v->width, h, v->channels, 0);
    int whole_st = pixsum_integral(ctx, v, &wv);
    int fuzzed = take_u8(r) & 1; /* 1: a fuzzed carry instead of the upper band's row */
    for (size_t i = 0; i < n * es; i++)
        carry[i] = whole_st == PIXSUM_OK && !fuzzed ? whole[(k - 1) * n * es + i]
                                                    : (unsigned char)take_u8(r);
    memset(band, FILL, bytes);
    pixsum_view bv = pixsum_view_2d(band, ot, v->width, h - k, v->channels, 0);
    pixsum_view cv = pixsum_view_2d(carry, ot, v->width, 1 + (take_u8(r) % 8 == 0),
                                    v->channels, 0); /* sometimes two rows: refused */
    if (cv.height == 2)
        cv.data = band; /* the band's own first rows: refused as well */
    int st = pixsum_integral_carry(ctx, &bottom, &bv, &cv, NULL, NULL);
    if (st != PIXSUM_OK) {
        if (!untouched(band, bytes))
            abort(); /* documented: on error the output is left untouched */
        goto done;
    }
    if (cv.height != 1)
        abort(); /* a carry of two rows must be refused */
    if (whole_st == PIXSUM_OK && !fuzzed && is_integer_type(ot) &&
        memcmp(band, whole + k * n * es, (h - k) * n * es) != 0)
        abort(); /* the band's table differs from the whole image's lower rows */
done:
    free(whole);
    free(band);
    free(carry);
}

/* A table sample as its bits (4-byte types zero-extended), and back. */
static uint64_t table_get(const unsigned char *p, pixsum_type t)
{
    uint32_t u32;
    uint64_t u64;
    if (pixsum_type_size(t) == 4) {
        memcpy(&u32, p, 4);
        return u32;
    }
    if (pixsum_type_size(t) != 8)
        return p[0]; /* a type tables cannot have */
    memcpy(&u64, p, 8);
    return u64;
}

static void table_put(unsigned char *p, pixsum_type t, uint64_t v)
{
    size_t es = pixsum_type_size(t);
    if (es == 4) {
        uint32_t u32 = (uint32_t)v;
        memcpy(p, &u32, 4);
    } else if (es == 8) {
        memcpy(p, &v, 8);
    } else { /* a type tables cannot have (refused): any bytes */
        for (size_t i = 0; i < es; i++)
            p[i] = (unsigned char)(v >> (8 * i));
    }
}

/* pixsum_integral_carry_tile(): the image's lower right tile from a fuzzed
 * row and column on, its carries taken from the whole image's table (the row
 * above the tile, and each row's sum left of it as the difference of two
 * entries of the column left of the tile) or fuzzed. On success with the
 * whole table's carries, an integer tile table must equal the whole table's
 * lower right part (same context); on error the tile's table is untouched. */
static void fuzz_carry_tile(reader *r, pixsum_ctx *ctx, const image *in)
{
    const pixsum_view *v = &in->view;
    size_t h = v->height, w = v->width, ch = v->channels;
    unsigned sel = take_u8(r);
    pixsum_type ot = output_types[sel % (sizeof output_types / sizeof output_types[0])];
    if (ot == PIXSUM_TYPE_NONE)
        ot = pixsum_integral_type(v->type, w * h * v->depth, 0);
    if (v->depth != 1 || h < 2 || w < 2 || w > 64 || h > 64 || pixsum_type_size(ot) == 0)
        return;
    size_t es = pixsum_type_size(ot), k = take_u8(r) % h, m = take_u8(r) % w;
    size_t tw = w - m, th = h - k, bytes = w * h * ch * es;
    unsigned char *whole = malloc(bytes), *tile = malloc(bytes);
    unsigned char *row = malloc(tw * ch * es), *col = malloc(th * ch * es);
    if (!whole || !tile || !row || !col)
        goto done;
    pixsum_view part;
    if (pixsum_view_roi(v, m, k, tw, th, &part) != PIXSUM_OK)
        goto done; /* the fuzzed image view itself is invalid */
    pixsum_view wv = pixsum_view_2d(whole, ot, w, h, ch, 0);
    int whole_st = pixsum_integral(ctx, v, &wv);
    int exact = whole_st == PIXSUM_OK && is_integer_type(ot) && !(take_u8(r) & 1);
    size_t pitch = w * ch * es;
    for (size_t x = 0; x < tw * ch; x++) /* T(m + x, k - 1), or fuzzed */
        table_put(row + x * es, ot, exact && k ? table_get(whole + (k - 1) * pitch +
                                                           (m * ch + x) * es, ot)
                                               : (exact ? 0 : take_u8(r)));
    for (size_t y = 0; y < th; y++) /* T(m - 1, k + y) - T(m - 1, k + y - 1) */
        for (size_t c = 0; c < ch; c++) {
            uint64_t s = 0;
            if (exact && m) {
                size_t at = ((m - 1) * ch + c) * es;
                s = table_get(whole + (k + y) * pitch + at, ot);
                if (k + y)
                    s -= table_get(whole + (k + y - 1) * pitch + at, ot);
            } else if (!exact) {
                s = take_u8(r);
            }
            table_put(col + (y * ch + c) * es, ot, s);
        }
    memset(tile, FILL, bytes);
    pixsum_view tv = pixsum_view_2d(tile, ot, tw, th, ch, 0);
    pixsum_view rv = pixsum_view_2d(row, ot, tw, 1, ch, 0);
    pixsum_view cv = pixsum_view_2d(col, ot, 1, th, ch, 0);
    unsigned shape = take_u8(r) % 8;
    if (shape == 1)
        cv.height = th > 1 ? th - 1 : 2; /* a column of the wrong height: refused */
    int st = pixsum_integral_carry_tile(ctx, &part, &tv, (shape == 2 && !k) ? NULL : &rv,
                                        (shape == 3 && !m) ? NULL : &cv, NULL, NULL, NULL);
    if (st != PIXSUM_OK) {
        if (!untouched(tile, bytes))
            abort(); /* documented: on error the output is left untouched */
        goto done;
    }
    if (shape == 1)
        abort(); /* a misshaped carry column must be refused */
    if (exact)
        for (size_t y = 0; y < th; y++)
            if (memcmp(tile + y * tw * ch * es, whole + (k + y) * pitch + m * ch * es,
                       tw * ch * es) != 0)
                abort(); /* the tile's table differs from the whole table's part */
done:
    free(whole);
    free(tile);
    free(row);
    free(col);
}

/* pixsum_equalize_counts() with the image's own histogram, which must give
 * pixsum_equalize()'s result, or with fuzzed counts (a status, or a mapping;
 * on error the output is untouched). */
static void fuzz_equalize_counts(reader *r, pixsum_ctx *ctx, const image *in)
{
    const pixsum_view *v = &in->view;
    size_t levels = v->type == PIXSUM_U8 ? 256 : 65536, n = levels * v->channels;
    size_t es = pixsum_type_size(v->type);
    size_t bytes = v->width * v->height * v->depth * v->channels * (es ? es : 1);
    uint64_t *counts = malloc(n * sizeof *counts);
    unsigned char *a = malloc(bytes), *b = malloc(bytes);
    if (!counts || !a || !b)
        goto done;
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    int own = take_u8(r) & 1;
    int hist_st = pixsum_histogram(ctx, v, &spec, counts, n, NULL);
    if (!own || hist_st != PIXSUM_OK)
        for (size_t i = 0; i < n; i++)
            counts[i] = take_u8(r);
    memset(a, FILL, bytes);
    memset(b, FILL, bytes);
    pixsum_view av = pixsum_view_3d(a, v->type, v->width, v->height, v->depth, v->channels, 0,
                                    0);
    pixsum_view bv = av;
    bv.data = b;
    size_t given = n - (take_u8(r) % 16 == 0); /* sometimes one count short: refused */
    int st = pixsum_equalize_counts(ctx, v, &av, counts, given);
    if (st != PIXSUM_OK) {
        if (!untouched(a, bytes))
            abort();
        goto done;
    }
    if (given != n)
        abort(); /* a short counts array must be refused */
    if (own && hist_st == PIXSUM_OK &&
        (pixsum_equalize(ctx, v, &bv, NULL) != PIXSUM_OK || memcmp(a, b, bytes) != 0))
        abort(); /* equalised by its own histogram: pixsum_equalize()'s result */
done:
    free(counts);
    free(a);
    free(b);
}

static int64_t sample_i(const pixsum_view *v, size_t x, size_t y, size_t c)
{
    const char *row = (const char *)v->data + (ptrdiff_t)y * v->row_stride;
    size_t i = x * v->channels + c;
    switch (v->type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    default: return 0;
    }
}

/* Whether slice z of view b holds the bytes of the packed single image a. */
static int slice_same(const pixsum_view *b, size_t z, const pixsum_view *a)
{
    size_t row = a->width * a->channels * pixsum_type_size(a->type);
    for (size_t y = 0; y < a->height; y++)
        if (memcmp((const char *)b->data + (ptrdiff_t)z * b->slice_stride +
                       (ptrdiff_t)y * b->row_stride,
                   (const char *)a->data + (ptrdiff_t)y * a->row_stride, row) != 0)
            return 0;
    return 1;
}

/* The slices of `in` as a box filter batch (pixsum_box_filter() of a view
 * of depth N, output of depth N, sometimes one image short): a failure
 * leaves the output untouched; on success each image equals the call on
 * its slice alone. */
static void fuzz_box_filter_batch(reader *r, pixsum_ctx *ctx, const image *in)
{
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = take_u8(r) % 9;
    spec.kh = take_u8(r) % 9;
    spec.stat = (pixsum_box_stat)(take_u8(r) % 4);
    spec.border = (pixsum_border)(take_u8(r) % PIXSUM_BORDER_COUNT);
    spec.border_value = (double)(take_u8(r) % 3);
    pixsum_type ot = pixsum_box_filter_type(in->view.type, &spec);
    size_t ow, oh, n = in->view.depth, ch = in->view.channels;
    if (ot == PIXSUM_TYPE_NONE ||
        pixsum_box_filter_shape(&spec, in->view.width, in->view.height, &ow, &oh) != PIXSUM_OK)
        return;
    size_t d = n - (n > 1 && take_u8(r) % 8 == 0); /* sometimes one short: refused */
    size_t bytes = pixsum_packed_bytes(ot, ow, oh, d, ch), one_bytes = bytes / d;
    if (bytes == 0 || ow > 64 || oh > 64 || n > 64)
        return;
    unsigned char *buf = malloc(bytes), *one = malloc(one_bytes);
    if (!buf || !one)
        goto done;
    memset(buf, FILL, bytes);
    pixsum_view out = pixsum_view_3d(buf, ot, ow, oh, d, ch, 0, 0);
    int st = pixsum_box_filter(ctx, &in->view, &spec, &out);
    if (st != PIXSUM_OK) {
        if (!untouched(buf, bytes))
            abort();
        goto done;
    }
    if (d != n)
        abort(); /* an output of another depth must be refused */
    for (size_t z = 0; z < n; z++) {
        pixsum_view iz, oz = pixsum_view_2d(one, ot, ow, oh, ch, 0);
        if (pixsum_view_roi3d(&in->view, 0, 0, z, in->view.width, in->view.height, 1, &iz) !=
                PIXSUM_OK ||
            pixsum_box_filter(ctx, &iz, &spec, &oz) != PIXSUM_OK || !slice_same(&out, z, &oz))
            abort(); /* a batch's image differs from the call on its slice */
    }
done:
    free(buf);
    free(one);
}

/* pixsum_equalize_batch() of the slices (u8/u16), mask none, shared or per
 * image (fuzzed bits): a failure leaves the output untouched; on success each
 * image equals pixsum_equalize() of its slice with its mask. */
static void fuzz_equalize_batch(reader *r, pixsum_ctx *ctx, const image *in)
{
    const pixsum_view *v = &in->view;
    size_t n = v->depth, bytes = pixsum_packed_bytes(v->type, v->width, v->height, n,
                                                     v->channels);
    size_t plane = v->width * v->height;
    if (bytes == 0 || n > 64 || plane > 4096)
        return;
    unsigned mask_kind = take_u8(r) % 4; /* none, shared, per image, a wrong depth */
    size_t mdepth = mask_kind == 1 ? 1 : mask_kind == 2 ? n : n + 1;
    unsigned char *out = malloc(bytes), *one = malloc(bytes / n);
    uint8_t *mask = mask_kind ? malloc(plane * mdepth) : NULL;
    if (!out || !one || (mask_kind && !mask))
        goto done;
    for (size_t i = 0; mask && i < plane * mdepth; i++)
        mask[i] = take_u8(r) & 1;
    pixsum_view mv = pixsum_view_3d(mask, PIXSUM_U8, v->width, v->height, mdepth, 1, 0, 0);
    memset(out, FILL, bytes);
    pixsum_view ov = pixsum_view_3d(out, v->type, v->width, v->height, n, v->channels, 0, 0);
    int st = pixsum_equalize_batch(ctx, v, &ov, mask ? &mv : NULL);
    if (st != PIXSUM_OK) {
        if (!untouched(out, bytes))
            abort();
        goto done;
    }
    if (mask_kind == 3 && mdepth != 1)
        abort(); /* a mask of another depth must be refused */
    for (size_t z = 0; z < n; z++) {
        pixsum_view iz, mz, oz = pixsum_view_2d(one, v->type, v->width, v->height,
                                                v->channels, 0);
        (void)pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &iz);
        if (mask)
            (void)pixsum_view_roi3d(&mv, 0, 0, mdepth == 1 ? 0 : z, v->width, v->height, 1,
                                    &mz);
        if (pixsum_equalize(ctx, &iz, &oz, mask ? &mz : NULL) != PIXSUM_OK ||
            !slice_same(&ov, z, &oz))
            abort(); /* a batch's image differs from the call on its slice */
    }
done:
    free(out);
    free(one);
    free(mask);
}

/* pixsum_otsu_batch() of the slices with fuzzed bins, range and flags: on
 * success each result equals pixsum_otsu_image() of its slice with the bins
 * and range the result reports; a batch of too few results is refused. */
static void fuzz_otsu_batch(reader *r, pixsum_ctx *ctx, const image *in)
{
    size_t n = in->view.depth, nres = n - (take_u8(r) % 8 == 0);
    unsigned flags = take_u8(r) & (PIXSUM_HIST_RANGE_PER_IMAGE | PIXSUM_HIST_CLOSED_LAST |
                                   PIXSUM_HIST_F32_EDGES | 2u);
    pixsum_hist_spec spec = {0};
    spec.bins = take_u8(r) % 40;
    if (take_u8(r) & 1) {
        spec.lo = (double)(int)(take_u8(r) % 16) - 8;
        spec.hi = spec.lo + (double)(take_u8(r) % 300);
    }
    if (n > 256 || nres == 0)
        return;
    pixsum_otsu_result *res = calloc(n, sizeof *res);
    if (!res)
        return;
    int st = pixsum_otsu_batch(ctx, &in->view, &spec, flags, res, nres);
    if (st == PIXSUM_OK && (nres < n || (flags & 2u)))
        abort();
    for (size_t z = 0; st == PIXSUM_OK && z < n; z++) {
        pixsum_view iz;
        pixsum_otsu_result one;
        pixsum_hist_spec pinned = {res[z].info.bins, res[z].info.lo, res[z].info.hi, NULL};
        (void)pixsum_view_roi3d(&in->view, 0, 0, z, in->view.width, in->view.height, 1, &iz);
        if (pixsum_otsu_image(ctx, &iz, &pinned, flags & ~PIXSUM_HIST_RANGE_PER_IMAGE,
                              &one) != PIXSUM_OK ||
            memcmp(&one, &res[z], sizeof one) != 0)
            abort(); /* a batch's result differs from the call on its slice */
    }
    free(res);
}

/* pixsum_box_filter() with a fuzzed window, statistic, border and output. */
static void fuzz_box_filter(reader *r, pixsum_ctx *ctx, const image *in)
{
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = take_u8(r) % 70;  /* 0 is refused; some wider than the image */
    spec.kh = take_u8(r) % 70;
    spec.stat = (pixsum_box_stat)(take_u8(r) % 5);
    spec.border = (pixsum_border)(take_u8(r) % 7);
    unsigned vsel = take_u8(r);
    spec.border_value = (vsel & 1) ? take_f64(r) : (double)(int)(vsel >> 1) - 20;
    unsigned sel = take_u8(r);
    pixsum_type ot = output_types[sel % (sizeof output_types / sizeof output_types[0])];
    if (ot == PIXSUM_TYPE_NONE || (sel & 0x80))
        ot = pixsum_box_filter_type(in->view.type, &spec);
    if (ot == PIXSUM_TYPE_NONE)
        ot = (sel & 0x40) ? PIXSUM_U16 : PIXSUM_F64;
    size_t ow = in->view.width, oh = in->view.height;
    (void)pixsum_box_filter_shape(&spec, in->view.width, in->view.height, &ow, &oh);
    int shape_err = (int)(take_u8(r) % 8) - 1;
    if (shape_err > 1 || shape_err < -1)
        shape_err = 0;
    ow = (size_t)((long)ow + shape_err);
    size_t ch = in->view.channels, es = pixsum_type_size(ot);
    if (es == 0 || ch == 0 || ch > 4 || ow > 64 || oh > 64)
        return;
    size_t bytes = (ow ? ow : 1) * (oh ? oh : 1) * ch * es;
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return;
    memset(buf, FILL, bytes);
    pixsum_view out = pixsum_view_2d(buf, ot, ow, oh, ch, 0);
    int st = pixsum_box_filter(ctx, &in->view, &spec, &out);
    {
        /* the CUDA entry validates as the CPU does; on a device no system has
         * (1024) it then reports UNAVAILABLE, and never writes */
        unsigned char *gbuf = malloc(bytes);
        pixsum_ctx *gctx = pixsum_ctx_new();
        if (gbuf && gctx && pixsum_ctx_set(gctx, PIXSUM_PARAM_CUDA_DEVICE, 1024) == PIXSUM_OK) {
            memset(gbuf, FILL, bytes);
            pixsum_view gout = out;
            gout.data = gbuf;
            int gst = pixsum_cuda_box_filter(gctx, &in->view, &spec, &gout, NULL);
            /* the CPU's answer may come from its context's method rather than
             * from validation (a method that is not a box filter: UNSUPPORTED;
             * an allocation: NO_MEMORY); the CUDA entry then finds the request
             * valid and reports the missing device (or, for its own window
             * limit, UNSUPPORTED) */
            int by_method = st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_UNAVAILABLE ||
                            st == PIXSUM_ERR_NO_MEMORY;
            int valid = st == PIXSUM_OK || by_method;
            if (valid ? gst != PIXSUM_ERR_UNAVAILABLE && gst != PIXSUM_ERR_UNSUPPORTED
                      : gst != st)
                abort(); /* the CUDA entry's validation differs from the CPU's */
            if (!untouched(gbuf, bytes))
                abort();
        }
        pixsum_ctx_free(gctx);
        free(gbuf);
    }
    if (st != PIXSUM_OK) {
        if (!untouched(buf, bytes))
            abort(); /* documented: on error the output is left untouched */
        free(buf);
        return;
    }
    if (shape_err != 0 || in->view.depth != 1)
        abort(); /* a wrong output shape or a volume must be refused */
    int int_in = is_integer_type(in->view.type);
    for (size_t y = 0; y < oh; y++)
        for (size_t x = 0; x < ow; x++)
            for (size_t c = 0; c < ch; c++) {
                const char *row = (const char *)buf + y * ow * ch * es;
                size_t i = x * ch + c;
                if (ot == PIXSUM_F32 || ot == PIXSUM_F64) {
                    double v = ot == PIXSUM_F32 ? ((const float *)row)[i]
                                                : ((const double *)row)[i];
                    if ((spec.stat == PIXSUM_BOX_VAR || spec.stat == PIXSUM_BOX_STD) &&
                        v < 0)
                        abort(); /* a negative variance */
                    continue;
                }
                if (!int_in)
                    abort(); /* float images have float outputs only */
                long x0 = (long)x - (long)(spec.kw / 2), y0 = (long)y - (long)(spec.kh / 2);
                if (spec.border == PIXSUM_BORDER_VALID)
                    x0 = (long)x, y0 = (long)y;
                __int128 sum = 0;
                int64_t n = 0;
                for (long wy = y0; wy < y0 + (long)spec.kh; wy++)
                    for (long wx = x0; wx < x0 + (long)spec.kw; wx++) {
                        long sy = ref_border_map(wy, (long)in->view.height, spec.border);
                        long sx = ref_border_map(wx, (long)in->view.width, spec.border);
                        if (sy < 0 || sx < 0) {
                            if (spec.border == PIXSUM_BORDER_SHRINK)
                                continue;
                            sum += (int64_t)spec.border_value;
                        } else {
                            sum += sample_i(&in->view, (size_t)sx, (size_t)sy, c);
                        }
                        n++;
                    }
                if (spec.stat == PIXSUM_BOX_MEAN) {
                    __int128 q = sum / n, rem = sum - q * n;
                    if (2 * rem > n || (2 * rem == n && (q & 1)))
                        q++;
                    sum = q;
                } else if (spec.stat != PIXSUM_BOX_SUM) {
                    abort(); /* variances are floats */
                }
                int64_t got;
                switch (ot) {
                case PIXSUM_U8: got = ((const uint8_t *)row)[i]; break;
                case PIXSUM_U16: got = ((const uint16_t *)row)[i]; break;
                case PIXSUM_I32: got = ((const int32_t *)row)[i]; break;
                case PIXSUM_U32: got = ((const uint32_t *)row)[i]; break;
                case PIXSUM_I64: got = ((const int64_t *)row)[i]; break;
                case PIXSUM_U64: got = (int64_t)((const uint64_t *)row)[i]; break;
                default: abort();
                }
                if ((__int128)got != sum)
                    abort(); /* an integer box filter output differs from the definition */
            }
    free(buf);
}

/* pixsum_threshold_local() / pixsum_normalize_local() with a fuzzed window,
 * border, method, parameters and outputs of the input's depth (a view of
 * depth N is a batch; sometimes one image short, which must be refused): on
 * error the outputs are untouched, the CUDA entries validate as the CPU ones
 * do (and refuse batches), a mask holds only 0 and the foreground value, and
 * each image of a batch equals the call on its slice alone. */
static void fuzz_local(reader *r, pixsum_ctx *ctx, const image *in)
{
    unsigned sel = take_u8(r);
    int normalize = sel & 1, outs = 1 + (int)((sel >> 1) % 3);
    pixsum_threshold_spec ts;
    memset(&ts, 0, sizeof ts);
    ts.kw = take_u8(r) % 40; /* 0 is refused; some wider than the image */
    ts.kh = take_u8(r) % 40;
    ts.border = (pixsum_border)(take_u8(r) % 7);
    unsigned vsel = take_u8(r);
    ts.border_value = (vsel & 1) ? take_f64(r) : (double)(int)(vsel >> 1) - 20;
    ts.method = (pixsum_threshold_method)(take_u8(r) % 4);
    ts.k = (sel & 0x10) ? take_f64(r) : 0.2;
    ts.r = (sel & 0x20) ? take_f64(r) : 0;
    ts.offset = (sel & 0x40) ? take_f64(r) : 1.5;
    ts.foreground = (uint8_t)take_u8(r);
    pixsum_normalize_spec ns = {ts.kw, ts.kh, ts.border, ts.border_value,
                                (sel & 0x80) ? take_f64(r) : 0.25};
    pixsum_type mt = (sel & 8) ? PIXSUM_F32 : (sel & 4) ? PIXSUM_U16 : PIXSUM_F64;
    size_t ow = in->view.width, oh = in->view.height;
    pixsum_box_filter_spec bs = {ts.kw ? ts.kw : 1, ts.kh ? ts.kh : 1, PIXSUM_BOX_SUM,
                                 ts.border, 0};
    (void)pixsum_box_filter_shape(&bs, in->view.width, in->view.height, &ow, &oh);
    size_t ch = normalize ? in->view.channels : 1, es = pixsum_type_size(mt);
    size_t n = in->view.depth;
    if (es == 0 || ch == 0 || ch > 4 || ow > 64 || oh > 64 || n > 16)
        return;
    size_t d = n - (n > 1 && take_u8(r) % 8 == 0);
    size_t mone = (ow ? ow : 1) * (oh ? oh : 1) * ch * es, kone = (ow ? ow : 1) * (oh ? oh : 1);
    size_t mbytes = mone * d, kbytes = kone * d;
    unsigned char *mb = malloc(mbytes), *kb = malloc(kbytes);
    unsigned char *gm = malloc(mbytes), *gk = malloc(kbytes);
    pixsum_ctx *gctx = pixsum_ctx_new();
    if (!mb || !kb || !gm || !gk || !gctx ||
        pixsum_ctx_set(gctx, PIXSUM_PARAM_CUDA_DEVICE, 1024) != PIXSUM_OK)
        goto done;
    memset(mb, FILL, mbytes);
    memset(kb, FILL, kbytes);
    memset(gm, FILL, mbytes);
    memset(gk, FILL, kbytes);
    pixsum_view map = pixsum_view_3d(mb, mt, ow, oh, d, ch, 0, 0);
    pixsum_view mask = pixsum_view_3d(kb, PIXSUM_U8, ow, oh, d, 1, 0, 0);
    pixsum_view gmap = map, gmask = mask;
    gmap.data = gm;
    gmask.data = gk;
    int st, gst;
    if (normalize) {
        st = pixsum_normalize_local(ctx, &in->view, &ns, &map);
        gst = pixsum_cuda_normalize_local(gctx, &in->view, &ns, &gmap, NULL);
    } else {
        st = pixsum_threshold_local(ctx, &in->view, &ts, outs & 1 ? &map : NULL,
                                    outs & 2 ? &mask : NULL);
        gst = pixsum_cuda_threshold_local(gctx, &in->view, &ts, outs & 1 ? &gmap : NULL,
                                          outs & 2 ? &gmask : NULL, NULL);
    }
    /* as in fuzz_box_filter: a valid request meets the missing device */
    int by_method = st == PIXSUM_ERR_UNSUPPORTED || st == PIXSUM_ERR_UNAVAILABLE ||
                    st == PIXSUM_ERR_NO_MEMORY;
    if ((st == PIXSUM_OK || by_method) ? gst != PIXSUM_ERR_UNAVAILABLE &&
                                             gst != PIXSUM_ERR_UNSUPPORTED
                                       : gst != st)
        abort(); /* the CUDA entries' validation differs from the CPU's */
    if (!untouched(gm, mbytes) || !untouched(gk, kbytes))
        abort();
    if (st != PIXSUM_OK) {
        if (!untouched(mb, mbytes) || !untouched(kb, kbytes))
            abort(); /* documented: on error the outputs are left untouched */
        goto done;
    }
    if (d != n || (mt == PIXSUM_U16 && (normalize || (outs & 1))) ||
        (!normalize && in->view.channels != 1))
        abort(); /* outputs of another depth, a u16 map (a mask alone has no map) or a
                    multi-channel threshold must be refused */
    if (!normalize && (outs & 2)) {
        uint8_t fg = ts.foreground ? ts.foreground : 255;
        for (size_t i = 0; i < ow * oh * d; i++)
            if (kb[i] != 0 && kb[i] != fg)
                abort(); /* a mask value other than 0 and the foreground */
    }
    for (size_t z = 0; n > 1 && z < n; z++) { /* gm, gk: untouched, as large as one image */
        pixsum_view iz, om = pixsum_view_2d(gm, mt, ow, oh, ch, 0);
        pixsum_view ok = pixsum_view_2d(gk, PIXSUM_U8, ow, oh, 1, 0);
        if (pixsum_view_roi3d(&in->view, 0, 0, z, in->view.width, in->view.height, 1, &iz) !=
            PIXSUM_OK)
            abort();
        st = normalize ? pixsum_normalize_local(ctx, &iz, &ns, &om)
                       : pixsum_threshold_local(ctx, &iz, &ts, outs & 1 ? &om : NULL,
                                                outs & 2 ? &ok : NULL);
        if (st != PIXSUM_OK || ((normalize || (outs & 1)) && !slice_same(&map, z, &om)) ||
            (!normalize && (outs & 2) && !slice_same(&mask, z, &ok)))
            abort(); /* a batch's image differs from the call on its slice */
    }
done:
    pixsum_ctx_free(gctx);
    free(mb);
    free(kb);
    free(gm);
    free(gk);
}

/* pixsum_integral_nd(): the image's memory read as an array of its last 1..4
 * axes of (depth, height, width, channels), a fuzzed table type, channel
 * axis and output gaps. On error the table is untouched; on success an
 * integer table's last entry (channel_axis -1) is the modular sum of every
 * element. */
static int64_t nd_sample(const unsigned char *p, pixsum_type t)
{
    uint8_t u8;
    uint16_t u16;
    int16_t i16;
    int32_t i32;
    uint32_t u32;
    switch (t) {
    case PIXSUM_U8: memcpy(&u8, p, 1); return u8;
    case PIXSUM_U16: memcpy(&u16, p, 2); return u16;
    case PIXSUM_I16: memcpy(&i16, p, 2); return i16;
    case PIXSUM_I32: memcpy(&i32, p, 4); return i32;
    case PIXSUM_U32: memcpy(&u32, p, 4); return u32;
    default: return 0;
    }
}

static void fuzz_integral_nd(reader *r, pixsum_ctx *ctx, const image *in)
{
    const pixsum_view *v = &in->view;
    size_t es = pixsum_type_size(v->type);
    size_t all_shape[4] = {v->depth, v->height, v->width, v->channels};
    ptrdiff_t all_strides[4] = {v->slice_stride, v->row_stride,
                                (ptrdiff_t)(v->channels * (es ? es : 1)),
                                (ptrdiff_t)(es ? es : 1)};
    size_t n = 1 + take_u8(r) % 4, first = 4 - n;
    if (take_u8(r) == 255)
        n = 0; /* an invalid axis count */
    pixsum_nd_array a = {v->data, v->type, n, all_shape + first, all_strides + first};
    pixsum_type ot = output_types[take_u8(r) % 8];
    size_t oes = pixsum_type_size(ot) ? pixsum_type_size(ot) : 1;
    size_t gap = take_u8(r) % 3, count = 1;
    size_t oshape[4];
    ptrdiff_t ostrides[4];
    for (size_t k = 0; k < n; k++) {
        oshape[k] = all_shape[first + k];
        count *= oshape[k] ? oshape[k] : 1;
    }
    ptrdiff_t step = (ptrdiff_t)oes;
    for (size_t k = n; k-- > 0;) {
        ostrides[k] = step;
        step = step * (ptrdiff_t)(oshape[k] ? oshape[k] : 1) + (ptrdiff_t)(gap * oes);
    }
    size_t bytes = (size_t)step + 16;
    unsigned char *out = malloc(bytes), *before = malloc(bytes);
    if (!out || !before) {
        free(out);
        free(before);
        return;
    }
    memset(out, FILL, bytes);
    memcpy(before, out, bytes);
    pixsum_nd_array o = {out, ot, n, oshape, ostrides};
    int channel_axis = (int)(take_u8(r) % 6) - 1;
    int st = pixsum_integral_nd(ctx, &a, &o, channel_axis);
    if (st != PIXSUM_OK) {
        if (memcmp(out, before, bytes) != 0)
            abort(); /* documented: on error the output is left untouched */
    } else if (channel_axis < 0 && (ot == PIXSUM_U32 || ot == PIXSUM_U64 || ot == PIXSUM_I64)) {
        /* the last entry sums every element (modular in the table's width) */
        uint64_t sum = 0;
        size_t idx[4] = {0, 0, 0, 0};
        for (size_t e = 0; e < count; e++) {
            const unsigned char *p = (const unsigned char *)v->data;
            for (size_t k = 0; k < n; k++)
                p += (ptrdiff_t)idx[k] * all_strides[first + k];
            sum += (uint64_t)nd_sample(p, v->type);
            for (size_t k = n; k-- > 0;)
                if (++idx[k] < oshape[k])
                    break;
                else
                    idx[k] = 0;
        }
        const unsigned char *last = out;
        for (size_t k = 0; k < n; k++)
            last += (ptrdiff_t)(oshape[k] - 1) * ostrides[k];
        uint64_t got = table_get(last, ot);
        if (ot == PIXSUM_U32)
            sum = (uint32_t)sum;
        if (got != sum)
            abort();
    }
    free(out);
    free(before);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size, 0};
    unsigned op = take_u8(&r);
    pixsum_type type = (pixsum_type)(take_u8(&r) % 11); /* 0 and 10 are invalid */
    size_t w = take_u8(&r) % 49, h = take_u8(&r) % 49;
    size_t d = 1 + take_u8(&r) % 3;
    size_t c = take_u8(&r) % 6; /* 0 and 5 are invalid */
    unsigned layout = take_u8(&r);
    size_t row_gap = (layout & 3) ? take_u8(&r) % 9 : 0;
    size_t slice_gap = (layout & 4) ? take_u8(&r) % 9 : 0;
    size_t misalign = (layout & 8) ? take_u8(&r) % 8 : 0;
    int neg_rows = (layout >> 4) & 1, neg_slices = (layout >> 5) & 1;
    if (d > 1 && (op & 0x80) == 0)
        d = 1; /* mostly 2-D */

    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return 0;
    unsigned method_sel = take_u8(&r);
    size_t nmethods = 0;
    const pixsum_method_info *methods = pixsum_methods(&nmethods);
    if (method_sel == 255) {
        char name[16];
        for (size_t i = 0; i < sizeof name; i++)
            name[i] = (char)take_u8(&r);
        name[sizeof name - 1] = '\0';
        (void)pixsum_ctx_set_method(ctx, name); /* mostly unknown names */
    } else if (methods && nmethods && method_sel % (nmethods + 1) != 0) {
        if (pixsum_ctx_set_method(ctx, methods[method_sel % (nmethods + 1) - 1].name) !=
            PIXSUM_OK)
            abort(); /* every listed name must be accepted */
    }
    unsigned flags = take_u8(&r);
    (void)pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, (intptr_t)(flags & 3));
    (void)pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, (flags >> 2) & 1);
    (void)pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, (flags >> 3) & 1);
    if (flags & 0x80) /* out-of-range parameter values */
        (void)pixsum_ctx_set(ctx, (pixsum_param)(take_u8(&r) % 9), (intptr_t)take_u64(&r));
    if (flags & 0x10) { /* the same results from every instruction set */
        static const char *const isa_names[] = {"scalar", "sse2", "avx2", "avx512", "avx9"};
        unsigned pick = take_u8(&r) % 5;
        int st = pixsum_cpu_force_isa(isa_names[pick]);
        if ((pick == 4) != (st == PIXSUM_ERR_INVALID_ARG) || !pixsum_cpu_isa())
            abort();
    }

    const uint8_t *pixels = data + (r.pos < size ? r.pos : size);
    size_t npixels = size - (r.pos < size ? r.pos : size);
    /* the tail is both the pixels and the remaining parameters: a second
     * cursor keeps the two from being the same bytes in the same order */
    reader pr = {pixels, npixels, npixels / 2};

    image in;
    if (make_image(&in, type, w, h, d, c, row_gap, slice_gap, neg_rows, neg_slices,
                   misalign, pixels, npixels) != 0) {
        pixsum_ctx_free(ctx);
        (void)pixsum_cpu_force_isa(NULL);
        return 0;
    }
    (void)pixsum_view_check(&in.view);
    switch (op % 8) {
    case 0: fuzz_integral(&pr, ctx, &in, (op & 0x40) ? 3 : 0); break;
    case 1: fuzz_integral(&pr, ctx, &in, 1); break;
    case 2: fuzz_integral(&pr, ctx, &in, 2); break;
    case 3: fuzz_histogram(&pr, ctx, &in, pixels, npixels); break;
    case 4:
        if (op & 0x40)
            fuzz_integral_nd(&pr, ctx, &in);
        else
            fuzz_ihist(&pr, ctx, &in);
        break;
    case 5:
        if (op & 0x40)
            fuzz_equalize_counts(&pr, ctx, &in);
        else
            fuzz_equalize(&pr, ctx, &in);
        fuzz_equalize_batch(&pr, ctx, &in);
        fuzz_otsu_batch(&pr, ctx, &in);
        break;
    case 7:
        if (op & 0x40)
            fuzz_carry_tile(&pr, ctx, &in);
        else
            fuzz_carry(&pr, ctx, &in);
        break;
    case 6:
        if (op & 0x40) {
            if (op & 0x20)
                fuzz_local(&pr, ctx, &in);
            else
            {
                fuzz_box_filter(&pr, ctx, &in);
                fuzz_box_filter_batch(&pr, ctx, &in);
            }
            break;
        }
        /* fall through */
    default: {
        pixsum_view roi;
        size_t x = take_u8(&pr), y = take_u8(&pr);
        if (pixsum_view_roi(&in.view, x % (w + 1), y % (h + 1), take_u8(&pr) % (w + 1),
                            take_u8(&pr) % (h + 1), &roi) == PIXSUM_OK)
            fuzz_integral(&pr, ctx, &(image){NULL, 0, roi}, 0);
        break;
    }
    }
    free_image(&in);
    pixsum_ctx_free(ctx);
    (void)pixsum_cpu_force_isa(NULL);
    return 0;
}

