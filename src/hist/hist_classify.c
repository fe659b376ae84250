/*
 * hist_classify.c - per-row classification shared by the joint histogram, the
 * integral histogram and the histogram of i32/u32/f32/f64 images: every sample of
 * a row becomes its bin or bins + PSI_HIST_BELOW / ABOVE / NAN (psi_hist_bin()),
 * through a lookup table of all values for the 8/16-bit types and the formula
 * for the others (with AVX-512 for f32/f64 where allowed and available).
 */
#include "hist_classify.h"

#include <stdlib.h>

int psi_classifier_init(psi_classifier *k, pixsum_type type, const psi_hist_params *p,
                        bool allow_simd)
{
    k->type = type;
    k->p = p;
    k->lut = NULL;
    k->simd = allow_simd && (type == PIXSUM_I32 || type == PIXSUM_F32 || type == PIXSUM_F64) &&
              psi_hist_avx512_available();
    if (!psi_hist_small_type(type))
        return PIXSUM_OK;
    size_t levels = type == PIXSUM_U8 ? 256 : 65536;
    k->lut = malloc(levels * sizeof *k->lut);
    if (!k->lut)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate a %zu-entry bin table", levels);
    for (size_t r = 0; r < levels; r++) {
        double v = type == PIXSUM_I16 ? (double)(int16_t)(uint16_t)r : (double)r;
        k->lut[r] = (uint32_t)psi_hist_bin(p, v);
    }
    return PIXSUM_OK;
}

void psi_classifier_free(psi_classifier *k)
{
    free(k->lut);
    k->lut = NULL;
}

void psi_classify_row(const psi_classifier *k, const void *row, size_t n, uint32_t *out)
{
    if (k->simd) {
        psi_hist_classify_avx512(row, k->type, n, k->p, out);
        return;
    }
    switch (k->type) {
    case PIXSUM_U8:
        for (size_t i = 0; i < n; i++)
            out[i] = k->lut[((const uint8_t *)row)[i]];
        break;
    case PIXSUM_U16:
    case PIXSUM_I16:
        for (size_t i = 0; i < n; i++)
            out[i] = k->lut[((const uint16_t *)row)[i]];
        break;
    case PIXSUM_I32:
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)psi_bins_class_int(&k->p->b, ((const int32_t *)row)[i]);
        break;
    case PIXSUM_U32: /* below 2^53: the integer rule, as i32 */
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)psi_bins_class_int(&k->p->b, ((const uint32_t *)row)[i]);
        break;
    case PIXSUM_F32:
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)psi_hist_bin(k->p, (double)((const float *)row)[i]);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            out[i] = (uint32_t)psi_hist_bin(k->p, ((const double *)row)[i]);
        break;
    }
}
