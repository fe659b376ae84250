/*
 * fast_row_template.h - the body of a fast row kernel (see fast_kernels.h),
 * written once and expanded by each ISA file over that ISA's primitives.
 *
 * The including file defines:
 *   PSI_VI                 the integer vector type (every kind is kept in it;
 *                          float kinds cast inside their ADD/SQ/LOADW)
 *   PSI_VDW                32-bit units per vector
 *   PSI_LOADU(p) PSI_STOREU(p, x) PSI_STREAM(p, x) PSI_ZERO()
 *   psi_shift_t, psi_shift_make(k), psi_shift(x, s)
 *                          move every 32-bit unit up by k units, zeros in
 *   psi_perm_t, psi_perm_make(dpl, c), psi_perm(x, p)
 *                          the carry pattern: lane j takes lane V - c + j % c
 * and then, per kernel, PSI_FAST_ROW(NAME, TIN, TOUT, LANES, DPL, LOADW, SQ, ADD):
 *   LOADW(p)  LANES inputs from p widened to the accumulator kind
 *   SQ(x)     x squared (or x itself for the plain table)
 *   ADD(a, b) lane-wise sum in the accumulator kind
 *
 * The prefix of one vector is a shift-and-add ladder over distances c, 2c, 4c,
 * ... lanes (c = channels), so each lane only gathers its own channel. The
 * running row total `carry` holds in lane j the total of lane j's channel so
 * far; when c divides the lane count the pattern repeats and the next carry is
 * carry + (pattern of the vector's own totals), which keeps the loop-carried
 * dependency to one addition; otherwise the pattern rotates and the carry is
 * rebuilt from the finished vector.
 *
 * A streamed row whose start is not vector-aligned begins with a partial vector
 * of `head` samples, so that the streaming stores are aligned; integer tables
 * are exact either way, but float tables would round by the address. They are
 * computed from the row's first sample into the cached accumulator row and
 * copied out instead, so a float table has the same bits streamed or not.
 *
 * PSI_SHORT_CARRY (default 0): in the two-vector loop, 1 adds both vectors'
 * totals to the carry (one addition on the loop-carried path, one extra
 * shuffle) instead of taking the carry from the second result (an addition, an
 * addition and a shuffle on that path); for ISAs whose cross-lane shuffle has a
 * long latency (vpermd: about 8 cycles on Zen 3).
 */
#ifndef PSI_SHORT_CARRY
#define PSI_SHORT_CARRY 0
#endif
#ifndef PSI_FAST_ALWAYS_INLINE
#define PSI_FAST_ALWAYS_INLINE static inline __attribute__((always_inline))
#endif

