/*
 * test_cuda_box.c - pixsum_cuda_box_filter() against the CPU operation
 * pixsum_box_filter() (itself tested against the window definition in
 * test_box_filter.c and the API fuzz target) on the same image: integer
 * outputs, u8/u16 means and float sums and means of integer images must be
 * the same bits; variances of integer images and every result of float
 * images agree within the documented f64 bound. Random cases cover every
 * input type, statistic, border and output type the CPU accepts, 1-4
 * channels, 1x1, 1xN, Nx1, odd and random sizes, windows larger than the
 * image, pitched input and output rows, several tiles and bands, a NULL and
 * a real context and stream; then the variance of 1e8 + {0, 1, 2, 3}, a
 * window at the kernel's widest, the refusals (same codes as the CPU for
 * invalid requests, misaligned views and overlap; host memory, too wide a
 * window), batches (views of depth N = 1, 3, 17 and 70001, padding between
 * rows and images: each image equal to the single-image GPU call bit for
 * bit, and to the CPU batch where results are exact), and an 8192 x 8192
 * image (left out with PIXSUM_TEST_NO_LARGE=1).
 * PIXSUM_TEST_QUICK=1 runs fewer cases (for compute-sanitizer).
 *
 * Without a CUDA device (or without CUDA in the build) it prints "skipped: no
 * CUDA device" and exits 77. PIXSUM_TEST_SEED=N replays a run;
 * PIXSUM_TEST_FILTER=PATTERN (cmocka's wildcards) runs only the tests it
 * names.
 */
#include "pixsum.h"

#include <stdio.h>
#include <stdlib.h>

#ifndef PIXSUM_TEST_HAVE_CUDA
int main(void)
{
    printf("test_cuda_box: skipped: no CUDA device (library built without CUDA)\n");
    return 77;
}
#else

#include "pixsum_cuda.h"

#include <cuda_runtime_api.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "testutil_cuda.h"

static const pixsum_type in_types[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                       PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};
static const pixsum_type out_types[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I32, PIXSUM_U32,
                                        PIXSUM_I64, PIXSUM_U64, PIXSUM_F32, PIXSUM_F64};

static int is_float(pixsum_type t)
{
    return t == PIXSUM_F32 || t == PIXSUM_F64;
}

static double load(const void *row, pixsum_type t, size_t i)
{
    switch (t) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    case PIXSUM_F32: return ((const float *)row)[i];
    case PIXSUM_F64: return ((const double *)row)[i];
    case PIXSUM_U64: return (double)((const uint64_t *)row)[i];
    case PIXSUM_I64: return (double)((const int64_t *)row)[i];
    default: return 0;
    }
}

/* One host image and its device copy (rows `pitch` bytes apart on both). */
typedef struct image {
    pixsum_view host, dev;
    void *hmem, *dmem;
} image;

static void image_new(image *im, pixsum_type t, size_t w, size_t h, size_t ch, size_t pad)
{
    size_t es = pixsum_type_size(t), pitch = (w * ch + pad) * es, bytes = pitch * h;
    im->hmem = malloc(bytes ? bytes : 1);
    assert_non_null(im->hmem);
    CU_OK(cudaMalloc(&im->dmem, bytes ? bytes : 1));
    im->host = pixsum_view_2d(im->hmem, t, w, h, ch, (ptrdiff_t)pitch);
    im->dev = pixsum_view_2d(im->dmem, t, w, h, ch, (ptrdiff_t)pitch);
}

static void image_free(image *im)
{
    free(im->hmem);
    cudaFree(im->dmem);
}

/* Random samples; extreme (1 in 4): the type's extreme values, for the
 * overflow and wrap paths; i16/i32 half negative. */
static void image_fill(image *im, int extreme)
{
    size_t es = pixsum_type_size(im->host.type);
    for (size_t y = 0; y < im->host.height; y++) {
        unsigned char *row = (unsigned char *)im->hmem + y * (size_t)im->host.row_stride;
        fill_random(im->host.type, row, im->host.width * im->host.channels,
                    extreme && (rnd() & 1));
        memset(row + im->host.width * im->host.channels * es, 0x5a,
               (size_t)im->host.row_stride - im->host.width * im->host.channels * es);
    }
    CU_OK(cudaMemcpy(im->dmem, im->hmem, (size_t)im->host.row_stride * im->host.height,
                     cudaMemcpyHostToDevice));
}

/* Largest |sample| of the image (and the constant border value). */
static double image_max(const image *im, double cval)
{
    double m = fabs(cval);
    for (size_t y = 0; y < im->host.height; y++) {
        const unsigned char *row = (const unsigned char *)im->hmem + y * (size_t)im->host.row_stride;
        for (size_t i = 0; i < im->host.width * im->host.channels; i++) {
            double v = fabs(load(row, im->host.type, i));
            if (v > m)
                m = v;
        }
    }
    return m;
}

