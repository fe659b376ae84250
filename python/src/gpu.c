/*
 * gpu.c - GPU arrays in pixsum._core.
 *
 * integral(), integral_sq() and integral3d() of a PyTorch CUDA tensor or a
 * CuPy array run from here without Python code: psb_gpu_integral() reads the
 * array (a tensor's data_ptr(), shape, stride(), dtype and device; a CuPy
 * array's __cuda_array_interface__), chooses the table type with the
 * library's rule (pixsum_integral_type(), the one the NumPy path uses),
 * allocates the result with the input's own library (torch.empty,
 * cupy.empty, looked up once) and enqueues pixsum_cuda_integral*() on the
 * caller's stream with the GIL released. Nothing is copied to the host and
 * nothing synchronises.
 *
 * Streams (the same rules as pixsum/_gpu.py, which serves other producers):
 *   - __cuda_array_interface__ v3 with a "stream" entry: that stream
 *     (1 = legacy default stream, 2 = per-thread default stream, else a
 *     cudaStream_t; 0 is refused, as the protocol says);
 *   - PyTorch tensors: torch's current stream of the tensor's device;
 *   - no stream given: the legacy default stream.
 * The result is allocated on the array's device, so later work the caller
 * enqueues on the stream sees it complete.
 *
 * The other GPU calls (box queries and filters, histograms, the tilted
 * integral, producers other than CuPy and PyTorch, DLPack-only objects) go
 * through psb_gpu_dispatch() to pixsum/_gpu.py, which reads the array in
 * Python and calls the _cuda_* entry points below with raw descriptions
 * (pointer, dtype name, shape, byte strides).
 *
 * Without CUDA in the library (PSB_HAVE_CUDA undefined) GPU arrays raise
 * pixsum.UnavailableError.
 */
#include "binding.h"

#ifdef PSB_HAVE_CUDA
#include "pixsum_cuda.h"
#endif

#include <stdlib.h>
#include <string.h>

int psb_have_cuda(void)
{
#ifdef PSB_HAVE_CUDA
    return 1;
#else
    return 0;
#endif
}

PyObject *psb_gpu_dispatch(const char *name, PyObject *args, PyObject *kwargs)
{
    static PyObject *dispatch; /* pixsum._gpu.dispatch, kept once found */
    if (!dispatch) {
        PyObject *mod = PyImport_ImportModule("pixsum._gpu");
        if (!mod)
            return NULL;
        dispatch = PyObject_GetAttrString(mod, "dispatch");
        Py_DECREF(mod);
        if (!dispatch)
            return NULL;
    }
    return PyObject_CallFunction(dispatch, "sOO", name, args, kwargs ? kwargs : Py_None);
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
    if (!psb_desc_view(image, spatial, 1, 4, "image", &vin) ||
        (plain && !psb_desc_view(out, spatial, 1, 4, "out", &vout)) ||
        (squared && !psb_desc_view(out_sq, spatial, 1, 4, "out_sq", &vsq)))
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
"                totals=0, stream=0, device=0, batch=False, range_per_image=False)\n"
"--\n\n"
"Internal: pixsum_cuda_histogram() of device memory. image and mask are\n"
"(ptr, dtype name, shape, byte strides) tuples (the mask's dtype u8, one\n"
"channel); counts is the device pointer of counts_len u64, totals 0 or the\n"
"device pointer of a pixsum_cuda_hist_totals (17 u64). bins, lo and hi are\n"
"the resolved bins and range. batch=True (spatial 3): the depth axis holds\n"
"N images, pixsum_cuda_histogram_batch() (the mask's depth N or 1; totals\n"
"N records; range_per_image sets PIXSUM_HIST_RANGE_PER_IMAGE). Enqueues on\n"
"`stream` and returns without synchronising. Use pixsum.histogram() with a\n"
"GPU array instead.";

PyObject *psb_py_cuda_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"spatial", "image", "counts", "counts_len", "bins", "lo", "hi",
                             "mask", "totals", "stream", "device", "batch", "range_per_image",
                             NULL};
    int spatial, device = 0, batch = 0, per_image = 0;
    PyObject *image, *mask = Py_None;
    unsigned long long counts, totals = 0, stream = 0;
    Py_ssize_t counts_len, bins;
    double lo, hi;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iOKnndd|$OKKipp:_cuda_histogram", kwlist,
                                     &spatial, &image, &counts, &counts_len, &bins, &lo, &hi,
                                     &mask, &totals, &stream, &device, &batch, &per_image))
        return NULL;
