/*
 * hist.c - the histogram functions of pixsum._core: histogram(), histogram2d()
 * and equalize(), over section 8 of include/pixsum.h.
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
"          threads=0, out=None, info=False, batch=False, range_per_image=False)\n"
"--\n\n"
"Histogram of every channel of an image, counted in one pass, read in place.\n\n"
"image: (N,), (H, W), (H, W, C) or (D, H, W, C) (with channels=False a 3-D\n"
"  array is a volume (D, H, W)); dtype uint8, uint16, int16, int32, float32 or\n"
"  float64; any row stride.\n"
"bins, range: `bins` equal half-open bins over [lo, hi) = range, defined by\n"
"  their edges e[i] = lo + i * ((hi - lo) / bins), e[bins] = hi (info['edges'],\n"
"  NumPy's linspace): bin i holds exactly the samples e[i] <= v < e[i + 1];\n"
"  v < lo and v >= hi are in no bin (see info), NaN neither. Defaults: uint8\n"
"  256 bins over [0, 256), uint16 and int16 65536 unit bins, int32 256 bins\n"
"  over [min, max + 1), floats 256 bins over [min, next double above max) of\n"
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
"batch: read axis 0 as N independent images, (N, H, W) or (N, H, W, C), and\n"
"  return N histograms, (N, bins) or (N, C, bins), in one call\n"
"  (pixsum_histogram_batch(), images spread over the threads). They share one\n"
"  range, so they compare: where it defaults to the data's (int32, floats),\n"
"  it covers the whole stack, or each image's own with range_per_image=True.\n"
"  mask: (H, W) for every image or (N, H, W), one per image. info then holds\n"
"  per-image lists (lo, hi and edges too with range_per_image=True).\n\n"
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
    size_t n = vin.depth;
    pixsum_hist_info whole;
    pixsum_hist_spec bins_only = spec; /* the output's bins; the batch call checks the mask */
    bins_only.mask = NULL;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_hist_resolve(&vin, &bins_only, &whole);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    npy_intp shape[3];
    int nd = 0;
    shape[nd++] = (npy_intp)n;
    if (PyArray_NDIM(in) == 4)
        shape[nd++] = (npy_intp)whole.channels;
    shape[nd++] = (npy_intp)whole.bins;
    if (!(res = counts_output(out, nd, shape, relative)))
        goto done;
    if (!(ctx = psb_make_ctx(o)))
        goto done;
    size_t per = whole.channels * whole.bins;
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

PyObject *psb_py_histogram(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "bins", "range", "mask", "relative", "cumulative",
                             "of_all_samples", "channels", "method", "threads", "out",
                             "info", "batch", "range_per_image", NULL};
    PyObject *image, *bins_obj = NULL, *range_obj = NULL, *mask_obj = NULL, *out = NULL;
    int relative = 0, cumulative = 0, all_samples = 0, channels = 1, want_info = 0;
    int batch = 0, per_image = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOppppznOppp:histogram", kwlist,
                                     &image, &bins_obj, &range_obj, &mask_obj, &relative,
                                     &cumulative, &all_samples, &channels, &o.method,
                                     &o.threads, &out, &want_info, &batch, &per_image))
        return NULL;
    pixsum_hist_spec spec;
    if (!psb_parse_hist_spec(bins_obj, range_obj, &spec))
        return NULL;
    if (per_image && !batch)
        return psb_fail(PIXSUM_ERR_INVALID_ARG,
                        "histogram: range_per_image is read with batch=True only");
    if (psb_is_gpu_array(image)) {
        if (batch)
            return psb_fail(PIXSUM_ERR_UNSUPPORTED,
                            "histogram(batch=True) of a GPU array is not available yet: "
                            "count each image, or the stack's host copy");
        return psb_gpu_dispatch("histogram", args, kwargs);
    }
    PyArrayObject *in = psb_as_array(image, "image");
    if (!in)
        return NULL;
    if (batch) {
        if (!channels) {
            Py_DECREF(in);
            return psb_fail(PIXSUM_ERR_INVALID_ARG,
                            "histogram: batch=True reads (N, H, W) or (N, H, W, C); "
                            "channels=False does not apply");
        }
        PyObject *r = histogram_batch(in, &spec, mask_obj, relative, cumulative, all_samples,
                                      per_image, &o, out, want_info);
        Py_DECREF(in);
        return r;
    }
    PyArrayObject *mask = NULL, *res = NULL;
    pixsum_ctx *ctx = NULL;
    uint64_t *counts = NULL;
    PyObject *result = NULL;
    pixsum_view vin, vmask;
    if (!psb_hist_view(in, channels, 0, "image", &vin) ||
        !psb_mask_view(mask_obj, &vin, &mask, &vmask))
        goto done;
    if (mask)
        spec.mask = &vmask;
    pixsum_hist_info info;
    memset(&info, 0, sizeof info);
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_hist_resolve(&vin, &spec, &info);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    int has_channels = PyArray_NDIM(in) == 4 || (PyArray_NDIM(in) == 3 && channels);
    npy_intp shape[2];
    int nd = 0;
    if (has_channels)
        shape[nd++] = (npy_intp)info.channels;
    shape[nd++] = (npy_intp)info.bins;
    if (!(res = counts_output(out, nd, shape, relative)))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    size_t n = info.channels * info.bins;
    /* plain counts go straight into the result; relative ones need the
     * counts first */
    if (relative && !(counts = PyMem_RawMalloc(n * sizeof *counts))) {
        PyErr_NoMemory();
        goto done;
    }
    uint64_t *dst = relative ? counts : (uint64_t *)PyArray_DATA(res);
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_histogram(ctx, &vin, &spec, dst, n, &info);
    if (st == PIXSUM_OK && relative)
        st = pixsum_hist_relative(&info, counts,
                                  (cumulative ? PIXSUM_HIST_CUMULATIVE : 0u) |
                                      (all_samples ? PIXSUM_HIST_OF_ALL_SAMPLES : 0u),
                                  PyArray_DATA(res));
    else if (st == PIXSUM_OK && cumulative)
        st = pixsum_hist_cumulative(&info, dst, dst);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "histogram");
        goto done;
    }
    if (want_info) {
        size_t c = info.channels;
        PyObject *d = Py_BuildValue(
            "{s:n,s:n,s:d,s:d,s:N,s:K,s:N,s:N,s:N,s:N}", "bins", (Py_ssize_t)info.bins,
            "channels", (Py_ssize_t)c, "lo", info.lo, "hi", info.hi, "edges",
            psb_edges_array(info.bins, info.lo, info.hi), "pixels",
            (unsigned long long)info.pixels, "in_range", u64_list(info.in_range, c), "below",
            u64_list(info.below, c), "above", u64_list(info.above, c), "nan",
            u64_list(info.nan, c));
        if (d)
            result = Py_BuildValue("(ON)", (PyObject *)res, d);
    } else {
        result = (PyObject *)res;
        Py_INCREF(result);
    }
