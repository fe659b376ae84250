/*
 * box_filter.cu - the streamed box filter of pixsum_cuda_box_filter(): the
 * statistic of every kw x kh window of a device image, with no integral
 * table: the input is read once (plus the kh - 1 rows above each band and
 * the kw - 1 columns beside each tile) and the output written once. A batch
 * of images is the grid's z: every image gets the tiles and bands of the
 * single-image call, so its results are that call's, bit for bit.
 *
 * A block owns a tile of `te` output samples (columns x channels) and a band
 * of `bh` output rows. Its 256 threads hold the running column sums of the
 * tile's te + (kw - 1) x channels extended samples in registers (up to 8
 * each, in groups of 2-4 consecutive samples read with one vector load);
 * the window of the band's first row is summed from its kh source rows,
 * then each following row adds the entering row and subtracts the leaving
 * one (re-read, from L1/L2), the loads of several rows issued before their
 * sums so that enough bytes are in flight. Every `g` rows the column sums go to shared
 * memory (two buffers, so one barrier per phase), and each thread takes 16
 * consecutive outputs of one row: the first window of each channel summed
 * over kw columns, the next ones sliding (add the entering column, subtract
 * the leaving one), then the statistic and one vector store where aligned.
 *
 * Borders map source coordinates exactly as the CPU kernel
 * (src/cpu/box_stream_kernel.h): reflect101, reflect and replicate read the
 * mapped pixel; constant and shrink leave positions outside the image out of
 * the sums, and the statistic adds the constant for each of them (constant)
 * or divides by the pixels inside (shrink). Arithmetic is the CPU's:
 * integer inputs accumulate modulo 2^32 or 2^64 (exact for every window sum
 * that fits, which validation guarantees), squares in u64, the variance
 * numerator n * Q - S^2 in 128 bits; float accumulation (float inputs, and
 * integer windows whose squares can pass 64 bits) is f64 of samples shifted
 * by the image's first sample of each channel. Integer outputs, u8/u16 means
 * and integer sums/means in float outputs equal the CPU's bit for bit.
 *
 * One-channel sums and means over borders that map every position to a
 * pixel (and valid) take a second kernel, fast_kernel below, specialised on
 * input, accumulator, output and statistic; everything else runs box_kernel.
 */
#include "../border_rule.h"
#include "cuda_box.h"

#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

