/*
 * module.c - pixsum._core, the CPython extension behind `import pixsum`.
 *
 * A thin C layer over the public C API (include/pixsum.h):
 *   - NumPy arrays are described to the library as pixsum_view structs that
 *     point at the arrays' own memory: any row and slice stride (crops, flips,
 *     every other row) is read in place, and `out=` arrays are written in
 *     place. Nothing is copied behind the caller's back; layouts the library
 *     cannot read in place (pixels not packed along a row, e.g. a transposed
 *     array) are refused with pixsum.BadStrideError instead of copied.
 *   - The GIL is released around every call into the library.
 *   - Each call builds its own pixsum_ctx (method, threads, wrap, padded), so
 *     calls from several Python threads never share a context.
 *   - Every C status becomes the matching pixsum.Error subclass (defined in
 *     pixsum/_errors.py) carrying the status code and the detail text.
 *
 * Array conventions (documented to users in the docstrings):
 *   2-D images:  (H, W) or (H, W, C) with 1..4 interleaved channels C
 *   3-D volumes: (D, H, W) or (D, H, W, C)
 *   boxes:       (x, y, w, h) for 2-D tables, (x, y, z, w, h, d) for 3-D
 *
 * The histogram and GPU bindings live in hist.c and gpu.c; this file holds the
 * shared helpers (declared in binding.h), the integral and box functions and
 * the module table.
 */
#define PSB_MAIN_FILE
#include "binding.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The tuple pixsum._errors.BY_STATUS: exception class per status code. */
static PyObject *errors_by_status;

/* ------------------------------------------------------------------------ */
/* Errors                                                                   */
/* ------------------------------------------------------------------------ */

/* Raises the pixsum.Error subclass of `status` with `message` and `detail`. */
static void set_error(int status, const char *message, const char *detail)
{
    PyObject *cls = NULL;
    if (errors_by_status && status > 0 && status < PyTuple_GET_SIZE(errors_by_status))
        cls = PyTuple_GET_ITEM(errors_by_status, status);
    else if (errors_by_status)
        cls = PyTuple_GET_ITEM(errors_by_status, 0);
    if (!cls) {
        PyErr_SetString(PyExc_RuntimeError, message);
        return;
    }
    PyObject *exc = PyObject_CallFunction(cls, "sis", message, status, detail);
    if (!exc)
        return; /* the constructor's own error stays set */
    PyErr_SetObject(cls, exc);
    Py_DECREF(exc);
}

void *psb_fail(int status, const char *fmt, ...)
{
    char text[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    set_error(status, text, text);
    return NULL;
}

void *psb_fail_library(int status, const char *what)
{
    char detail[600], text[768];
    snprintf(detail, sizeof detail, "%s", pixsum_last_error());
    if (detail[0])
        snprintf(text, sizeof text, "%s: %s: %s", what, pixsum_strerror(status), detail);
    else
        snprintf(text, sizeof text, "%s: %s", what, pixsum_strerror(status));
    set_error(status, text, detail);
    return NULL;
}

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

pixsum_type psb_type_of_descr(PyArray_Descr *d)
{
    if (!d || !PyArray_ISNBO(d->byteorder))
        return PIXSUM_TYPE_NONE;
    int size = (int)PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'u':
        return size == 1 ? PIXSUM_U8 : size == 2 ? PIXSUM_U16 : size == 4 ? PIXSUM_U32
             : size == 8 ? PIXSUM_U64 : PIXSUM_TYPE_NONE;
    case 'i':
        return size == 2 ? PIXSUM_I16 : size == 4 ? PIXSUM_I32 : size == 8 ? PIXSUM_I64
             : PIXSUM_TYPE_NONE;
    case 'f':
        return size == 4 ? PIXSUM_F32 : size == 8 ? PIXSUM_F64 : PIXSUM_TYPE_NONE;
    default:
        return PIXSUM_TYPE_NONE;
    }
}

/* Copies the str() of obj's attribute `attr` into buf; 0 if there is none. */
static int attr_text(PyObject *obj, const char *attr, char *buf, size_t size)
{
    PyObject *v = PyObject_GetAttrString(obj, attr);
    PyObject *t = v ? PyObject_Str(v) : NULL;
    const char *u = t ? PyUnicode_AsUTF8(t) : NULL;
    if (u)
        snprintf(buf, size, "%s", u);
    Py_XDECREF(t);
    Py_XDECREF(v);
    if (!u)
        PyErr_Clear();
    return u != NULL;
}

void psb_descr_text(PyArray_Descr *d, char *buf, size_t size)
{
    char name[64], str[64];
    if (!d) {
        snprintf(buf, size, "(none)");
        return;
    }
    if (!attr_text((PyObject *)d, "name", name, sizeof name))
        snprintf(name, sizeof name, "kind '%c'", d->kind);
    if (!attr_text((PyObject *)d, "str", str, sizeof str))
        snprintf(str, sizeof str, "%c%c%d", d->byteorder, d->kind, (int)PyDataType_ELSIZE(d));
    snprintf(buf, size, "%s ('%s'%s)", name, str,
             PyArray_ISNBO(d->byteorder) ? "" : ", non-native byte order");
}

void *psb_fail_dtype(const char *what, PyArray_Descr *d, const char *accepts)
{
    char text[160];
    psb_descr_text(d, text, sizeof text);
    return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s has dtype %s; %s", what, text,
                    accepts ? accepts
                            : "pixsum reads native-order uint8, uint16, int16, int32, uint32, "
                              "float32, float64 (and 64-bit tables)");
}

const char *psb_dtype_name(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return "uint8";
    case PIXSUM_U16: return "uint16";
    case PIXSUM_I16: return "int16";
    case PIXSUM_I32: return "int32";
    case PIXSUM_U32: return "uint32";
    case PIXSUM_F32: return "float32";
    case PIXSUM_F64: return "float64";
    case PIXSUM_U64: return "uint64";
    case PIXSUM_I64: return "int64";
    default: return "none";
    }
}

int psb_npy_of_type(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return NPY_UINT8;
    case PIXSUM_U16: return NPY_UINT16;
    case PIXSUM_I16: return NPY_INT16;
    case PIXSUM_I32: return NPY_INT32;
    case PIXSUM_U32: return NPY_UINT32;
    case PIXSUM_F32: return NPY_FLOAT32;
    case PIXSUM_F64: return NPY_FLOAT64;
    case PIXSUM_U64: return NPY_UINT64;
    case PIXSUM_I64: return NPY_INT64;
    default: return -1;
    }
}

