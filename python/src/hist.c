/*
 * hist.c - the histogram functions of pixsum._core: histogram() (NumPy's
 * edges, closed last bin, weights, density and scikit-image's bin centres
 * included), histogram2d(), equalize() (integer and float images) and Otsu,
 * over section 8 of include/pixsum.h.
 *
 * Images are read in place (any row/slice stride, as in module.c); counts are
 * uint64 and never wrap. Bins are half-open [lo, hi) with the library's one
 * binning formula, so counts are identical on every backend. The GIL is
 * released while the library reads the image. GPU arrays are handed to
 * pixsum/_gpu.py (see gpu.c), which counts them on the device.
 *
 * Array shapes: 1-D (N,), 2-D (H, W), 3-D (H, W, C) with channels=True (the
 * default) or (D, H, W) with channels=False, 4-D (D, H, W, C).
 */
#include "binding.h"

#ifdef PSB_HAVE_HIST

#include <math.h>
#include <string.h>

/* Describes `a` for a histogram: all axes spatial except a trailing channel
 * axis (when `channels` and ndim >= 3, or ndim == 4). */
int psb_hist_view(PyArrayObject *a, int channels, int writable, const char *what,
                  pixsum_view *v)
{
    int nd = PyArray_NDIM(a);
    if (nd == 1) {
        pixsum_type t = psb_type_of_descr(PyArray_DESCR(a));
        npy_intp n = PyArray_DIMS(a)[0];
        if (t == PIXSUM_TYPE_NONE) {
            psb_fail_dtype(what, PyArray_DESCR(a), NULL);
            return 0;
        }
        if (n == 0) {
            psb_fail(PIXSUM_ERR_BAD_SHAPE, "%s is empty", what);
            return 0;
        }
        if (n > 1 && PyArray_STRIDES(a)[0] != (npy_intp)PyArray_ITEMSIZE(a)) {
            psb_fail(PIXSUM_ERR_BAD_STRIDE, "%s: a 1-D array must be contiguous to be read in "
                     "place; pass numpy.ascontiguousarray(%s)", what, what);
            return 0;
        }
        if (writable && !PyArray_ISWRITEABLE(a)) {
            psb_fail(PIXSUM_ERR_INVALID_ARG, "%s is read-only", what);
            return 0;
        }
        *v = pixsum_view_2d(PyArray_DATA(a), t, (size_t)n, 1, 1, 0);
        return 1;
    }
    int spatial = nd == 4 ? 3 : (nd == 3 && !channels) ? 3 : 2;
    return psb_view_of(a, spatial, writable, what, v);
}

/* Reads an optional mask (bool or uint8, the image's spatial shape) as a u8
 * view in place; *keep holds the array (NULL for None). Returns 1 or 0 with an
 * exception set. */
int psb_mask_view(PyObject *mask, const pixsum_view *img, PyArrayObject **keep,
                  pixsum_view *v)
{
    *keep = NULL;
    if (!mask || mask == Py_None)
        return 0 + 1;
    PyArrayObject *m = psb_as_array(mask, "mask");
    if (!m)
        return 0;
    PyArray_Descr *d = PyArray_DESCR(m);
    if (!((d->kind == 'b' || d->kind == 'u') && PyDataType_ELSIZE(d) == 1)) {
        Py_DECREF(m);
        psb_fail(PIXSUM_ERR_BAD_TYPE, "mask must be bool or uint8");
        return 0;
    }
    int nd = PyArray_NDIM(m);
    npy_intp *dims = PyArray_DIMS(m), *st = PyArray_STRIDES(m);
    size_t w = nd >= 1 ? (size_t)dims[nd - 1] : 0;
    size_t h = nd >= 2 ? (size_t)dims[nd - 2] : 1;
    size_t dd = nd == 3 ? (size_t)dims[0] : 1;
    if (nd < 1 || nd > 3 || w != img->width || h != img->height || dd != img->depth) {
        char shape[96];
        psb_shape_text(nd, dims, shape, sizeof shape);
        Py_DECREF(m);
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "mask of shape %s does not match the image's "
                 "%zux%zux%zu (depth x height x width)", shape, img->depth, img->height,
                 img->width);
        return 0;
    }
    if (w > 1 && st[nd - 1] != 1) {
        Py_DECREF(m);
        psb_fail(PIXSUM_ERR_BAD_STRIDE, "mask: its columns are not contiguous, so it cannot "
                 "be read in place; pass numpy.ascontiguousarray(mask)");
        return 0;
    }
    ptrdiff_t rs = nd >= 2 && h > 1 ? (ptrdiff_t)st[nd - 2] : (ptrdiff_t)w;
    ptrdiff_t ss = nd == 3 && dd > 1 ? (ptrdiff_t)st[0] : (ptrdiff_t)h * (rs < 0 ? -rs : rs);
    /* field by field: a broadcast mask's stride 0 must stay 0 (refused by the
     * library), not become "packed" as pixsum_view_3d() would read it */
    memset(v, 0, sizeof *v);
    v->data = PyArray_DATA(m);
    v->type = PIXSUM_U8;
    v->width = w;
    v->height = h;
    v->depth = dd;
    v->channels = 1;
    v->row_stride = rs;
    v->slice_stride = ss;
    *keep = m;
    return 1;
}

/* Reads bins (None or int >= 1) into *bins (0 = default). */
static int parse_bins(PyObject *obj, size_t *bins, const char *what)
{
    *bins = 0;
    if (!obj || obj == Py_None)
        return 1;
    Py_ssize_t b = PyLong_AsSsize_t(obj);
    if (b == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s must be an int or None", what);
        return 0;
    }
    if (b < 1) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s must be >= 1, got %zd", what, b);
        return 0;
    }
    *bins = (size_t)b;
    return 1;
}

/* Reads a range (None or a pair lo < hi of finite numbers). */
static int parse_range(PyObject *obj, double *lo, double *hi, const char *what)
{
    *lo = *hi = 0;
    if (!obj || obj == Py_None)
        return 1;
    if (!PySequence_Check(obj) || PySequence_Size(obj) != 2) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s must be a pair (lo, hi) or None", what);
        return 0;
    }
    PyObject *a = PySequence_GetItem(obj, 0), *b = PySequence_GetItem(obj, 1);
    *lo = a ? PyFloat_AsDouble(a) : -1;
    *hi = b ? PyFloat_AsDouble(b) : -1;
    Py_XDECREF(a);
    Py_XDECREF(b);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s must hold two numbers", what);
        return 0;
    }
    if (!(isfinite(*lo) && isfinite(*hi) && *lo < *hi)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "%s must be finite with lo < hi, got (%g, %g)", what,
                 *lo, *hi);
        return 0;
    }
    return 1;
}

/* A zeroed spec with histogram()'s bins and range arguments. Returns 1, or 0
 * with an exception set. */
int psb_parse_hist_spec(PyObject *bins_obj, PyObject *range_obj, pixsum_hist_spec *spec)
{
    memset(spec, 0, sizeof *spec);
    return parse_bins(bins_obj, &spec->bins, "bins") &&
           parse_range(range_obj, &spec->lo, &spec->hi, "range");
}

/* The bins + 1 bin edges as a float64 array: the library's pixsum_hist_edge(),
 * the values that decide the bins. */
PyObject *psb_edges_array(size_t bins, double lo, double hi)
{
    npy_intp n = (npy_intp)bins + 1;
    PyArrayObject *e = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    if (!e)
        return NULL;
    double *p = PyArray_DATA(e);
    for (size_t i = 0; i <= bins; i++)
        p[i] = pixsum_hist_edge(bins, lo, hi, i);
    return (PyObject *)e;
}

/* A list of the first n entries of v. */
static PyObject *u64_list(const uint64_t *v, size_t n)
{
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(v[i]);
        if (!x) {
            Py_DECREF(l);
            return NULL;
        }
        PyList_SET_ITEM(l, (Py_ssize_t)i, x);
    }
    return l;
}

