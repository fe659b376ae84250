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
 * 5 method registry, 6 integral images, 7 box queries, 8 histograms,
 * 9 box filters.
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

/* Checks a view: non-NULL data (PIXSUM_ERR_NULL), known type
 * (PIXSUM_ERR_BAD_TYPE), non-zero sizes (PIXSUM_ERR_BAD_SHAPE), 1..4 channels
 * (PIXSUM_ERR_INVALID_ARG), data aligned to the element size and strides that
 * are multiples of it, |row_stride| >= a row when height > 1 (a single row may
 * have any stride), |slice_stride| >= a slice when depth > 1
 * (PIXSUM_ERR_BAD_STRIDE), and byte sizes and spans that fit size_t / ptrdiff_t
 * (PIXSUM_ERR_TOO_LARGE). Returns PIXSUM_OK or the status of a failing rule,
 * with a detail text. */
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
    /* CPU threads for threaded methods, and for the staging copies of CUDA
     * methods on host memory (at most 8 there); 0 = all online cores (default). */
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
    PIXSUM_OP_HISTOGRAM   = 1u << 4, /* histograms */
    PIXSUM_OP_CARRY       = 1u << 5, /* integral tables continuing a carry row
                                        (pixsum_integral_carry()) */
    PIXSUM_OP_BOX_FILTER  = 1u << 6  /* streamed box filter (pixsum_box_filter()) */
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
 *   u8, u16      -> u32 if count x max fits 32 bits, else u64 if it fits 64,
 *                   else f64
 *   u32          -> u64 if count x max fits 64 bits, else f64
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
 * PIXSUM_ERR_BAD_STRIDE, PIXSUM_ERR_BAD_TYPE, PIXSUM_ERR_INVALID_ARG and
 * PIXSUM_ERR_TOO_LARGE (see pixsum_view_check()), PIXSUM_ERR_OVERFLOW (unless
 * wrap), PIXSUM_ERR_ALIASING (the byte ranges the views span, first to last
 * byte, overlap: interleaved rows count as overlap), PIXSUM_ERR_UNSUPPORTED (the chosen
 * method cannot do it), PIXSUM_ERR_UNAVAILABLE, PIXSUM_ERR_NO_MEMORY. On error
 * `out` is left untouched. */
PIXSUM_API int pixsum_integral(pixsum_ctx *ctx, const pixsum_view *in,
                               const pixsum_view *out);

/* Computes the squared integral (sums of in^2) into `out_sq` and, if `out` is
 * not NULL, the plain integral into `out`, in one pass. Same shapes and rules as
 * pixsum_integral(); the overflow check of out_sq uses the squared worst case,
 * and since squares are never negative out_sq also accepts i16 -> u32,u64 and
 * i32 -> u64. `out` and `out_sq` must not overlap (PIXSUM_ERR_ALIASING).
 * Returns as pixsum_integral(). */
PIXSUM_API int pixsum_integral_sq(pixsum_ctx *ctx, const pixsum_view *in,
                                  const pixsum_view *out, const pixsum_view *out_sq);

/* Computes the integral table of a band of an image below rows already
 * summed, for images processed band by band in bounded memory: as
 * pixsum_integral_sq(), but every table row also includes a carry row, a view
 * of 1 row of in->width pixels with the channels and type of its table that
 * holds the table row just above the band (the last row of the band above's
 * table; it may lie in the same buffer as `out`, just above the band). Row y
 * of the table is then the band's own table row y plus the carry.
 *   out, carry         plain table and its carry, or both NULL;
 *   out_sq, carry_sq   squared table and its carry, or both NULL;
 * at least one table. A band-by-band table equals the one-call table bit for
 * bit on integer types, and on floats too with the single-threaded methods
 * (serial.2wh, serial.3wh, simd.2wh, and omp.banded on one thread), which
 * also add each row's prefix to the row above. 2-D inclusive tables only.
 * The overflow check (unless wrap) counts the carry's largest magnitude plus
 * the band's worst case. Methods: those with PIXSUM_OP_CARRY (serial.2wh,
 * serial.3wh, simd.2wh, omp.banded). Returns as pixsum_integral(), and:
 * PIXSUM_ERR_NULL (a table without its carry or the reverse),
 * PIXSUM_ERR_BAD_SHAPE (a carry of the wrong width, height or channels, or a
 * 3-D input), PIXSUM_ERR_BAD_TYPE (a carry of another type than its table),
 * PIXSUM_ERR_UNSUPPORTED (a padded context, or a method without
 * PIXSUM_OP_CARRY), PIXSUM_ERR_ALIASING (a carry overlapping a table). */
PIXSUM_API int pixsum_integral_carry(pixsum_ctx *ctx, const pixsum_view *in,
                                     const pixsum_view *out, const pixsum_view *carry,
                                     const pixsum_view *out_sq, const pixsum_view *carry_sq);

/* Computes the integral table of a tile of an image cut into a grid of tiles
 * (rows y0.. and columns x0.. of the whole image), given what lies above and
 * left of it, so that the tiles' tables, put together, are the whole image's
 * table: entry (x, y) of the tile's table is
 *   carry_row(x) + carry_col(0) + ... + carry_col(y) + the tile's own table(x, y).
 *   carry_row   1 row of in->width pixels: the whole table's row just above
 *               the tile over the tile's columns, T(x0 + x, y0 - 1);
 *   carry_col   1 column of in->height pixels: for each row of the tile, the
 *               sum of that image row's pixels left of the tile (the row's
 *               running sum starts there);
 * both of the table's type and the input's channels; either or both may be
 * NULL (zeros: a tile on the top row or the left column of the grid). The
 * squared table takes carry_row_sq / carry_col_sq the same way (sums of
 * squares). out or out_sq may be NULL, not both; a carry without its table is
 * refused. Inclusive 2-D tables only, as pixsum_integral_carry(), on the
 * methods with PIXSUM_OP_CARRY. Tables are computed in blocks of rows that
 * each continue the row above them; the column carries are added to a block
 * while it is still in the cache (no second pass over the table in memory).
 * Integer tables are bit-identical to one call over the whole image; float
 * tables are within the float bound of section 3 of the guide. The overflow
 * check (unless wrap) counts, per channel, the carry row's largest magnitude
 * plus the sum of the carry column's magnitudes, plus the tile's worst case.
 * Returns as pixsum_integral_carry(), and PIXSUM_ERR_BAD_SHAPE for a carry
 * column that is not 1 x in->height, PIXSUM_ERR_ALIASING for a carry column
 * overlapping a table or the input. Nothing is written when a check fails. */
PIXSUM_API int pixsum_integral_carry_tile(pixsum_ctx *ctx, const pixsum_view *in,
                                          const pixsum_view *out, const pixsum_view *carry_row,
                                          const pixsum_view *carry_col,
                                          const pixsum_view *out_sq,
                                          const pixsum_view *carry_row_sq,
                                          const pixsum_view *carry_col_sq);

/* A batch of 2-D integral images: the `depth` slices of `in` are independent
 * images of one shape and type (a stack (N, H, W[, C]) with the slice stride
 * as the image stride), and slice i of `out` (and of `out_sq`, the squared
 * tables; either may be NULL, not both) receives image i's table, with no sum
 * across slices. Tables are W x H x N, or (W+1) x (H+1) x N in the padded
 * layout (each slice with its own zero row and column). The overflow rule
 * counts the pixels of one image: a batch of images each of which fits u32
 * gets u32 tables. With several threads in the context and at least as many
 * images as threads, the images are shared out over the threads (each one by
 * the single-threaded method the context names, or auto's); otherwise each
 * image in turn uses every thread. Results equal pixsum_integral_sq() on each
 * slice. Returns the codes of pixsum_integral_sq() (shapes and the overflow
 * rule per image); when a method fails on an image (PIXSUM_ERR_NO_MEMORY),
 * the detail names the image, and other tables may be written. */
