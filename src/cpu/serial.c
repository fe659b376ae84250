/*
 * serial.c - the three single-threaded integral-image methods of paper 001,
 * written over the scalar row kernels:
 *   serial.2wh   one pass; each row's running sum plus the row above (2wh adds)
 *   serial.3wh   one pass; the recurrence v + left + up - upleft (3wh adds), as
 *                in papers 000 and 004
 *   serial.dual  two passes; row prefix sums, then the rows added downwards
 *                (paper 003)
 * All three are bit-exact with each other on integer outputs (modular
 * arithmetic), including wrap mode. serial.2wh also computes the tilted table.
 */
#include "kernels.h"
#include "tilted.h"

/* The scalar kernels of the plain and squared tables (NULL where the job does
 * not ask for that table). */
static void job_kernels(const psi_job *job, const psi_row_kernels **ks,
                        const psi_row_kernels **kq)
{
    *ks = job->out.data ? psi_scalar_kernels(job->in.type, job->out.type) : NULL;
    *kq = job->out_sq.data ? psi_scalar_kernels(job->in.type, job->out_sq.type) : NULL;
}

static int run_2wh(const psi_job *job)
{
    if (job->op == PIXSUM_OP_TILTED)
        return psi_tilted_reference(job);
    const psi_row_kernels *ks, *kq;
    job_kernels(job, &ks, &kq);
    return psi_rows_driver(job, ks ? ks->row_sum : NULL, kq ? kq->row_sq : NULL, 0,
                           job->in.height);
}

static int run_3wh(const psi_job *job)
{
    const psi_row_kernels *ks, *kq;
    job_kernels(job, &ks, &kq);
    return psi_rows_driver(job, ks ? ks->cell3_sum : NULL, kq ? kq->cell3_sq : NULL, 0,
                           job->in.height);
}

/* Row pass into t (prefix sums only), then a column pass adding each row to the
 * next, then (3-D) each slice added to the next. */
static void dual_table(const pixsum_view *in, const pixsum_view *t, psi_row_fn row_fn)
{
    psi_add_fn add = psi_scalar_add(t->type);
    size_t n = psi_row_samples(t);
    for (size_t z = 0; z < in->depth; z++) {
        for (size_t y = 0; y < in->height; y++)
            row_fn(psi_row(in, y, z), psi_row(t, y, z), NULL, in->width, in->channels);
        for (size_t y = 1; y < in->height; y++)
            add(psi_row(t, y, z), psi_row(t, y - 1, z), NULL, n);
        if (z > 0)
            for (size_t y = 0; y < in->height; y++)
                add(psi_row(t, y, z), psi_row(t, y, z - 1), NULL, n);
    }
}

static int run_dual(const psi_job *job)
{
    if (job->out.data)
        dual_table(&job->in, &job->out,
                   psi_scalar_kernels(job->in.type, job->out.type)->row_sum);
    if (job->out_sq.data)
        dual_table(&job->in, &job->out_sq,
                   psi_scalar_kernels(job->in.type, job->out_sq.type)->row_sq);
    return PIXSUM_OK;
}

#define SERIAL_OPS \
    (PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D)

/* serial.2wh and serial.3wh start from the carry row (the job's carry,
 * psi_rows_driver()); serial.dual does not take one. */
const psi_method psi_methods_serial[] = {
    {"serial.2wh", PIXSUM_BACKEND_CPU, SERIAL_OPS | PIXSUM_OP_TILTED | PIXSUM_OP_CARRY,
     "single pass, row running sum + row above, 2wh additions (paper 001); scalar reference",
     10, NULL, NULL, run_2wh},
    {"serial.3wh", PIXSUM_BACKEND_CPU, SERIAL_OPS | PIXSUM_OP_CARRY,
     "single pass, recurrence v + left + up - upleft, 3wh additions (papers 000, 001, 004)",
     0, NULL, NULL, run_3wh},
    {"serial.dual", PIXSUM_BACKEND_CPU, SERIAL_OPS,
     "two passes: row prefix sums, then column sums by adding rows (papers 001, 003)", 0,
     NULL, NULL, run_dual},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