static size_t cases_run, cases_exact, cases_bound, cases_wide;

/* The GPU takes windows with (kw - 1) x channels up to at least this many
 * samples (pixsum_cuda.h); wider ones may be refused with
 * PIXSUM_ERR_UNSUPPORTED, which run_case() reports as WIDE_REFUSED. */
#define WIDEST_MIN 1990
#define WIDE_REFUSED (-1)

/* Runs one request on the CPU and the GPU and compares. Returns the CPU's
 * status (the GPU must return the same). */
static int run_case(const image *in, const pixsum_box_filter_spec *spec, pixsum_type ot,
                    size_t out_pad, pixsum_ctx *ctx, void *stream)
{
    size_t ow = 0, oh = 0;
    int sst = pixsum_box_filter_shape(spec, in->host.width, in->host.height, &ow, &oh);
    if (sst != PIXSUM_OK)
        ow = oh = 1;
    image out;
    image_new(&out, ot, ow, oh, in->host.channels, out_pad);
    size_t bytes = (size_t)out.host.row_stride * oh;
    unsigned char *got = malloc(bytes ? bytes : 1);
    assert_non_null(got);
    memset(out.hmem, 0xa5, bytes);
    CU_OK(cudaMemset(out.dmem, 0xa5, bytes));
    int cst = pixsum_box_filter(NULL, &in->host, spec, &out.host);
    int gst = pixsum_cuda_box_filter(ctx, &in->dev, spec, &out.dev, stream);
    if (cst == PIXSUM_OK && gst == PIXSUM_ERR_UNSUPPORTED &&
        (spec->kw - 1) * in->host.channels > WIDEST_MIN) {
        cases_wide++; /* documented: wider than the kernel's column sums */
        free(got);
        image_free(&out);
        return WIDE_REFUSED;
    }
    if (gst != cst)
        fail_msg("%s %zux%zu x%zu, window %zux%zu stat %d border %s -> %s: CPU status %d (%s), "
                 "GPU %d (%s)", pixsum_type_name(in->host.type), in->host.width,
                 in->host.height, in->host.channels, spec->kw, spec->kh, (int)spec->stat,
                 pixsum_border_name(spec->border), pixsum_type_name(ot), cst,
                 pixsum_strerror(cst), gst, pixsum_last_error());
    if (cst == PIXSUM_OK) {
        CU_OK(stream ? cudaStreamSynchronize((cudaStream_t)stream) : cudaDeviceSynchronize());
        CU_OK(cudaMemcpy(got, out.dmem, bytes, cudaMemcpyDeviceToHost));
        int int_in = !is_float(in->host.type);
        int exact = !is_float(ot) ||
                    (int_in && (spec->stat == PIXSUM_BOX_SUM || spec->stat == PIXSUM_BOX_MEAN));
        size_t es = pixsum_type_size(ot), n = spec->kw * spec->kh;
        double M = image_max(in, spec->border == PIXSUM_BORDER_CONSTANT ? spec->border_value
                                                                         : 0);
        double scale = spec->stat == PIXSUM_BOX_SUM ? M * (double)n
                       : spec->stat == PIXSUM_BOX_VAR ? M * M : M;
        double acc = ldexp(4.0 * (double)(n + in->host.width + in->host.height +
                                          spec->kw + spec->kh + 16), -52);
        for (size_t y = 0; y < oh; y++) {
            const unsigned char *c = (const unsigned char *)out.hmem + y * (size_t)out.host.row_stride;
            const unsigned char *g = got + y * (size_t)out.host.row_stride;
            if (exact) {
                if (memcmp(c, g, ow * in->host.channels * es) != 0) {
                    size_t i = 0;
                    while (memcmp(c + i * es, g + i * es, es) == 0)
                        i++;
                    fail_msg("%s %zux%zu x%zu (pitch %td), window %zux%zu stat %d border %s "
                             "(value %g) -> %s: row %zu sample %zu: CPU %.17g, GPU %.17g",
                             pixsum_type_name(in->host.type), in->host.width,
                             in->host.height, in->host.channels, in->host.row_stride,
                             spec->kw, spec->kh, (int)spec->stat,
                             pixsum_border_name(spec->border), spec->border_value,
                             pixsum_type_name(ot), y, i, load(c, ot, i), load(g, ot, i));
                }
                continue;
            }
            for (size_t i = 0; i < ow * in->host.channels; i++) {
                double cv = load(c, ot, i), gv = load(g, ot, i);
                double tol = acc * scale * (spec->stat == PIXSUM_BOX_STD ? 1e3 : 1.0) +
                             (ot == PIXSUM_F32 ? ldexp(fabs(cv), -22) : ldexp(fabs(cv), -50));
                if (spec->stat == PIXSUM_BOX_STD) /* sqrt near 0 magnifies the variance's error */
                    tol += sqrt(acc * M * M * 4);
                if (!(fabs(cv - gv) <= tol) || (spec->stat >= PIXSUM_BOX_VAR && gv < 0))
                    fail_msg("%s %zux%zu x%zu, window %zux%zu stat %d border %s -> %s: row %zu "
                             "sample %zu: CPU %.17g, GPU %.17g (tolerance %.3g)",
                             pixsum_type_name(in->host.type), in->host.width,
                             in->host.height, in->host.channels, spec->kw, spec->kh,
                             (int)spec->stat, pixsum_border_name(spec->border),
                             pixsum_type_name(ot), y, i, cv, gv, tol);
            }
        }
        cases_run++;
        if (exact)
            cases_exact++;
        else
            cases_bound++;
    }
    free(got);
    image_free(&out);
    return cst;
}