const char psb_histogram_doc[] =
"histogram(image, *, bins=None, range=None, mask=None, relative=False,\n"
"          cumulative=False, of_all_samples=False, channels=True, method='auto',\n"
"          threads=0, out=None, info=False, batch=False, range_per_image=False,\n"
"          closed_last=False, weights=None, density=False, return_centers=False,\n"
"          f32_edges=False, channel_axis=None)\n"
"--\n\n"
"Histogram of every channel of an image, counted in one pass, read in place.\n\n"
"image: (N,), (H, W), (H, W, C) or (D, H, W, C) (with channels=False a 3-D\n"
"  array is a volume (D, H, W)); dtype uint8, uint16, int16, int32, uint32,\n"
"  float32 or float64 (uint32 on the host only); any row stride.\n"
"bins, range: `bins` equal half-open bins over [lo, hi) = range, defined by\n"
"  their edges e[i] = lo + i * ((hi - lo) / bins), e[bins] = hi (info['edges'],\n"
"  NumPy's linspace): bin i holds exactly the samples e[i] <= v < e[i + 1];\n"
"  v < lo and v >= hi are in no bin (see info), NaN neither. Defaults: uint8\n"
"  256 bins over [0, 256), uint16 and int16 65536 unit bins, int32 and uint32\n"
"  256 bins over [min, max + 1), floats 256 bins over [min, next double above max) of\n"
"  the finite samples (the maximum is in the last bin).\n"
"mask: bool or uint8 array of the image's spatial shape; only pixels where it\n"
"  is non-zero are counted.\n"
"relative: divide by the samples counted in bins (float64; the bins sum to 1);\n"
"  with of_all_samples=True divide by all selected pixels instead.\n"
"cumulative: cumulative histogram H_k = sum of h_i over i <= k.\n"
"method: 'auto' or a histogram method from pixsum.methods() (e.g. 'hist.scalar').\n"
"out: an existing array for the counts (uint64, or float64 when relative).\n"
"info: also return a dict with bins, lo, hi, edges, pixels and per-channel\n"
"  in_range, below, above and nan counts.\n\n"
"NumPy's options (one image, host arrays; pixsum_histogram_edges/_weighted):\n"
"bins: also a 1-D array of B + 1 non-decreasing edges (NumPy's bins=array;\n"
"  range must then be None): bin i holds e[i] <= v < e[i + 1], found by\n"
"  binary search; NaN, v < e[0] and v >= e[B] are in no bin. -inf/+inf edges\n"
"  are allowed.\n"
"closed_last: the last bin also holds v == its upper edge, as np.histogram's\n"
"  (with range=(min, max) this is NumPy's and scikit-image's float binning).\n"
"weights: an array of the image's shape (or of its spatial shape, for every\n"
"  channel): each bin gets the float64 sum of its samples' weights.\n"
"density: NumPy's density, counts (or weight sums) / bin width / their total.\n"
"return_centers: also return the bin centres (e[i] + e[i + 1]) / 2 as\n"
"  skimage.exposure.histogram does: (hist, centers[, info]).\n"
"f32_edges: for a float32 image and bins given as a count, NumPy's float32\n"
"  edges (each rounded to float32) and centres (computed in float32). With\n"
"  closed_last and range=(min, max), np.histogram's counts bit for bit.\n"
"With weights or density the result is float64.\n\n"
"batch: read axis 0 as N independent images, (N, H, W) or (N, H, W, C), and\n"
"  return N histograms, (N, bins) or (N, C, bins), in one call\n"
"  (pixsum_histogram_batch(), images spread over the threads). They share one\n"
"  range, so they compare: where it defaults to the data's (int32, uint32,\n"
"  floats),\n"
"  it covers the whole stack, or each image's own with range_per_image=True.\n"
"  mask: (H, W) for every image or (N, H, W), one per image. info then holds\n"
"  per-image lists (lo, hi and edges too with range_per_image=True).\n"
"  GPU arrays: one launch for uint8 stacks (pixsum_cuda_histogram_batch());\n"
"  channel_axis=1 reads PyTorch's (N, C, H, W) as N x C one-channel images\n"
"  (counts (N, C, bins)); int32/float stacks need range= with\n"
"  range_per_image=True.\n\n"
"Returns uint64 counts of shape (bins,) for one channel, (C, bins) for an image\n"
"with a channel axis (float64 when relative), or (counts, info) with info=True.\n"
"The counts never wrap, and every method (CPU and GPU) gives identical counts.\n\n"
"GPU arrays (CuPy, PyTorch, DLPack) are counted on the device (cuda.hist) on\n"
"the caller's stream, without a host copy; the counts are an array of the\n"
"input's library (PyTorch: uint64 where it has it, else int64 with the same\n"
"values), the mask and out= must be GPU arrays, at most 65536 bins. No\n"
"synchronisation, except: info=True (its counts are Python ints), and\n"
"int32/float32/float64 images without range= (the data's minimum and maximum\n"
"are reduced on the device and read back). method: 'auto' or 'cuda.hist'.";

/* The counts array of histogram(): `out` (uint64, or float64 when relative;
 * writable and C-contiguous) or a new one of that shape. Returns a new
 * reference, or NULL with an exception set. */
static PyArrayObject *counts_output(PyObject *out, int nd, const npy_intp *shape, int relative)
{
    pixsum_type want = relative ? PIXSUM_F64 : PIXSUM_U64, ot = want;
    PyArrayObject *res = psb_output(out, nd, shape, &ot, "out");
    if (res && (ot != want || !PyArray_IS_C_CONTIGUOUS(res) || !PyArray_ISWRITEABLE(res))) {
        Py_DECREF(res);
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "out must be a writable C-contiguous %s array",
                        relative ? "float64" : "uint64");
    }
    return res;
}

/* Per-image info of a batch: the dict of histogram(info=True) with a list per
 * field (one entry per image); lo, hi and edges are shared unless per_image. */
static PyObject *batch_info(const pixsum_hist_info *infos, size_t n, int per_image)
{
    PyObject *d = PyDict_New();
    const char *names[] = {"pixels", "in_range", "below", "above", "nan", "lo", "hi", "edges"};
    PyObject *lists[8] = {NULL};
    int ok = d != NULL;
    for (int k = 0; ok && k < 8; k++)
        ok = (lists[k] = PyList_New((Py_ssize_t)n)) != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        const pixsum_hist_info *f = &infos[i];
        PyObject *items[8] = {
            PyLong_FromUnsignedLongLong(f->pixels), u64_list(f->in_range, f->channels),
            u64_list(f->below, f->channels),        u64_list(f->above, f->channels),
            u64_list(f->nan, f->channels),          PyFloat_FromDouble(f->lo),
            PyFloat_FromDouble(f->hi),              psb_edges_array(f->bins, f->lo, f->hi)};
        for (int k = 0; k < 8; k++) {
            if (!items[k])
                ok = 0;
            if (lists[k] && items[k])
                PyList_SET_ITEM(lists[k], (Py_ssize_t)i, items[k]);
            else
                Py_XDECREF(items[k]);
        }
    }
    for (int k = 0; ok && k < 8; k++) {
        if (!per_image && k >= 5) { /* one range for the batch */
            PyObject *first = PyList_GET_ITEM(lists[k], 0);
            ok = PyDict_SetItemString(d, names[k], first) == 0;
        } else {
            ok = PyDict_SetItemString(d, names[k], lists[k]) == 0;
        }
    }
    if (ok) {
        PyObject *b = PyLong_FromSize_t(infos[0].bins), *c = PyLong_FromSize_t(infos[0].channels);
        ok = b && c && PyDict_SetItemString(d, "bins", b) == 0 &&
             PyDict_SetItemString(d, "channels", c) == 0;
        Py_XDECREF(b);
        Py_XDECREF(c);
    }
    for (int k = 0; k < 8; k++)
        Py_XDECREF(lists[k]);
    if (!ok)
        Py_CLEAR(d);
    return d;
}

