/*
 * testutil.c - the shared test helpers declared in testutil.h: seeded random
 * numbers, guarded test images with awkward layouts, naive reference integrals
 * (exact 128-bit or compensated long double) and table comparison.
 */
#include "testutil.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* From cmocka (every test executable links it); declared here so that this
 * file does not need cmocka's header and its prerequisites. */
void cmocka_set_test_filter(const char *pattern);

/* ---- random numbers ----------------------------------------------------- */

static uint64_t global_seed;
static tu_rng global_rng;

uint64_t tu_init(const char *name)
{
    const char *env = getenv("PIXSUM_TEST_SEED");
    if (env && *env) {
        global_seed = strtoull(env, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        global_seed = ((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec;
    }
    global_rng.s = global_seed;
    const char *only = getenv("PIXSUM_TEST_FILTER");
    if (only && *only)
        cmocka_set_test_filter(only);
    printf("%s: seed %" PRIu64 " (replay with PIXSUM_TEST_SEED=%" PRIu64 ")\n", name,
           global_seed, global_seed);
    fflush(stdout);
    return global_seed;
}

uint64_t tu_seed(void)
{
    return global_seed;
}

tu_rng *tu_global_rng(void)
{
    return &global_rng;
}

uint64_t tu_next(tu_rng *r)
{
    /* splitmix64 (Steele, Lea, Flood 2014) */
    uint64_t z = (r->s += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}

uint64_t tu_below(tu_rng *r, uint64_t n)
{
    /* Rejection keeps the draw unbiased. */
    uint64_t limit = UINT64_MAX - UINT64_MAX % n;
    uint64_t v;
    do
        v = tu_next(r);
    while (v >= limit);
    return v % n;
}

size_t tu_between(tu_rng *r, size_t lo, size_t hi)
{
    if (hi <= lo)
        return lo;
    if (hi - lo == SIZE_MAX)
        return (size_t)tu_next(r);
    return lo + (size_t)tu_below(r, (uint64_t)(hi - lo) + 1);
}

double tu_unit(tu_rng *r)
{
    return (double)(tu_next(r) >> 11) * 0x1.0p-53;
}

size_t tu_dim(tu_rng *r, size_t max)
{
    static const size_t special[] = {1, 1, 2, 3, 5, 7, 8, 9, 13, 15, 16, 17, 31, 32, 33,
                                     37, 61, 63, 64, 65, 127, 129};
    size_t v;
    switch (tu_below(r, 3)) {
    case 0:
        v = special[tu_below(r, sizeof special / sizeof special[0])];
        break;
    case 1:
        v = tu_between(r, 1, max) | 1u; /* odd */
        break;
    default:
        v = tu_between(r, 1, max);
        break;
    }
    return v > max ? max : v;
}

/* ---- images ------------------------------------------------------------- */

#define TU_GUARD 64
#define TU_PATTERN 0xA5

tu_layout tu_random_layout(tu_rng *r)
{
    tu_layout l;
    memset(&l, 0, sizeof l);
    if (tu_below(r, 2))
        l.row_pad = tu_between(r, 1, 9);
    if (tu_below(r, 3) == 0)
        l.slice_pad = tu_between(r, 1, 3);
    l.bottom_up = tu_below(r, 4) == 0;
    if (tu_below(r, 3) == 0)
        l.margin = tu_between(r, 1, 4);
    return l;
}

int tu_image_alloc(tu_image *img, pixsum_type type, size_t width, size_t height,
                   size_t depth, size_t channels, const tu_layout *layout)
{
    tu_layout packed;
    memset(&packed, 0, sizeof packed);
    const tu_layout *l = layout ? layout : &packed;
    memset(img, 0, sizeof *img);
    size_t es = pixsum_type_size(type);
    size_t m = l->margin, mz = depth > 1 ? l->margin : 0;
    size_t pw = width + 2 * m, ph = height + 2 * m, pd = depth + 2 * mz;
    size_t rs = (pw * channels + l->row_pad) * es;
    size_t ss = (ph + (depth > 1 ? l->slice_pad : 0)) * rs;
    /* The parent image starts 0, 16, 32 or 48 bytes past a 64-byte boundary,
     * in turn from one image to the next, so fast paths that need 32- or
     * 64-byte aligned rows (non-temporal stores) are tested as well as the
     * ones that do not. */
    static unsigned next_shift;
    size_t shift = 16 * (size_t)(__atomic_fetch_add(&next_shift, 1u, __ATOMIC_RELAXED) % 4);
    img->block_bytes = 2 * TU_GUARD + shift + pd * ss;
    img->block = aligned_alloc(64, (img->block_bytes + 63) / 64 * 64);
    if (!img->block)
        return -1;
    memset(img->block, TU_PATTERN, img->block_bytes);
    unsigned char *parent = img->block + TU_GUARD + shift;
    ptrdiff_t row_stride = (ptrdiff_t)rs;
    if (l->bottom_up) {
        parent += (ph - 1) * rs;
        row_stride = -row_stride;
    }
    pixsum_view v;
    v.type = type;
    v.width = width;
    v.height = height;
    v.depth = depth;
    v.channels = channels;
    v.row_stride = row_stride;
    v.slice_stride = (ptrdiff_t)ss;
    v.data = parent + (ptrdiff_t)mz * v.slice_stride + (ptrdiff_t)m * row_stride +
             (ptrdiff_t)(m * channels * es);
    img->view = v;
    return 0;
}

void tu_image_free(tu_image *img)
{
    free(img->block);
    free(img->snapshot);
    memset(img, 0, sizeof *img);
}

void tu_image_snapshot(tu_image *img)
{
    free(img->snapshot);
    img->snapshot = malloc(img->block_bytes);
    if (img->snapshot)
        memcpy(img->snapshot, img->block, img->block_bytes);
}

int tu_image_check_untouched(const tu_image *img, int inside_too, const char *what)
{
    if (!img->snapshot) {
        fprintf(stderr, "%s: no snapshot taken\n", what);
        return -1;
    }
    unsigned char *inside = calloc(img->block_bytes, 1);
    if (!inside)
        return -1;
    const pixsum_view *v = &img->view;
    size_t es = pixsum_type_size(v->type);
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++) {
            unsigned char *row = tu_elem(v, 0, y, z, 0);
            size_t off = (size_t)(row - img->block);
            memset(inside + off, 1, v->width * v->channels * es);
        }
    int rc = 0;
    for (size_t i = 0; i < img->block_bytes; i++) {
        if ((inside_too || !inside[i]) && img->block[i] != img->snapshot[i]) {
            fprintf(stderr,
                    "%s: byte %zu of the block (%s the view) changed from 0x%02x to "
                    "0x%02x (seed %" PRIu64 ")\n",
                    what, i, inside[i] ? "inside" : "outside", img->snapshot[i],
                    img->block[i], global_seed);
            rc = -1;
            break;
        }
    }
    free(inside);
    return rc;
}

void *tu_elem(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c)
{
    ptrdiff_t off = (ptrdiff_t)y * v->row_stride +
                    (ptrdiff_t)((x * v->channels + c) * pixsum_type_size(v->type));
    if (z)
        off += (ptrdiff_t)z * v->slice_stride;
    return (char *)v->data + off;
}

int64_t tu_get_i(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c)
{
    const void *p = tu_elem(v, x, y, z, c);
    switch (v->type) {
    case PIXSUM_U8: return *(const uint8_t *)p;
    case PIXSUM_U16: return *(const uint16_t *)p;
    case PIXSUM_I16: return *(const int16_t *)p;
    case PIXSUM_I32: return *(const int32_t *)p;
    case PIXSUM_U32: return *(const uint32_t *)p;
    case PIXSUM_U64: return (int64_t)*(const uint64_t *)p;
    case PIXSUM_I64: return *(const int64_t *)p;
    case PIXSUM_F32: return (int64_t)*(const float *)p;
    case PIXSUM_F64: return (int64_t)*(const double *)p;
    default: return 0;
    }
}

long double tu_get_f(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c)
{
    const void *p = tu_elem(v, x, y, z, c);
    switch (v->type) {
    case PIXSUM_F32: return *(const float *)p;
    case PIXSUM_F64: return *(const double *)p;
    case PIXSUM_U64: return (long double)*(const uint64_t *)p;
    default: return (long double)tu_get_i(v, x, y, z, c);
    }
}

void tu_set_i(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c, int64_t val)
{
    void *p = tu_elem(v, x, y, z, c);
    switch (v->type) {
    case PIXSUM_U8: *(uint8_t *)p = (uint8_t)val; break;
    case PIXSUM_U16: *(uint16_t *)p = (uint16_t)val; break;
    case PIXSUM_I16: *(int16_t *)p = (int16_t)val; break;
    case PIXSUM_I32: *(int32_t *)p = (int32_t)val; break;
    case PIXSUM_U32: *(uint32_t *)p = (uint32_t)val; break;
    case PIXSUM_U64: *(uint64_t *)p = (uint64_t)val; break;
    case PIXSUM_I64: *(int64_t *)p = val; break;
    case PIXSUM_F32: *(float *)p = (float)val; break;
    case PIXSUM_F64: *(double *)p = (double)val; break;
    default: break;
    }
}

void tu_set_f(const pixsum_view *v, size_t x, size_t y, size_t z, size_t c, double val)
{
    void *p = tu_elem(v, x, y, z, c);
    if (v->type == PIXSUM_F32)
        *(float *)p = (float)val;
    else if (v->type == PIXSUM_F64)
        *(double *)p = val;
    else
        tu_set_i(v, x, y, z, c, (int64_t)val);
}

int64_t tu_type_max(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return UINT8_MAX;
    case PIXSUM_U16: return UINT16_MAX;
    case PIXSUM_I16: return INT16_MAX;
    case PIXSUM_I32: return INT32_MAX;
    case PIXSUM_U32: return UINT32_MAX;
    default: return 1;
    }
}

int64_t tu_type_min(pixsum_type t)
{
    switch (t) {
    case PIXSUM_I16: return INT16_MIN;
    case PIXSUM_I32: return INT32_MIN;
    case PIXSUM_F32:
    case PIXSUM_F64: return -1;
    default: return 0;
    }
}

/* One random float sample: uniform, large, tiny, subnormal, zero or integral.
 * Magnitudes stay where the squares of a few thousand samples still fit. */
static double random_float(tu_rng *r, pixsum_type t)
{
    int f32 = t == PIXSUM_F32;
    double sign = tu_below(r, 2) ? -1.0 : 1.0;
    switch (tu_below(r, 10)) {
    case 0: return sign * (f32 ? 1e16 : 1e150) * (0.5 + tu_unit(r));   /* large */
    case 1: return sign * (f32 ? 1e-30 : 1e-300) * (0.5 + tu_unit(r)); /* tiny */
    case 2: return sign * (f32 ? 1e-40 : 4e-320);                       /* subnormal */
    case 3: return 0.0;
    case 4: return (double)(int64_t)tu_below(r, 1u << 20) * sign;       /* integral */
    default: return sign * tu_unit(r) * 1000.0;
    }
}

void tu_fill_random(tu_rng *r, const pixsum_view *v, tu_fill fill)
{
    int is_float = v->type == PIXSUM_F32 || v->type == PIXSUM_F64;
    int64_t lo = tu_type_min(v->type), hi = tu_type_max(v->type);
    for (size_t z = 0; z < v->depth; z++)
        for (size_t y = 0; y < v->height; y++)
            for (size_t x = 0; x < v->width; x++)
                for (size_t c = 0; c < v->channels; c++) {
                    if (fill == TU_FILL_MAX) {
                        tu_set_i(v, x, y, z, c, hi);
                    } else if (fill == TU_FILL_MIN) {
                        tu_set_i(v, x, y, z, c, lo);
                    } else if (fill == TU_FILL_SMALL) {
                        tu_set_i(v, x, y, z, c, (int64_t)tu_below(r, 16));
                    } else if (is_float) {
                        tu_set_f(v, x, y, z, c, random_float(r, v->type));
                    } else if (tu_below(r, 4) == 0) {
                        const int64_t extremes[] = {lo, hi, 0, lo + 1, hi - 1};
                        tu_set_i(v, x, y, z, c, extremes[tu_below(r, 5)]);
                    } else {
                        uint64_t span = (uint64_t)(hi - lo) + 1;
                        tu_set_i(v, x, y, z, c, lo + (int64_t)tu_below(r, span));
                    }
                }
}

/* ---- references --------------------------------------------------------- */

static int ref_alloc(tu_ref *ref, size_t w, size_t h, size_t d, size_t ch, int exact)
{
    memset(ref, 0, sizeof *ref);
    ref->width = w;
    ref->height = h;
    ref->depth = d;
    ref->channels = ch;
    ref->exact = exact;
    size_t n = w * h * d * ch;
    ref->iv = calloc(n, sizeof *ref->iv);
    ref->fv = calloc(n, sizeof *ref->fv);
    ref->mag = calloc(n, sizeof *ref->mag);
    ref->terms = calloc(n, sizeof *ref->terms);
    if (!ref->iv || !ref->fv || !ref->mag || !ref->terms) {
        tu_ref_free(ref);
        return -1;
    }
    return 0;
}

void tu_ref_free(tu_ref *ref)
{
    free(ref->iv);
    free(ref->fv);
    free(ref->mag);
    free(ref->terms);
    memset(ref, 0, sizeof *ref);
}

static size_t ref_index(const tu_ref *r, size_t x, size_t y, size_t z, size_t c)
{
    return ((z * r->height + y) * r->width + x) * r->channels + c;
}

/* A term of the sum: the sample or its square, exactly (ints) or in long double. */
static tu_i128 term_i(const pixsum_view *in, size_t x, size_t y, size_t z, size_t c,
                      int squared)
{
    int64_t v = tu_get_i(in, x, y, z, c);
    if (!squared)
        return v;
    /* |v| <= 2^32 - 1, so the square fits 64 bits; unsigned avoids a signed
     * 128-bit multiply (which UBSan would route through a runtime helper). */
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return (tu_i128)(tu_u128)(m * m);
}

static long double term_f(const pixsum_view *in, size_t x, size_t y, size_t z, size_t c,
                          int squared)
{
    long double v = tu_get_f(in, x, y, z, c);
    return squared ? v * v : v;
}

/* Kahan-Babuska (Neumaier) compensated long double accumulator. */
typedef struct kahan {
    long double sum, comp;
} kahan;

static void kahan_add(kahan *k, long double v)
{
    long double t = k->sum + v;
    if (fabsl(k->sum) >= fabsl(v))
        k->comp += (k->sum - t) + v;
    else
        k->comp += (v - t) + k->sum;
    k->sum = t;
}

int tu_ref_integral(tu_ref *ref, const pixsum_view *in, int squared)
{
    int exact = in->type != PIXSUM_F32 && in->type != PIXSUM_F64;
    if (ref_alloc(ref, in->width, in->height, in->depth, in->channels, exact))
        return -1;
    for (size_t z = 0; z < in->depth; z++)
        for (size_t y = 0; y < in->height; y++)
            for (size_t x = 0; x < in->width; x++)
                for (size_t c = 0; c < in->channels; c++) {
                    tu_i128 isum = 0;
                    kahan fsum = {0, 0}, msum = {0, 0};
                    for (size_t w = 0; w <= z; w++)
                        for (size_t v = 0; v <= y; v++)
                            for (size_t u = 0; u <= x; u++) {
                                if (exact) {
                                    tu_i128 t = term_i(in, u, v, w, c, squared);
                                    isum += t;
                                    kahan_add(&msum, (long double)(t < 0 ? -t : t));
                                } else {
                                    long double t = term_f(in, u, v, w, c, squared);
                                    kahan_add(&fsum, t);
                                    kahan_add(&msum, fabsl(t));
                                }
                            }
                    size_t i = ref_index(ref, x, y, z, c);
                    ref->iv[i] = isum;
                    ref->fv[i] = exact ? (long double)isum : fsum.sum + fsum.comp;
                    ref->mag[i] = msum.sum + msum.comp;
                    ref->terms[i] = (double)(x + 1) * (double)(y + 1) * (double)(z + 1);
                }
    return 0;
}

int tu_ref_integral_fast(tu_ref *ref, const pixsum_view *in, int squared)
{
    int exact = in->type != PIXSUM_F32 && in->type != PIXSUM_F64;
    if (ref_alloc(ref, in->width, in->height, in->depth, in->channels, exact))
        return -1;
    size_t W = in->width, H = in->height, D = in->depth, C = in->channels;
    /* Separable running sums along x, then y, then z, in exact / long double. */
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < W; x++)
                for (size_t c = 0; c < C; c++) {
                    size_t i = ref_index(ref, x, y, z, c);
                    if (exact) {
                        tu_i128 t = term_i(in, x, y, z, c, squared);
                        ref->iv[i] = t;
                        ref->mag[i] = (long double)(t < 0 ? -t : t);
                    } else {
                        long double t = term_f(in, x, y, z, c, squared);
                        ref->fv[i] = t;
                        ref->mag[i] = fabsl(t);
                    }
                    ref->terms[i] = (double)(x + 1) * (double)(y + 1) * (double)(z + 1);
                }
    size_t step[3] = {C, W * C, H * W * C}, len[3] = {W, H, D};
    size_t n = W * H * D * C;
    for (int axis = 0; axis < 3; axis++) {
        for (size_t i = 0; i < n; i++) {
            size_t pos = (i / step[axis]) % len[axis];
            if (pos == 0)
                continue;
            ref->iv[i] += ref->iv[i - step[axis]];
            ref->fv[i] += ref->fv[i - step[axis]];
            ref->mag[i] += ref->mag[i - step[axis]];
        }
    }
    if (exact)
        for (size_t i = 0; i < n; i++)
            ref->fv[i] = (long double)ref->iv[i];
    return 0;
}

int tu_ref_tilted(tu_ref *ref, const pixsum_view *in)
{
    int exact = in->type != PIXSUM_F32 && in->type != PIXSUM_F64;
    size_t W = in->width, H = in->height;
    if (ref_alloc(ref, W + 1, H + 1, 1, in->channels, exact))
        return -1;
    for (size_t Y = 0; Y <= H; Y++)
        for (size_t X = 0; X <= W; X++)
            for (size_t c = 0; c < in->channels; c++) {
                tu_i128 isum = 0;
                kahan fsum = {0, 0}, msum = {0, 0};
                double terms = 0;
                /* T(X, Y) = sum of i(x, y) over y < Y, |x - X + 1| <= Y - y - 1 */
                for (size_t y = 0; y < Y; y++)
                    for (size_t x = 0; x < W; x++) {
                        long long dx = (long long)x - (long long)X + 1;
                        if (dx < 0)
                            dx = -dx;
                        if (dx > (long long)(Y - y - 1))
                            continue;
                        terms += 1;
                        if (exact) {
                            tu_i128 t = term_i(in, x, y, 0, c, 0);
                            isum += t;
                            kahan_add(&msum, (long double)(t < 0 ? -t : t));
                        } else {
                            long double t = term_f(in, x, y, 0, c, 0);
                            kahan_add(&fsum, t);
                            kahan_add(&msum, fabsl(t));
                        }
                    }
                size_t i = ref_index(ref, X, Y, 0, c);
                ref->iv[i] = isum;
                ref->fv[i] = exact ? (long double)isum : fsum.sum + fsum.comp;
                ref->mag[i] = msum.sum + msum.comp;
                /* Any method may sum a triangle through larger partial tables
                 * (of up to W x Y pixels); bound the error by those terms. */
                ref->terms[i] = terms > 0 ? (double)W * (double)Y + 1 : 1;
            }
    return 0;
}

static void print_i128(char *buf, size_t size, tu_i128 v)
{
    char tmp[48];
    int neg = v < 0;
    tu_u128 m = neg ? (tu_u128)0 - (tu_u128)v : (tu_u128)v;
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(m % 10));
        m /= 10;
    } while (m);
    size_t k = 0;
    if (neg && k + 1 < size)
        buf[k++] = '-';
    while (n && k + 1 < size)
        buf[k++] = tmp[--n];
    buf[k] = '\0';
}