namespace {

constexpr int kThreads = 256; /* threads per block, at most */
constexpr int kSeg = 16;      /* outputs per thread in the horizontal step */
constexpr int kMaxNpt = 8;    /* column sums per thread */
constexpr size_t kSmemMax = 96 * 1024; /* two blocks per multiprocessor */

/* Values of pixsum.h and box_stream.h the kernel needs. */
enum { T_U8 = 1, T_U16 = 2, T_I16 = 3, T_I32 = 4, T_U32 = 5, T_F32 = 6, T_F64 = 7, T_U64 = 8,
       T_I64 = 9 };
enum { ST_SUM = 0, ST_MEAN = 1, ST_VAR = 2, ST_STD = 3 };
enum { B_REFLECT101 = 0, B_REFLECT = 1, B_REPLICATE = 2, B_CONSTANT = 3, B_SHRINK = 4,
       B_VALID = 5 };
enum { ACC_U32 = 0, ACC_U64 = 1, ACC_F64 = 2 };

/* Sums of squares: u64 beside integer sums, f64 beside f64 sums. */
template <typename Acc> struct SqOf { typedef unsigned long long T; };
template <> struct SqOf<double> { typedef double T; };

/* Shared-memory index of sample e of a row: one element of padding after
 * every 16, so the 16-sample strides of a warp's 32 threads (17 elements
 * apart) fall in distinct banks, and consecutive samples stay conflict-free. */
__device__ __forceinline__ int sidx(int e) { return e + (e >> 4); }

/* Index in [0, len) of extended coordinate r under border b, or -1 outside
 * the image for constant, shrink and valid: border_rule.h's rule, the one the
 * CPU kernels (bx_map) and the local operations' kernel use too. */
__host__ __device__ __forceinline__ long long map_coord(long long r, long long len, int b)
{
    return psi_border_index(r, len, b);
}

/* Positions of [start, start + k) inside [0, len). */
__device__ __forceinline__ long long inside(long long start, long long k, long long len)
{
    long long a = start < 0 ? 0 : start, b = start + k;
    if (b > len)
        b = len;
    return b > a ? b - a : 0;
}

/* The running-sum contribution of one sample. */
template <typename Tin, typename Acc> struct Sample {
    static __device__ __forceinline__ Acc val(Tin v, double) { return (Acc)v; }
    static __device__ __forceinline__ unsigned long long sq(Tin v, double)
    {
        unsigned long long u = (unsigned long long)(long long)v;
        return u * u;
    }
};
template <typename Tin> struct Sample<Tin, double> {
    static __device__ __forceinline__ double val(Tin v, double k) { return (double)v - k; }
    static __device__ __forceinline__ double sq(Tin v, double k)
    {
        double d = (double)v - k;
        return d * d;
    }
};

/* Running sums += the entering sample a - the leaving sample b, in the
 * CPU's order of operations. */
template <typename Tin, typename Acc, bool SQ> struct Delta {
    template <typename Q>
    static __device__ __forceinline__ void apply(Acc &s, Q &q, Tin a, Tin b, double)
    {
        s += (Acc)a - (Acc)b;
        if (SQ) {
            unsigned long long ua = (unsigned long long)(long long)a,
                               ub = (unsigned long long)(long long)b;
            q += ua * ua;
            q -= ub * ub;
        }
    }
};
template <typename Tin, bool SQ> struct Delta<Tin, double, SQ> {
    template <typename Q>
    static __device__ __forceinline__ void apply(double &s, Q &q, Tin a, Tin b, double k)
    {
        s += (double)a - (double)b;
        if (SQ) {
            double da = (double)a - k, db = (double)b - k;
            q += da * da - db * db;
        }
    }
};

/* Exact s / n rounded to nearest, ties to even. */
__device__ __forceinline__ unsigned long long round_div(unsigned long long s,
                                                        unsigned long long n)
{
    unsigned long long q = s / n, r = s - q * n;
    if (2 * r > n || (2 * r == n && (q & 1)))
        q++;
    return q;
}

/* The same for 2 s + n and 2 n below 2^31: a float estimate of
 * floor((2 s + n) / 2n), corrected by its remainder, then ties to even. */
__device__ __forceinline__ unsigned round_div_fast(unsigned s, unsigned n, float inv2n)
{
    int t = (int)(2 * s + n), n2 = (int)(2 * n);
    int q = (int)((float)t * inv2n);
    int r = t - q * n2;
    if (r < 0) {
        q--;
        r += n2;
    } else if (r >= n2) {
        q++;
        r -= n2;
    }
    q -= (r == 0) & q & 1;
    return (unsigned)q;
}

template <typename Tout> __device__ __forceinline__ Tout from_double(double v)
{
    return (Tout)v;
}

/* The statistic of one window, integer accumulation. s, q: window sum and
 * sum of squares of the pixels inside; n: pixels counted; outside: constant
 * pixels to add. */
template <typename Tout>
__device__ __forceinline__ Tout finish_int(const psi_cu_box_job &j, unsigned long long s,
                                           unsigned long long q, unsigned long long n,
                                           unsigned long long outside, float inv2n)
{
    if (outside) {
        s += outside * j.cval;
        q += outside * (j.cval * j.cval);
    }
    const bool flt = sizeof(Tout) >= 4 && (Tout)0.5 != (Tout)0;
    if (j.stat == ST_SUM) {
        if (flt)
            return from_double<Tout>(j.is_signed ? (double)(long long)s : (double)s);
        return (Tout)s;
    }
    if (j.stat == ST_MEAN) {
        if (flt)
            return from_double<Tout>((j.is_signed ? (double)(long long)s : (double)s) /
                                     (double)n);
        if (j.mean_odd && n == j.n) {
            /* odd n: no ties, and s / n lies at least 1/(2n) from every
             * half-integer, more than the error of s * (1/n) + 1/2 (float
             * for u8 sums below 2^24 with n < 8192, else double): the
             * truncation is the exact quotient rounded to nearest */
            if (sizeof(Tout) == 1)
                return (Tout)(int)__fmaf_rn((float)(unsigned)s, j.inv_n_f, 0.5f);
            return (Tout)(long long)__fma_rn((double)s, j.inv_n, 0.5);
        }
        if (j.mean_fast && n == j.n)
            return (Tout)round_div_fast((unsigned)s, (unsigned)n, inv2n);
        return (Tout)round_div(s, n);
    }
    unsigned long long mag = j.is_signed && (long long)s < 0 ? 0ull - s : s;
    unsigned __int128 num = (unsigned __int128)n * q - (unsigned __int128)mag * mag;
    double v = (double)num / ((double)n * (double)n);
    return from_double<Tout>(j.stat == ST_STD ? sqrt(v) : v);
}

/* The statistic of one window, f64 accumulation of samples shifted by k. */
template <typename Tout>
__device__ __forceinline__ Tout finish_f64(const psi_cu_box_job &j, double s, double q,
                                           unsigned long long n, unsigned long long outside,
                                           double k)
{
    if (outside) {
        double d = j.cval_f - k;
        s += (double)outside * d;
        q += (double)outside * (d * d);
    }
    double dn = (double)n, v;
    if (j.stat == ST_SUM)
        v = s + dn * k;
    else if (j.stat == ST_MEAN)
        v = s / dn + k;
    else {
        v = (q - s * (s / dn)) / dn;
        if (!(v > 0))
            v = 0;
        if (j.stat == ST_STD)
            v = sqrt(v);
    }
    return from_double<Tout>(v);
}

/* The bits of one output value. */
template <typename T> __device__ __forceinline__ unsigned long long bits_of(T v)
{
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}

/* Sixteen outputs to memory: 16-byte stores (packed from registers) when
 * the segment is whole and aligned, else one store each. */
template <typename Tout>
__device__ __forceinline__ void store_seg(Tout *dst, const Tout (&o)[kSeg], int count)
{
    constexpr int S = (int)sizeof(Tout);
    if (count == kSeg && ((uintptr_t)dst & 15) == 0) {
#pragma unroll
        for (int v = 0; v < kSeg * S / 16; v++) {
            unsigned w[4];
#pragma unroll
            for (int m = 0; m < 4; m++) {
                const int byte0 = v * 16 + m * 4;
                if (S <= 4) {
                    unsigned x = 0;
#pragma unroll
                    for (int p = 0; p < (S <= 4 ? 4 / S : 1); p++)
                        x |= (unsigned)bits_of(o[byte0 / S + p]) << (8 * S * p % 32);
                    w[m] = x;
                } else {
                    const unsigned long long b = bits_of(o[byte0 / 8]);
                    w[m] = (byte0 % 8) ? (unsigned)(b >> 32) : (unsigned)b;
                }
            }
            reinterpret_cast<uint4 *>(dst)[v] = make_uint4(w[0], w[1], w[2], w[3]);
        }
        return;
    }
#pragma unroll
    for (int q = 0; q < kSeg; q++)
        if (q < count)
            dst[q] = o[q];
}

/* How the vertical step reads a row: V consecutive samples per load
 * (4 bytes for u8, 8 for u16/i16, 16 for 32- and 64-bit samples), G such
 * groups per thread (8 column sums), R rows' loads issued before their sums
 * (enough bytes in flight per thread to cover the memory latency). */
template <int B> struct RawOf;
template <> struct RawOf<4> { typedef unsigned T; };
template <> struct RawOf<8> { typedef uint2 T; };
template <> struct RawOf<16> { typedef uint4 T; };

template <typename Tin> struct Lanes {
    static constexpr int V = sizeof(Tin) == 8 ? 2 : 4;
    static constexpr int G = kMaxNpt / V;
    static constexpr int R = sizeof(Tin) == 1 ? 8 : sizeof(Tin) == 2 ? 4 : sizeof(Tin) == 4 ? 2 : 1;
    typedef typename RawOf<V * sizeof(Tin)>::T Raw;
    union Pack {
        Raw r;
        Tin e[V];
    };
    /* The group's samples of `row` (zeros where row is NULL or a sample
     * has no source). */
    static __device__ __forceinline__ Raw load(const Tin *row, const int (&src)[V], bool vec)
    {
        Pack p;
        if (!row) {
#pragma unroll
            for (int k = 0; k < V; k++)
                p.e[k] = 0;
            return p.r;
        }
        if (vec)
            return __ldg(reinterpret_cast<const Raw *>(row + src[0]));
#pragma unroll
        for (int k = 0; k < V; k++)
            p.e[k] = src[k] >= 0 ? __ldg(row + src[k]) : (Tin)0;
        return p.r;
    }
    static __device__ __forceinline__ Tin lane(Raw r, int k)
    {
        Pack p;
        p.r = r;
        return p.e[k];
    }
};

template <typename Tin, typename Acc, typename Tout, bool SQ>
__global__ void __launch_bounds__(kThreads, 2)
box_kernel(psi_cu_box_job j, const psi_cu_box_geo geo)
{
    /* a batch: this block's image (grid z) */
    j.in = (const char *)j.in + (long long)blockIdx.z * j.in_slice;
    j.out = (char *)j.out + (long long)blockIdx.z * j.out_slice;
    typedef typename SqOf<Acc>::T Q;
    constexpr bool kF64 = sizeof(Acc) == 8 && (Acc)0.5 != (Acc)0;
    extern __shared__ __align__(16) unsigned char smem[];
    Acc *const ss = reinterpret_cast<Acc *>(smem);
    Q *const sq = reinterpret_cast<Q *>(smem + (size_t)2 * geo.g * geo.ep * sizeof(Acc));

    const int C = j.channels, tid = threadIdx.x, nthreads = blockDim.x;
    const long long out_samples = j.out_width * C;
    const long long tile_e0 = (long long)blockIdx.x * geo.te;
    const long long tile_x0 = tile_e0 / C;
    const long long y0 = (long long)blockIdx.y * geo.bh;
    long long y1 = y0 + geo.bh;
    if (y1 > j.out_height)
        y1 = j.out_height;
    if (y0 >= y1)
        return;
    const int border = j.border;
    const bool counted = border == B_CONSTANT || border == B_SHRINK;

    /* This thread's column sums: kG groups of V consecutive extended
     * samples (groups tid, tid + 256, ...), extended sample i at group
     * position i + sh so that interior groups start at an image offset that
     * is a multiple of V: they are read with one V-sample load (when the rows
     * are aligned for it), border groups sample by sample. */
    typedef Lanes<Tin> L;
    constexpr int V = L::V, kG = L::G, R = L::R;
    typedef typename L::Raw Raw;
    const long long b0 = (tile_x0 - j.ax) * C; /* image offset of extended sample 0 */
    const int sh = (int)(((b0 % V) + V) % V);
    int src[kG][V];
    bool vec[kG];
    Acc cs[kG][V];
    Q cq[kG][V];
    double kshift[kF64 ? kG : 1][kF64 ? V : 1];
#pragma unroll
    for (int u = 0; u < kG; u++) {
        bool contiguous = j.vec_ok != 0;
#pragma unroll
        for (int k = 0; k < V; k++) {
            const int i = (tid + u * nthreads) * V + k - sh;
            src[u][k] = -1;
            cs[u][k] = 0;
            cq[u][k] = 0;
            if (u < geo.ng && i >= 0 && i < geo.ext) {
                const long long mx = map_coord(tile_x0 - j.ax + i / C, j.width, border);
                if (mx >= 0)
                    src[u][k] = (int)(mx * C + i % C);
            }
            if (kF64)
                kshift[kF64 ? u : 0][kF64 ? k : 0] =
                    (double)reinterpret_cast<const Tin *>(j.in)[((i % C) + C) % C];
            contiguous = contiguous && src[u][k] >= 0 && src[u][k] == src[u][0] + k;
        }
        vec[u] = contiguous && src[u][0] % V == 0;
    }

    /* the window of the band's first row: its kh source rows, R at a time */
    for (long long k0 = 0; k0 < j.kh; k0 += R) {
        const Tin *rows_in[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            const long long rr = k0 + r < j.kh ? map_coord(y0 - j.ay + k0 + r, j.height, border)
                                               : -1;
            rows_in[r] = rr >= 0 ? reinterpret_cast<const Tin *>((const char *)j.in +
                                                                 rr * j.in_row)
                                 : nullptr;
        }
        Raw w[R][kG];
#pragma unroll
        for (int r = 0; r < R; r++)
#pragma unroll
            for (int u = 0; u < kG; u++)
                w[r][u] = L::load(rows_in[r], src[u], vec[u]);
#pragma unroll
        for (int r = 0; r < R; r++)
            if (rows_in[r])
#pragma unroll
                for (int u = 0; u < kG; u++)
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        if (src[u][k] < 0)
                            continue; /* no pixel: nothing to add (shifted sums too) */
                        const Tin v = L::lane(w[r][u], k);
                        const double kk = kF64 ? kshift[kF64 ? u : 0][kF64 ? k : 0] : 0.0;
                        cs[u][k] += Sample<Tin, Acc>::val(v, kk);
                        if (SQ)
                            cq[u][k] += Sample<Tin, Acc>::sq(v, kk);
                    }
    }

