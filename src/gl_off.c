/*
 * gl_off.c - the OpenGL method table of a build without OpenGL: empty.
 */
#include "internal.h"

const psi_method psi_methods_gl[] = {
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