/* histogram(..., batch=True): N images of a stack, N histograms. */
static PyObject *histogram_batch(PyArrayObject *in, const pixsum_hist_spec *spec_in,
                                 PyObject *mask_obj, int relative, int cumulative,
                                 int all_samples, int per_image, const psb_opts *o,
                                 PyObject *out, int want_info)
{
    pixsum_hist_spec spec = *spec_in;
    PyArrayObject *mask = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    uint64_t *counts = NULL;
    pixsum_hist_info *infos = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vmask;
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(in));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype("image", PyArray_DESCR(in), NULL);
        return NULL;
    }
    if (!psb_batch_view(PyArray_DATA(in), t, PyArray_NDIM(in), PyArray_DIMS(in),
                        PyArray_STRIDES(in), 0, "image", &vin))
        return NULL;
    if (mask_obj && mask_obj != Py_None) {
        /* (H, W): one mask for every image; (N, H, W): one per image */
        PyArrayObject *m = psb_as_array(mask_obj, "mask");
        if (!m)
            return NULL;
        pixsum_view shape = vin;
        if (PyArray_NDIM(m) == 2)
            shape.depth = 1;
        Py_DECREF(m);
        if (!psb_mask_view(mask_obj, &shape, &mask, &vmask))
            return NULL;
        spec.mask = &vmask;
    }
    size_t n = vin.depth, bins;
    /* the output's bins, from the spec alone: the batch call reads the data once */
    int st = pixsum_hist_bins(&vin, &spec, &bins);
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    npy_intp shape[3];
    int nd = 0;
    shape[nd++] = (npy_intp)n;
    if (PyArray_NDIM(in) == 4)
        shape[nd++] = (npy_intp)vin.channels;
    shape[nd++] = (npy_intp)bins;
    if (!(res = counts_output(out, nd, shape, relative)))
        goto done;
    if (!(ctx = psb_make_ctx(o)))
        goto done;
    size_t per = vin.channels * bins;
    infos = PyMem_RawCalloc(n, sizeof *infos);
    if (relative)
        counts = PyMem_RawMalloc(n * per * sizeof *counts);
    if (!infos || (relative && !counts)) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *dst = relative ? counts : (uint64_t *)PyArray_DATA(res);
    unsigned flags = (cumulative ? PIXSUM_HIST_CUMULATIVE : 0u) |
                     (all_samples ? PIXSUM_HIST_OF_ALL_SAMPLES : 0u);
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_histogram_batch(ctx, &vin, &spec, per_image ? PIXSUM_HIST_RANGE_PER_IMAGE : 0,
                                dst, n * per, infos);
    for (size_t i = 0; st == PIXSUM_OK && i < n; i++) {
        if (relative)
            st = pixsum_hist_relative(&infos[i], counts + i * per, flags,
                                      (double *)PyArray_DATA(res) + i * per);
        else if (cumulative)
            st = pixsum_hist_cumulative(&infos[i], dst + i * per, dst + i * per);
    }
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    if (want_info) {
        PyObject *d = batch_info(infos, n, per_image);
        if (d)
            result = Py_BuildValue("(ON)", (PyObject *)res, d);
    } else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    PyMem_RawFree(counts);
    PyMem_RawFree(infos);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    return result;
}

/* True when histogram()'s bins is an array of edges rather than a count. */
static int bins_are_edges(PyObject *obj)
{
    if (!obj || obj == Py_None)
        return 0;
    if (PyArray_Check(obj)) /* arrays have __index__; a 0-d one is a count */
        return PyArray_NDIM((PyArrayObject *)obj) != 0;
    return !PyIndex_Check(obj) && PySequence_Check(obj);
}

/* histogram()'s bins as edges: a new contiguous float64 1-D array, or NULL
 * with an exception set. The library checks their order and count. */
static PyArrayObject *parse_edges(PyObject *obj)
{
    if (PyUnicode_Check(obj) || PyBytes_Check(obj))
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "bins must be an int, None or a 1-D array of "
                        "edges; NumPy's bin estimators ('auto', ...) are not supported");
    PyArrayObject *e = (PyArrayObject *)PyArray_FROMANY(
        obj, NPY_FLOAT64, 0, 0, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!e) {
        PyErr_Clear();
        return psb_fail(PIXSUM_ERR_INVALID_ARG,
                        "bins must be an int, None or a 1-D array of numbers (the edges)");
    }
    if (PyArray_NDIM(e) != 1 || PyArray_DIM(e, 0) < 2) {
        int nd = PyArray_NDIM(e);
        npy_intp n = nd == 1 ? PyArray_DIM(e, 0) : 0;
        Py_DECREF(e);
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "bins as edges must be a 1-D array of at least "
                        "2 edges, got %s%zd", nd == 1 ? "" : "an array of dimension ",
                        nd == 1 ? (Py_ssize_t)n : (Py_ssize_t)nd);
    }
    return e;
}

/* The info dict of one histogram, with `edges` (a new reference, stolen). */
static PyObject *single_info(const pixsum_hist_info *info, PyObject *edges)
{
    size_t c = info->channels;
    if (!edges)
        return NULL;
    return Py_BuildValue("{s:n,s:n,s:d,s:d,s:N,s:K,s:N,s:N,s:N,s:N}", "bins",
                         (Py_ssize_t)info->bins, "channels", (Py_ssize_t)c, "lo", info->lo,
                         "hi", info->hi, "edges", edges, "pixels",
                         (unsigned long long)info->pixels, "in_range",
                         u64_list(info->in_range, c), "below", u64_list(info->below, c),
                         "above", u64_list(info->above, c), "nan", u64_list(info->nan, c));
}

/* f32_edges= of histogram() and threshold_otsu(): a truth value, read as
 * PIXSUM_HIST_F32_EDGES. Returns 1, or 0 with an exception set. */
static int parse_f32_edges(PyObject *obj, unsigned *flags)
{
    int t = obj ? PyObject_IsTrue(obj) : 0;
    if (t < 0)
        return 0;
    *flags = t ? PIXSUM_HIST_F32_EDGES : 0u;
    return 1;
}

/* What histogram() was asked for, beyond bins and range. */
typedef struct hist_request {
    PyArrayObject *edges; /* bins as edges, or NULL */
    PyObject *mask, *weights, *out;
    int relative, cumulative, all_samples, channels, want_info;
    int closed_last, density, centers;
    unsigned f32_edges; /* PIXSUM_HIST_F32_* flags */
} hist_request;

/* histogram() of one host image: the uniform bins of the library's fast
 * path, or (edges, closed_last, weights) bins decided by their edges
 * (pixsum_histogram_edges / _weighted); then relative, cumulative or
 * density, the centres and the info. */
