/*
 * mpi_internal.h - what the distributed entry points (src/mpi/) share: turning
 * MPI errors into pixsum statuses, and the agreement step that makes every
 * rank of a communicator return the same status from a collective call.
 */
#ifndef PIXSUM_MPI_INTERNAL_H
#define PIXSUM_MPI_INTERNAL_H

#include "../internal.h"
#include "pixsum_mpi.h"

/* Records PIXSUM_ERR_MPI with MPI's text for return code `rc` of `call` and
 * returns PIXSUM_ERR_MPI. */
int psm_mpi_fail(int rc, const char *call);

/* Most descriptors one agreement can compare. */
#define PSM_MAX_DESC 12

/* A value every rank must hold alike (a width, a type, a flag) and its name for
 * the error text. */
typedef struct psm_desc {
    const char *name;
    int64_t value;
} psm_desc;

/* Collective agreement. Every rank passes its local status (PIXSUM_OK or the
 * error it found; its detail text must be current) and `n` descriptors (same
 * names, in the same order, on every rank; n <= PSM_MAX_DESC). Returns on every
 * rank:
 *   - the status of the lowest-ranked failing rank, if any rank failed: that
 *     rank keeps its own detail, the others get "rank R failed: <status text>";
 *   - else PIXSUM_ERR_BAD_SHAPE if a descriptor differs between ranks (detail
 *     names it with its smallest and largest value);
 *   - else PIXSUM_OK.
 * PIXSUM_ERR_MPI if the reduction itself fails. */
int psm_agree(MPI_Comm comm, int local_status, const psm_desc *desc, int n);

/* Rank and size of comm, or PIXSUM_ERR_MPI. */
int psm_rank_size(MPI_Comm comm, int *rank, int *size);

/* Minimal checks of a zero-row strip view (data may be NULL): known type,
 * width > 0, 1..4 channels, depth 1. `what` names it in the detail. */
int psm_check_empty_view(const pixsum_view *v, const char *what);

#endif /* PIXSUM_MPI_INTERNAL_H */
