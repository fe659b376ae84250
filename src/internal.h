/*
 * internal.h - what the library's files share and the public header hides:
 * the context's fields, the validated job handed to a method, the method
 * descriptor every backend registers, the thread-local error detail, the
 * per-thread scratch buffers and the address arithmetic of views.
 *
 * A backend adds methods by filling one of the psi_methods_* arrays declared
 * below (each ends with an entry whose name is NULL); registry.c joins them.
 */
#ifndef PIXSUM_INTERNAL_H
#define PIXSUM_INTERNAL_H

#include "pixsum.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- context ---------------------------------------------------------- */

struct pixsum_ctx {
    int method;          /* method id, 0 = auto */
    int threads;         /* 0 = all online cores */
    int wrap;            /* modular integer arithmetic */
    int padded;          /* zero-padded table layout */
    intptr_t cuda_stream;
    int cuda_device;
    /* Device scratch owned by the CUDA backend (NULL without CUDA). */
    void *cuda_scratch;
    size_t cuda_scratch_bytes;
    void (*cuda_release)(pixsum_ctx *ctx);
};

/* Defaults used when an entry point receives ctx == NULL. */
extern const pixsum_ctx psi_default_ctx;

/* ---- error detail ----------------------------------------------------- */

/* Clears this thread's detail text (done at the start of each entry point). */
void psi_clear_error(void);

/* Records a printf-style detail text for `status` and returns `status`, so a
 * check can read: return psi_fail(PIXSUM_ERR_BAD_SHAPE, "width is 0"); */
