/*
 * scalar_kernels.c - portable C row kernels for every supported type pair
 * (see kernels.h), and the row driver shared by the CPU methods.
 */
#include "kernels.h"

/* One definition per pair: name suffix, pixsum types, input C type, output C type and the
 * accumulator type (unsigned of the output's width for integer outputs). */
#define PSI_PAIRS(X)                                   \
    X(u8_u32, PIXSUM_U8, PIXSUM_U32, uint8_t, uint32_t, uint32_t)             \
    X(u8_u64, PIXSUM_U8, PIXSUM_U64, uint8_t, uint64_t, uint64_t)             \
    X(u8_i64, PIXSUM_U8, PIXSUM_I64, uint8_t, int64_t, uint64_t)              \
    X(u8_f32, PIXSUM_U8, PIXSUM_F32, uint8_t, float, float)                   \
    X(u8_f64, PIXSUM_U8, PIXSUM_F64, uint8_t, double, double)                 \
    X(u16_u32, PIXSUM_U16, PIXSUM_U32, uint16_t, uint32_t, uint32_t)           \
    X(u16_u64, PIXSUM_U16, PIXSUM_U64, uint16_t, uint64_t, uint64_t)           \
    X(u16_i64, PIXSUM_U16, PIXSUM_I64, uint16_t, int64_t, uint64_t)            \
    X(u16_f32, PIXSUM_U16, PIXSUM_F32, uint16_t, float, float)                 \
    X(u16_f64, PIXSUM_U16, PIXSUM_F64, uint16_t, double, double)               \
    X(i16_u32, PIXSUM_I16, PIXSUM_U32, int16_t, uint32_t, uint32_t)            \
    X(i16_u64, PIXSUM_I16, PIXSUM_U64, int16_t, uint64_t, uint64_t)            \
    X(i16_i64, PIXSUM_I16, PIXSUM_I64, int16_t, int64_t, uint64_t)             \
    X(i16_f32, PIXSUM_I16, PIXSUM_F32, int16_t, float, float)                  \
    X(i16_f64, PIXSUM_I16, PIXSUM_F64, int16_t, double, double)                \
    X(i32_u64, PIXSUM_I32, PIXSUM_U64, int32_t, uint64_t, uint64_t)            \
    X(i32_i64, PIXSUM_I32, PIXSUM_I64, int32_t, int64_t, uint64_t)             \
    X(i32_f64, PIXSUM_I32, PIXSUM_F64, int32_t, double, double)                \
    X(u32_u64, PIXSUM_U32, PIXSUM_U64, uint32_t, uint64_t, uint64_t)           \
    X(u32_i64, PIXSUM_U32, PIXSUM_I64, uint32_t, int64_t, uint64_t)            \
    X(u32_f64, PIXSUM_U32, PIXSUM_F64, uint32_t, double, double)               \
    X(f32_f32, PIXSUM_F32, PIXSUM_F32, float, float, float)                    \
    X(f32_f64, PIXSUM_F32, PIXSUM_F64, float, double, double)                  \
    X(f64_f64, PIXSUM_F64, PIXSUM_F64, double, double, double)

#define PSI_PLAIN(TACC, v) ((TACC)(v))
#define PSI_SQUARE(TACC, v) ((TACC)(v) * (TACC)(v))

/* 2wh: running per-channel row sum plus the row above. */
#define PSI_DEF_ROW(NAME, TIN, TOUT, TACC, VAL)                                        \
    static void NAME(const void *in_, void *out_, const void *prev_, size_t width,     \
                     size_t channels)                                                  \
    {                                                                                  \
        const TIN *in = in_;                                                           \
        TOUT *out = out_;                                                              \
        const TOUT *prev = prev_;                                                      \
        TACC run[4] = {0, 0, 0, 0};                                                    \
        size_t n = width * channels;                                                   \
        for (size_t i = 0, c = 0; i < n; i++) {                                        \
            run[c] += VAL(TACC, in[i]);                                                \
            out[i] = (TOUT)(prev ? run[c] + (TACC)prev[i] : run[c]);                   \
            c = c + 1 == channels ? 0 : c + 1;                                         \
        }                                                                              \
    }

/* 3wh: I(x,y) = v + I(x-1,y) + I(x,y-1) - I(x-1,y-1). */
#define PSI_DEF_CELL3(NAME, TIN, TOUT, TACC, VAL)                                      \
    static void NAME(const void *in_, void *out_, const void *prev_, size_t width,     \
                     size_t channels)                                                  \
    {                                                                                  \
        const TIN *in = in_;                                                           \
        TOUT *out = out_;                                                              \
        const TOUT *prev = prev_;                                                      \
        size_t n = width * channels;                                                   \
        for (size_t i = 0; i < n; i++) {                                               \
            TACC v = VAL(TACC, in[i]);                                                 \
            if (i >= channels)                                                         \
                v += (TACC)out[i - channels];                                          \
            if (prev) {                                                                \
                v += (TACC)prev[i];                                                    \
                if (i >= channels)                                                     \
                    v -= (TACC)prev[i - channels];                                     \
            }                                                                          \
            out[i] = (TOUT)v;                                                          \
        }                                                                              \
    }