/* Does the exact value fit the integer table type? */
static int fits(pixsum_type t, tu_i128 v)
{
    switch (t) {
    case PIXSUM_U32: return v >= 0 && v <= (tu_i128)UINT32_MAX;
    case PIXSUM_U64: return v >= 0 && v <= (tu_i128)UINT64_MAX;
    case PIXSUM_I64: return v >= (tu_i128)INT64_MIN && v <= (tu_i128)INT64_MAX;
    default: return 0;
    }
}

/* The exact value reduced to the table type's bits, as the raw 64-bit pattern
 * the table holds (u32 zero-extended). */
static uint64_t reduce(pixsum_type t, tu_i128 v)
{
    uint64_t bits = (uint64_t)(tu_u128)v;
    return t == PIXSUM_U32 ? (uint32_t)bits : bits;
}

static uint64_t raw_of(const pixsum_view *t, size_t x, size_t y, size_t z, size_t c)
{
    const void *p = tu_elem(t, x, y, z, c);
    switch (t->type) {
    case PIXSUM_U32: return *(const uint32_t *)p;
    case PIXSUM_U64: return *(const uint64_t *)p;
    case PIXSUM_I64: return (uint64_t)*(const int64_t *)p;
    default: return 0;
    }
}

int tu_check_table(const pixsum_view *table, int padded, const tu_ref *ref, int wrap,
                   const char *what)
{
    size_t pad = padded ? 1 : 0;
    size_t zpad = ref->depth > 1 ? pad : 0;
    if (table->width != ref->width + pad || table->height != ref->height + pad ||
        table->depth != ref->depth + zpad || table->channels != ref->channels) {
        fprintf(stderr, "%s: table is %zux%zux%zu x%zu, expected %zux%zux%zu x%zu\n", what,
                table->width, table->height, table->depth, table->channels,
                ref->width + pad, ref->height + pad, ref->depth + zpad, ref->channels);
        return -1;
    }
    int is_int = table->type == PIXSUM_U32 || table->type == PIXSUM_U64 ||
                 table->type == PIXSUM_I64;
    if (!is_int && table->type != PIXSUM_F32 && table->type != PIXSUM_F64) {
        fprintf(stderr, "%s: %s is not a table type\n", what, pixsum_type_name(table->type));
        return -1;
    }
    long double eps = table->type == PIXSUM_F32 ? FLT_EPSILON : DBL_EPSILON;
    long double tiny = table->type == PIXSUM_F32 ? FLT_MIN : DBL_MIN;
    for (size_t z = 0; z < table->depth; z++)
        for (size_t y = 0; y < table->height; y++)
            for (size_t x = 0; x < table->width; x++)
                for (size_t c = 0; c < table->channels; c++) {
                    int border = pad && (x == 0 || y == 0 || (zpad && z == 0));
                    char e[64], g[64];
                    if (border) {
                        long double got = is_int ? (long double)raw_of(table, x, y, z, c)
                                                 : tu_get_f(table, x, y, z, c);
                        if (got != 0) {
                            fprintf(stderr,
                                    "%s: padding entry (%zu,%zu,%zu) channel %zu is %Lg, "
                                    "not 0 (seed %" PRIu64 ")\n",
                                    what, x, y, z, c, got, global_seed);
                            return -1;
                        }
                        continue;
                    }
                    size_t i = ref_index(ref, x - pad, y - pad, z - zpad, c);
                    if (is_int) {
                        if (!ref->exact) {
                            fprintf(stderr, "%s: integer table of a float input\n", what);
                            return -1;
                        }
                        if (!wrap && !fits(table->type, ref->iv[i])) {
                            print_i128(e, sizeof e, ref->iv[i]);
                            fprintf(stderr,
                                    "%s: entry (%zu,%zu,%zu) channel %zu = %s does not fit "
                                    "%s, yet the call was accepted without wrap mode "
                                    "(seed %" PRIu64 ")\n",
                                    what, x, y, z, c, e, pixsum_type_name(table->type),
                                    global_seed);
                            return -1;
                        }
                        uint64_t want = reduce(table->type, ref->iv[i]);
                        uint64_t got = raw_of(table, x, y, z, c);
                        if (got != want) {
                            print_i128(e, sizeof e, ref->iv[i]);
                            snprintf(g, sizeof g, "%" PRIu64 " (raw bits)", got);
                            fprintf(stderr,
                                    "%s: %s entry (%zu,%zu,%zu) channel %zu is %s, expected "
                                    "%s = raw %" PRIu64 " (seed %" PRIu64 ")\n",
                                    what, pixsum_type_name(table->type), x, y, z, c, g, e,
                                    want, global_seed);
                            return -1;
                        }
                    } else {
                        long double want = ref->exact ? (long double)ref->iv[i] : ref->fv[i];
                        long double got = tu_get_f(table, x, y, z, c);
                        long double bound = 8 * eps * (long double)ref->terms[i] * ref->mag[i] +
                                            (long double)ref->terms[i] * tiny;
                        if (!(fabsl(got - want) <= bound)) {
                            fprintf(stderr,
                                    "%s: %s entry (%zu,%zu,%zu) channel %zu is %.21Lg, "
                                    "expected %.21Lg (error %Lg > bound %Lg) (seed %" PRIu64
                                    ")\n",
                                    what, pixsum_type_name(table->type), x, y, z, c, got, want,
                                    fabsl(got - want), bound, global_seed);
                            return -1;
                        }
                    }
                }
    return 0;
}

