/*
 * carry.c - the bindings of the entry points that compute one piece of a
 * larger image with what the other pieces contribute, which pixsum.dask calls
 * on every chunk: integral_tile() (pixsum_integral_carry_tile(): the table of
 * one tile of a grid, continuing a carry row, the whole table's row above the
 * tile, and a carry column, each row's sum left of the tile) and
 * _equalize_counts() (pixsum_equalize_counts(): a chunk equalised by the whole
 * image's histogram). NumPy arrays only (views of the arrays' memory; small
 * strided carries and counts are copied contiguous).
 */
#include "binding.h"

#include <string.h>

/* Describes a carry (a row (W,)/(W, C) or a column (H,)/(H, C) of the image
 * (H, W)/(H, W, C)) as a one-row (`is_row`) or one-column table view (a
 * contiguous aligned copy when it is neither: carries are small).
 * Returns 1, or 0 with an exception set; `keep` receives the contiguous array
 * (a new reference, released after the call). */
static int tile_carry_view(PyObject *obj, PyArrayObject *image, int is_row, const char *what,
                           PyArrayObject **keep, pixsum_view *v)
{
    PyArrayObject *given = psb_as_array(obj, what);
    if (!given)
        return 0;
    PyArrayObject *a = (PyArrayObject *)PyArray_FromAny(
        (PyObject *)given, NULL, 0, 0, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED, NULL);
    Py_DECREF(given);
    if (!a)
        return 0;
    *keep = a;
    int nd = PyArray_NDIM(a), ind = PyArray_NDIM(image);
    npy_intp length = PyArray_DIMS(image)[is_row ? 1 : 0];
    int same = nd == ind - 1 && nd >= 1 && nd <= 2 && PyArray_DIMS(a)[0] == length &&
               (nd == 1 || PyArray_DIMS(a)[1] == PyArray_DIMS(image)[2]);
    if (!same) {
        char got[96], img[96];
        psb_shape_text(nd, PyArray_DIMS(a), got, sizeof got);
        psb_shape_text(ind, PyArray_DIMS(image), img, sizeof img);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "integral_tile: %s must have the shape of one image %s "
                 "(the image is %s), got %s", what, is_row ? "row" : "column", img, got);
        return 0;
    }
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(a));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype(what, PyArray_DESCR(a), "tables are uint32, uint64, int64, float32 or "
                                               "float64");
        return 0;
    }
    npy_intp item = PyArray_ITEMSIZE(a), channels = nd == 2 ? PyArray_DIMS(a)[1] : 1;
    npy_intp dims[3], strides[3];
    dims[0] = is_row ? 1 : length;
    dims[1] = is_row ? length : 1;
    dims[2] = channels;
    strides[2] = item;
    strides[1] = item * channels;
    strides[0] = is_row ? strides[1] * length : strides[1];
    return psb_view_raw(PyArray_DATA(a), t, nd + 1, dims, strides, 2, what, v);
}

