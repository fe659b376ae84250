/*
 * module.c - pixsum._core, the CPython extension behind `import pixsum`.
 *
 * A thin C layer over the public C API (include/pixsum.h):
 *   - Inputs go through psb_input_array() (common.c): arrays the library can
 *     describe as pixsum_view structs (any row and slice stride: crops, flips,
 *     every other row) are read in place; other layouts (a transposed array,
 *     a channel view) and dtypes the library has no type for (bool, int8,
 *     float16, int64, big-endian) are copied once into a packed temporary,
 *     unless copy=False, which refuses them. `out=` arrays are written in
 *     place.
 *   - The GIL is released around every call into the library.
 *   - Each call builds its own pixsum_ctx (method, threads, wrap, padded), so
 *     calls from several Python threads never share a context.
 *   - Every C status becomes the matching pixsum.Error subclass (defined in
 *     pixsum/_errors.py) carrying the status code and the detail text.
 *
 * Array conventions (documented to users in the docstrings):
 *   2-D images:  (H, W) or (H, W, C) with 1..4 interleaved channels C
 *   3-D volumes: (D, H, W) or (D, H, W, C)
 *   batches:     (N, H, W) or (N, H, W, C) with batch=True (integral,
 *                integral_sq), (N, C, H, W) with batch=True, channel_axis=1
 *   boxes:       (x, y, w, h) for 2-D tables, (x, y, z, w, h, d) for 3-D
 *
 * The shared helpers (errors, types, views, contexts, recognising GPU
 * arrays) live in common.c, the histogram bindings in hist.c and the GPU
 * paths in gpu.c, all declared in binding.h; this file holds the integral and
 * box functions and the module table. GPU arrays given to integral(),
 * integral_sq() and integral3d() go to psb_gpu_integral() (gpu.c), the
 * others to psb_gpu_dispatch().
 */
#define PSB_MAIN_FILE
#include "binding.h"
#include "gpu_box.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    PyArrayObject *given = psb_input_array(obj, what, PSB_IN_TABLE);
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

/* The image's dtype has no integral table (int64, uint64): one message for
 * every function built on tables. Returns NULL with pixsum.BadTypeError set. */
static void *fail_not_integral_input(const char *name, pixsum_type t)
{
    return psb_fail(PIXSUM_ERR_BAD_TYPE, "%s: image dtype %s is not an input type of integral "
                    "tables (uint8 uint16 int16 int32 uint32 float32 float64)", name,
                    psb_dtype_name(t));
}

/* No channel_axis for one image: channels interleaved on the last axis. */
#define IMAGE_AXIS_LAST 2

/* Reads batch= and channel_axis= into a (declared in binding.h, shared with
 * hist.c): with batch, channel_axis None or -1
 * (the last axis: interleaved channels) or 1 (channels-first). Without
 * batch, channel_axis names the channel axis of a 3-D image: 0, 1 or 2 (or
 * -3..-1), into *image_axis (IMAGE_AXIS_LAST when None). Returns 1, or 0
 * with an exception set. */
int psb_batch_args(const char *name, int batch, PyObject *channel_axis,
                      psb_integral_args *a, int *image_axis)
{
    a->batch = batch;
    a->channels_first = 0;
    *image_axis = IMAGE_AXIS_LAST;
    if (!channel_axis || channel_axis == Py_None)
        return 1;
    Py_ssize_t axis = PyLong_Check(channel_axis) ? PyLong_AsSsize_t(channel_axis) : 0;
    if (!batch) {
        if (!PyLong_Check(channel_axis) || axis < -3 || axis > 2) {
            PyErr_Clear();
            psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: channel_axis of one image must be None or "
                     "an axis of its 3-D shape (0, 1, 2 or -3..-1)", name);
            return 0;
        }
        *image_axis = (int)(axis < 0 ? axis + 3 : axis);
        return 1;
    }
    if (!PyLong_Check(channel_axis) || (axis != -1 && axis != 1)) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: with batch=True, channel_axis must be None or "
                 "-1 (interleaved channels on the last axis) or 1 (channels-first "
                 "(N, C, H, W) stacks)", name);
        return 0;
    }
    a->channels_first = axis == 1;
    return 1;
}

/* ------------------------------------------------------------------------ */
/* What a table knows about its layout                                      */
/* ------------------------------------------------------------------------ */

/* Tables made by integral(), integral_sq() and integral3d() (the arrays
 * returned, out= included), remembered by address with a weak reference and
 * whether they are padded, so that the box functions read them with the
 * layout they were made with (padded=None) and refuse a padded= that
 * contradicts it. An entry leaves when its table is freed (the weak
 * reference's callback). Views and copies of a table are not remembered:
 * the box functions check what the values can tell (see table_layout()). */
static PyObject *table_layouts; /* dict: address -> (weakref, padded) */

/* The weak reference's callback: forgets the table at address `key`. */
static PyObject *forget_table(PyObject *key, PyObject *ref)
{
    (void)ref;
    if (table_layouts && PyDict_DelItem(table_layouts, key) < 0)
        PyErr_Clear();
    Py_RETURN_NONE;
}

static PyMethodDef forget_table_def = {"_forget_table", forget_table, METH_O, NULL};

/* Remembers that `table` was made padded or not. Never fails (a table that
 * cannot be remembered is checked by its values instead). */
static void remember_table(PyObject *table, int padded)
{
    if (!table_layouts && !(table_layouts = PyDict_New())) {
        PyErr_Clear();
        return;
    }
    PyObject *key = PyLong_FromVoidPtr(table);
    PyObject *callback = key ? PyCFunction_New(&forget_table_def, key) : NULL;
    PyObject *ref = callback ? PyWeakref_NewRef(table, callback) : NULL;
    PyObject *entry = ref ? Py_BuildValue("(Oi)", ref, padded ? 1 : 0) : NULL;
    if (!entry || PyDict_SetItem(table_layouts, key, entry) < 0)
        PyErr_Clear();
    Py_XDECREF(entry);
    Py_XDECREF(ref);
    Py_XDECREF(callback);
    Py_XDECREF(key);
}

