/*
 * isa.h - run-time choice of the CPU instruction set used by the fast kernels.
 *
 * The best ISA the CPU (and the OS, for the wide registers) supports is
 * detected once, thread-safely, on first use. The environment variable
 * PIXSUM_FORCE_ISA=scalar|sse2|avx2|avx512 read at that moment caps the choice
 * (a level above what the machine supports falls back to the best supported
 * one). Tests can also change the level at run time with psi_isa_force().
 */
#ifndef PIXSUM_CPU_ISA_H
#define PIXSUM_CPU_ISA_H

typedef enum psi_isa {
    PSI_ISA_SCALAR = 0,
    PSI_ISA_SSE2 = 1,
    PSI_ISA_AVX2 = 2,   /* AVX2 + FMA + BMI2 */
    PSI_ISA_AVX512 = 3, /* AVX-512 F, BW, VL, DQ */
    PSI_ISA_COUNT = 4
} psi_isa;

/* The best ISA this machine supports (ignores any forcing). */
psi_isa psi_isa_supported(void);

/* The ISA the fast kernels use now: the supported level capped by
 * PIXSUM_FORCE_ISA and by psi_isa_force(). */
psi_isa psi_isa_active(void);

/* Caps the active ISA at `isa` (clamped to what the machine supports);
 * PSI_ISA_COUNT removes the cap set by this call and returns to the
 * environment's choice. For tests and benchmarks; affects every thread.
 * Returns the level now active. */
psi_isa psi_isa_force(psi_isa isa);

/* True when the CPU has, besides PSI_ISA_AVX512, the AVX-512 VPOPCNTDQ,
 * GFNI, VBMI and VBMI2 extensions (the histogram kernels of
 * src/hist/hist_avx512.c); detected once with the rest, ignores forcing:
 * callers also require psi_isa_active() >= PSI_ISA_AVX512. */
int psi_isa_avx512_extras(void);

/* "scalar", "sse2", "avx2", "avx512". */
const char *psi_isa_name(psi_isa isa);

/* Parses a name of psi_isa_name(); returns PSI_ISA_COUNT if unknown. */
psi_isa psi_isa_from_name(const char *name);

#endif /* PIXSUM_CPU_ISA_H */
