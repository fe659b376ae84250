/*
 * cuda_box.h - the box-filter kernel (box_filter.cu) as the host side
 * (cuda_box.c) sees it: one validated request over device memory.
 */
#ifndef PIXSUM_CUDA_BOX_H
#define PIXSUM_CUDA_BOX_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element kinds of the table and of the output (pixsum_type values are
 * mapped by the host). i64 tables subtract as u64 (the same bits) and are
 * read as signed when converted to double. */
typedef enum psi_box_kind {
    PSI_BOX_U32 = 0,
    PSI_BOX_U64 = 1,
    PSI_BOX_I64 = 2,
    PSI_BOX_F32 = 3,
    PSI_BOX_F64 = 4
} psi_box_kind;

typedef struct psi_box_job {
    const void *table;      /* padded table: row r, column x, channel c at
                               table + r * table_row + (x * channels + c) * size */
    ptrdiff_t table_row;    /* bytes between table rows */
    psi_box_kind table_kind;
    void *out;              /* output row r at out + r * out_row */
    ptrdiff_t out_row;
    psi_box_kind out_kind;
    size_t width, height;   /* the image's (the table is one larger each way) */
    size_t out_width, out_height;
    size_t channels;        /* 1-4 */
    size_t kh, kw;          /* window rows and columns, >= 1 */
    int valid;              /* 1: windows inside the image; 0: centred, clipped */
    int mean;               /* 1: sums divided by the window's pixel count */
} psi_box_job;

/* Enqueues the filter of `job` on `stream`. Returns 0 or the cudaError_t of
 * the launch. */
int psi_cu_box_filter(const psi_box_job *job, void *stream);

#ifdef __cplusplus
}
#endif

#endif /* PIXSUM_CUDA_BOX_H */