int psb_dtype_arg(PyObject *obj, pixsum_type *type)
{
    if (obj == NULL || obj == Py_None) {
        *type = PIXSUM_TYPE_NONE;
        return 1;
    }
    PyArray_Descr *d = NULL;
    if (!PyArray_DescrConverter(obj, &d))
        return 0;
    *type = psb_type_of_descr(d);
    if (*type == PIXSUM_TYPE_NONE) {
        char text[160];
        psb_descr_text(d, text, sizeof text);
        psb_fail(PIXSUM_ERR_BAD_TYPE, "dtype %s is not one of pixsum's element types "
                 "(native-order uint8 uint16 int16 int32 uint32 uint64 int64 float32 float64)",
                 text);
        Py_DECREF(d);
        return 0;
    }
    Py_DECREF(d);
    return 1;
}

/* ------------------------------------------------------------------------ */
/* Arrays and views                                                         */
/* ------------------------------------------------------------------------ */

PyArrayObject *psb_as_array(PyObject *obj, const char *what)
{
    if (PyArray_Check(obj)) {
        Py_INCREF(obj);
        return (PyArrayObject *)obj;
    }
    if (psb_is_gpu_array(obj))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s is a GPU array (%s) but the call's "
                        "main array is in host memory; pass GPU arrays together (e.g. the "
                        "image and its mask both on the GPU) or copy this one to the host",
                        what, Py_TYPE(obj)->tp_name);
    /* Objects exporting the buffer protocol or __array_interface__ become a
     * view of their memory; plain sequences are converted (they have no
     * memory to share). */
    PyObject *a = PyArray_FromAny(obj, NULL, 0, 0, 0, NULL);
    if (!a) {
        PyErr_Clear();
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: cannot read a %s as an array", what,
                        Py_TYPE(obj)->tp_name);
    }
    return (PyArrayObject *)a;
}

void psb_shape_text(int nd, const npy_intp *dims, char *buf, size_t size)
{
    size_t used = (size_t)snprintf(buf, size, "(");
    for (int i = 0; i < nd && used < size; i++)
        used += (size_t)snprintf(buf + used, size - used, i ? ", %zd" : "%zd", (Py_ssize_t)dims[i]);
    if (used < size)
        snprintf(buf + used, size - used, nd == 1 ? ",)" : ")");
}

int psb_view_raw(void *data, pixsum_type t, int nd, const npy_intp *dims,
                 const npy_intp *strides, int spatial, const char *what, pixsum_view *v)
{
    if (nd != spatial && nd != spatial + 1) {
        char shape[96];
        psb_shape_text(nd, dims, shape, sizeof shape);
        psb_fail(PIXSUM_ERR_BAD_SHAPE,
                 spatial == 2 ? "%s must be (H, W) or (H, W, C), got shape %s"
                              : "%s must be (D, H, W) or (D, H, W, C), got shape %s",
                 what, shape);
        return 0;
    }
    size_t es = pixsum_type_size(t);
    size_t ch = nd == spatial + 1 ? (size_t)dims[nd - 1] : 1;
    size_t w = (size_t)dims[spatial - 1], h = (size_t)dims[spatial - 2];
    size_t d = spatial == 3 ? (size_t)dims[0] : 1;
    if (nd == spatial + 1 && (ch < 1 || ch > 4)) {
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s has %zu channels on its last axis; pixsum handles "
                 "1..4 interleaved channels", what, ch);
        return 0;
    }
    if (w == 0 || h == 0 || d == 0) {
        char shape[96];
        psb_shape_text(nd, dims, shape, sizeof shape);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s of shape %s is empty", what, shape);
        return 0;
    }
    /* Pixels must be packed along a row: channel stride = item size, column
     * stride = one pixel. Rows and slices may be anywhere (sizes of 1 make
     * their stride meaningless, as in NumPy). */
    if ((ch > 1 && (size_t)strides[nd - 1] != es) ||
        (w > 1 && strides[spatial - 1] != (npy_intp)(ch * es))) {
        psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: its pixels are not packed along a row "
                 "(column stride %zd bytes, a pixel is %zu bytes), so it cannot be read in "
                 "place; pass a contiguous copy (e.g. numpy.ascontiguousarray(%s))",
                 what, (Py_ssize_t)strides[spatial - 1], ch * es, what);
        return 0;
    }
    ptrdiff_t row_bytes = (ptrdiff_t)(w * ch * es);
    ptrdiff_t rs = h > 1 ? (ptrdiff_t)strides[spatial - 2] : row_bytes;
    ptrdiff_t ss = (spatial == 3 && d > 1) ? (ptrdiff_t)strides[0]
                                           : (ptrdiff_t)h * (rs < 0 ? -rs : rs);
    /* Filled field by field: pixsum_view_3d() reads a stride of 0 as "packed",
     * but a NumPy stride of 0 (a broadcast view) must reach the library as 0,
     * which it refuses, instead of being read as a packed buffer it is not. */
    v->data = data;
    v->type = t;
    v->width = w;
    v->height = h;
    v->depth = d;
    v->channels = ch;
    v->row_stride = rs;
    v->slice_stride = ss;
    return 1;
}

int psb_view_of(PyArrayObject *a, int spatial, int writable, const char *what, pixsum_view *v)
{
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(a));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype(what, PyArray_DESCR(a), NULL);
        return 0;
    }
    if (writable && !PyArray_ISWRITEABLE(a)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s is read-only", what);
        return 0;
    }
    return psb_view_raw(PyArray_DATA(a), t, PyArray_NDIM(a), PyArray_DIMS(a),
                        PyArray_STRIDES(a), spatial, what, v);
}

PyArrayObject *psb_output(PyObject *out, int nd, const npy_intp *shape, pixsum_type *type,
                          const char *what)
{
    if (out == NULL || out == Py_None) {
        PyObject *a = PyArray_SimpleNew(nd, (npy_intp *)shape, psb_npy_of_type(*type));
        return (PyArrayObject *)a;
    }
    if (!PyArray_Check(out))
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s must be a numpy.ndarray, got %s", what,
                        Py_TYPE(out)->tp_name);
    PyArrayObject *a = (PyArrayObject *)out;
    int same = PyArray_NDIM(a) == nd;
    for (int i = 0; same && i < nd; i++)
        same = PyArray_DIMS(a)[i] == shape[i];
    if (!same) {
        char got[96], want[96];
        psb_shape_text(PyArray_NDIM(a), PyArray_DIMS(a), got, sizeof got);
        psb_shape_text(nd, shape, want, sizeof want);
        return psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s has shape %s, expected %s", what, got, want);
    }
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(a));
    if (t == PIXSUM_TYPE_NONE)
        return psb_fail_dtype(what, PyArray_DESCR(a), NULL);
    if (*type != PIXSUM_TYPE_NONE && t != *type)
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s has dtype %s but dtype=%s was asked", what,
                        psb_dtype_name(t), psb_dtype_name(*type));
    *type = t;
    Py_INCREF(out);
    return a;
}

