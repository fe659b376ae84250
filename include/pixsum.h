/*
 * pixsum.h - the public C API of pixsum: integral images (summed-area tables),
 * box statistics and histograms on CPUs and GPUs.
 *
 * Memory layout (read this first)
 * -------------------------------
 * Every image, volume and table is described by a pixsum_view:
 *
 *   element (x, y, z, c) lives at
 *     (char *)data + z * slice_stride + y * row_stride + (x * channels + c) * type_size
 *
 * i.e. channels are interleaved inside a pixel, pixels are packed inside a row,
 * rows are `row_stride` bytes apart and slices (3-D) `slice_stride` bytes apart.
 * Strides are signed byte counts (ptrdiff_t) so bottom-up images can be described;
 * sizes are size_t, so images of more than 2^31 pixels work everywhere.
 *
 * An inclusive integral image I of an image i is
 *   I(x, y) = sum of i(u, v) over 0 <= u <= x, 0 <= v <= y         (per channel)
 * and has the input's shape. The padded layout (OpenCV, NPP) has one extra leading
 * row and column of zeros: P(x + 1, y + 1) = I(x, y), shape (W + 1) x (H + 1).
 * 3-D integral volumes add a third sum over 0 <= w <= z (and, padded, a leading
 * slice of zeros).
 *
 * Threads: the library keeps no global mutable state after the first call
 * (CPU feature detection happens once, thread-safely). A pixsum_ctx must be used
 * by one thread at a time; use one context per thread. The error detail text is
 * thread-local.
 *
 * Sections: 1 version, 2 status codes, 3 types and views, 4 contexts,
 * 5 method registry, 6 integral images, 7 box queries, 8 histograms.
 */
#ifndef PIXSUM_H
#define PIXSUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(PIXSUM_SHARED_BUILD)
#  define PIXSUM_API __declspec(dllexport)
#elif defined(__GNUC__)
#  define PIXSUM_API __attribute__((visibility("default")))
#else
#  define PIXSUM_API
#endif

/* ===================================================================== */
/* 1. Version                                                            */
/* ===================================================================== */

#define PIXSUM_VERSION_MAJOR 0
#define PIXSUM_VERSION_MINOR 1
#define PIXSUM_VERSION_PATCH 0
#define PIXSUM_VERSION_NUMBER \
    (PIXSUM_VERSION_MAJOR * 10000 + PIXSUM_VERSION_MINOR * 100 + PIXSUM_VERSION_PATCH)

/* Returns the library's version as "MAJOR.MINOR.PATCH" (static storage).
 * Compare with PIXSUM_VERSION_* to detect a header/library mismatch. */
PIXSUM_API const char *pixsum_version(void);

/* Returns PIXSUM_VERSION_NUMBER of the library actually linked. */
PIXSUM_API unsigned pixsum_version_number(void);

/* ===================================================================== */
/* 2. Status codes                                                       */
/* ===================================================================== */

/* Every entry point returns one of these. Values are pinned: they never change
 * between versions, new codes are only appended. */
typedef enum pixsum_status {
    PIXSUM_OK                 = 0,
    PIXSUM_ERR_NULL           = 1,  /* a required pointer is NULL */
    PIXSUM_ERR_INVALID_ARG    = 2,  /* a value is out of its documented range */
    PIXSUM_ERR_BAD_SHAPE      = 3,  /* zero size, or shapes that do not match */
    PIXSUM_ERR_BAD_STRIDE     = 4,  /* a stride smaller than a row/slice, or overlapping */
    PIXSUM_ERR_BAD_TYPE       = 5,  /* pixel type or type pair not supported */
    PIXSUM_ERR_OVERFLOW       = 6,  /* the result could overflow the output type */
    PIXSUM_ERR_ALIASING       = 7,  /* input and output memory overlap */
    PIXSUM_ERR_UNKNOWN_METHOD = 8,  /* no method of that name */
    PIXSUM_ERR_UNSUPPORTED    = 9,  /* the method cannot do this operation/type/shape */
    PIXSUM_ERR_NO_MEMORY      = 10, /* an allocation failed */
    PIXSUM_ERR_UNAVAILABLE    = 11, /* backend not built, or no device/ISA at run time */
    PIXSUM_ERR_OUT_OF_RANGE   = 12, /* a box/rectangle outside the table */
    PIXSUM_ERR_TOO_LARGE      = 13, /* memory cost above the allowed limit */
    PIXSUM_ERR_CUDA           = 14, /* a CUDA call failed; detail holds CUDA's text */
    PIXSUM_ERR_GL             = 15, /* an OpenGL/EGL call failed */
    PIXSUM_ERR_MPI            = 16, /* an MPI call failed */
    PIXSUM_ERR_IO             = 17, /* reading or writing a file failed */
    PIXSUM_ERR_INTERNAL       = 18  /* a bug in pixsum; please report it */
} pixsum_status;

