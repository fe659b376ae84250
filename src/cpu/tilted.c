/*
 * tilted.c - OpenCV's 45-degree tilted integral
 *   T(X, Y) = sum of i(x, y) over y < Y and |x - X + 1| <= Y - y - 1,
 * a (W+1) x (H+1) table whose entry is the sum over the upward-opening triangle
 * with apex at pixel (X-1, Y-1).
 *
 * Going from T(X, Y-1) to T(X, Y) adds the two diagonal edges of the larger
 * triangle, which meet at the apex. With running sums along each diagonal,
 *   A(x, y) = i(x, y) + A(x-1, y-1)      (down-right diagonal ending at x, y)
 *   B(x, y) = i(x, y) + B(x+1, y-1)      (down-left diagonal ending at x, y)
 * each step is T(X, Y) = T(X, Y-1) + A(X-1, Y-1) + B(X-1, Y-1) - i(X-1, Y-1);
 * for X = 0 the apex lies left of the image and only the down-left edge
 * B(0, Y-2) enters. O(W H) work, O(W) extra memory, one row at a time.
 *
 * psi_tilted_reference() loads and stores through the generic per-sample
 * helpers, in u64 or double. psi_tilted_fast() runs the same recurrence with
 * typed rows in the output's width (unsigned, so integer tables wrap exactly
 * as the reference's truncated u64 sums do), and with the row buffers padded
 * by one pixel of zeros at the ends, so the inner loop has no conditions and
 * the compiler vectorises it. Same operations in the same order: identical
 * results, floats included.
 */
#include "tilted.h"

#include <stdlib.h>
#include <string.h>

#define PSI_TILTED_IMPL(NAME, TACC, LOAD, STORE)                                         \
    static int NAME(const psi_job *job)                                                  \
    {                                                                                    \
        const pixsum_view *in = &job->in, *out = &job->out;                              \
        size_t w = in->width, ch = in->channels, n = w * ch;                             \
        TACC *buf = calloc(4 * n + (w + 1) * ch, sizeof *buf);                           \
        if (!buf)                                                                        \
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "tilted integral: no memory for %zu " \
                            "scratch samples", 5 * n);                                   \
        TACC *a_prev = buf, *a_cur = buf + n, *b_prev = buf + 2 * n, *b_cur = buf + 3 * n; \
        TACC *t = buf + 4 * n; /* current row of T, (w + 1) x ch */                      \
        for (size_t i = 0; i < (w + 1) * ch; i++)                                        \
            STORE(out->type, psi_row(out, 0, 0), i, 0);                                  \
        for (size_t y = 0; y < in->height; y++) {                                        \
            const void *src = psi_row(in, y, 0);                                         \
            for (size_t x = 0; x < w; x++) {                                             \
                for (size_t c = 0; c < ch; c++) {                                        \
                    size_t i = x * ch + c;                                               \
                    TACC v = LOAD(in->type, src, i);                                     \
                    TACC up_left = (y > 0 && x > 0) ? a_prev[i - ch] : 0;                \
                    TACC up_right = (y > 0 && x + 1 < w) ? b_prev[i + ch] : 0;           \
                    a_cur[i] = v + up_left;                                              \
                    b_cur[i] = v + up_right;                                             \
                }                                                                        \
            }                                                                            \
            void *dst = psi_row(out, y + 1, 0);                                          \
            for (size_t c = 0; c < ch; c++) {                                            \
                if (y > 0)                                                               \
                    t[c] += b_prev[c];                                                   \
                STORE(out->type, dst, c, t[c]);                                          \
            }                                                                            \
            for (size_t i = 0; i < n; i++) {                                             \
                t[i + ch] += a_cur[i] + b_cur[i] - LOAD(in->type, src, i);               \
                STORE(out->type, dst, i + ch, t[i + ch]);                                \
            }                                                                            \
            TACC *swap = a_prev; a_prev = a_cur; a_cur = swap;                           \
            swap = b_prev; b_prev = b_cur; b_cur = swap;                                 \
        }                                                                                \
        free(buf);                                                                       \
        return PIXSUM_OK;                                                                \
    }

PSI_TILTED_IMPL(tilted_int, uint64_t, psi_load_u64, psi_store_u64)
PSI_TILTED_IMPL(tilted_float, double, psi_load_f64, psi_store_f64)

int psi_tilted_reference(const psi_job *job)
{
    return psi_type_is_int(job->out.type) ? tilted_int(job) : tilted_float(job);
}