PIXSUM_API int pixsum_integral_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                     const pixsum_view *out, const pixsum_view *out_sq);

/* Computes OpenCV's 45-degree tilted integral of a 2-D image:
 *   T(X, Y) = sum of i(x, y) over y < Y and |x - X + 1| <= Y - y - 1
 * into `out` of shape (W + 1) x (H + 1) (always padded). Same type rules.
 * Returns as pixsum_integral(). */
PIXSUM_API int pixsum_integral_tilted(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_view *out);

/* The most axes pixsum_integral_nd() takes. */
#define PIXSUM_ND_MAX_DIMS 32

/* An array of any number of axes, for pixsum_integral_nd(): its element
 * type, axis count, sizes and byte strides (any sign; a size-1 axis may have
 * any stride). */
typedef struct pixsum_nd_array {
    void *data;
    pixsum_type type;
    size_t ndim;               /* 1..PIXSUM_ND_MAX_DIMS */
    const size_t *shape;       /* ndim sizes */
    const ptrdiff_t *strides;  /* ndim byte strides */
} pixsum_nd_array;

/* Computes the integral of an array of any number of axes (scikit-image's
 * integral_image): out[i] = sum of in[j] over every j with j_k <= i_k on each
 * summed axis k and j_c = i_c on `channel_axis` (-1: every axis is summed).
 * `out` has in's shape and a type of the pairs of pixsum_integral(); the
 * overflow rule (unless the context's wrap) counts the elements summed into
 * one entry, the product of the summed axes' sizes. One thread, any method
 * setting; exact for integer tables. Returns PIXSUM_OK, or PIXSUM_ERR_NULL,
 * PIXSUM_ERR_INVALID_ARG (ndim 0 or above PIXSUM_ND_MAX_DIMS, channel_axis
 * not -1 or an axis), PIXSUM_ERR_BAD_SHAPE (an empty axis, shapes that
 * differ), PIXSUM_ERR_BAD_STRIDE (unaligned data, a stride not a multiple of
 * the element, elements of `out` sharing memory), PIXSUM_ERR_BAD_TYPE,
 * PIXSUM_ERR_OVERFLOW, PIXSUM_ERR_ALIASING (the byte ranges of in and out
 * overlap), PIXSUM_ERR_UNSUPPORTED (a padded context: n-dimensional tables
 * are inclusive), PIXSUM_ERR_TOO_LARGE. On error `out` is left untouched. */
PIXSUM_API int pixsum_integral_nd(pixsum_ctx *ctx, const pixsum_nd_array *in,
                                  const pixsum_nd_array *out, int channel_axis);

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
 * box after box to `sums`. Every box is checked first: with a bad one nothing is
 * written, and the status of the first bad box is returned (its index in the
 * detail text). */
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

/* Bins. A histogram has `bins` equal bins over the half-open range [lo, hi),
 * defined by their edges (pixsum_hist_edge()):
 *   edge[i] = lo + i * step for i < bins, edge[bins] = hi,
 *   where step = (hi - lo) / bins; each operation rounded once to double
 *   (no fused multiply-add): NumPy's linspace rule.
 * A sample v (converted exactly to double) is classified as
 *   NaN                      -> counted in nan[c], never in a bin
 *   v <  lo (incl. -inf)     -> counted in below[c]
 *   v >= hi (incl. +inf)     -> counted in above[c]
 *   otherwise                -> the bin i with edge[i] <= v < edge[i + 1]
 * The edges never decrease, so that bin is unique (where rounding makes two
 * edges equal, the bins between them stay empty). Every method and backend
 * (CPU, SIMD, threads, CUDA, OpenGL, MPI; joint and integral histograms, Otsu,
 * equalisation) decides by this rule, so counts are identical everywhere and
 * agree with NumPy's np.histogram on the same float64 edges (except NumPy's
 * closed last bin). When lo and hi are integers (|lo|, |hi| <= 2^53) and bins
 * divides hi - lo, every edge is an integer: integer images are then decided
 * in integer arithmetic, with the same result.
 *
 * Defaults (spec NULL, bins 0 or lo == hi):
 *   u8  -> 256 bins over [0, 256)          u16 -> 65536 bins over [0, 65536)
 *   i16 -> 65536 bins over [-32768, 32768)
 *   i32, u32 -> 256 bins over [min, max + 1) of the data: the maximum is
 *   counted in the last bin, and with 256 dividing max + 1 - min every edge
 *   is an integer (u32: 0 and 2^32 - 1 are exact doubles, so is max + 1).
 *   u32 images are counted on the CPU only (the device entry points of
 *   pixsum_cuda.h refuse them with PIXSUM_ERR_BAD_TYPE).
 *   f32, f64 -> 256 bins over [min, next double above max) of the finite
 *   samples: the maximum is counted in the last bin, and the edges are rarely
 *   round numbers (give a range for round edges). When that max is DBL_MAX,
 *   hi = DBL_MAX and such samples count as above. Data of a single value v
 *   gets [v, v + 1) (v in bin 0) where v + 1 > v.
 *   [0, 1) if no sample is finite. Only samples the mask selects are looked at.
 * A given bin count with the default range, or a given range with bins 0 (256
 * bins), combine as expected. */

/* Largest bin count accepted by pixsum_histogram() (2^24). */
#define PIXSUM_HIST_MAX_BINS ((size_t)1 << 24)

/* What to count. Zero-initialise and set what you need. */
typedef struct pixsum_hist_spec {
    size_t bins;             /* 0 = default for the input type */
    double lo, hi;           /* range [lo, hi); lo == hi (e.g. both 0) = default */
    /* Optional mask: a u8 view of 1 channel with the image's width, height and
     * depth; only pixels whose mask sample is != 0 are counted. NULL = all. */
    const pixsum_view *mask;
} pixsum_hist_spec;

/* What was counted, per channel (indices 0..channels-1). */
typedef struct pixsum_hist_info {
    size_t bins;             /* bins per channel actually used */
    size_t channels;         /* histograms computed (the image's channels) */
    double lo, hi;           /* range actually used */
    uint64_t pixels;         /* pixels considered (mask != 0), per channel */
    uint64_t in_range[4];    /* samples counted in bins (= sum of the bins) */
    uint64_t below[4];       /* samples < lo, -inf included */
    uint64_t above[4];       /* samples >= hi, +inf included */
    uint64_t nan[4];         /* NaN samples (always 0 for integer images) */
} pixsum_hist_info;

/* Resolves `spec` for image `in` without counting: fills info->bins, lo, hi,
 * channels (other fields 0). For the data-range defaults this reads the image
 * (and mask). Use it to size the counts buffer (channels x bins). Returns
 * PIXSUM_OK, PIXSUM_ERR_NULL (in or info NULL), PIXSUM_ERR_BAD_SHAPE /
 * PIXSUM_ERR_BAD_STRIDE (bad image or mask view), PIXSUM_ERR_BAD_TYPE (input
 * type u64/i64 or mask not u8), PIXSUM_ERR_INVALID_ARG (bins above
 * PIXSUM_HIST_MAX_BINS, lo > hi, non-finite lo/hi, or a range so narrow that
 * bins / (hi - lo) overflows). */
PIXSUM_API int pixsum_hist_resolve(const pixsum_view *in, const pixsum_hist_spec *spec,
                                   pixsum_hist_info *info);