#define PIXSUM_STATUS_COUNT 19

/* Returns a short constant English text for a status ("overflow", ...). Never
 * NULL; unknown codes give "unknown status". */
PIXSUM_API const char *pixsum_strerror(int status);

/* Returns the detail text of the last failing call on this thread, e.g.
 * "u32 output can overflow: the image sum can reach 2^40; use u64 or wrap mode".
 * Empty string when the last call succeeded. Valid until the next pixsum call on
 * this thread. */
PIXSUM_API const char *pixsum_last_error(void);

/* ===================================================================== */
/* 3. Pixel types and views                                              */
/* ===================================================================== */

/* Pixel and table element types (values pinned). Inputs: u8 u16 i16 i32 u32
 * f32 f64. Outputs of integral tables: u32 u64 i64 f32 f64. */
typedef enum pixsum_type {
    PIXSUM_TYPE_NONE = 0, /* "choose the default" where a type is requested */
    PIXSUM_U8  = 1,
    PIXSUM_U16 = 2,
    PIXSUM_I16 = 3,
    PIXSUM_I32 = 4,
    PIXSUM_U32 = 5,
    PIXSUM_F32 = 6,
    PIXSUM_F64 = 7,
    PIXSUM_U64 = 8,
    PIXSUM_I64 = 9
} pixsum_type;

#define PIXSUM_TYPE_COUNT 10

/* Size in bytes of one element of `type`; 0 for PIXSUM_TYPE_NONE or unknown. */
PIXSUM_API size_t pixsum_type_size(pixsum_type type);

/* Short lower-case name ("u8", "f64", ...); "none" for PIXSUM_TYPE_NONE and
 * unknown values. */
PIXSUM_API const char *pixsum_type_name(pixsum_type type);

/* Parses a name produced by pixsum_type_name(). Returns PIXSUM_TYPE_NONE for
 * an unknown name or NULL. */
PIXSUM_API pixsum_type pixsum_type_from_name(const char *name);

/* A description of pixels in memory (see the layout at the top). The view does
 * not own `data`. depth is 1 for 2-D images; slice_stride is ignored then. */
typedef struct pixsum_view {
    void *data;
    pixsum_type type;
    size_t width;           /* pixels per row */
    size_t height;          /* rows per slice */
    size_t depth;           /* slices; 1 for 2-D */
    size_t channels;        /* 1..4 interleaved samples per pixel */
    ptrdiff_t row_stride;   /* bytes from one row to the next */
    ptrdiff_t slice_stride; /* bytes from one slice to the next */
} pixsum_view;

/* Makes a 2-D view of a buffer. row_stride 0 means tightly packed
 * (width * channels * type_size). Performs no checks; entry points validate. */
PIXSUM_API pixsum_view pixsum_view_2d(void *data, pixsum_type type, size_t width,
                                      size_t height, size_t channels,
                                      ptrdiff_t row_stride);

/* Makes a 3-D view. Strides of 0 mean packed (slice_stride 0 = height *
 * row_stride). Performs no checks. */
PIXSUM_API pixsum_view pixsum_view_3d(void *data, pixsum_type type, size_t width,
                                      size_t height, size_t depth, size_t channels,
                                      ptrdiff_t row_stride, ptrdiff_t slice_stride);