static PyObject *histogram_one(PyArrayObject *in, pixsum_hist_spec *spec,
                               const hist_request *rq, const psb_opts *o)
{
    PyArrayObject *mask = NULL, *weights = NULL, *res = NULL, *edges = NULL;
    pixsum_ctx *ctx = NULL;
    uint64_t *counts = NULL;
    double *sums = NULL;
    PyObject *result = NULL, *centers = NULL;
    pixsum_view vin, vmask, vweights;
    const int f32 = rq->f32_edges && !rq->edges && PyArray_TYPE(in) == NPY_FLOAT32;
    const unsigned f32_flag = f32 ? rq->f32_edges : 0u;
    const int by_edges = rq->edges || rq->closed_last || f32 ||
                         (rq->weights && rq->weights != Py_None);
    const int weighted = rq->weights && rq->weights != Py_None;
    if (rq->density && (rq->relative || rq->cumulative))
        return psb_fail(PIXSUM_ERR_INVALID_ARG,
                        "histogram: density=True is neither relative nor cumulative");
    if (weighted && (rq->relative || rq->cumulative))
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "histogram: relative and cumulative divide or "
                        "add counts; with weights= use density=True or the sums");
    if (!psb_hist_view(in, rq->channels, 0, "image", &vin) ||
        !psb_mask_view(rq->mask, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec->mask = &vmask;
    if (weighted) {
        if (!(weights = psb_as_array(rq->weights, "weights")) ||
            !psb_hist_view(weights, rq->channels, 0, "weights", &vweights))
            goto done;
    }
    pixsum_hist_info info;
    memset(&info, 0, sizeof info);
    int st = PIXSUM_OK;
    if (rq->edges) {
        edges = rq->edges;
        Py_INCREF(edges);
        info.bins = (size_t)PyArray_DIM(edges, 0) - 1;
        info.channels = vin.channels;
    } else {
        Py_BEGIN_ALLOW_THREADS
        st = pixsum_hist_resolve(&vin, spec, &info);
        Py_END_ALLOW_THREADS
        if (st != PIXSUM_OK) {
            psb_fail_library(st, "histogram");
            goto done;
        }
        if (by_edges) {
            npy_intp ne = (npy_intp)info.bins + 1;
            if (!(edges = (PyArrayObject *)PyArray_SimpleNew(1, &ne, NPY_FLOAT64)))
                goto done;
            st = pixsum_hist_uniform_edges(info.bins, info.lo, info.hi, f32_flag,
                                           PyArray_DATA(edges));
            if (st != PIXSUM_OK) {
                psb_fail_library(st, "histogram");
                goto done;
            }
        }
        /* pin the resolved range: the data is not scanned again */
        spec->bins = info.bins;
        spec->lo = info.lo;
        spec->hi = info.hi;
    }
    int has_channels = PyArray_NDIM(in) == 4 || (PyArray_NDIM(in) == 3 && rq->channels);
    npy_intp shape[2];
    int nd = 0;
    if (has_channels)
        shape[nd++] = (npy_intp)info.channels;
    shape[nd++] = (npy_intp)info.bins;
    const int float_out = rq->relative || rq->density || weighted;
    if (!(res = counts_output(rq->out, nd, shape, float_out)))
        goto done;
    if (!(ctx = psb_make_ctx(o)))
        goto done;
    size_t n = info.channels * info.bins;
    if ((!weighted && float_out && !(counts = PyMem_RawMalloc(n * sizeof *counts))) ||
        (weighted && rq->density && !(sums = PyMem_RawMalloc(n * sizeof *sums)))) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *dst = counts ? counts : (uint64_t *)PyArray_DATA(res);
    double *wdst = sums ? sums : (double *)PyArray_DATA(res);
    const double *e = edges ? (const double *)PyArray_DATA(edges) : NULL;
    pixsum_hist_edges_spec es;
    memset(&es, 0, sizeof es);
    es.edges = e;
    es.n_edges = info.bins + 1;
    es.flags = rq->closed_last ? PIXSUM_HIST_CLOSED_LAST : 0u;
    es.mask = spec->mask;
    es.weights = weighted ? &vweights : NULL;
    if (rq->centers) {
        npy_intp nb = (npy_intp)info.bins;
        if (!(centers = PyArray_SimpleNew(1, &nb, NPY_FLOAT64)))
            goto done;
    }
    Py_BEGIN_ALLOW_THREADS
    if (weighted)
        st = pixsum_histogram_weighted(ctx, &vin, &es, wdst, n, &info);
    else if (by_edges)
        st = pixsum_histogram_edges(ctx, &vin, &es, dst, n, &info);
    else
        st = pixsum_histogram(ctx, &vin, spec, dst, n, &info);
    if (st == PIXSUM_OK && rq->density)
        st = pixsum_hist_density(&info, e, weighted ? NULL : dst, weighted ? wdst : NULL,
                                 PyArray_DATA(res));
    else if (st == PIXSUM_OK && rq->relative)
        st = pixsum_hist_relative(&info, counts,
                                  (rq->cumulative ? PIXSUM_HIST_CUMULATIVE : 0u) |
                                      (rq->all_samples ? PIXSUM_HIST_OF_ALL_SAMPLES : 0u),
                                  PyArray_DATA(res));
    else if (st == PIXSUM_OK && rq->cumulative)
        st = pixsum_hist_cumulative(&info, dst, dst);
    if (st == PIXSUM_OK && centers)
        st = pixsum_hist_centers(&info, e, f32_flag & PIXSUM_HIST_F32_EDGES,
                                 PyArray_DATA((PyArrayObject *)centers));
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    PyObject *d = NULL;
    if (rq->want_info) {
        PyObject *eobj = edges ? (PyObject *)edges : psb_edges_array(info.bins, info.lo, info.hi);
        if (edges)
            Py_INCREF(eobj);
        if (!(d = single_info(&info, eobj)))
            goto done;
    }
    if (centers && d)
        result = Py_BuildValue("(OON)", (PyObject *)res, centers, d);
    else if (centers)
        result = Py_BuildValue("(OO)", (PyObject *)res, centers);
    else if (d)
        result = Py_BuildValue("(ON)", (PyObject *)res, d);
    else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    PyMem_RawFree(counts);
    PyMem_RawFree(sums);
    Py_XDECREF(centers);
    Py_XDECREF(res);
    Py_XDECREF(edges);
    Py_XDECREF(weights);
    Py_XDECREF(mask);
    return result;
}

/* kwargs without the keys the GPU path does not read, when they hold their
 * defaults (a new reference; NULL stays NULL). */
static PyObject *kwargs_for_gpu(PyObject *kwargs, const char *const *drop)
{
    if (!kwargs)
        return NULL;
    PyObject *k = PyDict_Copy(kwargs);
    for (int i = 0; k && drop[i]; i++)
        if (PyDict_GetItemString(k, drop[i]) && PyDict_DelItemString(k, drop[i]) != 0)
            Py_CLEAR(k);
    return k;
}

PyObject *psb_py_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "bins", "range", "mask", "relative", "cumulative",
                             "of_all_samples", "channels", "method", "threads", "out",
                             "info", "batch", "range_per_image", "closed_last", "weights",
                             "density", "return_centers", "f32_edges", "channel_axis", NULL};
    static const char *const host_only[] = {"closed_last", "weights", "density",
                                            "return_centers", "f32_edges", NULL};
    PyObject *image, *bins_obj = NULL, *range_obj = NULL, *f32_obj = NULL,
             *channel_axis = Py_None;
    hist_request rq;
    memset(&rq, 0, sizeof rq);
    rq.channels = 1;
    int batch = 0, per_image = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOppppznOppppOppOO:histogram", kwlist,
                                     &image, &bins_obj, &range_obj, &rq.mask, &rq.relative,
                                     &rq.cumulative, &rq.all_samples, &rq.channels, &o.method,
                                     &o.threads, &rq.out, &rq.want_info, &batch, &per_image,
                                     &rq.closed_last, &rq.weights, &rq.density, &rq.centers,
                                     &f32_obj, &channel_axis))
        return NULL;
    if (!parse_f32_edges(f32_obj, &rq.f32_edges))
        return NULL;
    pixsum_hist_spec spec;
    memset(&spec, 0, sizeof spec);
    if (bins_are_edges(bins_obj)) {
        if (range_obj && range_obj != Py_None)
            return psb_fail(PIXSUM_ERR_INVALID_ARG,
                            "histogram: range is not read when bins are edges; leave it None");
        if (!(rq.edges = parse_edges(bins_obj)))
            return NULL;
    } else if (!psb_parse_hist_spec(bins_obj, range_obj, &spec)) {
        return NULL;
    }
    const int weighted = rq.weights && rq.weights != Py_None;
    const int extended = rq.edges || rq.closed_last || weighted || rq.density || rq.centers ||
                         rq.f32_edges;
    PyObject *result = NULL;
    if (per_image && !batch) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "histogram: range_per_image is read with batch=True only");
        goto done;
    }
    if (batch && extended) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "histogram: bins as edges, closed_last, weights, "
                 "density and return_centers are for one image, not batch=True");
        goto done;
    }
    if (channel_axis != Py_None && !(batch && psb_is_gpu_array(image))) {
        psb_fail(PIXSUM_ERR_INVALID_ARG,
                 "histogram: channel_axis is read with batch=True for GPU arrays (channel_axis=1: "
                 "(N, C, H, W)); for a host stack pass (N, H, W, C)");
        goto done;
    }
    if (psb_is_gpu_array(image)) {
        /* batch=True (with range_per_image and channel_axis) goes through
         * with the other keywords (pixsum/_gpu_hist.py) */
        if (extended)
            psb_fail(PIXSUM_ERR_UNSUPPORTED,
                     "histogram of a GPU array: bins as edges, closed_last, weights, density "
                     "and return_centers are not available on the GPU yet; pass the host copy");
        else {
            PyObject *k = kwargs_for_gpu(kwargs, host_only);
            if (!kwargs || k)
                result = psb_gpu_dispatch("histogram", args, k);
            Py_XDECREF(k);
        }
        goto done;
    }
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        goto done;
    if (batch) {
        if (!rq.channels)
            psb_fail(PIXSUM_ERR_INVALID_ARG,
                     "histogram: batch=True reads (N, H, W) or (N, H, W, C); "
                     "channels=False does not apply");
        else
            result = histogram_batch(in, &spec, rq.mask, rq.relative, rq.cumulative,
                                     rq.all_samples, per_image, &o, rq.out, rq.want_info);
    } else {
        result = histogram_one(in, &spec, &rq, &o);
    }
    Py_DECREF(in);