    const int nseg = geo.te / kSeg;
    const int kwc = (int)(j.kw * C);
    /* the shift of each channel (f64 accumulation): the image's first pixel */
    double k0 = 0, k1 = 0, k2 = 0, k3 = 0;
    if (kF64) {
        const Tin *first = reinterpret_cast<const Tin *>(j.in);
        k0 = (double)first[0];
        k1 = C > 1 ? (double)first[1] : 0;
        k2 = C > 2 ? (double)first[2] : 0;
        k3 = C > 3 ? (double)first[3] : 0;
    }
    const float inv2n = 0.5f / (float)j.n;
    for (long long yb = y0, phase = 0; yb < y1; yb += geo.g, phase++) {
        Acc *const sbuf = ss + (size_t)(phase & 1) * geo.g * geo.ep;
        Q *const qbuf = sq + (size_t)(phase & 1) * geo.g * geo.ep;
        const int rows = (int)(y1 - yb < geo.g ? y1 - yb : geo.g);
        for (int t0 = 0; t0 < rows; t0 += R) {
            /* R rows: the entering and leaving rows' loads first, then the sums */
            const Tin *rin[R], *rout[R];
#pragma unroll
            for (int r = 0; r < R; r++) {
                const long long y = yb + t0 + r;
                rin[r] = rout[r] = nullptr;
                if (t0 + r < rows && y > y0) {
                    const long long top = y - 1 - j.ay;
                    const long long ro = map_coord(top, j.height, border);
                    const long long ri = map_coord(top + j.kh, j.height, border);
                    if (ro != ri) {
                        if (ri >= 0)
                            rin[r] = reinterpret_cast<const Tin *>((const char *)j.in +
                                                                   ri * j.in_row);
                        if (ro >= 0)
                            rout[r] = reinterpret_cast<const Tin *>((const char *)j.in +
                                                                    ro * j.in_row);
                    }
                }
            }
            Raw wi[R][kG], wo[R][kG];
#pragma unroll
            for (int r = 0; r < R; r++)
#pragma unroll
                for (int u = 0; u < kG; u++) {
                    wi[r][u] = L::load(rin[r], src[u], vec[u]);
                    wo[r][u] = L::load(rout[r], src[u], vec[u]);
                }
#pragma unroll
            for (int r = 0; r < R; r++) {
                if (t0 + r >= rows)
                    break;
                const int t = t0 + r;
#pragma unroll
                for (int u = 0; u < kG; u++)
#pragma unroll
                    for (int k = 0; k < V; k++) {
                        const double kk = kF64 ? kshift[kF64 ? u : 0][kF64 ? k : 0] : 0.0;
                        const Tin a = L::lane(wi[r][u], k), b = L::lane(wo[r][u], k);
                        if (src[u][k] < 0) {
                            /* no pixel: the sums stay 0 */
                        } else if (rin[r] && rout[r]) {
                            Delta<Tin, Acc, SQ>::apply(cs[u][k], cq[u][k], a, b, kk);
                        } else {
                            if (rout[r]) {
                                cs[u][k] -= Sample<Tin, Acc>::val(b, kk);
                                if (SQ)
                                    cq[u][k] -= Sample<Tin, Acc>::sq(b, kk);
                            }
                            if (rin[r]) {
                                cs[u][k] += Sample<Tin, Acc>::val(a, kk);
                                if (SQ)
                                    cq[u][k] += Sample<Tin, Acc>::sq(a, kk);
                            }
                        }
                        const int i = (tid + u * nthreads) * V + k - sh;
                        if (u < geo.ng && i >= 0 && i < geo.ext) {
                            sbuf[t * geo.ep + sidx(i)] = cs[u][k];
                            if (SQ)
                                qbuf[t * geo.ep + sidx(i)] = cq[u][k];
                        }
                    }
            }
        }
        __syncthreads();

        /* horizontal: 16 consecutive outputs of one row per item */
        for (int it = tid; it < rows * nseg; it += nthreads) {
            const int t = it / nseg, seg = it - t * nseg;
            const int e0 = seg * kSeg;
            const long long ge0 = tile_e0 + e0;
            if (ge0 >= out_samples)
                continue;
            const int count = (int)(out_samples - ge0 < kSeg ? out_samples - ge0 : kSeg);
            const long long y = yb + t;
            /* e0 is a multiple of 16: sidx(e0 + x) = sidx(e0) + x + (x >> 4) */
            const Acc *S = sbuf + t * geo.ep + sidx(e0);
            const Q *QQ = qbuf + t * geo.ep + sidx(e0);
            long long ih = 0;
            if (counted)
                ih = inside(y - j.ay, j.kh, j.height);
            Acc d0 = 0, d1 = 0, d2 = 0, d3 = 0;
            Q q0 = 0, q1 = 0, q2 = 0, q3 = 0;
            Tout o[kSeg];
#pragma unroll
            for (int q = 0; q < kSeg; q++) {
                Acc v;
                Q w = 0;
                if (q < 4 && q < C) {
                    v = 0;
                    for (int m = q; m < q + kwc; m += C) {
                        v += S[m + (m >> 4)];
                        if (SQ)
                            w += QQ[m + (m >> 4)];
                    }
                } else {
                    const int xa = q - C + kwc, xs = q - C;
                    v = d0 + (S[xa + (xa >> 4)] - S[xs + (xs >> 4)]);
                    if (SQ)
                        w = q0 + (QQ[xa + (xa >> 4)] - QQ[xs + (xs >> 4)]);
                }
                /* the last C window sums, oldest first */
                d0 = C == 1 ? v : d1;
                d1 = C == 2 ? v : d2;
                d2 = C == 3 ? v : d3;
                d3 = v;
                if (SQ) {
                    q0 = C == 1 ? w : q1;
                    q1 = C == 2 ? w : q2;
                    q2 = C == 3 ? w : q3;
                    q3 = w;
                }
                unsigned long long n = j.n, outside = 0;
                if (counted) {
                    const long long x = (ge0 + q) / C;
                    const unsigned long long in_px =
                        (unsigned long long)(inside(x - j.ax, j.kw, j.width) * ih);
                    if (border == B_SHRINK)
                        n = in_px;
                    else
                        outside = j.n - in_px;
                }
                if (kF64) {
                    const int c = (int)((ge0 + q) % C);
                    const double kk = c == 0 ? k0 : c == 1 ? k1 : c == 2 ? k2 : k3;
                    o[q] = finish_f64<Tout>(j, (double)v, (double)w, n, outside, kk);
                } else {
                    unsigned long long s64;
                    if (sizeof(Acc) == 4)
                        s64 = j.is_signed ? (unsigned long long)(long long)(int)(unsigned)v
                                          : (unsigned long long)(unsigned)v;
                    else
                        s64 = (unsigned long long)v;
                    o[q] = finish_int<Tout>(j, s64, (unsigned long long)w, n, outside, inv2n);
                }
            }
            Tout *dst = reinterpret_cast<Tout *>((char *)j.out + y * j.out_row) + ge0;
            store_seg<Tout>(dst, o, count);
        }
    }
}

