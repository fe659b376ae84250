/*
 * gpu.c - GPU arrays in pixsum._core.
 *
 * An argument is a GPU array when it exposes __cuda_array_interface__ (CuPy,
 * PyTorch, Numba) or a __dlpack_device__ that names CUDA memory. Such calls are
 * handed to pixsum/_gpu.py, which speaks the Python array protocols (reads the
 * interface, its v3 stream, allocates the result with the input's own library)
 * and then calls _cuda_integral() here with raw device pointers; this file
 * turns those into pixsum_views and calls the device-memory entry points of
 * include/pixsum_cuda.h on the caller's stream, with the GIL released. Nothing
 * is copied to the host and nothing synchronises.
 *
 * Without CUDA in the library (PSB_HAVE_CUDA undefined) GPU arrays raise
 * pixsum.UnavailableError.
 */
#include "binding.h"

#ifdef PSB_HAVE_CUDA
#include "pixsum_cuda.h"
#endif

#include <string.h>

int psb_have_cuda(void)
{
#ifdef PSB_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

int psb_is_gpu_array(PyObject *obj)
{
    if (PyArray_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj) || PyLong_Check(obj) ||
        PyFloat_Check(obj))
        return 0;
    if (PyObject_HasAttrString(obj, "__cuda_array_interface__"))
        return 1;
    if (!PyObject_HasAttrString(obj, "__dlpack_device__"))
        return 0;
    PyObject *dev = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (!dev) {
        PyErr_Clear();
        return 0;
    }
    long type = -1;
    if (PyTuple_Check(dev) && PyTuple_GET_SIZE(dev) >= 1)
        type = PyLong_AsLong(PyTuple_GET_ITEM(dev, 0));
    Py_DECREF(dev);
    if (PyErr_Occurred())
        PyErr_Clear();
    return type == 2 /* kDLCUDA */ || type == 13 /* kDLCUDAManaged */;
}

PyObject *psb_gpu_dispatch(const char *name, PyObject *args, PyObject *kwargs)
{
    PyObject *mod = PyImport_ImportModule("pixsum._gpu");
    if (!mod)
        return NULL;
    PyObject *fn = PyObject_GetAttrString(mod, "dispatch");
    Py_DECREF(mod);
    if (!fn)
        return NULL;
    PyObject *res = PyObject_CallFunction(fn, "sOO", name, args, kwargs ? kwargs : Py_None);
    Py_DECREF(fn);
    return res;
}

const char psb_cuda_device_count_doc[] =
"cuda_device_count()\n"
"--\n\n"
"Number of CUDA devices the library can use (0 without a device or when the\n"
"library was built without CUDA).";

PyObject *psb_py_cuda_device_count(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
#ifdef PSB_HAVE_CUDA
    int n;
    Py_BEGIN_ALLOW_THREADS
    n = pixsum_cuda_device_count();
    Py_END_ALLOW_THREADS
    return PyLong_FromLong(n);
#else
    return PyLong_FromLong(0);
#endif
}

#ifdef PSB_HAVE_CUDA
/* Contexts for GPU calls, one per (thread, stream, device), kept for the life
 * of the thread: their device scratch is reused by later calls on the same
 * stream (the ordering rule of pixsum_cuda.h), and never freed while work may
 * be pending, because cudaFree would synchronise the device. */
#define GPU_CTX_SLOTS 16
typedef struct gpu_ctx_slot {
    unsigned long long stream;
    int device;
    pixsum_ctx *ctx;
} gpu_ctx_slot;
static _Thread_local gpu_ctx_slot gpu_slots[GPU_CTX_SLOTS];
static _Thread_local int gpu_slot_count;

/* The calling thread's context for (stream, device), made on first use, with
 * PIXSUM_PARAM_CUDA_DEVICE set to `device`. NULL with an exception set when a
 * thread uses more than GPU_CTX_SLOTS streams, memory runs out, or the device
 * number is refused. */