static size_t pick_side(void)
{
    static const size_t fixed[] = {1, 2, 3, 7, 16, 33, 100};
    uint64_t r = rnd() % 10;
    if (r < 4)
        return fixed[rnd() % 7];
    if (r < 8)
        return 1 + rnd() % 150;
    return 150 + rnd() % 700; /* several tiles / bands */
}

static size_t pick_window(size_t side)
{
    uint64_t r = rnd() % 8;
    if (r == 0)
        return 1;
    if (r == 1)
        return side + 1 + rnd() % 9; /* larger than the image */
    if (r == 2)
        return 2 * (1 + rnd() % 8); /* even */
    return 1 + 2 * (rnd() % 12);
}

static void test_random_cases(void **state)
{
    (void)state;
    size_t cases = getenv("PIXSUM_TEST_QUICK") ? 40 : 1500;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    cudaStream_t s;
    CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t k = 0; k < cases; k++) {
        pixsum_type t = in_types[rnd() % 7];
        size_t ch = 1 + rnd() % 4, w = pick_side(), h = pick_side();
        size_t pad = (rnd() & 1) ? rnd() % 9 : 0;
        image in;
        image_new(&in, t, w, h, ch, pad);
        image_fill(&in, (rnd() & 3) == 0);
        for (int rep = 0; rep < 3; rep++) {
            pixsum_box_filter_spec spec;
            memset(&spec, 0, sizeof spec);
            spec.kw = pick_window(w);
            spec.kh = pick_window(h);
            spec.stat = (pixsum_box_stat)(rnd() % 4);
            spec.border = (pixsum_border)(rnd() % PIXSUM_BORDER_COUNT);
            if (spec.border == PIXSUM_BORDER_VALID && (rnd() & 3)) {
                spec.kw = 1 + rnd() % w;
                spec.kh = 1 + rnd() % h;
            }
            if (spec.border == PIXSUM_BORDER_CONSTANT)
                spec.border_value = is_float(t) ? (double)(rnd() % 1000) / 7.0 - 50
                                    : t == PIXSUM_I16 || t == PIXSUM_I32
                                        ? (double)(int)(rnd() % 200) - 100
                                        : (double)(rnd() % 200);
            pixsum_type ot = (rnd() & 1) ? pixsum_box_filter_type(t, &spec)
                                         : out_types[rnd() % 8];
            if (ot == PIXSUM_TYPE_NONE)
                ot = PIXSUM_F64;
            size_t out_pad = (rnd() & 1) ? rnd() % 5 : 0;
            int which = (int)(rnd() % 3);
            (void)run_case(&in, &spec, ot, out_pad, which ? ctx : NULL, which == 2 ? s : NULL);
        }
        image_free(&in);
    }
    CU_OK(cudaStreamDestroy(s));
    pixsum_ctx_free(ctx);
    printf("test_random_cases: %zu GPU results compared (%zu bit for bit, %zu within the "
           "bound), %zu windows refused as too wide\n", cases_run, cases_exact, cases_bound,
           cases_wide);
    assert_true(cases_run > cases / 2);
}

