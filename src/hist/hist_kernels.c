/*
 * hist_kernels.c - the CPU histogram counters.
 *
 * psi_hist_run_scalar() is the reference: each sample goes through the bin
 * formula psi_hist_bin() into one u64 table.
 *
 * psi_hist_count_rows_isa() is the fast portable path (method hist.sub):
 *  - u8, u16, i16: each sample's raw value indexes a table of 2^8 or 2^16 u32
 *    counters (4 sub-tables for u8, so that runs of one value - constant
 *    images - do not serialise on one counter; one table for 16-bit values,
 *    whose 256 KiB table would not fit L2 twice and which measured faster
 *    with one table on random and constant images); the counters are flushed into
 *    u64 before they can wrap, and the raw-value counts are folded into bins
 *    with the bin formula once at the end (so any bins and range cost nothing
 *    per pixel);
 *  - i32, u32, f32, f64: a row is first classified (bin, below, above, NaN or
 *    masked out) into a buffer of table offsets - with AVX-512 when available
 *    for floats - and then counted the same way.
 * Interleaved channels and masks run loops specialised per channel count, a
 * mask adding 0/1 weights rather than branching (count_pixels()). u8 images use
 * the bit-sliced AVX-512 counter when the CPU has it (hist_avx512.c): directly
 * for one unmasked channel, through per-channel planes for channels and
 * masks. A row range with fewer samples than
 * its table has entries skips the tables: each sample goes through the
 * reference's loop (count_rows_direct()).
 */
#include "hist.h"
#include "hist_classify.h"

#include <stdlib.h>
#include <string.h>

/* Rows [r0, r1) of the flattened row range, every selected sample through
 * psi_hist_bin() straight into counts / below / above / nan. */
static void count_rows_direct(const pixsum_view *in, const psi_hist_params *p, size_t r0,
                              size_t r1, uint64_t *counts, uint64_t *below, uint64_t *above,
                              uint64_t *nan)
{
    size_t ch = in->channels;
    for (size_t r = r0; r < r1; r++) {
        const void *row = psi_hist_row(in, r);
        const uint8_t *m = p->mask.data ? psi_hist_row(&p->mask, r) : NULL;
        for (size_t x = 0; x < in->width; x++) {
            if (m && !m[x])
                continue;
            for (size_t c = 0; c < ch; c++) {
                size_t b = psi_hist_bin(p, psi_load_f64(in->type, row, x * ch + c));
                if (b < p->b.bins)
                    counts[c * p->b.bins + b]++;
                else if (b == p->b.bins + PSI_HIST_BELOW)
                    below[c]++;
                else if (b == p->b.bins + PSI_HIST_ABOVE)
                    above[c]++;
                else
                    nan[c]++;
            }
        }
    }
}

int psi_hist_run_scalar(const psi_job *job)
{
    psi_hist_params *p = (psi_hist_params *)job->extra;
    count_rows_direct(&job->in, p, 0, job->in.height * job->in.depth, p->counts, p->below,
                      p->above, p->nan);
    return PIXSUM_OK;
}

/* ---- raw-value counting for 8/16-bit types ----------------------------- */

#define SUB_TABLES 4

/* Counting state: `tables` sub-tables of `stride` u32 counters each, flushed
 * into the u64 array `acc` (stride values) before a counter can wrap. */
typedef struct counter {
    uint32_t *t[SUB_TABLES];
    int tables;
    size_t stride;
    uint64_t *acc;
    uint64_t pending; /* samples counted since the last flush */
} counter;

static void counter_flush(counter *k)
{
    for (int j = 0; j < k->tables; j++) {
        uint32_t *t = k->t[j];
        for (size_t i = 0; i < k->stride; i++)
            k->acc[i] += t[i];
        memset(t, 0, k->stride * sizeof *t);
    }
    k->pending = 0;
}

/* Makes room for n more samples (n <= UINT32_MAX). */
static inline void counter_reserve(counter *k, size_t n)
{
    if (k->pending + n > UINT32_MAX)
        counter_flush(k);
    k->pending += n;
}

static int counter_init(counter *k, int tables, size_t stride, uint64_t *acc)
{
    memset(k, 0, sizeof *k);
    k->tables = tables;
    k->stride = stride;
    k->acc = acc;
    uint32_t *all =
        psi_scratch_take(PSI_SCRATCH_HIST_TABLES, (size_t)tables * stride * sizeof *all);
    if (!all)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %d x %zu histogram counters",
                        tables, stride);
    for (int j = 0; j < tables; j++)
        k->t[j] = all + (size_t)j * stride;
    return PIXSUM_OK;
}