/* Makes in *roi the view of the region [x, x+w) x [y, y+h) of `view` (all slices
 * for a 3-D view). Returns PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_BAD_SHAPE
 * (w or h zero) or PIXSUM_ERR_OUT_OF_RANGE (region not inside the view). */
PIXSUM_API int pixsum_view_roi(const pixsum_view *view, size_t x, size_t y,
                               size_t w, size_t h, pixsum_view *roi);

/* As pixsum_view_roi() with a slice range [z, z+d) as well. */
PIXSUM_API int pixsum_view_roi3d(const pixsum_view *view, size_t x, size_t y,
                                 size_t z, size_t w, size_t h, size_t d,
                                 pixsum_view *roi);

/* Checks a view: non-NULL data, known type, non-zero sizes, 1..4 channels,
 * |row_stride| >= a row, |slice_stride| >= a slice (3-D), byte extent that does
 * not overflow size_t. Returns PIXSUM_OK or the matching error (with detail). */
PIXSUM_API int pixsum_view_check(const pixsum_view *view);

/* Bytes a packed buffer for this shape needs, or 0 if it overflows size_t. */
PIXSUM_API size_t pixsum_packed_bytes(pixsum_type type, size_t width, size_t height,
                                      size_t depth, size_t channels);

/* ===================================================================== */
/* 4. Contexts                                                           */
/* ===================================================================== */

/* An opaque context: the chosen method, threads, options and reusable scratch
 * memory (host and, with CUDA, device). Use one context per thread. Every entry
 * point accepts ctx == NULL and then uses the defaults. */
typedef struct pixsum_ctx pixsum_ctx;

/* Parameters of pixsum_ctx_set(); values pinned. */
typedef enum pixsum_param {
    /* Method id from pixsum_method_find(); 0 = "auto" (default). */
    PIXSUM_PARAM_METHOD      = 1,
    /* CPU threads for threaded methods; 0 = all online cores (default). */
    PIXSUM_PARAM_THREADS     = 2,
    /* 1 = modular (wrap-around) integer arithmetic: no overflow refusal; every
     * box sum whose true value fits the output type is still exact. 0 (default)
     * = refuse outputs that can overflow. */
    PIXSUM_PARAM_WRAP        = 3,
    /* 1 = zero-padded (W+1)x(H+1)[x(D+1)] output layout; 0 (default) = inclusive
     * table of the input's shape. Also tells box queries how to read a table. */
    PIXSUM_PARAM_PADDED      = 4,
    /* cudaStream_t (cast to intptr_t) for CUDA methods; 0 = legacy default stream. */
    PIXSUM_PARAM_CUDA_STREAM = 5,
    /* CUDA device ordinal for host-memory entry points using CUDA methods. */
    PIXSUM_PARAM_CUDA_DEVICE = 6
} pixsum_param;

/* Creates a context with the defaults above. Returns NULL only if out of memory. */
PIXSUM_API pixsum_ctx *pixsum_ctx_new(void);

/* Frees a context and its scratch memory. Accepts NULL. */
PIXSUM_API void pixsum_ctx_free(pixsum_ctx *ctx);

/* Sets a parameter. Returns PIXSUM_OK, PIXSUM_ERR_NULL (ctx NULL),
 * PIXSUM_ERR_INVALID_ARG (unknown param or value out of range) or
 * PIXSUM_ERR_UNKNOWN_METHOD (method id not registered). */
PIXSUM_API int pixsum_ctx_set(pixsum_ctx *ctx, pixsum_param param, intptr_t value);

/* Reads a parameter into *value. Returns PIXSUM_OK, PIXSUM_ERR_NULL or
 * PIXSUM_ERR_INVALID_ARG. */
PIXSUM_API int pixsum_ctx_get(const pixsum_ctx *ctx, pixsum_param param, intptr_t *value);

/* Convenience: sets PIXSUM_PARAM_METHOD by name ("auto" or a registered name).
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL or PIXSUM_ERR_UNKNOWN_METHOD. */
PIXSUM_API int pixsum_ctx_set_method(pixsum_ctx *ctx, const char *name);

/* ===================================================================== */
/* 5. Method registry                                                    */
/* ===================================================================== */

