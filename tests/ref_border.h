/*
 * ref_border.h - the border rules of pixsum_box_filter() written from their
 * definitions (pixsum.h), for the tests' and the API fuzz target's window
 * references: one copy, header-only, so that the fuzz target (which links no
 * test helpers) and the cmocka tests share it.
 */
#ifndef PIXSUM_TEST_REF_BORDER_H
#define PIXSUM_TEST_REF_BORDER_H

#include "pixsum.h"

/* Source index of extended index r in [0, n) under border b, or -1 where the
 * window reads no pixel (constant, shrink). Reflections are taken one at a
 * time, as their definition reads. */
static inline long ref_border_map(long r, long n, pixsum_border b)
{
    if (b == PIXSUM_BORDER_CONSTANT || b == PIXSUM_BORDER_SHRINK)
        return r >= 0 && r < n ? r : -1;
    if (b == PIXSUM_BORDER_REPLICATE)
        return r < 0 ? 0 : r >= n ? n - 1 : r;
    while (r < 0 || r >= n) {
        if (n == 1)
            return 0;
        if (r < 0)
            r = b == PIXSUM_BORDER_REFLECT ? -r - 1 : -r;
        else
            r = b == PIXSUM_BORDER_REFLECT ? 2 * n - 1 - r : 2 * n - 2 - r;
    }
    return r;
}

#endif /* PIXSUM_TEST_REF_BORDER_H */