#define PSI_FAST_ROW(NAME, TIN, TOUT, LANES, DPL, LOADW, SQ, ADD)                          \
    PSI_FAST_ALWAYS_INLINE void NAME##_body(const TIN *in, TOUT *out, const TOUT *prev,     \
                                            TOUT *acc, size_t n, size_t ch, size_t head,    \
                                            const int has_prev, const int stream,           \
                                            const int has_acc)                              \
    {                                                                                       \
        psi_shift_t sh[4];                                                                  \
        int nsteps = 0;                                                                     \
        for (size_t s = ch; s < (LANES); s *= 2)                                            \
            sh[nsteps++] = psi_shift_make((int)(s * (DPL)));                                \
        const psi_perm_t perm = psi_perm_make(DPL, (int)ch);                                \
        const int rotating = (LANES) % ch != 0;                                             \
        PSI_VI carry = PSI_ZERO();                                                          \
        size_t i = 0;                                                                       \
        if (head > 0) { /* unaligned start: a partial vector, then aligned stores */        \
            TIN tin[LANES];                                                                 \
            TOUT tpre[LANES], tprev[LANES], tout[LANES], tcar[LANES];                       \
            size_t part = head < n ? head : n;                                              \
            memset(tin, 0, sizeof tin);                                                     \
            memset(tprev, 0, sizeof tprev);                                                 \
            memcpy(tin, in, part * sizeof(TIN));                                            \
            if (has_prev)                                                                   \
                memcpy(tprev, prev, part * sizeof(TOUT));                                   \
            PSI_VI x = LOADW(tin);                                                          \
            x = SQ(x);                                                                      \
            for (int k = 0; k < nsteps; k++)                                                \
                x = ADD(x, psi_shift(x, sh[k]));                                            \
            PSI_STOREU(tpre, x);                                                            \
            PSI_STOREU(tout, ADD(x, PSI_LOADU(tprev)));                                     \
            memcpy(out, tout, part * sizeof(TOUT));                                         \
            if (has_acc)                                                                    \
                memcpy(acc, tout, part * sizeof(TOUT));                                     \
            /* lane j of the next vector continues channel (part + j) % ch, whose */       \
            /* last sample so far is part - ch + j % ch */                                  \
            for (size_t j = 0; j < (LANES); j++) {                                          \
                size_t back = ch - j % ch;                                                  \
                memset(&tcar[j], 0, sizeof(TOUT));                                          \
                if (back <= part)                                                           \
                    tcar[j] = tpre[part - back];                                            \
            }                                                                               \
            carry = PSI_LOADU(tcar);                                                        \
            i = part;                                                                       \
        }                                                                                   \
        if (!rotating) { /* two vectors per step, ladders interleaved */                   \
            for (; i + 2 * (LANES) <= n; i += 2 * (LANES)) {                                \
                PSI_VI x = SQ(LOADW(in + i)), y = SQ(LOADW(in + i + (LANES)));              \
                for (int k = 0; k < nsteps; k++) {                                          \
                    x = ADD(x, psi_shift(x, sh[k]));                                        \
                    y = ADD(y, psi_shift(y, sh[k]));                                        \
                }                                                                           \
                PSI_VI r = ADD(x, carry);                                                   \
                PSI_VI q;                                                                   \
                if (PSI_SHORT_CARRY) {                                                      \
                    PSI_VI px = psi_perm(x, perm);                                          \
                    q = ADD(y, ADD(carry, px));                                             \
                    carry = ADD(carry, ADD(px, psi_perm(y, perm)));                         \
                } else {                                                                    \
                    q = ADD(y, ADD(carry, psi_perm(x, perm)));                              \
                    carry = psi_perm(q, perm);                                              \
                }                                                                           \
                if (has_prev) {                                                             \
                    r = ADD(r, PSI_LOADU(prev + i));                                        \
                    q = ADD(q, PSI_LOADU(prev + i + (LANES)));                              \
                }                                                                           \
                if (stream) {                                                               \
                    PSI_STREAM(out + i, r);                                                 \
                    PSI_STREAM(out + i + (LANES), q);                                       \
                } else {                                                                    \
                    PSI_STOREU(out + i, r);                                                 \
                    PSI_STOREU(out + i + (LANES), q);                                       \
                }                                                                           \
                if (has_acc) {                                                              \
                    PSI_STOREU(acc + i, r);                                                 \
                    PSI_STOREU(acc + i + (LANES), q);                                       \
                }                                                                           \
            }                                                                               \
        }                                                                                   \
        for (; i + (LANES) <= n; i += (LANES)) {                                            \
            PSI_VI x = LOADW(in + i);                                                       \
            x = SQ(x);                                                                      \
            for (int k = 0; k < nsteps; k++)                                                \
                x = ADD(x, psi_shift(x, sh[k]));                                            \
            PSI_VI r = ADD(x, carry);                                                       \
            if (rotating)                                                                   \
                carry = psi_perm(r, perm);                                                  \
            else                                                                            \
                carry = ADD(carry, psi_perm(x, perm));                                      \
            if (has_prev)                                                                   \
                r = ADD(r, PSI_LOADU(prev + i));                                            \
            if (stream)                                                                     \
                PSI_STREAM(out + i, r);                                                     \
            else                                                                            \
                PSI_STOREU(out + i, r);                                                     \
            if (has_acc)                                                                    \
                PSI_STOREU(acc + i, r);                                                     \
        }                                                                                   \
        if (i < n) { /* tail: the same step on zero-padded copies */                       \
            TIN tin[LANES];                                                                 \
            TOUT tprev[LANES], tout[LANES];                                                 \
            size_t rest = n - i;                                                            \
            memset(tin, 0, sizeof tin);                                                     \
            memset(tprev, 0, sizeof tprev);                                                 \
            memcpy(tin, in + i, rest * sizeof(TIN));                                        \
            if (has_prev)                                                                   \
                memcpy(tprev, prev + i, rest * sizeof(TOUT));                               \
            PSI_VI x = LOADW(tin);                                                          \
            x = SQ(x);                                                                      \
            for (int k = 0; k < nsteps; k++)                                                \
                x = ADD(x, psi_shift(x, sh[k]));                                            \
            PSI_VI r = ADD(ADD(x, carry), PSI_LOADU(tprev));                                \
            PSI_STOREU(tout, r);                                                            \
            memcpy(out + i, tout, rest * sizeof(TOUT));                                     \
            if (has_acc)                                                                    \
                memcpy(acc + i, tout, rest * sizeof(TOUT));                                 \
        }                                                                                   \
    }                                                                                       \
    PSI_FAST_ALWAYS_INLINE void NAME##_flags(const TIN *in, TOUT *out, const TOUT *prev,    \
                                             TOUT *acc, size_t n, size_t ch, size_t head,   \
                                             int st)                                        \
    {                                                                                       \
        if (prev) {                                                                         \
            if (st && acc)                                                                  \
                NAME##_body(in, out, prev, acc, n, ch, head, 1, 1, 1);                      \
            else if (st)                                                                    \
                NAME##_body(in, out, prev, acc, n, ch, head, 1, 1, 0);                      \
            else if (acc)                                                                   \
                NAME##_body(in, out, prev, acc, n, ch, head, 1, 0, 1);                      \
            else                                                                            \
                NAME##_body(in, out, prev, acc, n, ch, head, 1, 0, 0);                      \
        } else {                                                                            \
            if (st && acc)                                                                  \
                NAME##_body(in, out, prev, acc, n, ch, head, 0, 1, 1);                      \
            else if (st)                                                                    \
                NAME##_body(in, out, prev, acc, n, ch, head, 0, 1, 0);                      \
            else if (acc)                                                                   \
                NAME##_body(in, out, prev, acc, n, ch, head, 0, 0, 1);                      \
            else                                                                            \
                NAME##_body(in, out, prev, acc, n, ch, head, 0, 0, 0);                      \
        }                                                                                   \
    }                                                                                       \
    static void NAME(const void *in_, void *out_, const void *prev_, void *acc_,            \
                     size_t width, size_t ch, int stream)                                   \
    {                                                                                       \
        const TIN *in = in_;                                                                \
        TOUT *out = out_;                                                                   \
        const TOUT *prev = prev_;                                                           \
        TOUT *acc = acc_;                                                                   \
        size_t n = width * ch;                                                              \
        /* streaming needs aligned vectors: a misaligned row starts with a partial */      \
        /* vector of `head` samples written normally */                                     \
        size_t mis = (uintptr_t)out % (PSI_VDW * 4), head = 0;                              \
        int st = stream && mis % sizeof(TOUT) == 0;                                         \
        if (st && mis)                                                                      \
            head = (PSI_VDW * 4 - mis) / sizeof(TOUT);                                      \
        if (head && acc && (TOUT)0.5 != (TOUT)0) {                                          \
            /* float tables: the vectors start at the row's first sample whatever */       \
            /* its address, since where they start decides how the sums round; */          \
            /* the row goes to the cached acc (this kernel, not streamed: a call, */       \
            /* not another inlined copy), then out by aligned streaming stores */          \
            NAME(in_, acc, prev_, NULL, width, ch, 0);                                      \
            size_t part = head < n ? head : n, i = part;                                    \
            memcpy(out, acc, part * sizeof(TOUT));                                          \
            for (; i + (PSI_VDW * 4) / sizeof(TOUT) <= n; i += (PSI_VDW * 4) / sizeof(TOUT)) \
                PSI_STREAM(out + i, PSI_LOADU(acc + i));                                    \
            memcpy(out + i, acc + i, (n - i) * sizeof(TOUT));                               \
            return;                                                                         \
        }                                                                                   \
        /* one channel (the common case) gets its own copy with the ladder unrolled */     \
        if (ch == 1)                                                                        \
            NAME##_flags(in, out, prev, acc, n, 1, head, st);                               \
        else                                                                                \
            NAME##_flags(in, out, prev, acc, n, ch, head, st);                              \
    }