int psb_set_ctx(pixsum_ctx *ctx, const psb_opts *o)
{
    int st = pixsum_ctx_set_method(ctx, o->method ? o->method : "auto");
    if (st != PIXSUM_OK) {
        psb_fail(st, "unknown method '%s'; pixsum.methods() lists them", o->method);
        return 0;
    }
    if (o->threads < 0 || o->threads > 65536) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "threads must be 0 (all cores) or a positive "
                 "count, got %zd", o->threads);
        return 0;
    }
    if ((st = pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, (intptr_t)o->threads)) != PIXSUM_OK ||
        (st = pixsum_ctx_set(ctx, PIXSUM_PARAM_WRAP, o->wrap ? 1 : 0)) != PIXSUM_OK ||
        (st = pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, o->padded ? 1 : 0)) != PIXSUM_OK) {
        psb_fail_library(st, "context");
        return 0;
    }
    return 1;
}

pixsum_ctx *psb_make_ctx(const psb_opts *o)
{
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx) {
        PyErr_NoMemory();
        return NULL;
    }
    if (!psb_set_ctx(ctx, o)) {
        pixsum_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

/* Output shape of a table: the input's dims, plus one on the spatial axes
 * when padded. */
static void table_shape(PyArrayObject *in, int spatial, int pad, npy_intp *shape)
{
    int nd = PyArray_NDIM(in);
    for (int i = 0; i < nd; i++)
        shape[i] = PyArray_DIMS(in)[i] + (i < spatial ? pad : 0);
}

/* ------------------------------------------------------------------------ */
/* Integral images                                                          */
/* ------------------------------------------------------------------------ */

enum integral_kind { KIND_PLAIN, KIND_SQ, KIND_TILTED, KIND_VOLUME };

/* Writes zeros over slice 0 of a (2, H, W[, C]) table view of depth 2. */
static void zero_slice0(const pixsum_view *t)
{
    size_t row = t->width * t->channels * pixsum_type_size(t->type);
    for (size_t y = 0; y < t->height; y++)
        memset((char *)t->data + (ptrdiff_t)y * t->row_stride, 0, row);
}

/* The view of a carry row: an array of the shape of one image row, (W,) or
 * (W, C) for an image of shape (H, W) or (H, W, C), read as a table of one
 * row (a contiguous copy when it is strided: it is small and only read).
 * Returns 1, or 0 with an exception set. `keep` receives the array (a new
 * reference, to release after the call). */
static int carry_view_of(PyObject *obj, PyArrayObject *image, const char *what,
                         PyArrayObject **keep, pixsum_view *v)
{
    PyArrayObject *given = psb_as_array(obj, what);
    if (!given)
        return 0;
    PyArrayObject *a = PyArray_GETCONTIGUOUS(given);
    Py_DECREF(given);
    if (!a)
        return 0;
    *keep = a;
    int nd = PyArray_NDIM(a), ind = PyArray_NDIM(image);
    int same = nd == ind - 1 && nd >= 1 && nd <= 2;
    for (int i = 0; same && i < nd; i++)
        same = PyArray_DIMS(a)[i] == PyArray_DIMS(image)[i + 1];
    if (!same) {
        char got[96], img[96];
        psb_shape_text(nd, PyArray_DIMS(a), got, sizeof got);
        psb_shape_text(ind, PyArray_DIMS(image), img, sizeof img);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s must have the shape of one image row (the image "
                 "is %s), got %s", what, img, got);
        return 0;
    }
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(a));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype(what, PyArray_DESCR(a), "tables are uint32, uint64, int64, float32 or "
                                               "float64");
        return 0;
    }
    npy_intp dims[3] = {1, 1, 1}, strides[3] = {0, 0, 0};
    for (int i = 0; i < nd; i++) {
        dims[i + 1] = PyArray_DIMS(a)[i];
        strides[i + 1] = PyArray_STRIDES(a)[i];
    }
    return psb_view_raw(PyArray_DATA(a), t, nd + 1, dims, strides, 2, what, v);
}

/* The shared body of integral(), integral_sq(), integral_tilted() and
 * integral3d(). Returns a new reference (an array, or a tuple for KIND_SQ). */

/* The image's dtype has no integral table (int64, uint64): one message for
 * every function built on tables. Returns NULL with pixsum.BadTypeError set. */
