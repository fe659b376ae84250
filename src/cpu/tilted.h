/*
 * tilted.h - the 45-degree tilted integral (reference implementation).
 */
#ifndef PIXSUM_CPU_TILTED_H
#define PIXSUM_CPU_TILTED_H

#include "../internal.h"

/* Fills job->out ((W+1)x(H+1), padded) with OpenCV's tilted integral of
 * job->in. Returns PIXSUM_OK or PIXSUM_ERR_NO_MEMORY. */
int psi_tilted_reference(const psi_job *job);

/* The same table, computed with typed rows for u8/u16 -> u32/u64/i64 and
 * f32/f64 -> f64 (the reference for other pairs); bit-identical results.
 * Returns PIXSUM_OK or PIXSUM_ERR_NO_MEMORY. */
int psi_tilted_fast(const psi_job *job);

#endif
