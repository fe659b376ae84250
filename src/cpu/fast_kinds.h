/*
 * fast_kinds.h - the list of fast row kernels every full ISA file (AVX2,
 * AVX-512) instantiates from fast_row_template.h, and the getter that maps a
 * (input, output, squared) request to one of them. The including file defines
 * PSI_VDW and the LD_*, ADD_*, SQ_* primitives named below.
 *
 * Accumulator kinds: A32 (u32 lanes, modular), A64 (u64 lanes, modular; also
 * serves i64 outputs, same bits), F32, F64.
 */
#define PSI_L32 (PSI_VDW)
#define PSI_L64 (PSI_VDW / 2)

/* name, in C type, out C type, lanes, units per lane, load, add, square */
#define PSI_FAST_KERNELS(X)                                                         \
    X(u8_u32, uint8_t, uint32_t, PSI_L32, 1, LD_U8_A32, ADD_A32, SQ_A32)            \
    X(u16_u32, uint16_t, uint32_t, PSI_L32, 1, LD_U16_A32, ADD_A32, SQ_A32)         \
    X(i16_u32, int16_t, uint32_t, PSI_L32, 1, LD_I16_A32, ADD_A32, SQ_A32)          \
    X(u8_u64, uint8_t, uint64_t, PSI_L64, 2, LD_U8_A64, ADD_A64, SQ_A64)            \
    X(u16_u64, uint16_t, uint64_t, PSI_L64, 2, LD_U16_A64, ADD_A64, SQ_A64)         \
    X(i16_u64, int16_t, uint64_t, PSI_L64, 2, LD_I16_A64, ADD_A64, SQ_A64)          \
    X(i32_u64, int32_t, uint64_t, PSI_L64, 2, LD_I32_A64, ADD_A64, SQ_A64)          \
    X(u32_u64, uint32_t, uint64_t, PSI_L64, 2, LD_U32_A64, ADD_A64, SQ_A64)         \
    X(u8_f32, uint8_t, float, PSI_L32, 1, LD_U8_F32, ADD_F32, SQ_F32)               \
    X(u16_f32, uint16_t, float, PSI_L32, 1, LD_U16_F32, ADD_F32, SQ_F32)            \
    X(i16_f32, int16_t, float, PSI_L32, 1, LD_I16_F32, ADD_F32, SQ_F32)             \
    X(f32_f32, float, float, PSI_L32, 1, LD_F32_F32, ADD_F32, SQ_F32)               \
    X(u8_f64, uint8_t, double, PSI_L64, 2, LD_U8_F64, ADD_F64, SQ_F64)              \
    X(u16_f64, uint16_t, double, PSI_L64, 2, LD_U16_F64, ADD_F64, SQ_F64)           \
    X(i16_f64, int16_t, double, PSI_L64, 2, LD_I16_F64, ADD_F64, SQ_F64)            \
    X(i32_f64, int32_t, double, PSI_L64, 2, LD_I32_F64, ADD_F64, SQ_F64)            \
    X(u32_f64, uint32_t, double, PSI_L64, 2, LD_U32_F64, ADD_F64, SQ_F64)           \
    X(f32_f64, float, double, PSI_L64, 2, LD_F32_F64, ADD_F64, SQ_F64)              \
    X(f64_f64, double, double, PSI_L64, 2, LD_F64_F64, ADD_F64, SQ_F64)

#define PSI_FAST_INSTANTIATE(SUF, TIN, TOUT, LANES, DPL, LD, ADD, SQ) \
    PSI_FAST_ROW(sum_##SUF, TIN, TOUT, LANES, DPL, LD, NOSQ, ADD)    \
    PSI_FAST_ROW(sq_##SUF, TIN, TOUT, LANES, DPL, LD, SQ, ADD)    \
    PSI_FAST_COLSUM(colsum_##SUF, TIN, TOUT, LANES, LD, NOSQ, ADD) \
    PSI_FAST_COLSUM(colsq_##SUF, TIN, TOUT, LANES, LD, SQ, ADD)
PSI_FAST_KERNELS(PSI_FAST_INSTANTIATE)

/* The C type code of an input/output pixsum type for the table below. */
static inline int psi_fast_code(pixsum_type t)
{
    /* i64 tables share the u64 kernels: same bits under modular arithmetic */
    return t == PIXSUM_I64 ? PIXSUM_U64 : (int)t;
}

#define PSI_TYPE_OF_uint8_t PIXSUM_U8
#define PSI_TYPE_OF_uint16_t PIXSUM_U16
#define PSI_TYPE_OF_int16_t PIXSUM_I16
#define PSI_TYPE_OF_int32_t PIXSUM_I32
#define PSI_TYPE_OF_uint32_t PIXSUM_U32
#define PSI_TYPE_OF_uint64_t PIXSUM_U64
#define PSI_TYPE_OF_float PIXSUM_F32
#define PSI_TYPE_OF_double PIXSUM_F64
#define PSI_TYPE_OF(t) PSI_TYPE_OF_##t

#define PSI_FAST_MATCH(SUF, TIN, TOUT, LANES, DPL, LD, ADD, SQ)                      \
    if (psi_fast_code(in) == PSI_TYPE_OF(TIN) && psi_fast_code(out) == PSI_TYPE_OF(TOUT)) \
        return channels > (size_t)(LANES) ? NULL : (squared ? sq_##SUF : sum_##SUF);

#define PSI_FAST_GETTER(FNAME)                                                      \
    psi_fast_row_fn FNAME(pixsum_type in, pixsum_type out, int squared, size_t channels) \
    {                                                                               \
        if (channels < 1 || channels > 4)                                           \
            return NULL;                                                            \
        PSI_FAST_KERNELS(PSI_FAST_MATCH)                                            \
        return NULL;                                                                \
    }

#define PSI_FAST_COLSUM_MATCH(SUF, TIN, TOUT, LANES, DPL, LD, ADD, SQ)                \
    if (psi_fast_code(in) == PSI_TYPE_OF(TIN) && psi_fast_code(out) == PSI_TYPE_OF(TOUT)) \
        return squared ? colsq_##SUF : colsum_##SUF;

#define PSI_FAST_COLSUM_GETTER(FNAME)                                               \
    psi_fast_colsum_fn FNAME(pixsum_type in, pixsum_type out, int squared)          \
    {                                                                               \
        PSI_FAST_KERNELS(PSI_FAST_COLSUM_MATCH)                                     \
        return NULL;                                                                \
    }
