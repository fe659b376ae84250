/*
 * mpi_io.c - the shared side of the distributed subcommands (mpi_io.h):
 * agreement helpers, the per-rank context (threads, GPU) and the reading of a
 * rank's strip of an input file (.npy by MPI-IO, TIFF by direct access to the
 * rank's own strips or tiles, other formats by reading forward).
 */
#include "mpi_io.h"

#ifdef PIXSUM_HAVE_MPI

#include "image_io.h"
#include "mpi_cli.h"
#include "pixsum_mpi.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* In a build with CUDA the library defines it (tools/cmd_info.c does the same). */
int pixsum_cuda_device_count(void) __attribute__((weak));

int mpi_cli_rank, mpi_cli_size = 1;

/* Largest byte count of one MPI-IO call (counts are int). */
#define IO_CHUNK ((size_t)1 << 30)

int mpi_cli_start(const char *cmd, int *argc, char ***argv, int *owner)
{
    int initialized = 0;
    *owner = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
        if (MPI_Init(argc, argv) != MPI_SUCCESS) {
            fprintf(stderr, "pixsum %s: MPI_Init failed\n", cmd);
            return 1;
        }
        *owner = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &mpi_cli_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &mpi_cli_size);
    return 0;
}

int mpi_cli_stop(int rc, int owner)
{
    rc = mpi_cli_max(rc);
    if (owner)
        MPI_Finalize();
    return rc;
}

/* Saved descriptors of stdout and stderr while muted (-1: not muted). */
static int saved_out = -1, saved_err = -1;

void mpi_cli_mute(int on)
{
    if (mpi_cli_rank == 0)
        return;
    fflush(stdout);
    fflush(stderr);
    if (on && saved_out < 0) {
        int null = open("/dev/null", O_WRONLY);
        if (null < 0)
            return;
        saved_out = dup(STDOUT_FILENO);
        saved_err = dup(STDERR_FILENO);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        close(null);
    } else if (!on && saved_out >= 0) {
        dup2(saved_out, STDOUT_FILENO);
        dup2(saved_err, STDERR_FILENO);
        close(saved_out);
        close(saved_err);
        saved_out = saved_err = -1;
    }
}