/* Every stat, border and default type on a few fixed shapes, channels 1-4. */
static void test_every_combination(void **state)
{
    (void)state;
    static const size_t shapes[][2] = {{67, 45}, {1, 1}, {1, 37}, {41, 1}, {600, 70}};
    int quick = getenv("PIXSUM_TEST_QUICK") != NULL; /* one shape, 3 channels */
    for (size_t si = 0; si < (quick ? 1u : 5u); si++)
        for (size_t ti = 0; ti < 7; ti++)
            for (size_t ch = quick ? 3 : 1; ch <= (quick ? 3u : 4u); ch++) {
                image in;
                image_new(&in, in_types[ti], shapes[si][0], shapes[si][1], ch, ch & 1);
                image_fill(&in, 0);
                for (int b = 0; b < PIXSUM_BORDER_COUNT; b++)
                    for (int st = 0; st < 4; st++) {
                        pixsum_box_filter_spec spec;
                        memset(&spec, 0, sizeof spec);
                        spec.kw = b == PIXSUM_BORDER_VALID ? (shapes[si][0] + 1) / 2 : 5;
                        spec.kh = b == PIXSUM_BORDER_VALID ? (shapes[si][1] + 1) / 2 : 4;
                        spec.stat = (pixsum_box_stat)st;
                        spec.border = (pixsum_border)b;
                        spec.border_value = 3;
                        pixsum_type ot = pixsum_box_filter_type(in_types[ti], &spec);
                        PX_OK(run_case(&in, &spec, ot, 0, NULL, NULL));
                        if (st == PIXSUM_BOX_MEAN || st >= PIXSUM_BOX_VAR)
                            PX_OK(run_case(&in, &spec, PIXSUM_F32, 0, NULL, NULL));
                    }
                image_free(&in);
            }
}

/* The one-channel sum and mean kernel on rows of several tiles: every type
 * pair it takes, the borders that map (and valid), odd and even windows, a
 * window wider than the image, aligned and unaligned rows, saturated images
 * (the largest sums of the integer rounding). */
static void test_fast_path(void **state)
{
    (void)state;
    static const struct {
        pixsum_type in, out;
        pixsum_box_stat stat;
    } pairs[] = {
        {PIXSUM_U8, PIXSUM_U8, PIXSUM_BOX_MEAN},    {PIXSUM_U8, PIXSUM_F32, PIXSUM_BOX_MEAN},
        {PIXSUM_U8, PIXSUM_F64, PIXSUM_BOX_MEAN},   {PIXSUM_U8, PIXSUM_U32, PIXSUM_BOX_SUM},
        {PIXSUM_U8, PIXSUM_I32, PIXSUM_BOX_SUM},    {PIXSUM_U8, PIXSUM_F32, PIXSUM_BOX_SUM},
        {PIXSUM_U16, PIXSUM_U16, PIXSUM_BOX_MEAN},  {PIXSUM_U16, PIXSUM_F32, PIXSUM_BOX_MEAN},
        {PIXSUM_U16, PIXSUM_U32, PIXSUM_BOX_SUM},   {PIXSUM_F32, PIXSUM_F32, PIXSUM_BOX_MEAN},
        {PIXSUM_F32, PIXSUM_F32, PIXSUM_BOX_SUM},   {PIXSUM_F32, PIXSUM_F64, PIXSUM_BOX_MEAN},
    };
    static const size_t shapes[][2] = {{1025, 37}, {2049, 70}, {3001, 19}, {700, 300}};
    static const size_t windows[][2] = {{15, 15}, {4, 6}, {1, 1}, {63, 3}, {2, 31}, {301, 5}};
    static const pixsum_border borders[] = {PIXSUM_BORDER_REFLECT101, PIXSUM_BORDER_REFLECT,
                                            PIXSUM_BORDER_REPLICATE, PIXSUM_BORDER_VALID};
    int quick = getenv("PIXSUM_TEST_QUICK") != NULL;
    size_t np = sizeof pairs / sizeof pairs[0], ran = 0;
    for (size_t si = 0; si < (quick ? 1u : 4u); si++)
        for (size_t pi = 0; pi < np; pi++) {
            if (pi > 0 && pairs[pi].in == pairs[pi - 1].in && si == 3)
                continue; /* the tall shape once per input type */
            size_t pad = (si + pi) % 3 == 1 ? 3 : 0; /* unaligned rows: sample loads */
            image in;
            image_new(&in, pairs[pi].in, shapes[si][0], shapes[si][1], 1, pad);
            image_fill(&in, (si + pi) % 4 == 3);
            if ((si + pi) % 5 == 2 && pairs[pi].in != PIXSUM_F32) {
                /* saturated: every window sum at its largest */
                memset(in.hmem, 0xff, (size_t)in.host.row_stride * in.host.height);
                CU_OK(cudaMemcpy(in.dmem, in.hmem, (size_t)in.host.row_stride * in.host.height,
                                 cudaMemcpyHostToDevice));
            }
            for (size_t wi = 0; wi < (quick ? 2u : 6u); wi++)
                for (size_t bi = 0; bi < 4; bi++) {
                    if ((wi + bi + pi) % 2 == 1)
                        continue; /* half of the combinations, spread over all */
                    pixsum_box_filter_spec spec;
                    memset(&spec, 0, sizeof spec);
                    spec.kw = windows[wi][0];
                    spec.kh = windows[wi][1];
                    if (spec.kh > shapes[si][1] && borders[bi] == PIXSUM_BORDER_VALID)
                        spec.kh = shapes[si][1];
                    if (wi == 5 && bi != 3)
                        spec.kh = shapes[si][1] + 4; /* taller than the image */
                    spec.stat = pairs[pi].stat;
                    spec.border = borders[bi];
                    PX_OK(run_case(&in, &spec, pairs[pi].out, (pi & 1) ? 5 : 0, NULL, NULL));
                    ran++;
                }
            image_free(&in);
        }
    printf("test_fast_path: %zu cases\n", ran);
}