/* 1 (padded) or 0 (inclusive) for a remembered table, -1 for any other. */
static int remembered_layout(PyObject *table)
{
    PyObject *key = table_layouts ? PyLong_FromVoidPtr(table) : NULL;
    PyObject *entry = key ? PyDict_GetItemWithError(table_layouts, key) : NULL;
    Py_XDECREF(key);
    if (!entry) {
        PyErr_Clear();
        return -1;
    }
    PyObject *ref = PyTuple_GET_ITEM(entry, 0);
    if (PyWeakref_GetObject(ref) != table)
        return -1;
    return (int)PyLong_AsLong(PyTuple_GET_ITEM(entry, 1));
}

/* 1 if the table value at `p` (of type t) is zero. */
static int value_is_zero(const char *p, pixsum_type t)
{
    switch (t) {
    case PIXSUM_U32: return *(const uint32_t *)(const void *)p == 0;
    case PIXSUM_I32: return *(const int32_t *)(const void *)p == 0;
    case PIXSUM_U64: return *(const uint64_t *)(const void *)p == 0;
    case PIXSUM_I64: return *(const int64_t *)(const void *)p == 0;
    case PIXSUM_F32: return *(const float *)(const void *)p == 0.0f;
    case PIXSUM_F64: return *(const double *)(const void *)p == 0.0;
    default: {
        size_t es = pixsum_type_size(t);
        for (size_t i = 0; i < es; i++)
            if (p[i])
                return 0;
        return 1;
    }
    }
}

/* 1 if view `t` could be a padded table: at least 2 entries on each
 * spatial axis and zeros on its first row and column of slice 0 and on
 * entry (z, 0, 0) of every slice (every channel). */
static int zero_border(const pixsum_view *t)
{
    if (t->width < 2 || t->height < 2)
        return 0;
    size_t es = pixsum_type_size(t->type), px = t->channels * es;
    const char *base = (const char *)t->data;
    for (size_t i = 0; i < t->width * t->channels; i++)
        if (!value_is_zero(base + i * es, t->type))
            return 0;
    for (size_t y = 0; y < t->height; y++)
        for (size_t c = 0; c < t->channels; c++)
            if (!value_is_zero(base + (ptrdiff_t)y * t->row_stride + c * es, t->type))
                return 0;
    for (size_t z = 0; z < t->depth; z++)
        for (size_t c = 0; c < px / es; c++)
            if (!value_is_zero(base + (ptrdiff_t)z * t->slice_stride + c * es, t->type))
                return 0;
    return 1;
}

/* Decides the layout in which a box function reads `table_obj` (viewed as
 * `vt`): `padded_obj` None reads a remembered table as it was made and any
 * other as inclusive, unless its first row and column are all zeros (the
 * padded layout of cv2.integral and of padded=True, or an image with a
 * zero first row and column): that is ambiguous and refused. An explicit
 * padded= that contradicts a remembered table is refused, and padded=True
 * for a table whose first row or column is not zero. Returns 1 with
 * *padded set, or 0 with pixsum.InvalidArgumentError set. */
static int table_layout(const char *name, PyObject *table_obj, const pixsum_view *vt,
                        PyObject *padded_obj, int *padded)
{
    int known = remembered_layout(table_obj);
    int given = -1;
    if (padded_obj && padded_obj != Py_None) {
        if ((given = PyObject_IsTrue(padded_obj)) < 0)
            return 0;
    }
    if (vt->type != PIXSUM_U32 && vt->type != PIXSUM_U64 && vt->type != PIXSUM_I64 &&
        vt->type != PIXSUM_F32 && vt->type != PIXSUM_F64) {
        *padded = given == 1; /* no table type: the library's refusal says so */
        return 1;
    }
    if (known >= 0) {
        if (given >= 0 && given != known) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: this table was made with padded=%s, but "
                     "padded=%s was passed; leave padded out (None) to read a table as it "
                     "was made", name, known ? "True" : "False", given ? "True" : "False");
            return 0;
        }
        *padded = known;
        return 1;
    }
    int zeros = zero_border(vt);
    if (given == 1 && !zeros) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: padded=True, but the table's first row or "
                 "column is not zero, so it is not a padded table (padded tables, from "
                 "padded=True or cv2.integral, have a zero first row and column)", name);
        return 0;
    }
    if (given < 0 && zeros) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s: the table's first row and column are zero, as "
                 "in a padded table (padded=True, cv2.integral), so its layout is ambiguous; "
                 "pass padded=True for a padded table or padded=False for an inclusive one",
                 name);
        return 0;
    }
    *padded = given == 1;
    return 1;
}

/* Describes `arr` as the image or an output of a call: a `spatial`-D image
 * (psb_view_of()), or with a->batch a stack (psb_batch_view()); `writable`
 * refuses read-only arrays. Returns 1, or 0 with an exception set naming
 * `what`. */
int psb_call_view(PyArrayObject *arr, const psb_integral_args *a, int spatial, int writable,
                  const char *what, pixsum_view *v)
{
    if (!a->batch)
        return psb_view_of(arr, spatial, writable, what, v);
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(arr));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype(what, PyArray_DESCR(arr), NULL);
        return 0;
    }
    if (writable && !PyArray_ISWRITEABLE(arr)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s is read-only", what);
        return 0;
    }
    return psb_batch_view(PyArray_DATA(arr), t, PyArray_NDIM(arr), PyArray_DIMS(arr),
                          PyArray_STRIDES(arr), a->channels_first, what, v);
}