done:
    pixsum_ctx_free(ctx);
    PyMem_RawFree(counts);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_DECREF(in);
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

const char psb_equalize_doc[] =
"equalize(image, *, mask=None, channels=True, method='auto', threads=0, out=None)\n"
"--\n\n"
"Histogram equalisation of a uint8 or uint16 image, each channel on its own.\n\n"
"With L levels (256 or 65536), cdf the cumulative histogram of the pixels the\n"
"mask selects (all by default), n = cdf[-1] and cdf_min its first non-zero\n"
"value, a value v becomes round((cdf[v] - cdf_min) * (L - 1) / (n - cdf_min))\n"
"(exact integer arithmetic, halves rounded up). Every pixel is mapped; a\n"
"channel holding one value only is left unchanged.\n\n"
"image: (H, W), (H, W, C), (D, H, W, C), or (D, H, W) with channels=False;\n"
"  read in place.\n"
"out: an existing array of the same shape and dtype; out=image equalises in\n"
"  place.\n"
"Returns the equalised image (a new array unless out is given).\n\n"
"GPU arrays: histogram and cumulative histogram on the device, the same exact\n"
"integer mapping computed with the array library, applied by a gather; the\n"
"result is identical to the CPU's, on the caller's stream, no synchronisation.";

PyObject *psb_py_equalize(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "mask", "channels", "method", "threads", "out", NULL};
    PyObject *image, *mask_obj = NULL, *out = NULL;
    int channels = 1;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OpznO:equalize", kwlist, &image,
                                     &mask_obj, &channels, &o.method, &o.threads, &out))
        return NULL;
    if (psb_is_gpu_array(image))
        return psb_gpu_dispatch("equalize", args, kwargs);
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
    if (vin.type != PIXSUM_U8 && vin.type != PIXSUM_U16) {
        psb_fail(PIXSUM_ERR_BAD_TYPE, "equalize: image must be uint8 or uint16, not %s",
                 psb_dtype_name(vin.type));
        goto done;
    }
    pixsum_type ot = vin.type;
    if (!(res = psb_output(out, PyArray_NDIM(in), PyArray_DIMS(in), &ot, "out")) ||
        !psb_hist_view(res, channels, 1, "out", &vout))
        goto done;
    if (!(ctx = psb_make_ctx(&o)))
        goto done;
    int st;
    Py_BEGIN_ALLOW_THREADS
    st = pixsum_equalize(ctx, &vin, &vout, mask ? &vmask : NULL);
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "equalize");
        goto done;
    }
    result = (PyObject *)res;
    res = NULL;
done:
    pixsum_ctx_free(ctx);
    Py_XDECREF(res);
    Py_XDECREF(mask);
    Py_DECREF(in);
    return result;
}

const char psb_otsu_doc[] =
"otsu(counts) -> int\n"
"--\n\n"
"Otsu's threshold bin of one histogram: the bin t maximising the between-class\n"
"variance of the classes bins 0..t and t+1..bins-1 (the smallest t on ties).\n"
"counts: a 1-D array of non-negative integer counts (e.g. from histogram(),\n"
"copied to the host first for a GPU array). Raises InvalidArgumentError when\n"
"there are fewer than 2 bins or fewer than two non-empty bins.";