static pixsum_ctx *gpu_context(unsigned long long stream, int device)
{
    pixsum_ctx *ctx = NULL;
    for (int i = 0; i < gpu_slot_count && !ctx; i++)
        if (gpu_slots[i].stream == stream && gpu_slots[i].device == device)
            ctx = gpu_slots[i].ctx;
    if (!ctx) {
        if (gpu_slot_count == GPU_CTX_SLOTS)
            return psb_fail(PIXSUM_ERR_TOO_LARGE, "more than %d CUDA streams used from one "
                            "thread", GPU_CTX_SLOTS);
        if (!(ctx = pixsum_ctx_new())) {
            PyErr_NoMemory();
            return NULL;
        }
        gpu_slots[gpu_slot_count++] = (gpu_ctx_slot){stream, device, ctx};
    }
    int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, device);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "context");
    return ctx;
}

/* Reads a descriptor (pointer, dtype name, shape, byte strides) into a view
 * with `spatial` spatial axes. Returns 1 or 0 with an exception set. */
static int desc_view(PyObject *desc, int spatial, const char *what, pixsum_view *v)
{
    unsigned long long ptr;
    const char *tname;
    PyObject *shape, *strides;
    if (!PyArg_ParseTuple(desc, "KsOO", &ptr, &tname, &shape, &strides)) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: descriptor must be (ptr, dtype, shape, strides)",
                 what);
        return 0;
    }
    pixsum_type t = pixsum_type_from_name(tname);
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: unsupported element type %s", what, tname);
        return 0;
    }
    npy_intp dims[NPY_MAXDIMS], st[NPY_MAXDIMS];
    Py_ssize_t nd = PySequence_Size(shape);
    if (nd < 1 || nd > 4 || PySequence_Size(strides) != nd) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: shape and strides must have 2 to 4 entries", what);
        return 0;
    }
    for (Py_ssize_t i = 0; i < nd; i++) {
        PyObject *a = PySequence_GetItem(shape, i), *b = PySequence_GetItem(strides, i);
        dims[i] = a ? (npy_intp)PyLong_AsSsize_t(a) : -1;
        st[i] = b ? (npy_intp)PyLong_AsSsize_t(b) : 0;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (PyErr_Occurred())
            return 0;
        if (dims[i] < 0) {
            psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: negative size", what);
            return 0;
        }
    }
    return psb_view_raw((void *)(uintptr_t)ptr, t, (int)nd, dims, st, spatial, what, v);
}
#endif

const char psb_cuda_integral_doc[] =
"_cuda_integral(spatial, image, out, out_sq=None, *, stream=0, device=0,\n"
"               method='auto', wrap=False, padded=False, tilted=False)\n"
"--\n\n"
"Internal: integral of device memory through pixsum_cuda_integral[_sq]()\n"
"(tilted=True: pixsum_cuda_integral_tilted(), 2-D, out the padded table).\n"
"image/out/out_sq are (ptr, dtype name, shape, byte strides) tuples; stream is\n"
"a cudaStream_t as an int (0 = the context's stream). Enqueues and returns\n"
"without synchronising. Use pixsum.integral() with a GPU array instead.";

PyObject *psb_py_cuda_integral(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "image", "out", "out_sq", "stream", "device",
                             "method", "wrap", "padded", "tilted", NULL};
    int spatial, device = 0, tilted = 0;
    PyObject *image, *out, *out_sq = Py_None;
    unsigned long long stream = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOO|O$Kizppp:_cuda_integral", kwlist,
                                     &spatial, &image, &out, &out_sq, &stream, &device,
                                     &o.method, &o.wrap, &o.padded, &tilted))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (spatial != 2 && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "spatial must be 2 or 3");
    pixsum_view vin, vout, vsq;
    int plain = out != Py_None, squared = out_sq != Py_None;
    if (!desc_view(image, spatial, "image", &vin) ||
        (plain && !desc_view(out, spatial, "out", &vout)) ||
        (squared && !desc_view(out_sq, spatial, "out_sq", &vsq)))
        return NULL;
    if (!plain && !squared)
        return psb_fail(PIXSUM_ERR_NULL, "no output given");
    pixsum_ctx *ctx = gpu_context(stream, device);
    if (!ctx || !psb_set_ctx(ctx, &o))
        return NULL;
    int st;
    void *s = (void *)(uintptr_t)stream;
    Py_BEGIN_ALLOW_THREADS
    if (tilted)
        st = plain && !squared && spatial == 2
                 ? pixsum_cuda_integral_tilted(ctx, &vin, &vout, s)
                 : PIXSUM_ERR_INVALID_ARG;
    else if (squared)
        st = pixsum_cuda_integral_sq(ctx, &vin, plain ? &vout : NULL, &vsq, s);
    else
        st = pixsum_cuda_integral(ctx, &vin, &vout, s);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "integral (CUDA)");
    Py_RETURN_NONE;