static void *fail_not_integral_input(const char *name, pixsum_type t)
{
    return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: image dtype %s is not an input type of integral "
                    "tables (uint8 uint16 int16 int32 uint32 float32 float64)", name,
                    psb_dtype_name(t));
}
static PyObject *integral_common(enum integral_kind kind, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"image", "dtype", "sq_dtype", "method", "threads", "wrap",
                             "padded", "out", "out_sq", "carry", "carry_sq", NULL};
    static char *kwlist_plain[] = {"image", "dtype", "method", "threads", "wrap", "padded",
                                   "out", "carry", NULL};
    static char *kwlist_volume[] = {"image", "dtype", "method", "threads", "wrap", "padded",
                                    "out", NULL};
    static char *kwlist_tilted[] = {"image", "dtype", "method", "threads", "wrap", "out", NULL};
    const char *names[] = {"integral", "integral_sq", "integral_tilted", "integral3d"};
    const char *name = names[kind];
    PyObject *image = NULL, *dtype_obj = NULL, *sq_dtype_obj = NULL, *out = NULL,
             *out_sq = NULL, *carry = NULL, *carry_sq = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int ok;
    if (kind == KIND_SQ)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOznppOOOO:integral_sq", kwlist,
                                         &image, &dtype_obj, &sq_dtype_obj, &o.method,
                                         &o.threads, &o.wrap, &o.padded, &out, &out_sq,
                                         &carry, &carry_sq);
    else if (kind == KIND_TILTED)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznpO:integral_tilted",
                                         kwlist_tilted, &image, &dtype_obj, &o.method,
                                         &o.threads, &o.wrap, &out);
    else if (kind == KIND_VOLUME)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznppO:integral3d", kwlist_volume,
                                         &image, &dtype_obj, &o.method, &o.threads, &o.wrap,
                                         &o.padded, &out);
    else
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznppOO:integral", kwlist_plain,
                                         &image, &dtype_obj, &o.method, &o.threads, &o.wrap,
                                         &o.padded, &out, &carry);
    if (!ok)
        return NULL;
    if (carry == Py_None)
        carry = NULL;
    if (carry_sq == Py_None)
        carry_sq = NULL;
    if (psb_is_gpu_array(image)) {
        if (carry || carry_sq)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: carry rows are taken on the CPU "
                            "only; copy the band to the host", name);
        return psb_gpu_dispatch(name, args, kwargs);
    }

    pixsum_type type = PIXSUM_TYPE_NONE, sq_type = PIXSUM_TYPE_NONE;
    if (!psb_dtype_arg(dtype_obj, &type) || !psb_dtype_arg(sq_dtype_obj, &sq_type))
        return NULL;
    if (kind == KIND_TILTED)
        o.padded = 1; /* the tilted table is always (H+1) x (W+1) */
    int spatial = kind == KIND_VOLUME ? 3 : 2;

    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *res = NULL, *res_sq = NULL, *keep_carry = NULL, *keep_carry_sq = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vout, vsq, vcarry, vcarry_sq;
    if (!psb_view_of(in, spatial, 0, "image", &vin))
        goto done;
    if ((carry && !carry_view_of(carry, in, "carry", &keep_carry, &vcarry)) ||
        (carry_sq && !carry_view_of(carry_sq, in, "carry_sq", &keep_carry_sq, &vcarry_sq)))
        goto done;
    /* a continued table keeps its carry's type */
    if (carry && type == PIXSUM_TYPE_NONE && (out == NULL || out == Py_None))
        type = vcarry.type;
    if (carry_sq && sq_type == PIXSUM_TYPE_NONE && (out_sq == NULL || out_sq == Py_None))
        sq_type = vcarry_sq.type;
    size_t count = vin.width * vin.height * vin.depth;
    if (type == PIXSUM_TYPE_NONE && (out == NULL || out == Py_None))
        type = pixsum_integral_type(vin.type, count, 0);
    if (kind == KIND_SQ && sq_type == PIXSUM_TYPE_NONE && (out_sq == NULL || out_sq == Py_None))
        sq_type = pixsum_integral_type(vin.type, count, 1);
    if ((type == PIXSUM_TYPE_NONE && (out == NULL || out == Py_None))) {
        fail_not_integral_input(name, vin.type);
        goto done;
    }

    npy_intp shape[NPY_MAXDIMS];
    int nd = PyArray_NDIM(in);
    table_shape(in, spatial, o.padded ? 1 : 0, shape);
    /* A padded volume of one slice still gets its leading zero slice. */
    int lone_slice = kind == KIND_VOLUME && o.padded && vin.depth == 1;
    if (lone_slice)
        shape[0] = 2;
    if (!(res = psb_output(out, nd, shape, &type, "out")))
        goto done;
    if (kind == KIND_SQ && !(res_sq = psb_output(out_sq, nd, shape, &sq_type, "out_sq")))
        goto done;
    if (!psb_view_of(res, spatial, 1, "out", &vout) ||
        (res_sq && !psb_view_of(res_sq, spatial, 1, "out_sq", &vsq)))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;

    pixsum_view vout_run = vout;
    if (lone_slice) {
        /* compute the 2-D padded table into slice 1 */
        vout_run.data = (char *)vout.data + vout.slice_stride;
        vout_run.depth = 1;
    }
    int st;
    Py_BEGIN_ALLOW_THREADS
    if (carry || carry_sq) /* kind PLAIN or SQ */
        st = pixsum_integral_carry(ctx, &vin, &vout, carry ? &vcarry : NULL,
                                   kind == KIND_SQ ? &vsq : NULL, carry_sq ? &vcarry_sq : NULL);
    else if (kind == KIND_SQ)
        st = pixsum_integral_sq(ctx, &vin, &vout, &vsq);
    else if (kind == KIND_TILTED)
        st = pixsum_integral_tilted(ctx, &vin, &vout);
    else
        st = pixsum_integral(ctx, &vin, &vout_run);
    if (st == PIXSUM_OK && lone_slice)
        zero_slice0(&vout);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, name);
        goto done;
    }
    if (kind == KIND_SQ)
        result = PyTuple_Pack(2, (PyObject *)res, (PyObject *)res_sq);
    else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(res_sq);
    Py_XDECREF(keep_carry);
    Py_XDECREF(keep_carry_sq);
    Py_DECREF(in);
    return result;
}

PyDoc_STRVAR(integral_doc,
"integral(image, *, dtype=None, method='auto', threads=0, wrap=False, padded=False,\n"
"         out=None, carry=None)\n"
"--\n\n"
"Integral image (summed-area table) of a 2-D image.\n\n"
"image: array of shape (H, W) or (H, W, C) with 1..4 interleaved channels, dtype\n"
"  uint8, uint16, int16, int32, uint32, float32 or float64. Any row stride\n"
"  (crops, flips, every other row) is read in place, without a copy.\n"
"dtype: element type of the table. None picks one that cannot overflow for this\n"
"  image size: uint32 (small unsigned images), uint64, int64 (signed) or float64.\n"
"  A narrower type that could overflow raises pixsum.OverflowError unless\n"
"  wrap=True.\n"
"method: 'auto' or a method name from pixsum.methods() (e.g. 'serial.2wh').\n"
"threads: CPU threads for threaded methods; 0 = all cores.\n"
"wrap: modular integer arithmetic: no overflow refusal; every box sum whose true\n"
"  value fits the dtype is still exact.\n"
"padded: add a leading row and column of zeros (OpenCV layout, shape\n"
"  (H+1, W+1[, C])); otherwise the table is inclusive: T[y, x] = image[:y+1, :x+1].sum().\n"
"out: an existing array to write into (right shape; its dtype is used when dtype\n"
"  is None). It is written in place and returned.\n"
"carry: for an image processed in bands, the table row just above this band\n"
"  (the last row of the band above's table), of shape (W,) or (W, C). Every row\n"
"  of the result then includes it, so the bands' tables stacked equal the\n"
"  whole image's table (bit for bit on integers; on floats too with one\n"
"  thread). The table keeps the carry's dtype when dtype is None. Inclusive\n"
"  tables only (not padded); CPU arrays only.\n\n"
"Returns the table as a NumPy array. GPU arrays (__cuda_array_interface__ or\n"
"__dlpack__) run on the CUDA backend and return a GPU array of the same kind.\n"
"The GIL is released while the table is computed.\n"
"Raises a pixsum.Error subclass (BadTypeError, OverflowError, ...) on bad input.");

static PyObject *py_integral(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return integral_common(KIND_PLAIN, args, kwargs);
}

PyDoc_STRVAR(integral_sq_doc,
"integral_sq(image, *, dtype=None, sq_dtype=None, method='auto', threads=0,\n"
"            wrap=False, padded=False, out=None, out_sq=None, carry=None,\n"
"            carry_sq=None)\n"
"--\n\n"
"Integral image and integral of squares of a 2-D image, in one pass.\n\n"
"Arguments as integral(); sq_dtype is the type of the squared table (None: uint64\n"
"for integer images while it cannot overflow, else float64), out_sq an\n"
"existing array for it, and carry / carry_sq the rows above a band for each\n"
"table (give both when both tables continue a band above). Returns the tuple (table, squared_table); together they\n"
"give box means and variances (see box_var).");

