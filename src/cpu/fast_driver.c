/*
 * fast_driver.c - picks the fast row kernel for the active ISA and drives it
 * over a table: one pass over the input, each row's prefix computed in SIMD
 * registers and added to the row above; tables larger than the cache are
 * written with non-temporal stores while a cached row buffer carries the
 * column sums. 3-D volumes fold the previous slice in while the row is hot.
 */
#include "fast_kernels.h"

#include <stdint.h>
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#define PSI_HAVE_X86_KERNELS 1
#else
#define PSI_HAVE_X86_KERNELS 0
#endif

bool psi_fast_kernel_get(pixsum_type in, pixsum_type out, int squared, size_t channels,
                         psi_fast_kernel *k)
{
    const psi_row_kernels *ref = psi_scalar_kernels(in, out);
    if (!ref || !psi_pair_supported(in, out, squared))
        return false;
    k->scalar = squared ? ref->row_sq : ref->row_sum;
    k->fast = NULL;
    k->pair = NULL;
    k->isa = PSI_ISA_SCALAR;
    k->out_size = pixsum_type_size(out);
#if PSI_HAVE_X86_KERNELS
    psi_isa isa = psi_isa_active();
    if (isa >= PSI_ISA_AVX512 && (k->fast = psi_fast_row_avx512(in, out, squared, channels)))
        k->isa = PSI_ISA_AVX512;
    else if (isa >= PSI_ISA_AVX2 && (k->fast = psi_fast_row_avx2(in, out, squared, channels)))
        k->isa = PSI_ISA_AVX2;
    else if (isa >= PSI_ISA_SSE2 && (k->fast = psi_fast_row_sse2(in, out, squared, channels)))
        k->isa = PSI_ISA_SSE2;
    if (in == PIXSUM_U8 && out == PIXSUM_U32 && !squared) {
        if (k->isa == PSI_ISA_AVX512)
            k->pair = psi_fast_pair_u8u32_avx512;
        else if (k->isa == PSI_ISA_AVX2)
            k->pair = psi_fast_pair_u8u32_avx2;
    }
#else
    (void)channels;
#endif
    return true;
}

void psi_fast_kernel_row(const psi_fast_kernel *k, const void *in, void *out,
                         const void *prev, void *acc, size_t width, size_t channels,
                         int stream)
{
    if (k->fast) {
        k->fast(in, out, prev, acc, width, channels, stream);
        return;
    }
    k->scalar(in, out, prev, width, channels);
    if (acc)
        memcpy(acc, out, width * channels * k->out_size);
}

/* A cache size file of sysfs ("32768K"), in bytes; -1 when unreadable. */
static long sysfs_cache_bytes(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char buf[32] = {0};
    long v = -1;
    if (fgets(buf, sizeof buf, f)) {
        char *end;
        long n = strtol(buf, &end, 10);
        if (end != buf && n > 0) {
            if (*end == 'K')
                v = n << 10;
            else if (*end == 'M')
                v = n << 20;
            else if (*end == '\n' || *end == 0)
                v = n;
        }
    }
    fclose(f);
    return v;
}

enum { kStreamCap = 48 << 20 }; /* bytes: the largest threshold taken from the L3 size */

size_t psi_stream_threshold_for(long llc)
{
    size_t t = llc > 0 ? (size_t)llc / 4 : (size_t)8 << 20;
    /* a VM can report its host's whole L3 too, far more than one core can
     * keep: tables above the cap run at least as fast streamed as cached */
    return t > kStreamCap ? (size_t)kStreamCap : t;
}

size_t psi_stream_threshold(void)
{
    static size_t cached; /* benign race: every thread computes the same value */
    size_t t = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (t == 0) {
        const char *env = getenv("PIXSUM_STREAM_BYTES");
        if (env && *env) {
            t = (size_t)strtoull(env, NULL, 10);
        } else {
            /* the L3 this core shares, from sysfs: on a multi-CCX AMD part
             * sysconf can report the whole package's L3 (8 times what a core
             * shares on an 8-CCX part), which would keep tables cached that
             * run faster streamed */
            long llc = sysfs_cache_bytes("/sys/devices/system/cpu/cpu0/cache/index3/size");
#ifdef _SC_LEVEL3_CACHE_SIZE
            if (llc <= 0)
                llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
            if (llc <= 0)
                llc = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
            t = psi_stream_threshold_for(llc);
        }
        if (t == 0)
            t = 1; /* "always stream"; 0 is the not-yet-read marker */
        __atomic_store_n(&cached, t, __ATOMIC_RELAXED);
    }
    return t;
}

