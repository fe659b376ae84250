/*
 * gl_context.h - the process's one headless OpenGL context (EGL), shared by
 * the GL histogram methods.
 *
 * The context is created lazily by the first psi_gl_acquire() and lives until
 * the process ends. Calls from several threads are serialised by a mutex: the
 * context is made current on the calling thread for the call only
 * (psi_gl_acquire ... psi_gl_release).
 *
 * Platforms tried in order: EGL_EXT_platform_device with the hardware devices
 * (a GPU driver's, e.g. NVIDIA's), EGL_MESA_platform_surfaceless (Mesa: a GPU
 * it drives, else llvmpipe), the software devices, the default display. A context of OpenGL 3.3 core (or
 * newer) is made current without a surface (EGL_KHR_surfaceless_context), or
 * with a 1x1 pbuffer where that extension is missing.
 *
 * Environment (for tests and diagnosis):
 *   PIXSUM_GL_PLATFORM  auto (default), surfaceless, device or default: which
 *                       platform(s) to try; any other value makes no display.
 *   PIXSUM_GL_VERSION   "M.m", the OpenGL version asked for (default 3.3); an
 *                       impossible one (e.g. 9.9) makes context creation fail.
 *   PIXSUM_GL_VERBOSE   non-empty and not 0: print the renderer and version to
 *                       stderr when the context is created.
 *   PIXSUM_GL_PBUFFER   non-empty and not 0: use an EGL config and a 1x1 pbuffer
 *                       even where surfaceless contexts are offered (tests the
 *                       fallback).
 */
#ifndef PIXSUM_GL_CONTEXT_H
#define PIXSUM_GL_CONTEXT_H

#include "../internal.h"

/* Limits of the context, read once after creation. */
typedef struct psi_gl_limits {
    int max_texture_size;
    int max_renderbuffer_size;
    int max_viewport[2];
    int query_counter_bits; /* GL_QUERY_COUNTER_BITS of GL_SAMPLES_PASSED */
    char renderer[128];
    char version[128];
} psi_gl_limits;

/* Cheap check for available(): false when the environment selects no
 * platform, when no EGL display can be obtained, or when creating the context
 * has failed before; the first call asks EGL for its displays (no driver is
 * initialised), later calls read a cached answer. */
bool psi_gl_available(void);

/* Locks the context and makes it current on this thread, creating it on the
 * first call. On PIXSUM_OK the caller must call psi_gl_release() (on the same
 * thread) when done; *limits (may be NULL) receives the context's limits and
 * *user a pointer to a slot the caller may use to keep its own GL objects
 * (NULL at first; they live as long as the context). Returns PIXSUM_OK, or
 * PIXSUM_ERR_UNAVAILABLE with the EGL error text as detail when no display or
 * context can be made (remembered: later calls fail the same way at once), or
 * PIXSUM_ERR_GL when making the context current fails. */
int psi_gl_acquire(const psi_gl_limits **limits, void ***user);

/* Releases the context from this thread and unlocks it. */
void psi_gl_release(void);

/* Name of an OpenGL error code, e.g. "GL_OUT_OF_MEMORY". */
const char *psi_gl_error_name(unsigned code);

#endif /* PIXSUM_GL_CONTEXT_H */
