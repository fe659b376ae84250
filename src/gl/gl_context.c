/*
 * gl_context.c - the process's headless OpenGL context through EGL (see
 * gl_context.h): platform selection, display initialisation, context creation
 * with a surfaceless or pbuffer fallback, the lock that serialises its use,
 * and EGL/GL error names for the detail texts.
 *
 * Once created the context is never destroyed: it lives until the process
 * exits (tearing down a driver in an atexit handler races other libraries'
 * destructors). A failed creation releases the contexts and surfaces it made
 * (see leave_display() for the displays) and is remembered.
 */
#include "gl_context.h"

#define EGL_NO_X11 1 /* headless: no X11 headers needed */
#include <EGL/egl.h>
#include <EGL/eglext.h>
#define GL_GLEXT_PROTOTYPES 1
#include <GL/glcorearb.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GL_STATE_UNTRIED = 0, GL_STATE_READY = 1, GL_STATE_FAILED = 2 };

static pthread_mutex_t gl_lock = PTHREAD_MUTEX_INITIALIZER;
static int gl_state;               /* guarded by gl_lock */
static char gl_failure[400];       /* why creation failed (guarded by gl_lock) */
static EGLDisplay gl_display = EGL_NO_DISPLAY;
static EGLContext gl_context = EGL_NO_CONTEXT;
static EGLSurface gl_surface = EGL_NO_SURFACE; /* pbuffer fallback only */
static psi_gl_limits gl_limits;
static void *gl_user;               /* the caller's object cache */
static char gl_where[80];           /* platform and surface of the context */

/* Failure remembered for psi_gl_available() without taking the lock. */
static atomic_int gl_failed_flag;

static const char *egl_error_name(EGLint e)
{
    switch (e) {
    case EGL_SUCCESS: return "EGL_SUCCESS";
    case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
    case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
    case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
    case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
    case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
    case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
    case EGL_BAD_CURRENT_SURFACE: return "EGL_BAD_CURRENT_SURFACE";
    case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
    case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
    case EGL_BAD_NATIVE_PIXMAP: return "EGL_BAD_NATIVE_PIXMAP";
    case EGL_BAD_NATIVE_WINDOW: return "EGL_BAD_NATIVE_WINDOW";
    case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
    case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
    case EGL_CONTEXT_LOST: return "EGL_CONTEXT_LOST";
    default: return "unknown EGL error";
    }
}

const char *psi_gl_error_name(unsigned code)
{
    switch (code) {
    case GL_NO_ERROR: return "GL_NO_ERROR";
    case GL_INVALID_ENUM: return "GL_INVALID_ENUM";
    case GL_INVALID_VALUE: return "GL_INVALID_VALUE";
    case GL_INVALID_OPERATION: return "GL_INVALID_OPERATION";
    case GL_INVALID_FRAMEBUFFER_OPERATION: return "GL_INVALID_FRAMEBUFFER_OPERATION";
    case GL_OUT_OF_MEMORY: return "GL_OUT_OF_MEMORY";
    default: return "unknown GL error";
    }
}

static bool has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; p && (p = strstr(p, word)) != NULL; p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
            return true;
    return false;
}

/* Which platforms the environment allows: bit 0 surfaceless, 1 device,
 * 2 default; 0 = none (an unknown PIXSUM_GL_PLATFORM). */
static unsigned allowed_platforms(void)
{
    const char *e = getenv("PIXSUM_GL_PLATFORM");
    if (!e || !*e || strcmp(e, "auto") == 0)
        return 7;
    if (strcmp(e, "surfaceless") == 0)
        return 1;
    if (strcmp(e, "device") == 0)
        return 2;
    if (strcmp(e, "default") == 0)
        return 4;
    return 0;
}

/* The OpenGL version asked for (PIXSUM_GL_VERSION, default 3.3). */
static void wanted_version(int *major, int *minor)
{
    *major = 3;
    *minor = 3;
    const char *e = getenv("PIXSUM_GL_VERSION");
    int a, b;
    if (e && sscanf(e, "%d.%d", &a, &b) == 2 && a > 0 && b >= 0)
        *major = a, *minor = b;
}

/* ---- probe (available) ------------------------------------------------ */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool probe_ok;