#ifdef PSB_HAVE_CUDA
    if (spatial != 2 && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "spatial must be 2 or 3");
    if (batch && spatial != 3)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "a batch is described with spatial 3");
    if (counts_len < 0 || bins < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "counts_len must be >= 0 and bins >= 1");
    pixsum_view vin, vmask;
    if (!psb_desc_view(image, spatial, 1, 4, "image", &vin) ||
        (mask != Py_None && !psb_desc_view(mask, spatial, 1, 4, "mask", &vmask)))
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
    if (batch)
        st = pixsum_cuda_histogram_batch(ctx, &vin, &spec,
                                         per_image ? PIXSUM_HIST_RANGE_PER_IMAGE : 0u,
                                         (uint64_t *)(uintptr_t)counts, (size_t)counts_len,
                                         (pixsum_cuda_hist_totals *)(uintptr_t)totals,
                                         (void *)(uintptr_t)stream);
    else
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
    (void)device; (void)counts_len; (void)bins; (void)lo; (void)hi; (void)batch;
    (void)per_image;
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
    if (!psb_desc_view(image, spatial, 1, 4, "image", &vin) ||
        !psb_desc_view(out, spatial, 1, 4, "out", &vout) ||
        (mask != Py_None && !psb_desc_view(mask, spatial, 1, 4, "mask", &vmask)))
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
    if (!psb_desc_view(a, spatial, 1, 4, "a", &va) ||
        !psb_desc_view(b, spatial, 1, 4, "b", &vb) ||
        (mask != Py_None && !psb_desc_view(mask, spatial, 1, 4, "mask", &vmask)))
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

/* ------------------------------------------------------------------------ */
/* integral(), integral_sq(), integral3d() of CuPy and PyTorch arrays       */
/* ------------------------------------------------------------------------ */

#ifdef PSB_HAVE_CUDA
#define GPU_MAX_DIMS 8

/* An array library's callables and dtype objects, looked up at its first
 * array and kept for the life of the process. */
typedef struct array_lib {
    int ready;
    PyObject *empty, *zeros;           /* torch.empty / cupy.empty, ... zeros */
    PyObject *dtype[PIXSUM_I64 + 1];   /* its dtype per pixsum type; NULL: none */
    PyObject *raw_stream;              /* torch._C._cuda_getCurrentRawStream or NULL */
    PyObject *current_stream;          /* torch.cuda.current_stream */
    PyObject *get_device;              /* cupy.cuda.runtime.getDevice */
    PyObject *device_scope;            /* cupy.cuda.Device */
} array_lib;

static array_lib torch_lib, cupy_lib;

/* Interned attribute names, and the keyword names ("dtype", "device"). */
static PyObject *s_data_ptr, *s_shape, *s_stride, *s_dtype, *s_device, *s_index, *s_id,
    *s_cai, *s_cuda_stream, *s_dtype_device;

static int intern_names(void)
{
    if (s_dtype_device)
        return 1;
    const char *text[] = {"data_ptr", "shape", "stride", "dtype", "device", "index", "id",
                          "__cuda_array_interface__", "cuda_stream"};
    PyObject **slot[] = {&s_data_ptr, &s_shape, &s_stride, &s_dtype, &s_device, &s_index,
                         &s_id, &s_cai, &s_cuda_stream};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (!*slot[i] && !(*slot[i] = PyUnicode_InternFromString(text[i])))
            return 0;
    return (s_dtype_device = PyTuple_Pack(2, s_dtype, s_device)) != NULL;
}

/* getattr(obj, "a.b.c"), a new reference; NULL with AttributeError set. */
static PyObject *attr_path(PyObject *obj, const char *path)
{
    char part[64];
    Py_INCREF(obj);
    while (obj && *path) {
        size_t n = strcspn(path, ".");
        if (n >= sizeof part)
            n = sizeof part - 1;
        memcpy(part, path, n);
        part[n] = '\0';
        PyObject *next = PyObject_GetAttrString(obj, part);
        Py_DECREF(obj);
        obj = next;
        path += n + (path[n] == '.');
    }
    return obj;
}