#else
    (void)spatial;
    (void)image;
    (void)out;
    (void)out_sq;
    (void)stream;
    (void)device;
    (void)tilted;
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "GPU arrays need a pixsum library built with "
                    "CUDA; this one was built without it");
#endif
}

/* ------------------------------------------------------------------------ */
/* Histograms of device memory                                              */
/* ------------------------------------------------------------------------ */

#ifndef PSB_HAVE_CUDA
/* Without CUDA every entry point below raises this. */
static PyObject *no_cuda(void)
{
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "GPU arrays need a pixsum library built with "
                    "CUDA; this one was built without it");
}
#endif

const char psb_cuda_histogram_doc[] =
"_cuda_histogram(spatial, image, counts, counts_len, *, bins, lo, hi, mask=None,\n"
"                totals=0, stream=0, device=0)\n"
"--\n\n"
"Internal: pixsum_cuda_histogram() of device memory. image and mask are\n"
"(ptr, dtype name, shape, byte strides) tuples (the mask's dtype u8, one\n"
"channel); counts is the device pointer of counts_len u64, totals 0 or the\n"
"device pointer of a pixsum_cuda_hist_totals (17 u64). bins, lo and hi are\n"
"the resolved bins and range. Enqueues on `stream` and returns without\n"
"synchronising. Use pixsum.histogram() with a GPU array instead.";

PyObject *psb_py_cuda_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "image", "counts", "counts_len", "bins", "lo", "hi",
                             "mask", "totals", "stream", "device", NULL};
    int spatial, device = 0;
    PyObject *image, *mask = Py_None;
    unsigned long long counts, totals = 0, stream = 0;
    Py_ssize_t counts_len, bins;
    double lo, hi;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOKnndd|$OKKi:_cuda_histogram", kwlist,
                                     &spatial, &image, &counts, &counts_len, &bins, &lo, &hi,
                                     &mask, &totals, &stream, &device))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (spatial != 2 && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "spatial must be 2 or 3");
    if (counts_len < 0 || bins < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "counts_len must be >= 0 and bins >= 1");
    pixsum_view vin, vmask;
    if (!desc_view(image, spatial, "image", &vin) ||
        (mask != Py_None && !desc_view(mask, spatial, "mask", &vmask)))
        return NULL;
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.bins = (size_t)bins;
    spec.lo = lo;
    spec.hi = hi;
    spec.mask = mask != Py_None ? &vmask : NULL;
    pixsum_ctx *ctx = gpu_context(stream, device);
    if (!ctx)
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_cuda_histogram(ctx, &vin, &spec, (uint64_t *)(uintptr_t)counts,
                               (size_t)counts_len,
                               (pixsum_cuda_hist_totals *)(uintptr_t)totals,
                               (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "histogram (CUDA)");
    Py_RETURN_NONE;
#else
    (void)spatial; (void)image; (void)mask; (void)counts; (void)totals; (void)stream;
    (void)device; (void)counts_len; (void)bins; (void)lo; (void)hi;
    return no_cuda();
#endif
}