/* The bin count pixsum_hist_resolve(), pixsum_histogram() and
 * pixsum_histogram_batch() use for `in` and `spec`, into *bins, without
 * reading a sample: it depends only on in's type and spec's bins and range
 * (the defaults above), not on the data, so that a caller can size the counts
 * (channels x bins, times the images of a batch) before the one call that
 * reads the data. Checks in's view and type and spec's bins and range as
 * pixsum_hist_resolve() does; spec->mask is not looked at (the counting call
 * checks it). Returns PIXSUM_OK, PIXSUM_ERR_NULL (in or bins NULL),
 * PIXSUM_ERR_BAD_SHAPE / PIXSUM_ERR_BAD_STRIDE (bad image view),
 * PIXSUM_ERR_BAD_TYPE (a type histograms do not take), PIXSUM_ERR_INVALID_ARG
 * (bins above PIXSUM_HIST_MAX_BINS, lo > hi, non-finite lo/hi, or a given
 * range that cannot be split into that many bins); *bins is untouched on
 * error. */
PIXSUM_API int pixsum_hist_bins(const pixsum_view *in, const pixsum_hist_spec *spec,
                                size_t *bins);

/* Edge i (0 <= i <= bins) of `bins` bins over [lo, hi), by the rule above: the
 * lower edge of bin i, and edge[bins] = hi. This is the value every front-end
 * reports (CLI CSV/JSON, Python info['edges']). Returns NaN when i > bins or
 * (bins, lo, hi) is not a valid histogram range (bins 0, lo >= hi, not
 * finite, or a step that is not a positive double). */
PIXSUM_API double pixsum_hist_edge(size_t bins, double lo, double hi, size_t i);

/* Absolute histogram h_i of every channel of `in` (2-D or 3-D; u8 u16 i16 i32
 * u32 f32 f64; 1-4 channels counted in one pass) into `counts`: channel c's bin i
 * at counts[c * bins + i], u64 counts that never wrap. `counts_len` is the
 * number of elements of `counts` (at least channels x bins). spec NULL = all
 * defaults. `info` may be NULL; when given it receives the bins, range and the
 * below/above/NaN/in-range counts. The method is the context's (a method with
 * PIXSUM_OP_HISTOGRAM, e.g. "hist.scalar", "hist.sub", "hist.omp") or "auto".
 * Every method gives bit-identical counts. Returns PIXSUM_OK, the codes of
 * pixsum_hist_resolve(), PIXSUM_ERR_NULL (counts NULL), PIXSUM_ERR_BAD_SHAPE
 * (counts_len too small: the detail says how many are needed; or a mask of
 * another shape), PIXSUM_ERR_ALIASING (counts overlaps the image),
 * PIXSUM_ERR_UNSUPPORTED / PIXSUM_ERR_UNAVAILABLE (chosen method),
 * PIXSUM_ERR_NO_MEMORY. On error `counts` is left untouched. */
PIXSUM_API int pixsum_histogram(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_hist_spec *spec, uint64_t *counts,
                                size_t counts_len, pixsum_hist_info *info);

/* Flags of pixsum_histogram_batch(). */
#define PIXSUM_HIST_RANGE_PER_IMAGE 1u /* data-range defaults from each image's own samples */

/* One histogram per image of a batch. `in` holds N = in->depth images of the
 * same width, height, channels and type, one per slice (slice stride = the
 * image stride); image n's histogram of channel c, bin i, goes to
 * counts[(n * channels + c) * bins + i]. Each equals, bit for bit,
 * pixsum_histogram() of that image with the bins and range resolved for the
 * batch. Bins and range follow pixsum_histogram()'s rules; where the range
 * defaults to the data's (i32, u32, f32, f64 without a range), it covers the
 * selected samples of the whole batch, so that the N histograms share their
 * edges, or with PIXSUM_HIST_RANGE_PER_IMAGE each image's own samples
 * (infos[n] then gives image n's range). spec->mask, if given: a u8
 * 1-channel view of in's width and height with depth N (a mask per image) or
 * depth 1 (one mask for every image). `infos`: NULL or an array of N
 * pixsum_hist_info, image n's in infos[n]. counts_len >= N x channels x bins
 * (pixsum_hist_bins() gives the bins, reading no sample). With several threads
 * in the context and at least as many images as threads, the images are
 * shared out over the threads (each counted on one thread); otherwise each
 * image in turn uses every thread. Returns PIXSUM_OK, the codes of
 * pixsum_histogram() (checked for the whole batch before anything is
 * written: counts and infos are then untouched), PIXSUM_ERR_INVALID_ARG
 * (unknown flags), PIXSUM_ERR_TOO_LARGE (N x channels x bins overflows); an
 * error while counting one image (PIXSUM_ERR_NO_MEMORY, or a per-image data
 * range a double cannot hold) names the image in the detail and may leave
 * other images' counts written. */
PIXSUM_API int pixsum_histogram_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_hist_spec *spec, unsigned flags,
                                      uint64_t *counts, size_t counts_len,
                                      pixsum_hist_info *infos);

/* Flags of pixsum_hist_relative(). */
#define PIXSUM_HIST_CUMULATIVE     1u /* H_k = sum of h_i over i <= k */
#define PIXSUM_HIST_OF_ALL_SAMPLES 2u /* divide by info->pixels instead of in_range */

/* Cumulative absolute histogram H_k = sum_{i <= k} h_i of each of the
 * info->channels histograms in `counts` (layout of pixsum_histogram()) into
 * `out` (same layout; out == counts is allowed), computed with the library's
 * scan. The last bin of each channel equals info->in_range[c]. Returns
 * PIXSUM_OK, PIXSUM_ERR_NULL or PIXSUM_ERR_INVALID_ARG (info->bins 0 or
 * channels not 1..4). */
PIXSUM_API int pixsum_hist_cumulative(const pixsum_hist_info *info, const uint64_t *counts,
                                      uint64_t *out);

/* Relative histogram h_i / n (flags 0) or cumulative relative histogram
 * H_k / n (PIXSUM_HIST_CUMULATIVE) of each channel into `out` (doubles, layout
 * of pixsum_histogram()). n is info->in_range[c] (so the bins sum to 1 and the
 * last cumulative bin is exactly 1), or info->pixels with
 * PIXSUM_HIST_OF_ALL_SAMPLES (out-of-range and NaN samples then make the sum
 * below 1). A channel with n = 0 gives all zeros. Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL or PIXSUM_ERR_INVALID_ARG (unknown flags, bad info). */
PIXSUM_API int pixsum_hist_relative(const pixsum_hist_info *info, const uint64_t *counts,
                                    unsigned flags, double *out);

/* --- Histograms over given edges, weighted histograms ------------------- */

/* Flag of pixsum_hist_edges_spec and pixsum_otsu_image(): the last bin also
 * holds samples equal to its upper edge (NumPy's closed last bin). */
#define PIXSUM_HIST_CLOSED_LAST 4u

/* Flag of pixsum_hist_uniform_edges(), pixsum_hist_centers() and
 * pixsum_otsu_image(): edges and centres rounded to f32 (each edge computed
 * in double, then rounded; a centre (e[i] + e[i + 1]) / 2 in f32 arithmetic),
 * as NumPy computes them for float32 data. pixsum_otsu_image() applies it to
 * f32 images only. */
#define PIXSUM_HIST_F32_EDGES 8u

/* Bins given by their edges, NumPy's `bins=<array>`. Zero-initialise and set
 * edges and n_edges. */
typedef struct pixsum_hist_edges_spec {
    /* n_edges = bins + 1 edges e[0..bins], non-decreasing (equal neighbours
     * make an empty bin), no NaN (-inf and +inf are allowed). */
    const double *edges;
    size_t n_edges;          /* 2 .. PIXSUM_HIST_MAX_BINS + 1 */
    unsigned flags;          /* 0 or PIXSUM_HIST_CLOSED_LAST */
    const pixsum_view *mask; /* as pixsum_hist_spec's mask; NULL = all */
    /* pixsum_histogram_weighted() only: a view of the image's width, height
     * and depth with 1 channel (one weight per pixel, for every channel) or
     * the image's channels (one per sample); any type of pixsum_histogram()
     * plus u32. NULL: every sample weighs 1. */
    const pixsum_view *weights;
} pixsum_hist_edges_spec;

