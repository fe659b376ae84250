/*
 * cmd_hist_mpi.c - the counting side of `mpirun -np N pixsum hist IN ... --mpi`
 * (mpi_cli.h): the histogram of a file too large for one machine.
 *
 * Every rank takes a balanced strip of rows (pixsum_mpi_split_rows) and reads
 * only that strip of the image and of the mask (tools/mpi_io.c: .npy by
 * MPI-IO, TIFF/BigTIFF by decoding only the strips or tiles holding the
 * rows). pixsum_mpi_histogram() counts each strip with the library and sums
 * the u64 counts onto rank 0 with one integer reduction; a data-range default
 * (i32/f32/f64 without --range) is first resolved from the global smallest
 * and largest finite samples, so the bins are those of the single-process
 * `pixsum hist`. Rank 0 then writes the output with cmd_hist's own writers, so
 * the file is the single-process one byte for byte.
 *
 * Every step whose outcome may differ between ranks (a read error, memory) is
 * agreed before the next collective call: all ranks leave with the same exit
 * status and none is left waiting.
 */
#include "mpi_cli.h"

#include <stdio.h>

#ifndef PIXSUM_HAVE_MPI
static int no_mpi(const char *cmd)
{
    fprintf(stderr, "pixsum %s: --mpi: this pixsum was built without MPI "
                    "(install libopenmpi-dev and rebuild)\n", cmd);
    return CLI_EXIT_RUNTIME;
}

int mpi_hist_start(const char *cmd, int *argc, char ***argv, int *owner)
{
    (void)argc, (void)argv;
    *owner = 0;
    return no_mpi(cmd);
}

int mpi_hist_count(int rc, const mpi_hist_job *job, pixsum_ctx *ctx, mpi_hist_result *res)
{
    (void)ctx, (void)res;
    return rc ? rc : no_mpi(job->cmd);
}

int mpi_hist_stop(int rc, int owner)
{
    (void)owner;
    return rc;
}
#else
#include "mpi_io.h"
#include "pixsum_mpi.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int mpi_hist_start(const char *cmd, int *argc, char ***argv, int *owner)
{
    if (mpi_cli_start(cmd, argc, argv, owner) != 0)
        return CLI_EXIT_RUNTIME;
    mpi_cli_mute(1);
    return 0;
}

int mpi_hist_stop(int rc, int owner)
{
    mpi_cli_mute(0);
    return mpi_cli_stop(rc, owner);
}

/* True when the default range of `type` comes from the data. */
static int range_from_data(pixsum_type type, const pixsum_hist_spec *spec)
{
    return spec->lo == spec->hi &&
           (type == PIXSUM_I32 || type == PIXSUM_F32 || type == PIXSUM_F64);
}

/* The bins per channel the counts need into *bins: the spec's, or the
 * default for the type and range (the count never depends on the data: a
 * data-range default is resolved over a stand-in range here). Returns the
 * status of pixsum_hist_resolve() (a bad spec: the same on every rank). */
static int bins_for(pixsum_type type, size_t channels, const pixsum_hist_spec *given,
                    size_t *bins)
{
    pixsum_hist_spec spec = *given;
    spec.mask = NULL;
    if (range_from_data(type, &spec)) {
        spec.lo = 0;
        spec.hi = 1;
    }
    double zeros[4] = {0, 0, 0, 0};
    pixsum_view probe = pixsum_view_2d(zeros, type, 1, 1, channels, 0);
    pixsum_hist_info info;
    int st = pixsum_hist_resolve(&probe, &spec, &info);
    *bins = st == PIXSUM_OK ? info.bins : 0;
    return st;
}

/* Checks the mask's header against the image's (on rank 0, whose input
 * descriptions every rank holds). Returns 0, or 1 after printing why. */
static int check_mask(const mpi_hist_job *job, const mpi_input *img, const mpi_input *mask)
{
    if (mpi_cli_rank != 0)
        return 0;
    if (mask->type != PIXSUM_U8 || mask->channels != 1)
        return cli_error(job->cmd, "%s: the mask must be an 8-bit 1-channel image, not %s x%zu",
                         job->mask_path, pixsum_type_name((pixsum_type)mask->type),
                         (size_t)mask->channels);
    if (mask->width != img->width || mask->height != img->height)
        return cli_error(job->cmd, "%s: the mask is %zu x %zu, the image %zu x %zu",
                         job->mask_path, (size_t)mask->width, (size_t)mask->height,
                         (size_t)img->width, (size_t)img->height);
    return 0;
}