const char psb_cuda_equalize_doc[] =
"_cuda_equalize(spatial, image, out, *, mask=None, stream=0, device=0)\n"
"--\n\n"
"Internal: pixsum_cuda_equalize() of device memory. image, out and mask are\n"
"(ptr, dtype name, shape, byte strides) tuples (out may describe the image\n"
"itself). Enqueues on `stream` and returns without synchronising. Use\n"
"pixsum.equalize() with a GPU array instead.";

PyObject *psb_py_cuda_equalize(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "image", "out", "mask", "stream", "device", NULL};
    int spatial, device = 0;
    PyObject *image, *out, *mask = Py_None;
    unsigned long long stream = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOO|$OKi:_cuda_equalize", kwlist, &spatial,
                                     &image, &out, &mask, &stream, &device))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (spatial != 2 && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "spatial must be 2 or 3");
    pixsum_view vin, vout, vmask;
    if (!desc_view(image, spatial, "image", &vin) || !desc_view(out, spatial, "out", &vout) ||
        (mask != Py_None && !desc_view(mask, spatial, "mask", &vmask)))
        return NULL;
    pixsum_ctx *ctx = gpu_context(stream, device);
    if (!ctx)
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_cuda_equalize(ctx, &vin, &vout, mask != Py_None ? &vmask : NULL,
                              (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "equalize (CUDA)");
    Py_RETURN_NONE;
#else
    (void)spatial; (void)image; (void)out; (void)mask; (void)stream; (void)device;
    return no_cuda();
#endif
}

const char psb_cuda_box_filter_doc[] =
"_cuda_box_filter(table, out, kh, kw, *, valid=False, mean=False, stream=0)\n"
"--\n\n"
"Internal: pixsum_cuda_box_filter() of device memory: table (the padded\n"
"integral table) and out are (ptr, dtype name, shape, byte strides) tuples\n"
"with 2 spatial axes. Enqueues one kernel on `stream` (on the current\n"
"device) and returns without synchronising. Use pixsum.box_filter() with a\n"
"GPU array instead.";

PyObject *psb_py_cuda_box_filter(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"table", "out", "kh", "kw", "valid", "mean", "stream", NULL};
    PyObject *table, *out;
    Py_ssize_t kh, kw;
    int valid = 0, mean = 0;
    unsigned long long stream = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOnn|$ppK:_cuda_box_filter", kwlist,
                                     &table, &out, &kh, &kw, &valid, &mean, &stream))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (kh < 1 || kw < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "window size must be integers >= 1");
    pixsum_view vt, vo;
    if (!desc_view(table, 2, "table", &vt) || !desc_view(out, 2, "out", &vo))
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_cuda_box_filter(&vt, (size_t)kh, (size_t)kw,
                                (valid ? PIXSUM_BOX_VALID : 0u) | (mean ? PIXSUM_BOX_MEAN : 0u),
                                &vo, (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "box_filter (CUDA)");
    Py_RETURN_NONE;
#else
    (void)table; (void)out; (void)kh; (void)kw; (void)valid; (void)mean; (void)stream;
    return no_cuda();
#endif
}

const char psb_cuda_hist_post_doc[] =
"_cuda_hist_post(counts, channels, bins, out, *, relative=False, cumulative=False,\n"
"                of_all_samples=False, totals=0, stream=0)\n"
"--\n\n"
"Internal: pixsum_cuda_hist_cumulative() (relative=False; out u64, may be\n"
"counts) or pixsum_cuda_hist_relative() (out float64) on device pointers, on\n"
"`stream`, without synchronising.";