template <typename Tin, typename Acc, typename Tout, bool SQ>
cudaError_t launch(const psi_cu_box_job &j, const psi_cu_box_geo &g, cudaStream_t s)
{
    if (g.smem > 48 * 1024) {
        cudaError_t e = cudaFuncSetAttribute(box_kernel<Tin, Acc, Tout, SQ>,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)g.smem);
        if (e != cudaSuccess)
            return e;
    }
    box_kernel<Tin, Acc, Tout, SQ>
        <<<dim3(g.grid_x, g.grid_y, (unsigned)j.images), g.threads, g.smem, s>>>(j, g);
    return cudaGetLastError();
}

/* Output types of integer accumulation: the input's own (u8/u16 means),
 * 32- and 64-bit integer bits (sums; signed ones share the unsigned bits),
 * f32, f64. */
template <typename Tin, typename Acc>
cudaError_t launch_int(const psi_cu_box_job &j, const psi_cu_box_geo &g, cudaStream_t s)
{
    if (j.squares)
        return j.out_type == T_F32 ? launch<Tin, Acc, float, true>(j, g, s)
                                   : launch<Tin, Acc, double, true>(j, g, s);
    switch (j.out_type) {
    case T_U8:
        if constexpr (sizeof(Tin) == 1)
            return launch<Tin, Acc, uint8_t, false>(j, g, s);
        return cudaErrorInvalidValue;
    case T_U16:
        if constexpr (sizeof(Tin) == 2 && (Tin)-1 > 0)
            return launch<Tin, Acc, uint16_t, false>(j, g, s);
        return cudaErrorInvalidValue;
    case T_U32: case T_I32: return launch<Tin, Acc, uint32_t, false>(j, g, s);
    case T_U64: case T_I64: return launch<Tin, Acc, unsigned long long, false>(j, g, s);
    case T_F32: return launch<Tin, Acc, float, false>(j, g, s);
    default: return launch<Tin, Acc, double, false>(j, g, s);
    }
}

template <typename Tin>
cudaError_t launch_f64(const psi_cu_box_job &j, const psi_cu_box_geo &g, cudaStream_t s)
{
    if (j.squares)
        return j.out_type == T_F32 ? launch<Tin, double, float, true>(j, g, s)
                                   : launch<Tin, double, double, true>(j, g, s);
    return j.out_type == T_F32 ? launch<Tin, double, float, false>(j, g, s)
                               : launch<Tin, double, double, false>(j, g, s);
}

