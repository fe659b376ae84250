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

static pixsum_ctx *gpu_context(unsigned long long stream, int device)
{
    for (int i = 0; i < gpu_slot_count; i++)
        if (gpu_slots[i].stream == stream && gpu_slots[i].device == device)
            return gpu_slots[i].ctx;
    if (gpu_slot_count == GPU_CTX_SLOTS)
        return psb_fail(PIXSUM_ERR_TOO_LARGE, "more than %d CUDA streams used from one "
                        "thread", GPU_CTX_SLOTS);
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return NULL;
    }
    gpu_slots[gpu_slot_count++] = (gpu_ctx_slot){stream, device, ctx};
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
"               method='auto', wrap=False, padded=False)\n"
"--\n\n"
"Internal: integral of device memory through pixsum_cuda_integral[_sq]().\n"
"image/out/out_sq are (ptr, dtype name, shape, byte strides) tuples; stream is\n"
"a cudaStream_t as an int (0 = the context's stream). Enqueues and returns\n"
"without synchronising. Use pixsum.integral() with a GPU array instead.";

PyObject *psb_py_cuda_integral(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "image", "out", "out_sq", "stream", "device",
                             "method", "wrap", "padded", NULL};
    int spatial, device = 0;
    PyObject *image, *out, *out_sq = Py_None;
    unsigned long long stream = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOO|O$Kizpp:_cuda_integral", kwlist,
                                     &spatial, &image, &out, &out_sq, &stream, &device,
                                     &o.method,
                                     &o.wrap, &o.padded))
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
    int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, device);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "context");
    void *s = (void *)(uintptr_t)stream;
    Py_BEGIN_ALLOW_THREADS
    if (squared)
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
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "GPU arrays need a pixsum library built with "
                    "CUDA; this one was built without it");
#endif
}