/* Histogram of every channel of `in` over the bins of edges e[0..B]
 * (B = n_edges - 1), samples compared exactly as doubles:
 *   NaN                                  -> info nan[c]
 *   v < e[0] (incl. -inf)                -> info below[c]
 *   v >= e[B] (v > e[B] with CLOSED_LAST)-> info above[c]
 *   otherwise the bin i with e[i] <= v < e[i + 1] (v = e[B] with
 *   CLOSED_LAST: bin B - 1).
 * With the library's own edges (pixsum_hist_edge()) and no flag, the counts
 * equal pixsum_histogram()'s bit for bit; with CLOSED_LAST they equal
 * np.histogram(v, bins=edges). Each sample is found by binary search over the
 * edges (8- and 16-bit images: once per raw value); rows are spread over the
 * context's threads. counts: channels x B u64 values, layout of
 * pixsum_histogram(); info (may be NULL) gets bins B, lo = e[0], hi = e[B]
 * and the totals. spec->weights must be NULL here. Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL, the image and mask codes of pixsum_hist_resolve(),
 * PIXSUM_ERR_INVALID_ARG (fewer than 2 or more than PIXSUM_HIST_MAX_BINS + 1
 * edges, a NaN edge, decreasing edges, unknown flags, weights given),
 * PIXSUM_ERR_BAD_SHAPE (counts_len < channels x B), PIXSUM_ERR_ALIASING,
 * PIXSUM_ERR_NO_MEMORY. On error `counts` is left untouched. */
PIXSUM_API int pixsum_histogram_edges(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_hist_edges_spec *spec, uint64_t *counts,
                                      size_t counts_len, pixsum_hist_info *info);

/* Weighted histogram (NumPy's `weights=`): as pixsum_histogram_edges(), but
 * bin i of channel c receives the sum, in double precision, of the weights of
 * its samples (spec->weights; NULL = 1 each) in `sums`. info's counts are
 * sample counts, not weights. The sums are added row band by row band in a
 * fixed order that depends on the image's shape and the bins only, so the
 * result does not depend on the threads. A NaN weight makes its bin NaN.
 * Returns the codes of pixsum_histogram_edges() (weights allowed), plus the
 * view codes for the weights, PIXSUM_ERR_BAD_TYPE (weights of an unsupported
 * type) and PIXSUM_ERR_BAD_SHAPE (weights of another shape or channels). */
PIXSUM_API int pixsum_histogram_weighted(pixsum_ctx *ctx, const pixsum_view *in,
                                         const pixsum_hist_edges_spec *spec, double *sums,
                                         size_t sums_len, pixsum_hist_info *info);

/* NumPy's density: out[c][i] = x[c][i] / (e[i + 1] - e[i]) / total_c, with
 * x the counts (or, counts NULL, the weighted sums), total_c the sum of
 * channel c's x (exact for counts) and the operations in that order, IEEE
 * rules (a zero total or a zero-width bin gives NaN or inf, as in NumPy).
 * The integral over the range is 1. edges: info->bins + 1 values, or NULL for
 * the uniform edges of info (pixsum_hist_edge()). Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL (info, out, or both counts and sums NULL) or
 * PIXSUM_ERR_INVALID_ARG (bad info). */
PIXSUM_API int pixsum_hist_density(const pixsum_hist_info *info, const double *edges,
                                   const uint64_t *counts, const double *sums, double *out);

/* Bin centres: centers[i] = (e[i] + e[i + 1]) / 2 (halves added where the
 * sum overflows), i < info->bins, as scikit-image reports them; with flags
 * PIXSUM_HIST_F32_EDGES the edges are rounded to f32 and the centre computed
 * in f32 (NumPy's float32 arithmetic), else 0. edges: NULL for the uniform
 * edges of info. Returns PIXSUM_OK, PIXSUM_ERR_NULL or PIXSUM_ERR_INVALID_ARG
 * (info->bins 0 or above PIXSUM_HIST_MAX_BINS, unknown flags). */
PIXSUM_API int pixsum_hist_centers(const pixsum_hist_info *info, const double *edges,
                                   unsigned flags, double *centers);

/* The bins + 1 uniform edges of (bins, lo, hi), pixsum_hist_edge(), into
 * edges; with flags PIXSUM_HIST_F32_EDGES each rounded to f32 (NumPy's edges
 * of float32 data, to pass to pixsum_histogram_edges()). Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL or PIXSUM_ERR_INVALID_ARG (not a valid histogram range, see
 * pixsum_hist_edge(); unknown flags). */
PIXSUM_API int pixsum_hist_uniform_edges(size_t bins, double lo, double hi, unsigned flags,
                                         double *edges);

/* --- Joint histograms ------------------------------------------------- */

/* Largest table pixsum_histogram_joint() accepts: bins_a x bins_b cells. */
#define PIXSUM_HIST_JOINT_MAX_CELLS ((size_t)1 << 26)

/* What pixsum_histogram_joint() counted. */
typedef struct pixsum_joint_info {
    size_t bins_a, bins_b;   /* table is bins_a rows x bins_b columns */
    double lo_a, hi_a;       /* range used for image a */
    double lo_b, hi_b;       /* range used for image b */
    uint64_t pairs;          /* pixel pairs counted in the table */
    uint64_t excluded;       /* selected pairs with a or b outside its range or NaN */
} pixsum_joint_info;

/* Joint (2-D) histogram of two 1-channel images of the same width, height and
 * depth (types may differ, any type of pixsum_histogram()): counts[i * bins_b
 * + j] = number of pixels whose a sample falls in bin i of spec_a and whose b
 * sample falls in bin j of spec_b (bin rules above). Defaults differ from
 * pixsum_histogram(): 256 bins per axis for every type (u8: [0, 256); u16:
 * [0, 65536); others: data range as above).
 * A pixel counts where both specs' masks (if any) are != 0; pairs with either
 * sample outside its range or NaN are only counted in info->excluded. (i16
 * default: 256 bins over [-32768, 32768).)
 * counts_len >= bins_a x bins_b, at most 2^26 cells. Returns PIXSUM_OK,
 * PIXSUM_ERR_NULL, PIXSUM_ERR_BAD_SHAPE (shapes differ, channels != 1,
 * counts_len too small), PIXSUM_ERR_BAD_TYPE, PIXSUM_ERR_INVALID_ARG (as for
 * pixsum_hist_resolve()), PIXSUM_ERR_TOO_LARGE (more than 2^26 cells),
 * PIXSUM_ERR_NO_MEMORY. On error `counts` is left untouched. */
PIXSUM_API int pixsum_histogram_joint(pixsum_ctx *ctx, const pixsum_view *a,
                                      const pixsum_view *b, const pixsum_hist_spec *spec_a,
                                      const pixsum_hist_spec *spec_b, uint64_t *counts,
                                      size_t counts_len, pixsum_joint_info *info);

/* Information measures of a joint histogram, in nats (natural logarithm),
 * with p = count / total over the table (empty cells contribute 0). */
typedef struct pixsum_joint_stats {
    double entropy_a;          /* H(A) from the row sums */
    double entropy_b;          /* H(B) from the column sums */
    double joint_entropy;      /* H(A, B) */
    double mutual_information; /* I(A; B) = H(A) + H(B) - H(A, B), >= 0 */
    double normalized_mi;      /* (H(A) + H(B)) / H(A, B), in [1, 2]; 2 if H(A,B) = 0 */
} pixsum_joint_stats;

/* Computes the measures of a bins_a x bins_b joint histogram. An all-zero
 * table gives all zeros (normalized_mi 0). Returns PIXSUM_OK, PIXSUM_ERR_NULL
 * or PIXSUM_ERR_INVALID_ARG (a zero dimension). */
PIXSUM_API int pixsum_joint_stats_compute(const uint64_t *counts, size_t bins_a,
                                          size_t bins_b, pixsum_joint_stats *stats);