template <typename Tin>
cudaError_t launch_in(const psi_cu_box_job &j, const psi_cu_box_geo &g, cudaStream_t s)
{
    if (j.acc == ACC_F64)
        return launch_f64<Tin>(j, g, s);
    if (j.acc == ACC_U64)
        return launch_int<Tin, unsigned long long>(j, g, s);
    return launch_int<Tin, uint32_t>(j, g, s);
}

/* Bytes per shared sample (sum, and square when asked). */
size_t sample_bytes(const psi_cu_box_job *j)
{
    size_t acc = j->acc == ACC_U32 ? 4 : 8;
    return acc + (j->squares ? 8 : 0);
}

int padded(int ext) { return ext + ((ext + 15) >> 4); }

/* ---- the fast path ------------------------------------------------------------------
 * One channel, sums and means, borders that map every window position to a
 * pixel (reflect101, reflect, replicate) or need none (valid), u8/u16 images
 * with 32-bit sums and f32 images with f64 sums. The kernel is specialised on
 * input, accumulator, output and statistic, so its loops carry no runtime
 * switch on them.
 *
 * A block owns a tile of `tw` output columns and a band of `bh` output rows.
 * Thread t keeps the running column sums of four consecutive image columns
 * (one 4-, 8- or 16-byte load per row, at an image column that is a multiple
 * of 4), covering the tile's tw + kw - 1 window columns (`sh` columns of the
 * first group lie before them). Per output row it adds the entering row and
 * subtracts the leaving one (read kh rows earlier, so found in L1/L2), the
 * loads of R rows issued before their sums. Every `g` rows the column sums go
 * to shared memory (two buffers, one barrier per phase, one padding element
 * per 16 so that the 16-column strides of a warp fall in distinct banks), and
 * each thread then produces 16 consecutive outputs of one row: the first
 * window summed over kw column sums, the next 15 by adding the entering
 * column and subtracting the leaving one, then the statistic and one vector
 * store. Only groups that reach past the image's left or right edge (or rows
 * not aligned for vector loads) read sample by sample through the border
 * map; only rows whose window leaves the image map their row index. */

constexpr int kFastMaxThreads = 1024;
constexpr int kFastTile = 1024; /* widest tile (output columns) */

/* Launch geometry and constants of the fast kernel. */
struct fast_geo {
    int tw;         /* output columns per tile, a multiple of 16 */
    int ext;        /* tw + kw - 1 window columns */
    int sh;         /* columns before window column 0 in the first group (0-3) */
    int g;          /* output rows per phase */
    int ep;         /* shared-memory row length in elements (with padding) */
    int nseg;       /* tw / 16 */
    long long bh;   /* output rows per band */
    unsigned md;    /* means of u8/u16: 2n, and ceil(2^32 / 2n) (see fast_mean_int) */
    unsigned mm;
    unsigned mo;    /* ... odd n: ceil(2^32 / n) and (n - 1) / 2 (fast_mean_odd) */
    unsigned half;
    float rinv;     /* f32 means of integer images: 1/n rounded to nearest, and n */
    float nf;
    double inv_n;   /* f32 images: 1/n */
};

template <typename Tin> struct FastIn;
template <> struct FastIn<uint8_t> {
    typedef unsigned Raw;
    static constexpr int R = 8; /* rows whose loads are issued together */
    static __device__ __forceinline__ unsigned lane(Raw r, int k)
    {
        return __byte_perm(r, 0u, 0x4440u + (unsigned)k);
    }
};
template <> struct FastIn<uint16_t> {
    typedef uint2 Raw;
    static constexpr int R = 4;
    static __device__ __forceinline__ unsigned lane(Raw r, int k)
    {
        const unsigned w = k < 2 ? r.x : r.y;
        return (k & 1) ? w >> 16 : w & 0xffffu;
    }
};
template <> struct FastIn<float> {
    typedef float4 Raw;
    static constexpr int R = 2;
    static __device__ __forceinline__ float lane(Raw r, int k)
    {
        return k == 0 ? r.x : k == 1 ? r.y : k == 2 ? r.z : r.w;
    }
};

/* Four samples of one row starting at image column c (a multiple of 4): one
 * vector load when all four lie in the image and the row is aligned, else
 * the mapped columns mc one by one (-1: none, 0). */
template <typename Tin>
__device__ __forceinline__ typename FastIn<Tin>::Raw fast_load(const char *row, long long c,
                                                               bool vec, const int (&mc)[4])
{
    typedef typename FastIn<Tin>::Raw Raw;
    const Tin *p = reinterpret_cast<const Tin *>(row);
    if (vec)
        return __ldg(reinterpret_cast<const Raw *>(p + c));
    union {
        Raw r;
        Tin e[4];
    } u;
#pragma unroll
    for (int k = 0; k < 4; k++)
        u.e[k] = mc[k] >= 0 ? __ldg(p + mc[k]) : (Tin)0;
    return u.r;
}

/* u8/u16 mean in the input's type: s / n rounded to nearest, ties to even,
 * as floor((2s + n) / 2n) by a multiply-high with m = ceil(2^32 / 2n) (exact
 * while (2s + n) (m 2n - 2^32) < 2^32, checked on the host for the largest
 * sum), less one on a tie (remainder 0) with an odd quotient. */
__device__ __forceinline__ unsigned fast_mean_int(unsigned s, unsigned n, const fast_geo &f)
{
    const unsigned x = 2u * s + n;
    unsigned q = __umulhi(x, f.mm);
    const unsigned r = x - q * f.md;
    q -= (unsigned)(r == 0) & q & 1u;
    return q;
}

/* The same for odd n (no ties): floor((s + (n - 1) / 2) / n), the
 * multiply-high exact while (s + (n - 1) / 2) (m n - 2^32) < 2^32 with
 * m = ceil(2^32 / n), checked on the host. */
__device__ __forceinline__ unsigned fast_mean_odd(unsigned s, const fast_geo &f)
{
    return __umulhi(s + f.half, f.mo);
}

/* f32 mean of an integer window: the quotient correctly rounded to float
 * (Markstein: q0 = s * RN(1/n) is within an ulp, the remainder s - q0 n is
 * exact with an FMA, and q0 + r * RN(1/n) is then s / n rounded to nearest),
 * which equals the CPU's (float)((double)s / n): s / n is never within
 * 2^-28 relative of a float midpoint unless it is one, so rounding it to
 * double first changes nothing. Needs s below 2^23 (checked on the host):
 * then s is exact in float, formed from its bits without a conversion. */