static void counter_free(counter *k)
{
    psi_scratch_give(PSI_SCRATCH_HIST_TABLES, k->t[0]);
}

/* Counts n consecutive samples of one channel (idx already offset). */
#define COUNT_RUN(T, SRC, N, K, OFF)                                                   \
    do {                                                                               \
        const T *s_ = (SRC);                                                           \
        size_t n_ = (N), i_ = 0;                                                       \
        uint32_t *t0_ = (K)->t[0] + (OFF), *t1_ = (K)->t[1 % (K)->tables] + (OFF);     \
        uint32_t *t2_ = (K)->t[2 % (K)->tables] + (OFF), *t3_ = (K)->t[3 % (K)->tables] + (OFF); \
        for (; i_ + 4 <= n_; i_ += 4) {                                                \
            if ((i_ & 15) == 0) /* 4096 samples ahead: the loop otherwise waits on DRAM */ \
                __builtin_prefetch(s_ + i_ + 4096);                                    \
            /* load the four indices before the stores: the tables may have the  \
             * source's type, and the compiler must not re-read after each store */ \
            size_t a_ = s_[i_], b_ = s_[i_ + 1], c_ = s_[i_ + 2], d_ = s_[i_ + 3];     \
            t0_[a_]++;                                                                 \
            t1_[b_]++;                                                                 \
            t2_[c_]++;                                                                 \
            t3_[d_]++;                                                                 \
        }                                                                              \
        for (; i_ < n_; i_++)                                                          \
            t0_[s_[i_]]++;                                                             \
    } while (0)

/* Counts n consecutive u8 samples into the four sub-tables t[0..3].
 * Two 8-byte loads per 16 samples, their bytes taken by shifts: one load
 * instead of eight leaves the load ports to the counters' read-modify-writes,
 * which byte loads would compete with. Which byte goes to which sub-table does not
 * change the counts, so the byte order of the loads does not matter. */
static void count_u8_run(const uint8_t *s, size_t n, uint32_t *const t[SUB_TABLES])
{
    uint32_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        if ((i & 63) == 0) /* 4096 samples ahead: the loop otherwise waits on DRAM */
            __builtin_prefetch(s + i + 4096);
        uint64_t w, v;
        memcpy(&w, s + i, 8);
        memcpy(&v, s + i + 8, 8);
#pragma GCC unroll 4
        for (int b = 0; b < 64; b += 16) {
            t0[(w >> b) & 255]++;
            t1[(v >> b) & 255]++;
            t2[(w >> (b + 8)) & 255]++;
            t3[(v >> (b + 8)) & 255]++;
        }
    }
    for (; i < n; i++)
        t0[s[i]]++;
}

/* Counts `pixels` interleaved pixels of `ch` u8 channels: channel c goes to
 * entries [256 c, 256 c + 256) of the sub-tables, which rotate from pixel to
 * pixel (so runs of one colour do not serialise on one counter). With a mask
 * (m != NULL, `masked` true) each pixel adds m[x] != 0 rather than branching:
 * a branch per pixel on a random mask cost 5.7 ns per pixel (2-core VM).
 * Always inlined, so that each call with constant ch and masked gets its own
 * loop with constant offsets (a loop over a run-time channel count was 5x
 * slower per sample). */
static inline __attribute__((always_inline)) void
count_pixels_u8_ch(const uint8_t *s, const uint8_t *m, size_t pixels, size_t ch, bool masked,
                   uint32_t *const t[SUB_TABLES])
{
    uint32_t *t0 = t[0], *t1 = t[1], *t2 = t[2], *t3 = t[3];
    size_t x = 0;
    for (; x + 4 <= pixels; x += 4) {
        const uint8_t *px = s + x * ch;
        if ((x & 15) == 0) /* 4096 bytes ahead, as count_u8_run */
            __builtin_prefetch(px + 4096);
        /* copy the 4 pixels out first: the stores to the tables may alias
         * the source bytes as far as the compiler knows */
        uint8_t b[16];
        memcpy(b, px, 4 * ch);
        uint32_t w0 = 1, w1 = 1, w2 = 1, w3 = 1;
        if (masked)
            w0 = m[x] != 0, w1 = m[x + 1] != 0, w2 = m[x + 2] != 0, w3 = m[x + 3] != 0;
        for (size_t c = 0; c < ch; c++) {
            t0[c * 256 + b[c]] += w0;
            t1[c * 256 + b[ch + c]] += w1;
            t2[c * 256 + b[2 * ch + c]] += w2;
            t3[c * 256 + b[3 * ch + c]] += w3;
        }
    }
    for (; x < pixels; x++) {
        uint8_t b[4];
        memcpy(b, s + x * ch, ch);
        uint32_t w = masked ? m[x] != 0 : 1;
        for (size_t c = 0; c < ch; c++)
            t[x & 3][c * 256 + b[c]] += w;
    }
}