/* The library (torch or cupy) with its callables; NULL with an exception. */
static array_lib *load_lib(psb_array_kind kind)
{
    int torch = kind == PSB_GPU_TORCH;
    array_lib *L = torch ? &torch_lib : &cupy_lib;
    if (L->ready)
        return L;
    if (!intern_names())
        return NULL;
    PyObject *mod = PyImport_ImportModule(torch ? "torch" : "cupy");
    if (!mod)
        return NULL;
    int ok = (L->empty || (L->empty = PyObject_GetAttrString(mod, "empty"))) &&
             (L->zeros || (L->zeros = PyObject_GetAttrString(mod, "zeros")));
    for (int t = PIXSUM_U8; ok && t <= PIXSUM_I64; t++) {
        if (L->dtype[t])
            continue;
        if (torch) { /* an older PyTorch lacks the wide unsigned types */
            L->dtype[t] = PyObject_GetAttrString(mod, psb_dtype_name((pixsum_type)t));
            if (!L->dtype[t])
                PyErr_Clear();
        } else {
            ok = (L->dtype[t] = (PyObject *)PyArray_DescrFromType(
                      psb_npy_of_type((pixsum_type)t))) != NULL;
        }
    }
    if (ok && torch) {
        if (!L->raw_stream && !(L->raw_stream = attr_path(mod, "_C._cuda_getCurrentRawStream")))
            PyErr_Clear(); /* the public spelling below serves */
        ok = L->current_stream || (L->current_stream = attr_path(mod, "cuda.current_stream"));
    } else if (ok) {
        ok = (L->get_device || (L->get_device = attr_path(mod, "cuda.runtime.getDevice"))) &&
             (L->device_scope || (L->device_scope = attr_path(mod, "cuda.Device")));
    }
    Py_DECREF(mod);
    if (!ok)
        return NULL;
    L->ready = 1;
    return L;
}

/* A GPU array as this file needs it. */
typedef struct gpu_array {
    void *ptr;
    pixsum_type type;
    int nd;
    npy_intp dims[GPU_MAX_DIMS], strides[GPU_MAX_DIMS];
    int device;
    int readonly;
    unsigned long long stream; /* valid when has_stream */
    int has_stream;
    PyObject *device_obj;      /* a tensor's torch.device (new reference) or NULL */
} gpu_array;

static void gpu_array_clear(gpu_array *g)
{
    Py_CLEAR(g->device_obj);
}

/* Reads the ints of a tuple or sequence `seq` into out[0..n). Returns n, or -1
 * with an exception set (too many entries: BadShapeError naming `what`). */