static PyObject *py_integral_sq(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return integral_common(KIND_SQ, args, kwargs);
}

PyDoc_STRVAR(integral_tilted_doc,
"integral_tilted(image, *, dtype=None, method='auto', threads=0, wrap=False, out=None)\n"
"--\n\n"
"OpenCV's 45-degree tilted integral of a 2-D image:\n"
"  T[Y, X] = sum of image[y, x] over y < Y and |x - X + 1| <= Y - y - 1.\n\n"
"The result always has the padded shape (H+1, W+1[, C]). Other arguments as\n"
"integral(). GPU arrays are refused (pixsum.UnsupportedError): the CUDA backend\n"
"has no tilted method; copy the image to the host.");

static PyObject *py_integral_tilted(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return integral_common(KIND_TILTED, args, kwargs);
}

PyDoc_STRVAR(integral3d_doc,
"integral3d(volume, *, dtype=None, method='auto', threads=0, wrap=False,\n"
"           padded=False, out=None)\n"
"--\n\n"
"Integral volume of a 3-D array of shape (D, H, W) or (D, H, W, C):\n"
"  T[z, y, x] = volume[:z+1, :y+1, :x+1].sum()  (per channel).\n\n"
"padded adds a leading slice, row and column of zeros: shape (D+1, H+1, W+1[, C]).\n"
"Any slice and row stride is read in place. Other arguments as integral().");

static PyObject *py_integral3d(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return integral_common(KIND_VOLUME, args, kwargs);
}

/* ------------------------------------------------------------------------ */
/* Box queries                                                              */
/* ------------------------------------------------------------------------ */

/* Converts `obj` to an array of pixsum_box. *spatial becomes 2 for (x, y, w, h)
 * boxes and 3 for (x, y, z, w, h, d); *single is set for one box given as a
 * 1-D sequence. Returns a PyMem_Malloc'ed array (free with PyMem_Free) or NULL
 * with an exception set. */
pixsum_box *psb_parse_boxes(PyObject *obj, size_t *n, int *spatial, int *single)
{
    PyArrayObject *raw = psb_as_array(obj, "boxes");
    if (!raw)
        return NULL;
    char kind = PyArray_DESCR(raw)->kind;
    if (kind != 'i' && kind != 'u' && !(kind == 'b' && PyArray_SIZE(raw) == 0)) {
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "boxes must be integers (x, y, w, h) or "
                        "(x, y, z, w, h, d)");
    }
    int nd = PyArray_NDIM(raw);
    npy_intp k = nd ? PyArray_DIMS(raw)[nd - 1] : 0;
    if ((nd != 1 && nd != 2) || (k != 4 && k != 6)) {
        char shape[96];
        psb_shape_text(nd, PyArray_DIMS(raw), shape, sizeof shape);
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_SHAPE, "boxes must have shape (4,), (6,), (N, 4) or "
                        "(N, 6), got %s", shape);
    }
    PyArrayObject *b = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)raw, PyArray_DescrFromType(NPY_INT64), 0, 0,
        NPY_ARRAY_CARRAY | NPY_ARRAY_FORCECAST, NULL);
    /* uint64 values above INT64_MAX would turn negative here and be refused
     * below as out of range, which they are. */
    Py_DECREF(raw);
    if (!b)
        return NULL;
    *single = nd == 1;
    *spatial = k == 4 ? 2 : 3;
    *n = nd == 1 ? 1 : (size_t)PyArray_DIMS(b)[0];
    pixsum_box *boxes = PyMem_Malloc((*n ? *n : 1) * sizeof *boxes);
    if (!boxes) {
        Py_DECREF(b);
        PyErr_NoMemory();
        return NULL;
    }
    const int64_t *v = PyArray_DATA(b);
    for (size_t i = 0; i < *n; i++, v += k) {
        for (int j = 0; j < k; j++) {
            if (v[j] < 0) {
                Py_DECREF(b);
                PyMem_Free(boxes);
                return psb_fail(PIXSUM_ERR_OUT_OF_RANGE, "box %zu has a negative entry "
                                "(%lld)", i, (long long)v[j]);
            }
        }
        if (k == 4)
            boxes[i] = (pixsum_box){(size_t)v[0], (size_t)v[1], 0, (size_t)v[2],
                                    (size_t)v[3], 1};
        else
            boxes[i] = (pixsum_box){(size_t)v[0], (size_t)v[1], (size_t)v[2],
                                    (size_t)v[3], (size_t)v[4], (size_t)v[5]};
    }
    Py_DECREF(b);
    return boxes;
}

enum box_kind { BOX_SUM, BOX_MEAN, BOX_VAR };

/* Shared body of box_sum(), box_mean() and box_var(). */
static PyObject *box_common(enum box_kind kind, PyObject *args, PyObject *kwargs)
{
    static char *kw_one[] = {"table", "boxes", "padded", NULL};
    static char *kw_two[] = {"table", "sq_table", "boxes", "padded", NULL};
    const char *names[] = {"box_sum", "box_mean", "box_var"};
    PyObject *table_obj = NULL, *sq_obj = NULL, *boxes_obj = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int ok = kind == BOX_VAR
                 ? PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$p:box_var", kw_two,
                                               &table_obj, &sq_obj, &boxes_obj, &o.padded)
                 : PyArg_ParseTupleAndKeywords(args, kwargs,
                                               kind == BOX_SUM ? "OO|$p:box_sum"
                                                               : "OO|$p:box_mean",
                                               kw_one, &table_obj, &boxes_obj, &o.padded);
    if (!ok)
        return NULL;
    if (psb_is_gpu_array(table_obj) || (sq_obj && psb_is_gpu_array(sq_obj)))
        return psb_gpu_dispatch(names[kind], args, kwargs);
    size_t n = 0;
    int spatial = 2, single = 0;
    pixsum_box *boxes = psb_parse_boxes(boxes_obj, &n, &spatial, &single);
    if (!boxes)
        return NULL;
    PyArrayObject *table = NULL, *sq = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vt, vq;
    if (!(table = psb_as_array(table_obj, "table")) ||
        !psb_view_of(table, spatial, 0, "table", &vt))
        goto done;
    if (kind == BOX_VAR && (!(sq = psb_as_array(sq_obj, "sq_table")) ||
                            !psb_view_of(sq, spatial, 0, "sq_table", &vq)))
        goto done;
    int has_channels = PyArray_NDIM(table) == spatial + 1;
    npy_intp shape[2];
    int nd = 0;
    if (!single)
        shape[nd++] = (npy_intp)n;
    if (has_channels)
        shape[nd++] = (npy_intp)vt.channels;
    int npy = kind == BOX_SUM ? psb_npy_of_type(vt.type) : NPY_FLOAT64;
    if (!(res = (PyArrayObject *)PyArray_SimpleNew(nd, shape, npy)))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    if (kind == BOX_SUM)
        st = pixsum_box_sums(ctx, &vt, boxes, n, PyArray_DATA(res));
    else if (kind == BOX_MEAN)
        st = pixsum_box_stats(ctx, &vt, NULL, boxes, n, PyArray_DATA(res), NULL);
    else
        st = pixsum_box_stats(ctx, &vt, &vq, boxes, n, NULL, PyArray_DATA(res));
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, names[kind]);
        goto done;
    }
    result = nd == 0 ? PyArray_Return(res) : (PyObject *)res;
    res = NULL;