/* ---- methods ------------------------------------------------------------ */

/* PIXSUM_TEST_METHODS="serial.,simd.2wh" restricts the runs to the methods
 * whose names start with one of the listed prefixes ("auto" included). */
static int method_selected(const char *name)
{
    const char *sel = getenv("PIXSUM_TEST_METHODS");
    if (!sel || !*sel)
        return 1;
    size_t len = strlen(name);
    for (const char *p = sel; *p;) {
        size_t n = strcspn(p, ",");
        if (n > 0 && n <= len && strncmp(p, name, n) == 0)
            return 1;
        p += n + (p[n] == ',');
    }
    return 0;
}

size_t tu_methods_for(unsigned ops, int *ids, size_t max)
{
    size_t n = 0, count = 0;
    const pixsum_method_info *infos = pixsum_methods(&count);
    if (n < max && method_selected("auto"))
        ids[n++] = 0;
    /* The OpenGL methods take one full-image pass per bin (minutes on a CPU
     * renderer for 65536 bins) and have their own test (test_gl_hist): only
     * when PIXSUM_TEST_METHODS names them. */
    const char *sel = getenv("PIXSUM_TEST_METHODS");
    for (size_t i = 0; i < count && n < max; i++)
        if ((infos[i].ops & ops) == ops && infos[i].available &&
            method_selected(infos[i].name) &&
            (infos[i].backend != PIXSUM_BACKEND_GL || (sel && *sel)))
            ids[n++] = infos[i].id;
    return n;
}