/* The variance of 1e8 + {0, 1, 2, 3} is 1.25 (shifted f64 sums). */
static void test_large_offset_variance(void **state)
{
    (void)state;
    image in;
    image_new(&in, PIXSUM_F64, 2, 2, 1, 0);
    double v[4] = {1e8, 1e8 + 1, 1e8 + 2, 1e8 + 3};
    memcpy(in.hmem, v, sizeof v);
    CU_OK(cudaMemcpy(in.dmem, v, sizeof v, cudaMemcpyHostToDevice));
    double *dout;
    CU_OK(cudaMalloc((void **)&dout, sizeof(double)));
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = spec.kh = 2;
    spec.stat = PIXSUM_BOX_VAR;
    spec.border = PIXSUM_BORDER_VALID;
    pixsum_view o = pixsum_view_2d(dout, PIXSUM_F64, 1, 1, 1, 0);
    PX_OK(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &o, NULL));
    double r = 0;
    CU_OK(cudaMemcpy(&r, dout, sizeof r, cudaMemcpyDeviceToHost));
    assert_true(r == 1.25);
    cudaFree(dout);
    image_free(&in);
}

/* Windows at the widest the kernel takes, one sample wider refused. */
static void test_wide_windows(void **state)
{
    (void)state;
    image in;
    image_new(&in, PIXSUM_U8, 2500, 40, 1, 0);
    image_fill(&in, 0);
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kh = 9;
    spec.stat = PIXSUM_BOX_MEAN;
    size_t accepted = 0;
    for (size_t kw = 1000; kw <= 2100; kw += 11) { /* the widest lies in between */
        spec.kw = kw;
        spec.border = (pixsum_border)(kw % PIXSUM_BORDER_COUNT);
        if (run_case(&in, &spec, PIXSUM_U8, 0, NULL, NULL) == PIXSUM_OK)
            accepted = kw;
    }
    assert_true(accepted > WIDEST_MIN);
    spec.kw = 5000;
    spec.border = PIXSUM_BORDER_REFLECT;
    image out;
    image_new(&out, PIXSUM_U8, 2500, 40, 1, 0);
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &out.dev, NULL),
                     PIXSUM_ERR_UNSUPPORTED);
    image_free(&out);
    image_free(&in);
}

/* Same status as the CPU for every invalid request; the GPU's own refusals. */
static void test_refusals(void **state)
{
    (void)state;
    image in, out;
    image_new(&in, PIXSUM_U8, 11, 9, 1, 0);
    image_new(&out, PIXSUM_F64, 11, 9, 1, 0);
    image_fill(&in, 0);
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = spec.kh = 3;
    spec.stat = PIXSUM_BOX_MEAN;
    PX_OK(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &out.dev, NULL));
    assert_int_equal(pixsum_cuda_box_filter(NULL, NULL, &spec, &out.dev, NULL), PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, NULL, &out.dev, NULL),
                     PIXSUM_ERR_NULL);
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &spec, NULL, NULL), PIXSUM_ERR_NULL);
    /* requests the CPU refuses: the GPU gives the same code */
    pixsum_box_filter_spec bad[6];
    for (int i = 0; i < 6; i++)
        bad[i] = spec;
    bad[0].kw = 0;
    bad[1].stat = (pixsum_box_stat)7;
    bad[2].border = (pixsum_border)9;
    bad[3].border = PIXSUM_BORDER_VALID; /* the output then has the wrong shape */
    bad[4].border = PIXSUM_BORDER_CONSTANT;
    bad[4].border_value = 0.5; /* not a u8 value */
    bad[5].kw = 12;
    bad[5].border = PIXSUM_BORDER_VALID; /* wider than the image */
    for (int i = 0; i < 6; i++) {
        int cst = pixsum_box_filter(NULL, &in.host, &bad[i], &out.host);
        assert_int_not_equal(cst, PIXSUM_OK);
        assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &bad[i], &out.dev, NULL), cst);
    }
    pixsum_view o16 = out.dev;
    o16.type = PIXSUM_U16; /* a mean of u8 cannot be u16 */
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &o16, NULL),
                     PIXSUM_ERR_BAD_TYPE);
    spec.stat = PIXSUM_BOX_SUM;
    pixsum_view o32 = pixsum_view_2d(in.dmem, PIXSUM_U32, 11, 9, 1, 44);
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &o32, NULL),
                     PIXSUM_ERR_ALIASING);
    /* misaligned f64 output: the view check refuses it on both */
    pixsum_view mis = pixsum_view_2d((char *)out.dmem + 4, PIXSUM_F64, 11, 9, 1, 96);
    pixsum_view mish = pixsum_view_2d((char *)out.hmem + 4, PIXSUM_F64, 11, 9, 1, 96);
    spec.stat = PIXSUM_BOX_MEAN;
    assert_int_equal(pixsum_cuda_box_filter(NULL, &in.dev, &spec, &mis, NULL),
                     pixsum_box_filter(NULL, &in.host, &spec, &mish));
    /* host memory: refused unless the device reads pageable memory */
    double host[99];
    pixsum_view oh = pixsum_view_2d(host, PIXSUM_F64, 11, 9, 1, 0);
    int st = pixsum_cuda_box_filter(NULL, &in.dev, &spec, &oh, NULL);
    if (st != PIXSUM_OK)
        assert_int_equal(st, PIXSUM_ERR_INVALID_ARG);
    CU_OK(cudaDeviceSynchronize());
    image_free(&out);
    image_free(&in);
}

