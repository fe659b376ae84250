/*
 * binding.h - what the source files of the pixsum._core extension share:
 * error raising (C status -> pixsum.Error subclass), input arrays -> arrays the
 * library reads (in place where a view can describe them, else one packed
 * copy), NumPy array <-> pixsum_view, per-call contexts and the recognition of GPU
 * arrays (all in common.c), and the histogram (hist.c, ihist.c) and GPU
 * (gpu.c) entry points that module.c puts in the module table. Dependencies
 * run one way: common.c needs no other file of the extension; gpu.c needs
 * common.c; hist.c needs gpu.c (GPU arrays go there); ihist.c needs hist.c;
 * module.c needs them all.
 */
#ifndef PIXSUM_BINDING_H
#define PIXSUM_BINDING_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL pixsum_core_ARRAY_API
#ifndef PSB_MAIN_FILE
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>

/* NumPy 2 hides the descriptor's fields behind accessors; NumPy 1 has none. */
#if !defined(PyDataType_ELSIZE) && NPY_ABI_VERSION < 0x02000000
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif

#include "pixsum.h"

/* Keyword options shared by the compute functions. */
typedef struct psb_opts {
    const char *method;   /* NULL or "auto" = automatic choice */
    Py_ssize_t threads;   /* 0 = all cores */
    int wrap;             /* modular integer tables */
    int padded;           /* zero-padded table layout */
} psb_opts;

/* Loads pixsum._errors.BY_STATUS, the exception class per status code, for
 * psb_fail() (called once by the module's init). Returns 1, or 0 with an
 * exception set. */
int psb_errors_init(void);

/* Raises the pixsum.Error subclass for `status` with a printf-style message
 * (also used as the detail text). Always returns NULL. */
void *psb_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Raises the pixsum.Error subclass for `status` after a failed library call,
 * with the message "<what>: <status text>: <detail>" and the library's detail
 * text (pixsum_last_error() of this thread) as the `detail` attribute.
 * Always returns NULL. */
void *psb_fail_library(int status, const char *what);

/* The end of a binding whose library call fills one result array: with
 * status PIXSUM_OK, returns *res and sets *res to NULL (the reference moves
 * to the caller's result, so the cleanup's Py_XDECREF(*res) leaves it alone);
 * otherwise raises the library's error for `what` (psb_fail_library()),
 * leaves *res to the cleanup and returns NULL. */
PyObject *psb_hand_over(int status, const char *what, PyArrayObject **res);

/* The pixsum type of NumPy's kind character ('u', 'i', 'f') and item size in
 * bytes (a dtype, or an __array_interface__ typestr), or PIXSUM_TYPE_NONE. */
pixsum_type psb_type_of_kind(char kind, long size);

/* pixsum type of a NumPy dtype (native byte order only), or PIXSUM_TYPE_NONE. */
pixsum_type psb_type_of_descr(PyArray_Descr *d);

/* Describes a NumPy dtype for messages, the one place that does: its name and
 * its type string, "int8 ('|i1')", "object ('|O')", "float32 ('>f4',
 * non-native byte order)". Never fails (a dtype NumPy cannot describe gives
 * its kind and size). */
void psb_descr_text(PyArray_Descr *d, char *buf, size_t size);

/* Raises pixsum.BadTypeError "WHAT has dtype <psb_descr_text>; ACCEPTS" (ACCEPTS
 * NULL: the element types pixsum reads). Always returns NULL. */
void *psb_fail_dtype(const char *what, PyArray_Descr *d, const char *accepts);

/* NumPy's name of a pixsum type ("uint8", ...). */
const char *psb_dtype_name(pixsum_type t);

/* NumPy type number of a pixsum type, or -1. */
int psb_npy_of_type(pixsum_type t);

/* Converts a dtype argument (None allowed: PIXSUM_TYPE_NONE) into *type.
 * Returns 1, or 0 with pixsum.BadTypeError (or NumPy's TypeError) set. */
int psb_dtype_arg(PyObject *obj, pixsum_type *type);

/* Flags of psb_input_array(). */
enum {
    PSB_IN_NO_COPY = 1u,   /* copy=False: refuse what needs a copy (BadStrideError for
                              a layout, BadTypeError for a dtype; the message names
                              copy=False) */
    PSB_IN_TABLE = 2u,     /* an integral table: dtypes kept (64-bit included), only
                              the byte order and the layout are adapted */
    PSB_IN_F64_WIDE = 4u,  /* int64/uint64 values beyond 32 bits become float64
                              instead of raising pixsum.OverflowError */
    PSB_IN_VOLUME = 8u,    /* a 3-D array is (D, H, W): no channel axis */
    PSB_IN_MERGE01 = 16u   /* a 4-D array's axes 0 and 1 must merge (N, C, H, W) */
};