/* Operations (bit flags, values pinned). */
typedef enum pixsum_op {
    PIXSUM_OP_INTEGRAL    = 1u << 0, /* 2-D integral image */
    PIXSUM_OP_INTEGRAL_SQ = 1u << 1, /* squared integral (with or without the plain one) */
    PIXSUM_OP_TILTED      = 1u << 2, /* 45-degree tilted integral */
    PIXSUM_OP_INTEGRAL_3D = 1u << 3, /* 3-D integral volume */
    PIXSUM_OP_HISTOGRAM   = 1u << 4  /* histograms */
} pixsum_op;

/* Backends (values pinned). */
typedef enum pixsum_backend {
    PIXSUM_BACKEND_CPU  = 1, /* single-threaded CPU code (scalar or SIMD) */
    PIXSUM_BACKEND_OMP  = 2, /* multi-threaded CPU code */
    PIXSUM_BACKEND_CUDA = 3, /* NVIDIA GPU through CUDA */
    PIXSUM_BACKEND_GL   = 4, /* OpenGL through EGL */
    PIXSUM_BACKEND_MPI  = 5  /* distributed */
} pixsum_backend;

/* What the registry tells about one method. */
typedef struct pixsum_method_info {
    int id;                  /* stable for the process; > 0 */
    const char *name;        /* stable name, e.g. "serial.2wh" */
    pixsum_backend backend;
    unsigned ops;            /* bit set of pixsum_op */
    const char *description; /* one line: what it is and which paper */
    int available;           /* 1 if it can run in this process now */
} pixsum_method_info;

/* Returns the array of registered methods and stores its length in *count
 * (count may be NULL). The array is static and never changes after the first
 * call. Never NULL. */
PIXSUM_API const pixsum_method_info *pixsum_methods(size_t *count);

/* Finds a method by name. Returns its id (> 0), 0 for "auto", or -1 if unknown. */
PIXSUM_API int pixsum_method_find(const char *name);

/* Returns the info of method `id`, or NULL if no such method. */
PIXSUM_API const pixsum_method_info *pixsum_method_get(int id);

/* Returns 1 if method `id` can perform `op` reading `in` and writing `out`
 * (out = PIXSUM_TYPE_NONE asks about any output type), else 0. */
PIXSUM_API int pixsum_method_supports(int id, pixsum_op op, pixsum_type in,
                                      pixsum_type out);

/* ===================================================================== */
/* 6. Integral images                                                    */
/* ===================================================================== */

/* Type rules. Returns the default output type for an integral table of input
 * type `in` over `count` pixels (width x height x depth, per channel):
 *   u8, u16, u32 -> u32 if count x max fits 32 bits, else u64 if it fits 64
 *   i16, i32     -> i64 if count x max magnitude fits, else f64
 *   f32, f64     -> f64
 * For the squared table (squared = 1): integers -> u64 if count x max^2 fits,
 * else f64; floats -> f64. The result never overflows (it may round, for f64
 * beyond 2^53). Returns PIXSUM_TYPE_NONE for an unsupported input type. */
PIXSUM_API pixsum_type pixsum_integral_type(pixsum_type in, size_t count, int squared);

/* Checks whether an integral (squared = 0) or squared-integral (squared = 1)
 * table of `out` elements over `count` pixels of `in` can overflow. Returns
 * PIXSUM_OK when the worst case fits, PIXSUM_ERR_OVERFLOW (with a detail text
 * giving the worst-case magnitude) when it may not, PIXSUM_ERR_BAD_TYPE for an
 * unsupported pair. Float outputs never overflow in this sense (see the guide
 * for their rounding error). */
PIXSUM_API int pixsum_integral_check(pixsum_type in, pixsum_type out, size_t count,
                                     int squared);

/* Shape of the output table for input `in` under the context's padded setting. */
PIXSUM_API void pixsum_integral_shape(const pixsum_ctx *ctx, const pixsum_view *in,
                                      size_t *width, size_t *height, size_t *depth);

