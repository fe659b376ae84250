/*
 * mpi_util.c - the small collective helpers of the distributed entry points:
 * MPI error texts, the status agreement every collective call ends its checks
 * with, the balanced row split, the global row offset of a strip and the
 * node-local rank (for choosing a GPU per rank).
 */
#include "mpi_internal.h"

#include <limits.h>
#include <stdio.h>

int psm_mpi_fail(int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    return psi_fail(PIXSUM_ERR_MPI, "%s failed: %s", call, text);
}

int psm_rank_size(MPI_Comm comm, int *rank, int *size)
{
    int rc = MPI_Comm_rank(comm, rank);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Comm_rank");
    rc = MPI_Comm_size(comm, size);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Comm_size");
    return PIXSUM_OK;
}

int psm_agree(MPI_Comm comm, int local_status, const psm_desc *desc, int n)
{
    int rank, size, st = psm_rank_size(comm, &rank, &size);
    if (st != PIXSUM_OK)
        return st;
    /* One MAX reduction carries everything: the failure key (the lowest failing
     * rank wins, its status in the low byte), each descriptor (its maximum)
     * and each descriptor negated (minus its minimum). */
    int64_t buf[1 + 2 * PSM_MAX_DESC], all[1 + 2 * PSM_MAX_DESC];
    if (n > PSM_MAX_DESC)
        n = PSM_MAX_DESC;
    buf[0] = local_status != PIXSUM_OK
                 ? ((int64_t)(INT_MAX - rank) << 8) | (int64_t)(local_status & 0xff)
                 : 0;
    for (int i = 0; i < n; i++) {
        buf[1 + 2 * i] = desc[i].value;
        buf[2 + 2 * i] = -desc[i].value;
    }
    int rc = MPI_Allreduce(buf, all, 1 + 2 * n, MPI_INT64_T, MPI_MAX, comm);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Allreduce");
    if (all[0] != 0) {
        int failed_rank = INT_MAX - (int)(all[0] >> 8);
        int failed_status = (int)(all[0] & 0xff);
        if (failed_rank == rank)
            return local_status;
        return psi_fail(failed_status, "rank %d failed: %s (see its error detail)",
                        failed_rank, pixsum_strerror(failed_status));
    }
    for (int i = 0; i < n; i++) {
        int64_t hi = all[1 + 2 * i], lo = -all[2 + 2 * i];
        if (hi != lo)
            return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                            "the ranks disagree on %s: it ranges from %lld to %lld",
                            desc[i].name, (long long)lo, (long long)hi);
    }
    return PIXSUM_OK;
}

int psm_check_empty_view(const pixsum_view *v, const char *what)
{
    if (pixsum_type_size(v->type) == 0)
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "%s: unknown pixel type %d", what, (int)v->type);
    if (v->width == 0)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "%s: width is 0 (a zero-row strip must still give the width)", what);
    if (v->channels < 1 || v->channels > 4)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s: %zu channels (1..4 allowed)", what,
                        v->channels);
    if (v->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "%s: depth %zu (strips are 2-D, depth 1)", what,
                        v->depth);
    return PIXSUM_OK;
}

int pixsum_mpi_split_rows(size_t total_rows, int nranks, int rank, size_t *first,
                          size_t *count)
{
    psi_clear_error();
    if (!first || !count)
        return psi_fail(PIXSUM_ERR_NULL, "first or count is NULL");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "rank %d of %d ranks", rank, nranks);
    size_t n = (size_t)nranks, r = (size_t)rank;
    size_t base = total_rows / n, extra = total_rows % n;
    *count = base + (r < extra ? 1 : 0);
    *first = r * base + (r < extra ? r : extra);
    return PIXSUM_OK;
}

int pixsum_mpi_row_offset(size_t local_rows, size_t *first_row, size_t *total_rows,
                          MPI_Comm comm)
{
    psi_clear_error();
    int st = psm_agree(comm, first_row ? PIXSUM_OK
                                       : psi_fail(PIXSUM_ERR_NULL, "first_row is NULL"),
                       NULL, 0);
    if (st != PIXSUM_OK)
        return st;
    int rank, size;
    if ((st = psm_rank_size(comm, &rank, &size)) != PIXSUM_OK)
        return st;
    uint64_t mine = local_rows, before = 0, total = 0;
    int rc = MPI_Exscan(&mine, &before, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Exscan");
    if (rank == 0)
        before = 0; /* MPI leaves rank 0's result undefined */
    rc = MPI_Allreduce(&mine, &total, 1, MPI_UINT64_T, MPI_SUM, comm);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Allreduce");
    *first_row = (size_t)before;
    if (total_rows)
        *total_rows = (size_t)total;
    return PIXSUM_OK;
}

int pixsum_mpi_local_rank(MPI_Comm comm, int *local_rank, int *local_size)
{
    psi_clear_error();
    int rank, size, st = psm_rank_size(comm, &rank, &size);
    if (st != PIXSUM_OK)
        return st;
    MPI_Comm node;
    int rc = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return psm_mpi_fail(rc, "MPI_Comm_split_type");
    int lr = 0, ls = 1;
    if ((st = psm_rank_size(node, &lr, &ls)) != PIXSUM_OK) {
        MPI_Comm_free(&node);
        return st;
    }
    MPI_Comm_free(&node);
    if (local_rank)
        *local_rank = lr;
    if (local_size)
        *local_size = ls;
    return PIXSUM_OK;
}
