/*
 * threshold.c - pixsum.threshold_local() and pixsum.normalize_local() in
 * pixsum._core: the keywords parsed into the library's specs, the image read
 * in place, the outputs allocated (or out= checked), and
 * pixsum_threshold_local() / pixsum_normalize_local() called with the GIL
 * released. GPU arrays go to pixsum._gpu.dispatch() (pixsum/_gpu_box.py),
 * which calls _cuda_threshold_local() / _cuda_normalize_local() here with
 * raw device descriptions: the keyword rules below are the one copy for
 * both (psb_local_args()). batch=True reads a NumPy stack as N images
 * ((N, H, W), (N, H, W, C), or (N, C, H, W) with channel_axis=1, read by
 * psb_batch_args() and psb_batch_view() as box_filter() reads them) and
 * makes one library call on a view of depth N; the GPU entries take one
 * image, so GPU stacks are refused.
 */
#include "binding.h"

#ifdef PSB_HAVE_CUDA
#include "pixsum_cuda.h"
#endif

#include <string.h>

/* The window: an int or a pair (kh, kw), both >= 1. */
static int window_arg(PyObject *obj, size_t *kh, size_t *kw)
{
    Py_ssize_t a = -1, b = -1;
    if (PyLong_Check(obj)) {
        a = b = PyLong_AsSsize_t(obj);
    } else if (PySequence_Check(obj) && PySequence_Size(obj) == 2) {
        PyObject *x = PySequence_GetItem(obj, 0), *y = PySequence_GetItem(obj, 1);
        a = x && PyLong_Check(x) ? PyLong_AsSsize_t(x) : -1;
        b = y && PyLong_Check(y) ? PyLong_AsSsize_t(y) : -1;
        Py_XDECREF(x);
        Py_XDECREF(y);
    }
    if (PyErr_Occurred())
        PyErr_Clear();
    if (a < 1 || b < 1) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "window must be an int or a pair (height, width) of "
                 "integers >= 1");
        return 0;
    }
    *kh = (size_t)a;
    *kw = (size_t)b;
    return 1;
}

static int border_arg(const char *name, pixsum_border *b)
{
    if (pixsum_border_from_name(name, b) == PIXSUM_OK)
        return 1;
    psb_fail(PIXSUM_ERR_INVALID_ARG, "border must be 'reflect101', 'reflect', 'replicate', "
             "'constant', 'shrink' or 'valid', got '%s'", name);
    return 0;
}

/* batch= and channel_axis= of a local operation: read by psb_batch_args();
 * channel_axis without batch is refused as box_filter() refuses it. Fills
 * *batch_args. Returns 1, or 0 with an exception set. */
static int local_batch_args(const char *name, int batch, PyObject *channel_axis,
                            psb_integral_args *batch_args)
{
    int image_axis;
    memset(batch_args, 0, sizeof *batch_args);
    batch_args->spatial = 2;
    if (!psb_batch_args(name, batch, channel_axis, batch_args, &image_axis))
        return 0;
    if (!batch && channel_axis && channel_axis != Py_None) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: channel_axis is read with batch=True only (1: "
                 "channels-first (N, C, H, W) stacks); an image's channels are on its last "
                 "axis", name);
        return 0;
    }
    return 1;
}

/* A GPU array: refused with batch=True (the GPU local operations take one
 * image), else handed to pixsum._gpu.dispatch() without the batch keywords,
 * which the GPU functions do not take. */
static PyObject *local_gpu(const char *name, int batch, PyObject *args, PyObject *kwargs)
{
    if (batch)
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: batch=True takes NumPy arrays; the GPU "
                        "local operations take one image: call per image", name);
    if (!kwargs)
        return psb_gpu_dispatch(name, args, kwargs);
    PyObject *kw = PyDict_Copy(kwargs);
    if (!kw)
        return NULL;
    if ((PyDict_GetItemString(kw, "batch") && PyDict_DelItemString(kw, "batch") < 0) ||
        (PyDict_GetItemString(kw, "channel_axis") &&
         PyDict_DelItemString(kw, "channel_axis") < 0)) {
        Py_DECREF(kw);
        return NULL;
    }
    PyObject *res = psb_gpu_dispatch(name, args, kw);
    Py_DECREF(kw);
    return res;
}


