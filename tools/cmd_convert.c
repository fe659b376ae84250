/*
 * cmd_convert.c - `pixsum convert IN OUT`: copies an image into the format
 * named by OUT's extension, strip by strip (memory bounded by a strip), with
 * the same pixel type and channels. Refuses what the target format cannot
 * hold (e.g. f64 into PNG), naming formats that can.
 */
#include "cli_util.h"
#include "commands.h"
#include "image_io.h"
#include "stream.h"

#include <stdio.h>
#include <string.h>

static const char *const CMD = "convert";

typedef struct convert_state {
    const char *out_path;
    pxio_write_options wopt;
    pxio_writer *writer;
    cli_progress progress;
    size_t total;
} convert_state;

static int convert_header(const pxio_info *info, void *user)
{
    convert_state *s = user;
    char err[512];
    if (pxio_writer_open(s->out_path, info, &s->wopt, &s->writer, err, sizeof err) != 0)
        return cli_error(CMD, "%s", err);
    s->total = info->height * info->depth;
    cli_progress_start(&s->progress, "convert", s->total);
    return 0;
}

static int convert_strip(const pixsum_view *strip, size_t first_row, void *user)
{
    convert_state *s = user;
    char err[512];
    if (pxio_write_rows(s->writer, strip->height, strip->data, strip->row_stride, err,
                        sizeof err) != 0)
        return cli_error(CMD, "%s", err);
    cli_progress_update(&s->progress, first_row + strip->height);
    return 0;
}

int cmd_convert(int argc, char **argv)
{
    const char *paths[2] = {NULL, NULL};
    int np = 0;
    convert_state s;
    memset(&s, 0, sizeof s);
    pxio_options opt = {0};
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            printf("usage: pixsum convert IN OUT [--volume|--batch|--page N] [--bigtiff] [--tile N]\n"
                   "                             [--compress C]\n\n"
                   "Copies IN into the format of OUT's extension (.npy .pgm .ppm .pnm .pfm\n"
                   ".png .jpg .tif .tiff .btf), keeping the pixel type and channels,\n"
                   "strip by strip. --volume reads a 3-D .npy as (D,H,W); --volume or\n"
                   "--batch read every page of a TIFF (written as (N,...) .npy or one TIFF\n"
                   "page each), --page N one page (default: page 0); --bigtiff\n"
                   "writes BigTIFF; --tile N writes a tiled TIFF of N x N tiles;\n"
                   "--compress none|deflate|lzw|zstd compresses a TIFF output.\n");
            return CLI_EXIT_OK;
        }
        const char *v;
        int m;
        if ((m = cli_parse_pages(CMD, argc, argv, &i, 1, &opt)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--tile", &v)) != 0) {
            size_t t;
            if (m < 0)
                return CLI_EXIT_USAGE;
            if (cli_parse_size(v, &t) != 0 || t == 0 || t % 16 || t > 65536)
                return cli_usage_error(CMD, "--tile takes a multiple of 16, not '%s'", v);
            s.wopt.tile = (unsigned)t;
        } else if ((m = cli_match(CMD, argc, argv, &i, "--compress", &v)) != 0) {
            if (m < 0)
                return CLI_EXIT_USAGE;
            s.wopt.compression = v;
        } else if (!strcmp(argv[i], "--volume"))
            opt.volume = 1;
        else if (!strcmp(argv[i], "--bigtiff"))
            s.wopt.bigtiff = 1;
        else if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(CMD, "unknown option '%s'", argv[i]);
        else if (np < 2)
            paths[np++] = argv[i];
        else
            return cli_usage_error(CMD, "too many arguments ('%s')", argv[i]);
    }
    if (np != 2)
        return cli_usage_error(CMD, "needs IN and OUT");
    if (cli_check_pages(CMD, &opt) != CLI_EXIT_OK)
        return CLI_EXIT_USAGE;
    int rc = cli_check_not_input(CMD, paths[0], paths[1], "the output");
    if (rc != 0)
        return rc;
    /* TIFF options on another format would be ignored */
    if ((s.wopt.compression || s.wopt.bigtiff || s.wopt.tile) && !cli_is_tiff_name(paths[1]))
        return cli_usage_error(CMD, "%s has no effect: only TIFF outputs (.tif .tiff .btf .tf8) "
                                    "are %s, not '%s'",
                               s.wopt.compression ? "--compress"
                               : s.wopt.bigtiff   ? "--bigtiff"
                                                  : "--tile",
                               s.wopt.compression ? "compressed"
                               : s.wopt.bigtiff   ? "BigTIFF"
                                                  : "tiled",
                               paths[1]);
    s.out_path = paths[1];
    pxio_info header;
    char perr[512];
    if (pxio_probe(paths[0], &opt, &header, perr, sizeof perr) == 0)
        cli_note_pages(CMD, paths[0], &header, &opt); /* else the stream says why */
    rc = cli_stream_strips(CMD, paths[0], &opt, (size_t)8 << 20, convert_header, convert_strip,
                           &s);
    cli_progress_end(&s.progress);
    if (s.writer) {
        char err[512];
        if (rc == 0) {
            if (pxio_writer_commit(s.writer, err, sizeof err) != 0)
                rc = cli_error(CMD, "%s", err);
        } else {
            pxio_writer_abort(s.writer);
        }
    }
    return rc;
}