static int read_ints(PyObject *seq, npy_intp *out, const char *what)
{
    PyObject *fast = PySequence_Fast(seq, "shape and strides must be sequences");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > GPU_MAX_DIMS) {
        Py_DECREF(fast);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s has %zd axes; pixsum reads at most 4", what, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        out[i] = (npy_intp)PyLong_AsSsize_t(PySequence_Fast_GET_ITEM(fast, i));
        if (out[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

/* str(obj) into buf (for messages). */
static void obj_text(PyObject *obj, char *buf, size_t size)
{
    PyObject *t = PyObject_Str(obj);
    const char *u = t ? PyUnicode_AsUTF8(t) : NULL;
    snprintf(buf, size, "%s", u ? u : "?");
    Py_XDECREF(t);
    if (!u)
        PyErr_Clear();
}

static int fail_gpu_dtype(const char *what, PyObject *dtype_obj)
{
    char text[64];
    obj_text(dtype_obj, text, sizeof text);
    psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: GPU dtype %s is not a pixsum type", what, text);
    return 0;
}

/* A CUDA tensor's description from its own attributes (its
 * __cuda_array_interface__ is slower and refuses tensors that need grad). */
static int read_torch(PyObject *t, const char *what, gpu_array *g)
{
    PyObject *dt = PyObject_GetAttr(t, s_dtype);
    if (!dt)
        return 0;
    g->type = PIXSUM_TYPE_NONE;
    for (int i = PIXSUM_U8; i <= PIXSUM_I64; i++)
        if (torch_lib.dtype[i] == dt)
            g->type = (pixsum_type)i;
    if (g->type == PIXSUM_TYPE_NONE) {
        fail_gpu_dtype(what, dt);
        Py_DECREF(dt);
        return 0;
    }
    Py_DECREF(dt);
    PyObject *shape = PyObject_GetAttr(t, s_shape);
    g->nd = shape ? read_ints(shape, g->dims, what) : -1;
    Py_XDECREF(shape);
    if (g->nd < 0)
        return 0;
    PyObject *stride = PyObject_CallMethodObjArgs(t, s_stride, NULL);
    int ns = stride ? read_ints(stride, g->strides, what) : -1;
    Py_XDECREF(stride);
    if (ns != g->nd)
        return ns < 0 ? 0 : (psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: strides do not match the "
                                      "shape", what), 0);
    size_t es = pixsum_type_size(g->type);
    for (int i = 0; i < g->nd; i++)
        g->strides[i] *= (npy_intp)es;
    PyObject *ptr = PyObject_CallMethodObjArgs(t, s_data_ptr, NULL);
    g->ptr = ptr ? PyLong_AsVoidPtr(ptr) : NULL;
    Py_XDECREF(ptr);
    if (!ptr || PyErr_Occurred())
        return 0;
    g->readonly = 0;
    if (!(g->device_obj = PyObject_GetAttr(t, s_device)))
        return 0;
    PyObject *index = PyObject_GetAttr(g->device_obj, s_index);
    if (!index)
        return 0;
    g->device = index == Py_None ? 0 : (int)PyLong_AsLong(index);
    Py_DECREF(index);
    if (PyErr_Occurred())
        return 0;
    g->has_stream = 0; /* torch's current stream, looked up when needed */
    return 1;
}

/* pixsum type of an array-interface typestr ("<u2", "|u1", ...), native
 * byte order only; PIXSUM_TYPE_NONE otherwise. */
static pixsum_type type_of_typestr(const char *ts)
{
#if PY_LITTLE_ENDIAN
    const char foreign = '>';
#else
    const char foreign = '<';
#endif
    if (!ts || !ts[0] || ts[0] == foreign || !ts[1])
        return PIXSUM_TYPE_NONE;
    char *end;
    long size = strtol(ts + 2, &end, 10);
    if (*end)
        return PIXSUM_TYPE_NONE;
    return psb_type_of_kind(ts[1], size);
}

/* Outcome of read_cai(): read, an error set, or a case for pixsum/_gpu.py. */
enum { READ_FAIL = 0, READ_OK = 1, READ_ELSEWHERE = 2 };

/* An array's description from its __cuda_array_interface__ (a masked array
 * is left to pixsum/_gpu.py, which refuses it). */
static int read_cai(PyObject *obj, const char *what, gpu_array *g)
{
    PyObject *cai = PyObject_GetAttr(obj, s_cai);
    if (!cai)
        return READ_FAIL;
    int res = READ_FAIL;
    if (!PyDict_Check(cai)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: __cuda_array_interface__ is not a dict", what);
        goto done;
    }
    PyObject *mask = PyDict_GetItemString(cai, "mask");
    if (mask && mask != Py_None) {
        res = READ_ELSEWHERE;
        goto done;
    }
    PyObject *typestr = PyDict_GetItemString(cai, "typestr");
    PyObject *shape = PyDict_GetItemString(cai, "shape");
    PyObject *data = PyDict_GetItemString(cai, "data");
    if (!typestr || !PyUnicode_Check(typestr) || !shape || !data || !PyTuple_Check(data) ||
        PyTuple_GET_SIZE(data) != 2) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: __cuda_array_interface__ lacks typestr, shape "
                 "or data", what);
        goto done;
    }
    const char *ts = PyUnicode_AsUTF8(typestr);
    if (!ts)
        goto done;
    if ((g->type = type_of_typestr(ts)) == PIXSUM_TYPE_NONE) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: GPU dtype %s is not a pixsum type", what, ts);
        goto done;
    }
    if ((g->nd = read_ints(shape, g->dims, what)) < 0)
        goto done;
    PyObject *strides = PyDict_GetItemString(cai, "strides");
    if (strides && strides != Py_None) {
        if (read_ints(strides, g->strides, what) != g->nd) {
            if (!PyErr_Occurred())
                psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: strides do not match the shape", what);
            goto done;
        }
    } else { /* C-contiguous */
        npy_intp step = (npy_intp)pixsum_type_size(g->type);
        for (int i = g->nd - 1; i >= 0; i--) {
            g->strides[i] = step;
            step *= g->dims[i] > 1 ? g->dims[i] : 1;
        }
    }
    g->ptr = PyLong_AsVoidPtr(PyTuple_GET_ITEM(data, 0));
    if (PyErr_Occurred())
        goto done;
    int ro = PyObject_IsTrue(PyTuple_GET_ITEM(data, 1));
    if (ro < 0)
        goto done;
    g->readonly = ro;
    PyObject *stream = PyDict_GetItemString(cai, "stream");
    g->has_stream = 1;
    g->stream = 0; /* no stream given: the legacy default stream */
    if (stream && stream != Py_None) {
        g->stream = PyLong_AsUnsignedLongLong(stream);
        if (PyErr_Occurred())
            goto done;
        if (g->stream == 0) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "__cuda_array_interface__ stream 0 is disallowed "
                     "by the protocol (v3)");
            goto done;
        }
    }
    /* the device: obj.device.id (CuPy) or .index, else 0 */
    g->device = 0;
    PyObject *dev = PyObject_GetAttr(obj, s_device);
    if (dev) {
        PyObject *id = PyObject_GetAttr(dev, s_id);
        if (!id) {
            PyErr_Clear();
            id = PyObject_GetAttr(dev, s_index);
        }
        if (id && PyLong_Check(id))
            g->device = (int)PyLong_AsLong(id);
        Py_XDECREF(id);
        Py_DECREF(dev);
    }
    PyErr_Clear();
    res = READ_OK;