__device__ __forceinline__ float fast_fdiv(unsigned s, const fast_geo &f)
{
    const float sf = __uint_as_float(0x4B000000u | s) - 8388608.0f, nf = f.nf;
    const float q0 = __fmul_rn(sf, f.rinv);
    const float r = __fmaf_rn(-q0, nf, sf);
    return __fmaf_rn(r, f.rinv, q0);
}

/* The statistic of one window sum: MODE 0 the sum, 1 the mean, 2 the mean of
 * an odd window in the input's integer type. */
template <typename Acc, typename Tout, int MODE> struct FastFin;
template <typename Tout, int MODE> struct FastFin<unsigned, Tout, MODE> {
    static __device__ __forceinline__ Tout get(unsigned s, unsigned n, const fast_geo &f)
    {
        if (MODE == 0)
            return (Tout)s; /* integer bits, or the sum rounded once to float */
        if (MODE == 2)
            return (Tout)fast_mean_odd(s, f);
        if (sizeof(Tout) <= 2)
            return (Tout)fast_mean_int(s, n, f);
        if (sizeof(Tout) == 4)
            return (Tout)fast_fdiv(s, f);
        return (Tout)((double)s / (double)n);
    }
};
template <typename Tout, int MODE> struct FastFin<double, Tout, MODE> {
    static __device__ __forceinline__ Tout get(double s, unsigned, const fast_geo &f)
    {
        return (Tout)(MODE ? s * f.inv_n : s);
    }
};

/* Source row of window row r (border rows mapped; valid never leaves). */
__device__ __forceinline__ const char *fast_row(const psi_cu_box_job &j, long long r)
{
    if (r < 0 || r >= j.height)
        r = map_coord(r, j.height, j.border);
    return (const char *)j.in + r * j.in_row;
}

template <typename Tin, typename Acc, typename Tout, int MODE>
__global__ void __launch_bounds__(kFastMaxThreads)
fast_kernel(psi_cu_box_job j, const fast_geo f)
{
    /* a batch: this block's image (grid z) */
    j.in = (const char *)j.in + (long long)blockIdx.z * j.in_slice;
    j.out = (char *)j.out + (long long)blockIdx.z * j.out_slice;
    typedef FastIn<Tin> L;
    typedef typename L::Raw Raw;
    constexpr int R = L::R;
    extern __shared__ __align__(16) unsigned char smem[];
    Acc *const sbase = reinterpret_cast<Acc *>(smem);

    const int tid = threadIdx.x;
    const long long x0 = (long long)blockIdx.x * f.tw;
    const long long y0 = (long long)blockIdx.y * f.bh;
    const long long y1 = y0 + f.bh < j.out_height ? y0 + f.bh : j.out_height;
    if (y0 >= y1)
        return; /* the whole block: no barrier is skipped by part of it */

    /* this thread's group: group positions p0..p0+3, image columns c0.. */
    const int p0 = 4 * tid;
    const bool active = p0 < f.ext + f.sh;
    const long long c0 = x0 - j.ax - f.sh + p0;
    const bool vec = j.vec_ok && c0 >= 0 && c0 + 3 < j.width;
    int mc[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
        mc[k] = vec ? 0 : (int)map_coord(c0 + k, j.width, j.border);

    /* the window of the band's first row: its kh source rows, R at a time */
    Acc cs[4] = {0, 0, 0, 0};
    if (active)
        for (long long r0 = 0; r0 < j.kh; r0 += R) {
            Raw w[R];
#pragma unroll
            for (int r = 0; r < R; r++)
                if (r0 + r < j.kh)
                    w[r] = fast_load<Tin>(fast_row(j, y0 - j.ay + r0 + r), c0, vec, mc);
#pragma unroll
            for (int r = 0; r < R; r++)
                if (r0 + r < j.kh)
#pragma unroll
                    for (int k = 0; k < 4; k++)
                        cs[k] += (Acc)L::lane(w[r], k);
        }

    const unsigned n = (unsigned)j.n;
    const int kw = (int)j.kw, G = f.g;
    const long long in_row = j.in_row;
    const long long top_max = j.height - j.kh; /* rows y - ay - 1 in [0, top_max): no map */
    int phase = 0;
    for (long long yb = y0; yb < y1; yb += G, phase ^= 1) {
        Acc *const sb = sbase + (size_t)phase * G * f.ep;
        const int rows = (int)(y1 - yb < G ? y1 - yb : G);
        if (active)
            for (int t0 = 0; t0 < rows; t0 += R) {
                /* R rows: the entering and leaving rows' loads first, then the sums */
                Raw wi[R], wo[R];
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const long long y = yb + t0 + r;
                    if (t0 + r < rows && y > y0) {
                        const long long top = y - 1 - j.ay;
                        const char *ro, *ri;
                        if (top >= 0 && top < top_max) {
                            ro = (const char *)j.in + top * in_row;
                            ri = ro + j.kh * in_row;
                        } else {
                            ro = fast_row(j, top);
                            ri = fast_row(j, top + j.kh);
                        }
                        wi[r] = fast_load<Tin>(ri, c0, vec, mc);
                        wo[r] = fast_load<Tin>(ro, c0, vec, mc);
                    }
                }
#pragma unroll
                for (int r = 0; r < R; r++) {
                    const int t = t0 + r;
                    if (t >= rows)
                        break;
                    if (yb + t > y0)
#pragma unroll
                        for (int k = 0; k < 4; k++)
                            cs[k] += (Acc)L::lane(wi[r], k) - (Acc)L::lane(wo[r], k);
                    Acc *const row = sb + t * f.ep;
#pragma unroll
                    for (int k = 0; k < 4; k++) {
                        const int i = p0 + k - f.sh; /* window column */
                        if (i >= 0 && i < f.ext)
                            row[sidx(i)] = cs[k];
                    }
                }
            }
        __syncthreads();

        /* horizontal: 16 consecutive outputs of one row per item */
        for (int it = tid; it < rows * f.nseg; it += blockDim.x) {
            const int t = it / f.nseg, e0 = (it - t * f.nseg) * kSeg;
            const long long gx = x0 + e0;
            if (gx >= j.out_width)
                continue;
            const int count = (int)(j.out_width - gx < kSeg ? j.out_width - gx : kSeg);
            const Acc *const S = sb + t * f.ep;
            Acc s = 0;
            for (int m = 0; m < kw; m++)
                s += S[sidx(e0 + m)];
            Tout o[kSeg];
            o[0] = FastFin<Acc, Tout, MODE>::get(s, n, f);
#pragma unroll
            for (int q = 1; q < kSeg; q++) {
                s += S[sidx(e0 + q - 1 + kw)] - S[sidx(e0 + q - 1)];
                o[q] = FastFin<Acc, Tout, MODE>::get(s, n, f);
            }
            Tout *dst = reinterpret_cast<Tout *>((char *)j.out + (yb + t) * j.out_row) + gx;
            store_seg<Tout>(dst, o, count);
        }
    }
}

