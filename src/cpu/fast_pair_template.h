/*
 * fast_pair_template.h - the u8 -> u32 two-row kernel of the fast integral
 * methods (psi_fast_pair_fn in fast_kernels.h), written once and compiled by
 * each ISA file (fast_avx2.c, fast_avx512.c) over that ISA's vector width and
 * intrinsics.
 *
 * Row y goes to the low 16 bits and row y+1 to the high 16 bits of each u32
 * lane; one shift-and-add ladder then computes both rows' in-vector prefixes
 * (a lane's partial sum is at most 32 x 255 < 2^16, so the halves never carry
 * into each other), halving the shuffles per pixel. The halves are split
 * before the running totals (which do exceed 16 bits) are added. Row y+1 adds
 * row y's result straight from the register. One channel, the common case,
 * goes 32 pixels per step through the ISA's own block prefix; other channel
 * counts (and the last pixels of one channel) take one vector per step with
 * the template's ladder over distances c, 2c, 4c ...; the last partial vector
 * is finished in scalar code from the lanes of the carry.
 *
 * Besides what fast_row_template.h needs (PSI_VI, PSI_VDW, PSI_LOADU,
 * PSI_STOREU, PSI_STREAM, PSI_ZERO, psi_shift*, psi_perm*), the including file
 * defines, before including this header:
 *   PSI_ADD32(a, b) PSI_AND(a, b) PSI_OR(a, b)  lane-wise u32 operations
 *   PSI_SLLI32(x, k) PSI_SRLI32(x, k)           u32 lane shifts by a constant
 *   PSI_SET1_32(v)                              v in every u32 lane
 *   LD_U8_A32(p)                                PSI_VDW bytes from p, widened
 *                                               to u32 lanes
 *   psi_prefix_c1(x)      the inclusive prefix of one channel within x
 *   psi_pair_block32(in0, in1, o, tot)
 *                         the packed in-block prefixes of pixels 0-31 of
 *                         both rows (row in0 low halves, in1 high halves) in
 *                         o[0 .. 32 / PSI_VDW - 1], in order, and the packed
 *                         totals of the 32 pixels in every lane of *tot
 *   PSI_PAIR_FN           the name of the entry point to define
 */
#ifndef PSI_FAST_PAIR_TEMPLATE_H
#define PSI_FAST_PAIR_TEMPLATE_H

/* Vectors of one 32-pixel step. */
#define PSI_PAIR_BLOCK_VECS (32 / PSI_VDW)

/* out[a, b) = acc[a, b) with non-temporal stores (out aligned to a vector, a
 * and b multiples of PSI_VDW). */
static inline void stream_from_acc(uint32_t *out, const uint32_t *acc, size_t a, size_t b)
{
    for (size_t x = a; x < b; x += PSI_VDW)
        PSI_STREAM(out + x, PSI_LOADU(acc + x));
}

/* Rows in0 and in1 (n samples, ch channels) into out0 and out1: out0 = prefix
 * of in0 (+ prev), out1 = out0 + prefix of in1, and acc = out1 when has_acc.
 * has_prev, stream and has_acc are constants in each inlined copy. */