/* The shared body of integral(), integral_sq(), integral_tilted() and
 * integral3d(). Returns a new reference (an array, or a tuple for KIND_SQ). */
static PyObject *integral_common(enum integral_kind kind, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"image", "dtype", "sq_dtype", "method", "threads", "wrap",
                             "padded", "out", "out_sq", "carry", "carry_sq", "batch",
                             "channel_axis", "copy", NULL};
    static char *kwlist_plain[] = {"image", "dtype", "method", "threads", "wrap", "padded",
                                   "out", "carry", "batch", "channel_axis", "copy", NULL};
    static char *kwlist_volume[] = {"image", "dtype", "method", "threads", "wrap", "padded",
                                    "out", "copy", NULL};
    static char *kwlist_tilted[] = {"image", "dtype", "method", "threads", "wrap", "out",
                                    "copy", NULL};
    const char *names[] = {"integral", "integral_sq", "integral_tilted", "integral3d"};
    const char *name = names[kind];
    PyObject *image = NULL, *dtype_obj = NULL, *sq_dtype_obj = NULL, *out = NULL,
             *out_sq = NULL, *carry = NULL, *carry_sq = NULL, *channel_axis = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int ok, batch = 0, copy = 1, image_axis;
    if (kind == KIND_SQ)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOznppOOOOpOp:integral_sq", kwlist,
                                         &image, &dtype_obj, &sq_dtype_obj, &o.method,
                                         &o.threads, &o.wrap, &o.padded, &out, &out_sq,
                                         &carry, &carry_sq, &batch, &channel_axis, &copy);
    else if (kind == KIND_TILTED)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznpOp:integral_tilted",
                                         kwlist_tilted, &image, &dtype_obj, &o.method,
                                         &o.threads, &o.wrap, &out, &copy);
    else if (kind == KIND_VOLUME)
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznppOp:integral3d", kwlist_volume,
                                         &image, &dtype_obj, &o.method, &o.threads, &o.wrap,
                                         &o.padded, &out, &copy);
    else
        ok = PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OznppOOpOp:integral", kwlist_plain,
                                         &image, &dtype_obj, &o.method, &o.threads, &o.wrap,
                                         &o.padded, &out, &carry, &batch, &channel_axis,
                                         &copy);
    if (!ok)
        return NULL;
    if (carry == Py_None)
        carry = NULL;
    if (carry_sq == Py_None)
        carry_sq = NULL;
    if (out == Py_None)
        out = NULL;
    if (out_sq == Py_None)
        out_sq = NULL;
    psb_integral_args a = {name, kind == KIND_VOLUME ? 3 : 2, kind == KIND_SQ, 0, 0,
                           dtype_obj, sq_dtype_obj, out, out_sq, o, !copy};
    if (!psb_batch_args(name, batch, channel_axis, &a, &image_axis))
        return NULL;
    if (batch && (carry || carry_sq))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: carry rows continue the table of one "
                        "image in bands; they are not taken with batch=True", name);
    psb_array_kind where = psb_array_kind_of(image);
    if (where != PSB_HOST) {
        if (carry || carry_sq)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: carry rows are taken on the CPU "
                            "only; copy the band to the host", name);
        if (image_axis != IMAGE_AXIS_LAST)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: channel_axis without batch=True "
                            "is read for host arrays; move the channels last on the GPU "
                            "(e.g. x.permute(1, 2, 0)) or, for (C, H, W), pass batch=True",
                            name);
        if (kind == KIND_TILTED)
            return psb_gpu_dispatch(name, args, kwargs);
        return psb_gpu_integral(image, where, &a, args, kwargs);
    }

    pixsum_type type = PIXSUM_TYPE_NONE, sq_type = PIXSUM_TYPE_NONE;
    if (!psb_dtype_arg(dtype_obj, &type) || !psb_dtype_arg(sq_dtype_obj, &sq_type))
        return NULL;
    if (kind == KIND_TILTED)
        o.padded = 1; /* the tilted table is always (H+1) x (W+1) */
    int spatial = a.spatial;

    /* channel_axis of one 3-D image: its channels become the images of a
     * batch ((C, H, W), moved there as a view), and the tables are moved back
     * to the image's axis order. */
    PyArray_Dims perm = {NULL, 3};
    npy_intp perm_axes[3] = {0, 1, 2};
    PyObject *moved_out = NULL, *moved_out_sq = NULL;
    int copy_back[2] = {0, 0}; /* out= / out_sq= filled from a fresh table */
    int by_channel = image_axis != IMAGE_AXIS_LAST;
    if (by_channel) {
        PyArrayObject *raw = (PyArrayObject *)PyArray_FromAny(image, NULL, 0, 0, 0, NULL);
        if (!raw)
            return NULL;
        if (PyArray_NDIM(raw) != 3) {
            char shape[96];
            psb_shape_text(PyArray_NDIM(raw), PyArray_DIMS(raw), shape, sizeof shape);
            Py_DECREF(raw);
            return psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s: channel_axis without batch=True reads "
                            "a 3-D image, got shape %s", name, shape);
        }
        /* axis 1 -> (C, H, W) swaps the first two axes; axis 0 is already there */
        if (image_axis == 1) {
            perm_axes[0] = 1;
            perm_axes[1] = 0;
        }
        perm.ptr = perm_axes;
        image = PyArray_Transpose(raw, &perm);
        Py_DECREF(raw);
        if (!image)
            return NULL;
        if (out && PyArray_Check(out) && PyArray_NDIM((PyArrayObject *)out) == 3 &&
            !(out = moved_out = PyArray_Transpose((PyArrayObject *)out, &perm))) {
            Py_DECREF(image);
            return NULL;
        }
        if (out_sq && PyArray_Check(out_sq) && PyArray_NDIM((PyArrayObject *)out_sq) == 3 &&
            !(out_sq = moved_out_sq = PyArray_Transpose((PyArrayObject *)out_sq, &perm))) {
            Py_DECREF(image);
            Py_XDECREF(moved_out);
            return NULL;
        }
        if (carry || carry_sq) {
            Py_DECREF(image);
            Py_XDECREF(moved_out);
            Py_XDECREF(moved_out_sq);
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "%s: carry rows continue an image with "
                            "interleaved channels; they are not taken with channel_axis", name);
        }
        /* an out= whose (C, H, W) order the library cannot write in place (e.g.
         * (H, C, W) memory) gets a fresh table, copied into it afterwards */
        PyObject *moved[2] = {moved_out, moved_out_sq};
        pixsum_type *types[2] = {&type, &sq_type};
        for (int i = 0; i < 2; i++) {
            PyArrayObject *m = (PyArrayObject *)moved[i];
            if (!m || (PyArray_ISALIGNED(m) &&
                       psb_layout_in_place(3, PyArray_DIMS(m), PyArray_STRIDES(m),
                                           (npy_intp)PyArray_ITEMSIZE(m), PSB_IN_VOLUME)))
                continue;
            copy_back[i] = 1;
            if (*types[i] == PIXSUM_TYPE_NONE)
                *types[i] = psb_type_of_descr(PyArray_DESCR(m));
            if (i == 0)
                out = NULL;
            else
                out_sq = NULL;
        }
        a.batch = batch = 1;
        a.out = out;
        a.out_sq = out_sq;
    }
    /* A transposed image or volume (Fortran order, a.T): its table is the
     * transpose of the table of the array it transposes, which is read in
     * place (no copy, and no transposing copy, the slowest kind); the table
     * comes back as the transposed view. Only when out= (if any) can be
     * written that way too. */
    PyArray_Dims *back_perm = &perm;
    int transposed = 0;
    if (!by_channel && !batch && !carry && !carry_sq && kind != KIND_TILTED &&
        PyArray_Check(image) && PyArray_NDIM((PyArrayObject *)image) == a.spatial &&
        a.spatial >= 2) {
        PyArrayObject *im = (PyArrayObject *)image;
        npy_intp es = (npy_intp)PyArray_ITEMSIZE(im), rd[3], rs[3];
        int n = PyArray_NDIM(im), swap = 1;
        for (int k = 0; k < n; k++) {
            rd[k] = PyArray_DIMS(im)[n - 1 - k];
            rs[k] = PyArray_STRIDES(im)[n - 1 - k];
        }
        swap = !psb_layout_in_place(n, PyArray_DIMS(im), PyArray_STRIDES(im), es,
                                    PSB_IN_VOLUME) &&
               psb_layout_in_place(n, rd, rs, es, PSB_IN_VOLUME);
        PyObject *outs[2] = {out, out_sq};
        for (int i = 0; swap && i < 2; i++) {
            PyArrayObject *o2 = (PyArrayObject *)outs[i];
            if (!o2)
                continue;
            if (!PyArray_Check(outs[i]) || PyArray_NDIM(o2) != n) {
                swap = 0; /* psb_output() names what is wrong */
                continue;
            }
            npy_intp od[3], os[3];
            for (int k = 0; k < n; k++) {
                od[k] = PyArray_DIMS(o2)[n - 1 - k];
                os[k] = PyArray_STRIDES(o2)[n - 1 - k];
            }
            swap = psb_layout_in_place(n, od, os, (npy_intp)PyArray_ITEMSIZE(o2),
                                       PSB_IN_VOLUME);
        }
        if (swap) {
            if (!(image = PyArray_Transpose(im, NULL)))
                return NULL;
            if (out && !(out = moved_out = PyArray_Transpose((PyArrayObject *)out, NULL))) {
                Py_DECREF(image);
                return NULL;
            }
            if (out_sq &&
                !(out_sq = moved_out_sq = PyArray_Transpose((PyArrayObject *)out_sq, NULL))) {
                Py_DECREF(image);
                Py_XDECREF(moved_out);
                return NULL;
            }
            transposed = 1;
            back_perm = NULL; /* PyArray_Transpose(x, NULL) reverses the axes */
        }
    }
    /* One adaptation of the input (common.c): a 3-D array of a batch or of
     * integral3d has no channel axis; a float64 table takes int64 values
     * beyond 32 bits as float64. */
    unsigned flags = (copy ? 0u : PSB_IN_NO_COPY) |
                     (kind == KIND_VOLUME || batch ? PSB_IN_VOLUME : 0u) |
                     (a.channels_first ? PSB_IN_MERGE01 : 0u) |
                     (type == PIXSUM_F64 ? PSB_IN_F64_WIDE : 0u);
    PyArrayObject *in = psb_input_array(image, "image", flags);
    if (by_channel || transposed)
        Py_DECREF(image);
    if (!in) {
        Py_XDECREF(moved_out);
        Py_XDECREF(moved_out_sq);
        return NULL;
    }
    PyArrayObject *res = NULL, *res_sq = NULL, *keep_carry = NULL, *keep_carry_sq = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vout, vsq, vcarry, vcarry_sq;
    int nd = PyArray_NDIM(in);
    if (!batch && (kind == KIND_PLAIN || kind == KIND_SQ) &&
        !psb_check_unbatched(name, nd, PyArray_DIMS(in)))
        goto done;
    if (!psb_call_view(in, &a, a.spatial, 0, "image", &vin))
        goto done;
    if ((carry && !carry_view_of(carry, in, "carry", &keep_carry, &vcarry)) ||
        (carry_sq && !carry_view_of(carry_sq, in, "carry_sq", &keep_carry_sq, &vcarry_sq)))
        goto done;
    /* a continued table keeps its carry's type */
    if (carry && type == PIXSUM_TYPE_NONE && !out)
        type = vcarry.type;
    if (carry_sq && sq_type == PIXSUM_TYPE_NONE && !out_sq)
        sq_type = vcarry_sq.type;
    /* the overflow rule counts the pixels of one image of a batch */
    size_t count = vin.width * vin.height * (batch ? 1 : vin.depth);
    if (type == PIXSUM_TYPE_NONE && !out)
        type = pixsum_integral_type(vin.type, count, 0);
    if (kind == KIND_SQ && sq_type == PIXSUM_TYPE_NONE && !out_sq)
        sq_type = pixsum_integral_type(vin.type, count, 1);
    if (type == PIXSUM_TYPE_NONE && !out) {
        fail_not_integral_input(name, vin.type);
        goto done;
    }

    npy_intp shape[NPY_MAXDIMS];
    /* padded tables grow on the spatial axes: (H, W), (D, H, W), or a batch's
     * (H, W) after N (and C when channels-first) */
    int first = batch ? 1 + a.channels_first : 0, last = batch ? first + 1 : spatial - 1;
    for (int i = 0; i < nd; i++)
        shape[i] = PyArray_DIMS(in)[i] + (o.padded && i >= first && i <= last ? 1 : 0);
    /* A padded volume of one slice still gets its leading zero slice. */
    int lone_slice = kind == KIND_VOLUME && o.padded && vin.depth == 1;
    if (lone_slice)
        shape[0] = 2;
    if (!(res = psb_output(out, nd, shape, &type, "out")))
        goto done;
    if (kind == KIND_SQ && !(res_sq = psb_output(out_sq, nd, shape, &sq_type, "out_sq")))
        goto done;
    for (int i = 0; i < 2; i++) { /* out= filled afterwards: the same checks now */
        PyArrayObject *m = (PyArrayObject *)(i ? moved_out_sq : moved_out);
        pixsum_type want = i ? sq_type : type;
        PyArrayObject *check = copy_back[i] ? psb_output((PyObject *)m, nd, shape, &want,
                                                         i ? "out_sq" : "out") : NULL;
        if (copy_back[i] && !check)
            goto done;
        Py_XDECREF(check);
        if (copy_back[i] && !PyArray_ISWRITEABLE(m)) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "%s is read-only", i ? "out_sq" : "out");
            goto done;
        }
    }
    if (!psb_call_view(res, &a, a.spatial, 1, "out", &vout) ||
        (res_sq && !psb_call_view(res_sq, &a, a.spatial, 1, "out_sq", &vsq)))
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
    if (batch)
        st = pixsum_integral_batch(ctx, &vin, &vout, kind == KIND_SQ ? &vsq : NULL);
    else if (carry || carry_sq) /* kind PLAIN or SQ */
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
    if (by_channel || transposed) {
        /* back to the image's axis order: out= itself, or a view of the table */
        PyObject *given[2] = {moved_out ? PyArray_BASE((PyArrayObject *)moved_out) : NULL,
                              moved_out_sq ? PyArray_BASE((PyArrayObject *)moved_out_sq)
                                           : NULL};
        PyArrayObject *made[2] = {res, res_sq};
        PyObject *moved[2] = {moved_out, moved_out_sq};
        for (int i = 0; i < (kind == KIND_SQ ? 2 : 1); i++) {
            if (copy_back[i] && PyArray_CopyInto((PyArrayObject *)moved[i], made[i]) < 0)
                goto done;
            PyObject *back = given[i] ? (Py_INCREF(given[i]), given[i])
                                      : PyArray_Transpose(made[i], back_perm);
            if (!back)
                goto done;
            Py_DECREF(made[i]);
            made[i] = (PyArrayObject *)back;
        }
        res = made[0];
        res_sq = made[1];
    }
    if (!batch && kind != KIND_TILTED) { /* the tables returned know their layout */
        remember_table((PyObject *)res, o.padded);
        if (res_sq)
            remember_table((PyObject *)res_sq, o.padded);
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
    Py_XDECREF(moved_out);
    Py_XDECREF(moved_out_sq);
    Py_DECREF(in);
    return result;
}