/* count_pixels_u8_ch() for 16-bit samples (u16, or i16 by bit pattern) into
 * one table of 65536 entries per channel. */
static inline __attribute__((always_inline)) void
count_pixels_u16_ch(const uint16_t *s, const uint8_t *m, size_t pixels, size_t ch, bool masked,
                    uint32_t *t)
{
    for (size_t x = 0; x < pixels; x++) {
        if ((x & 7) == 0)
            __builtin_prefetch(s + x * ch + 2048);
        uint16_t v[4];
        memcpy(v, s + x * ch, ch * sizeof *v);
        uint32_t w = masked ? m[x] != 0 : 1;
        for (size_t c = 0; c < ch; c++)
            t[c * 65536 + v[c]] += w;
    }
}

/* Counts `pixels` pixels of `ch` channels of an 8/16-bit type starting at
 * src into k's tables (the caller has reserved pixels * ch samples); pixels
 * whose mask byte is 0 are skipped (m may be NULL). */
static void count_pixels(pixsum_type type, const void *src, const uint8_t *m, size_t pixels,
                         size_t ch, counter *k)
{
    if (type == PIXSUM_U8 && ch == 1 && !m) {
        count_u8_run(src, pixels, k->t);
        return;
    }
    if (type != PIXSUM_U8 && ch == 1 && !m) {
        COUNT_RUN(uint16_t, (const uint16_t *)src, pixels, k, 0);
        return;
    }
    /* one instance per (type, channels, masked) */
#define COUNT_PIXELS_CASE(CH)                                                  \
    case CH:                                                                   \
        if (type == PIXSUM_U8 && m)                                            \
            count_pixels_u8_ch(src, m, pixels, CH, true, k->t);                \
        else if (type == PIXSUM_U8)                                            \
            count_pixels_u8_ch(src, NULL, pixels, CH, false, k->t);            \
        else if (m)                                                            \
            count_pixels_u16_ch(src, m, pixels, CH, true, k->t[0]);            \
        else                                                                   \
            count_pixels_u16_ch(src, NULL, pixels, CH, false, k->t[0]);        \
        return;
    switch (ch) {
        COUNT_PIXELS_CASE(1)
        COUNT_PIXELS_CASE(2)
        COUNT_PIXELS_CASE(3)
        default:
        COUNT_PIXELS_CASE(4)
    }
#undef COUNT_PIXELS_CASE
}

/* Entries per channel of the raw-value table of an 8/16-bit type. */
static inline size_t raw_levels(pixsum_type t)
{
    return t == PIXSUM_U8 ? 256 : 65536;
}

/* The value a raw-table index stands for: u8/u16 as is; i16 samples are
 * counted by their 16-bit pattern, so index r is the value (int16_t)r. */
static inline double raw_value(pixsum_type t, size_t r)
{
    return t == PIXSUM_I16 ? (double)(int16_t)(uint16_t)r : (double)r;
}

/* True when the rows [r0, r1) lie back to back in memory (packed image). */
static bool rows_contiguous(const pixsum_view *in)
{
    size_t row_bytes = in->width * in->channels * pixsum_type_size(in->type);
    if (in->row_stride != (ptrdiff_t)row_bytes)
        return false;
    return in->depth == 1 || in->slice_stride == (ptrdiff_t)(row_bytes * in->height);
}