done:
    Py_DECREF(cai);
    return res;
}

/* Reads a GPU array of kind `kind` (PSB_GPU_TORCH or PSB_GPU_CUPY). */
static int read_gpu(PyObject *obj, psb_array_kind kind, const char *what, gpu_array *g)
{
    memset(g, 0, sizeof *g);
    if (kind == PSB_GPU_TORCH)
        return read_torch(obj, what, g);
    return read_cai(obj, what, g);
}

/* The stream of the call: the array's (CAI v3) or torch's current stream of
 * its device. Returns 1, or 0 with an exception set. */
static int call_stream(gpu_array *g, psb_array_kind kind)
{
    if (g->has_stream || kind != PSB_GPU_TORCH)
        return 1;
    PyObject *dev = PyLong_FromLong(g->device), *r = NULL;
    if (!dev)
        return 0;
    if (torch_lib.raw_stream)
        r = PyObject_CallOneArg(torch_lib.raw_stream, dev);
    if (!r) {
        PyErr_Clear();
        PyObject *s = PyObject_CallOneArg(torch_lib.current_stream, dev);
        r = s ? PyObject_GetAttr(s, s_cuda_stream) : NULL;
        Py_XDECREF(s);
    }
    Py_DECREF(dev);
    if (!r)
        return 0;
    g->stream = PyLong_AsUnsignedLongLong(r);
    Py_DECREF(r);
    if (PyErr_Occurred())
        return 0;
    g->has_stream = 1;
    return 1;
}

/* Leaves a context manager entered with __enter__, keeping an exception
 * already set. Returns 1, or 0 with __exit__'s own exception set. */
static int scope_exit(PyObject *scope)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *r = PyObject_CallMethod(scope, "__exit__", "OOO", Py_None, Py_None, Py_None);
    if (!r) {
        Py_XDECREF(exc);
        return 0;
    }
    Py_DECREF(r);
    if (exc)
        PyErr_SetRaisedException(exc);
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *r = PyObject_CallMethod(scope, "__exit__", "OOO", Py_None, Py_None, Py_None);
    if (!r) {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        return 0;
    }
    Py_DECREF(r);
    if (type)
        PyErr_Restore(type, value, tb);
#endif
    return 1;
}

/* A new array of `shape` and pixsum type `t` from library `L` of kind
 * `kind` on the input's device (zero-filled when `zero`). NULL with an
 * exception set. */