int psi_fail(int status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* ---- views ------------------------------------------------------------ */

/* Address of element row y of slice z (x = 0, channel 0). */
static inline void *psi_row(const pixsum_view *v, size_t y, size_t z)
{
    return (char *)v->data + (ptrdiff_t)z * v->slice_stride + (ptrdiff_t)y * v->row_stride;
}

/* Samples in one row (width x channels). */
static inline size_t psi_row_samples(const pixsum_view *v)
{
    return v->width * v->channels;
}

/* Byte range [*lo, *hi) a (checked) view touches; used for aliasing checks. */
void psi_view_extent(const pixsum_view *v, uintptr_t *lo, uintptr_t *hi);

/* True for the integer types. */
static inline bool psi_type_is_int(pixsum_type t)
{
    return t != PIXSUM_F32 && t != PIXSUM_F64;
}

/* Largest magnitude a sample of integer type `t` can have (0 for floats). */
uint64_t psi_type_max_magnitude(pixsum_type t);

/* True if (in -> out) is a supported pair for plain (squared = 0) or squared
 * (squared = 1) integral tables. */
bool psi_pair_supported(pixsum_type in, pixsum_type out, int squared);

/* pixsum_integral_check() for a table that continues a carry row whose
 * largest magnitude is `above` (0: none): the band's worst case plus `above`
 * must fit the output (types.c). Does not clear the error detail. */
int psi_integral_check_above(pixsum_type in, pixsum_type out, size_t count, int squared,
                             uint64_t above);

/* Validates an integral table `out` for the (checked) input `in`, on every
 * backend: a valid view of in's channels and shape want_w x want_h x want_d,
 * a type pair that exists (squared or not) and cannot overflow unless wrap
 * mode allows it, and no overlap with the input. The overflow rule counts one
 * table's pixels: the whole volume, or one slice when `per_slice` (a batch of
 * independent images), plus `above`, the largest magnitude of a carry row (0:
 * none). `what` names the table in the detail text. Returns PIXSUM_OK, the
 * codes of pixsum_view_check(), PIXSUM_ERR_BAD_SHAPE, PIXSUM_ERR_BAD_TYPE,
 * PIXSUM_ERR_OVERFLOW or PIXSUM_ERR_ALIASING (integral.c). */
int psi_integral_check_table(const pixsum_view *in, const pixsum_view *out, size_t want_w,
                             size_t want_h, size_t want_d, int squared, int wrap, uint64_t above,
                             bool per_slice, const char *what);

/* Number of available online CPU cores (>= 1), computed once. */
int psi_cpu_count(void);

/* Threads a call may use: the context's PIXSUM_PARAM_THREADS, or every core
 * (psi_cpu_count()) when that is 0 or ctx is NULL. */
int psi_ctx_threads(const pixsum_ctx *ctx);

/* ---- batches (batch.c) --------------------------------------------------- */

/* One image of a batch: image z with context c (which may be a one-thread
 * copy of the caller's). Returns a pixsum status. */
typedef int (*psi_batch_image_fn)(pixsum_ctx *c, size_t z, void *user);

/* Runs one(c, z, user) for the n images of a batch: shared out over the
 * context's threads, one image per thread, when there are several threads, at
 * least as many images and a CPU method; else in turn, each with every
 * thread. Returns PIXSUM_OK or the first failure, its detail naming the
 * image (other images may have been processed). */
int psi_batch_run(pixsum_ctx *c, size_t n, psi_batch_image_fn one, void *user);

/* ---- per-thread scratch (scratch.c) ----------------------------------- */

/* The buffers a thread keeps between calls, one per use. */
typedef enum psi_scratch_slot {
    PSI_SCRATCH_HIST_COUNTS = 0, /* pixsum_histogram()'s counts before they are copied out */
    PSI_SCRATCH_HIST_WIDE = 1,   /* u64 raw-value or classified totals of a row range */
    PSI_SCRATCH_HIST_TABLES = 2, /* u32 counting sub-tables */
    PSI_SCRATCH_SLOTS = 3
} psi_scratch_slot;

/* Largest request a slot keeps; larger ones are allocated and freed each time. */
#define PSI_SCRATCH_MAX_BYTES ((size_t)4 << 20)

/* Zeroed memory of `bytes` bytes, owned by the caller until it hands it back
 * with psi_scratch_give(slot, p). The calling thread's buffer for `slot` when
 * it is free and the request is at most PSI_SCRATCH_MAX_BYTES (kept, and
 * grown, between calls; freed when the thread exits), else from calloc.
 * Returns NULL when memory runs out. */
void *psi_scratch_take(psi_scratch_slot slot, size_t bytes);

/* Hands back what psi_scratch_take(slot, ...) returned on this thread (NULL
 * allowed): the slot's buffer is kept, anything else freed. */
void psi_scratch_give(psi_scratch_slot slot, void *p);

/* ---- jobs and methods ------------------------------------------------- */

/* A validated integral request. Views are inclusive tables of the input's
 * shape: for the padded layout the core passes the inner region and writes the
 * zero border itself. Either out or out_sq may have data == NULL (not asked). */
typedef struct psi_job {
    pixsum_op op;        /* INTEGRAL, INTEGRAL_SQ, TILTED or INTEGRAL_3D */
    pixsum_view in;
    pixsum_view out;     /* plain table (data NULL if not requested) */
    pixsum_view out_sq;  /* squared table (data NULL if not requested) */
    /* pixsum_integral_carry(): the table row above the first row of out and
     * out_sq (width x channels elements of the table's type, contiguous), or
     * NULL; methods that take them declare PIXSUM_OP_CARRY */
    const void *carry, *carry_sq;
    int wrap;
    int threads;         /* resolved: >= 1 */
    pixsum_ctx *ctx;     /* never NULL: the caller's or a local default copy */
    const void *extra;   /* operation-specific parameters (histograms etc.) */
} psi_job;

/* The tables a job writes, plain first, then squared: fills tables[] and
 * squared[] (0 plain, 1 squared) and returns how many (1 or 2). */
static inline int psi_job_tables(const psi_job *job, const pixsum_view **tables, int *squared)
{
    int n = 0;
    if (job->out.data) {
        tables[n] = &job->out;
        squared[n++] = 0;
    }
    if (job->out_sq.data) {
        tables[n] = &job->out_sq;
        squared[n++] = 1;
    }
    return n;
}

typedef struct psi_method {
    const char *name;
    pixsum_backend backend;
    unsigned ops;             /* pixsum_op bits */
    const char *description;
    /* Rank used by "auto": the available supporting method with the highest
     * rank runs; 0 = never chosen automatically. */
    int auto_rank;
    /* Returns true if the method can run in this process (ISA, device). NULL
     * means always. */
    bool (*available)(void);
    /* Returns true if the method handles this job (types, channels, shape).
     * NULL means every job of its ops whose type pair is supported. */
    bool (*supports)(const psi_job *job);
    /* Runs the job; returns a pixsum_status. */
    int (*run)(const psi_job *job);
} psi_method;

/* Per-backend method tables, each terminated by an entry with name == NULL. */
extern const psi_method psi_methods_serial[];  /* src/cpu/serial.c */
extern const psi_method psi_methods_cpu_fast[]; /* src/cpu/fast_methods.c */
extern const psi_method psi_methods_omp[];     /* src/cpu/omp_methods.c */
extern const psi_method psi_methods_papers_cpu[]; /* src/papers/ (papers 000, 001, 003) */
extern const psi_method psi_methods_cuda[];    /* src/cuda/ or src/cuda_off.c */
extern const psi_method psi_methods_gl[];      /* src/gl/ or src/gl_off.c */
extern const psi_method psi_methods_hist[];    /* src/hist/ */
extern const psi_method psi_methods_box[];     /* src/cpu/box_stream.c */

/* Registry access (registry.c). */
const psi_method *psi_method_by_id(int id);
int psi_method_count(void);

/* Chooses the method for a job: ctx's method if set (returns
 * PIXSUM_ERR_UNSUPPORTED / PIXSUM_ERR_UNAVAILABLE with detail if it cannot
 * run it), else the best available supporting one. */
int psi_choose_method(const psi_job *job, const psi_method **chosen);

/* Box `index` of a batch against an image of iw x ih x id pixels (box.c):
 * PIXSUM_ERR_BAD_SHAPE when it is empty, PIXSUM_ERR_OUT_OF_RANGE when it
 * leaves the image, each message naming the box; else PIXSUM_OK. */
int psi_check_box(size_t iw, size_t ih, size_t id, const pixsum_box *b, size_t index);

/* ---- element access (slow paths: reference code, box queries) --------- */

/* Element i of a row of `type`, as a 64-bit two's-complement integer
 * (modular) or as a double. */
static inline uint64_t psi_load_u64(pixsum_type type, const void *row, size_t i)
{
    switch (type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return (uint64_t)(int64_t)((const int16_t *)row)[i];
    case PIXSUM_I32: return (uint64_t)(int64_t)((const int32_t *)row)[i];
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    case PIXSUM_U64: return ((const uint64_t *)row)[i];
    case PIXSUM_I64: return (uint64_t)((const int64_t *)row)[i];
    case PIXSUM_F32: return (uint64_t)(int64_t)((const float *)row)[i];
    case PIXSUM_F64: return (uint64_t)(int64_t)((const double *)row)[i];
    default: return 0;
    }
}

static inline double psi_load_f64(pixsum_type type, const void *row, size_t i)
{
    switch (type) {
    case PIXSUM_U8: return ((const uint8_t *)row)[i];
    case PIXSUM_U16: return ((const uint16_t *)row)[i];
    case PIXSUM_I16: return ((const int16_t *)row)[i];
    case PIXSUM_I32: return ((const int32_t *)row)[i];
    case PIXSUM_U32: return ((const uint32_t *)row)[i];
    case PIXSUM_U64: return (double)((const uint64_t *)row)[i];
    case PIXSUM_I64: return (double)((const int64_t *)row)[i];
    case PIXSUM_F32: return ((const float *)row)[i];
    case PIXSUM_F64: return ((const double *)row)[i];
    default: return 0;
    }
}

/* Stores v (modular) into element i of an integer row. */
static inline void psi_store_u64(pixsum_type type, void *row, size_t i, uint64_t v)
{
    switch (type) {
    case PIXSUM_U32: ((uint32_t *)row)[i] = (uint32_t)v; break;
    case PIXSUM_U64: ((uint64_t *)row)[i] = v; break;
    case PIXSUM_I64: ((int64_t *)row)[i] = (int64_t)v; break;
    default: break;
    }
}

/* Stores v into element i of a float row. */
static inline void psi_store_f64(pixsum_type type, void *row, size_t i, double v)
{
    if (type == PIXSUM_F32)
        ((float *)row)[i] = (float)v;
    else if (type == PIXSUM_F64)
        ((double *)row)[i] = v;
}

#endif /* PIXSUM_INTERNAL_H */