static void test_large(void **state)
{
    (void)state;
    if (getenv("PIXSUM_TEST_NO_LARGE") || getenv("PIXSUM_TEST_QUICK")) {
        printf("test_large: skipped (PIXSUM_TEST_NO_LARGE or PIXSUM_TEST_QUICK)\n");
        skip();
    }
    image in;
    image_new(&in, PIXSUM_U8, 8192, 8192, 1, 0);
    image_fill(&in, 0);
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = spec.kh = 15;
    spec.stat = PIXSUM_BOX_MEAN;
    PX_OK(run_case(&in, &spec, PIXSUM_U8, 0, NULL, NULL));
    spec.stat = PIXSUM_BOX_SUM;
    spec.border = PIXSUM_BORDER_SHRINK;
    PX_OK(run_case(&in, &spec, PIXSUM_U32, 0, NULL, NULL));
    spec.stat = PIXSUM_BOX_VAR;
    spec.border = PIXSUM_BORDER_REFLECT;
    spec.kw = spec.kh = 63;
    PX_OK(run_case(&in, &spec, PIXSUM_F64, 0, NULL, NULL));
    image_free(&in);
}

/* ---- batches: a view of depth N ------------------------------------------------ */

/* A batch of n images, h rows each plus slice_pad rows between images,
 * on the host and the device (same strides). */
static void batch_new(image *im, pixsum_type t, size_t w, size_t h, size_t n, size_t ch,
                      size_t pad, size_t slice_pad)
{
    size_t es = pixsum_type_size(t), pitch = (w * ch + pad) * es;
    size_t slice = pitch * (h + slice_pad), bytes = slice * n;
    im->hmem = malloc(bytes ? bytes : 1);
    assert_non_null(im->hmem);
    CU_OK(cudaMalloc(&im->dmem, bytes ? bytes : 1));
    im->host = pixsum_view_3d(im->hmem, t, w, h, n, ch, (ptrdiff_t)pitch, (ptrdiff_t)slice);
    im->dev = pixsum_view_3d(im->dmem, t, w, h, n, ch, (ptrdiff_t)pitch, (ptrdiff_t)slice);
}

static size_t batch_bytes(const image *im)
{
    return (size_t)im->host.slice_stride * im->host.depth;
}

/* One batch request: the GPU batch must return the CPU batch's status; each
 * of its images must equal the single-image GPU call on that slice bit for
 * bit, and, for the exact results, the CPU batch's image bit for bit. */