done:
    pixsum_ctx_free(ctx);
    PyMem_Free(boxes);
    Py_XDECREF(res);
    Py_XDECREF(table);
    Py_XDECREF(sq);
    return result;
}

PyDoc_STRVAR(box_sum_doc,
"box_sum(table, boxes, *, padded=False)\n"
"--\n\n"
"Sums of boxes read from an integral table with the 4-corner (2-D) or 8-corner\n"
"(3-D) formula.\n\n"
"table: a table from integral() / integral3d() (padded=True if it was made with\n"
"  padded=True).\n"
"boxes: integers (x, y, w, h) for a 2-D table or (x, y, z, w, h, d) for a 3-D\n"
"  one, covering columns [x, x+w), rows [y, y+h), slices [z, z+d); one box of\n"
"  shape (4,)/(6,) or N boxes of shape (N, 4)/(N, 6).\n\n"
"Returns the sums in the table's dtype: shape (N,) or (N, C) for N boxes, a\n"
"scalar or (C,) for one box. Integer tables made with wrap=True still give exact\n"
"sums for boxes whose true sum fits the dtype. Raises pixsum.OutOfRangeError for\n"
"a box outside the image and pixsum.BadShapeError for an empty box.\n\n"
"GPU tables (CuPy, PyTorch): computed on the device with the array library, on\n"
"the caller's stream, identical to the CPU's results; one box gives a 0-d (or\n"
"(C,)) GPU array, not a NumPy scalar. Boxes may be host sequences (checked on\n"
"the host, then copied to the device) or GPU integer arrays (checked on the\n"
"device: one synchronisation).");

static PyObject *py_box_sum(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return box_common(BOX_SUM, args, kwargs);
}

PyDoc_STRVAR(box_mean_doc,
"box_mean(table, boxes, *, padded=False)\n"
"--\n\n"
"Means of boxes (float64) from an integral table; arguments and result shape as\n"
"box_sum() (GPU tables too; identical to the CPU's means).");

static PyObject *py_box_mean(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return box_common(BOX_MEAN, args, kwargs);
}

PyDoc_STRVAR(box_var_doc,
"box_var(table, sq_table, boxes, *, padded=False)\n"
"--\n\n"
"Population variances of boxes (float64) from the two tables of integral_sq().\n\n"
"Integer tables are combined exactly (128-bit arithmetic), so a variance is never\n"
"negative and exact up to the final division; float tables clamp rounding below\n"
"zero to zero. Boxes and result shape as box_sum().\n\n"
"GPU tables: integer tables are combined exactly in 64-bit integers where\n"
"n * sum_sq and sum^2 fit in 63 bits (identical to the CPU's 128-bit result;\n"
"e.g. every uint8 box up to 11.9 million pixels, uint16 up to 46340), else in\n"
"float64 as q / n - mean^2 clamped at 0 (the CPU stays exact there).");

static PyObject *py_box_var(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return box_common(BOX_VAR, args, kwargs);
}

/* ------------------------------------------------------------------------ */
/* Box filter                                                               */
/* ------------------------------------------------------------------------ */

/* Reads the `size` argument: an int or a pair (kh, kw), each >= 1. */
static int parse_size(PyObject *obj, size_t *kh, size_t *kw)
{
    Py_ssize_t a, b;
    if (PyLong_Check(obj)) {
        a = b = PyLong_AsSsize_t(obj);
    } else if (PySequence_Check(obj) && PySequence_Size(obj) == 2) {
        PyObject *o0 = PySequence_GetItem(obj, 0), *o1 = PySequence_GetItem(obj, 1);
        a = o0 ? PyLong_AsSsize_t(o0) : -1;
        b = o1 ? PyLong_AsSsize_t(o1) : -1;
        Py_XDECREF(o0);
        Py_XDECREF(o1);
    } else {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "size must be an int or a pair (height, width)");
        return 0;
    }
    if (PyErr_Occurred())
        PyErr_Clear();
    if (a < 1 || b < 1) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "window size must be integers >= 1");
        return 0;
    }
    *kh = (size_t)a;
    *kw = (size_t)b;
    return 1;
}

PyDoc_STRVAR(box_filter_doc,
"box_filter(image, size, *, normalize=True, mode='same', dtype=None,\n"
"           method='auto', threads=0, out=None, border=None, stat=None, cval=0.0)\n"
"--\n\n"
"Box (moving-window) filter of a 2-D image: the library's streamed\n"
"pixsum_box_filter(), which reads the image once and writes the result once;\n"
"the cost per pixel does not depend on the window size.\n\n"
"image: (H, W) or (H, W, C) with C <= 4; uint8 uint16 int16 int32 uint32\n"
"  float32 float64; any row stride.\n"
"size: window height and width, an int or a pair (kh, kw). The window of\n"
"  pixel (y, x) covers rows y - kh//2 .. y - kh//2 + kh - 1 (likewise\n"
"  columns): OpenCV's default anchor.\n"
"normalize: True gives window means, False window sums (when stat is None).\n"
"stat: 'sum', 'mean', 'var' (population variance) or 'std'; overrides\n"
"  normalize.\n"
"mode / border: what lies outside the image (border wins when both are given):\n"
"  'same' or 'shrink' (default): windows cut at the image, statistics over\n"
"  the pixels inside; 'valid': only windows fully inside, shape\n"
"  (H - kh + 1, W - kw + 1[, C]); 'reflect101' (OpenCV's default,\n"
"  gfedcb|abcdefgh|gfedcba), 'reflect' (cba|abcdefgh|hgf), 'replicate'\n"
"  (also 'edge'), 'constant' (the value cval).\n"
"dtype: result type. Sums: default the narrowest integer type that cannot\n"
"  overflow for one window (uint32/uint64/int64), float64 for float images;\n"
"  any integer type that cannot overflow, float32 or float64. Means: float64\n"
"  (default) or float32, or the image's own type for uint8/uint16 images (the\n"
"  exact mean rounded to nearest, ties to even; cv2.blur's result for odd\n"
"  windows). var/std: float64 (default) or float32.\n"
"method: 'auto' (default), 'box.stream' (one thread) or 'box.omp' (bands of\n"
"  rows over `threads` threads, 0 = all cores).\n"
"out: an existing array to write into.\n\n"
"Integer sums are exact; integer variances are exact up to the final\n"
"division. The GIL is released during the computation.\n\n"
"GPU images (CuPy, PyTorch) take the GPU path (sum and mean, modes 'same' and\n"
"'valid' only): the padded table is computed on the device\n"
"(pixsum_cuda_integral) and the window sums taken on the caller's stream;\n"
"integer results and means of integer images equal the CPU's; out= must be\n"
"a GPU array. PyTorch without the unsigned dtype returns int64 sums.");

