/*
 * local_op.h - the local operations built on the streamed box filter
 * (pixsum_threshold_local(), pixsum_normalize_local(); src/local_op.c): the
 * resolved request that the CPU kernels (src/cpu/box_local_kernel.h) and the
 * CUDA entry points (src/cuda/cuda_threshold.c) run, and the one validation
 * that both entries share (the CPU entries take batches too; the device ones
 * one image).
 */
#ifndef PIXSUM_LOCAL_OP_H
#define PIXSUM_LOCAL_OP_H

#include "box_filter.h"
#include "local_rule.h"

/* A validated local operation: the box plan's `local` (psi_box_plan). */
typedef struct psi_local_plan {
    int kind;          /* PSI_LOCAL_* (local_rule.h) */
    double a;          /* offset (mean method) or k (Niblack, Sauvola) */
    double r;          /* Sauvola's range, > 0 */
    double eps;        /* normalisation's eps, >= 0 */
    uint8_t fg;        /* mask value where x > T */
    int has_map, has_mask;
    pixsum_view map;   /* f32 / f64: the threshold map, or the normalised image */
    pixsum_view mask;  /* u8 mask */
} psi_local_plan;

/* Checks a threshold request of one image as pixsum_threshold_local()
 * documents (the rule of the device entries, which take one image: a valid
 * view of depth > 1 is refused with PIXSUM_ERR_UNSUPPORTED, "call per
 * image") and, on success, fills *box (the box filter plan: window, border,
 * accumulator; box->local is left NULL for the caller to point at *local)
 * and *local. Touches no pixel memory (the views may describe device
 * memory). Returns PIXSUM_OK or the error codes of pixsum_threshold_local().
 * The CPU entry runs the same checks on batches (src/local_op.c). */
int psi_threshold_prepare(const pixsum_view *in, const pixsum_threshold_spec *spec,
                          const pixsum_view *map, const pixsum_view *mask,
                          psi_box_plan *box, psi_local_plan *local);

/* The same for pixsum_normalize_local() (one image; depth > 1 refused). */
int psi_normalize_prepare(const pixsum_view *in, const pixsum_normalize_spec *spec,
                          const pixsum_view *out, psi_box_plan *box, psi_local_plan *local);

#endif /* PIXSUM_LOCAL_OP_H */