/* The input array of a local operation: read in place where a view can
 * describe it; without batch=True a stack is refused naming the keyword. */
static PyArrayObject *local_input(const char *name, PyObject *image,
                                  const psb_integral_args *a)
{
    PyArrayObject *in = psb_input_array(image, "image",
                                        (a->batch ? PSB_IN_VOLUME : 0u) |
                                            (a->channels_first ? PSB_IN_MERGE01 : 0u));
    if (in && !a->batch && !psb_check_unbatched(name, PyArray_NDIM(in), PyArray_DIMS(in)))
        Py_CLEAR(in);
    return in;
}

/* The output shape: the input's with its row and column axes set to
 * (oh, ow); *nd is the input's number of axes (for threshold_local of one
 * image: 2, the map and mask are (oh, ow)). */
static void local_out_shape(PyArrayObject *in, const psb_integral_args *a, int one_channel,
                            size_t ow, size_t oh, int *nd, npy_intp shape[4])
{
    *nd = PyArray_NDIM(in);
    memcpy(shape, PyArray_DIMS(in), (size_t)*nd * sizeof *shape);
    int row_axis = !a->batch ? 0 : a->channels_first ? 2 : 1;
    shape[row_axis] = (npy_intp)oh;
    shape[row_axis + 1] = (npy_intp)ow;
    if (!a->batch && one_channel)
        *nd = 2;
}

/* Output selection of threshold_local(output=...). */
enum { OUT_MAP = 1, OUT_MASK = 2, OUT_BOTH = 3 };

/* threshold_local()'s keywords into a spec and the output selection. */
static int threshold_args(PyObject *window, const char *method, double k, PyObject *r_obj,
                          double offset, const char *border, double cval, int foreground,
                          const char *output, pixsum_threshold_spec *spec, int *outs)
{
    memset(spec, 0, sizeof *spec);
    if (!window_arg(window, &spec->kh, &spec->kw) || !border_arg(border, &spec->border))
        return 0;
    if (strcmp(method, "mean") == 0)
        spec->method = PIXSUM_THRESHOLD_MEAN;
    else if (strcmp(method, "niblack") == 0)
        spec->method = PIXSUM_THRESHOLD_NIBLACK;
    else if (strcmp(method, "sauvola") == 0)
        spec->method = PIXSUM_THRESHOLD_SAUVOLA;
    else {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "method must be 'mean', 'niblack' or 'sauvola', got "
                 "'%s'", method);
        return 0;
    }
    if (r_obj && r_obj != Py_None) {
        double r = PyFloat_AsDouble(r_obj);
        if (r == -1.0 && PyErr_Occurred())
            return 0;
        if (!(r > 0)) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "r must be > 0 (None: the dtype's half range)");
            return 0;
        }
        spec->r = r;
    }
    if (foreground < 1 || foreground > 255) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "foreground must be 1..255, got %d", foreground);
        return 0;
    }
    spec->k = k;
    spec->offset = offset;
    spec->border_value = cval;
    spec->foreground = (uint8_t)foreground;
    *outs = strcmp(output, "map") == 0 ? OUT_MAP : strcmp(output, "mask") == 0 ? OUT_MASK
            : strcmp(output, "both") == 0 ? OUT_BOTH : 0;
    if (!*outs) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "output must be 'map', 'mask' or 'both', got '%s'",
                 output);
        return 0;
    }
    return 1;
}

/* Default float type of the map / normalised image: f32 for f32 images. */
static pixsum_type default_float(pixsum_type in)
{
    return in == PIXSUM_F32 ? PIXSUM_F32 : PIXSUM_F64;
}

/* The output size of the window on a w x h image, or 0 with an exception. */
static int out_shape(size_t kw, size_t kh, pixsum_border b, size_t w, size_t h, size_t *ow,
                     size_t *oh)
{
    pixsum_box_filter_spec bs;
    memset(&bs, 0, sizeof bs);
    bs.kw = kw;
    bs.kh = kh;
    bs.border = b;
    int st = pixsum_box_filter_shape(&bs, w, h, ow, oh);
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "window");
        return 0;
    }
    return 1;
}