done:
    Py_XDECREF(rq.edges);
    return result;
}

/* Reads histogram2d's bins: None, an int, or a pair. */
static int parse_bins_pair(PyObject *obj, size_t *a, size_t *b)
{
    if (obj && obj != Py_None && !PyLong_Check(obj)) {
        if (!PySequence_Check(obj) || PySequence_Size(obj) != 2) {
            PyErr_Clear();
            psb_fail(PIXSUM_ERR_INVALID_ARG, "bins must be None, an int or a pair");
            return 0;
        }
        PyObject *x = PySequence_GetItem(obj, 0), *y = PySequence_GetItem(obj, 1);
        int ok = x && y && parse_bins(x, a, "bins[0]") && parse_bins(y, b, "bins[1]");
        Py_XDECREF(x);
        Py_XDECREF(y);
        return ok;
    }
    if (!parse_bins(obj, a, "bins"))
        return 0;
    *b = *a;
    return 1;
}

/* Reads histogram2d's range: None or ((lo_a, hi_a), (lo_b, hi_b)); either
 * inner pair may be None. */
static int parse_range_pair(PyObject *obj, pixsum_hist_spec *sa, pixsum_hist_spec *sb)
{
    if (!obj || obj == Py_None)
        return 1;
    if (!PySequence_Check(obj) || PySequence_Size(obj) != 2) {
        PyErr_Clear();
        psb_fail(PIXSUM_ERR_INVALID_ARG, "range must be None or ((lo_a, hi_a), (lo_b, hi_b))");
        return 0;
    }
    PyObject *x = PySequence_GetItem(obj, 0), *y = PySequence_GetItem(obj, 1);
    int ok = x && y && parse_range(x, &sa->lo, &sa->hi, "range[0]") &&
             parse_range(y, &sb->lo, &sb->hi, "range[1]");
    Py_XDECREF(x);
    Py_XDECREF(y);
    return ok;
}

const char psb_histogram2d_doc[] =
"histogram2d(a, b, *, bins=None, range=None, mask=None, method='auto', threads=0,\n"
"            out=None, info=False)\n"
"--\n\n"
"Joint histogram of two one-channel images of the same shape (dtypes may\n"
"differ): counts[i, j] = number of pixels whose `a` sample is in bin i and\n"
"whose `b` sample is in bin j (half-open bins as in histogram()).\n\n"
"a, b: (N,), (H, W) or (D, H, W) arrays, read in place.\n"
"bins: int or pair (bins_a, bins_b); default 256 each.\n"
"range: ((lo_a, hi_a), (lo_b, hi_b)), either pair may be None; default: uint8\n"
"  [0, 256), uint16 [0, 65536), others the data range.\n"
"mask: bool/uint8 array of the images' shape; only non-zero pixels count.\n"
"Pairs with either sample outside its range (or NaN) are not counted.\n"
"out: an existing C-contiguous uint64 array of shape (bins_a, bins_b).\n"
"info: also return a dict with the ranges, edges, pairs, excluded, and the\n"
"  entropies and mutual information (nats) of the table.\n\n"
"Returns uint64 counts of shape (bins_a, bins_b), or (counts, info).\n\n"
"GPU arrays: a and b (and the mask) on the GPU, counted on the device on the\n"
"caller's stream into an array of the input's library (as histogram()); at\n"
"most 65536 bins per axis. info=True copies the table to the host for the\n"
"entropies (a synchronisation), as do int32/float images without a range.";

PyObject *psb_py_histogram2d(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"a", "b", "bins", "range", "mask", "method", "threads", "out",
                             "info", NULL};
    PyObject *a_obj, *b_obj, *bins_obj = NULL, *range_obj = NULL, *mask_obj = NULL,
             *out = NULL;
    int want_info = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$OOOznOp:histogram2d", kwlist, &a_obj,
                                     &b_obj, &bins_obj, &range_obj, &mask_obj, &o.method,
                                     &o.threads, &out, &want_info))
        return NULL;
    pixsum_hist_spec sa, sb;
    memset(&sa, 0, sizeof sa);
    memset(&sb, 0, sizeof sb);
    if (!parse_bins_pair(bins_obj, &sa.bins, &sb.bins) || !parse_range_pair(range_obj, &sa, &sb))
        return NULL;
    if (psb_is_gpu_array(a_obj) || psb_is_gpu_array(b_obj))
        return psb_gpu_dispatch("histogram2d", args, kwargs);
    if (!sa.bins)
        sa.bins = 256;
    if (!sb.bins)
        sb.bins = 256;
    PyArrayObject *a = NULL, *b = NULL, *mask = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view va, vb, vmask;
    if (!(a = psb_as_array(a_obj, "a")) || !(b = psb_as_array(b_obj, "b")) ||
        !psb_hist_view(a, 0, 0, "a", &va) || !psb_hist_view(b, 0, 0, "b", &vb) ||
        !psb_mask_view(mask_obj, &va, &mask, &vmask))
        goto done;
    if (mask)
        sa.mask = &vmask;
    npy_intp shape[2] = {(npy_intp)sa.bins, (npy_intp)sb.bins};
    pixsum_type ot = PIXSUM_U64;
    if (!(res = psb_output(out, 2, shape, &ot, "out")))
        goto done;
    if (ot != PIXSUM_U64 || !PyArray_IS_C_CONTIGUOUS(res) || !PyArray_ISWRITEABLE(res)) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "out must be a writable C-contiguous uint64 array");
        goto done;
    }
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    pixsum_joint_info info;
    pixsum_joint_stats stats;
    memset(&info, 0, sizeof info);
    memset(&stats, 0, sizeof stats);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_histogram_joint(ctx, &va, &vb, &sa, &sb, PyArray_DATA(res),
                                sa.bins * sb.bins, &info);
    if (st == PIXSUM_OK && want_info)
        st = pixsum_joint_stats_compute(PyArray_DATA(res), info.bins_a, info.bins_b, &stats);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram2d");
        goto done;
    }
    if (want_info) {
        PyObject *d = Py_BuildValue(
            "{s:(dd),s:(dd),s:N,s:N,s:K,s:K,s:d,s:d,s:d,s:d,s:d}", "range_a", info.lo_a,
            info.hi_a, "range_b", info.lo_b, info.hi_b, "edges_a",
            psb_edges_array(info.bins_a, info.lo_a, info.hi_a), "edges_b",
            psb_edges_array(info.bins_b, info.lo_b, info.hi_b), "pairs",
            (unsigned long long)info.pairs, "excluded", (unsigned long long)info.excluded,
            "entropy_a", stats.entropy_a, "entropy_b", stats.entropy_b, "joint_entropy",
            stats.joint_entropy, "mutual_information", stats.mutual_information,
            "normalized_mi", stats.normalized_mi);
        if (d)
            result = Py_BuildValue("(ON)", (PyObject *)res, d);
    } else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_XDECREF(a);
    Py_XDECREF(b);
    return result;
}

/* The stack of a batch=True call (equalize(), threshold_otsu()): the array
 * (copied once only where a view cannot describe it, e.g. channels-first
 * axes that do not merge) and its view of N (or N*C) 2-D images. Returns the
 * new reference, or NULL with an exception set. */
static PyArrayObject *batch_input(PyObject *image, const psb_integral_args *a, pixsum_view *v)
{
    PyArrayObject *in = psb_input_array(image, "image", PSB_IN_VOLUME |
                                        (a->channels_first ? PSB_IN_MERGE01 : 0u));
    if (!in)
        return NULL;
    pixsum_type t = psb_type_of_descr(PyArray_DESCR(in));
    if (t == PIXSUM_TYPE_NONE) {
        psb_fail_dtype("image", PyArray_DESCR(in), NULL);
        Py_DECREF(in);
        return NULL;
    }
    if (!psb_batch_view(PyArray_DATA(in), t, PyArray_NDIM(in), PyArray_DIMS(in),
                        PyArray_STRIDES(in), a->channels_first, "image", v)) {
        Py_DECREF(in);
        return NULL;
    }
    return in;
}