PyDoc_STRVAR(integral_doc,
"integral(image, *, dtype=None, method='auto', threads=0, wrap=False, padded=False,\n"
"         out=None, carry=None, batch=False, channel_axis=None, copy=True)\n"
"--\n\n"
"Integral image (summed-area table) of a 2-D image.\n\n"
"image: array (or sequence) of shape (H, W) or (H, W, C) with 1..4 interleaved\n"
"  channels, dtype uint8, uint16, int16, int32, uint32, float32 or float64;\n"
"  bool (read as uint8), int8 (as int16), float16 (as float32), int64/uint64\n"
"  (as int32/uint32 when every value fits, else pixsum.OverflowError, or\n"
"  float64 with dtype=float64), any byte order. Any row stride (crops, flips,\n"
"  every other row) and transposed images (a.T, Fortran order: the table is\n"
"  the transposed view of the table of their memory) are read in place;\n"
"  other layouts (a[:, ::2], rgb[..., 0], broadcast) and the converted\n"
"  dtypes go through one packed copy.\n"
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
"  tables only (not padded); CPU arrays only.\n"
"batch: read axis 0 as N independent images, (N, H, W) or (N, H, W, C), and\n"
"  return N tables (padded: (N, H+1, W+1[, C])) in one call, the dtype chosen\n"
"  for one image. Without it a 3-D array is one (H, W, C) image, and shapes\n"
"  that can only be stacks are refused (BadShapeError names this keyword).\n"
"channel_axis: with batch=True, None or -1 (channels interleaved on the last\n"
"  axis) or 1: PyTorch's channels-first (N, C, H, W) read as N*C one-channel\n"
"  images (copied once when the N and C axes do not merge into one). Without\n"
"  batch, the channel axis of a 3-D image (0, 1 or 2, e.g. 0 for (C, H, W));\n"
"  the tables come back in the image's axis order.\n"
"copy: False refuses (BadStrideError / BadTypeError naming copy=False) any\n"
"  image that would be copied, guaranteeing zero copies.\n\n"
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
"            carry_sq=None, batch=False, channel_axis=None, copy=True)\n"
"--\n\n"
"Integral image and integral of squares of a 2-D image, in one pass.\n\n"
"Arguments as integral(); sq_dtype is the type of the squared table (None: uint64\n"
"for integer images while it cannot overflow, else float64), out_sq an\n"
"existing array for it, and carry / carry_sq the rows above a band for each\n"
"table (give both when both tables continue a band above); batch and\n"
"channel_axis read a stack as integral() does, N tables of each kind. Returns\n"
"the tuple (table, squared_table); together they give box means and variances\n"
"(see box_var).");