PyObject *psb_py_threshold_local(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "window", "method", "k", "r", "offset", "border",
                             "output", "dtype", "out", "cval", "foreground", "threads",
                             "batch", "channel_axis", NULL};
    PyObject *image, *window, *r_obj = Py_None, *dtype_obj = Py_None, *out = Py_None;
    PyObject *channel_axis = NULL;
    const char *method = "mean", *border = "reflect101", *output = "map";
    double k = 0.2, offset = 0, cval = 0;
    int foreground = 255, batch = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|sdOdssOOdin$pO:threshold_local", kwlist,
                                     &image, &window, &method, &k, &r_obj, &offset, &border,
                                     &output, &dtype_obj, &out, &cval, &foreground, &o.threads,
                                     &batch, &channel_axis))
        return NULL;
    psb_integral_args a;
    if (!local_batch_args("threshold_local", batch, channel_axis, &a))
        return NULL;
    if (psb_is_gpu_array(image))
        return local_gpu("threshold_local", batch, args, kwargs);
    pixsum_threshold_spec spec;
    pixsum_type mt;
    int outs;
    if (!threshold_args(window, method, k, r_obj, offset, border, cval, foreground, output,
                        &spec, &outs) ||
        !psb_dtype_arg(dtype_obj, &mt))
        return NULL;
    if (outs == OUT_BOTH && out != Py_None)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "out= takes one array: not with output='both'");
    PyArrayObject *in = local_input("threshold_local", image, &a);
    if (!in)
        return NULL;
    if (!batch && PyArray_NDIM(in) == 3 && PyArray_DIMS(in)[2] > 1) {
        /* one-channel thresholds: a 3-D array of more than one channel is a
         * colour image or a small stack; both readings are named */
        char text[96];
        psb_shape_text(3, PyArray_DIMS(in), text, sizeof text);
        Py_DECREF(in);
        return psb_fail(PIXSUM_ERR_BAD_SHAPE, "threshold_local: an image is (H, W) or "
                        "(H, W, 1), got shape %s; convert a colour image to gray, and for a "
                        "stack of images (N, H, W) pass batch=True", text);
    }
    PyArrayObject *map = NULL, *mask = NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    pixsum_view vin, vmap, vmask;
    size_t ow, oh;
    int st, nd;
    if (!psb_call_view(in, &a, 2, 0, "image", &vin) ||
        !out_shape(spec.kw, spec.kh, spec.border, vin.width, vin.height, &ow, &oh))
        goto done;
    npy_intp shape[4];
    local_out_shape(in, &a, 1, ow, oh, &nd, shape);
    if (outs & OUT_MAP) {
        if (mt == PIXSUM_TYPE_NONE && out == Py_None)
            mt = default_float(vin.type);
        if (!(map = psb_output(outs == OUT_MAP ? out : Py_None, nd, shape, &mt, "out")) ||
            !psb_call_view(map, &a, 2, 1, "out", &vmap))
            goto done;
    }
    if (outs & OUT_MASK) {
        pixsum_type u8 = PIXSUM_U8;
        if (mt != PIXSUM_TYPE_NONE && outs == OUT_MASK && mt != PIXSUM_U8) {
            psb_fail(PIXSUM_ERR_BAD_TYPE, "the mask is uint8; dtype=%s does not apply",
                     psb_dtype_name(mt));
            goto done;
        }
        if (!(mask = psb_output(outs == OUT_MASK ? out : Py_None, nd, shape, &u8, "out")) ||
            !psb_call_view(mask, &a, 2, 1, "out", &vmask))
            goto done;
    }
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_threshold_local(ctx, &vin, &spec, map ? &vmap : NULL, mask ? &vmask : NULL);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "threshold_local");
        goto done;
    }
    if (outs == OUT_BOTH)
        result = PyTuple_Pack(2, (PyObject *)map, (PyObject *)mask);
    else {
        result = (PyObject *)(map ? map : mask);
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(map);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

PyObject *psb_py_normalize_local(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "window", "eps", "border", "dtype", "out", "cval",
                             "threads", "batch", "channel_axis", NULL};
    PyObject *image, *window, *dtype_obj = Py_None, *out = Py_None, *channel_axis = NULL;
    const char *border = "reflect101";
    double eps = 1e-6, cval = 0;
    int batch = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|dsOOdn$pO:normalize_local", kwlist,
                                     &image, &window, &eps, &border, &dtype_obj, &out, &cval,
                                     &o.threads, &batch, &channel_axis))
        return NULL;
    psb_integral_args a;
    if (!local_batch_args("normalize_local", batch, channel_axis, &a))
        return NULL;
    if (psb_is_gpu_array(image))
        return local_gpu("normalize_local", batch, args, kwargs);
    pixsum_normalize_spec spec;
    memset(&spec, 0, sizeof spec);
    pixsum_type ot;
    if (!window_arg(window, &spec.kh, &spec.kw) || !border_arg(border, &spec.border) ||
        !psb_dtype_arg(dtype_obj, &ot))
        return NULL;
    spec.eps = eps;
    spec.border_value = cval;
    PyArrayObject *in = local_input("normalize_local", image, &a);
    if (!in)
        return NULL;
    PyArrayObject *res = NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    pixsum_view vin, vout;
    size_t ow, oh;
    int st, nd;
    if (!psb_call_view(in, &a, 2, 0, "image", &vin) ||
        !out_shape(spec.kw, spec.kh, spec.border, vin.width, vin.height, &ow, &oh))
        goto done;
    npy_intp shape[4];
    local_out_shape(in, &a, 0, ow, oh, &nd, shape);
    if (ot == PIXSUM_TYPE_NONE && out == Py_None)
        ot = default_float(vin.type);
    if (!(res = psb_output(out, nd, shape, &ot, "out")) ||
        !psb_call_view(res, &a, 2, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_normalize_local(ctx, &vin, &spec, &vout);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "normalize_local");
        goto done;
    }
    result = (PyObject *)res;
    res = NULL;
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_DECREF(in);
    return result;
}