/* --- Applications ------------------------------------------------------ */

/* Histogram equalisation of a u8 or u16 image (2-D or 3-D, 1-4 channels, each
 * channel equalised on its own) into `out` of the same type and shape
 * (out == in, the same memory and strides, is allowed; other overlaps are
 * not). With L = 256 (u8) or 65536 (u16) levels, cdf the cumulative histogram
 * of the selected pixels (mask NULL = all), n its last value and cdf_min its
 * first non-zero value, each pixel value v becomes
 *   round((cdf[v] - cdf_min) * (L - 1) / (n - cdf_min)), clamped to [0, L - 1]
 * (computed exactly in integers, halves rounded up). Every pixel is mapped,
 * including those the mask leaves out. A channel with one value only
 * (n == cdf_min) is copied unchanged. Returns PIXSUM_OK, PIXSUM_ERR_NULL,
 * PIXSUM_ERR_BAD_SHAPE, PIXSUM_ERR_BAD_STRIDE, PIXSUM_ERR_BAD_TYPE (not u8/u16
 * or out of another type), PIXSUM_ERR_ALIASING, PIXSUM_ERR_NO_MEMORY. */
PIXSUM_API int pixsum_equalize(pixsum_ctx *ctx, const pixsum_view *in,
                               const pixsum_view *out, const pixsum_view *mask);

/* One pixsum_equalize() per image of a batch: `in` holds N = in->depth 2-D
 * images (one per slice; pixsum_equalize() itself reads a 3-D view as one
 * volume with one histogram), each equalised by its own histogram into the
 * same slice of `out` (u8 or u16, in's type and shape; out == in allowed).
 * mask: NULL, or a u8 1-channel view of in's width and height with depth N
 * (one mask per image) or depth 1 (one mask for every image). Each image's
 * result equals, bit for bit, pixsum_equalize() of that slice with its mask.
 * With several threads in the context and at least as many images as
 * threads, the images are shared out over the threads (each on one
 * thread); otherwise each image in turn uses every thread. Returns the codes
 * of pixsum_equalize() (PIXSUM_ERR_BAD_SHAPE also for a mask of another
 * depth), checked for the whole batch before anything is written; a
 * PIXSUM_ERR_NO_MEMORY while equalising one image names it in the detail
 * text and may leave other images written. */
PIXSUM_API int pixsum_equalize_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                     const pixsum_view *out, const pixsum_view *mask);

/* Histogram equalisation with a bin count, of integer and float images (2-D
 * or 3-D, 1-4 channels, each channel on its own, every pixel mapped, the
 * histogram from the pixels the mask selects; out == in allowed when they
 * have the same type, other overlaps are not):
 *  - in u8/u16, out of in's type: `bins` (0 = L) equal bins over [0, L); v
 *    in bin b becomes round((cdf[b] - cdf_min) * (L - 1) / (n - cdf_min))
 *    (cdf over the bins, exact integers, halves up). bins = L (or 0) is
 *    pixsum_equalize(). A channel whose samples share one bin is copied.
 *  - in u8/u16, out f32/f64 (scikit-image's equalize_hist of an integer
 *    image): v becomes F(max(v, m)), F(x) the fraction of the selected
 *    samples <= x and m the smallest selected sample; bins must be 0 or L.
 *  - in f32/f64, out f32/f64 (scikit-image's equalize_hist): `bins` (0 =
 *    256) equal bins over [min, max] of the channel's finite selected
 *    samples, the last bin closed ([min - 0.5, max + 0.5] when min == max,
 *    as NumPy), the cumulative histogram divided by its total, c[i], and the
 *    bin centres x[i] = (e[i] + e[i + 1]) / 2; a sample v becomes c[0] for
 *    v <= x[0], c[bins - 1] for v >= x[bins - 1], else
 *    c[j] + (c[j + 1] - c[j]) / (x[j + 1] - x[j]) * (v - x[j]) with
 *    x[j] <= v < x[j + 1] (v = x[j]: c[j]), each operation rounded in double,
 *    then once to out's type. NaN stays NaN, -inf gives c[0] and +inf 1
 *    (infinities are not counted). For f32 images the edges and centres are
 *    NumPy's float32 ones (PIXSUM_HIST_F32_EDGES) and the c[i] are rounded
 *    to f32, as scikit-image does, so that the result equals equalize_hist's.
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL, the view codes, PIXSUM_ERR_BAD_TYPE (a
 * type pair not listed), PIXSUM_ERR_BAD_SHAPE (out or mask of another
 * shape), PIXSUM_ERR_INVALID_ARG (bins above PIXSUM_HIST_MAX_BINS, bins other
 * than 0 or L for integer-to-float, no finite selected sample in a channel of
 * a float image or none selected for integer-to-float), PIXSUM_ERR_ALIASING,
 * PIXSUM_ERR_NO_MEMORY. */
PIXSUM_API int pixsum_equalize_bins(pixsum_ctx *ctx, const pixsum_view *in,
                                    const pixsum_view *out, const pixsum_view *mask,
                                    size_t bins);

/* Histogram equalisation by a given histogram: as pixsum_equalize(), but the
 * mapping comes from `counts` (u64, channels x L: L = 256 for u8, 65536 for
 * u16, channel c's counts at c * L) instead of the image's own histogram; for
 * an image processed in pieces (chunks, tiles, bands), each piece mapped with
 * the histogram of the whole image gives the whole image's equalisation bit for
 * bit. Returns as pixsum_equalize(), and PIXSUM_ERR_NULL (counts NULL),
 * PIXSUM_ERR_BAD_SHAPE (ncounts is not channels x L), PIXSUM_ERR_OVERFLOW (a
 * channel's counts add up past 2^64). */
PIXSUM_API int pixsum_equalize_counts(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_view *out, const uint64_t *counts,
                                      size_t ncounts);

/* Otsu's threshold of one histogram of `bins` counts: the bin t maximising the
 * between-class variance w0 * w1 * (mu0 - mu1)^2 of the classes bins 0..t and
 * t+1..bins-1 (bin indices as the class values; the smallest such t on ties).
 * Pixels in bins 0..t are the lower class: for an integer image with unit bins
 * starting at lo that is "v <= lo + t" (OpenCV's THRESH_BINARY convention).
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_INVALID_ARG (fewer than 2
 * bins, or fewer than two non-empty bins: no threshold exists; *t is then 0). */
PIXSUM_API int pixsum_otsu(const uint64_t *counts, size_t bins, size_t *t);

/* Otsu's threshold of channel 0 of an image: histogram per `spec` (NULL =
 * defaults), then pixsum_otsu(). *threshold receives the value at the upper
 * edge of bin t, pixsum_hist_edge(bins, lo, hi, t + 1): the lower class is
 * v < *threshold. `bin` (may be NULL) receives t. A constant image gives its
 * value (see pixsum_otsu_image()). Returns the codes of pixsum_otsu_image(). */
PIXSUM_API int pixsum_otsu_threshold(pixsum_ctx *ctx, const pixsum_view *in,
                                     const pixsum_hist_spec *spec, double *threshold,
                                     size_t *bin);

/* What pixsum_otsu_image() found. */
typedef struct pixsum_otsu_result {
    /* pixsum's convention: the upper edge of bin t; the lower class is
     * v < threshold, the foreground v >= threshold. */
    double threshold;
    /* scikit-image's convention: the centre of bin t, (e[t] + e[t + 1]) / 2;
     * its foreground is v > center. */
    double center;
    double lower;          /* e[t], the lower edge of bin t */
    size_t bin;            /* t; SIZE_MAX for a constant image outside the range */
    int constant;          /* 1: every selected sample equals one value v */
    pixsum_hist_info info; /* the histogram that was searched */
} pixsum_otsu_result;