static PyObject *gpu_alloc(array_lib *L, psb_array_kind kind, const gpu_array *in, int nd,
                           const npy_intp *shape, pixsum_type t, int zero)
{
    PyObject *dims = PyTuple_New(nd);
    if (!dims)
        return NULL;
    for (int i = 0; i < nd; i++) {
        PyObject *v = PyLong_FromSsize_t((Py_ssize_t)shape[i]);
        if (!v) {
            Py_DECREF(dims);
            return NULL;
        }
        PyTuple_SET_ITEM(dims, i, v);
    }
    PyObject *fn = zero ? L->zeros : L->empty, *res = NULL;
    if (kind == PSB_GPU_TORCH) { /* torch.empty(dims, dtype=, device=) */
        PyObject *argv[3] = {dims, L->dtype[t], in->device_obj};
        res = PyObject_Vectorcall(fn, argv, 1, s_dtype_device);
        Py_DECREF(dims);
        return res;
    }
    /* CuPy allocates on its current device: make the input's current */
    PyObject *cur = PyObject_CallNoArgs(L->get_device), *scope = NULL;
    long current = cur ? PyLong_AsLong(cur) : -1;
    Py_XDECREF(cur);
    if (!cur || PyErr_Occurred()) {
        Py_DECREF(dims);
        return NULL;
    }
    if (current != in->device) {
        scope = PyObject_CallFunction(L->device_scope, "i", in->device);
        PyObject *entered = scope ? PyObject_CallMethod(scope, "__enter__", NULL) : NULL;
        Py_XDECREF(entered);
        if (!entered) {
            Py_XDECREF(scope);
            Py_DECREF(dims);
            return NULL;
        }
    }
    res = PyObject_CallFunctionObjArgs(fn, dims, L->dtype[t], NULL);
    Py_DECREF(dims);
    if (scope && !scope_exit(scope))
        Py_CLEAR(res);
    Py_XDECREF(scope);
    return res;
}

/* The device pointer of an array this file allocated (C-contiguous). */
static void *alloc_ptr(PyObject *arr, psb_array_kind kind)
{
    PyObject *p = kind == PSB_GPU_TORCH ? PyObject_CallMethodObjArgs(arr, s_data_ptr, NULL)
                                        : attr_path(arr, "data.ptr");
    void *ptr = p ? PyLong_AsVoidPtr(p) : NULL;
    Py_XDECREF(p);
    return ptr;
}

/* Reads `out=` or `out_sq=` (any GPU array) into g. Returns 1, or 0 with an
 * exception set. */
static int read_given(PyObject *obj, const char *what, gpu_array *g)
{
    psb_array_kind kind = psb_array_kind_of(obj);
    memset(g, 0, sizeof *g);
    if (kind == PSB_GPU_TORCH)
        return load_lib(kind) && read_torch(obj, what, g);
    if (kind == PSB_GPU_CUPY || kind == PSB_GPU_CAI) {
        int r = read_cai(obj, what, g);
        if (r == READ_ELSEWHERE)
            psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: masked GPU arrays are not supported", what);
        return r == READ_OK;
    }
    psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: a GPU array must expose __cuda_array_interface__",
             what);
    return 0;
}

/* The table type: dtype= when given, else out='s type, else the library's
 * rule for `count` pixels (int64 where PyTorch lacks the unsigned type).
 * PIXSUM_TYPE_NONE with an exception set on failure. */
static pixsum_type table_type(PyObject *dtype, const gpu_array *given, pixsum_type in,
                              size_t count, int squared, const array_lib *L,
                              psb_array_kind kind)
{
    pixsum_type t;
    if (dtype && dtype != Py_None)
        return psb_dtype_arg(dtype, &t) ? t : PIXSUM_TYPE_NONE;
    if (given)
        return given->type;
    t = pixsum_integral_type(in, count ? count : 1, squared);
    if (t == PIXSUM_TYPE_NONE)
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s is not an input type of integral tables",
                        psb_dtype_name(in)), PIXSUM_TYPE_NONE;
    if (kind == PSB_GPU_TORCH && !L->dtype[t])
        t = PIXSUM_I64; /* an older PyTorch without unsigned tensors */
    return t;
}

/* Describes g as the image or a table of this call. */
static int call_view(const gpu_array *g, const psb_integral_args *a, const char *what,
                     pixsum_view *v)
{
    if (a->batch)
        return psb_batch_view(g->ptr, g->type, g->nd, g->dims, g->strides, a->channels_first,
                              what, v);
    return psb_view_raw(g->ptr, g->type, g->nd, g->dims, g->strides, a->spatial, what, v);
}