static PyObject *py_integral_sq(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return integral_common(KIND_SQ, args, kwargs);
}

PyDoc_STRVAR(integral_tilted_doc,
"integral_tilted(image, *, dtype=None, method='auto', threads=0, wrap=False, out=None,\n"
"                copy=True)\n"
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
"           padded=False, out=None, copy=True)\n"
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
/* Integrals of any number of axes                                          */
/* ------------------------------------------------------------------------ */

PyDoc_STRVAR(integral_nd_doc,
"integral_nd(image, *, channel_axis=None, dtype=None, wrap=False, out=None,\n"
"            method='auto', threads=0, copy=True)\n"
"--\n\n"
"Integral of an array of any number of axes, scikit-image's integral_image():\n"
"  T[i] = image[:i_0+1, :i_1+1, ..., :i_{n-1}+1].sum()  (every axis summed),\n"
"or every axis but `channel_axis`, which is kept apart (one table per channel).\n\n"
"image: 1 to 32 axes, any dtype of integral() (bool, int8, float16, int64 ...\n"
"  as documented there). 2-D and 3-D arrays (with channels last: 3-D and 4-D)\n"
"  run the 2-D / 3-D tables of integral() and integral3d(); other shapes the\n"
"  library's pixsum_integral_nd() (one thread).\n"
"channel_axis: None, or the axis that is not summed.\n"
"dtype, wrap, out, method, threads, copy: as integral() (method and threads\n"
"  for the 2-D / 3-D tables). The default dtype counts the elements summed\n"
"  into one entry. Tables are inclusive (no padded layout).\n\n"
"Returns the table, of the image's shape. Integer tables are exact.");

static PyObject *py_integral_nd(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "channel_axis", "dtype", "wrap", "out", "method",
                             "threads", "copy", NULL};
    PyObject *image, *axis_obj = NULL, *dtype_obj = NULL, *out = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int copy = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOpOznp:integral_nd", kwlist, &image,
                                     &axis_obj, &dtype_obj, &o.wrap, &out, &o.method,
                                     &o.threads, &copy))
        return NULL;
    if (psb_is_gpu_array(image))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "integral_nd: GPU arrays are not taken yet; "
                        "use integral() / integral3d() or copy the array to the host");
    pixsum_type type;
    if (!psb_dtype_arg(dtype_obj, &type))
        return NULL;
    long axis = -1;
    if (axis_obj && axis_obj != Py_None) {
        axis = PyLong_Check(axis_obj) ? PyLong_AsLong(axis_obj) : -999;
        if (axis == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (!PyLong_Check(axis_obj))
            return psb_fail(PIXSUM_ERR_INVALID_ARG, "integral_nd: channel_axis must be None "
                            "or an int");
    }
    int has_channel = axis_obj && axis_obj != Py_None;
    unsigned flags = (copy ? 0u : PSB_IN_NO_COPY) | (type == PIXSUM_F64 ? PSB_IN_F64_WIDE : 0u);
    /* a 3-D array without channels is a volume: no channel axis to pack */
    if (!has_channel)
        flags |= PSB_IN_VOLUME;
    PyArrayObject *in = psb_input_array(image, "image", flags);
    if (!in)
        return NULL;
    PyArrayObject *res = NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    int nd = PyArray_NDIM(in), st;
    npy_intp *dims = PyArray_DIMS(in);
    if (nd < 1 || nd > PIXSUM_ND_MAX_DIMS) {
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "integral_nd: image has %d axes; 1..%d are taken", nd,
                 PIXSUM_ND_MAX_DIMS);
        goto done;
    }
    if (has_channel) {
        if (axis < -nd || axis >= nd) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "integral_nd: channel_axis %ld is not an axis of "
                     "a %d-D array", axis, nd);
            goto done;
        }
        if (axis < 0)
            axis += nd;
    }
    pixsum_type in_type = psb_type_of_descr(PyArray_DESCR(in));
    size_t count = 1;
    for (int k = 0; k < nd; k++)
        count *= k == axis ? 1 : (size_t)(dims[k] ? dims[k] : 1);
    if (type == PIXSUM_TYPE_NONE && (out == NULL || out == Py_None))
        type = pixsum_integral_type(in_type, count, 0);
    if (type == PIXSUM_TYPE_NONE && (out == NULL || out == Py_None)) {
        fail_not_integral_input("integral_nd", in_type);
        goto done;
    }
    if (!(res = psb_output(out, nd, dims, &type, "out")))
        goto done;
    if (!PyArray_ISWRITEABLE(res)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "out is read-only");
        goto done;
    }
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    /* 2-D and 3-D tables (channels last, up to 4) run the 2-D / 3-D entries */
    int channels_last = has_channel && axis == nd - 1 && dims[nd - 1] <= 4;
    int spatial = nd - (channels_last ? 1 : 0);
    if ((!has_channel || channels_last) && (spatial == 2 || spatial == 3)) {
        pixsum_view vin, vout;
        if (!psb_view_of(in, spatial, 0, "image", &vin) ||
            !psb_view_of(res, spatial, 1, "out", &vout))
            goto done;
        Py_BEGIN_ALLOW_THREADS
        st = pixsum_integral(ctx, &vin, &vout);
        Py_END_ALLOW_THREADS
    } else {
        size_t shape[PIXSUM_ND_MAX_DIMS];
        ptrdiff_t in_strides[PIXSUM_ND_MAX_DIMS], out_strides[PIXSUM_ND_MAX_DIMS];
        for (int k = 0; k < nd; k++) {
            shape[k] = (size_t)dims[k];
            in_strides[k] = (ptrdiff_t)PyArray_STRIDES(in)[k];
            out_strides[k] = (ptrdiff_t)PyArray_STRIDES(res)[k];
        }
        pixsum_nd_array ain = {PyArray_DATA(in), in_type, (size_t)nd, shape, in_strides};
        pixsum_nd_array aout = {PyArray_DATA(res), type, (size_t)nd, shape, out_strides};
        int ch = has_channel ? (int)axis : -1;
        Py_BEGIN_ALLOW_THREADS
        st = pixsum_integral_nd(ctx, &ain, &aout, ch);
        Py_END_ALLOW_THREADS
    }
    result = psb_hand_over(st, "integral_nd", &res);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_DECREF(in);
    return result;
}