/* Parses the statistic name of box_filter(stat=...). */
static int parse_box_stat(const char *name, pixsum_box_stat *stat)
{
    static const char *const names[] = {"sum", "mean", "var", "std"};
    for (int i = 0; i < 4; i++)
        if (strcmp(name, names[i]) == 0) {
            *stat = (pixsum_box_stat)i;
            return 1;
        }
    psb_fail(PIXSUM_ERR_INVALID_ARG, "stat must be 'sum', 'mean', 'var' or 'std', got '%s'",
             name);
    return 0;
}

/* Parses mode= / border=: 'same' is today's 'shrink'. */
static int parse_box_border(const char *name, pixsum_border *border)
{
    if (strcmp(name, "same") == 0) {
        *border = PIXSUM_BORDER_SHRINK;
        return 1;
    }
    if (pixsum_border_from_name(name, border) == PIXSUM_OK)
        return 1;
    psb_fail(PIXSUM_ERR_INVALID_ARG, "mode/border must be 'same', 'valid', 'shrink', "
             "'reflect101', 'reflect', 'replicate' or 'constant', got '%s'", name);
    return 0;
}

static PyObject *py_box_filter(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "size", "normalize", "mode", "dtype", "method", "threads",
                             "out", "border", "stat", "cval", NULL};
    PyObject *image = NULL, *size_obj = NULL, *dtype_obj = NULL, *out = NULL;
    int normalize = 1;
    const char *mode = "same", *border_name = NULL, *stat_name = NULL;
    double cval = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$psOznOzzd:box_filter", kwlist, &image,
                                     &size_obj, &normalize, &mode, &dtype_obj, &o.method,
                                     &o.threads, &out, &border_name, &stat_name, &cval))
        return NULL;
    if (psb_is_gpu_array(image)) {
        if (border_name || stat_name)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "box_filter of GPU arrays takes mode "
                            "'same' or 'valid' and normalize, not border= or stat=");
        return psb_gpu_dispatch("box_filter", args, kwargs);
    }
    pixsum_box_filter_spec spec;
    memset(&spec, 0, sizeof spec);
    pixsum_type out_type;
    if (!parse_size(size_obj, &spec.kh, &spec.kw) || !psb_dtype_arg(dtype_obj, &out_type) ||
        !parse_box_border(border_name ? border_name : mode, &spec.border))
        return NULL;
    spec.stat = normalize ? PIXSUM_BOX_MEAN : PIXSUM_BOX_SUM;
    if (stat_name && !parse_box_stat(stat_name, &spec.stat))
        return NULL;
    spec.border_value = cval;
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *res = NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    pixsum_view vin, vout;
    size_t ow, oh;
    int st;
    if (!psb_view_of(in, 2, 0, "image", &vin))
        goto done;
    pixsum_box_filter_spec unit = spec;
    unit.kw = unit.kh = 1;
    if (pixsum_box_filter_type(vin.type, &unit) == PIXSUM_TYPE_NONE) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "box_filter: image dtype %s is not an input type of box "
                 "filters (uint8 uint16 int16 int32 uint32 float32 float64)",
                 psb_dtype_name(vin.type));
        goto done;
    }
    if ((st = pixsum_box_filter_shape(&spec, vin.width, vin.height, &ow, &oh)) != PIXSUM_OK) {
        psb_fail_library(st, "box_filter");
        goto done;
    }
    if (out_type == PIXSUM_TYPE_NONE && out != NULL && out != Py_None && PyArray_Check(out))
        out_type = psb_type_of_descr(PyArray_DESCR((PyArrayObject *)out));
    if (out_type == PIXSUM_TYPE_NONE) {
        if (spec.stat != PIXSUM_BOX_SUM) {
            out_type = PIXSUM_F64;
        } else {
            /* the narrowest integral table type exact for one window */
            int clip = spec.border == PIXSUM_BORDER_SHRINK || spec.border == PIXSUM_BORDER_VALID;
            size_t ah = clip && spec.kh > vin.height ? vin.height : spec.kh;
            size_t aw = clip && spec.kw > vin.width ? vin.width : spec.kw;
            out_type = pixsum_integral_type(vin.type, ah * aw, 0);
            if (out_type == PIXSUM_U32 && vin.type == PIXSUM_U32)
                out_type = PIXSUM_U64;
            if (out_type == PIXSUM_F32 || out_type == PIXSUM_TYPE_NONE)
                out_type = PIXSUM_F64;
        }
    }
    npy_intp shape[3];
    int nd = PyArray_NDIM(in);
    shape[0] = (npy_intp)oh;
    shape[1] = (npy_intp)ow;
    if (nd == 3)
        shape[2] = (npy_intp)vin.channels;
    if (!(res = psb_output(out, nd, shape, &out_type, "out")) ||
        !psb_view_of(res, 2, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_box_filter(ctx, &vin, &spec, &vout);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "box_filter");
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

/* ------------------------------------------------------------------------ */
/* Methods and version                                                      */
/* ------------------------------------------------------------------------ */

static const char *backend_name(pixsum_backend b)
{
    switch (b) {
    case PIXSUM_BACKEND_CPU: return "cpu";
    case PIXSUM_BACKEND_OMP: return "omp";
    case PIXSUM_BACKEND_CUDA: return "cuda";
    case PIXSUM_BACKEND_GL: return "gl";
    case PIXSUM_BACKEND_MPI: return "mpi";
    default: return "unknown";
    }
}

PyDoc_STRVAR(methods_doc,
"methods()\n"
"--\n\n"
"The library's registered methods, as a list of dicts with keys\n"
"  name         e.g. 'serial.2wh' (pass it as method=...)\n"
"  id           the registry id\n"
"  backend      'cpu', 'omp', 'cuda', 'gl' or 'mpi'\n"
"  ops          list of operations: 'integral', 'integral_sq', 'tilted',\n"
"               'integral3d', 'histogram'\n"
"  description  one line: what it is and which paper it comes from\n"
"  available    True if it can run in this process (ISA, device present)");

static PyObject *py_methods(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    static const struct { unsigned bit; const char *name; } op_names[] = {
        {PIXSUM_OP_INTEGRAL, "integral"},     {PIXSUM_OP_INTEGRAL_SQ, "integral_sq"},
        {PIXSUM_OP_TILTED, "tilted"},         {PIXSUM_OP_INTEGRAL_3D, "integral3d"},
        {PIXSUM_OP_HISTOGRAM, "histogram"}};
    size_t n = 0;
    const pixsum_method_info *info = pixsum_methods(&n);
    PyObject *list = PyList_New(0);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *ops = PyList_New(0);
        if (!ops)
            goto fail;
        for (size_t j = 0; j < sizeof op_names / sizeof op_names[0]; j++) {
            if (!(info[i].ops & op_names[j].bit))
                continue;
            PyObject *s = PyUnicode_FromString(op_names[j].name);
            if (!s || PyList_Append(ops, s) < 0) {
                Py_XDECREF(s);
                Py_DECREF(ops);
                goto fail;
            }
            Py_DECREF(s);
        }
        PyObject *d = Py_BuildValue("{s:s,s:i,s:s,s:N,s:s,s:O}", "name", info[i].name, "id",
                                    info[i].id, "backend", backend_name(info[i].backend),
                                    "ops", ops, "description",
                                    info[i].description ? info[i].description : "",
                                    "available", info[i].available ? Py_True : Py_False);
        if (!d || PyList_Append(list, d) < 0) {
            Py_XDECREF(d);
            goto fail;
        }
        Py_DECREF(d);
    }
    return list;
fail:
    Py_DECREF(list);
    return NULL;
}