int mpi_cli_any(int failed)
{
    int any = 0;
    failed = failed != 0;
    if (MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return 1;
    return any;
}

int mpi_cli_max(int v)
{
    int m = v;
    if (MPI_Allreduce(&v, &m, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS)
        return v ? v : 1;
    return m;
}

double mpi_cli_slowest(double t)
{
    double m = t;
    MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

double mpi_cli_thread_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int mpi_cli_rank_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pixsum %s (rank %d of %d): ", cmd, mpi_cli_rank, mpi_cli_size);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 1;
}

int mpi_cli_rank_ctx(const char *cmd, const cli_common *common, pixsum_ctx *ctx, int *device)
{
    int local = 0, local_size = 1;
    *device = common->device;
    if (pixsum_mpi_local_rank(MPI_COMM_WORLD, &local, &local_size) != PIXSUM_OK)
        return mpi_cli_rank_error(cmd, "ranks on this node: %s", pixsum_last_error());
    if (common->threads < 0) {
        /* Ranks on one node share its cores: by default each takes its share. */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        long share = (cores > 0 ? cores : 1) / (local_size > 0 ? local_size : 1);
        pixsum_ctx_set(ctx, PIXSUM_PARAM_THREADS, share > 0 ? (intptr_t)share : 1);
    }
    /* Only a method that may run on a GPU needs a device (asking for the
     * count starts the CUDA runtime, which a CPU run should not pay for). */
    const char *m = common->method;
    int may_use_gpu = !m || !strcmp(m, "auto") || !strncmp(m, "cuda", 4);
    if (common->device < 0 && may_use_gpu) {
        int count = pixsum_cuda_device_count ? pixsum_cuda_device_count() : 0;
        if (count > 0) {
            *device = local % count;
            int st = pixsum_ctx_set(ctx, PIXSUM_PARAM_CUDA_DEVICE, *device);
            if (st != PIXSUM_OK)
                return mpi_cli_rank_error(cmd, "CUDA device %d: %s", *device,
                                          pixsum_last_error());
        }
    }
    return 0;
}

void mpi_cli_print_devices(FILE *f, int device)
{
    if (mpi_cli_max(device) < 0)
        return;
    enum { SHOWN = 256 }; /* a longer list would not be read */
    if (mpi_cli_size > SHOWN) {
        if (mpi_cli_rank == 0)
            fprintf(f, "  CUDA device per rank: local rank %% devices on each node (%d ranks)\n",
                   mpi_cli_size);
        return;
    }
    int all[SHOWN];
    MPI_Gather(&device, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (mpi_cli_rank == 0) {
        fprintf(f, "  CUDA device per rank:");
        for (int r = 0; r < mpi_cli_size; r++)
            fprintf(f, " %d", all[r]);
        fprintf(f, "\n");
    }
}

/* ---- input ------------------------------------------------------------------ */

void mpi_input_describe(const char *path, mpi_input *d)
{
    memset(d, 0, sizeof *d);
    if (mpi_cli_rank == 0) {
        FILE *f = fopen(path, "rb");
        char magic[6] = {0};
        if (!f) {
            snprintf(d->err, sizeof d->err, "%s: cannot open", path);
        } else {
            int is_npy = fread(magic, 1, 6, f) == 6 && memcmp(magic, "\x93NUMPY", 6) == 0;
            fclose(f);
            if (is_npy) {
                mpi_npy_header h;
                d->ok = mpi_npy_read_header(path, &h, d->err, sizeof d->err) == 0;
                d->kind = MPI_INPUT_NPY;
                d->type = h.type;
                d->width = h.width;
                d->height = h.height;
                d->channels = h.channels;
                d->data_offset = h.data_offset;
                snprintf(d->format, sizeof d->format, "npy");
            } else {
                pxio_info info;
                memset(&info, 0, sizeof info);
                d->ok = pxio_probe(path, NULL, &info, d->err, sizeof d->err) == 0;
                d->kind = strcmp(info.format, "tiff") == 0 ? MPI_INPUT_SEEK : MPI_INPUT_STREAM;
                d->type = info.type;
                d->width = info.width;
                d->height = info.height;
                d->channels = info.channels;
                snprintf(d->format, sizeof d->format, "%s", info.format);
                if (d->ok && info.depth > 1) {
                    d->ok = 0;
                    snprintf(d->err, sizeof d->err, "%s: a volume; --mpi splits 2-D images",
                             path);
                }
            }
        }
    }
    MPI_Bcast(d, (int)sizeof *d, MPI_BYTE, 0, MPI_COMM_WORLD);
}

const char *mpi_input_how(const mpi_input *d)
{
    switch (d->kind) {
    case MPI_INPUT_NPY: return "MPI-IO at each strip's offset";
    case MPI_INPUT_SEEK: return "each rank decodes only its strips/tiles";
    default: return "not random access: each rank decodes from the top";
    }
}

int mpi_file_io_all(MPI_File f, MPI_Offset offset, void *buf, size_t bytes, int write,
                    char *err, size_t errlen)
{
    uint64_t mine = (bytes + IO_CHUNK - 1) / IO_CHUNK, most = 0;
    if (MPI_Allreduce(&mine, &most, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
        snprintf(err, errlen, "MPI_Allreduce failed");
        return -1;
    }
    int failed = 0;
    for (uint64_t k = 0; k < most; k++) {
        size_t at = (size_t)k * IO_CHUNK;
        size_t n = at < bytes ? (bytes - at < IO_CHUNK ? bytes - at : IO_CHUNK) : 0;
        if (failed)
            n = 0;
        char *p = (char *)buf + (n ? at : 0);
        MPI_Status status;
        int rc = write ? MPI_File_write_at_all(f, offset + (MPI_Offset)at, p, (int)n, MPI_BYTE,
                                               &status)
                       : MPI_File_read_at_all(f, offset + (MPI_Offset)at, p, (int)n, MPI_BYTE,
                                              &status);
        int done = 0;
        if (rc == MPI_SUCCESS)
            MPI_Get_count(&status, MPI_BYTE, &done);
        if (!failed && (rc != MPI_SUCCESS || (size_t)done != n)) {
            char text[MPI_MAX_ERROR_STRING] = "";
            int len = 0;
            if (rc != MPI_SUCCESS)
                MPI_Error_string(rc, text, &len);
            snprintf(err, errlen, "%s %zu bytes at offset %llu: %s",
                     write ? "writing" : "reading", n,
                     (unsigned long long)(offset + (MPI_Offset)at),
                     rc != MPI_SUCCESS ? text : "short transfer (file truncated?)");
            failed = 1;
        }
    }
    return failed ? -1 : 0;
}

/* Rows [first, first + rows) of a .npy with MPI-IO (collective). */
static int read_npy(const char *path, const mpi_input *d, size_t first, size_t rows, void *buf,
                    char *err, size_t errlen)
{
    MPI_File f;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &f) !=
        MPI_SUCCESS) {
        snprintf(err, errlen, "%s: MPI_File_open failed", path);
        return -1;
    }
    size_t row_bytes = (size_t)d->width * d->channels * pixsum_type_size((pixsum_type)d->type);
    MPI_Offset at = (MPI_Offset)(d->data_offset + (uint64_t)first * row_bytes);
    int st = mpi_file_io_all(f, at, buf, rows * row_bytes, 0, err, errlen);
    MPI_File_close(&f);
    if (st != 0 && strncmp(err, path, strlen(path)) != 0) {
        char what[400];
        snprintf(what, sizeof what, "%s", err);
        snprintf(err, errlen, "%s: %s", path, what);
    }
    return st;
}

/* Rows of any other format through the tool's reader: TIFF jumps to the band
 * holding `first`, the others read forward to it. Not collective. */
static int read_reader(const char *path, const mpi_input *d, size_t first, size_t rows,
                       void *buf, char *err, size_t errlen)
{
    pxio_reader *r;
    pxio_info info;
    if (pxio_reader_open(path, NULL, &r, &info, err, errlen) != 0)
        return -1;
    int st = 0;
    if (info.type != (pixsum_type)d->type || info.width != d->width ||
        info.height != d->height || info.channels != d->channels)
        st = -1, snprintf(err, errlen, "%s: changed while being read", path);
    if (st == 0)
        st = pxio_reader_seek(r, first, err, errlen);
    if (st == 0)
        st = pxio_read_rows(r, rows, buf, 0, err, errlen);
    pxio_reader_close(r);
    return st;
}

int mpi_input_read(const char *path, const mpi_input *d, size_t first, size_t rows, void *buf,
                   char *err, size_t errlen)
{
    if (d->kind == MPI_INPUT_NPY)
        return read_npy(path, d, first, rows, buf, err, errlen);
    return rows ? read_reader(path, d, first, rows, buf, err, errlen) : 0;
}

void *mpi_alloc_strip(pixsum_type type, size_t width, size_t rows, size_t channels,
                      pixsum_view *v)
{
    size_t bytes = pixsum_packed_bytes(type, width, rows ? rows : 1, 1, channels);
    void *data = rows && bytes ? malloc(bytes) : NULL;
    *v = pixsum_view_2d(data, type, width, rows, channels,
                        (ptrdiff_t)(width * channels * pixsum_type_size(type)));
    return data;
}

#else
typedef int pixsum_mpi_io_unused; /* ISO C: no empty translation unit */
#endif