PyObject *psb_py_otsu(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *obj;
    if (!PyArg_ParseTuple(args, "O:otsu", &obj))
        return NULL;
    if (psb_is_gpu_array(obj))
        return psb_fail(PIXSUM_ERR_UNSUPPORTED,
                        "otsu: counts is a GPU array; copy it to the host first (a few "
                        "hundred values), or call threshold_otsu() on the image");
    PyArrayObject *raw = (PyArrayObject *)PyArray_FROMANY(obj, NPY_NOTYPE, 0, 0,
                                                          NPY_ARRAY_IN_ARRAY);
    if (!raw)
        return NULL;
    if (PyArray_NDIM(raw) != 1) {
        int nd = PyArray_NDIM(raw);
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_SHAPE, "otsu: counts must be a 1-D array, not %d-D", nd);
    }
    if (!PyArray_ISINTEGER(raw) && !PyArray_ISBOOL(raw)) {
        Py_DECREF(raw);
        return psb_fail(PIXSUM_ERR_BAD_TYPE, "otsu: counts must hold integers");
    }
    /* signed counts through int64 (negative ones refused), others through
     * uint64; the library reads both as u64 */
    int is_signed = PyArray_ISSIGNED(raw);
    PyArrayObject *c = (PyArrayObject *)PyArray_FROMANY(
        (PyObject *)raw, is_signed ? NPY_INT64 : NPY_UINT64, 1, 1,
        NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    Py_DECREF(raw);
    if (!c)
        return NULL;
    if (is_signed) {
        const int64_t *v = PyArray_DATA(c);
        for (npy_intp i = 0; i < PyArray_DIM(c, 0); i++)
            if (v[i] < 0) {
                Py_DECREF(c);
                return psb_fail(PIXSUM_ERR_INVALID_ARG,
                                "otsu: counts must not be negative (counts[%zd] = %lld)",
                                (Py_ssize_t)i, (long long)v[i]);
            }
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
"               info=False)\n"
"--\n\n"
"Otsu's threshold of a one-channel image: histogram() with these bins, range\n"
"and mask, then otsu() of the counts. Returns the upper edge e of the lower\n"
"class's last bin t, info['edges'][t + 1]: the lower class is\n"
"image < e, the foreground image >= e.\n\n"
"image: (N,), (H, W) or (D, H, W) (a 3-D array is a volume).\n"
"For uint8 images with the default 256 bins e = t + 1, and e - 1 is the value\n"
"cv2.threshold(..., THRESH_OTSU) and skimage.filters.threshold_otsu return\n"
"(they keep image > e - 1), up to their tie rules.\n"
"info: also return a dict with the bin t and the bins and range used.\n"
"Raises InvalidArgumentError when fewer than two bins are non-empty (no\n"
"threshold exists, e.g. a constant image).\n\n"
"GPU arrays: the histogram is counted on the device; its counts are copied to\n"
"the host for the search (a synchronisation).";

PyObject *psb_py_threshold_otsu(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kwlist[] = {"image", "bins", "range", "mask", "method", "threads", "info",
                             NULL};
    PyObject *image, *bins_obj = NULL, *range_obj = NULL, *mask_obj = NULL;
    int want_info = 0;
    psb_opts o = {NULL, 0, 0, 0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOOznp:threshold_otsu", kwlist, &image,
                                     &bins_obj, &range_obj, &mask_obj, &o.method, &o.threads,
                                     &want_info))
        return NULL;
    pixsum_hist_spec spec;
    if (!psb_parse_hist_spec(bins_obj, range_obj, &spec))
        return NULL;
    if (psb_is_gpu_array(image))
        return psb_gpu_dispatch("threshold_otsu", args, kwargs);
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
    pixsum_hist_info info;
    memset(&info, 0, sizeof info);
    double threshold = 0;
    size_t t = 0;
    int st;
    Py_BEGIN_ALLOW_THREADS
    /* resolve first so that info reports the range the threshold used; the
     * resolved range is then passed on, so data is not scanned twice */
    st = pixsum_hist_resolve(&vin, &spec, &info);
    if (st == PIXSUM_OK) {
        spec.bins = info.bins;
        spec.lo = info.lo;
        spec.hi = info.hi;
        st = pixsum_otsu_threshold(ctx, &vin, &spec, &threshold, &t);
    }
    Py_END_ALLOW_THREADS
    if (st != PIXSUM_OK) {
        psb_fail_library(st, "threshold_otsu");
        goto done;
    }
    if (want_info)
        result = Py_BuildValue("(d{s:n,s:n,s:d,s:d})", threshold, "bin", (Py_ssize_t)t, "bins",
                               (Py_ssize_t)info.bins, "lo", info.lo, "hi", info.hi);
    else
        result = PyFloat_FromDouble(threshold);
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