static void probe(void)
{
    unsigned allow = allowed_platforms();
    if (!allow)
        return;
    const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
    PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
        (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
    if ((allow & 1) && get_platform_display && has_word(ext, "EGL_MESA_platform_surfaceless") &&
        get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, NULL) !=
            EGL_NO_DISPLAY) {
        probe_ok = true;
        return;
    }
    if ((allow & 2) && get_platform_display && has_word(ext, "EGL_EXT_platform_device")) {
        PFNEGLQUERYDEVICESEXTPROC query_devices =
            (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
        EGLint n = 0;
        if (query_devices && query_devices(0, NULL, &n) && n > 0) {
            probe_ok = true;
            return;
        }
    }
    if ((allow & 4) && eglGetDisplay(EGL_DEFAULT_DISPLAY) != EGL_NO_DISPLAY)
        probe_ok = true;
}

bool psi_gl_available(void)
{
    pthread_once(&probe_once, probe);
    return probe_ok && !atomic_load(&gl_failed_flag);
}

/* ---- creation --------------------------------------------------------- */

/* A display that initialised but gave no usable context is left initialised,
 * not terminated: EGL keeps one display object per platform and device for the
 * process anyway, and Mesa's eglTerminate unloads its driver after losing an
 * allocation on the way (LeakSanitizer reports it in an unloaded module, where
 * no suppression can name it). Objects made on it were destroyed already. */
static void leave_display(EGLDisplay dpy)
{
    (void)dpy;
}

/* Tries to make a context on an obtained display; on failure releases what it
 * made and appends the reason to why. */
static bool try_display(EGLDisplay dpy, const char *label, char *why, size_t why_len)
{
    size_t used = strlen(why);
#define WHY(...) snprintf(why + used, why_len - used, __VA_ARGS__)
    if (dpy == EGL_NO_DISPLAY) {
        WHY("%s%s: no display (%s)", used ? "; " : "", label, egl_error_name(eglGetError()));
        return false;
    }
    EGLint major, minor;
    if (!eglInitialize(dpy, &major, &minor)) {
        WHY("%s%s: eglInitialize failed (%s)", used ? "; " : "", label,
            egl_error_name(eglGetError()));
        return false;
    }
    const char *ext = eglQueryString(dpy, EGL_EXTENSIONS);
    if (!eglBindAPI(EGL_OPENGL_API)) {
        WHY("%s%s: eglBindAPI(EGL_OPENGL_API) failed (%s)", used ? "; " : "", label,
            egl_error_name(eglGetError()));
        leave_display(dpy);
        return false;
    }
    const char *force_pbuffer = getenv("PIXSUM_GL_PBUFFER");
    bool pbuffer = force_pbuffer && *force_pbuffer && strcmp(force_pbuffer, "0") != 0;
    bool surfaceless = !pbuffer && has_word(ext, "EGL_KHR_surfaceless_context");
    bool configless = !pbuffer && (has_word(ext, "EGL_KHR_no_config_context") ||
                                   has_word(ext, "EGL_MESA_configless_context"));
    EGLConfig config = (EGLConfig)0;
    if (!surfaceless || !configless) {
        const EGLint want[] = {EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE,
                               EGL_OPENGL_BIT, EGL_NONE};
        EGLint n = 0;
        if (!eglChooseConfig(dpy, want, &config, 1, &n) || n < 1) {
            WHY("%s%s: no EGL config for OpenGL + pbuffer (%s)", used ? "; " : "", label,
                egl_error_name(eglGetError()));
            leave_display(dpy);
            return false;
        }
    }
    int gl_major, gl_minor;
    wanted_version(&gl_major, &gl_minor);
    const EGLint attrs[] = {EGL_CONTEXT_MAJOR_VERSION, gl_major, EGL_CONTEXT_MINOR_VERSION,
                            gl_minor, EGL_CONTEXT_OPENGL_PROFILE_MASK,
                            EGL_CONTEXT_OPENGL_CORE_PROFILE_BIT, EGL_NONE};
    EGLContext ctx = eglCreateContext(dpy, config, EGL_NO_CONTEXT, attrs);
    if (ctx == EGL_NO_CONTEXT) {
        WHY("%s%s (EGL %d.%d, %s): eglCreateContext(OpenGL %d.%d core) failed (%s)",
            used ? "; " : "", label, major, minor, eglQueryString(dpy, EGL_VENDOR), gl_major,
            gl_minor, egl_error_name(eglGetError()));
        leave_display(dpy);
        return false;
    }
    EGLSurface surf = EGL_NO_SURFACE;
    if (!surfaceless) {
        const EGLint pb[] = {EGL_WIDTH, 1, EGL_HEIGHT, 1, EGL_NONE};
        surf = eglCreatePbufferSurface(dpy, config, pb);
        if (surf == EGL_NO_SURFACE) {
            WHY("%s%s: eglCreatePbufferSurface failed (%s)", used ? "; " : "", label,
                egl_error_name(eglGetError()));
            eglDestroyContext(dpy, ctx);
            leave_display(dpy);
            return false;
        }
    }
    if (!eglMakeCurrent(dpy, surf, surf, ctx)) {
        WHY("%s%s: eglMakeCurrent failed (%s)", used ? "; " : "", label,
            egl_error_name(eglGetError()));
        if (surf != EGL_NO_SURFACE)
            eglDestroySurface(dpy, surf);
        eglDestroyContext(dpy, ctx);
        leave_display(dpy);
        return false;
    }
    psi_gl_limits *l = &gl_limits;
    memset(l, 0, sizeof *l);
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &l->max_texture_size);
    glGetIntegerv(GL_MAX_RENDERBUFFER_SIZE, &l->max_renderbuffer_size);
    glGetIntegerv(GL_MAX_VIEWPORT_DIMS, l->max_viewport);
    glGetQueryiv(GL_SAMPLES_PASSED, GL_QUERY_COUNTER_BITS, &l->query_counter_bits);
    const char *r = (const char *)glGetString(GL_RENDERER);
    const char *v = (const char *)glGetString(GL_VERSION);
    snprintf(l->renderer, sizeof l->renderer, "%s", r ? r : "?");
    snprintf(l->version, sizeof l->version, "%s", v ? v : "?");
    eglMakeCurrent(dpy, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    if (l->query_counter_bits < 1 || l->max_texture_size < 1) {
        WHY("%s%s: %s has no usable occlusion queries (counter bits %d)", used ? "; " : "",
            label, l->renderer, l->query_counter_bits);
        if (surf != EGL_NO_SURFACE)
            eglDestroySurface(dpy, surf);
        eglDestroyContext(dpy, ctx);
        leave_display(dpy);
        return false;
    }
#undef WHY
    gl_display = dpy;
    gl_context = ctx;
    gl_surface = surf;
    snprintf(gl_where, sizeof gl_where, "%s, %s", label,
             surf == EGL_NO_SURFACE ? "surfaceless" : "1x1 pbuffer");
    return true;
}

/* Creates the context (gl_lock held). */
static void create_context(void)
{
    char why[sizeof gl_failure] = "";
    unsigned allow = allowed_platforms();
    bool done = false;
    if (!allow) {
        snprintf(why, sizeof why, "PIXSUM_GL_PLATFORM='%s' selects no EGL platform",
                 getenv("PIXSUM_GL_PLATFORM"));
    } else {
        const char *ext = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
        PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
            (PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
        /* Devices: hardware ones first (a GPU driver's device, e.g. NVIDIA's),
         * so that Mesa's surfaceless platform, which falls back to its software
         * renderer, does not win on a machine with a GPU; software devices
         * (EGL_MESA_device_software) after surfaceless. */
        EGLDeviceEXT devices[16];
        bool software[16] = {false};
        EGLint ndev = 0;
        if ((allow & 2) && get_platform_display && has_word(ext, "EGL_EXT_platform_device")) {
            PFNEGLQUERYDEVICESEXTPROC query_devices =
                (PFNEGLQUERYDEVICESEXTPROC)eglGetProcAddress("eglQueryDevicesEXT");
            PFNEGLQUERYDEVICESTRINGEXTPROC device_string =
                (PFNEGLQUERYDEVICESTRINGEXTPROC)eglGetProcAddress("eglQueryDeviceStringEXT");
            if (!query_devices || !query_devices(16, devices, &ndev))
                ndev = 0;
            for (EGLint i = 0; i < ndev; i++)
                software[i] = device_string &&
                              has_word(device_string(devices[i], EGL_EXTENSIONS),
                                       "EGL_MESA_device_software");
        }
        for (int round = 0; round < 3 && !done; round++) {
            if (round == 1) { /* surfaceless, between hardware and software devices */
                if ((allow & 1) && get_platform_display &&
                    has_word(ext, "EGL_MESA_platform_surfaceless"))
                    done = try_display(get_platform_display(EGL_PLATFORM_SURFACELESS_MESA,
                                                            EGL_DEFAULT_DISPLAY, NULL),
                                       "surfaceless", why, sizeof why);
                continue;
            }
            for (EGLint i = 0; i < ndev && !done; i++) {
                if (software[i] != (round == 2))
                    continue;
                char label[48];
                snprintf(label, sizeof label, "device %d%s", (int)i,
                         software[i] ? " (software)" : "");
                done = try_display(get_platform_display(EGL_PLATFORM_DEVICE_EXT, devices[i], NULL),
                                   label, why, sizeof why);
            }
        }
        if (!done && (allow & 4))
            done = try_display(eglGetDisplay(EGL_DEFAULT_DISPLAY), "default display", why,
                               sizeof why);
        if (!done && !why[0])
            snprintf(why, sizeof why, "no EGL platform offers a display");
    }
    eglReleaseThread();
    if (done) {
        gl_state = GL_STATE_READY;
        const char *verbose = getenv("PIXSUM_GL_VERBOSE");
        if (verbose && *verbose && strcmp(verbose, "0") != 0)
            fprintf(stderr,
                    "pixsum gl: %s, OpenGL %s (EGL %s), query counter bits %d, max texture %d\n",
                    gl_limits.renderer, gl_limits.version, gl_where,
                    gl_limits.query_counter_bits, gl_limits.max_texture_size);
    } else {
        snprintf(gl_failure, sizeof gl_failure, "%s", why);
        gl_state = GL_STATE_FAILED;
        atomic_store(&gl_failed_flag, 1);
    }
}

/* EGL keeps per-thread state (the bound API, the last error). Releasing it
 * after every call (eglReleaseThread) made each call rebuild it, which cost
 * tens of milliseconds per call on the NVIDIA driver; it is released once,
 * when a thread that used GL exits (a thread-specific key's destructor). */
static pthread_key_t gl_thread_key;
static pthread_once_t gl_thread_key_once = PTHREAD_ONCE_INIT;

static void release_thread_state(void *unused)
{
    (void)unused;
    eglReleaseThread();
}

static void make_thread_key(void)
{
    if (pthread_key_create(&gl_thread_key, release_thread_state) != 0)
        gl_thread_key = (pthread_key_t)-1;
}

int psi_gl_acquire(const psi_gl_limits **limits, void ***user)
{
    pthread_once(&gl_thread_key_once, make_thread_key);
    if (gl_thread_key != (pthread_key_t)-1 && !pthread_getspecific(gl_thread_key))
        pthread_setspecific(gl_thread_key, (void *)1);
    pthread_mutex_lock(&gl_lock);
    if (gl_state == GL_STATE_UNTRIED)
        create_context();
    if (gl_state != GL_STATE_READY) {
        int st = psi_fail(PIXSUM_ERR_UNAVAILABLE, "no OpenGL context: %s", gl_failure);
        pthread_mutex_unlock(&gl_lock);
        return st;
    }
    /* eglMakeCurrent binds for the thread's current API: select OpenGL first. */
    if (!eglBindAPI(EGL_OPENGL_API) ||
        !eglMakeCurrent(gl_display, gl_surface, gl_surface, gl_context)) {
        int st = psi_fail(PIXSUM_ERR_GL, "eglMakeCurrent failed: %s",
                          egl_error_name(eglGetError()));
        pthread_mutex_unlock(&gl_lock);
        return st;
    }
    if (limits)
        *limits = &gl_limits;
    if (user)
        *user = &gl_user;
    return PIXSUM_OK;
}

void psi_gl_release(void)
{
    /* unbound, so that another thread can make the context current */
    eglMakeCurrent(gl_display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
    pthread_mutex_unlock(&gl_lock);
}