PyObject *psb_py_integral_tile(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "carry_row", "carry_col", "carry_row_sq",
                             "carry_col_sq", "squared", "dtype", "sq_dtype", "method",
                             "threads", "wrap", "out", "out_sq", NULL};
    PyObject *image = NULL, *carries[4] = {NULL, NULL, NULL, NULL}, *dtype_obj = NULL,
             *sq_dtype_obj = NULL, *out = NULL, *out_sq = NULL;
    psb_opts o = {NULL, 0, 0, 0};
    int squared = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOOpOOznpOO:integral_tile", kwlist,
                                     &image, &carries[0], &carries[1], &carries[2],
                                     &carries[3], &squared, &dtype_obj, &sq_dtype_obj,
                                     &o.method, &o.threads, &o.wrap, &out, &out_sq))
        return NULL;
    for (int i = 0; i < 4; i++)
        if (carries[i] == Py_None)
            carries[i] = NULL;
    if (out == Py_None)
        out = NULL;
    if (out_sq == Py_None)
        out_sq = NULL;
    if (!squared && (carries[2] || carries[3] || out_sq))
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "integral_tile: carry_row_sq, carry_col_sq "
                        "and out_sq need squared=True");
    if (psb_array_kind_of(image) != PSB_HOST)
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "integral_tile: GPU arrays are not taken; "
                        "compute integral() of the tile and add the carries on the device");
    pixsum_type type = PIXSUM_TYPE_NONE, sq_type = PIXSUM_TYPE_NONE;
    if (!psb_dtype_arg(dtype_obj, &type) || !psb_dtype_arg(sq_dtype_obj, &sq_type))
        return NULL;
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    static const char *names[4] = {"carry_row", "carry_col", "carry_row_sq", "carry_col_sq"};
    PyArrayObject *keep[4] = {NULL, NULL, NULL, NULL}, *res = NULL, *res_sq = NULL;
    pixsum_view vin, vout, vsq, vc[4];
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    int nd = PyArray_NDIM(in);
    if (!psb_check_unbatched("integral_tile", nd, PyArray_DIMS(in)) ||
        !psb_view_of(in, 2, 0, "image", &vin))
        goto done;
    for (int i = 0; i < 4; i++)
        if (carries[i] &&
            !tile_carry_view(carries[i], in, !(i & 1), names[i], &keep[i], &vc[i]))
            goto done;
    /* the table keeps its carries' type; else the tile's own default */
    for (int i = 0; i < 2 && type == PIXSUM_TYPE_NONE && !out; i++)
        if (carries[i])
            type = vc[i].type;
    for (int i = 2; i < 4 && sq_type == PIXSUM_TYPE_NONE && !out_sq; i++)
        if (carries[i])
            sq_type = vc[i].type;
    size_t count = vin.width * vin.height;
    if (type == PIXSUM_TYPE_NONE && !out)
        type = pixsum_integral_type(vin.type, count, 0);
    if (squared && sq_type == PIXSUM_TYPE_NONE && !out_sq)
        sq_type = pixsum_integral_type(vin.type, count, 1);
    if (type == PIXSUM_TYPE_NONE && !out) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "integral_tile: image dtype %s is not an input type of "
                 "integral tables (uint8 uint16 int16 int32 uint32 float32 float64)",
                 psb_dtype_name(vin.type));
        goto done;
    }
    if (!(res = psb_output(out, nd, PyArray_DIMS(in), &type, "out")) ||
        (squared && !(res_sq = psb_output(out_sq, nd, PyArray_DIMS(in), &sq_type, "out_sq"))))
        goto done;
    if (!psb_view_of(res, 2, 1, "out", &vout) ||
        (res_sq && !psb_view_of(res_sq, 2, 1, "out_sq", &vsq)))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_integral_carry_tile(ctx, &vin, &vout, carries[0] ? &vc[0] : NULL,
                                    carries[1] ? &vc[1] : NULL, res_sq ? &vsq : NULL,
                                    carries[2] ? &vc[2] : NULL, carries[3] ? &vc[3] : NULL);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "integral_tile");
        goto done;
    }
    result = squared ? PyTuple_Pack(2, (PyObject *)res, (PyObject *)res_sq) : (PyObject *)res;
    if (!squared)
        Py_INCREF(result);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(res_sq);
    for (int i = 0; i < 4; i++)
        Py_XDECREF(keep[i]);
    Py_DECREF(in);
    return result;
}

const char psb_integral_tile_doc[] =
"integral_tile(image, *, carry_row=None, carry_col=None, carry_row_sq=None,\n"
"              carry_col_sq=None, squared=False, dtype=None, sq_dtype=None,\n"
"              method=None, threads=0, wrap=False, out=None, out_sq=None)\n"
"--\n\n"
"Integral table of one tile of an image cut into a grid of tiles\n"
"(pixsum_integral_carry_tile()), so that the tiles' tables put together are the\n"
"whole image's table, bit for bit on integer tables.\n\n"
"image: the tile, (H, W) or (H, W, C) with C = 1..4.\n"
"carry_row: (W,) or (W, C), the whole table's row just above the tile over\n"
"  its columns (None: zeros, a tile of the grid's top row).\n"
"carry_col: (H,) or (H, C), for each row of the tile the sum of that image\n"
"  row's pixels left of the tile (None: zeros, a tile of the left column).\n"
"carry_row_sq, carry_col_sq: the same for the squared table (squared=True).\n"
"Entry (y, x) = carry_row[x] + carry_col[0..y].sum() + the tile's own table.\n"
"The table takes dtype, else its carries' dtype, else the tile's default;\n"
"the overflow rule counts the carries (pixsum.OverflowError unless wrap).\n"
"Returns the table, or (table, squared table) with squared=True.\n"
"NumPy arrays only (GPU arrays: integral() of the tile plus the carries).";