static int count_small(const pixsum_view *in, const psi_hist_params *p, size_t r0, size_t r1,
                       uint64_t *counts, uint64_t *below, uint64_t *above, uint64_t *nan,
                       bool simd)
{
    (void)nan;
    size_t levels = raw_levels(in->type), ch = in->channels;
    size_t stride = levels * ch;
    uint64_t *raw = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, stride * sizeof *raw);
    if (!raw)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the raw-value table");
    bool plain = ch == 1 && !p->mask.data;
    bool one_run = !p->mask.data && rows_contiguous(in);
    /* The bit-sliced counter pays ~1k instructions per call to fold its
     * accumulators: use it on one long run or on wide rows only. */
    bool u8_simd = simd && in->type == PIXSUM_U8;
    /* Channels and masks: gathered into planes for the same counter, whose
     * setup (about 260 KiB of scratch for 4 channels) pays from a few
     * thousand pixels on. */
    bool planes_done = u8_simd && !plain && (r1 - r0) * in->width >= 4096 &&
                       psi_hist_u8_rows_avx512(in, p->mask.data ? &p->mask : NULL, r0, r1, raw);
    if (planes_done) {
        /* counted */
    } else if (u8_simd && plain && (one_run || in->width >= 2048)) {
        if (one_run) {
            psi_hist_u8_bitsliced(psi_hist_row(in, r0), (r1 - r0) * in->width, raw);
        } else {
            for (size_t r = r0; r < r1; r++)
                psi_hist_u8_bitsliced(psi_hist_row(in, r), in->width, raw);
        }
    } else {
        counter k;
        int tables = in->type == PIXSUM_U8 ? SUB_TABLES : 1;
        int st = counter_init(&k, tables, stride, raw);
        if (st != PIXSUM_OK) {
            psi_scratch_give(PSI_SCRATCH_HIST_WIDE, raw);
            return st;
        }
        if (one_run) {
            /* packed rows: one run of pixels, in chunks the u32 counters hold */
            size_t total = (r1 - r0) * in->width, done = 0;
            size_t chunk = ((size_t)1 << 30) / ch;
            const char *base = psi_hist_row(in, r0);
            size_t pixel_bytes = ch * pixsum_type_size(in->type);
            while (done < total) {
                size_t n = total - done < chunk ? total - done : chunk;
                counter_reserve(&k, n * ch);
                count_pixels(in->type, base + done * pixel_bytes, NULL, n, ch, &k);
                done += n;
            }
        } else {
            /* row by row, a row in segments the u32 counters hold */
            size_t seg = ((size_t)1 << 30) / ch;
            size_t pixel_bytes = ch * pixsum_type_size(in->type);
            for (size_t r = r0; r < r1; r++) {
                const char *row = psi_hist_row(in, r);
                const uint8_t *m = p->mask.data ? psi_hist_row(&p->mask, r) : NULL;
                for (size_t x0 = 0; x0 < in->width; x0 += seg) {
                    size_t n = in->width - x0 < seg ? in->width - x0 : seg;
                    counter_reserve(&k, n * ch);
                    count_pixels(in->type, row + x0 * pixel_bytes, m ? m + x0 : NULL, n, ch,
                                 &k);
                }
            }
        }
        counter_flush(&k);
        counter_free(&k);
    }
    /* Fold raw values into bins: one formula evaluation per level. */
    for (size_t c = 0; c < ch; c++) {
        const uint64_t *t = raw + c * levels;
        uint64_t *h = counts + c * p->b.bins;
        double first = in->type == PIXSUM_I16 ? -32768.0 : 0.0;
        bool identity =
            p->b.bins == levels && p->b.lo == first && p->b.hi == first + (double)levels;
        for (size_t v = 0; v < levels; v++) {
            uint64_t k = t[v];
            if (!k)
                continue;
            double value = raw_value(in->type, v);
            size_t b = identity ? (size_t)(value - first) : psi_hist_bin(p, value);
            if (b < p->b.bins)
                h[b] += k;
            else if (b == p->b.bins + PSI_HIST_BELOW)
                below[c] += k;
            else
                above[c] += k;
        }
    }
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, raw);
    return PIXSUM_OK;
}

/* ---- classified counting for i32, u32, f32, f64 ------------------------ */

/* Pixels of a row classified at a time (the index buffer holds this many
 * pixels' samples; a long row is counted in slices, so the u32 counters are
 * checked at least once per slice). */
#define CLASSIFY_SLICE 4096