/* The mask of a batch: None, (H, W) for every image, or one per image
 * ((N, H, W), or (N*C, H, W) for a channels-first stack). */
static int batch_mask(PyObject *mask_obj, const pixsum_view *vin, PyArrayObject **keep,
                      pixsum_view *vmask)
{
    *keep = NULL;
    if (!mask_obj || mask_obj == Py_None)
        return 1;
    PyArrayObject *m = psb_as_array(mask_obj, "mask");
    if (!m)
        return 0;
    pixsum_view shape = *vin;
    if (PyArray_NDIM(m) == 2)
        shape.depth = 1;
    Py_DECREF(m);
    return psb_mask_view(mask_obj, &shape, keep, vmask);
}

const char psb_equalize_doc[] =
"equalize(image, *, mask=None, channels=True, method='auto', threads=0, out=None,\n"
"         nbins=None, dtype=None, batch=False, channel_axis=None)\n"
"--\n\n"
"Histogram equalisation, each channel on its own (pixsum_equalize_bins()).\n\n"
"uint8 / uint16 images, result of the same dtype (the default): with L levels\n"
"(256 or 65536), nbins equal bins over [0, L) (default L), cdf the cumulative\n"
"histogram of the pixels the mask selects (all by default), n = cdf[-1] and\n"
"cdf_min its first non-zero value, a value v in bin b becomes\n"
"round((cdf[b] - cdf_min) * (L - 1) / (n - cdf_min)) (exact integer\n"
"arithmetic, halves rounded up). A channel whose samples share one bin is\n"
"left unchanged.\n"
"float32 / float64 images (skimage.exposure.equalize_hist): nbins (default\n"
"256) bins over [min, max] of the channel's finite selected samples (last bin\n"
"closed), the cumulative histogram normalised to end at 1, interpolated at\n"
"the bin centres (np.interp) at every sample; the result is in [0, 1] and of\n"
"the image's dtype (or dtype=). NaN stays NaN; +-inf are not counted and give\n"
"the ends. Raises InvalidArgumentError when a channel has no finite sample.\n"
"dtype='float32' or 'float64' for a uint8/uint16 image: scikit-image's\n"
"  result for integer images, the fraction of the selected samples <= v\n"
"  (nbins must be None or L).\n"
"Every pixel is mapped, including those the mask leaves out.\n\n"
"image: (H, W), (H, W, C), (D, H, W, C), or (D, H, W) with channels=False;\n"
"  read in place.\n"
"out: an existing array of the same shape and of the result's dtype;\n"
"  out=image equalises in place.\n"
"batch: read axis 0 as N independent images, (N, H, W) or (N, H, W, C),\n"
"  each equalised by its own histogram (pixsum_equalize_batch(), images\n"
"  spread over the threads; without batch a 3-D stack is one volume with one\n"
"  histogram); uint8/uint16 images to their own dtype (nbins and dtype are\n"
"  for one image). mask: (H, W) for every image or (N, H, W) one per image.\n"
"channel_axis: with batch=True, None/-1 or 1: PyTorch's channels-first\n"
"  (N, C, H, W) read as N*C one-channel images (mask (H, W) or (N*C, H, W)).\n"
"Returns the equalised image (a new array unless out is given).\n\n"
"GPU arrays (uint8, uint16, no nbins or dtype): histogram and cumulative\n"
"histogram on the device, the same exact integer mapping computed with the\n"
"array library, applied by a gather; the result is identical to the CPU's, on\n"
"the caller's stream, no synchronisation.";

/* equalize(..., batch=True): one equalisation per image of a stack. */
static PyObject *equalize_batch(PyObject *image, PyObject *mask_obj, int channels,
                                const psb_opts *o, PyObject *out, size_t nbins, pixsum_type ot,
                                int batch, PyObject *channel_axis)
{
    psb_integral_args a;
    memset(&a, 0, sizeof a);
    int image_axis;
    if (!psb_batch_args("equalize", batch, channel_axis, &a, &image_axis))
        return NULL;
    if (!batch)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "equalize: channel_axis is read with "
                        "batch=True only (1: channels-first (N, C, H, W) stacks)");
    if (!channels)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "equalize: batch=True reads (N, H, W) or "
                        "(N, H, W, C); channels=False does not apply");
    if (nbins || ot != PIXSUM_TYPE_NONE)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "equalize: nbins and dtype are for one "
                        "image, not batch=True (a batch maps uint8/uint16 to their own dtype)");
    pixsum_view vin, vout, vmask;
    PyArrayObject *in = batch_input(image, &a, &vin), *mask = NULL, *res = NULL;
    if (!in)
        return NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    if (vin.type != PIXSUM_U8 && vin.type != PIXSUM_U16) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "equalize: batch=True takes uint8 or uint16 images, "
                 "not %s", psb_dtype_name(vin.type));
        goto done;
    }
    if (!batch_mask(mask_obj, &vin, &mask, &vmask))
        goto done;
    pixsum_type t = vin.type;
    if (!(res = psb_output(out, PyArray_NDIM(in), PyArray_DIMS(in), &t, "out")))
        goto done;
    if (!PyArray_ISWRITEABLE(res)) {
        psb_fail(PIXSUM_ERR_INVALID_ARG, "out is read-only");
        goto done;
    }
    if (!psb_batch_view(PyArray_DATA(res), t, PyArray_NDIM(res), PyArray_DIMS(res),
                        PyArray_STRIDES(res), a.channels_first, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(o)))
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_equalize_batch(ctx, &vin, &vout, mask ? &vmask : NULL);
    Py_END_ALLOW_THREADS
    result = psb_hand_over(st, "equalize", &res);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