#ifdef PSB_HAVE_HIST
PyObject *psb_py_equalize_counts(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "counts", "channels", "threads", "out", NULL};
    PyObject *image, *counts_obj, *out = NULL;
    int channels = 1;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$pnO:_equalize_counts", kwlist, &image,
                                     &counts_obj, &channels, &o.threads, &out))
        return NULL;
    if (out == Py_None)
        out = NULL;
    if (psb_array_kind_of(image) != PSB_HOST)
        return psb_fail(PIXSUM_ERR_UNSUPPORTED, "_equalize_counts: NumPy arrays only");
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *counts = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vout;
    if (!psb_hist_view(in, channels, 0, "image", &vin))
        goto done;
    counts = (PyArrayObject *)PyArray_FROMANY(counts_obj, NPY_UINT64, 1, 2,
                                              NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!counts)
        goto done;
    pixsum_type ot = vin.type;
    if (!(res = psb_output(out, PyArray_NDIM(in), PyArray_DIMS(in), &ot, "out")) ||
        !psb_hist_view(res, channels, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    const uint64_t *cp = (const uint64_t *)PyArray_DATA(counts);
    size_t n = (size_t)PyArray_SIZE(counts);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_equalize_counts(ctx, &vin, &vout, cp, n);
    Py_END_ALLOW_THREADS
    result = psb_hand_over(st, "equalize", &res);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(counts);
    Py_DECREF(in);
    return result;
}

const char psb_equalize_counts_doc[] =
"_equalize_counts(image, counts, *, channels=True, threads=0, out=None)\n"
"--\n\n"
"equalize() of a uint8/uint16 image (the same layouts) by a given histogram:\n"
"counts, (L,) or (C, L) uint64 with L = 256 or 65536, is the histogram of the\n"
"whole image the piece belongs to (pixsum_equalize_counts()). Used by\n"
"pixsum.dask.equalize on every chunk.";

PyObject *psb_py_hist_finish(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"counts", "pixels", "in_range", "relative", "cumulative",
                             "of_all_samples", NULL};
    PyObject *counts_obj, *in_range_obj;
    unsigned long long pixels;
    int relative = 0, cumulative = 0, all_samples = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OKO|$ppp:_hist_finish", kwlist,
                                     &counts_obj, &pixels, &in_range_obj, &relative,
                                     &cumulative, &all_samples))
        return NULL;
    PyArrayObject *counts = (PyArrayObject *)PyArray_FROMANY(
        counts_obj, NPY_UINT64, 1, 2, NPY_ARRAY_C_CONTIGUOUS | NPY_ARRAY_ALIGNED);
    if (!counts)
        return NULL;
    PyObject *result = NULL;
    pixsum_hist_info info;
    memset(&info, 0, sizeof info);
    int nd = PyArray_NDIM(counts);
    info.channels = nd == 2 ? (size_t)PyArray_DIMS(counts)[0] : 1;
    info.bins = (size_t)PyArray_DIMS(counts)[nd - 1];
    info.pixels = pixels;
    PyObject *seq = PySequence_Fast(in_range_obj, "_hist_finish: in_range must be a sequence");
    if (!seq)
        goto done;
    if ((size_t)PySequence_Fast_GET_SIZE(seq) != info.channels || info.channels > 4) {
        Py_DECREF(seq);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "_hist_finish: in_range has %zd values for %zu channels",
                 PySequence_Fast_GET_SIZE(seq), info.channels);
        goto done;
    }
    for (size_t c = 0; c < info.channels; c++)
        info.in_range[c] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, c));
    Py_DECREF(seq);
    if (PyErr_Occurred())
        goto done;
    PyArrayObject *res = (PyArrayObject *)PyArray_SimpleNew(
        nd, PyArray_DIMS(counts), relative ? NPY_FLOAT64 : NPY_UINT64);
    if (!res)
        goto done;
    const uint64_t *src = (const uint64_t *)PyArray_DATA(counts);
    int st = relative ? pixsum_hist_relative(&info, src,
                                             (cumulative ? PIXSUM_HIST_CUMULATIVE : 0u) |
                                                 (all_samples ? PIXSUM_HIST_OF_ALL_SAMPLES : 0u),
                                             (double *)PyArray_DATA(res))
             : cumulative ? pixsum_hist_cumulative(&info, src, (uint64_t *)PyArray_DATA(res))
                          : (memcpy(PyArray_DATA(res), src, PyArray_NBYTES(res)), PIXSUM_OK);
    if (st != PIXSUM_OK) {
        Py_DECREF(res);
        psb_fail_library(st, "histogram");
        goto done;
    }
    result = (PyObject *)res;
done:
    Py_DECREF(counts);
    return result;
}

const char psb_hist_finish_doc[] =
"_hist_finish(counts, pixels, in_range, *, relative=False, cumulative=False,\n"
"             of_all_samples=False)\n"
"--\n\n"
"The cumulative (pixsum_hist_cumulative()) and relative\n"
"(pixsum_hist_relative()) forms of uint64 counts, (bins,) or (C, bins), whose\n"
"pixels and per-channel in_range tallies are given: what histogram() returns\n"
"for those options. Used by pixsum.dask.histogram on counts summed over chunks.";
#endif /* PSB_HAVE_HIST */