/* Otsu's threshold of channel 0 of an image, as pixsum_otsu_threshold(), with
 * flags 0, PIXSUM_HIST_CLOSED_LAST (the last bin closed as NumPy's) and/or
 * PIXSUM_HIST_F32_EDGES (f32 images: edges and centre in f32): with the range
 * [min, max], 256 bins and both flags, the histogram of
 * skimage.filters.threshold_otsu for float images, whose result is then
 * res->center. A constant image (every selected sample of channel 0 equal
 * to one finite value v) is not refused, as in scikit-image: threshold,
 * center and lower are v, bin is v's bin (SIZE_MAX outside the range) and
 * constant is 1; with pixsum's rule (v >= threshold) every pixel is then in
 * the upper class, with scikit-image's (v > center) none is. Returns
 * PIXSUM_OK, the codes of pixsum_histogram(), PIXSUM_ERR_INVALID_ARG
 * (unknown flags; fewer than two non-empty bins in an image that is not
 * constant, or no finite sample selected). */
PIXSUM_API int pixsum_otsu_image(pixsum_ctx *ctx, const pixsum_view *in,
                                 const pixsum_hist_spec *spec, unsigned flags,
                                 pixsum_otsu_result *res);

/* pixsum_otsu_image() of each image of a batch: `in` holds N = in->depth 2-D
 * images (one per slice); image n's result goes to results[n]
 * (n_results >= N). The histograms are pixsum_histogram_batch()'s: bins and
 * range resolved once for the batch (where the range comes from the data, it
 * covers the selected samples of the whole batch) or, with flag
 * PIXSUM_HIST_RANGE_PER_IMAGE, from each image's own samples; spec->mask as
 * in pixsum_histogram_batch() (depth N or 1). flags: any of
 * PIXSUM_HIST_RANGE_PER_IMAGE, PIXSUM_HIST_CLOSED_LAST, PIXSUM_HIST_F32_EDGES
 * (the last two as pixsum_otsu_image(); with either, each image is counted
 * again over its edges). results[n] equals, bit for bit,
 * pixsum_otsu_image() of slice n with spec's bins and range set to those of
 * results[n].info. Images are shared out over the context's threads as in
 * pixsum_histogram_batch(). Returns PIXSUM_OK, PIXSUM_ERR_NULL, the codes of
 * pixsum_histogram_batch(), PIXSUM_ERR_BAD_SHAPE (n_results < N, a mask of
 * another depth), PIXSUM_ERR_INVALID_ARG (unknown flags; an image with no
 * threshold, as pixsum_otsu_image(): named in the detail text, and other
 * images' results may then be written), PIXSUM_ERR_NO_MEMORY. */
PIXSUM_API int pixsum_otsu_batch(pixsum_ctx *ctx, const pixsum_view *in,
                                 const pixsum_hist_spec *spec, unsigned flags,
                                 pixsum_otsu_result *results, size_t n_results);

/* --- Integral histograms (Porikli 2005) -------------------------------- */

/* An integral histogram: for every pixel (x, y) of a 2-D image, the histogram of
 * the rectangle [0, x] x [0, y] (one SAT per bin, stored bin-innermost), so the
 * histogram of any rectangle costs O(bins x channels) with 4 reads per bin. */
typedef struct pixsum_ihist pixsum_ihist;

/* Default memory limit of pixsum_ihist_new() when max_bytes is 0: 1 GiB. */
#define PIXSUM_IHIST_DEFAULT_MAX_BYTES ((size_t)1 << 30)

/* Bytes an integral histogram of `in` under `spec` would take:
 * (W + 1) x (H + 1) x channels x bins x e, e = 4 when W x H < 2^32 else 8.
 * Returns PIXSUM_OK, the codes of pixsum_hist_resolve(), PIXSUM_ERR_BAD_SHAPE
 * (depth > 1) or PIXSUM_ERR_TOO_LARGE (the size overflows size_t). */
PIXSUM_API int pixsum_ihist_bytes(const pixsum_view *in, const pixsum_hist_spec *spec,
                                  size_t *bytes);

/* Builds the integral histogram of a 2-D image (types, channels, bins and mask
 * as pixsum_histogram(); samples outside the range or NaN are in no bin). The
 * cost of pixsum_ihist_bytes() is checked against max_bytes (0 = default limit)
 * before anything is allocated. Returns PIXSUM_OK with *out set, or the codes
 * of pixsum_ihist_bytes(), PIXSUM_ERR_TOO_LARGE (cost above the limit: the
 * detail gives both), PIXSUM_ERR_NO_MEMORY; *out is NULL on error. */
PIXSUM_API int pixsum_ihist_new(pixsum_ctx *ctx, const pixsum_view *in,
                                const pixsum_hist_spec *spec, size_t max_bytes,
                                pixsum_ihist **out);

/* Rebuilds *ih for another image (of any shape, type and channels allowed by
 * pixsum_ihist_new()) under spec, as pixsum_ihist_new() would, but in the
 * table's memory when the new table fits it: a video's frames then cost no
 * fresh pages (whose faults and zeroing take about a third of a build of a
 * new table, docs/benchmarks.md). To keep the bins and range of the first
 * build, pass its info's bins, lo and hi in spec. Returns the codes of
 * pixsum_ihist_new() (PIXSUM_ERR_NULL for a NULL ih or in); on error *ih
 * keeps its previous table and info. */
PIXSUM_API int pixsum_ihist_rebuild(pixsum_ctx *ctx, pixsum_ihist *ih, const pixsum_view *in,
                                    const pixsum_hist_spec *spec, size_t max_bytes);

/* Bins, channels and range of an integral histogram (the count fields of
 * *info are those of the whole image). Returns PIXSUM_OK or PIXSUM_ERR_NULL. */
PIXSUM_API int pixsum_ihist_info(const pixsum_ihist *ih, pixsum_hist_info *info);

/* Histogram of the rectangle [x, x+w) x [y, y+h) into counts (channels x bins,
 * layout of pixsum_histogram()); equal to pixsum_histogram() of that crop with
 * the same bins and range. Returns PIXSUM_OK, PIXSUM_ERR_NULL,
 * PIXSUM_ERR_BAD_SHAPE (w or h 0) or PIXSUM_ERR_OUT_OF_RANGE. */
PIXSUM_API int pixsum_ihist_query(const pixsum_ihist *ih, size_t x, size_t y, size_t w,
                                  size_t h, uint64_t *counts);

/* Batch of pixsum_ihist_query(): the histograms of n rectangles boxes[i]
 * ([x, x+w) x [y, y+h); z must be 0 and d 1) into counts, n x channels x bins
 * values written box after box. Every box is checked first: with a bad one
 * nothing is written, and the status of the first bad box is returned (its
 * index in the detail text). Large batches run over the context's threads
 * (ctx may be NULL: all cores). Returns PIXSUM_OK, PIXSUM_ERR_NULL,
 * PIXSUM_ERR_BAD_SHAPE (an empty box), PIXSUM_ERR_OUT_OF_RANGE or
 * PIXSUM_ERR_TOO_LARGE (n x channels x bins overflows size_t). */
PIXSUM_API int pixsum_ihist_queries(const pixsum_ctx *ctx, const pixsum_ihist *ih,
                                    const pixsum_box *boxes, size_t n, uint64_t *counts);

/* Frees an integral histogram. Accepts NULL. */
PIXSUM_API void pixsum_ihist_free(pixsum_ihist *ih);

/* ===================================================================== */
/* 9. Box filters                                                        */
/* ===================================================================== */

/* A box filter replaces every pixel by a statistic of the kw x kh window
 * around it, per channel, streamed: no integral table is built; each output
 * row is emitted from running column sums as soon as its window is complete,
 * so the input is read once and the output written once, whatever the window.
 *
 * Window placement (OpenCV's default anchor): output pixel (x, y) gets the
 * columns [x - kw/2, x - kw/2 + kw) and rows [y - kh/2, y - kh/2 + kh)
 * (integer division: centred for odd sizes, one more pixel before the centre
 * than after it for even sizes). With PIXSUM_BORDER_VALID the output is
 * (W - kw + 1) x (H - kh + 1) and pixel (x, y) gets [x, x + kw) x [y, y + kh).
 * Windows may be larger than the image (except for VALID). */

