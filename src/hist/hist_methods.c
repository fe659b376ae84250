/*
 * hist_methods.c - registry table of the histogram methods (filled by the
 * histogram work; empty until then).
 */
#include "../internal.h"

const psi_method psi_methods_hist[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