static int count_classified(const pixsum_view *in, const psi_hist_params *p, size_t r0,
                            size_t r1, uint64_t *counts, uint64_t *below, uint64_t *above,
                            uint64_t *nan, bool simd)
{
    size_t ch = in->channels, w = in->width, esz = pixsum_type_size(in->type);
    size_t slice = w < CLASSIFY_SLICE ? w : CLASSIFY_SLICE;
    size_t slots = p->b.bins + PSI_HIST_EXTRA, stride = slots * ch;
    uint64_t *acc = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, stride * sizeof *acc);
    uint32_t *idx = malloc(slice * ch * sizeof *idx);
    counter k;
    psi_classifier cls; /* no table for these types: nothing to free */
    int tables = p->b.bins <= 4096 ? SUB_TABLES : 1;
    int st = acc && idx ? psi_classifier_init(&cls, in->type, p, simd)
                        : psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate histogram scratch");
    if (st == PIXSUM_OK)
        st = counter_init(&k, tables, stride, acc);
    if (st != PIXSUM_OK) {
        psi_scratch_give(PSI_SCRATCH_HIST_WIDE, acc);
        free(idx);
        return st;
    }
    for (size_t r = r0; r < r1; r++) {
        const char *row = psi_hist_row(in, r);
        const uint8_t *m = p->mask.data ? psi_hist_row(&p->mask, r) : NULL;
        for (size_t x0 = 0; x0 < w; x0 += slice) {
            size_t px = w - x0 < slice ? w - x0 : slice, n = px * ch;
            const void *src = row + x0 * ch * esz;
            psi_classify_row(&cls, src, n, idx);
            if (m)
                for (size_t x = 0; x < px; x++)
                    if (!m[x0 + x])
                        for (size_t c = 0; c < ch; c++)
                            idx[x * ch + c] = (uint32_t)(p->b.bins + PSI_HIST_SKIP);
            if (ch > 1)
                for (size_t x = 0; x < px; x++)
                    for (size_t c = 1; c < ch; c++)
                        idx[x * ch + c] += (uint32_t)(c * slots);
            counter_reserve(&k, n);
            COUNT_RUN(uint32_t, idx, n, &k, 0);
        }
    }
    counter_flush(&k);
    counter_free(&k);
    for (size_t c = 0; c < ch; c++) {
        const uint64_t *a = acc + c * slots;
        for (size_t b = 0; b < p->b.bins; b++)
            counts[c * p->b.bins + b] += a[b];
        below[c] += a[p->b.bins + PSI_HIST_BELOW];
        above[c] += a[p->b.bins + PSI_HIST_ABOVE];
        nan[c] += a[p->b.bins + PSI_HIST_NAN];
    }
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, acc);
    free(idx);
    return PIXSUM_OK;
}

int psi_hist_count_rows_isa(const pixsum_view *in, const psi_hist_params *p, size_t r0,
                            size_t r1, uint64_t *counts, uint64_t *below, uint64_t *above,
                            uint64_t *nan, bool simd)
{
    if (r0 >= r1)
        return PIXSUM_OK;
    /* Tables pay for their clearing and folding (768 KB for a 16-bit
     * channel): with fewer samples than entries, each sample goes straight
     * to its bin (bench/python/hist_small.py on the 2-core VM: a u16 64x64
     * image 37 us per call, 157-2000 us through the tables before). */
    size_t samples = (r1 - r0) * in->width * in->channels;
    size_t entries = (psi_hist_small_type(in->type) ? raw_levels(in->type)
                                                    : p->b.bins + PSI_HIST_EXTRA) *
                     in->channels;
    if (samples < entries) {
        count_rows_direct(in, p, r0, r1, counts, below, above, nan);
        return PIXSUM_OK;
    }
    simd = simd && psi_hist_avx512_available();
    if (psi_hist_small_type(in->type))
        return count_small(in, p, r0, r1, counts, below, above, nan, simd);
    return count_classified(in, p, r0, r1, counts, below, above, nan, simd);
}

int psi_hist_count_rows(const pixsum_view *in, const psi_hist_params *p, size_t r0, size_t r1,
                        uint64_t *counts, uint64_t *below, uint64_t *above, uint64_t *nan)
{
    return psi_hist_count_rows_isa(in, p, r0, r1, counts, below, above, nan, false);
}

#if !defined(__x86_64__) && !defined(__i386__)
/* No AVX-512 file on this architecture: the SIMD paths are never taken. */
bool psi_hist_avx512_available(void)
{
    return false;
}
void psi_hist_u8_bitsliced(const uint8_t *data, size_t n, uint64_t *raw)
{
    for (size_t i = 0; i < n; i++)
        raw[data[i]]++;
}
bool psi_hist_u8_rows_avx512(const pixsum_view *in, const pixsum_view *mask, size_t r0,
                             size_t r1, uint64_t *raw)
{
    (void)in, (void)mask, (void)r0, (void)r1, (void)raw;
    return false;
}
void psi_hist_map_u8_avx512(const uint8_t *src, uint8_t *dst, size_t n, const uint8_t lut[256])
{
    for (size_t i = 0; i < n; i++)
        dst[i] = lut[src[i]];
}
void psi_hist_classify_avx512(const void *data, pixsum_type type, size_t n,
                              const psi_hist_params *p, uint32_t *out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = (uint32_t)psi_hist_bin(p, psi_load_f64(type, data, i));
}
#endif