/* One requested table and its kernel. */
typedef struct table_pass {
    const pixsum_view *t;
    psi_fast_kernel k;
    const void *init; /* column sums above the first row, or NULL */
    void *acc;        /* cached running row for streamed output */
} table_pass;

static void run_rows_2d(const psi_job *job, table_pass *p, size_t y0, size_t y1, int stream)
{
    const pixsum_view *in = &job->in;
    size_t w = in->width, ch = in->channels;
    const void *prev;
    if (p->init)
        prev = p->init;
    else
        prev = y0 > 0 ? psi_row(p->t, y0 - 1, 0) : NULL;
    if (stream && prev) {
        if (prev != p->acc)
            memcpy(p->acc, prev, w * ch * p->k.out_size);
        prev = p->acc;
    }
    size_t y = y0;
    if (p->k.pair) {
        for (; y + 2 <= y1; y += 2) {
            void *dst0 = psi_row(p->t, y, 0), *dst1 = psi_row(p->t, y + 1, 0);
            p->k.pair(psi_row(in, y, 0), psi_row(in, y + 1, 0), dst0, dst1, prev,
                      stream ? p->acc : NULL, w, ch, stream);
            prev = stream ? p->acc : dst1;
        }
    }
    for (; y < y1; y++) {
        void *dst = psi_row(p->t, y, 0);
        psi_fast_kernel_row(&p->k, psi_row(in, y, 0), dst, prev, stream ? p->acc : NULL, w,
                            ch, stream);
        prev = stream ? p->acc : dst;
    }
}

/* 3-D: row y of slice z = row prefix + row above + (slice above's row y minus
 * its row y-1), folded in while the row is in the cache. */
static void run_rows_3d(const psi_job *job, table_pass *p, size_t y, size_t z)
{
    const pixsum_view *in = &job->in;
    void *dst = psi_row(p->t, y, z);
    psi_fast_kernel_row(&p->k, psi_row(in, y, z), dst, y ? psi_row(p->t, y - 1, z) : NULL,
                        NULL, in->width, in->channels, 0);
    if (z > 0)
        psi_scalar_add(p->t->type)(dst, psi_row(p->t, y, z - 1),
                                   y ? psi_row(p->t, y - 1, z - 1) : NULL,
                                   psi_row_samples(p->t));
}

/* Longest output row (bytes) written with non-temporal stores. */
#define PSI_STREAM_MAX_ROW_BYTES ((size_t)4 << 20)

/* The output element size of each requested table (plain, then squared). */
static int requested_out_sizes(const psi_job *job, size_t sizes[2])
{
    int np = 0;
    if (job->out.data)
        sizes[np++] = pixsum_type_size(job->out.type);
    if (job->out_sq.data)
        sizes[np++] = pixsum_type_size(job->out_sq.type);
    return np;
}

size_t psi_fast_stream_buffer_bytes(const psi_job *job, int stream)
{
    if (!stream || job->in.depth > 1)
        return 0;
    size_t sizes[2], total = 0;
    int np = requested_out_sizes(job, sizes);
    for (int i = 0; i < np; i++) {
        /* Streaming keeps the running row in a cached accumulator; a row too
         * long to stay in the cache gains nothing from it and would cost a
         * row-sized allocation (8.6 GB for one row of 2^31 u8 pixels), so
         * such rows use normal stores. */
        size_t bytes = psi_row_samples(&job->in) * sizes[i];
        if (bytes > PSI_STREAM_MAX_ROW_BYTES)
            return 0;
        total += (bytes + 63) / 64 * 64;
    }
    return total;
}

