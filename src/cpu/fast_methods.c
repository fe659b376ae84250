/*
 * fast_methods.c - registry table of the single-threaded SIMD methods
 * (filled by the CPU-speed work; empty until then).
 */
#include "../internal.h"

const psi_method psi_methods_cpu_fast[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