/* The table given as out= (checked against shape and type) or a new one.
 * Returns a new reference with *view set, or NULL with an exception set. */
static PyObject *table_array(PyObject *given, gpu_array *gg, array_lib *L,
                             psb_array_kind kind, const gpu_array *in, const npy_intp *shape,
                             pixsum_type t, int asked, int zero, const psb_integral_args *a,
                             const char *what, pixsum_view *view)
{
    PyObject *res;
    if (given) {
        int same = gg->nd == in->nd;
        for (int i = 0; same && i < in->nd; i++)
            same = gg->dims[i] == shape[i];
        if (!same) {
            char got[96], want[96];
            psb_shape_text(gg->nd, gg->dims, got, sizeof got);
            psb_shape_text(in->nd, shape, want, sizeof want);
            return psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s has shape %s, expected %s", what, got,
                            want);
        }
        if (asked && gg->type != t)
            return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s has dtype %s but dtype=%s was asked", what,
                            psb_dtype_name(gg->type), psb_dtype_name(t));
        if (gg->readonly)
            return psb_fail(PIXSUM_ERR_INVALID_ARG, "%s is read-only", what);
        Py_INCREF(given);
        res = given;
    } else {
        if (!L->dtype[t])
            return psb_fail(PIXSUM_ERR_BAD_TYPE, "PyTorch has no %s tensors",
                            psb_dtype_name(t));
        if (!(res = gpu_alloc(L, kind, in, in->nd, shape, t, zero)))
            return NULL;
        memset(gg, 0, sizeof *gg);
        gg->type = t;
        gg->nd = in->nd;
        npy_intp step = (npy_intp)pixsum_type_size(t);
        for (int i = in->nd - 1; i >= 0; i--) {
            gg->dims[i] = shape[i];
            gg->strides[i] = step;
            step *= shape[i];
        }
        gg->ptr = alloc_ptr(res, kind);
        if (PyErr_Occurred()) {
            Py_DECREF(res);
            return NULL;
        }
    }
    if (!call_view(gg, a, what, view)) {
        Py_DECREF(res);
        return NULL;
    }
    return res;
}
#endif /* PSB_HAVE_CUDA */