int psi_fast_rows(const psi_job *job, size_t y0, size_t y1, const void *init,
                  const void *init_sq, int stream, void *buffers)
{
    table_pass passes[2];
    int np = 0;
    const pixsum_view *tables[2] = {&job->out, &job->out_sq};
    const void *inits[2] = {init, init_sq};
    for (int i = 0; i < 2; i++) {
        if (!tables[i]->data)
            continue;
        table_pass *p = &passes[np++];
        p->t = tables[i];
        p->init = inits[i];
        p->acc = NULL;
        if (!psi_fast_kernel_get(job->in.type, tables[i]->type, i, job->in.channels, &p->k))
            return psi_fail(PIXSUM_ERR_BAD_TYPE, "no kernel for %s -> %s",
                            pixsum_type_name(job->in.type), pixsum_type_name(tables[i]->type));
    }
    if (job->in.depth > 1) {
        for (size_t z = 0; z < job->in.depth; z++)
            for (size_t y = y0; y < y1; y++)
                for (int i = 0; i < np; i++)
                    run_rows_3d(job, &passes[i], y, z);
        return PIXSUM_OK;
    }
    size_t buffer_bytes = psi_fast_stream_buffer_bytes(job, stream);
    stream = buffer_bytes > 0;
    unsigned char *own = NULL;
    if (stream && !buffers) {
        if (!(own = aligned_alloc(64, buffer_bytes)))
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "no memory for %zu bytes of row buffers",
                            buffer_bytes);
        buffers = own;
    }
    if (stream) {
        unsigned char *next = buffers;
        for (int i = 0; i < np; i++) {
            passes[i].acc = next;
            next += (psi_row_samples(&job->in) * passes[i].k.out_size + 63) / 64 * 64;
        }
    }
    /* Row by row over both tables so the input row is read from the cache the
     * second time; blocks of rows keep each table's loop tight. */
    for (size_t yb = y0; yb < y1; yb += 16) {
        size_t ye = yb + 16 < y1 ? yb + 16 : y1;
        for (int i = 0; i < np; i++) {
            table_pass *p = &passes[i];
            if (yb > y0) { /* continue from the row above */
                p->init = stream ? p->acc : NULL;
            }
            run_rows_2d(job, p, yb, ye, stream);
        }
    }
    if (stream)
        psi_stream_fence();
    free(own);
    return PIXSUM_OK;
}

void psi_stream_fence(void)
{
#if defined(__x86_64__) || defined(_M_X64)
    _mm_sfence();
#else
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
#endif
}

int psi_fast_run(const psi_job *job)
{
    size_t bytes = 0;
    if (job->out.data)
        bytes += pixsum_type_size(job->out.type);
    if (job->out_sq.data)
        bytes += pixsum_type_size(job->out_sq.type);
    bytes *= job->in.width * job->in.height * job->in.depth * job->in.channels;
    int stream = job->in.depth == 1 && bytes > psi_stream_threshold();
    return psi_fast_rows(job, 0, job->in.height, job->carry, job->carry_sq, stream, NULL);
}

/* Portable column sums through the element helpers (the scalar level). */
static void column_sums_portable(const pixsum_view *in, size_t y0, size_t y1, pixsum_type out,
                                 int squared, void *acc)
{
    size_t n = psi_row_samples(in);
    for (size_t y = y0; y < y1; y++) {
        const void *row = psi_row(in, y, 0);
        if (psi_type_is_int(out)) {
            for (size_t i = 0; i < n; i++) {
                uint64_t v = psi_load_u64(in->type, row, i);
                if (squared)
                    v *= v;
                psi_store_u64(out, acc, i, psi_load_u64(out, acc, i) + v);
            }
        } else if (out == PIXSUM_F32) {
            float *a = acc;
            for (size_t i = 0; i < n; i++) {
                float v = (float)psi_load_f64(in->type, row, i);
                a[i] += squared ? v * v : v;
            }
        } else {
            double *a = acc;
            for (size_t i = 0; i < n; i++) {
                double v = psi_load_f64(in->type, row, i);
                a[i] += squared ? v * v : v;
            }
        }
    }
}

void psi_fast_column_sums(const pixsum_view *in, size_t y0, size_t y1, pixsum_type out,
                          int squared, void *acc)
{
    psi_fast_colsum_fn fn = NULL;
#if PSI_HAVE_X86_KERNELS
    psi_isa isa = psi_isa_active();
    if (isa >= PSI_ISA_AVX512)
        fn = psi_fast_colsum_avx512(in->type, out, squared);
    if (!fn && isa >= PSI_ISA_AVX2)
        fn = psi_fast_colsum_avx2(in->type, out, squared);
    if (!fn && isa >= PSI_ISA_SSE2)
        fn = psi_fast_colsum_sse2(in->type, out, squared);
#endif
    if (!fn) {
        column_sums_portable(in, y0, y1, out, squared, acc);
        return;
    }
    size_t n = psi_row_samples(in);
    for (size_t y = y0; y < y1; y += 4) {
        const void *rows[4];
        int nr = 0;
        for (size_t k = y; k < y1 && nr < 4; k++)
            rows[nr++] = psi_row(in, k, 0);
        fn(rows, nr, acc, n);
    }
}
