/*
 * cuda_off.c - the CUDA method table of a build without CUDA: empty.
 */
#include "internal.h"

const psi_method psi_methods_cuda[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
