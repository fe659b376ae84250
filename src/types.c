/*
 * types.c - pixel types: sizes and names, the supported type pairs of integral
 * tables, the default output type rule and the worst-case overflow check.
 *
 * The overflow rule: a table of `count` pixels of an integer type whose largest
 * magnitude is M can reach count * M (count * M^2 for the squared table). An
 * integer output is accepted only if that bound fits it; otherwise the caller
 * gets PIXSUM_ERR_OVERFLOW unless wrap mode is on.
 */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static const struct {
    const char *name;
    size_t size;
} type_table[PIXSUM_TYPE_COUNT] = {
    [PIXSUM_TYPE_NONE] = {"none", 0}, [PIXSUM_U8] = {"u8", 1},   [PIXSUM_U16] = {"u16", 2},
    [PIXSUM_I16] = {"i16", 2},        [PIXSUM_I32] = {"i32", 4}, [PIXSUM_U32] = {"u32", 4},
    [PIXSUM_F32] = {"f32", 4},        [PIXSUM_F64] = {"f64", 8}, [PIXSUM_U64] = {"u64", 8},
    [PIXSUM_I64] = {"i64", 8},
};

static bool type_known(pixsum_type t)
{
    return (int)t > 0 && (int)t < PIXSUM_TYPE_COUNT;
}

size_t pixsum_type_size(pixsum_type type)
{
    return type_known(type) ? type_table[type].size : 0;
}

const char *pixsum_type_name(pixsum_type type)
{
    return type_known(type) ? type_table[type].name : "none";
}

pixsum_type pixsum_type_from_name(const char *name)
{
    if (!name)
        return PIXSUM_TYPE_NONE;
    for (int t = 1; t < PIXSUM_TYPE_COUNT; t++)
        if (strcmp(name, type_table[t].name) == 0)
            return (pixsum_type)t;
    return PIXSUM_TYPE_NONE;
}

uint64_t psi_type_max_magnitude(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return UINT8_MAX;
    case PIXSUM_U16: return UINT16_MAX;
    case PIXSUM_I16: return 32768u;
    case PIXSUM_I32: return UINT64_C(1) << 31;
    case PIXSUM_U32: return UINT32_MAX;
    case PIXSUM_U64: return UINT64_MAX;
    case PIXSUM_I64: return UINT64_C(1) << 63;
    default: return 0;
    }
}

static bool is_input_type(pixsum_type t)
{
    return t == PIXSUM_U8 || t == PIXSUM_U16 || t == PIXSUM_I16 || t == PIXSUM_I32 ||
           t == PIXSUM_U32 || t == PIXSUM_F32 || t == PIXSUM_F64;
}

bool psi_pair_supported(pixsum_type in, pixsum_type out, int squared)
{
    switch (in) {
    case PIXSUM_U8:
    case PIXSUM_U16:
        return out == PIXSUM_U32 || out == PIXSUM_U64 || out == PIXSUM_I64 ||
               out == PIXSUM_F32 || out == PIXSUM_F64;
    case PIXSUM_I16:
        /* Squares are non-negative, so the squared table may be unsigned. */
        return out == PIXSUM_I64 || out == PIXSUM_F32 || out == PIXSUM_F64 ||
               (squared && (out == PIXSUM_U32 || out == PIXSUM_U64));
    case PIXSUM_I32:
        return out == PIXSUM_I64 || out == PIXSUM_F64 || (squared && out == PIXSUM_U64);
    case PIXSUM_U32:
        return out == PIXSUM_U64 || out == PIXSUM_I64 || out == PIXSUM_F64;
    case PIXSUM_F32:
        return out == PIXSUM_F32 || out == PIXSUM_F64;
    case PIXSUM_F64:
        return out == PIXSUM_F64;
    default:
        return false;
    }
}

/* Largest value an integer output type holds (positive side). */
static uint64_t out_limit(pixsum_type out)
{
    switch (out) {
    case PIXSUM_U32: return UINT32_MAX;
    case PIXSUM_U64: return UINT64_MAX;
    case PIXSUM_I64: return (uint64_t)INT64_MAX;
    default: return 0;
    }
}