static void run_batch_case(size_t n, pixsum_type t, size_t w, size_t h, size_t ch,
                           const pixsum_box_filter_spec *spec, pixsum_type ot, size_t pad,
                           size_t slice_pad, size_t out_slice_pad, pixsum_ctx *ctx,
                           void *stream)
{
    char what[300];
    snprintf(what, sizeof what, "batch of %zu %s %zux%zu x%zu (pad %zu, slice pad %zu), window "
             "%zux%zu stat %d border %s (value %g) -> %s", n, pixsum_type_name(t), w, h, ch,
             pad, slice_pad, spec->kw, spec->kh, (int)spec->stat,
             pixsum_border_name(spec->border), spec->border_value, pixsum_type_name(ot));
    image in, out;
    batch_new(&in, t, w, h, n, ch, pad, slice_pad);
    size_t es = pixsum_type_size(t);
    unsigned char *hb = in.hmem;
    for (size_t i = 0; i < batch_bytes(&in) / es; i++)
        fill_random(t, hb + i * es, 1, (rnd() & 15) == 0);
    CU_OK(cudaMemcpy(in.dmem, in.hmem, batch_bytes(&in), cudaMemcpyHostToDevice));
    size_t ow = 1, oh = 1;
    if (pixsum_box_filter_shape(spec, w, h, &ow, &oh) != PIXSUM_OK)
        ow = oh = 1;
    batch_new(&out, ot, ow, oh, n, ch, pad % 3, out_slice_pad);
    const size_t obytes = batch_bytes(&out);
    unsigned char *got = malloc(obytes), *one = malloc(obytes);
    assert_true(got && one);
    memset(out.hmem, 0xa5, obytes);
    CU_OK(cudaMemset(out.dmem, 0xa5, obytes));
    int cst = pixsum_box_filter(NULL, &in.host, spec, &out.host);
    int gst = pixsum_cuda_box_filter(ctx, &in.dev, spec, &out.dev, stream);
    if (cst == PIXSUM_OK && gst == PIXSUM_ERR_UNSUPPORTED &&
        (spec->kw - 1) * ch > WIDEST_MIN)
        gst = cst = WIDE_REFUSED;
    if (gst != cst)
        fail_msg("%s: CPU status %d (%s), GPU %d (%s)", what, cst, pixsum_strerror(cst), gst,
                 pixsum_last_error());
    if (cst == PIXSUM_OK) {
        CU_OK(stream ? cudaStreamSynchronize((cudaStream_t)stream) : cudaDeviceSynchronize());
        CU_OK(cudaMemcpy(got, out.dmem, obytes, cudaMemcpyDeviceToHost));
        /* each image alone on the GPU, into the same place of a cleared output */
        CU_OK(cudaMemset(out.dmem, 0xa5, obytes));
        for (size_t z = 0; z < n; z++) {
            pixsum_view i1, o1;
            PX_OK(pixsum_view_roi3d(&in.dev, 0, 0, z, w, h, 1, &i1));
            PX_OK(pixsum_view_roi3d(&out.dev, 0, 0, z, ow, oh, 1, &o1));
            PX_OK(pixsum_cuda_box_filter(ctx, &i1, spec, &o1, stream));
        }
        CU_OK(stream ? cudaStreamSynchronize((cudaStream_t)stream) : cudaDeviceSynchronize());
        CU_OK(cudaMemcpy(one, out.dmem, obytes, cudaMemcpyDeviceToHost));
        const size_t oes = pixsum_type_size(ot), row = ow * ch * oes;
        const int exact = !is_float(ot) || (!is_float(t) && (spec->stat == PIXSUM_BOX_SUM ||
                                                             spec->stat == PIXSUM_BOX_MEAN));
        for (size_t z = 0; z < n; z++)
            for (size_t y = 0; y < oh; y++) {
                size_t off = z * (size_t)out.host.slice_stride + y * (size_t)out.host.row_stride;
                const unsigned char *g = got + off, *o = one + off,
                                    *c = (const unsigned char *)out.hmem + off;
                for (size_t i = 0; i < row / oes; i++) {
                    if (memcmp(g + i * oes, o + i * oes, oes) != 0)
                        fail_msg("%s: image %zu row %zu sample %zu: GPU batch %.17g, GPU single "
                                 "image %.17g", what, z, y, i, load(g, ot, i), load(o, ot, i));
                    if (exact && memcmp(g + i * oes, c + i * oes, oes) != 0)
                        fail_msg("%s: image %zu row %zu sample %zu: GPU batch %.17g, CPU batch "
                                 "%.17g", what, z, y, i, load(g, ot, i), load(c, ot, i));
                }
            }
        /* the padding between rows and images is not written */
        for (size_t z = 0; z < n; z++)
            for (size_t y = 0; y < oh + out_slice_pad; y++) {
                size_t off = z * (size_t)out.host.slice_stride + y * (size_t)out.host.row_stride;
                size_t from = y < oh ? row : 0;
                for (size_t b = from; b < (size_t)out.host.row_stride; b++)
                    if (got[off + b] != 0xa5)
                        fail_msg("%s: image %zu: byte %zu of row %zu (padding) written", what, z,
                                 b, y);
            }
    }
    free(got);
    free(one);
    image_free(&in);
    image_free(&out);
}

