/*
 * gpu_box.c - the box filter of GPU arrays in pixsum._core:
 * _cuda_box_filter_image(), which resolves box_filter()'s keywords (size,
 * normalize, mode, border, stat, cval, dtype) into the library's spec and
 * output type exactly as the CPU binding does (psb_box_spec_from_args() and
 * psb_box_default_type() below are the one copy of those rules), and either
 * reports the output's dtype and shape (out=None, so pixsum/_gpu_box.py can
 * allocate it with the input's array library) or enqueues
 * pixsum_cuda_box_filter() on the caller's stream with the GIL released,
 * without synchronising (a batch of N images, (N, H, W[, C]), in one
 * launch). Without CUDA in the library the launch raises
 * pixsum.UnavailableError (the planning call still works).
 */
#include "binding.h"
#include "gpu_box.h"

#ifdef PSB_HAVE_CUDA
#include "pixsum_cuda.h"
#endif

#include <string.h>

/* The window size: an int or a pair (kh, kw), both >= 1. */
static int box_size(PyObject *obj, size_t *kh, size_t *kw)
{
    Py_ssize_t a, b;
    if (PyLong_Check(obj)) {
        a = b = PyLong_AsSsize_t(obj);
    } else if (PySequence_Check(obj) && PySequence_Size(obj) == 2) {
        PyObject *x = PySequence_GetItem(obj, 0), *y = PySequence_GetItem(obj, 1);
        a = x && PyLong_Check(x) ? PyLong_AsSsize_t(x) : -1;
        b = y && PyLong_Check(y) ? PyLong_AsSsize_t(y) : -1;
        Py_XDECREF(x);
        Py_XDECREF(y);
    } else {
        if (PyErr_Occurred()) /* PySequence_Size() of an object without a length */
            PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "size must be an int or a pair (height, width)");
        return 0;
    }
    if (PyErr_Occurred()) /* an int too large for a size counts as invalid */
        PyErr_Clear();
    if (a < 1 || b < 1) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "window size must be integers >= 1");
        return 0;
    }
    *kh = (size_t)a;
    *kw = (size_t)b;
    return 1;
}

int psb_box_spec_from_args(PyObject *size, int normalize, const char *mode, const char *border,
                           const char *stat, double cval, pixsum_box_filter_spec *spec)
{
    static const char *const stats[] = {"sum", "mean", "var", "std"};
    memset(spec, 0, sizeof *spec);
    if (!box_size(size, &spec->kh, &spec->kw))
        return 0;
    const char *bname = border ? border : mode ? mode : "same";
    if (strcmp(bname, "same") == 0) {
        spec->border = PIXSUM_BORDER_SHRINK;
    } else if (pixsum_border_from_name(bname, &spec->border) != PIXSUM_OK) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "mode/border must be 'same', 'valid', 'shrink', "
                 "'reflect101', 'reflect', 'replicate' or 'constant', got '%s'", bname);
        return 0;
    }
    spec->stat = normalize ? PIXSUM_BOX_MEAN : PIXSUM_BOX_SUM;
    if (stat) {
        int k = 0;
        while (k < 4 && strcmp(stat, stats[k]) != 0)
            k++;
        if (k == 4) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "stat must be 'sum', 'mean', 'var' or 'std', "
                     "got '%s'", stat);
            return 0;
        }
        spec->stat = (pixsum_box_stat)k;
    }
    spec->border_value = cval;
    return 1;
}

pixsum_type psb_box_default_type(pixsum_type in, const pixsum_box_filter_spec *spec,
                                 size_t width, size_t height)
{
    if (spec->stat != PIXSUM_BOX_SUM)
        return PIXSUM_F64;
    /* the narrowest integral table type exact for one window */
    int clip = spec->border == PIXSUM_BORDER_SHRINK || spec->border == PIXSUM_BORDER_VALID;
    size_t ah = clip && spec->kh > height ? height : spec->kh;
    size_t aw = clip && spec->kw > width ? width : spec->kw;
    pixsum_type t = pixsum_integral_type(in, ah * aw, 0);
    if (t == PIXSUM_U32 && in == PIXSUM_U32)
        t = PIXSUM_U64;
    if (t == PIXSUM_F32 || t == PIXSUM_TYPE_NONE)
        t = PIXSUM_F64;
    return t;
}

const char psb_cuda_box_filter_image_doc[] =
"_cuda_box_filter_image(image, out, size, *, normalize=True, mode='same', border=None,\n"
"                       stat=None, cval=0.0, dtype=None, stream=0, device=0,\n"
"                       batch=False)\n"
"--\n\n"
"Internal: box_filter() of device memory. image and out are (ptr, dtype name,\n"
"shape, byte strides) tuples of 2-D images (with an optional channel axis),\n"
"or with batch=True of N images (N, H, W[, C]), filtered in one launch;\n"
"the keywords are box_filter()'s. out=None returns (dtype name, (H, W)) of\n"
"the result (of one image) without launching anything; otherwise\n"
"pixsum_cuda_box_filter() is enqueued on `stream` (a cudaStream_t as an int)\n"
"on `device` and None is returned without synchronising. Use\n"
"pixsum.box_filter() with a GPU array.";

PyObject *psb_py_cuda_box_filter_image(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "out", "size", "normalize", "mode", "border", "stat",
                             "cval", "dtype", "stream", "device", "batch", NULL};
    PyObject *image, *out, *size, *dtype_obj = Py_None;
    int normalize = 1, device = 0, batch = 0;
    const char *mode = "same", *border = NULL, *stat = NULL;
    double cval = 0;
    unsigned long long stream = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$pszzdOKip:_cuda_box_filter_image",
                                     kwlist, &image, &out, &size, &normalize, &mode, &border,
                                     &stat, &cval, &dtype_obj, &stream, &device, &batch))
        return NULL;
    pixsum_box_filter_spec spec;
    pixsum_type ot;
    pixsum_view vin, vout;
    /* a batch: the depth axis holds the images (spatial 3) */
    const int spatial = batch ? 3 : 2;
    if (!psb_box_spec_from_args(size, normalize, mode, border, stat, cval, &spec) ||
        !psb_dtype_arg(dtype_obj, &ot) ||
        !psb_desc_view(image, spatial, spatial, spatial + 1, "image", &vin))
        return NULL;
    size_t ow, oh;
    int st = pixsum_box_filter_shape(&spec, vin.width, vin.height, &ow, &oh);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "box_filter");
    if (ot == PIXSUM_TYPE_NONE)
        ot = psb_box_default_type(vin.type, &spec, vin.width, vin.height);
    if (out == Py_None)
        return Py_BuildValue("s(nn)", psb_dtype_name(ot), (Py_ssize_t)oh, (Py_ssize_t)ow);
    if (!psb_desc_view(out, spatial, spatial, spatial + 1, "out", &vout))
        return NULL;
#ifdef PSB_HAVE_CUDA
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return PyErr_NoMemory();
    if ((st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, device)) == PIXSUM_OK) {
        Py_BEGIN_ALLOW_THREADS
        st = pixsum_cuda_box_filter(ctx, &vin, &spec, &vout, (void *)(uintptr_t)stream);
        Py_END_ALLOW_THREADS
    }
    pixsum_ctx_free(ctx);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "box_filter (CUDA)");
    Py_RETURN_NONE;
#else
    (void)stream;
    (void)device;
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "box_filter of a GPU array: pixsum was built "
                    "without CUDA");
#endif
}