#define PSI_DEF_PAIR(SUF, IN, OUT, TIN, TOUT, TACC)                                   \
    PSI_DEF_ROW(row_sum_##SUF, TIN, TOUT, TACC, PSI_PLAIN)                   \
    PSI_DEF_ROW(row_sq_##SUF, TIN, TOUT, TACC, PSI_SQUARE)                   \
    PSI_DEF_CELL3(cell3_sum_##SUF, TIN, TOUT, TACC, PSI_PLAIN)               \
    PSI_DEF_CELL3(cell3_sq_##SUF, TIN, TOUT, TACC, PSI_SQUARE)               \
    static const psi_row_kernels kernels_##SUF = {row_sum_##SUF, row_sq_##SUF, \
                                                  cell3_sum_##SUF, cell3_sq_##SUF};

PSI_PAIRS(PSI_DEF_PAIR)

#define PSI_DEF_ADD(SUF, TOUT, TACC)                                            \
    static void add_##SUF(void *out_, const void *a_, const void *b_, size_t n) \
    {                                                                           \
        TOUT *out = out_;                                                       \
        const TOUT *a = a_, *b = b_;                                            \
        if (b) {                                                                \
            for (size_t i = 0; i < n; i++)                                      \
                out[i] = (TOUT)((TACC)out[i] + (TACC)a[i] - (TACC)b[i]);        \
        } else {                                                                \
            for (size_t i = 0; i < n; i++)                                      \
                out[i] = (TOUT)((TACC)out[i] + (TACC)a[i]);                     \
        }                                                                       \
    }

PSI_DEF_ADD(u32, uint32_t, uint32_t)
PSI_DEF_ADD(u64, uint64_t, uint64_t)
PSI_DEF_ADD(i64, int64_t, uint64_t)
PSI_DEF_ADD(f32, float, float)
PSI_DEF_ADD(f64, double, double)

const psi_row_kernels *psi_scalar_kernels(pixsum_type in, pixsum_type out)
{
#define PSI_MATCH(SUF, IN, OUT, TIN, TOUT, TACC) \
    if (in == IN && out == OUT)                    \
        return &kernels_##SUF;
    PSI_PAIRS(PSI_MATCH)
#undef PSI_MATCH
    return NULL;
}

psi_add_fn psi_scalar_add(pixsum_type out)
{
    switch (out) {
    case PIXSUM_U32: return add_u32;
    case PIXSUM_U64: return add_u64;
    case PIXSUM_I64: return add_i64;
    case PIXSUM_F32: return add_f32;
    case PIXSUM_F64: return add_f64;
    default: return NULL;
    }
}

#define RUNNING_SUM(SUF, T)                                               \
    static void running_##SUF(void *row_, size_t w, size_t ch)            \
    {                                                                     \
        T *row = row_;                                                    \
        for (size_t i = ch; i < w * ch; i++)                              \
            row[i] = (T)(row[i] + row[i - ch]);                           \
    }
RUNNING_SUM(u32, uint32_t)
RUNNING_SUM(u64, uint64_t)
RUNNING_SUM(f32, float)
RUNNING_SUM(f64, double)

psi_running_fn psi_scalar_running(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U32: return running_u32;
    case PIXSUM_U64:
    case PIXSUM_I64: return running_u64;
    case PIXSUM_F32: return running_f32;
    default: return running_f64;
    }
}

/* One table (plain or squared) of one row. */
static void table_row(const pixsum_view *in, const pixsum_view *t, psi_row_fn fn,
                      psi_add_fn add, const void *carry, size_t y, size_t z)
{
    const void *src = psi_row(in, y, z);
    void *dst = psi_row(t, y, z);
    fn(src, dst, y ? psi_row(t, y - 1, z) : carry, in->width, in->channels);
    if (z > 0)
        add(dst, psi_row(t, y, z - 1), y ? psi_row(t, y - 1, z - 1) : NULL,
            psi_row_samples(t));
}

int psi_rows_driver(const psi_job *job, psi_row_fn sum_fn, psi_row_fn sq_fn, size_t y0,
                    size_t y1)
{
    const pixsum_view *in = &job->in;
    psi_add_fn add_sum = job->out.data ? psi_scalar_add(job->out.type) : NULL;
    psi_add_fn add_sq = job->out_sq.data ? psi_scalar_add(job->out_sq.type) : NULL;
    for (size_t z = 0; z < in->depth; z++) {
        for (size_t y = y0; y < y1; y++) {
            if (job->out.data)
                table_row(in, &job->out, sum_fn, add_sum, job->carry, y, z);
            if (job->out_sq.data)
                table_row(in, &job->out_sq, sq_fn, add_sq, job->carry_sq, y, z);
        }
    }
    return PIXSUM_OK;
}
