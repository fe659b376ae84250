/*
 * omp_methods.c - registry table of the multi-threaded CPU methods (filled by
 * the CPU-speed work; empty until then).
 */
#include "../internal.h"

const psi_method psi_methods_omp[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