/* ------------------------------------------------------------------------ */
/* Box queries                                                              */
/* ------------------------------------------------------------------------ */

enum box_kind { BOX_SUM, BOX_MEAN, BOX_VAR };

/* Shared body of box_sum(), box_mean() and box_var(). */
static PyObject *box_common(enum box_kind kind, PyObject *args, PyObject *kwargs)
{
    static char *kw_one[] = {"table", "boxes", "padded", "copy", NULL};
    static char *kw_two[] = {"table", "sq_table", "boxes", "padded", "copy", NULL};
    const char *names[] = {"box_sum", "box_mean", "box_var"};
    PyObject *table_obj = NULL, *sq_obj = NULL, *boxes_obj = NULL, *padded_obj = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int copy = 1;
    int ok = kind == BOX_VAR
                 ? PyArg_ParseTupleAndKeywords(args, kwargs, "OOO|$Op:box_var", kw_two,
                                               &table_obj, &sq_obj, &boxes_obj, &padded_obj,
                                               &copy)
                 : PyArg_ParseTupleAndKeywords(args, kwargs,
                                               kind == BOX_SUM ? "OO|$Op:box_sum"
                                                               : "OO|$Op:box_mean",
                                               kw_one, &table_obj, &boxes_obj, &padded_obj,
                                               &copy);
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
    unsigned flags = PSB_IN_TABLE | (copy ? 0u : PSB_IN_NO_COPY) |
                     (spatial == 3 ? PSB_IN_VOLUME : 0u);
    if (!(table = psb_input_array(table_obj, "table", flags)) ||
        !psb_view_of(table, spatial, 0, "table", &vt) ||
        !table_layout(names[kind], table_obj, &vt, padded_obj, &o.padded))
        goto done;
    if (kind == BOX_VAR) {
        int sq_padded;
        if (!(sq = psb_input_array(sq_obj, "sq_table", flags)) ||
            !psb_view_of(sq, spatial, 0, "sq_table", &vq) ||
            !table_layout(names[kind], sq_obj, &vq, o.padded ? Py_True : Py_False,
                          &sq_padded))
            goto done;
    }
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
    result = psb_hand_over(st, names[kind], &res);
    if (result && nd == 0) /* one box: a scalar (PyArray_Return takes the array) */
        result = PyArray_Return((PyArrayObject *)result);
done:
    pixsum_ctx_free(ctx);
    PyMem_Free(boxes);
    Py_XDECREF(res);
    Py_XDECREF(table);
    Py_XDECREF(sq);
    return result;
}