PyObject *psb_py_cuda_hist_post(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"counts", "channels", "bins", "out", "relative", "cumulative",
                             "of_all_samples", "totals", "stream", NULL};
    unsigned long long counts, out, totals = 0, stream = 0;
    Py_ssize_t channels, bins;
    int relative = 0, cumulative = 0, all_samples = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "KnnK|$pppKK:_cuda_hist_post", kwlist,
                                     &counts, &channels, &bins, &out, &relative, &cumulative,
                                     &all_samples, &totals, &stream))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (channels < 1 || bins < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "channels and bins must be >= 1");
    int st;
    const uint64_t *c = (const uint64_t *)(uintptr_t)counts;
    void *s = (void *)(uintptr_t)stream;
    Py_BEGIN_ALLOW_THREADS
    if (relative)
        st = pixsum_cuda_hist_relative(c, (size_t)channels, (size_t)bins,
                                       (const pixsum_cuda_hist_totals *)(uintptr_t)totals,
                                       (cumulative ? PIXSUM_HIST_CUMULATIVE : 0u) |
                                           (all_samples ? PIXSUM_HIST_OF_ALL_SAMPLES : 0u),
                                       (double *)(uintptr_t)out, s);
    else
        st = pixsum_cuda_hist_cumulative(c, (size_t)channels, (size_t)bins,
                                         (uint64_t *)(uintptr_t)out, s);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, relative ? "relative histogram (CUDA)"
                                             : "cumulative histogram (CUDA)");
    Py_RETURN_NONE;
#else
    (void)counts; (void)out; (void)totals; (void)stream; (void)channels; (void)bins;
    (void)relative; (void)cumulative; (void)all_samples;
    return no_cuda();
#endif
}

const char psb_cuda_histogram2d_doc[] =
"_cuda_histogram2d(spatial, a, b, counts, counts_len, *, bins_a, lo_a, hi_a,\n"
"                  bins_b, lo_b, hi_b, mask=None, pairs=0, stream=0, device=0)\n"
"--\n\n"
"Internal: pixsum_cuda_histogram_joint() of device memory (descriptors as\n"
"_cuda_histogram; pairs 0 or the device pointer of 2 u64). The mask selects\n"
"pixels for both images. Enqueues on `stream` without synchronising.";

PyObject *psb_py_cuda_histogram2d(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "a", "b", "counts", "counts_len", "bins_a", "lo_a",
                             "hi_a", "bins_b", "lo_b", "hi_b", "mask", "pairs", "stream",
                             "device", NULL};
    int spatial, device = 0;
    PyObject *a, *b, *mask = Py_None;
    unsigned long long counts, pairs = 0, stream = 0;
    Py_ssize_t counts_len, bins_a, bins_b;
    double lo_a, hi_a, lo_b, hi_b;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOOKnnddndd|$OKKi:_cuda_histogram2d",
                                     kwlist, &spatial, &a, &b, &counts, &counts_len, &bins_a,
                                     &lo_a, &hi_a, &bins_b, &lo_b, &hi_b, &mask, &pairs,
                                     &stream, &device))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (spatial != 2 && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "spatial must be 2 or 3");
    if (counts_len < 0 || bins_a < 1 || bins_b < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "counts_len must be >= 0 and bins >= 1");
    pixsum_view va, vb, vmask;
    if (!desc_view(a, spatial, "a", &va) || !desc_view(b, spatial, "b", &vb) ||
        (mask != Py_None && !desc_view(mask, spatial, "mask", &vmask)))
        return NULL;
    pixsum_hist_spec sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    sa.bins = (size_t)bins_a;
    sa.lo = lo_a;
    sa.hi = hi_a;
    sa.mask = mask != Py_None ? &vmask : NULL;
    sb.bins = (size_t)bins_b;
    sb.lo = lo_b;
    sb.hi = hi_b;
    pixsum_ctx *ctx = gpu_context(stream, device);
    if (!ctx)
        return NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_cuda_histogram_joint(ctx, &va, &vb, &sa, &sb, (uint64_t *)(uintptr_t)counts,
                                     (size_t)counts_len, (uint64_t *)(uintptr_t)pairs,
                                     (void *)(uintptr_t)stream);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "histogram2d (CUDA)");
    Py_RETURN_NONE;
#else
    (void)spatial; (void)a; (void)b; (void)mask; (void)counts; (void)pairs; (void)stream;
    (void)device; (void)counts_len; (void)bins_a; (void)bins_b; (void)lo_a; (void)hi_a;
    (void)lo_b; (void)hi_b;
    return no_cuda();
#endif
}