const char psb_threshold_local_doc[] =
"threshold_local(image, window, method='mean', k=0.2, r=None, offset=0.0,\n"
"                border='reflect101', output='map', dtype=None, out=None, cval=0.0,\n"
"                foreground=255, threads=0, *, batch=False, channel_axis=None)\n"
"--\n\n"
"Local threshold of a one-channel 2-D image from the mean m and standard\n"
"deviation s (population) of the window around each pixel, streamed on the\n"
"box filter (pixsum_threshold_local(): no integral table).\n\n"
"method: 'mean' T = m - offset; 'niblack' T = m + k*s (scikit-image's\n"
"  threshold_niblack(image, k=kappa) is k=-kappa here); 'sauvola'\n"
"  T = m * (1 + k*(s/r - 1)), r None = half the dtype's range (127.5 for\n"
"  uint8, 1 for floats), as scikit-image.\n"
"window: int or (height, width); even sizes have one more pixel before the\n"
"  centre (box_filter()'s anchor).\n"
"border: 'reflect101' (numpy 'reflect', scikit-image's Sauvola/Niblack),\n"
"  'reflect' (scipy 'reflect'), 'replicate', 'constant' (cval), 'shrink',\n"
"  'valid' (smaller output).\n"
"output: 'map' (float64; float32 for float32 images; dtype= float32 or\n"
"  float64), 'mask' (uint8: foreground where image > T, else 0) or 'both'\n"
"  (a tuple (map, mask)).\n"
"image: uint8 uint16 int16 int32 uint32 float32 float64; any row stride.\n"
"batch: read axis 0 as N independent images, (N, H, W) (or (N, H, W, 1)),\n"
"  each thresholded exactly as alone, in one call (images over the threads);\n"
"  map and mask have the input's layout, (N, h, w). Without it a stack is\n"
"  refused (BadShapeError naming batch=True).\n"
"channel_axis: with batch=True, None or -1, or 1: PyTorch's channels-first\n"
"  (N, C, H, W) read in place as N*C one-channel images; results\n"
"  (N, C, h, w).\n"
"The GIL is released; GPU arrays (CuPy, PyTorch) run\n"
"pixsum_cuda_threshold_local() on the caller's stream, one image per call\n"
"(batch=True is refused for them).";