PSI_FAST_ALWAYS_INLINE void u8u32_pair_body(const uint8_t *in0, const uint8_t *in1,
                                            uint32_t *out0, uint32_t *out1,
                                            const uint32_t *prev, uint32_t *acc, size_t n,
                                            size_t ch, const int has_prev, const int stream,
                                            const int has_acc)
{
    psi_shift_t sh[4];
    int nsteps = 0;
    for (size_t s = ch; s < PSI_VDW; s *= 2)
        sh[nsteps++] = psi_shift_make((int)s);
    const psi_perm_t perm = psi_perm_make(1, (int)ch);
    const int rotating = PSI_VDW % ch != 0;
    const PSI_VI low16 = PSI_SET1_32(0xFFFF);
    PSI_VI ca = PSI_ZERO(), cb = PSI_ZERO();
    size_t i = 0;
    if (ch == 1) {
        /* Streamed with a row buffer, row 1 goes to acc alone and is streamed
         * out from there a chunk at a time (PSI_PAIR_CHUNK). */
        const int defer = stream && has_acc;
        size_t copied = 0; /* out1 holds acc's values below this */
        for (; i + 32 <= n; i += 32) {
            PSI_VI o[PSI_PAIR_BLOCK_VECS], tot;
            psi_pair_block32(in0 + i, in1 + i, o, &tot);
            for (int k = 0; k < PSI_PAIR_BLOCK_VECS; k++) {
                PSI_VI r0 = PSI_ADD32(PSI_AND(o[k], low16), ca);
                PSI_VI r1 = PSI_ADD32(PSI_SRLI32(o[k], 16), cb);
                if (has_prev)
                    r0 = PSI_ADD32(r0, PSI_LOADU(prev + i + PSI_VDW * k));
                r1 = PSI_ADD32(r1, r0);
                if (stream) {
                    PSI_STREAM(out0 + i + PSI_VDW * k, r0);
                    if (!defer)
                        PSI_STREAM(out1 + i + PSI_VDW * k, r1);
                } else {
                    PSI_STOREU(out0 + i + PSI_VDW * k, r0);
                    PSI_STOREU(out1 + i + PSI_VDW * k, r1);
                }
                if (has_acc)
                    PSI_STOREU(acc + i + PSI_VDW * k, r1);
            }
            ca = PSI_ADD32(ca, PSI_AND(tot, low16));
            cb = PSI_ADD32(cb, PSI_SRLI32(tot, 16));
            if (defer && (i + 32) % PSI_PAIR_CHUNK == 0) {
                stream_from_acc(out1, acc, copied, i + 32);
                copied = i + 32;
            }
        }
        if (defer)
            stream_from_acc(out1, acc, copied, i);
    }
    for (; i + PSI_VDW <= n; i += PSI_VDW) {
        PSI_VI a = LD_U8_A32(in0 + i);
        PSI_VI b = LD_U8_A32(in1 + i);
        PSI_VI p = PSI_OR(a, PSI_SLLI32(b, 16));
        if (ch == 1) {
            p = psi_prefix_c1(p);
        } else {
            for (int k = 0; k < nsteps; k++)
                p = PSI_ADD32(p, psi_shift(p, sh[k]));
        }
        PSI_VI lo = PSI_AND(p, low16), hi = PSI_SRLI32(p, 16);
        PSI_VI r0 = PSI_ADD32(lo, ca), r1 = PSI_ADD32(hi, cb);
        if (rotating) {
            ca = psi_perm(r0, perm);
            cb = psi_perm(r1, perm);
        } else {
            PSI_VI t = psi_perm(p, perm);
            ca = PSI_ADD32(ca, PSI_AND(t, low16));
            cb = PSI_ADD32(cb, PSI_SRLI32(t, 16));
        }
        if (has_prev)
            r0 = PSI_ADD32(r0, PSI_LOADU(prev + i));
        r1 = PSI_ADD32(r1, r0);
        if (stream) {
            PSI_STREAM(out0 + i, r0);
            PSI_STREAM(out1 + i, r1);
        } else {
            PSI_STOREU(out0 + i, r0);
            PSI_STOREU(out1 + i, r1);
        }
        if (has_acc)
            PSI_STOREU(acc + i, r1);
    }
    if (i < n) { /* tail: lane j continues the total held in lane j of the carry */
        uint32_t ta[PSI_VDW], tb[PSI_VDW], sa[PSI_VDW], sb[PSI_VDW];
        PSI_STOREU(ta, ca);
        PSI_STOREU(tb, cb);
        for (size_t j = 0; i + j < n; j++) {
            sa[j] = in0[i + j] + (j >= ch ? sa[j - ch] : ta[j]);
            sb[j] = in1[i + j] + (j >= ch ? sb[j - ch] : tb[j]);
            uint32_t r0 = sa[j] + (has_prev ? prev[i + j] : 0);
            out0[i + j] = r0;
            out1[i + j] = sb[j] + r0;
            if (has_acc)
                acc[i + j] = sb[j] + r0;
        }
    }
}

/* One inlined copy of the body per combination of prev, streaming (only with
 * both rows aligned to a vector) and row buffer. */
PSI_FAST_ALWAYS_INLINE void pair_flags(const void *in0, const void *in1, void *out0, void *out1,
                                       const void *prev, void *acc, size_t n, size_t ch,
                                       int stream)
{
    int st = stream && (uintptr_t)out0 % (PSI_VDW * 4) == 0 &&
             (uintptr_t)out1 % (PSI_VDW * 4) == 0;
    if (prev) {
        if (st && acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 1, 1);
        else if (st)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 1, 0);
        else if (acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 0, 1);
        else
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 1, 0, 0);
    } else {
        if (st && acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 1, 1);
        else if (st)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 1, 0);
        else if (acc)
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 0, 1);
        else
            u8u32_pair_body(in0, in1, out0, out1, prev, acc, n, ch, 0, 0, 0);
    }
}

/* The entry point (psi_fast_pair_fn); one channel gets its own copy, with the
 * channel count a constant. */
void PSI_PAIR_FN(const void *in0, const void *in1, void *out0, void *out1, const void *prev,
                 void *acc, size_t width, size_t ch, int stream)
{
    size_t n = width * ch;
    if (ch == 1)
        pair_flags(in0, in1, out0, out1, prev, acc, n, 1, stream);
    else
        pair_flags(in0, in1, out0, out1, prev, acc, n, ch, stream);
}

#endif
