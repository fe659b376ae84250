/*
 * gpu_box.h - what gpu_box.c gives the rest of pixsum._core: box_filter()'s
 * keyword rules (spec and default output type, one copy for the CPU and GPU
 * paths) and the GPU entry _cuda_box_filter_image() with its method-table
 * row (PSB_GPU_BOX_METHODS, which module.c lists).
 */
#ifndef PIXSUM_GPU_BOX_H
#define PIXSUM_GPU_BOX_H

#include "binding.h"

/* box_filter()'s keywords into a spec: size (an int or (kh, kw)), normalize
 * (mean, else sum), mode / border ('same' = shrink, or a name of
 * pixsum_border_from_name(); border wins when both are given), stat ('sum',
 * 'mean', 'var', 'std' or NULL: from normalize), cval. Returns 1, or 0 with
 * pixsum.InvalidArgumentError set. */
int psb_box_spec_from_args(PyObject *size, int normalize, const char *mode, const char *border,
                           const char *stat, double cval, pixsum_box_filter_spec *spec);

/* box_filter()'s default output type for a width x height image of type
 * `in`: float64 for means and variances; for sums the narrowest integral
 * table type exact for one window (the window clipped to the image for
 * shrink and valid), u64 for u32 images, float64 for float images. */
pixsum_type psb_box_default_type(pixsum_type in, const pixsum_box_filter_spec *spec,
                                 size_t width, size_t height);

extern const char psb_cuda_box_filter_image_doc[];
PyObject *psb_py_cuda_box_filter_image(PyObject *self, PyObject *args, PyObject *kwargs);

#define PSB_GPU_BOX_METHODS                                                            \
    {"_cuda_box_filter_image", (PyCFunction)(void (*)(void))psb_py_cuda_box_filter_image, \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_box_filter_image_doc},

#endif /* PIXSUM_GPU_BOX_H */