int mpi_hist_count(int rc, const mpi_hist_job *job, pixsum_ctx *ctx, mpi_hist_result *res)
{
    const char *cmd = job->cmd;
    memset(res, 0, sizeof *res);
    mpi_cli_mute(0);
    /* The caller's status, then this rank's share of threads and GPU. */
    int device = -1;
    if (rc == 0 && ctx)
        rc = mpi_cli_rank_ctx(cmd, job->common, ctx, &device);
    if ((rc = mpi_cli_max(rc)) != 0)
        return rc;
    double t_start = MPI_Wtime();

    /* What the files are (rank 0 reads the headers, every rank learns them). */
    mpi_input d, md;
    memset(&md, 0, sizeof md);
    mpi_input_describe(job->in_path, &d);
    if (!d.ok) {
        if (mpi_cli_rank == 0)
            cli_error(cmd, "%s", d.err);
        return CLI_EXIT_RUNTIME;
    }
    if (job->channel >= 0 && (uint64_t)job->channel >= d.channels) {
        if (mpi_cli_rank == 0)
            cli_usage_error(cmd, "--channel %ld: %s has %zu channel(s)", job->channel,
                            job->in_path, (size_t)d.channels);
        return CLI_EXIT_USAGE;
    }
    if (job->mask_path) {
        mpi_input_describe(job->mask_path, &md);
        if (!md.ok) {
            if (mpi_cli_rank == 0)
                cli_error(cmd, "%s", md.err);
            return CLI_EXIT_RUNTIME;
        }
        if (mpi_cli_any(check_mask(job, &d, &md)))
            return CLI_EXIT_RUNTIME;
    }
    pixsum_type type = (pixsum_type)d.type;
    size_t W = (size_t)d.width, H = (size_t)d.height, C = (size_t)d.channels;
    size_t first = 0, rows = 0;
    pixsum_mpi_split_rows(H, mpi_cli_size, mpi_cli_rank, &first, &rows);
    size_t bins = 0;
    int st = bins_for(type, C, &job->spec, &bins);
    if (st != PIXSUM_OK) {
        if (mpi_cli_rank == 0)
            cli_lib_error(cmd, job->in_path, st);
        return CLI_EXIT_RUNTIME;
    }

    /* This rank's strips: image, mask, and the totals on the writer. */
    char err[600] = "";
    pixsum_view in, mask;
    void *in_data = mpi_alloc_strip(type, W, rows, C, &in);
    void *mask_data = job->mask_path ? mpi_alloc_strip(PIXSUM_U8, W, rows, 1, &mask) : NULL;
    uint64_t *counts = NULL;
    int writer = mpi_cli_rank == 0;
    if (writer)
        counts = malloc(bins * C * sizeof *counts);
    int failed = (rows && (!in_data || (job->mask_path && !mask_data))) || (writer && !counts);
    if (failed)
        snprintf(err, sizeof err, "out of memory for %zu rows of %zu pixels and %zu x %zu bins",
                 rows, W, C, bins);
    double t0 = MPI_Wtime(), c0 = mpi_cli_thread_cpu();
    /* Collective for .npy: a rank that failed still takes part, with 0 rows. */
    if (mpi_input_read(job->in_path, &d, first, failed ? 0 : rows, in_data, err, sizeof err) !=
        0)
        failed = 1;
    if (job->mask_path && mpi_input_read(job->mask_path, &md, first, failed ? 0 : rows,
                                         mask_data, err, sizeof err) != 0)
        failed = 1;
    if (failed)
        mpi_cli_rank_error(cmd, "%s", err);
    rc = CLI_EXIT_RUNTIME;
    if (mpi_cli_any(failed))
        goto done;
    double t_read = mpi_cli_slowest(MPI_Wtime() - t0);
    double c_read = mpi_cli_slowest(mpi_cli_thread_cpu() - c0);

    /* Count and reduce onto rank 0. */
    pixsum_hist_spec spec = job->spec;
    spec.mask = job->mask_path ? &mask : NULL;
    pixsum_hist_info info;
    memset(&info, 0, sizeof info);
    t0 = MPI_Wtime();
    c0 = mpi_cli_thread_cpu();
    st = pixsum_mpi_histogram(ctx, &in, &spec, counts, writer ? bins * C : 0, &info, 0,
                              MPI_COMM_WORLD);
    double t_count = mpi_cli_slowest(MPI_Wtime() - t0);
    double c_count = mpi_cli_slowest(mpi_cli_thread_cpu() - c0);
    if (st != PIXSUM_OK) {
        /* Every rank has the same status; the one that found it says why. */
        if (strncmp(pixsum_last_error(), "rank ", 5) != 0)
            cli_lib_error(cmd, job->in_path, st);
        goto done;
    }
    rc = 0;
    if (job->verbose && writer) {
        /* stderr: stdout may carry the histogram itself */
        fprintf(stderr,
                "pixsum hist --mpi: %s %zux%zux%zu %s, %d ranks (%zu..%zu rows each)\n"
                "  read %.3f s (cpu %.3f s; %s%s), count + reduce %.3f s (cpu %.3f s), "
                "total %.3f s (slowest rank each)\n"
                "  reduced per rank: %zu bytes ((channels x bins + 17) x 8)%s\n",
                job->in_path, W, H, C, pixsum_type_name(type), mpi_cli_size,
                H / (size_t)mpi_cli_size, (H + (size_t)mpi_cli_size - 1) / (size_t)mpi_cli_size,
                t_read, c_read, mpi_input_how(&d), job->mask_path ? ", mask too" : "", t_count,
                c_count, MPI_Wtime() - t_start, (C * bins + 17) * 8,
                range_from_data(type, &job->spec) ? " + 24 for the data range" : "");
        fflush(stderr);
    }
    if (job->verbose)
        mpi_cli_print_devices(stderr, device); /* collective */
done:
    free(in_data);
    free(mask_data);
    if (rc == 0 && writer) {
        res->writer = 1;
        res->counts = counts;
        res->info = info;
    } else {
        free(counts);
    }
    res->type = type;
    return rc;
}
#endif