/* The fast path's geometry for `j` without the band height, or 0 when the
 * request is not one it takes. */
int fast_plan(const psi_cu_box_job &j, fast_geo *f, int *threads, long long *tiles)
{
    if (j.channels != 1 || j.squares || (j.stat != ST_SUM && j.stat != ST_MEAN))
        return 0;
    if (j.border == B_CONSTANT || j.border == B_SHRINK)
        return 0;
    memset(f, 0, sizeof *f);
    const bool mean = j.stat == ST_MEAN;
    if (j.in_type == T_U8 || j.in_type == T_U16) {
        if (j.acc != ACC_U32)
            return 0;
        const unsigned long long maxv = j.in_type == T_U8 ? 255 : 65535;
        const unsigned long long smax = maxv * j.n; /* below 2^32: the u32 accumulator */
        if (mean && j.out_type == j.in_type) {
            const unsigned long long d = 2 * j.n, x = 2 * smax + j.n;
            if (x >= (1ull << 32))
                return 0;
            const unsigned long long m = ((1ull << 32) + d - 1) / d, e = m * d - (1ull << 32);
            if (x * e >= (1ull << 32))
                return 0;
            f->md = (unsigned)d;
            f->mm = (unsigned)m;
            if (j.n & 1) {
                const unsigned long long xo = smax + j.n / 2;
                const unsigned long long mo = ((1ull << 32) + j.n - 1) / j.n;
                if (j.n > 1 && xo * (mo * j.n - (1ull << 32)) < (1ull << 32)) {
                    f->mo = (unsigned)mo;
                    f->half = (unsigned)(j.n / 2);
                }
            }
        } else if (j.out_type == T_F32 || j.out_type == T_F64) {
            /* f32 means by fast_fdiv(): window sums below 2^23 */
            if (mean && j.out_type == T_F32 && smax >= (1ull << 23))
                return 0;
            f->rinv = 1.0f / (float)j.n;
            f->nf = (float)j.n;
        } else if (!(!mean && (j.out_type == T_U32 || j.out_type == T_I32))) {
            return 0;
        }
    } else if (j.in_type == T_F32) {
        if (j.acc != ACC_F64 || (j.out_type != T_F32 && j.out_type != T_F64))
            return 0;
        f->inv_n = 1.0 / (double)j.n;
    } else {
        return 0;
    }
    const long long ow = j.out_width, kw = j.kw;
    const int sh = (int)(((-j.ax) % 4 + 4) % 4);
    /* the widest tile up to kFastTile whose window columns fit the threads,
     * then the tiles of the row made equal */
    long long twmax = ((long long)4 * kFastMaxThreads - (kw - 1) - sh) / kSeg * kSeg;
    if (twmax > kFastTile)
        twmax = kFastTile;
    if (twmax < kSeg)
        return 0;
    const long long nt = (ow + twmax - 1) / twmax;
    const long long tw = ((ow + nt - 1) / nt + kSeg - 1) / kSeg * kSeg;
    const long long ext = tw + kw - 1;
    long long groups = (ext + sh + 3) / 4;
    long long th = (groups + 31) / 32 * 32;
    if (th < 64)
        th = 64;
    f->tw = (int)tw;
    f->ext = (int)ext;
    f->sh = sh;
    f->nseg = (int)(tw / kSeg);
    f->ep = padded((int)ext);
    /* rows per phase: the fewest idle threads in the horizontal step (more
     * rows on a tie: more loads in flight), within the shared budget */
    const size_t acc_bytes = j.in_type == T_F32 ? 8 : 4;
    int best = 1;
    double best_eff = 0;
    for (int g = 1; g <= 8; g++) {
        if ((size_t)2 * g * f->ep * acc_bytes > 72 * 1024)
            break;
        const long long items = (long long)g * f->nseg;
        const double eff = (double)items / (double)(((items + th - 1) / th) * th);
        if (eff >= best_eff - 1e-9) {
            best_eff = eff;
            best = g;
        }
    }
    f->g = best;
    *threads = (int)th;
    *tiles = nt;
    return 1;
}

template <typename Tin, typename Acc, typename Tout, int MODE>
cudaError_t launch_fast(const psi_cu_box_job &j, fast_geo f, int threads, long long tiles,
                        cudaStream_t s)
{
    const size_t smem = (size_t)2 * f.g * f.ep * sizeof(Acc);
    void (*kern)(psi_cu_box_job, const fast_geo) = fast_kernel<Tin, Acc, Tout, MODE>;
    cudaError_t e;
    if (smem > 48 * 1024 &&
        (e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  (int)smem)) != cudaSuccess)
        return e;
    int dev = 0, sms = 1, per_sm = 1;
    if ((e = cudaGetDevice(&dev)) != cudaSuccess ||
        (e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev)) !=
            cudaSuccess ||
        (e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, threads, smem)) !=
            cudaSuccess)
        return e;
    if (per_sm < 1)
        per_sm = 1;
    /* bands: one wave of resident blocks (a second, partial wave would
     * double the time), each band at least bh_min rows (its first window
     * costs kh rows), a multiple of the phase, at most 65535 bands */
    const long long oh = j.out_height;
    long long bands = (long long)per_sm * sms / tiles;
    if (bands < 1)
        bands = 1;
    long long bh = (oh + bands - 1) / bands;
    const long long bh_min = j.kh < 16 ? 16 : j.kh > 64 ? 64 : j.kh;
    if (bh < bh_min)
        bh = bh_min;
    if (bh < (oh + 65534) / 65535)
        bh = (oh + 65534) / 65535;
    bh = (bh + f.g - 1) / f.g * f.g;
    f.bh = bh;
    const dim3 grid((unsigned)tiles, (unsigned)((oh + bh - 1) / bh), (unsigned)j.images);
    kern<<<grid, threads, smem, s>>>(j, f);
    return cudaGetLastError();
}