/* Computes the integral image (2-D) or integral volume (depth > 1) of `in` into
 * `out`, which the caller allocates with the shape of pixsum_integral_shape(),
 * the same channel count and an output type among those supported for in->type.
 * Supported pairs: u8,u16 -> u32,u64,i64,f32,f64; i16 -> i64,f32,f64;
 * i32 -> i64,f64; u32 -> u64,i64,f64; f32 -> f32,f64; f64 -> f64.
 * Returns PIXSUM_OK, or: PIXSUM_ERR_NULL, PIXSUM_ERR_BAD_SHAPE,
 * PIXSUM_ERR_BAD_STRIDE, PIXSUM_ERR_BAD_TYPE, PIXSUM_ERR_OVERFLOW (unless wrap),
 * PIXSUM_ERR_ALIASING (in and out overlap), PIXSUM_ERR_UNSUPPORTED (the chosen
 * method cannot do it), PIXSUM_ERR_UNAVAILABLE, PIXSUM_ERR_NO_MEMORY. On error
 * `out` is left untouched. */
PIXSUM_API int pixsum_integral(pixsum_ctx *ctx, const pixsum_view *in,
                               const pixsum_view *out);

/* Computes the squared integral (sums of in^2) into `out_sq` and, if `out` is
 * not NULL, the plain integral into `out`, in one pass. Same shapes and rules as
 * pixsum_integral(); the overflow check of out_sq uses the squared worst case.
 * Returns as pixsum_integral(). */
PIXSUM_API int pixsum_integral_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                  const pixsum_view *out, const pixsum_view *out_sq);

/* Computes OpenCV's 45-degree tilted integral of a 2-D image:
 *   T(X, Y) = sum of i(x, y) over y < Y and |x - X + 1| <= Y - y - 1
 * into `out` of shape (W + 1) x (H + 1) (always padded). Same type rules.
 * Returns as pixsum_integral(). */
PIXSUM_API int pixsum_integral_tilted(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_view *out);

/* ===================================================================== */
/* 7. Box queries                                                        */
/* ===================================================================== */

/* A box in image coordinates: [x, x+w) x [y, y+h) x [z, z+d). For 2-D tables
 * use z = 0, d = 1. */
typedef struct pixsum_box {
    size_t x, y, z;
    size_t w, h, d;
} pixsum_box;

/* Sums of the box over every channel of the image whose integral table is
 * `table` (inclusive or padded per the context's PIXSUM_PARAM_PADDED), read with
 * the 4-corner (2-D) or 8-corner (3-D) formula. Writes table->channels values of
 * table->type to `sums`. In wrap mode integer results are exact whenever the
 * true box sum fits the table type. Returns PIXSUM_OK, PIXSUM_ERR_NULL,
 * PIXSUM_ERR_BAD_TYPE, PIXSUM_ERR_BAD_SHAPE (empty box) or
 * PIXSUM_ERR_OUT_OF_RANGE (box outside the table). */
PIXSUM_API int pixsum_box_sum(const pixsum_ctx *ctx, const pixsum_view *table,
                              const pixsum_box *box, void *sums);

/* Batch of pixsum_box_sum(): n boxes, n x channels values of table->type written
 * box after box to `sums`. Stops at the first bad box (its index in the detail
 * text) and returns its status. */
PIXSUM_API int pixsum_box_sums(const pixsum_ctx *ctx, const pixsum_view *table,
                               const pixsum_box *boxes, size_t n, void *sums);

/* Mean and (population) variance of n boxes from a sum table and a squared
 * table of the same shape, n x channels doubles each (either pointer may be
 * NULL). Integer tables are combined exactly in 128-bit arithmetic, so the
 * variance is never negative and is exact up to the final division; float tables
 * clamp rounding below zero to zero. Returns as pixsum_box_sums(), plus
 * PIXSUM_ERR_BAD_SHAPE if the tables differ in shape. */
PIXSUM_API int pixsum_box_stats(const pixsum_ctx *ctx, const pixsum_view *sum_table,
                                const pixsum_view *sq_table, const pixsum_box *boxes,
                                size_t n, double *mean, double *variance);

/* ===================================================================== */
/* 8. Histograms                                                         */
/* ===================================================================== */
/* (section filled by the histogram work; see docs/guide.md) */

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_H */