/* The one place where an input argument becomes an array the library reads.
 * New reference to `obj` as an ndarray (sequences and buffer exporters
 * converted or viewed; a GPU array refused: UnsupportedError) that pixsum
 * views describe in place:
 *   - dtypes: bool is viewed as uint8 (no copy); int8 -> int16 and
 *     float16 -> float32 (exact); int64/uint64 -> int32 when every value fits,
 *     else uint32 when every value fits, else float64 with PSB_IN_F64_WIDE,
 *     else pixsum.OverflowError; big-endian -> native. Other dtypes:
 *     BadTypeError. With PSB_IN_TABLE only the byte order changes.
 *   - layout: an array whose pixels are not packed along a row (a.T,
 *     a[:, ::2], rgb[..., 0], a[:, ::-1]), broadcast, overlapping or unaligned
 *     becomes one packed C-order copy; row and slice strides (crops,
 *     a[::2], flips of rows) are read in place.
 * A conversion or layout copy happens once per call, into a temporary that
 * the returned reference owns. With PSB_IN_NO_COPY nothing is copied (bool
 * is still viewed as uint8). NULL with an exception set on failure. */
PyArrayObject *psb_input_array(PyObject *obj, const char *what, unsigned flags);

/* 1 if memory of `nd` axes (dims, byte strides, item size `es`) is what
 * psb_input_array() reads in place (PSB_IN_VOLUME and PSB_IN_MERGE01 of
 * `flags` apply; alignment is the caller's to check), 0 if it would copy it.
 * Used for GPU arrays too, whose copies their own library makes. */
int psb_layout_in_place(int nd, const npy_intp *dims, const npy_intp *strides, npy_intp es,
                        unsigned flags);

/* For `what` "image", "a", "b" or "mask" (the image arguments of every
 * function): psb_input_array(obj, what, 0), copies allowed. For any other
 * argument (tables, carry rows, weights): `obj` as an ndarray without
 * copying its memory or changing its dtype (an ndarray as is; buffer
 * exporters viewed; plain sequences converted). New reference, or NULL with
 * an exception set. New code should call psb_input_array() with its flags. */
PyArrayObject *psb_as_array(PyObject *obj, const char *what);

/* Describes array `a` as a view with `spatial` (2 or 3) spatial axes and an
 * optional trailing channel axis of 1..4. The view points at the array's own
 * memory with its own strides. Returns 1, or 0 with an exception set (shape,
 * dtype, read-only when `writable`, or pixels not packed along a row). */
int psb_view_of(PyArrayObject *a, int spatial, int writable, const char *what,
                pixsum_view *v);

/* As psb_view_of() for memory described by a pointer, a type, dims and byte
 * strides (used for GPU arrays, whose memory NumPy cannot wrap). */
int psb_view_raw(void *data, pixsum_type t, int nd, const npy_intp *dims,
                 const npy_intp *strides, int spatial, const char *what, pixsum_view *v);

/* Describes memory (pointer, type, dims, byte strides) as a batch of 2-D
 * images, one per slice of the view (depth = N): (N, H, W) or (N, H, W, C)
 * with 1..4 interleaved channels; with `channels_first`, (N, C, H, W) as N*C
 * single-channel images, which needs the N and C axes to merge (stride of N
 * = C x stride of C, or N or C of 1). Returns 1, or 0 with an exception set
 * (BadShapeError, BadStrideError). */
/* Reads a GPU array's descriptor (pointer as an int, pixsum dtype name, shape,
 * byte strides; a tuple) of min_nd..max_nd axes into a view with `spatial`
 * spatial axes. Returns 1, or 0 with an exception set (InvalidArgumentError,
 * BadTypeError, BadShapeError and psb_view_raw()'s). */
int psb_desc_view(PyObject *desc, int spatial, int min_nd, int max_nd, const char *what,
                  pixsum_view *v);

int psb_batch_view(void *data, pixsum_type t, int nd, const npy_intp *dims,
                   const npy_intp *strides, int channels_first, const char *what,
                   pixsum_view *v);

/* For integral() and integral_sq() without batch=True: refuses the shapes
 * that are stacks, not images ((N, H, W) with N > 4 read as channels, and
 * 4-D arrays), naming the keywords that read them. Returns 1, or 0 with
 * pixsum.BadShapeError set. */
int psb_check_unbatched(const char *name, int nd, const npy_intp *dims);