/* Enqueues the fast path when it takes `j` (*taken = 1). */
cudaError_t try_fast(const psi_cu_box_job &j, cudaStream_t s, int *taken)
{
    fast_geo f;
    int th = 0;
    long long tiles = 0;
    *taken = fast_plan(j, &f, &th, &tiles);
    if (!*taken)
        return cudaSuccess;
    const bool mean = j.stat == ST_MEAN;
#define PSI_FAST(Tin, Acc, Tout)                                                               \
    (mean ? launch_fast<Tin, Acc, Tout, 1>(j, f, th, tiles, s)                                 \
          : launch_fast<Tin, Acc, Tout, 0>(j, f, th, tiles, s))
    if (j.in_type == T_F32)
        return j.out_type == T_F32 ? PSI_FAST(float, double, float)
                                   : PSI_FAST(float, double, double);
    if (j.in_type == T_U8) {
        switch (j.out_type) {
        case T_U8:
            return f.mo ? launch_fast<uint8_t, unsigned, uint8_t, 2>(j, f, th, tiles, s)
                        : launch_fast<uint8_t, unsigned, uint8_t, 1>(j, f, th, tiles, s);
        case T_F32: return PSI_FAST(uint8_t, unsigned, float);
        case T_F64: return PSI_FAST(uint8_t, unsigned, double);
        default: return launch_fast<uint8_t, unsigned, uint32_t, 0>(j, f, th, tiles, s);
        }
    }
    switch (j.out_type) {
    case T_U16:
        return f.mo ? launch_fast<uint16_t, unsigned, uint16_t, 2>(j, f, th, tiles, s)
                    : launch_fast<uint16_t, unsigned, uint16_t, 1>(j, f, th, tiles, s);
    case T_F32: return PSI_FAST(uint16_t, unsigned, float);
    case T_F64: return PSI_FAST(uint16_t, unsigned, double);
    default: return launch_fast<uint16_t, unsigned, uint32_t, 0>(j, f, th, tiles, s);
    }
#undef PSI_FAST
}

} // namespace

/* Host entry points (cuda_box.h). */
extern "C" int psi_cu_box_geometry(const psi_cu_box_job *j, int sm_count, psi_cu_box_geo *geo,
                                   long long *max_samples)
{
    const long long C = j->channels;
    const long long halo = (j->kw - 1) * C;
    const long long unit = C == 3 ? 48 : kSeg; /* a multiple of 16 and of C */
    const long long V = j->in_size == 8 ? 2 : 4;
    const size_t sb = sample_bytes(j);
    /* widest extended row: kMaxNpt column sums per thread (less the group
     * alignment shift), and two phase buffers of one row within the
     * shared-memory budget */
    long long cap = (long long)kMaxNpt * kThreads;
    while (cap > kThreads && (size_t)2 * padded((int)cap) * sb > kSmemMax)
        cap -= kThreads;
    cap -= V - 1;
    *max_samples = cap - unit;
    if (halo > cap - unit)
        return 0;
    if (sm_count < 1)
        sm_count = 1;
    const long long out_samples = j->out_width * C;
    const long long oh = j->out_height;
    const long long bh_min = j->kh < 16 ? 16 : j->kh > 64 ? 64 : j->kh;
    /* the widest tile whose extended samples fill 256 threads (V each; twice
     * that, or four times for 8-byte samples, when the halo is wide), then
     * narrower ones while the grid would not give every multiprocessor two
     * blocks; a narrow tile gets fewer threads (a warp per 32 groups) */
    long long per = kThreads * V, fill = per;
    while (fill - (V - 1) - halo < (halo > unit ? halo : unit) && fill < cap + V - 1)
        fill += per;
    long long te = (fill - (V - 1) - halo) / unit * unit;
    if (te < unit)
        te = unit;
    for (; te > unit; te = (te / 2) / unit * unit) {
        long long bx = (out_samples + te - 1) / te;
        long long bands = (oh + bh_min - 1) / bh_min;
        if (bx * bands >= 2LL * sm_count || te / 2 < 64)
            break;
    }
    /* no wider than the row, nor than the column sums allow */
    long long row_units = (out_samples + unit - 1) / unit * unit;
    if (te > row_units)
        te = row_units;
    if (te + halo > cap)
        te = (cap - halo) / unit * unit;
    const long long ext = te + halo;
    const long long groups = (ext + 2 * V - 2) / V;
    const long long ng = (groups + kThreads - 1) / kThreads;
    long long threads = ng > 1 ? kThreads : (groups + 31) / 32 * 32;
    if (threads < 64)
        threads = 64;
    const long long bx = (out_samples + te - 1) / te;
    /* rows per phase: one horizontal item (16 outputs) per thread, within
     * the shared budget */
    long long g = threads * kSeg / te;
    if (g < 1)
        g = 1;
    if (g > 32)
        g = 32;
    while (g > 1 && (size_t)2 * g * padded((int)ext) * sb > kSmemMax)
        g--;
    /* band height: at least bh_min rows (the first window costs kh rows),
     * bands enough for two blocks per multiprocessor but no more (one wave:
     * a second, partial wave would double the time), at most 65535 bands */
    long long bands = 2LL * sm_count / bx;
    if (bands < 1)
        bands = 1;
    long long bh = (oh + bands - 1) / bands;
    if (bh < bh_min)
        bh = bh_min;
    if (bh < (oh + 65534) / 65535)
        bh = (oh + 65534) / 65535;
    if (g > bh)
        g = bh;
    bh = (bh + g - 1) / g * g;
    geo->threads = (int)threads;
    geo->te = (int)te;
    geo->ext = (int)ext;
    geo->ng = (int)ng;
    geo->g = (int)g;
    geo->ep = padded((int)ext);
    geo->bh = bh;
    geo->grid_x = (unsigned)bx;
    geo->grid_y = (unsigned)((oh + bh - 1) / bh);
    geo->smem = (size_t)2 * g * geo->ep * sb;
    return 1;
}

/* One launch for up to 65535 images (the grid's z). */
static int filter_images(const psi_cu_box_job &j, const psi_cu_box_geo &g, cudaStream_t s)
{
    int taken = 0;
    cudaError_t e = try_fast(j, s, &taken);
    if (taken)
        return (int)e;
    switch (j.in_type) {
    case T_U8: e = launch_in<uint8_t>(j, g, s); break;
    case T_U16: e = launch_in<uint16_t>(j, g, s); break;
    case T_I16: e = launch_in<int16_t>(j, g, s); break;
    case T_I32: e = launch_in<int32_t>(j, g, s); break;
    case T_U32: e = launch_in<uint32_t>(j, g, s); break;
    case T_F32: e = launch_f64<float>(j, g, s); break;
    default: e = launch_f64<double>(j, g, s); break;
    }
    return (int)e;
}

extern "C" int psi_cu_box_filter(const psi_cu_box_job *job, const psi_cu_box_geo *geo,
                                 void *stream)
{
    if (job->out_width <= 0 || job->out_height <= 0)
        return 0;
    /* every image with the single-image geometry; batches past the grid's
     * z limit in launches of 65535 images */
    const long long images = job->images > 0 ? job->images : 1;
    for (long long z = 0; z < images; z += 65535) {
        psi_cu_box_job part = *job;
        part.images = images - z < 65535 ? images - z : 65535;
        part.in = (const char *)job->in + z * job->in_slice;
        part.out = (char *)job->out + z * job->out_slice;
        const int e = filter_images(part, *geo, (cudaStream_t)stream);
        if (e)
            return e;
    }
    return 0;
}
