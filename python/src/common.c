/*
 * common.c - the helpers every source file of pixsum._core shares (declared
 * in binding.h): C status -> pixsum.Error subclass, NumPy dtype <-> pixsum
 * type, input arrays -> arrays the library reads (psb_input_array(): dtype
 * conversions, byte order, and one packed copy of what a view cannot
 * describe), NumPy arrays and raw memory descriptions -> pixsum_view, output
 * arrays, per-call contexts, and the recognition of GPU
 * arrays (which library made an argument). It depends on no other file of
 * the extension: module.c, hist.c, ihist.c and gpu.c build on it.
 */
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

int psb_errors_init(void)
{
    PyObject *errors = PyImport_ImportModule("pixsum._errors");
    if (!errors)
        return 0;
    PyObject *by_status = PyObject_GetAttrString(errors, "BY_STATUS");
    Py_DECREF(errors);
    if (!by_status || !PyTuple_Check(by_status) ||
        PyTuple_GET_SIZE(by_status) < PIXSUM_STATUS_COUNT) {
        Py_XDECREF(by_status);
        PyErr_SetString(PyExc_ImportError, "pixsum._errors.BY_STATUS is incomplete");
        return 0;
    }
    Py_XSETREF(errors_by_status, by_status);
    return 1;
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

PyObject *psb_hand_over(int status, const char *what, PyArrayObject **res)
{
    if (status != PIXSUM_OK)
        return psb_fail_library(status, what);
    PyObject *result = (PyObject *)*res;
    *res = NULL;
    return result;
}

/* ------------------------------------------------------------------------ */
/* Types                                                                    */
/* ------------------------------------------------------------------------ */

pixsum_type psb_type_of_kind(char kind, long size)
{
    switch (kind) {
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

pixsum_type psb_type_of_descr(PyArray_Descr *d)
{
    if (!d || !PyArray_ISNBO(d->byteorder))
        return PIXSUM_TYPE_NONE;
    return psb_type_of_kind(d->kind, (long)PyDataType_ELSIZE(d));
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

/* `obj` as an ndarray without copying its memory (an ndarray is returned as
 * is; buffer exporters become views; plain sequences are converted). New
 * reference, or NULL with an exception set. */
static PyArrayObject *as_array_raw(PyObject *obj, const char *what)
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

/* What an input of dtype `d` is read as: the pixsum type of the packed
 * temporary (or of the array itself when no conversion is needed), or
 * PIXSUM_TYPE_NONE for a dtype pixsum cannot read. *narrow is set for int64
 * and uint64 images, whose values are checked before they are narrowed. */
static pixsum_type input_type(PyArray_Descr *d, unsigned flags, int *narrow)
{
    long size = (long)PyDataType_ELSIZE(d);
    *narrow = 0;
    if (d->kind == 'b' && size == 1)
        return PIXSUM_U8; /* 0/1 bytes: read as uint8 */
    if (flags & PSB_IN_TABLE)
        return psb_type_of_kind(d->kind, size);
    if (d->kind == 'i' && size == 1)
        return PIXSUM_I16; /* int8 -> int16, exact */
    if (d->kind == 'f' && size == 2)
        return PIXSUM_F32; /* float16 -> float32, exact */
    if ((d->kind == 'i' || d->kind == 'u') && size == 8) {
        *narrow = 1;
        return d->kind == 'i' ? PIXSUM_I64 : PIXSUM_U64;
    }
    return psb_type_of_kind(d->kind, size);
}

/* 1 if the pixsum views of every function can describe `a` in place: aligned
 * memory, the last axis packed, pixels of up to 4 channels packed (the
 * second-last axis of a 3-D or larger array whose last axis has <= 4
 * entries, unless PSB_IN_VOLUME says a 3-D array has no channel axis), and
 * every outer axis stepping over the whole extent of the axes inside it (so
 * rows and slices never overlap; negative steps are fine). With
 * PSB_IN_MERGE01, axes 0 and 1 of a 4-D array must also merge into one
 * (channels-first stacks). */
static int readable_in_place(PyArrayObject *a, unsigned flags)
{
    if (PyArray_SIZE(a) == 0 || PyArray_NDIM(a) == 0)
        return 1; /* the view's own checks name the shape */
    return PyArray_ISALIGNED(a) &&
           psb_layout_in_place(PyArray_NDIM(a), PyArray_DIMS(a), PyArray_STRIDES(a),
                               (npy_intp)PyArray_ITEMSIZE(a), flags);
}

int psb_layout_in_place(int nd, const npy_intp *dims, const npy_intp *st, npy_intp es,
                        unsigned flags)
{
    for (int k = 0; k < nd; k++)
        if (dims[k] == 0)
            return 1; /* empty: the view's own checks name the shape */
    if (nd == 0)
        return 1;
    int i = nd - 1;
    if (dims[i] > 1 && st[i] != es)
        return 0;
    npy_intp span = dims[i] * es; /* bytes covered by the axes inside axis i */
    int channel_axis = nd >= 4 || (nd == 3 && !(flags & PSB_IN_VOLUME));
    if (--i >= 0 && channel_axis && dims[nd - 1] <= 4) {
        if (dims[i] > 1 && st[i] != span)
            return 0;
        span *= dims[i];
        i--;
    }
    for (; i >= 0; i--) {
        if (dims[i] <= 1)
            continue;
        npy_intp step = st[i] < 0 ? -st[i] : st[i];
        if (step < span || step % es != 0)
            return 0;
        span += (dims[i] - 1) * step;
    }
    if ((flags & PSB_IN_MERGE01) && nd == 4 && dims[0] > 1 && dims[1] > 1 &&
        st[0] != dims[1] * st[1])
        return 0;
    return 1;
}

/* Reads the range of an int64/uint64 array (any layout) into *lo and *hi
 * (as signed for int64; for uint64 *lo is 0 and *hi is clamped to
 * INT64_MAX when larger, which is enough to decide). Returns 1, or 0 with an
 * exception set. */
static int int64_range(PyArrayObject *a, int is_signed, long long *lo, long long *hi)
{
    PyArrayObject *c = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)a, PyArray_DescrFromType(is_signed ? NPY_INT64 : NPY_UINT64), 0, 0,
        NPY_ARRAY_CARRAY_RO, NULL);
    if (!c)
        return 0;
    npy_intp n = PyArray_SIZE(c);
    long long mn = 0, mx = 0;
    Py_BEGIN_ALLOW_THREADS
    if (is_signed) {
        const int64_t *v = PyArray_DATA(c);
        mn = mx = n ? v[0] : 0;
        for (npy_intp k = 1; k < n; k++) {
            mn = v[k] < mn ? v[k] : mn;
            mx = v[k] > mx ? v[k] : mx;
        }
    } else {
        const uint64_t *v = PyArray_DATA(c);
        uint64_t umx = 0;
        for (npy_intp k = 0; k < n; k++)
            umx = v[k] > umx ? v[k] : umx;
        mx = umx > (uint64_t)INT64_MAX ? INT64_MAX : (long long)umx;
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(c);
    *lo = mn;
    *hi = mx;
    return 1;
}

/* A new C-contiguous native array of pixsum type `t` holding `a`'s values
 * (NumPy's cast: exact for every conversion this file asks for). */
static PyArrayObject *packed_copy(PyArrayObject *a, pixsum_type t)
{
    PyArrayObject *dst = (PyArrayObject *)PyArray_Empty(
        PyArray_NDIM(a), PyArray_DIMS(a), PyArray_DescrFromType(psb_npy_of_type(t)), 0);
    if (dst && PyArray_CopyInto(dst, a) < 0)
        Py_CLEAR(dst);
    return dst;
}

PyArrayObject *psb_input_array(PyObject *obj, const char *what, unsigned flags)
{
    PyArrayObject *a = as_array_raw(obj, what);
    if (!a)
        return NULL;
    PyArray_Descr *d = PyArray_DESCR(a);
    int narrow, no_copy = (flags & PSB_IN_NO_COPY) != 0;
    pixsum_type t = input_type(d, flags, &narrow);
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype(what, d, (flags & PSB_IN_TABLE)
            ? "tables are uint32, uint64, int64, float32 or float64 (any byte order)"
            : "pixsum reads bool, int8, uint8, int16, uint16, int32, uint32, int64, uint64 "
              "(values within 32 bits), float16, float32 and float64, in any byte order");
        Py_DECREF(a);
        return NULL;
    }
    int native = PyArray_ISNBO(d->byteorder);
    int same_type = d->kind == 'b' || (native && psb_type_of_descr(d) == t && !narrow);
    int in_place = readable_in_place(a, flags);
    if (same_type && in_place) {
        if (d->kind != 'b')
            return a;
        /* bool is one byte of 0 or 1: the same memory read as uint8 */
        PyObject *u8 = PyArray_View(a, PyArray_DescrFromType(NPY_UINT8), NULL);
        Py_DECREF(a);
        return (PyArrayObject *)u8;
    }
    if (no_copy) {
        char text[160];
        psb_descr_text(d, text, sizeof text);
        if (!same_type)
            psb_fail(PIXSUM_ERR_BAD_TYPE, "%s has dtype %s, which pixsum reads through a "
                     "converted copy (as %s), and copy=False forbids copies; drop copy=False "
                     "or pass a native %s array", what, text,
                     narrow ? "int32/uint32" : psb_dtype_name(t),
                     narrow ? "int32/uint32" : psb_dtype_name(t));
        else
            psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: its memory layout (not packed along a row, "
                     "overlapping, broadcast or unaligned) cannot be read in place, and "
                     "copy=False forbids the packed copy; drop copy=False or pass "
                     "numpy.ascontiguousarray(%s)", what, what);
        Py_DECREF(a);
        return NULL;
    }
    if (narrow) {
        long long lo, hi;
        if (!int64_range(a, d->kind == 'i', &lo, &hi)) {
            Py_DECREF(a);
            return NULL;
        }
        if (lo >= INT32_MIN && hi <= INT32_MAX)
            t = PIXSUM_I32;
        else if (lo >= 0 && hi <= (long long)UINT32_MAX)
            t = PIXSUM_U32;
        else if (flags & PSB_IN_F64_WIDE)
            t = PIXSUM_F64;
        else {
            char text[160];
            psb_descr_text(d, text, sizeof text);
            psb_fail(PIXSUM_ERR_OVERFLOW, "%s has dtype %s with values from %lld to %lld%s, "
                     "beyond int32 and uint32 (the widest integer images pixsum reads); "
                     "convert it (e.g. %s.astype(numpy.float64)) or, for an integral table, "
                     "pass dtype=numpy.float64", what, text, lo, hi,
                     d->kind == 'u' && hi == INT64_MAX ? " or more" : "", what);
            Py_DECREF(a);
            return NULL;
        }
    }
    PyArrayObject *copy = packed_copy(a, t);
    Py_DECREF(a);
    return copy;
}

PyArrayObject *psb_as_array(PyObject *obj, const char *what)
{
    /* the arguments that are images get the image rule; others (tables,
     * carries, weights) keep their dtype and memory, as their callers expect */
    static const char *const images[] = {"image", "a", "b", "mask"};
    for (size_t i = 0; i < sizeof images / sizeof images[0]; i++)
        if (strcmp(what, images[i]) == 0)
            return psb_input_array(obj, what, 0);
    return as_array_raw(obj, what);
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

int psb_batch_view(void *data, pixsum_type t, int nd, const npy_intp *dims,
                   const npy_intp *strides, int channels_first, const char *what,
                   pixsum_view *v)
{
    char shape[96];
    if (channels_first ? nd != 4 : nd != 3 && nd != 4) {
        psb_shape_text(nd, dims, shape, sizeof shape);
        psb_fail(PIXSUM_ERR_BAD_SHAPE,
                 channels_first ? "%s: channel_axis=1 reads a stack (N, C, H, W) as N*C "
                                  "images; got shape %s"
                                : "%s: batch=True reads a stack of images (N, H, W) or "
                                  "(N, H, W, C); got shape %s",
                 what, shape);
        return 0;
    }
    if (!channels_first)
        return psb_view_raw(data, t, nd, dims, strides, 3, what, v);
    /* (N, C, H, W): the N and C axes merge into one of N*C slices when a
     * step along N is C steps along C (or either axis has one entry). */
    npy_intp n = dims[0], c = dims[1], step;
    if (n <= 1)
        step = strides[1];
    else if (c <= 1)
        step = strides[0];
    else if (strides[0] == c * strides[1])
        step = strides[1];
    else {
        psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: its batch and channel axes (strides %zd and %zd "
                 "bytes) cannot be read as one stack of N*C images in place; pass a "
                 "contiguous copy", what, (Py_ssize_t)strides[0], (Py_ssize_t)strides[1]);
        return 0;
    }
    npy_intp d3[3] = {n * c, dims[2], dims[3]}, s3[3] = {step, strides[2], strides[3]};
    if (n == 0 || c == 0) { /* empty: let the view's own check name the shape */
        psb_shape_text(nd, dims, shape, sizeof shape);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s of shape %s is empty", what, shape);
        return 0;
    }
    return psb_view_raw(data, t, 3, d3, s3, 3, what, v);
}

int psb_check_unbatched(const char *name, int nd, const npy_intp *dims)
{
    char shape[96];
    if (nd == 4 || (nd == 3 && dims[2] > 4)) {
        psb_shape_text(nd, dims, shape, sizeof shape);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: an image is (H, W) or (H, W, C) with 1..4 "
                 "interleaved channels, got shape %s; for a stack of images (N, H, W) or "
                 "(N, H, W, C) pass batch=True, and for PyTorch's channels-first "
                 "(N, C, H, W) batch=True, channel_axis=1", name, shape);
        return 0;
    }
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


/* ------------------------------------------------------------------------ */
/* Boxes                                                                    */
/* ------------------------------------------------------------------------ */

/* Converts `obj` to an array of pixsum_box. *spatial becomes 2 for (x, y, w, h)
 * boxes and 3 for (x, y, z, w, h, d); *single is set for one box given as a
 * 1-D sequence. Returns a PyMem_Malloc'ed array (free with PyMem_Free) or NULL
 * with an exception set. */
pixsum_box *psb_parse_boxes(PyObject *obj, size_t *n, int *spatial, int *single)
{
    PyArrayObject *raw = as_array_raw(obj, "boxes");
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

/* ------------------------------------------------------------------------ */
/* Recognising GPU arrays                                                   */
/* ------------------------------------------------------------------------ */

/* What a type says about its instances, found once per type (the type's own
 * attributes, so no property is evaluated) and cached. */
enum type_class {
    TYPE_TORCH,      /* torch.Tensor or a subclass: GPU when .is_cuda */
    TYPE_CUPY,       /* cupy.ndarray or a subclass: always GPU */
    TYPE_CAI,        /* the type defines __cuda_array_interface__ (e.g. Numba) */
    TYPE_OTHER       /* look at the instance each time */
};

#define TYPE_CACHE_SLOTS 16
static struct {
    PyTypeObject *type; /* strong reference: the address stays this type's */
    enum type_class cls;
} type_cache[TYPE_CACHE_SLOTS];
static int type_cache_used;

/* True when `type` or one of its bases has the __name__ `name` and a
 * __module__ whose first component is `root`. Runs once per type. */
static int derives_from(PyTypeObject *type, const char *root, const char *name)
{
    PyObject *mro = type->tp_mro;
    Py_ssize_t n = mro && PyTuple_Check(mro) ? PyTuple_GET_SIZE(mro) : 0;
    size_t len = strlen(root);
    int found = 0;
    for (Py_ssize_t i = 0; i < n && !found; i++) {
        PyObject *t = PyTuple_GET_ITEM(mro, i);
        PyObject *mod = PyObject_GetAttrString(t, "__module__");
        PyObject *nm = PyObject_GetAttrString(t, "__name__");
        const char *m = mod && PyUnicode_Check(mod) ? PyUnicode_AsUTF8(mod) : NULL;
        const char *s = nm && PyUnicode_Check(nm) ? PyUnicode_AsUTF8(nm) : NULL;
        found = m && s && strcmp(s, name) == 0 && strncmp(m, root, len) == 0 &&
                (m[len] == '.' || m[len] == '\0');
        Py_XDECREF(mod);
        Py_XDECREF(nm);
        if (PyErr_Occurred())
            PyErr_Clear();
    }
    return found;
}

static enum type_class classify_type(PyTypeObject *type)
{
    for (int i = 0; i < type_cache_used; i++)
        if (type_cache[i].type == type)
            return type_cache[i].cls;
    enum type_class cls = TYPE_OTHER;
    if (derives_from(type, "torch", "Tensor"))
        cls = TYPE_TORCH;
    else if (derives_from(type, "cupy", "ndarray") ||
             derives_from(type, "cupy", "_ndarray_base"))
        cls = TYPE_CUPY;
    else if (PyObject_HasAttrString((PyObject *)type, "__cuda_array_interface__"))
        cls = TYPE_CAI;
    if (type_cache_used < TYPE_CACHE_SLOTS) {
        Py_INCREF(type);
        type_cache[type_cache_used].type = type;
        type_cache[type_cache_used++].cls = cls;
    }
    return cls;
}

/* 1 if obj.__dlpack_device__() names CUDA (or CUDA managed) memory. */
static int dlpack_on_cuda(PyObject *obj)
{
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

psb_array_kind psb_array_kind_of(PyObject *obj)
{
    if (PyArray_Check(obj) || PyList_Check(obj) || PyTuple_Check(obj) || PyLong_Check(obj) ||
        PyFloat_Check(obj) || obj == Py_None)
        return PSB_HOST;
    switch (classify_type(Py_TYPE(obj))) {
    case TYPE_TORCH: {
        PyObject *cuda = PyObject_GetAttrString(obj, "is_cuda");
        int yes = cuda ? PyObject_IsTrue(cuda) : 0;
        Py_XDECREF(cuda);
        if (yes < 0 || !cuda)
            PyErr_Clear();
        return yes > 0 ? PSB_GPU_TORCH : PSB_HOST;
    }
    case TYPE_CUPY:
        return PSB_GPU_CUPY;
    case TYPE_CAI:
        return PSB_GPU_CAI;
    case TYPE_OTHER:
        break;
    }
    if (PyObject_HasAttrString(obj, "__cuda_array_interface__"))
        return PSB_GPU_CAI;
    return dlpack_on_cuda(obj) ? PSB_GPU_DLPACK : PSB_HOST;
}

int psb_is_gpu_array(PyObject *obj)
{
    return psb_array_kind_of(obj) != PSB_HOST;
}

int psb_desc_view(PyObject *desc, int spatial, int min_nd, int max_nd, const char *what,
                  pixsum_view *v)
{
    unsigned long long ptr;
    const char *tname;
    PyObject *shape, *strides;
    if (!PyTuple_Check(desc) || !PyArg_ParseTuple(desc, "KsOO", &ptr, &tname, &shape, &strides)) {
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
    if (nd < min_nd || nd > max_nd || PySequence_Size(strides) != nd) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: shape and strides must have %d to %d entries", what,
                 min_nd, max_nd);
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