/* True if count * m * (squared ? m : 1) <= limit, without overflowing. */
static bool bound_fits(uint64_t count, uint64_t m, int squared, uint64_t limit)
{
    uint64_t per_pixel = m;
    if (squared) {
        if (m != 0 && m > UINT64_MAX / m)
            return count == 0;
        per_pixel = m * m;
    }
    return per_pixel == 0 || count <= limit / per_pixel;
}

/* Writes the worst case count * m^(1 or 2) for the detail text: the exact
 * value when it fits 64 bits, and its size as a power of two. */
static void describe_bound(char *buf, size_t size, uint64_t count, uint64_t m, int squared)
{
    long double v = (long double)count * (long double)m;
    if (squared)
        v *= (long double)m;
    if (bound_fits(count, m, squared, UINT64_MAX)) {
        uint64_t exact = count * m * (squared ? m : 1u);
        snprintf(buf, size, "%llu (2^%.2Lf)", (unsigned long long)exact,
                 exact ? log2l((long double)exact) : 0.0L);
    } else {
        snprintf(buf, size, "about 2^%.2Lf", log2l(v));
    }
}

int psi_integral_check_above(pixsum_type in, pixsum_type out, size_t count, int squared,
                             uint64_t above)
{
    if (!is_input_type(in) || !psi_pair_supported(in, out, squared))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s -> %s is not a supported %stable type pair",
                        pixsum_type_name(in), pixsum_type_name(out),
                        squared ? "squared " : "");
    if (!psi_type_is_int(out) || !psi_type_is_int(in))
        return PIXSUM_OK;
    uint64_t m = psi_type_max_magnitude(in), limit = out_limit(out);
    if (above <= limit && bound_fits(count, m, squared, limit - above))
        return PIXSUM_OK;
    char bound[64];
    describe_bound(bound, sizeof bound, count, m, squared);
    if (above)
        return psi_fail(PIXSUM_ERR_OVERFLOW,
                        "%s output can overflow: the carry row holds a value of magnitude "
                        "%llu, and the %s of %zu %s pixels below it can add %s, above the %s "
                        "maximum %llu; use a wider output type or wrap mode",
                        pixsum_type_name(out), (unsigned long long)above,
                        squared ? "squared sum" : "sum", count, pixsum_type_name(in), bound,
                        pixsum_type_name(out), (unsigned long long)limit);
    return psi_fail(PIXSUM_ERR_OVERFLOW,
                    "%s output can overflow: the %s of %zu %s pixels can reach %s, above the "
                    "%s maximum %llu; use a wider output type or wrap mode",
                    pixsum_type_name(out), squared ? "squared sum" : "sum", count,
                    pixsum_type_name(in), bound, pixsum_type_name(out),
                    (unsigned long long)limit);
}

int pixsum_integral_check(pixsum_type in, pixsum_type out, size_t count, int squared)
{
    psi_clear_error();
    return psi_integral_check_above(in, out, count, squared, 0);
}

pixsum_type pixsum_integral_type(pixsum_type in, size_t count, int squared)
{
    if (!is_input_type(in))
        return PIXSUM_TYPE_NONE;
    if (!psi_type_is_int(in))
        return PIXSUM_F64;
    uint64_t m = psi_type_max_magnitude(in);
    bool is_signed = in == PIXSUM_I16 || in == PIXSUM_I32;
    static const pixsum_type unsigned_order[] = {PIXSUM_U32, PIXSUM_U64};
    if (!is_signed || squared) {
        for (size_t i = squared ? 1 : 0; i < 2; i++)
            if (psi_pair_supported(in, unsigned_order[i], squared) &&
                bound_fits(count, m, squared, out_limit(unsigned_order[i])))
                return unsigned_order[i];
    } else if (bound_fits(count, m, squared, out_limit(PIXSUM_I64))) {
        return PIXSUM_I64;
    }
    return PIXSUM_F64;
}
