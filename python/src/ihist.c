/*
 * ihist.c - the integral histogram (Porikli 2005; pixsum_ihist_*) for Python:
 * _ihist_new() builds one from a NumPy image and returns it in a capsule with
 * its bins, channels, range and size (or rebuilds one in place for another
 * image); _ihist_query() answers the histograms of
 * N boxes at O(bins) each. pixsum.IntegralHistogram (python/pixsum/_ihist.py)
 * is the public class over the two.
 */
#include "binding.h"

#ifdef PSB_HAVE_HIST

#include <string.h>

#define IHIST_CAPSULE "pixsum.ihist"

static void ihist_capsule_free(PyObject *cap)
{
    pixsum_ihist_free(PyCapsule_GetPointer(cap, IHIST_CAPSULE));
}

const char psb_ihist_new_doc[] =
"_ihist_new(image, *, bins=None, range=None, mask=None, threads=0, max_bytes=0,\n"
"           capsule=None)\n"
"--\n\n"
"Internal: pixsum_ihist_new() of a 2-D NumPy image ((H, W) or (H, W, C); (N,)\n"
"is one row), or with `capsule` pixsum_ihist_rebuild() into that one. Returns\n"
"(capsule, info) with info the dict of bins, channels, lo, hi, width, height\n"
"and nbytes. Use pixsum.IntegralHistogram instead.";

PyObject *psb_py_ihist_new(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image",   "bins",      "range",   "mask",
                             "threads", "max_bytes", "capsule", NULL};
    PyObject *image, *bins_obj = NULL, *range_obj = NULL, *mask_obj = NULL, *cap = NULL;
    Py_ssize_t max_bytes = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOnnO:IntegralHistogram", kwlist,
                                     &image, &bins_obj, &range_obj, &mask_obj, &o.threads,
                                     &max_bytes, &cap))
        return NULL;
    if (cap == Py_None)
        cap = NULL;
    pixsum_ihist *ih = NULL;
    if (cap && !(ih = PyCapsule_GetPointer(cap, IHIST_CAPSULE)))
        return NULL;
    if (max_bytes < 0)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "max_bytes must be >= 0 (0: the default "
                        "limit of %zu bytes)", PIXSUM_IHIST_DEFAULT_MAX_BYTES);
    pixsum_hist_spec spec;
    if (!psb_parse_hist_spec(bins_obj, range_obj, &spec))
        return NULL;
    if (psb_is_gpu_array(image) || (mask_obj && psb_is_gpu_array(mask_obj)))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "IntegralHistogram is built in host memory: "
                        "copy the image (and mask) to a NumPy array first");
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *mask = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vmask;
    if (PyArray_NDIM(in) > 3) {
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "an integral histogram is of a 2-D image: (H, W), "
                 "(H, W, C) or (N,), not a %d-D array", PyArray_NDIM(in));
        goto done;
    }
    if (!psb_hist_view(in, 1, 0, "image", &vin) ||
        !psb_mask_view(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec.mask = &vmask;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    size_t bytes = 0;
    pixsum_hist_info info;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = cap ? pixsum_ihist_rebuild(ctx, ih, &vin, &spec, (size_t)max_bytes)
             : pixsum_ihist_new(ctx, &vin, &spec, (size_t)max_bytes, &ih);
    if (st == PIXSUM_OK) {
        /* the size from the resolved bins and range: asked with the spec as
         * given, a data-range default would scan the image a second time */
        pixsum_ihist_info(ih, &info);
        spec.bins = info.bins;
        spec.lo = info.lo;
        spec.hi = info.hi;
        st = pixsum_ihist_bytes(&vin, &spec, &bytes);
    }
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        if (!cap)
            pixsum_ihist_free(ih);
        psb_fail_library(st, cap ? "IntegralHistogram.rebuild" : "IntegralHistogram");
        goto done;
    }
    if (cap) {
        Py_INCREF(cap);
    } else if (!(cap = PyCapsule_New(ih, IHIST_CAPSULE, ihist_capsule_free))) {
        pixsum_ihist_free(ih);
        goto done;
    }
    result = Py_BuildValue("(N{s:n,s:n,s:d,s:d,s:n,s:n,s:n})", cap, "bins",
                           (Py_ssize_t)info.bins, "channels", (Py_ssize_t)info.channels, "lo",
                           info.lo, "hi", info.hi, "width", (Py_ssize_t)vin.width, "height",
                           (Py_ssize_t)vin.height, "nbytes", (Py_ssize_t)bytes);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

const char psb_ihist_query_doc[] =
"_ihist_query(capsule, boxes, *, threads=0)\n"
"--\n\n"
"Internal: pixsum_ihist_queries() of the boxes (x, y, w, h) of `boxes` ((4,) or\n"
"(N, 4) integers) into a new uint64 array of shape (N, channels, bins); a\n"
"box outside the image raises OutOfRangeError naming it (no array returned).\n"
"Large batches run over `threads` threads (0: all cores).";

PyObject *psb_py_ihist_query(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"capsule", "boxes", "threads", NULL};
    PyObject *cap, *boxes_obj;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$n:query", kwlist, &cap, &boxes_obj,
                                     &o.threads))
        return NULL;
    const pixsum_ihist *ih = PyCapsule_GetPointer(cap, IHIST_CAPSULE);
    if (!ih)
        return NULL;
    size_t n;
    int spatial, single;
    pixsum_box *boxes = psb_parse_boxes(boxes_obj, &n, &spatial, &single);
    if (!boxes)
        return NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    pixsum_hist_info info;
    pixsum_ihist_info(ih, &info);
    if (spatial != 2) {
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "boxes of an integral histogram are (x, y, w, h): "
                 "shape (4,) or (N, 4)");
        goto done;
    }
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    npy_intp shape[3] = {(npy_intp)n, (npy_intp)info.channels, (npy_intp)info.bins};
    PyArrayObject *res = (PyArrayObject *)PyArray_SimpleNew(3, shape, NPY_UINT64);
    if (!res)
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_ihist_queries(ctx, ih, boxes, n, PyArray_DATA(res));
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        Py_DECREF(res);
        psb_fail_library(st, "IntegralHistogram.query");
        goto done;
    }
    result = (PyObject *)res;
done:
    pixsum_ctx_free(ctx);
    PyMem_Free(boxes);
    return result;
}

#endif /* PSB_HAVE_HIST */
