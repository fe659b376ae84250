/*
 * status.c - version strings, status texts and the thread-local detail text
 * that explains the last failing call on each thread.
 */
#include "internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define PSI_STR2(x) #x
#define PSI_STR(x) PSI_STR2(x)

const char *pixsum_version(void)
{
    return PSI_STR(PIXSUM_VERSION_MAJOR) "." PSI_STR(PIXSUM_VERSION_MINOR) "." PSI_STR(
        PIXSUM_VERSION_PATCH);
}

unsigned pixsum_version_number(void)
{
    return PIXSUM_VERSION_NUMBER;
}

static const char *const status_text[PIXSUM_STATUS_COUNT] = {
    [PIXSUM_OK] = "success",
    [PIXSUM_ERR_NULL] = "null pointer",
    [PIXSUM_ERR_INVALID_ARG] = "invalid argument",
    [PIXSUM_ERR_BAD_SHAPE] = "bad shape",
    [PIXSUM_ERR_BAD_STRIDE] = "bad stride",
    [PIXSUM_ERR_BAD_TYPE] = "unsupported pixel type",
    [PIXSUM_ERR_OVERFLOW] = "output type can overflow",
    [PIXSUM_ERR_ALIASING] = "input and output overlap",
    [PIXSUM_ERR_UNKNOWN_METHOD] = "unknown method",
    [PIXSUM_ERR_UNSUPPORTED] = "operation not supported by the method",
    [PIXSUM_ERR_NO_MEMORY] = "out of memory",
    [PIXSUM_ERR_UNAVAILABLE] = "backend not available",
    [PIXSUM_ERR_OUT_OF_RANGE] = "out of range",
    [PIXSUM_ERR_TOO_LARGE] = "too large",
    [PIXSUM_ERR_CUDA] = "CUDA error",
    [PIXSUM_ERR_GL] = "OpenGL error",
    [PIXSUM_ERR_MPI] = "MPI error",
    [PIXSUM_ERR_IO] = "I/O error",
    [PIXSUM_ERR_INTERNAL] = "internal error",
};

const char *pixsum_strerror(int status)
{
    if (status < 0 || status >= PIXSUM_STATUS_COUNT || !status_text[status])
        return "unknown status";
    return status_text[status];
}

static _Thread_local char detail[512];

const char *pixsum_last_error(void)
{
    return detail;
}

void psi_clear_error(void)
{
    detail[0] = '\0';
}

int psi_fail(int status, const char *fmt, ...)
{
    /* Format into a local buffer first: callers often wrap the current text,
     * psi_fail(st, "input: %s", pixsum_last_error()), and vsnprintf() must not
     * read from the buffer it writes. */
    char text[sizeof detail];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    memcpy(detail, text, sizeof detail);
    return status;
}
