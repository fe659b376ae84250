/*
 * p001.h - the row scans of paper 001 (in place on a row of table elements)
 * shared by p001.c and its SSE2 file p001_sse2.c.
 */
#ifndef PIXSUM_PAPERS_P001_H
#define PIXSUM_PAPERS_P001_H

#include "../internal.h"

/* In-place inclusive prefix sums of n elements of an output type (u32, u64,
 * i64, f32, f64) with SSE2 shift-and-add, 4 (32-bit) or 2 (64-bit) elements
 * per register. Returns false if SSE2 code is not built (non-x86). */
bool psi_p001_scan_sse2(pixsum_type t, void *row, size_t n);

#endif /* PIXSUM_PAPERS_P001_H */