PyObject *psb_py_equalize(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "mask", "channels", "method", "threads", "out",
                             "nbins", "dtype", "batch", "channel_axis", NULL};
    static const char *const host_only[] = {"nbins", "dtype", NULL};
    PyObject *image, *mask_obj = NULL, *out = NULL, *nbins_obj = NULL, *dtype_obj = NULL;
    PyObject *channel_axis = NULL;
    int channels = 1, batch = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OpznOOOpO:equalize", kwlist, &image,
                                     &mask_obj, &channels, &o.method, &o.threads, &out,
                                     &nbins_obj, &dtype_obj, &batch, &channel_axis))
        return NULL;
    size_t nbins = 0;
    pixsum_type ot = PIXSUM_TYPE_NONE;
    if (!parse_bins(nbins_obj, &nbins, "nbins") || !psb_dtype_arg(dtype_obj, &ot))
        return NULL;
    if (psb_is_gpu_array(image)) {
        if (nbins || ot != PIXSUM_TYPE_NONE)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "equalize of a GPU array: nbins and dtype "
                            "are not available on the GPU yet; pass the host copy");
        PyObject *k = kwargs_for_gpu(kwargs, host_only), *r = NULL;
        if (!kwargs || k)
            r = psb_gpu_dispatch("equalize", args, k);
        Py_XDECREF(k);
        return r;
    }
    if (batch || (channel_axis && channel_axis != Py_None))
        return equalize_batch(image, mask_obj, channels, &o, out, nbins, ot, batch,
                              channel_axis);
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *mask = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vout, vmask;
    if (!psb_hist_view(in, channels, 0, "image", &vin) ||
        !psb_mask_view(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (vin.type != PIXSUM_U8 && vin.type != PIXSUM_U16 && vin.type != PIXSUM_F32 &&
        vin.type != PIXSUM_F64) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "equalize: image must be uint8, uint16, float32 or "
                 "float64, not %s", psb_dtype_name(vin.type));
        goto done;
    }
    if (ot == PIXSUM_TYPE_NONE && (!out || out == Py_None))
        ot = vin.type;
    if (!(res = psb_output(out, PyArray_NDIM(in), PyArray_DIMS(in), &ot, "out")) ||
        !psb_hist_view(res, channels, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_equalize_bins(ctx, &vin, &vout, mask ? &vmask : NULL, nbins);
    Py_END_ALLOW_THREADS
    result = psb_hand_over(st, "equalize", &res);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

const char psb_otsu_doc[] =
"otsu(counts, *, batch=False) -> int\n"
"--\n\n"
"Otsu's threshold bin of one histogram: the bin t maximising the between-class\n"
"variance of the classes bins 0..t and t+1..bins-1 (the smallest t on ties).\n"
"counts: a 1-D array of non-negative integer counts (e.g. from histogram(),\n"
"copied to the host first for a GPU array). Raises InvalidArgumentError when\n"
"there are fewer than 2 bins or fewer than two non-empty bins.\n"
"batch: counts is (N, bins), one histogram per row (histogram(batch=True)'s\n"
"  counts of one-channel images); returns an int64 array of the N bins.";

PyObject *psb_py_otsu(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"counts", "batch", NULL};
    PyObject *obj;
    int batch = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$p:otsu", kwlist, &obj, &batch))
        return NULL;
    if (psb_is_gpu_array(obj))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED,
                        "otsu: counts is a GPU array; copy it to the host first (a few "
                        "hundred values), or call threshold_otsu() on the image");
    PyArrayObject *raw = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 0, 0,
                                                          NPY_ARRAY_IN_ARRAY);
    if (!raw)
        return NULL;
    if (PyArray_NDIM(raw) != 1 + batch) {
        int nd = PyArray_NDIM(raw);
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_SHAPE, batch ? "otsu: with batch=True counts must be "
                        "a 2-D array (N, bins), not %d-D" : "otsu: counts must be a 1-D array, "
                        "not %d-D (for (N, bins) pass batch=True)", nd);
    }
    if (!PyArray_ISINTEGER(raw) && !PyArray_ISBOOL(raw)) {
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "otsu: counts must hold integers");
    }
    /* signed counts through int64 (negative ones refused), others through
     * uint64; the library reads both as u64 */
    int is_signed = PyArray_ISSIGNED(raw);
    PyArrayObject *c = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)raw, is_signed ? NPY_INT64 : NPY_UINT64, 1 + batch, 1 + batch,
        NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(raw);
    if (!c)
        return NULL;
    if (is_signed) {
        const int64_t *v = PyArray_DATA(c);
        for (npy_intp i = 0; i < PyArray_SIZE(c); i++)
            if (v[i] < 0) {
                Py_DECREF(c);
                return psb_fail(PIXSUM_ERR_INVALID_ARG,
                                "otsu: counts must not be negative (counts[%zd] = %lld)",
                                (Py_ssize_t)i, (long long)v[i]);
            }
    }
    if (batch) {
        npy_intp n = PyArray_DIM(c, 0);
        size_t bins = (size_t)PyArray_DIM(c, 1);
        PyArrayObject *res = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT64);
        int st = PIXSUM_OK;
        for (npy_intp i = 0; res && i < n && st == PIXSUM_OK; i++) {
            size_t t = 0;
            st = pixsum_otsu((const uint64_t *)PyArray_DATA(c) + (size_t)i * bins, bins, &t);
            ((int64_t *)PyArray_DATA(res))[i] = (int64_t)t;
            if (st != PIXSUM_OK)
                psb_fail(st, "otsu: histogram %zd of the batch: %s", (Py_ssize_t)i,
                         pixsum_last_error());
        }
        Py_DECREF(c);
        if (st != PIXSUM_OK)
            Py_CLEAR(res);
        return (PyObject *)res;
    }
    size_t t = 0;
    int st = pixsum_otsu(PyArray_DATA(c), (size_t)PyArray_DIM(c, 0), &t);
    Py_DECREF(c);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "otsu");
    return PyLong_FromSize_t(t);
}

const char psb_threshold_otsu_doc[] =
"threshold_otsu(image, *, bins=None, range=None, mask=None, method='auto', threads=0,\n"
"               info=False, closed_last=False, value='upper', f32_edges=False,\n"
"               batch=False, range_per_image=False, channel_axis=None)\n"
"--\n\n"
"Otsu's threshold of a one-channel image: histogram() with these bins, range\n"
"and mask, then otsu() of the counts (pixsum_otsu_image()). Returns the upper\n"
"edge e of the lower class's last bin t, info['edges'][t + 1]: the lower class\n"
"is image < e, the foreground image >= e.\n\n"
"image: (N,), (H, W) or (D, H, W) (a 3-D array is a volume).\n"
"For uint8 images with the default 256 bins e = t + 1, and e - 1 is the value\n"
"cv2.threshold(..., THRESH_OTSU) and skimage.filters.threshold_otsu return\n"
"(they keep image > e - 1), up to their tie rules.\n"
"value: 'upper' (default, pixsum's convention above), 'center' (the centre of\n"
"  bin t, (e[t] + e[t + 1]) / 2: scikit-image's convention, foreground\n"
"  image > value) or 'lower' (e[t]).\n"
"closed_last: the last bin also holds its upper edge (NumPy's binning). With\n"
"  bins=256, range=(image.min(), image.max()), closed_last=True and\n"
"  value='center' a float64 image gets skimage.filters.threshold_otsu's value\n"
"  (a float32 image with f32_edges=True too: NumPy's float32 edges and\n"
"  centre; see histogram()).\n"
"info: also return a dict with the bin t and the bins and range used.\n"
"A constant image (every selected sample one value v) returns v, as\n"
"scikit-image does (with pixsum's rule every pixel is then foreground, with\n"
"scikit-image's none is); info['bin'] is then v's bin, or -1 outside the\n"
"range. Raises InvalidArgumentError when fewer than two bins are non-empty\n"
"in an image that is not constant (no threshold exists).\n\n"
"GPU arrays: the histogram is counted on the device; its counts are copied to\n"
"the host for the search (a synchronisation). closed_last and value are for\n"
"host arrays.\n\n"
"batch: read axis 0 as N independent one-channel images, (N, H, W) or\n"
"  (N, H, W, 1), and return a float64 array of N thresholds (info: a dict of\n"
"  arrays 'bin', 'lo', 'hi' and the int 'bins'), each equal to the call on\n"
"  that image with the batch's bins and range (pixsum_otsu_batch()). Where the\n"
"  range comes from the data it covers the whole batch, or with\n"
"  range_per_image=True each image's own samples. mask: (H, W) for every\n"
"  image or (N, H, W). channel_axis=1: channels-first (N, C, H, W) stacks,\n"
"  one threshold per image and channel, shape (N, C). CPU arrays only.";

