/*
 * bench_hist.h - the histogram operations of `pixsum bench`, included by
 * bench/cli_bench.c after its case helpers (it uses bench_case, alloc_aligned
 * and fill_input, so it is a fragment of that file, not a separate unit).
 *
 *   hist        random image (the bench's random fill)
 *   hist_const  constant image (every sample the same value): the case where a
 *               single-table histogram serialises on one counter
 * Bins: u8 256 over [0, 256); u16 65536 over [0, 65536); i16 65536 over
 * [-32768, 32768); i32/f32/f64 1000 bins over [0, 256) (the bench fills floats
 * with values in [0, 256)). Counts are u64 (the "output type" of the pair is
 * ignored; use --pair u8, u16, f32 ...).
 *
 * peer.opencv for these ops is cv::calcHist with the same bins and range
 * (bench/peer_opencv_hist.cpp, in the same loadable module as the integral
 * peer).
 */
#ifndef PIXSUM_BENCH_HIST_H
#define PIXSUM_BENCH_HIST_H

static void bench_hist_spec(const bench_case *c, pixsum_hist_spec *s)
{
    memset(s, 0, sizeof *s);
    switch (c->in_type) {
    case PIXSUM_U8:
        s->bins = 256, s->lo = 0, s->hi = 256;
        break;
    case PIXSUM_U16:
        s->bins = 65536, s->lo = 0, s->hi = 65536;
        break;
    case PIXSUM_I16:
        s->bins = 65536, s->lo = -32768, s->hi = 32768;
        break;
    default:
        s->bins = 1000, s->lo = 0, s->hi = 256;
        break;
    }
}

static int hist_setup_common(bench_case *c, int constant)
{
    size_t es = pixsum_type_size(c->in_type);
    size_t n = c->width * c->height * c->channels;
    pixsum_hist_spec s;
    bench_hist_spec(c, &s);
    c->in_buf = alloc_aligned(n * es);
    c->out_buf = alloc_aligned(s.bins * c->channels * sizeof(uint64_t));
    c->peer_out = alloc_aligned(s.bins * c->channels * sizeof(uint64_t));
    if (!c->in_buf || !c->out_buf || !c->peer_out) {
        fprintf(stderr, "pixsum bench: out of memory for %zux%zu\n", c->width, c->height);
        return -1;
    }
    if (constant) {
        /* the value 77 (u8) / 30000 (u16, i16) / 77.5 (floats), i32 77 */
        for (size_t i = 0; i < n; i++) {
            switch (c->in_type) {
            case PIXSUM_U8: ((uint8_t *)c->in_buf)[i] = 77; break;
            case PIXSUM_U16: ((uint16_t *)c->in_buf)[i] = 30000; break;
            case PIXSUM_I16: ((int16_t *)c->in_buf)[i] = 30000; break;
            case PIXSUM_I32: ((int32_t *)c->in_buf)[i] = 77; break;
            case PIXSUM_F32: ((float *)c->in_buf)[i] = 77.5f; break;
            default: ((double *)c->in_buf)[i] = 77.5; break;
            }
        }
    } else {
        fill_input(c);
        if (c->in_type == PIXSUM_I32) /* keep i32 samples inside the bench range */
            for (size_t i = 0; i < n; i++)
                ((int32_t *)c->in_buf)[i] &= 0xff;
    }
    c->in = pixsum_view_2d(c->in_buf, c->in_type, c->width, c->height, c->channels, 0);
    return 0;
}

static int hist_setup(bench_case *c)
{
    return hist_setup_common(c, 0);
}

static int hist_const_setup(bench_case *c)
{
    return hist_setup_common(c, 1);
}

static int hist_run(bench_case *c, pixsum_ctx *ctx)
{
    pixsum_hist_spec s;
    bench_hist_spec(c, &s);
    return pixsum_histogram(ctx, &c->in, &s, c->out_buf, s.bins * c->channels, NULL);
}

static size_t hist_bytes_in(const bench_case *c)
{
    return c->width * c->height * c->channels * pixsum_type_size(c->in_type);
}

static size_t hist_bytes_out(const bench_case *c)
{
    pixsum_hist_spec s;
    bench_hist_spec(c, &s);
    return s.bins * c->channels * sizeof(uint64_t);
}

/* peer.opencv: cv::calcHist through the shim. */
typedef int (*peer_hist_fn)(int, const void *, size_t, size_t, size_t, size_t, size_t, double,
                            double, uint64_t *);

static int opencv_hist_run(bench_case *c, void *fn)
{
    peer_hist_fn f = (peer_hist_fn)(uintptr_t)fn;
    pixsum_hist_spec s;
    bench_hist_spec(c, &s);
    return f((int)c->in_type, c->in_buf, c->width, c->height, c->channels,
             c->width * c->channels * pixsum_type_size(c->in_type), s.bins, s.lo, s.hi,
             c->peer_out) == 0
               ? 0
               : -1;
}

#define BENCH_HIST_OPS                                                                 \
    {"hist", PIXSUM_OP_HISTOGRAM, PIXSUM_U64, hist_setup, hist_run, hist_bytes_in,     \
     hist_bytes_out},                                                                  \
    {"hist_const", PIXSUM_OP_HISTOGRAM, PIXSUM_U64, hist_const_setup, hist_run,        \
     hist_bytes_in, hist_bytes_out},

#define BENCH_HIST_PEERS                                                               \
    {"peer.opencv", "hist", "PIXSUM_PEER_OPENCV", OPENCV_PATH, "pixsum_peer_opencv_hist", \
     opencv_hist_run},                                                                 \
    {"peer.opencv", "hist_const", "PIXSUM_PEER_OPENCV", OPENCV_PATH,                   \
     "pixsum_peer_opencv_hist", opencv_hist_run},

#endif /* PIXSUM_BENCH_HIST_H */