/* Column sums: acc[i] += sum over the nrows (1-4) rows of in^1 or in^2, in
 * the accumulator kind; the banded threaded method's first pass. */
#define PSI_FAST_COLSUM(NAME, TIN, TOUT, LANES, LOADW, SQ, ADD)                             \
    static void NAME(const void *const *rows_, int nrows, void *acc_, size_t n)             \
    {                                                                                       \
        const TIN *rows[4] = {NULL, NULL, NULL, NULL};                                      \
        for (int r = 0; r < nrows; r++)                                                     \
            rows[r] = rows_[r];                                                             \
        TOUT *acc = acc_;                                                                   \
        size_t i = 0;                                                                       \
        for (; i + (LANES) <= n; i += (LANES)) {                                            \
            PSI_VI s = PSI_LOADU(acc + i);                                                  \
            for (int r = 0; r < nrows; r++)                                                 \
                s = ADD(s, SQ(LOADW(rows[r] + i)));                                         \
            PSI_STOREU(acc + i, s);                                                         \
        }                                                                                   \
        if (i < n) {                                                                        \
            TIN tin[LANES];                                                                 \
            TOUT tacc[LANES];                                                               \
            size_t rest = n - i;                                                            \
            memset(tacc, 0, sizeof tacc);                                                   \
            memcpy(tacc, acc + i, rest * sizeof(TOUT));                                     \
            PSI_VI s = PSI_LOADU(tacc);                                                     \
            for (int r = 0; r < nrows; r++) {                                               \
                memset(tin, 0, sizeof tin);                                                 \
                memcpy(tin, rows[r] + i, rest * sizeof(TIN));                               \
                s = ADD(s, SQ(LOADW(tin)));                                                 \
            }                                                                               \
            PSI_STOREU(tacc, s);                                                            \
            memcpy(acc + i, tacc, rest * sizeof(TOUT));                                     \
        }                                                                                   \
    }