/* One typed tilted table: TIN samples, TACC accumulation (the output type, or
 * its unsigned twin for i64), TOUT stores. Buffers, each n + ch long and
 * calloc'ed: ap/ac hold A of the previous/current row at [ch, n + ch) after
 * ch zeros; bp/bc hold B at [0, n) before ch zeros; t holds the running row
 * of T ((w + 1) x ch). */
#define PSI_TILTED_FAST(NAME, TIN, TACC, TOUT)                                           \
    static void NAME(const pixsum_view *in, const pixsum_view *out, TACC *buf)           \
    {                                                                                    \
        size_t ch = in->channels, n = in->width * ch, len = n + ch;                      \
        TACC *ap = buf, *ac = buf + len, *bp = buf + 2 * len, *bc = buf + 3 * len;       \
        TACC *t = buf + 4 * len;                                                         \
        memset(psi_row(out, 0, 0), 0, len * sizeof(TOUT));                               \
        for (size_t y = 0; y < in->height; y++) {                                        \
            const TIN *src = psi_row(in, y, 0);                                          \
            TOUT *dst = psi_row(out, y + 1, 0);                                          \
            for (size_t c = 0; c < ch; c++) {                                            \
                t[c] += bp[c];                                                           \
                dst[c] = (TOUT)t[c];                                                     \
            }                                                                            \
            for (size_t i = 0; i < n; i++) {                                             \
                TACC v = (TACC)src[i];                                                   \
                TACC a = v + ap[i], b = v + bp[i + ch];                                  \
                ac[i + ch] = a;                                                          \
                bc[i] = b;                                                               \
                t[i + ch] += a + b - v;                                                  \
                dst[i + ch] = (TOUT)t[i + ch];                                           \
            }                                                                            \
            TACC *swap = ap; ap = ac; ac = swap;                                         \
            swap = bp; bp = bc; bc = swap;                                               \
        }                                                                                \
    }

PSI_TILTED_FAST(tilted_u8_u32, uint8_t, uint32_t, uint32_t)
PSI_TILTED_FAST(tilted_u8_u64, uint8_t, uint64_t, uint64_t)
PSI_TILTED_FAST(tilted_u8_i64, uint8_t, uint64_t, int64_t)
PSI_TILTED_FAST(tilted_u16_u32, uint16_t, uint32_t, uint32_t)
PSI_TILTED_FAST(tilted_u16_u64, uint16_t, uint64_t, uint64_t)
PSI_TILTED_FAST(tilted_u16_i64, uint16_t, uint64_t, int64_t)
PSI_TILTED_FAST(tilted_f32_f64, float, double, double)
PSI_TILTED_FAST(tilted_f64_f64, double, double, double)

int psi_tilted_fast(const psi_job *job)
{
    const pixsum_view *in = &job->in, *out = &job->out;
    pixsum_type ti = in->type, to = out->type;
    bool wide = to == PIXSUM_U64 || to == PIXSUM_I64;
    bool covered = ((ti == PIXSUM_U8 || ti == PIXSUM_U16) &&
                    (to == PIXSUM_U32 || wide)) ||
                   ((ti == PIXSUM_F32 || ti == PIXSUM_F64) && to == PIXSUM_F64);
    if (!covered)
        return psi_tilted_reference(job);
    size_t len = in->width * in->channels + in->channels;
    size_t acc = to == PIXSUM_U32 ? sizeof(uint32_t) : 8;
    void *buf = calloc(5 * len, acc);
    if (!buf)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "tilted integral: no memory for %zu scratch samples",
                        5 * len);
    if (ti == PIXSUM_U8 && to == PIXSUM_U32)
        tilted_u8_u32(in, out, buf);
    else if (ti == PIXSUM_U8 && to == PIXSUM_U64)
        tilted_u8_u64(in, out, buf);
    else if (ti == PIXSUM_U8)
        tilted_u8_i64(in, out, buf);
    else if (ti == PIXSUM_U16 && to == PIXSUM_U32)
        tilted_u16_u32(in, out, buf);
    else if (ti == PIXSUM_U16 && to == PIXSUM_U64)
        tilted_u16_u64(in, out, buf);
    else if (ti == PIXSUM_U16)
        tilted_u16_i64(in, out, buf);
    else if (ti == PIXSUM_F32)
        tilted_f32_f64(in, out, buf);
    else
        tilted_f64_f64(in, out, buf);
    free(buf);
    return PIXSUM_OK;
}
