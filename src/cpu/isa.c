/*
 * isa.c - CPU feature detection (once, through pthread_once) and the
 * PIXSUM_FORCE_ISA override for the fast kernels. See isa.h; the experimental
 * pixsum_cpu_isa() / pixsum_cpu_force_isa() of pixsum.h are its public face.
 */
#define PIXSUM_EXPERIMENTAL
#include "isa.h"

#include "pixsum.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const isa_names[PSI_ISA_COUNT] = {"scalar", "sse2", "avx2", "avx512"};

static pthread_once_t detect_once = PTHREAD_ONCE_INIT;
static psi_isa supported_isa = PSI_ISA_SCALAR;
static psi_isa env_isa = PSI_ISA_SCALAR;  /* supported level capped by the env */
static int forced_isa = -1;               /* psi_isa_force(); -1 = none (atomic) */
static int avx512_extras = 0;             /* VPOPCNTDQ, GFNI, VBMI, VBMI2 */

static psi_isa detect_hardware(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    __builtin_cpu_init();
    /* __builtin_cpu_supports also checks that the OS saves the wide registers
     * (XGETBV) for the AVX levels. */
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
        return PSI_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("bmi2"))
        return PSI_ISA_AVX2;
    if (__builtin_cpu_supports("sse2"))
        return PSI_ISA_SSE2;
#endif
    return PSI_ISA_SCALAR;
}

static int detect_avx512_extras(void)
{
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
    return __builtin_cpu_supports("avx512vpopcntdq") && __builtin_cpu_supports("gfni") &&
           __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512vbmi2");
#else
    return 0;
#endif
}

static void detect(void)
{
    supported_isa = detect_hardware();
    avx512_extras = supported_isa == PSI_ISA_AVX512 && detect_avx512_extras();
    env_isa = supported_isa;
    const char *force = getenv("PIXSUM_FORCE_ISA");
    if (force && *force) {
        psi_isa want = psi_isa_from_name(force);
        if (want == PSI_ISA_COUNT)
            fprintf(stderr, "pixsum: PIXSUM_FORCE_ISA=%s is not one of scalar, sse2, avx2, "
                            "avx512; ignored\n", force);
        else if (want < env_isa)
            env_isa = want;
    }
}

psi_isa psi_isa_supported(void)
{
    pthread_once(&detect_once, detect);
    return supported_isa;
}

psi_isa psi_isa_active(void)
{
    pthread_once(&detect_once, detect);
    int forced = __atomic_load_n(&forced_isa, __ATOMIC_RELAXED);
    return forced >= 0 ? (psi_isa)forced : env_isa;
}

psi_isa psi_isa_force(psi_isa isa)
{
    pthread_once(&detect_once, detect);
    int value = -1;
    if (isa < PSI_ISA_COUNT)
        value = (int)(isa < supported_isa ? isa : supported_isa);
    __atomic_store_n(&forced_isa, value, __ATOMIC_RELAXED);
    return psi_isa_active();
}

int psi_isa_avx512_extras(void)
{
    pthread_once(&detect_once, detect);
    return avx512_extras;
}

const char *psi_isa_name(psi_isa isa)
{
    return isa < PSI_ISA_COUNT ? isa_names[isa] : "unknown";
}

psi_isa psi_isa_from_name(const char *name)
{
    for (int i = 0; name && i < PSI_ISA_COUNT; i++)
        if (strcmp(name, isa_names[i]) == 0)
            return (psi_isa)i;
    return PSI_ISA_COUNT;
}

/* The experimental public face of the detector (pixsum.h, PIXSUM_EXPERIMENTAL). */
const char *pixsum_cpu_isa(void)
{
    return psi_isa_name(psi_isa_active());
}

int pixsum_cpu_force_isa(const char *name)
{
    if (!name) {
        psi_isa_force(PSI_ISA_COUNT);
        return PIXSUM_OK;
    }
    psi_isa isa = psi_isa_from_name(name);
    if (isa == PSI_ISA_COUNT)
        return PIXSUM_ERR_INVALID_ARG;
    psi_isa_force(isa);
    return PIXSUM_OK;
}