/* The output array: a new C-contiguous one of `shape` and *type when `out` is
 * NULL/None, else `out` itself after checking it is an ndarray of that shape
 * (and of dtype *type unless *type is NONE; *type then becomes out's type).
 * Returns a new reference or NULL with an exception set. */
PyArrayObject *psb_output(PyObject *out, int nd, const npy_intp *shape, pixsum_type *type,
                          const char *what);

/* Writes "(a, b, c)" for a shape into buf. */
void psb_shape_text(int nd, const npy_intp *dims, char *buf, size_t size);

/* A new context set from `o`; NULL with an exception set (unknown method,
 * bad thread count, no memory). Free with pixsum_ctx_free(). */
pixsum_ctx *psb_make_ctx(const psb_opts *o);

/* Applies `o` to an existing context. Returns 1, or 0 with an exception set. */
int psb_set_ctx(pixsum_ctx *ctx, const psb_opts *o);

static inline int psb_type_is_int(pixsum_type t)
{
    return t != PIXSUM_F32 && t != PIXSUM_F64 && t != PIXSUM_TYPE_NONE;
}

/* ---- histograms (hist.c) --------------------------------------------- */

/* Describes `a` for a histogram: all axes spatial except a trailing channel
 * axis (when `channels` and ndim >= 3, or ndim == 4); (N,) is one row.
 * Returns 1, or 0 with an exception set. */
int psb_hist_view(PyArrayObject *a, int channels, int writable, const char *what,
                  pixsum_view *v);

/* Reads an optional mask (None, or bool / uint8 of img's spatial shape) as a
 * u8 view in place; *keep holds the array (NULL for None; the caller
 * releases it). Returns 1, or 0 with an exception set. */
int psb_mask_view(PyObject *mask, const pixsum_view *img, PyArrayObject **keep,
                  pixsum_view *v);

/* A zeroed spec with histogram()'s bins (None or int >= 1) and range (None or
 * a finite pair lo < hi). Returns 1, or 0 with an exception set. */
int psb_parse_hist_spec(PyObject *bins_obj, PyObject *range_obj, pixsum_hist_spec *spec);

/* The bins + 1 bin edges pixsum_hist_edge(bins, lo, hi, i), i = 0..bins (the
 * last exactly hi), as a new float64 array; NULL with an exception set. */
PyObject *psb_edges_array(size_t bins, double lo, double hi);

/* Boxes (x, y, w, h) or (x, y, z, w, h, d), one or (N, 4) / (N, 6), as a
 * PyMem_Malloc'ed array (free with PyMem_Free); *spatial 2 or 3, *single for
 * one box given as a 1-D sequence. NULL with an exception set. (common.c) */
pixsum_box *psb_parse_boxes(PyObject *obj, size_t *n, int *spatial, int *single);