/* What lies outside the image (values pinned). With the image abcdefgh: */
typedef enum pixsum_border {
    PIXSUM_BORDER_REFLECT101 = 0, /* gfedcb|abcdefgh|gfedcba (OpenCV's default) */
    PIXSUM_BORDER_REFLECT    = 1, /* cba|abcdefgh|hgf (BORDER_REFLECT, SciPy 'reflect') */
    PIXSUM_BORDER_REPLICATE  = 2, /* aaa|abcdefgh|hhh */
    PIXSUM_BORDER_CONSTANT   = 3, /* vvv|abcdefgh|vvv, v = spec->border_value */
    PIXSUM_BORDER_SHRINK     = 4, /* windows cut at the image: statistics over the
                                     pixels inside only (means divide by their count) */
    PIXSUM_BORDER_VALID      = 5  /* only windows fully inside: a smaller output */
} pixsum_border;

#define PIXSUM_BORDER_COUNT 6

/* The statistic of each window (values pinned). Variance is the population
 * variance (divided by the pixel count); std its square root. */
typedef enum pixsum_box_stat {
    PIXSUM_BOX_SUM  = 0,
    PIXSUM_BOX_MEAN = 1,
    PIXSUM_BOX_VAR  = 2,
    PIXSUM_BOX_STD  = 3
} pixsum_box_stat;

/* Parameters of pixsum_box_filter(). Zero-initialise, then set kw and kh. */
typedef struct pixsum_box_filter_spec {
    size_t kw, kh;           /* window width and height, >= 1 */
    pixsum_box_stat stat;    /* default (0): sum */
    pixsum_border border;    /* default (0): reflect101 */
    double border_value;     /* PIXSUM_BORDER_CONSTANT's value; for integer inputs
                                an integer in the input type's range */
} pixsum_box_filter_spec;

/* Short lower-case name of a border ("reflect101", "reflect", "replicate",
 * "constant", "shrink", "valid"), or NULL for an unknown value. */
PIXSUM_API const char *pixsum_border_name(pixsum_border border);

/* Parses a border name (those above, plus "reflect_101", "default" =
 * reflect101, "edge" / "clamp" = replicate). Returns 0 and sets *border, or
 * PIXSUM_ERR_INVALID_ARG (unknown name) / PIXSUM_ERR_NULL. */
PIXSUM_API int pixsum_border_from_name(const char *name, pixsum_border *border);

/* Output size of pixsum_box_filter() for a width x height input: the input's
 * size, or (width - kw + 1) x (height - kh + 1) for PIXSUM_BORDER_VALID.
 * Returns PIXSUM_OK, PIXSUM_ERR_NULL, PIXSUM_ERR_INVALID_ARG (a zero window
 * side, unknown stat or border) or PIXSUM_ERR_BAD_SHAPE (VALID with a window
 * larger than the image). */
PIXSUM_API int pixsum_box_filter_shape(const pixsum_box_filter_spec *spec, size_t width,
                                       size_t height, size_t *out_width,
                                       size_t *out_height);

/* Default output type of pixsum_box_filter() for input type `in`:
 *   sum:      u8 u16 u32 -> u32 when kw x kh x max fits 32 bits, else u64;
 *             i16 i32    -> i32 when it fits 31 bits, else i64; f32 f64 -> f64
 *   mean:     u8 -> u8, u16 -> u16, f32 -> f32, others -> f64
 *   var, std: f32 -> f32, others -> f64
 * (the pixel count is kw x kh, or for SHRINK/VALID at most that). Returns
 * PIXSUM_TYPE_NONE for an unsupported input type or a NULL spec, and for sums
 * that cannot fit 64 bits (refused with PIXSUM_ERR_OVERFLOW). */
PIXSUM_API pixsum_type pixsum_box_filter_type(pixsum_type in,
                                              const pixsum_box_filter_spec *spec);

/* Box filter of the 2-D image `in` into `out`, which the caller allocates
 * with the shape of pixsum_box_filter_shape() and in's channels (1-4); any row
 * strides. A view of depth N > 1 is a batch of N independent 2-D images (one
 * per slice, slice stride = the image stride): `out` then has depth N too,
 * image n's filter goes to out's slice n and equals, bit for bit, the call
 * on that slice alone. With several threads in the context and at least as
 * many images as threads, the images are shared out over the threads (each
 * filtered on one thread); otherwise each image in turn uses every thread.
 * Inputs: u8 u16 i16 i32 u32 f32 f64. Outputs:
 *   sum:       u32 u64 (unsigned inputs), i32 i64, f32 f64; integer outputs
 *              are exact and must hold every window sum (kw x kh x the input
 *              type's largest magnitude), else PIXSUM_ERR_OVERFLOW;
 *   mean:      the input's own type for u8 and u16 (the exact quotient rounded
 *              to nearest, ties to even: for odd windows equal to cv2.blur
 *              bit for bit), f32, f64;
 *   var, std:  f32, f64.
 * Arithmetic: integer inputs accumulate exactly in integers (32-bit where one
 * window's sum fits, else 64-bit; sums of squares 64-bit; the variance
 * numerator n*sum(x^2) - sum(x)^2 in 128 bits, so it is exact and never
 * negative; one final rounding each for the division and the conversion).
 * Integer windows whose sum of squares can exceed 64 bits (i32/u32 inputs)
 * and float inputs use f64: samples are shifted by the image's first sample of
 * each channel (K) before they are summed, the column and row sums are
 * running sums, and the variance is (Q - S^2/n)/n of the shifted sums,
 * clamped at 0. Bound (float path), with M = max |x - K| and
 * m = H + kh + W + kw: |error of a sum| <= m * kw * kh * M * 2^-52, likewise
 * for the sum of squares with M^2 (see docs/guide.md).
 * The method is the context's (a method with PIXSUM_OP_BOX_FILTER:
 * "box.stream", one thread, or "box.omp", bands of output rows over the
 * context's threads, in OpenMP builds) or "auto" (box.omp where built).
 * Returns PIXSUM_OK, or: PIXSUM_ERR_NULL (ctx may be NULL; in, spec, out not),
 * the codes of pixsum_view_check() for in and out, PIXSUM_ERR_BAD_SHAPE
 * (out's depth is not in's, out of the wrong size or channels, VALID window
 * larger than the image), PIXSUM_ERR_INVALID_ARG (zero window side, unknown
 * stat or border, a constant value that is not finite or not an integer of the input
 * type's range for integer inputs), PIXSUM_ERR_BAD_TYPE (input or output type
 * not supported for the stat), PIXSUM_ERR_OVERFLOW (integer sum output or
 * accumulation that cannot hold one window), PIXSUM_ERR_TOO_LARGE (kw x kh
 * overflows), PIXSUM_ERR_ALIASING (in and out overlap), PIXSUM_ERR_UNSUPPORTED
 * (the context's method is not a box filter method), PIXSUM_ERR_NO_MEMORY.
 * On error `out` is left untouched (except PIXSUM_ERR_NO_MEMORY from one band
 * of box.omp, which may leave the other bands written, or from one image of
 * a batch, named in the detail text, which may leave other images written). */
PIXSUM_API int pixsum_box_filter(pixsum_ctx *ctx, const pixsum_view *in,
                                 const pixsum_box_filter_spec *spec, const pixsum_view *out);

/* ===================================================================== */
/* 10. Local thresholds and local normalisation                          */
/* ===================================================================== */