PyObject *psb_gpu_integral(PyObject *image, psb_array_kind kind, const psb_integral_args *a,
                           PyObject *args, PyObject *kwargs)
{
    if (kind != PSB_GPU_TORCH && kind != PSB_GPU_CUPY)
        return psb_gpu_dispatch(a->name, args, kwargs);
#ifndef PSB_HAVE_CUDA
    (void)image;
    return psb_fail(PIXSUM_ERR_UNAVAILABLE, "%s: GPU arrays need a pixsum library built with "
                    "CUDA; this one was built without it", a->name);
#else
    array_lib *L = load_lib(kind);
    if (!L)
        return NULL;
    gpu_array in, go, gq;
    memset(&go, 0, sizeof go);
    memset(&gq, 0, sizeof gq);
    PyObject *res = NULL, *res_sq = NULL, *result = NULL;
    pixsum_view vin, vout, vsq;
    PyObject *packed = NULL; /* the image's contiguous copy, when one is made */
    int r = read_gpu(image, kind, "image", &in);
    if (r == READ_ELSEWHERE) {
        gpu_array_clear(&in);
        return psb_gpu_dispatch(a->name, args, kwargs);
    }
    if (r != READ_OK)
        goto done;
    unsigned flags = (a->batch || a->spatial == 3 ? PSB_IN_VOLUME : 0u) |
                     (a->channels_first ? PSB_IN_MERGE01 : 0u);
    if (!a->no_copy &&
        !psb_layout_in_place(in.nd, in.dims, in.strides,
                             (npy_intp)pixsum_type_size(in.type), flags)) {
        /* a layout the view cannot describe (a transposed or channel view,
         * a broadcast): one contiguous copy with the array's own library, on
         * its current stream */
        packed = kind == PSB_GPU_TORCH ? PyObject_CallMethod(image, "contiguous", NULL)
                                       : PyObject_CallMethod(image, "copy", "s", "C");
        gpu_array_clear(&in);
        if (!packed || (r = read_gpu(packed, kind, "image", &in)) != READ_OK) {
            if (packed && !PyErr_Occurred())
                psb_fail(PIXSUM_ERR_INTERNAL, "%s: the image's contiguous copy could not "
                         "be read", a->name);
            goto done;
        }
    }
    if (!a->batch) {
        if (a->spatial == 2 && !psb_check_unbatched(a->name, in.nd, in.dims))
            goto done;
        if (in.nd != a->spatial && in.nd != a->spatial + 1) {
            char shape[96];
            psb_shape_text(in.nd, in.dims, shape, sizeof shape);
            psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: GPU image of shape %s must have %d spatial "
                     "axes and an optional channel axis", a->name, shape, a->spatial);
            goto done;
        }
    }
    if (!call_view(&in, a, "image", &vin))
        goto done;
    if ((a->out && !read_given(a->out, "out", &go)) ||
        (a->squared && a->out_sq && !read_given(a->out_sq, "out_sq", &gq)))
        goto done;
    /* the overflow rule counts the pixels of one image of a batch */
    size_t count = vin.width * vin.height * (a->batch ? 1 : vin.depth);
    pixsum_type t = table_type(a->dtype, a->out ? &go : NULL, vin.type, count, 0, L, kind);
    if (t == PIXSUM_TYPE_NONE)
        goto done;
    npy_intp shape[GPU_MAX_DIMS];
    int first = a->batch ? 1 + a->channels_first : 0;
    int last = a->batch ? first + 1 : a->spatial - 1;
    for (int i = 0; i < in.nd; i++)
        shape[i] = in.dims[i] + (a->opts.padded && i >= first && i <= last ? 1 : 0);
    /* a padded volume of one slice still gets its leading zero slice */
    int lone_slice = !a->batch && a->spatial == 3 && a->opts.padded && vin.depth == 1;
    if (lone_slice)
        shape[0] = 2;
    int asked = a->dtype && a->dtype != Py_None;
    if (!(res = table_array(a->out, &go, L, kind, &in, shape, t, asked, lone_slice, a, "out",
                            &vout)))
        goto done;
    if (a->squared) {
        pixsum_type q = table_type(a->sq_dtype, a->out_sq ? &gq : NULL, vin.type, count, 1, L,
                                   kind);
        if (q == PIXSUM_TYPE_NONE)
            goto done;
        asked = a->sq_dtype && a->sq_dtype != Py_None;
        if (!(res_sq = table_array(a->out_sq, &gq, L, kind, &in, shape, q, asked, 0, a,
                                   "out_sq", &vsq)))
            goto done;
    }
    if (lone_slice && a->out) { /* a given table's slice 0 becomes zeros */
        PyObject *zero = PyLong_FromLong(0);
        int bad = !zero || PyObject_SetItem(res, zero, zero) < 0;
        Py_XDECREF(zero);
        if (bad)
            goto done;
    }
    if (!call_stream(&in, kind))
        goto done;
    pixsum_ctx *ctx = gpu_context(in.stream, in.device);
    if (!ctx || !psb_set_ctx(ctx, &a->opts))
        goto done;
    pixsum_view vrun = vout;
    if (lone_slice) { /* the 2-D padded table goes to slice 1 */
        vrun.data = (char *)vout.data + vout.slice_stride;
        vrun.depth = 1;
    }
    void *stream = (void *)(uintptr_t)in.stream;
    int st;
    Py_BEGIN_ALLOW_THREADS
    if (a->batch)
        st = a->squared ? pixsum_cuda_integral_batch_sq(ctx, &vin, &vout, &vsq, stream)
                        : pixsum_cuda_integral_batch(ctx, &vin, &vout, stream);
    else if (a->squared)
        st = pixsum_cuda_integral_sq(ctx, &vin, &vout, &vsq, stream);
    else
        st = pixsum_cuda_integral(ctx, &vin, &vrun, stream);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "integral (CUDA)");
        goto done;
    }
    result = a->squared ? PyTuple_Pack(2, res, res_sq) : (Py_INCREF(res), res);
done:
    Py_XDECREF(packed);
    Py_XDECREF(res);
    Py_XDECREF(res_sq);
    gpu_array_clear(&in);
    gpu_array_clear(&go);
    gpu_array_clear(&gq);
    return result;
#endif
}