static void test_batch(void **state)
{
    (void)state;
    static const size_t ns[] = {1, 3, 17};
    size_t cases = getenv("PIXSUM_TEST_QUICK") ? 30 : 300;
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_non_null(ctx);
    cudaStream_t s;
    CU_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    for (size_t k = 0; k < cases; k++) {
        pixsum_type t = in_types[rnd() % 7];
        size_t n = ns[rnd() % 3], ch = 1 + rnd() % 4;
        size_t w = pick_side(), h = pick_side();
        if (k % 10 == 0)
            w = h = 224;
        if (n == 17 && w * h > 40000)
            h = 40000 / w + 1; /* keep the CPU reference quick */
        pixsum_box_filter_spec spec;
        memset(&spec, 0, sizeof spec);
        spec.kw = pick_window(w);
        spec.kh = pick_window(h);
        spec.stat = (pixsum_box_stat)(rnd() % 4);
        spec.border = (pixsum_border)(k % PIXSUM_BORDER_COUNT);
        if (spec.border == PIXSUM_BORDER_VALID && (rnd() & 3)) {
            spec.kw = 1 + rnd() % w;
            spec.kh = 1 + rnd() % h;
        }
        if (spec.border == PIXSUM_BORDER_CONSTANT)
            spec.border_value = is_float(t) ? (double)(rnd() % 1000) / 7.0 - 50
                                : t == PIXSUM_I16 || t == PIXSUM_I32
                                    ? (double)(int)(rnd() % 200) - 100
                                    : (double)(rnd() % 200);
        pixsum_type ot = (rnd() & 1) ? pixsum_box_filter_type(t, &spec) : out_types[rnd() % 8];
        if (ot == PIXSUM_TYPE_NONE)
            ot = PIXSUM_F64;
        size_t pad = (rnd() & 1) ? rnd() % 9 : 0;
        size_t slice_pad = (rnd() & 1) ? rnd() % 3 : 0, out_slice_pad = rnd() % 2;
        int which = (int)(rnd() % 3);
        run_batch_case(n, t, w, h, ch, &spec, ot, pad, slice_pad, out_slice_pad,
                       which ? ctx : NULL, which == 2 ? s : NULL);
    }
    /* more images than a grid's z holds (65535): two launches (not with
     * PIXSUM_TEST_QUICK: its 70001 single-image calls are slow under the
     * sanitizers) */
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.kw = spec.kh = 3;
    spec.stat = PIXSUM_BOX_SUM;
    spec.border = PIXSUM_BORDER_REFLECT;
    if (!getenv("PIXSUM_TEST_QUICK"))
        run_batch_case(70001, PIXSUM_U8, 2, 1, 1, &spec, PIXSUM_U32, 0, 0, 0, ctx, NULL);
    /* refusals: an output of another depth, overlapping images */
    image in, out;
    batch_new(&in, PIXSUM_U8, 8, 8, 3, 1, 0, 0);
    batch_new(&out, PIXSUM_U8, 8, 8, 2, 1, 0, 0);
    spec.stat = PIXSUM_BOX_MEAN;
    assert_int_equal(pixsum_cuda_box_filter(ctx, &in.dev, &spec, &out.dev, NULL),
                     PIXSUM_ERR_BAD_SHAPE);
    pixsum_view shifted = in.dev;
    shifted.data = (unsigned char *)in.dmem + 64; /* image 0 of out = image 1 of in */
    shifted.depth = 2;
    pixsum_view in2 = in.dev;
    in2.depth = 2;
    assert_int_equal(pixsum_cuda_box_filter(ctx, &in2, &spec, &shifted, NULL),
                     PIXSUM_ERR_ALIASING);
    image_free(&in);
    image_free(&out);
    CU_OK(cudaStreamDestroy(s));
    pixsum_ctx_free(ctx);
}

int main(void)
{
    if (pixsum_cuda_device_count() <= 0) {
        printf("test_cuda_box: skipped: no CUDA device\n");
        return 77;
    }
    const char *seed = getenv("PIXSUM_TEST_SEED");
    rng_state = seed ? strtoull(seed, NULL, 10) : (uint64_t)time(NULL);
    printf("test_cuda_box: seed %llu (PIXSUM_TEST_SEED to replay)\n",
           (unsigned long long)rng_state);
    /* PIXSUM_TEST_FILTER=test_batch: only the matching tests (sanitizer runs) */
    if (getenv("PIXSUM_TEST_FILTER"))
        cmocka_set_test_filter(getenv("PIXSUM_TEST_FILTER"));
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_combination),
        cmocka_unit_test(test_random_cases),
        cmocka_unit_test(test_fast_path),
        cmocka_unit_test(test_large_offset_variance),
        cmocka_unit_test(test_wide_windows),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_batch),
        cmocka_unit_test(test_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