/* threshold_otsu(..., batch=True): one Otsu threshold per image of a stack. */
static PyObject *threshold_otsu_batch(PyObject *image, const pixsum_hist_spec *spec_in,
                                      PyObject *mask_obj, const psb_opts *o, unsigned flags,
                                      int which, int want_info, PyObject *channel_axis)
{
    psb_integral_args a;
    memset(&a, 0, sizeof a);
    int image_axis;
    if (!psb_batch_args("threshold_otsu", 1, channel_axis, &a, &image_axis))
        return NULL;
    pixsum_hist_spec spec = *spec_in;
    pixsum_view vin, vmask;
    PyArrayObject *in = batch_input(image, &a, &vin), *mask = NULL, *res = NULL;
    if (!in)
        return NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL, *d = NULL;
    pixsum_otsu_result *r = NULL;
    if (vin.channels != 1) {
        psb_fail(PIXSUM_ERR_BAD_SHAPE, "threshold_otsu: batch=True reads one-channel images "
                 "(N, H, W); for channels-first (N, C, H, W) stacks pass channel_axis=1");
        goto done;
    }
    if (!batch_mask(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec.mask = &vmask;
    npy_intp shape[2] = {PyArray_DIM(in, 0), a.channels_first ? PyArray_DIM(in, 1) : 1};
    int nd = a.channels_first ? 2 : 1;
    size_t n = vin.depth;
    if (!(res = (PyArrayObject *)PyArray_SimpleNew(nd, shape, NPY_FLOAT64)) ||
        !(ctx = psb_make_ctx(o)))
        goto done;
    if (!(r = PyMem_RawCalloc(n, sizeof *r))) {
        PyErr_NoMemory();
        goto done;
    }
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_otsu_batch(ctx, &vin, &spec, flags, r, n);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "threshold_otsu");
        goto done;
    }
    double *v = PyArray_DATA(res);
    for (size_t i = 0; i < n; i++)
        v[i] = which == 0 ? r[i].threshold : which == 1 ? r[i].center : r[i].lower;
    if (want_info) {
        PyArrayObject *bin = (PyArrayObject *)PyArray_SimpleNew(nd, shape, NPY_INT64);
        PyArrayObject *lo = (PyArrayObject *)PyArray_SimpleNew(nd, shape, NPY_FLOAT64);
        PyArrayObject *hi = (PyArrayObject *)PyArray_SimpleNew(nd, shape, NPY_FLOAT64);
        if (bin && lo && hi)
            for (size_t i = 0; i < n; i++) {
                ((int64_t *)PyArray_DATA(bin))[i] =
                    r[i].bin == SIZE_MAX ? -1 : (int64_t)r[i].bin;
                ((double *)PyArray_DATA(lo))[i] = r[i].info.lo;
                ((double *)PyArray_DATA(hi))[i] = r[i].info.hi;
            }
        if (bin && lo && hi)
            d = Py_BuildValue("{s:O,s:n,s:O,s:O}", "bin", bin, "bins",
                              (Py_ssize_t)r[0].info.bins, "lo", lo, "hi", hi);
        Py_XDECREF(bin);
        Py_XDECREF(lo);
        Py_XDECREF(hi);
        if (d)
            result = Py_BuildValue("(ON)", (PyObject *)res, d);
    } else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    PyMem_RawFree(r);
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

PyObject *psb_py_threshold_otsu(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "bins", "range", "mask", "method", "threads", "info",
                             "closed_last", "value", "f32_edges", "batch", "range_per_image",
                             "channel_axis", NULL};
    static const char *const host_only[] = {"closed_last", "value", "f32_edges", NULL};
    PyObject *image, *bins_obj = NULL, *range_obj = NULL, *mask_obj = NULL;
    PyObject *channel_axis = NULL;
    int want_info = 0, closed_last = 0, batch = 0, per_image = 0;
    unsigned f32_edges = 0;
    PyObject *f32_obj = NULL;
    const char *value = "upper";
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOznppsOppO:threshold_otsu", kwlist,
                                     &image, &bins_obj, &range_obj, &mask_obj, &o.method,
                                     &o.threads, &want_info, &closed_last, &value, &f32_obj,
                                     &batch, &per_image, &channel_axis))
        return NULL;
    if (!parse_f32_edges(f32_obj, &f32_edges))
        return NULL;
    int which = !strcmp(value, "upper") ? 0 : !strcmp(value, "center") ? 1
              : !strcmp(value, "lower") ? 2 : -1;
    if (which < 0)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "threshold_otsu: value must be 'upper', "
                        "'center' or 'lower', not '%s'", value);
    pixsum_hist_spec spec;
    if (!psb_parse_hist_spec(bins_obj, range_obj, &spec))
        return NULL;
    if (psb_is_gpu_array(image)) {
        if (closed_last || which != 0 || f32_edges)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED, "threshold_otsu of a GPU array: "
                            "closed_last, value and f32_edges are not available on the GPU "
                            "yet; pass the host copy");
        PyObject *k = kwargs_for_gpu(kwargs, host_only), *r = NULL;
        if (!kwargs || k)
            r = psb_gpu_dispatch("threshold_otsu", args, k);
        Py_XDECREF(k);
        return r;
    }
    if ((per_image || (channel_axis && channel_axis != Py_None)) && !batch)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "threshold_otsu: range_per_image and "
                        "channel_axis are read with batch=True only");
    if (batch)
        return threshold_otsu_batch(image, &spec, mask_obj, &o,
                                    (closed_last ? PIXSUM_HIST_CLOSED_LAST : 0u) | f32_edges |
                                        (per_image ? PIXSUM_HIST_RANGE_PER_IMAGE : 0u),
                                    which, want_info, channel_axis);
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *mask = NULL;
    pixsum_ctx *ctx = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vmask;
    if (!psb_hist_view(in, 0, 0, "image", &vin) ||
        !psb_mask_view(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec.mask = &vmask;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    pixsum_otsu_result res;
    memset(&res, 0, sizeof res);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_otsu_image(ctx, &vin, &spec,
                           (closed_last ? PIXSUM_HIST_CLOSED_LAST : 0u) | f32_edges,
                           &res);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "threshold_otsu");
        goto done;
    }
    double v = which == 0 ? res.threshold : which == 1 ? res.center : res.lower;
    Py_ssize_t bin = res.bin == SIZE_MAX ? -1 : (Py_ssize_t)res.bin;
    if (want_info)
        result = Py_BuildValue("(d{s:n,s:n,s:d,s:d})", v, "bin", bin, "bins",
                               (Py_ssize_t)res.info.bins, "lo", res.info.lo, "hi", res.info.hi);
    else
        result = PyFloat_FromDouble(v);
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

const char psb_joint_stats_doc[] =
"_joint_stats(counts)\n"
"--\n\n"
"Internal: the information measures histogram2d(info=True) reports (entropies,\n"
"mutual information, normalized_mi, in nats) of a C-contiguous uint64 NumPy\n"
"table of shape (bins_a, bins_b), by pixsum_joint_stats_compute(). Used for\n"
"tables counted on the GPU and copied back.";

PyObject *psb_py_joint_stats(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O:_joint_stats", &obj))
        return NULL;
    if (!PyArray_Check(obj) || PyArray_NDIM((PyArrayObject *)obj) != 2 ||
        PyArray_TYPE((PyArrayObject *)obj) != NPY_UINT64 ||
        !PyArray_IS_C_CONTIGUOUS((PyArrayObject *)obj))
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "_joint_stats takes a C-contiguous 2-D uint64 "
                        "numpy array");
    PyArrayObject *a = (PyArrayObject *)obj;
    pixsum_joint_stats stats;
    memset(&stats, 0, sizeof stats);
    int st = pixsum_joint_stats_compute(PyArray_DATA(a), (size_t)PyArray_DIMS(a)[0],
                                        (size_t)PyArray_DIMS(a)[1], &stats);
    if (st != PIXSUM_OK)
        return psb_fail_library(st, "histogram2d");
    return Py_BuildValue("{s:d,s:d,s:d,s:d,s:d}", "entropy_a", stats.entropy_a, "entropy_b",
                         stats.entropy_b, "joint_entropy", stats.joint_entropy,
                         "mutual_information", stats.mutual_information, "normalized_mi",
                         stats.normalized_mi);
}

const char psb_hist_resolve_doc[] =
"_hist_resolve(image, bins, range, mask, what='histogram') -> (bins, lo, hi)\n"
"--\n\n"
"The bins and range histogram() would use for this host image (bins: None or\n"
"an int; range: None or (lo, hi); mask: None or an array of the image's\n"
"spatial shape), by the library's own rules and refusals, without counting;\n"
"errors are prefixed with `what`. The GPU path resolves its arguments on a\n"
"two-sample proxy with it.";

PyObject *psb_py_hist_resolve(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *image, *bins_obj, *range_obj, *mask_obj;
    const char *what = "histogram";
    if (!PyArg_ParseTuple(args, "OOOO|s:_hist_resolve", &image, &bins_obj, &range_obj,
                          &mask_obj, &what))
        return NULL;
    pixsum_hist_spec spec;
    if (!psb_parse_hist_spec(bins_obj, range_obj, &spec))
        return NULL;
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    PyArrayObject *mask = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vmask;
    pixsum_hist_info info;
    if (!psb_hist_view(in, 0, 0, "image", &vin) ||
        !psb_mask_view(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec.mask = &vmask;
    memset(&info, 0, sizeof info);
    int st = pixsum_hist_resolve(&vin, &spec, &info);
    if (st != PIXSUM_OK)
        psb_fail_library(st, what);
    else
        result = Py_BuildValue("(ndd)", (Py_ssize_t)info.bins, info.lo, info.hi);
done:
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

const char psb_hist_edges_doc[] =
"_hist_edges(bins, lo, hi) -> float64 array of bins + 1 edges, as info['edges']";

PyObject *psb_py_hist_edges(PyObject *self, PyObject *args)
{
    (void)self;
    Py_ssize_t bins;
    double lo, hi;
    if (!PyArg_ParseTuple(args, "ndd:_hist_edges", &bins, &lo, &hi))
        return NULL;
    if (bins < 1)
        return psb_fail(PIXSUM_ERR_INVALID_ARG, "bins must be >= 1, got %zd", bins);
    return psb_edges_array((size_t)bins, lo, hi);
}

#endif /* PSB_HAVE_HIST */