/* Per-pixel functions of the mean m and standard deviation s (population:
 * divided by the pixel count) of the window around each pixel, computed on
 * the streamed box filter of section 9: the window sums and sums of squares
 * of each output row are turned into the result as the row is produced; no
 * integral table, no full-size mean or variance image. The window placement
 * (anchor), the borders and their constant value, the output size (smaller
 * with PIXSUM_BORDER_VALID, where pixel (x, y) is compared with input sample
 * (x + kw/2, y + kh/2)), the accepted input types (u8 u16 i16 i32 u32 f32
 * f64) and the accumulation are those of pixsum_box_filter() with stat
 * PIXSUM_BOX_VAR: integer inputs get m and s from exact integer sums (the
 * variance numerator n*sum(x^2) - sum(x)^2 is exact and never negative),
 * except i32/u32 windows whose sums of squares can pass 64 bits, which like
 * float inputs use the f64 sums of pixsum_box_filter()'s bound.
 *
 * Error bound (exact sums): m is the correctly rounded quotient, s is
 * within 2 ulps of the exact standard deviation, and the f64 threshold or
 * normalised value within 2^-48 * (|m| + |k| s (1 + |m| / r) + |offset|)
 * of the exact one (normalisation: 2^-48 (|x| + |m|) / (s + eps) relative);
 * f32 outputs add one rounding to float (2^-24 relative). f64 sums add
 * their error (pixsum_box_filter()'s bound) to m and s. */

/* The threshold of each window (values pinned). Sign convention: Niblack's
 * T = m + k s, so Niblack's usual k = -0.2 darkens; scikit-image's
 * threshold_niblack(image, k=kappa) computes m - kappa s, which is k = -kappa
 * here. Sauvola's T = m (1 + k (s / r - 1)) is scikit-image's. */
typedef enum pixsum_threshold_method {
    PIXSUM_THRESHOLD_MEAN    = 0, /* T = m - offset */
    PIXSUM_THRESHOLD_NIBLACK = 1, /* T = m + k s */
    PIXSUM_THRESHOLD_SAUVOLA = 2  /* T = m (1 + k (s / r - 1)) */
} pixsum_threshold_method;

/* Parameters of pixsum_threshold_local(). Zero-initialise, then set kw, kh,
 * the method and its parameters. */
typedef struct pixsum_threshold_spec {
    size_t kw, kh;                  /* window, >= 1 (anchor of section 9) */
    pixsum_border border;           /* default (0): reflect101 */
    double border_value;            /* PIXSUM_BORDER_CONSTANT's value, as the box filter's */
    pixsum_threshold_method method; /* default (0): mean */
    double k;                       /* Niblack and Sauvola (finite) */
    double r;                       /* Sauvola's range of s; 0: half the input type's
                                       range (127.5 u8, 32767.5 u16 and i16,
                                       2147483647.5 u32 and i32, 1 for f32 f64,
                                       as scikit-image) */
    double offset;                  /* mean method (finite) */
    uint8_t foreground;             /* mask value where x > T (else 0); 0 means 255 */
} pixsum_threshold_spec;

/* Sauvola's default r for input type t (see above), or 0 for an unsupported
 * type. */
PIXSUM_API double pixsum_threshold_default_r(pixsum_type t);

/* Local threshold of the one-channel 2-D image `in`: writes the threshold map
 * T (f32 or f64) into `map` and/or the mask (u8: spec->foreground where
 * x > T, computed in double, else 0) into `mask`; either may be NULL, not
 * both. Both have the box filter's output shape (pixsum_box_filter_shape())
 * and one channel; any row strides. The mask is x > T of the f64 threshold,
 * so a sample within the error bound of T may fall either way.
 * Images of 2-4 channels are refused (PIXSUM_ERR_BAD_SHAPE): threshold one
 * channel (a view of one channel needs a packed row; convert to gray first).
 * A view of depth N > 1 is a batch of N independent images, as for
 * pixsum_box_filter(): `map` and `mask` then have depth N, image n's results
 * go to their slice n and equal, bit for bit, the call on that slice alone;
 * the images are shared out over the context's threads by the box filter
 * batch's rule. (The GPU entries take one image.)
 * The method is the context's box filter method (box.stream, box.omp, auto).
 * Returns PIXSUM_OK, or: PIXSUM_ERR_NULL (in, spec, or both outputs),
 * the codes of pixsum_view_check(), PIXSUM_ERR_BAD_SHAPE (an output's depth
 * is not in's, more than one channel, outputs of the wrong size or channels,
 * VALID window larger than the image), PIXSUM_ERR_INVALID_ARG (zero window
 * side, unknown method or border, k / offset / border value not finite, r
 * negative or not finite), PIXSUM_ERR_BAD_TYPE (input type, map not f32/f64, mask not u8),
 * PIXSUM_ERR_TOO_LARGE (window side over 2^20), PIXSUM_ERR_ALIASING (an
 * output overlaps the input or the other output), PIXSUM_ERR_UNSUPPORTED (the
 * context's method is not a box filter method), PIXSUM_ERR_NO_MEMORY. On
 * error the outputs are left untouched (PIXSUM_ERR_NO_MEMORY from one band
 * of box.omp may leave the other bands written, or from one image of a
 * batch, named in the detail text, other images). */
PIXSUM_API int pixsum_threshold_local(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_threshold_spec *spec,
                                      const pixsum_view *map, const pixsum_view *mask);

/* Parameters of pixsum_normalize_local(). Zero-initialise, then set kw, kh. */
typedef struct pixsum_normalize_spec {
    size_t kw, kh;        /* window, >= 1 */
    pixsum_border border; /* default (0): reflect101 */
    double border_value;  /* PIXSUM_BORDER_CONSTANT's value */
    double eps;           /* added to s; >= 0 and finite */
} pixsum_normalize_spec;

/* Local normalisation: out = (x - m) / (s + eps) per sample and channel
 * (1-4 channels, each its own windows), 0 where s + eps is 0 (a flat window
 * with eps = 0). `out` is f32 or f64 with the box filter's output shape and
 * in's channels; any row strides. A view of depth N is a batch of N images
 * (`out` of depth N), as for pixsum_threshold_local(). Returns the codes of
 * pixsum_threshold_local() (PIXSUM_ERR_INVALID_ARG for an eps that is
 * negative or not finite; no channel restriction). */
PIXSUM_API int pixsum_normalize_local(pixsum_ctx *ctx, const pixsum_view *in,
                                      const pixsum_normalize_spec *spec,
                                      const pixsum_view *out);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_H */

/* ---- Experimental: measurement and test entry points ---------------------------------
 * Seen where PIXSUM_EXPERIMENTAL is defined before this header is included (as
 * zstd's ZSTD_STATIC_LINKING_ONLY section). Not part of the stable API: they may
 * change or go in any release. */
#if defined(PIXSUM_EXPERIMENTAL) && !defined(PIXSUM_H_EXPERIMENTAL)
#define PIXSUM_H_EXPERIMENTAL

#ifdef __cplusplus
extern "C" {
#endif

/* Name of the instruction set the CPU kernels use now: "scalar", "sse2",
 * "avx2" or "avx512" -- the best this CPU supports, capped by the environment
 * variable PIXSUM_FORCE_ISA and by pixsum_cpu_force_isa(). Never NULL. */
PIXSUM_API const char *pixsum_cpu_isa(void);

/* Caps the CPU kernels' instruction set at `name` (a name of pixsum_cpu_isa();
 * a level above what this CPU supports gives the best supported one), or
 * removes the cap set by an earlier call when `name` is NULL. Results do not
 * change (integer tables keep their bits, float ones stay within their
 * documented bounds); only the code that computes them does. Affects every
 * thread; meant for tests and benchmarks. Returns PIXSUM_OK or
 * PIXSUM_ERR_INVALID_ARG (unknown name; nothing changes). */
PIXSUM_API int pixsum_cpu_force_isa(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_EXPERIMENTAL */