const char psb_normalize_local_doc[] =
"normalize_local(image, window, eps=1e-6, border='reflect101', dtype=None, out=None,\n"
"                cval=0.0, threads=0, *, batch=False, channel_axis=None)\n"
"--\n\n"
"Local normalisation (image - m) / (s + eps) with m, s the mean and standard\n"
"deviation of the window around each sample, per channel ((H, W) or\n"
"(H, W, C), C <= 4), streamed on the box filter (pixsum_normalize_local()).\n"
"0 where s + eps is 0. Result float64 (float32 for float32 images, or\n"
"dtype=). window, border, cval as threshold_local(). batch=True: a stack\n"
"(N, H, W) or (N, H, W, C), or with channel_axis=1 (N, C, H, W), each image\n"
"normalised exactly as alone, in one call; the result has the input's\n"
"layout. GPU arrays run pixsum_cuda_normalize_local(), one image per call\n"
"(batch=True is refused for them).";

const char psb_cuda_local_doc[] =
"_cuda_local(image, map, mask, window, *, normalize=False, method='mean', k=0.2, r=None,\n"
"            offset=0.0, border='reflect101', cval=0.0, foreground=255, eps=1e-6,\n"
"            stream=0, device=0)\n"
"--\n\n"
"Internal: threshold_local() / normalize_local() of device memory. image, map\n"
"and mask are (ptr, dtype name, shape, byte strides) tuples (map or mask may be\n"
"None; normalize=True writes map). Enqueues pixsum_cuda_threshold_local() or\n"
"pixsum_cuda_normalize_local() on `stream` on `device` without synchronising.\n"
"Use pixsum.threshold_local() with a GPU array.";

PyObject *psb_py_cuda_local(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "map", "mask", "window", "normalize", "method", "k", "r",
                             "offset", "border", "cval", "foreground", "eps", "stream",
                             "device", NULL};
    PyObject *image, *map, *mask, *window, *r_obj = Py_None;
    int normalize = 0, foreground = 255, device = 0;
    const char *method = "mean", *border = "reflect101";
    double k = 0.2, offset = 0, cval = 0, eps = 1e-6;
    unsigned long long stream = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOOO|$psdOdsdidKi:_cuda_local", kwlist,
                                     &image, &map, &mask, &window, &normalize, &method, &k,
                                     &r_obj, &offset, &border, &cval, &foreground, &eps,
                                     &stream, &device))
        return NULL;
    pixsum_threshold_spec ts;
    pixsum_normalize_spec ns;
    int outs;
    if (!threshold_args(window, method, k, r_obj, offset, border, cval, foreground, "map",
                        &ts, &outs))
        return NULL;
    memset(&ns, 0, sizeof ns);
    ns.kw = ts.kw;
    ns.kh = ts.kh;
    ns.border = ts.border;
    ns.border_value = cval;
    ns.eps = eps;
    pixsum_view vin, vmap, vmask;
    if (!psb_desc_view(image, 2, 2, 3, "image", &vin) ||
        (map != Py_None && !psb_desc_view(map, 2, 2, 3, "map", &vmap)) ||
        (mask != Py_None && !psb_desc_view(mask, 2, 2, 2, "mask", &vmask)))
        return NULL;
#ifdef PSB_HAVE_CUDA
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx)
        return PyErr_NoMemory();
    int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, device);
    if (st == PIXSUM_OK) {
        void *s = (void *)(uintptr_t)stream;
        Py_BEGIN_ALLOW_THREADS
        if (normalize)
            st = pixsum_cuda_normalize_local(ctx, &vin, &ns, map != Py_None ? &vmap : NULL, s);
        else
            st = pixsum_cuda_threshold_local(ctx, &vin, &ts, map != Py_None ? &vmap : NULL,
                                             mask != Py_None ? &vmask : NULL, s);
        Py_END_ALLOW_THREADS
    }
    pixsum_ctx_free(ctx);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, normalize ? "normalize_local (CUDA)"
                                              : "threshold_local (CUDA)");
    Py_RETURN_NONE;
#else
    (void)stream;
    (void)device;
    (void)normalize;
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "local thresholds of GPU arrays: pixsum was built "
                    "without CUDA");
#endif
}