PyDoc_STRVAR(box_sum_doc,
"box_sum(table, boxes, *, padded=None, copy=True)\n"
"--\n\n"
"Sums of boxes read from an integral table with the 4-corner (2-D) or 8-corner\n"
"(3-D) formula.\n\n"
"table: a table from integral() / integral3d() (any layout and byte order;\n"
"  copy=False refuses one that would be copied).\n"
"padded: None reads a table made by integral(), integral_sq() or integral3d()\n"
"  (the array they returned) with the layout it was made with, and any other\n"
"  table as inclusive unless its first row and column are zero (ambiguous:\n"
"  InvalidArgumentError asks for padded=True or False). True / False that\n"
"  contradict a made table, or True for a table whose first row or column is\n"
"  not zero, raise InvalidArgumentError.\n"
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
"box_mean(table, boxes, *, padded=None, copy=True)\n"
"--\n\n"
"Means of boxes (float64) from an integral table; arguments and result shape as\n"
"box_sum() (GPU tables too; identical to the CPU's means).");

static PyObject *py_box_mean(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    return box_common(BOX_MEAN, args, kwargs);
}

PyDoc_STRVAR(box_var_doc,
"box_var(table, sq_table, boxes, *, padded=None, copy=True)\n"
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

PyDoc_STRVAR(box_filter_doc,
"box_filter(image, size, *, normalize=True, mode='same', dtype=None,\n"
"           method='auto', threads=0, out=None, border=None, stat=None, cval=0.0,\n"
"           copy=True, batch=False, channel_axis=None)\n"
"--\n\n"
"Box (moving-window) filter of a 2-D image: the library's streamed\n"
"pixsum_box_filter(), which reads the image once and writes the result once;\n"
"the cost per pixel does not depend on the window size.\n\n"
"image: (H, W) or (H, W, C) with C <= 4; uint8 uint16 int16 int32 uint32\n"
"  float32 float64, and the dtypes and layouts integral() copies (copy=False\n"
"  refuses those); any row stride is read in place.\n"
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
"out: an existing array to write into.\n"
"batch: read axis 0 as N independent images, (N, H, W) or (N, H, W, C), and\n"
"  return the N filtered images (N, H', W'[, C]) in one call, each equal to\n"
"  the call on that image (the images are spread over the threads). Without\n"
"  it a 3-D array is one (H, W, C) image, and shapes that can only be stacks\n"
"  are refused (BadShapeError names this keyword).\n"
"channel_axis: with batch=True, None or -1 (channels interleaved on the last\n"
"  axis) or 1: PyTorch's channels-first (N, C, H, W) read as N*C one-channel\n"
"  images, in place where the N and C axes merge; the result is (N, C, H', W').\n\n"
"Integer sums are exact; integer variances are exact up to the final\n"
"division. The GIL is released during the computation.\n\n"
"GPU images (CuPy, PyTorch) take the library's streamed CUDA method\n"
"(pixsum_cuda_box_filter) on the caller's stream, with the same keywords,\n"
"types and results (integer outputs and means of integer images equal the\n"
"CPU's bit for bit); out= must be a GPU array. PyTorch without the unsigned\n"
"dtype returns int64 sums.");

static PyObject *py_box_filter(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "size", "normalize", "mode", "dtype", "method", "threads",
                             "out", "border", "stat", "cval", "copy", "batch", "channel_axis",
                             NULL};
    PyObject *image = NULL, *size_obj = NULL, *dtype_obj = NULL, *out = NULL;
    PyObject *channel_axis = NULL;
    int normalize = 1;
    const char *mode = "same", *border_name = NULL, *stat_name = NULL;
    double cval = 0;
    int copy = 1, batch = 0, image_axis;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$psOznOzzdppO:box_filter", kwlist,
                                     &image, &size_obj, &normalize, &mode, &dtype_obj,
                                     &o.method, &o.threads, &out, &border_name, &stat_name,
                                     &cval, &copy, &batch, &channel_axis))
        return NULL;
    if (psb_is_gpu_array(image))
        return psb_gpu_dispatch("box_filter", args, kwargs);
    psb_integral_args a;
    memset(&a, 0, sizeof a);
    a.spatial = 2;
    if (!psb_batch_args("box_filter", batch, channel_axis, &a, &image_axis))
        return NULL;
    if (!batch && channel_axis && channel_axis != Py_None)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "box_filter: channel_axis is read with "
                        "batch=True only (1: channels-first (N, C, H, W) stacks); an image's "
                        "channels are on its last axis");
    /* the keyword rules the GPU path shares (gpu_box.c) */
    pixsum_box_filter_spec spec;
    pixsum_type out_type;
    if (!psb_box_spec_from_args(size_obj, normalize, mode, border_name, stat_name, cval,
                                &spec) ||
        !psb_dtype_arg(dtype_obj, &out_type))
        return NULL;
    PyArrayObject *in = psb_input_array(image, "image",
                                        (copy ? 0u : PSB_IN_NO_COPY) |
                                            (batch ? PSB_IN_VOLUME : 0u) |
                                            (a.channels_first ? PSB_IN_MERGE01 : 0u));
    if (!in)
        return NULL;
    PyArrayObject *res = NULL;
    PyObject *result = NULL;
    pixsum_ctx *ctx = NULL;
    pixsum_view vin, vout;
    size_t ow, oh;
    int st;
    int nd = PyArray_NDIM(in);
    if (!batch && !psb_check_unbatched("box_filter", nd, PyArray_DIMS(in)))
        goto done;
    if (!psb_call_view(in, &a, a.spatial, 0, "image", &vin))
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
    if (out_type == PIXSUM_TYPE_NONE)
        out_type = psb_box_default_type(vin.type, &spec, vin.width, vin.height);
    /* The input's layout: (H, W[, C]), a batch (N, H, W[, C]), or
     * channels-first (N, C, H, W) with the image axes last. */
    npy_intp shape[4];
    memcpy(shape, PyArray_DIMS(in), (size_t)nd * sizeof *shape);
    int row_axis = !batch ? 0 : a.channels_first ? 2 : 1;
    shape[row_axis] = (npy_intp)oh;
    shape[row_axis + 1] = (npy_intp)ow;
    if (!(res = psb_output(out, nd, shape, &out_type, "out")) ||
        !psb_call_view(res, &a, a.spatial, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_box_filter(ctx, &vin, &spec, &vout);
    Py_END_ALLOW_THREADS
    result = psb_hand_over(st, "box_filter", &res);
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
    {"integral_nd", KW py_integral_nd, METH_VARARGS | METH_KEYWORDS, integral_nd_doc},
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
    PSB_GPU_BOX_METHODS
    PSB_CARRY_METHODS
    PSB_THRESHOLD_METHODS
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "pixsum._core",
    "The C extension behind pixsum: zero-copy NumPy bindings of the pixsum C library.", -1,
    module_methods, NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (!psb_errors_init())
        return NULL;
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