PyDoc_STRVAR(version_doc,
"version()\n"
"--\n\n"
"The version of the linked C library, 'MAJOR.MINOR.PATCH'.");

static PyObject *py_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(pixsum_version());
}

PyDoc_STRVAR(integral_dtype_doc,
"integral_dtype(dtype, count, squared=False)\n"
"--\n\n"
"The table dtype integral() picks for `count` pixels (per channel) of `dtype`:\n"
"the narrowest of uint32/uint64/int64/float64 that cannot overflow (squared=True:\n"
"for the table of squares).");

static PyObject *py_integral_dtype(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"dtype", "count", "squared", NULL};
    PyObject *dtype_obj;
    Py_ssize_t count;
    int squared = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On|p:integral_dtype", kwlist, &dtype_obj,
                                     &count, &squared))
        return NULL;
    pixsum_type t;
    if (!psb_dtype_arg(dtype_obj, &t))
        return NULL;
    if (count < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "count must be >= 1");
    pixsum_type r = pixsum_integral_type(t, (size_t)count, squared);
    if (r == PIXSUM_TYPE_NONE)
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s is not an input type of integral tables",
                        psb_dtype_name(t));
    return (PyObject *)PyArray_DescrFromType(psb_npy_of_type(r));
}

PyDoc_STRVAR(integral_check_doc,
"_integral_check(dtype, out_dtype, count, squared=False, what='integral')\n"
"--\n\n"
"Internal: raises what pixsum_integral_check() reports for a table of `count`\n"
"pixels of `dtype` in `out_dtype` (pixsum.BadTypeError for an unsupported\n"
"pair, pixsum.OverflowError when it could overflow); returns None when it is\n"
"safe. Used by the GPU paths to apply the CPU's type rules.");

static PyObject *py_integral_check(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"dtype", "out_dtype", "count", "squared", "what", NULL};
    PyObject *in_obj, *out_obj;
    Py_ssize_t count;
    int squared = 0;
    const char *what = "integral";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOn|ps:_integral_check", kwlist, &in_obj,
                                     &out_obj, &count, &squared, &what))
        return NULL;
    pixsum_type in, out;
    if (!psb_dtype_arg(in_obj, &in) || !psb_dtype_arg(out_obj, &out))
        return NULL;
    if (count < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "count must be >= 1");
    int st = pixsum_integral_check(in, out, (size_t)count, squared);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, what);
    Py_RETURN_NONE;
}

/* ------------------------------------------------------------------------ */
/* Module                                                                   */
/* ------------------------------------------------------------------------ */

#define KW (PyCFunction)(void (*)(void))

static PyMethodDef module_methods[] = {
    {"integral", KW py_integral, METH_VARARGS | METH_KEYWORDS, integral_doc},
    {"integral_sq", KW py_integral_sq, METH_VARARGS | METH_KEYWORDS, integral_sq_doc},
    {"integral_tilted", KW py_integral_tilted, METH_VARARGS | METH_KEYWORDS,
     integral_tilted_doc},
    {"integral3d", KW py_integral3d, METH_VARARGS | METH_KEYWORDS, integral3d_doc},
    {"box_sum", KW py_box_sum, METH_VARARGS | METH_KEYWORDS, box_sum_doc},
    {"box_mean", KW py_box_mean, METH_VARARGS | METH_KEYWORDS, box_mean_doc},
    {"box_var", KW py_box_var, METH_VARARGS | METH_KEYWORDS, box_var_doc},
    {"box_filter", KW py_box_filter, METH_VARARGS | METH_KEYWORDS, box_filter_doc},
    {"methods", py_methods, METH_NOARGS, methods_doc},
    {"version", py_version, METH_NOARGS, version_doc},
    {"integral_dtype", KW py_integral_dtype, METH_VARARGS | METH_KEYWORDS,
     integral_dtype_doc},
    {"_integral_check", KW py_integral_check, METH_VARARGS | METH_KEYWORDS,
     integral_check_doc},
    PSB_HIST_METHODS
    PSB_GPU_METHODS
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pixsum._core",
    "The C extension behind pixsum: zero-copy NumPy bindings of the pixsum C library.", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    PyObject *errors = PyImport_ImportModule("pixsum._errors");
    if (!errors)
        return NULL;
    errors_by_status = PyObject_GetAttrString(errors, "BY_STATUS");
    Py_DECREF(errors);
    if (!errors_by_status || !PyTuple_Check(errors_by_status) ||
        PyTuple_GET_SIZE(errors_by_status) < PIXSUM_STATUS_COUNT) {
        Py_XDECREF(errors_by_status);
        errors_by_status = NULL;
        PyErr_SetString(PyExc_ImportError, "pixsum._errors.BY_STATUS is incomplete");
        return NULL;
    }
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddStringConstant(m, "__version__", pixsum_version()) < 0 ||
        PyModule_AddIntConstant(m, "HAVE_CUDA", psb_have_cuda()) < 0 ||
        PyModule_AddIntConstant(m, "_HIST_JOINT_MAX_CELLS",
                                (long)PIXSUM_HIST_JOINT_MAX_CELLS) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