PyObject *psb_py_histogram(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_histogram2d(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_equalize(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_joint_stats(PyObject *self, PyObject *args);
PyObject *psb_py_hist_resolve(PyObject *self, PyObject *args);
PyObject *psb_py_hist_edges(PyObject *self, PyObject *args);
PyObject *psb_py_otsu(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_threshold_otsu(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_ihist_new(PyObject *self, PyObject *args, PyObject *kwargs); /* ihist.c */
PyObject *psb_py_ihist_query(PyObject *self, PyObject *args, PyObject *kwargs); /* ihist.c */
extern const char psb_histogram_doc[], psb_histogram2d_doc[], psb_equalize_doc[],
    psb_joint_stats_doc[], psb_hist_resolve_doc[], psb_hist_edges_doc[], psb_otsu_doc[],
    psb_threshold_otsu_doc[], psb_ihist_new_doc[], psb_ihist_query_doc[];

/* ---- local thresholds and normalisation (threshold.c) ------------------ */
PyObject *psb_py_threshold_local(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_normalize_local(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_cuda_local(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char psb_threshold_local_doc[], psb_normalize_local_doc[], psb_cuda_local_doc[];
#define PSB_THRESHOLD_METHODS                                                           \
    {"threshold_local", (PyCFunction)(void (*)(void))psb_py_threshold_local,            \
     METH_VARARGS | METH_KEYWORDS, psb_threshold_local_doc},                            \
    {"normalize_local", (PyCFunction)(void (*)(void))psb_py_normalize_local,            \
     METH_VARARGS | METH_KEYWORDS, psb_normalize_local_doc},                            \
    {"_cuda_local", (PyCFunction)(void (*)(void))psb_py_cuda_local,                     \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_local_doc},

#ifdef PSB_HAVE_HIST
#define PSB_HIST_METHODS                                                                \
    {"histogram", (PyCFunction)(void (*)(void))psb_py_histogram,                        \
     METH_VARARGS | METH_KEYWORDS, psb_histogram_doc},                                  \
    {"histogram2d", (PyCFunction)(void (*)(void))psb_py_histogram2d,                    \
     METH_VARARGS | METH_KEYWORDS, psb_histogram2d_doc},                                \
    {"equalize", (PyCFunction)(void (*)(void))psb_py_equalize,                          \
     METH_VARARGS | METH_KEYWORDS, psb_equalize_doc},                                   \
    {"_joint_stats", psb_py_joint_stats, METH_VARARGS, psb_joint_stats_doc},            \
    {"_hist_resolve", psb_py_hist_resolve, METH_VARARGS, psb_hist_resolve_doc},         \
    {"_hist_edges", psb_py_hist_edges, METH_VARARGS, psb_hist_edges_doc},              \
    {"otsu", (PyCFunction)(void (*)(void))psb_py_otsu, METH_VARARGS | METH_KEYWORDS,     \
     psb_otsu_doc},                                  \
    {"threshold_otsu", (PyCFunction)(void (*)(void))psb_py_threshold_otsu,              \
     METH_VARARGS | METH_KEYWORDS, psb_threshold_otsu_doc},                             \
    {"_ihist_new", (PyCFunction)(void (*)(void))psb_py_ihist_new,                       \
     METH_VARARGS | METH_KEYWORDS, psb_ihist_new_doc},                                  \
    {"_ihist_query", (PyCFunction)(void (*)(void))psb_py_ihist_query,                   \
     METH_VARARGS | METH_KEYWORDS, psb_ihist_query_doc},
#else
#define PSB_HIST_METHODS
#endif

/* ---- recognising GPU arrays (common.c) --------------------------------- */

/* Where an argument's memory is, as far as pixsum's bindings care. */
typedef enum psb_array_kind {
    PSB_HOST = 0,     /* NumPy arrays, sequences, buffers, CPU tensors */
    PSB_GPU_TORCH,    /* a PyTorch CUDA tensor */
    PSB_GPU_CUPY,     /* a CuPy ndarray */
    PSB_GPU_CAI,      /* another producer of __cuda_array_interface__ */
    PSB_GPU_DLPACK    /* only __dlpack__, with __dlpack_device__ naming CUDA memory */
} psb_array_kind;

/* The kind of `obj`. Never fails. The class of each type is found once
 * (from the type's own attributes) and cached, so a NumPy array costs one
 * check and a tensor one attribute read (is_cuda). */
psb_array_kind psb_array_kind_of(PyObject *obj);

/* True if `obj` is a GPU array (psb_array_kind_of() is not PSB_HOST). */
int psb_is_gpu_array(PyObject *obj);

/* ---- GPU arrays (gpu.c) ---------------------------------------------- */

/* integral(), integral_sq() and integral3d() as module.c parsed them. */
typedef struct psb_integral_args {
    const char *name;      /* "integral", "integral_sq" or "integral3d" */
    int spatial;           /* 2, or 3 for integral3d */
    int squared;           /* integral_sq: a plain and a squared table */
    int batch;             /* axis 0 counts independent 2-D images */
    int channels_first;    /* with batch: (N, C, H, W) read as N*C images */
    PyObject *dtype, *sq_dtype, *out, *out_sq; /* borrowed; NULL or None: not given */
    psb_opts opts;         /* method, wrap, padded (threads unused on the GPU) */
    int no_copy;           /* copy=False: a layout the view cannot describe is refused
                              instead of copied (with the array's own library) */
} psb_integral_args;

/* Reads batch= and channel_axis= (module.c) into a->batch and
 * a->channels_first: with batch, channel_axis None, -1 (interleaved channels)
 * or 1 (channels-first (N, C, H, W)); without batch, a 3-D image's channel
 * axis (0..2 or -3..-1) into *image_axis (2 when None). Returns 1, or 0 with
 * pixsum.InvalidArgumentError set naming `name`. */
int psb_batch_args(const char *name, int batch, PyObject *channel_axis,
                   psb_integral_args *a, int *image_axis);

/* Describes `arr` as the image or an output of a call (module.c): a
 * `spatial`-D image, or with a->batch a stack of 2-D images (N, H, W[, C]) or
 * (N, C, H, W) with a->channels_first; `writable` refuses read-only arrays.
 * Returns 1, or 0 with an exception set naming `what`. */
int psb_call_view(PyArrayObject *arr, const psb_integral_args *a, int spatial, int writable,
                  const char *what, pixsum_view *v);

/* The integral of a GPU array `image` of kind `kind` (psb_array_kind_of()):
 * for a PyTorch CUDA tensor or a CuPy array, read in C (pointer, shape,
 * strides, dtype, device, the caller's stream), the table type chosen by
 * pixsum_integral_type(), the result allocated with the input's library and
 * pixsum_cuda_integral*() enqueued on that stream; other producers go to
 * pixsum._gpu.dispatch() (see psb_gpu_dispatch()). `args`/`kwargs` are the
 * call's own, for that path. Returns the table (a tuple of two for
 * integral_sq), a new reference, or NULL with an exception set. */
PyObject *psb_gpu_integral(PyObject *image, psb_array_kind kind, const psb_integral_args *a,
                           PyObject *args, PyObject *kwargs);

/* 1 if the library was built with CUDA, else 0. */
int psb_have_cuda(void);

/* Runs pixsum.<name>(*args, **kwargs) for a GPU array through
 * pixsum._gpu.dispatch() (box queries and filters, histograms, the tilted
 * integral, and integrals of producers other than CuPy and PyTorch), which
 * reads the array's __cuda_array_interface__ (or DLPack capsule), allocates a
 * GPU result of the same kind and calls the _cuda_* entry points below.
 * Returns its result (new reference) or NULL. */
PyObject *psb_gpu_dispatch(const char *name, PyObject *args, PyObject *kwargs);

/* _core._cuda_integral(): the device-memory entry points of pixsum_cuda.h
 * over raw descriptions (pointer, dtype name, shape, byte strides). */
PyObject *psb_py_cuda_integral(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char psb_cuda_integral_doc[];

PyObject *psb_py_cuda_device_count(PyObject *self, PyObject *unused);
extern const char psb_cuda_device_count_doc[];

/* _core._cuda_histogram(), _cuda_hist_post(), _cuda_histogram2d(),
 * _cuda_equalize(): the device histogram entry points of pixsum_cuda.h over
 * raw descriptions, for pixsum/_gpu_hist.py. */
PyObject *psb_py_cuda_histogram(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_cuda_hist_post(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_cuda_histogram2d(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_cuda_equalize(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char psb_cuda_histogram_doc[], psb_cuda_hist_post_doc[],
    psb_cuda_histogram2d_doc[], psb_cuda_equalize_doc[];

#define PSB_GPU_METHODS                                                                 \
    {"cuda_device_count", psb_py_cuda_device_count, METH_NOARGS,                        \
     psb_cuda_device_count_doc},                                                        \
    {"_cuda_integral", (PyCFunction)(void (*)(void))psb_py_cuda_integral,               \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_integral_doc},                              \
    {"_cuda_histogram", (PyCFunction)(void (*)(void))psb_py_cuda_histogram,             \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_histogram_doc},                             \
    {"_cuda_hist_post", (PyCFunction)(void (*)(void))psb_py_cuda_hist_post,             \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_hist_post_doc},                             \
    {"_cuda_histogram2d", (PyCFunction)(void (*)(void))psb_py_cuda_histogram2d,         \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_histogram2d_doc},                           \
    {"_cuda_equalize", (PyCFunction)(void (*)(void))psb_py_cuda_equalize,               \
     METH_VARARGS | METH_KEYWORDS, psb_cuda_equalize_doc},                              \

/* ---- tiles of a grid (carry.c) ---------------------------------------- */

/* integral_tile(): pixsum_integral_carry_tile() on NumPy arrays;
 * _equalize_counts(): pixsum_equalize_counts() on NumPy arrays; _hist_finish():
 * pixsum_hist_cumulative() / pixsum_hist_relative() of given counts. */
PyObject *psb_py_integral_tile(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_equalize_counts(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *psb_py_hist_finish(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char psb_integral_tile_doc[], psb_equalize_counts_doc[], psb_hist_finish_doc[];

#ifdef PSB_HAVE_HIST
#define PSB_CARRY_HIST_METHODS                                                      \
    {"_equalize_counts", (PyCFunction)(void (*)(void))psb_py_equalize_counts,           \
     METH_VARARGS | METH_KEYWORDS, psb_equalize_counts_doc},                            \
    {"_hist_finish", (PyCFunction)(void (*)(void))psb_py_hist_finish,                   \
     METH_VARARGS | METH_KEYWORDS, psb_hist_finish_doc},
#else
#define PSB_CARRY_HIST_METHODS
#endif
#define PSB_CARRY_METHODS                                                               \
    {"integral_tile", (PyCFunction)(void (*)(void))psb_py_integral_tile,               \
     METH_VARARGS | METH_KEYWORDS, psb_integral_tile_doc},                              \
    PSB_CARRY_HIST_METHODS

#endif /* PIXSUM_BINDING_H */