const char *tu_method_name(int id)
{
    if (id == 0)
        return "auto";
    const pixsum_method_info *m = pixsum_method_get(id);
    return m ? m->name : "?";
}

int tu_method_must_support(int id)
{
    return id == 0 || strncmp(tu_method_name(id), "serial.", 7) == 0;
}

size_t tu_supported_pairs(int squared, pixsum_type *in, pixsum_type *out, size_t max)
{
    /* Transcribed from the contract of pixsum_integral() in pixsum.h. */
    static const pixsum_type plain[][2] = {
        {PIXSUM_U8, PIXSUM_U32},   {PIXSUM_U8, PIXSUM_U64},   {PIXSUM_U8, PIXSUM_I64},
        {PIXSUM_U8, PIXSUM_F32},   {PIXSUM_U8, PIXSUM_F64},   {PIXSUM_U16, PIXSUM_U32},
        {PIXSUM_U16, PIXSUM_U64},  {PIXSUM_U16, PIXSUM_I64},  {PIXSUM_U16, PIXSUM_F32},
        {PIXSUM_U16, PIXSUM_F64},  {PIXSUM_I16, PIXSUM_I64},  {PIXSUM_I16, PIXSUM_F32},
        {PIXSUM_I16, PIXSUM_F64},  {PIXSUM_I32, PIXSUM_I64},  {PIXSUM_I32, PIXSUM_F64},
        {PIXSUM_U32, PIXSUM_U64},  {PIXSUM_U32, PIXSUM_I64},  {PIXSUM_U32, PIXSUM_F64},
        {PIXSUM_F32, PIXSUM_F32},  {PIXSUM_F32, PIXSUM_F64},  {PIXSUM_F64, PIXSUM_F64},
    };
    /* Squares are never negative, so signed inputs may also use unsigned tables. */
    static const pixsum_type extra_sq[][2] = {
        {PIXSUM_I16, PIXSUM_U32}, {PIXSUM_I16, PIXSUM_U64}, {PIXSUM_I32, PIXSUM_U64}};
    size_t n = 0;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0] && n < max; i++, n++) {
        in[n] = plain[i][0];
        out[n] = plain[i][1];
    }
    if (squared)
        for (size_t i = 0; i < sizeof extra_sq / sizeof extra_sq[0] && n < max; i++, n++) {
            in[n] = extra_sq[i][0];
            out[n] = extra_sq[i][1];
        }
    return n;
}

/* ---- histogram bins from the definition ---------------------------------- */

/* volatile: each operation rounded to double on its own, whatever the
 * compiler's contraction rules. */
double tu_hist_edge(size_t bins, double lo, double hi, size_t i)
{
    if (i >= bins)
        return hi;
    volatile double width = hi - lo;
    volatile double step = width / (double)bins;
    volatile double offset = (double)i * step;
    volatile double edge = lo + offset;
    return edge;
}

size_t tu_hist_bin(double v, size_t bins, double lo, double hi)
{
    if (isnan(v) || v < lo || v >= hi)
        return SIZE_MAX;
    size_t a = 0, b = bins; /* edge(a) <= v < edge(b) */
    while (b - a > 1) {
        size_t mid = a + (b - a) / 2;
        if (tu_hist_edge(bins, lo, hi, mid) <= v)
            a = mid;
        else
            b = mid;
    }
    return a;
}
