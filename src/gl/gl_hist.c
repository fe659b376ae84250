/*
 * gl_hist.c - the OpenGL histogram methods of paper 002 (psi_methods_gl[]):
 *
 *   gl.depth   the paper's method: each sample is written as a depth (a
 *              fragment shader maps the value, see gl_plan.h), then one plane
 *              per bin edge is drawn from back to front with an occlusion query
 *              (GL_SAMPLES_PASSED) around each; plane k counts the samples
 *              below edge k, i.e. the cumulative histogram H_{k-1}, and the
 *              bins are its differences (paper 002 eq. 5). An f32 range holding
 *              both signs takes two such depth passes, one per sign.
 *   gl.perbin  the method the paper compares with (Green 2005): one pass per
 *              bin whose fragment shader discards the samples outside the bin,
 *              the survivors counted by an occlusion query.
 *
 * Both compare integer keys with the edges worked out on the CPU from the
 * library's bin formula, so their counts equal hist.scalar's bit for bit
 * (below / above / NaN counts and masks included; channels are counted one
 * after the other from one upload). The image is uploaded in tiles of at most
 * 2048 x 2048 pixels (less where GL_MAX_TEXTURE_SIZE, the renderbuffer or
 * viewport limits or the query counter width demand it; PIXSUM_GL_TILE=N
 * caps it further, for tests): each query counts at most 2^22 samples and the
 * results are added up in 64 bits, so no count wraps.
 *
 * At most GL_QUERY_POOL occlusion queries exist at a time (PIXSUM_GL_QUERIES=N
 * lowers that, for tests): when they are all in flight, their results are read
 * back and the names reused. Drivers keep a buffer per query object (llvmpipe
 * about 9 KB), so one query per bin would hold ~150 MB at 16384 bins.
 *
 * GL errors become PIXSUM_ERR_GL with the error's name and the pass it
 * happened in; a missing EGL display or context PIXSUM_ERR_UNAVAILABLE.
 */
#include "gl_context.h"
#include "gl_plan.h"

#define GL_GLEXT_PROTOTYPES 1
#include <GL/glcorearb.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GL_TILE_MAX 2048
#define GL_QUERY_POOL 1024 /* query objects kept; 256 bins need one read-back per pass */

/* GL objects kept with the context (psi_gl_acquire()'s user slot). */
typedef struct gl_cache {
    GLuint vao;
    GLuint depth_prog[PSI_GL_KINDS]; /* 0 = not built yet */
    GLuint perbin_prog[PSI_GL_KINDS];
    GLuint plane_prog;
    GLuint fbo, depth_rb;
    int fbo_w, fbo_h;
    GLuint tex_img, tex_mask;
    GLuint *queries;     /* nqueries names, nqueries <= GL_QUERY_POOL */
    size_t *query_pass;  /* the pass each name in flight counts */
    size_t nqueries;
    int glsl400; /* the context runs GLSL 4.00 (for `precise`) */
} gl_cache;

/* ---- shaders ----------------------------------------------------------- */

static const char vertex_src[] =
    "void main() {\n"
    "    /* one triangle covering the viewport: (-1,-1) (3,-1) (-1,3) */\n"
    "    vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0,\n"
    "                  float((gl_VertexID & 2) << 1) - 1.0);\n"
    "    gl_Position = vec4(p, 0.0, 1.0);\n"
    "}\n";

/* fetch(): the sample of channel `chan` at pixel p as an ordered key and a value. */
static const char *const fetch_src[PSI_GL_KINDS] = {
    "uniform usampler2D img;\n"
    "void fetch(ivec2 p, out uint key, out float val) {\n"
    "    uint r = texelFetch(img, p, 0)[chan];\n"
    "    key = r;\n"
    "    val = float(r);\n"
    "}\n",
    "uniform isampler2D img;\n"
    "void fetch(ivec2 p, out uint key, out float val) {\n"
    "    int r = texelFetch(img, p, 0)[chan];\n"
    "    key = uint(r + 32768);\n"
    "    val = float(r);\n"
    "}\n",
    "uniform usampler2D img;\n"
    "void fetch(ivec2 p, out uint key, out float val) {\n"
    "    uint b = texelFetch(img, p, 0)[chan];\n"
    "    key = (b & 0x80000000u) != 0u ? ~b : (b | 0x80000000u);\n"
    "    val = uintBitsToFloat(b);\n"
    "}\n",
};

static const char common_src[] =
    "uniform usampler2D msk;\n"
    "uniform int use_mask;\n"
    "uniform int chan;\n"
    "uniform uint k_min;\n" /* keys of non-NaN values: [k_min, k_max] */
    "uniform uint k_max;\n";

/* Paper 002's value-to-depth pass (levels of gl_plan.h). */
static const char depth_src[] =
    "uniform uint k_lo;\n" /* first in-range key */
    "uniform uint k_hi;\n" /* first key above the range */
    "uniform uint k_a;\n"  /* keys [k_a, k_b) of this pass's segment */
    "uniform uint k_b;\n"
    "uniform float L;\n"
    "uniform float S;\n"
    "void main() {\n"
    "    ivec2 p = ivec2(gl_FragCoord.xy);\n"
    "    if (use_mask != 0 && texelFetch(msk, p, 0).r == 0u)\n"
    "        discard;\n"
    "    uint key;\n"
    "    float val;\n"
    "    fetch(p, key, val);\n"
    "    PRECISE float d;\n"
    "    if (key < k_min || key > k_max)\n"
    "        d = LEVEL_NAN;\n"
    "    else if (key < k_lo)\n"
    "        d = LEVEL_BELOW;\n"
    "    else if (key >= k_hi)\n"
    "        d = LEVEL_ABOVE;\n"
    "    else if (key < k_a || key >= k_b)\n"
    "        d = LEVEL_OTHER;\n"
    "    else\n"
    "        d = (val - L) * S;\n"
    "    gl_FragDepth = d;\n"
    "}\n";

/* Green's per-bin pass: keeps the samples with key in [a, b) (or the NaNs). */
static const char perbin_src[] =
    "uniform uint a;\n"
    "uniform uint b;\n"
    "uniform int want_nan;\n"
    "void main() {\n"
    "    ivec2 p = ivec2(gl_FragCoord.xy);\n"
    "    if (use_mask != 0 && texelFetch(msk, p, 0).r == 0u)\n"
    "        discard;\n"
    "    uint key;\n"
    "    float val;\n"
    "    fetch(p, key, val);\n"
    "    bool is_nan = key < k_min || key > k_max;\n"
    "    bool hit = want_nan != 0 ? is_nan : (!is_nan && key >= a && key < b);\n"
    "    if (!hit)\n"
    "        discard;\n"
    "}\n";

static const char plane_src[] =
    "uniform float plane;\n"
    "void main() {\n"
    "    gl_FragDepth = plane;\n"
    "}\n";

/* Compiles one shader from parts; returns 0 with the detail set on failure. */
static GLuint compile(GLenum type, const char *const *parts, int nparts, int *st)
{
    GLuint sh = glCreateShader(type);
    glShaderSource(sh, nparts, parts, NULL);
    glCompileShader(sh);
    GLint ok = 0;
    glGetShaderiv(sh, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[300] = "";
        glGetShaderInfoLog(sh, sizeof log, NULL, log);
        glDeleteShader(sh);
        *st = psi_fail(PIXSUM_ERR_GL, "GLSL compile failed: %s", log);
        return 0;
    }
    return sh;
}

/* Links a program from a fragment shader made of parts (after the version
 * header); binds the samplers to units 0 (image) and 1 (mask). */
static GLuint build_program(const gl_cache *c, const char *const *frag, int nfrag, int *st)
{
    const char *header = c->glsl400 ? "#version 400 core\n#define PRECISE precise\n"
                                    : "#version 330 core\n#define PRECISE\n";
    char levels[256];
    snprintf(levels, sizeof levels,
             "#define LEVEL_BELOW %.9g\n#define LEVEL_ABOVE %.9g\n#define LEVEL_NAN %.9g\n"
             "#define LEVEL_OTHER %.9g\n",
             (double)PSI_GL_LEVEL_BELOW, (double)PSI_GL_LEVEL_ABOVE, (double)PSI_GL_LEVEL_NAN,
             (double)PSI_GL_LEVEL_OTHER);
    const char *vparts[] = {header, vertex_src};
    const char *fparts[8] = {header, levels};
    for (int i = 0; i < nfrag && i < 6; i++)
        fparts[2 + i] = frag[i];
    GLuint vs = compile(GL_VERTEX_SHADER, vparts, 2, st);
    if (!vs)
        return 0;
    GLuint fs = compile(GL_FRAGMENT_SHADER, fparts, 2 + nfrag, st);
    if (!fs) {
        glDeleteShader(vs);
        return 0;
    }
    GLuint prog = glCreateProgram();
    glAttachShader(prog, vs);
    glAttachShader(prog, fs);
    glLinkProgram(prog);
    glDeleteShader(vs);
    glDeleteShader(fs);
    GLint ok = 0;
    glGetProgramiv(prog, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[300] = "";
        glGetProgramInfoLog(prog, sizeof log, NULL, log);
        glDeleteProgram(prog);
        *st = psi_fail(PIXSUM_ERR_GL, "GLSL link failed: %s", log);
        return 0;
    }
    glUseProgram(prog);
    GLint loc = glGetUniformLocation(prog, "img");
    if (loc >= 0)
        glUniform1i(loc, 0);
    loc = glGetUniformLocation(prog, "msk");
    if (loc >= 0)
        glUniform1i(loc, 1);
    glUseProgram(0);
    return prog;
}

/* ---- context-lifetime objects ------------------------------------------ */

static int cache_get(void **slot, gl_cache **out)
{
    gl_cache *c = *slot;
    if (!c) {
        c = calloc(1, sizeof *c);
        if (!c)
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate the GL object cache");
        GLint major = 0;
        glGetIntegerv(GL_MAJOR_VERSION, &major);
        c->glsl400 = major >= 4;
        glGenVertexArrays(1, &c->vao);
        glGenFramebuffers(1, &c->fbo);
        glGenRenderbuffers(1, &c->depth_rb);
        glGenTextures(1, &c->tex_img);
        glGenTextures(1, &c->tex_mask);
        GLuint tex[2] = {c->tex_img, c->tex_mask};
        for (int i = 0; i < 2; i++) {
            glBindTexture(GL_TEXTURE_2D, tex[i]);
            /* integer textures are complete only with NEAREST filtering */
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
            glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAX_LEVEL, 0);
        }
        glBindTexture(GL_TEXTURE_2D, 0);
        *slot = c;
    }
    *out = c;
    return PIXSUM_OK;
}

static int ensure_fbo(gl_cache *c, int w, int h)
{
    if (c->fbo_w >= w && c->fbo_h >= h) {
        glBindFramebuffer(GL_FRAMEBUFFER, c->fbo);
        return PIXSUM_OK;
    }
    w = w > c->fbo_w ? w : c->fbo_w;
    h = h > c->fbo_h ? h : c->fbo_h;
    glBindRenderbuffer(GL_RENDERBUFFER, c->depth_rb);
    glRenderbufferStorage(GL_RENDERBUFFER, GL_DEPTH_COMPONENT32F, w, h);
    glBindRenderbuffer(GL_RENDERBUFFER, 0);
    glBindFramebuffer(GL_FRAMEBUFFER, c->fbo);
    glFramebufferRenderbuffer(GL_FRAMEBUFFER, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, c->depth_rb);
    glDrawBuffer(GL_NONE);
    glReadBuffer(GL_NONE);
    GLenum fs = glCheckFramebufferStatus(GL_FRAMEBUFFER);
    GLenum err = glGetError();
    if (fs != GL_FRAMEBUFFER_COMPLETE || err != GL_NO_ERROR) {
        c->fbo_w = c->fbo_h = 0;
        return psi_fail(PIXSUM_ERR_GL,
                        "cannot make a %dx%d 32-bit float depth framebuffer (status 0x%x, %s)",
                        w, h, fs, psi_gl_error_name(err));
    }
    c->fbo_w = w;
    c->fbo_h = h;
    return PIXSUM_OK;
}

/* `cap`, or the environment variable `name` where it holds a smaller value
 * >= 1 (the test knobs PIXSUM_GL_TILE and PIXSUM_GL_QUERIES). */
static long env_cap(const char *name, long cap)
{
    const char *e = getenv(name);
    if (e) {
        long v = strtol(e, NULL, 10);
        if (v >= 1 && v < cap)
            return v;
    }
    return cap;
}

/* How many query objects a run may keep in flight: GL_QUERY_POOL, or fewer
 * with PIXSUM_GL_QUERIES=N (tests use it to force read-backs). */
static size_t query_pool(void)
{
    return (size_t)env_cap("PIXSUM_GL_QUERIES", GL_QUERY_POOL);
}

/* Makes sure c holds at least n (<= GL_QUERY_POOL) query names. */
static int ensure_queries(gl_cache *c, size_t n)
{
    if (c->nqueries >= n)
        return PIXSUM_OK;
    GLuint *q = realloc(c->queries, n * sizeof *q);
    if (!q)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu query names", n);
    c->queries = q;
    size_t *pass = realloc(c->query_pass, n * sizeof *pass);
    if (!pass)
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu query slots", n);
    c->query_pass = pass;
    glGenQueries((GLsizei)(n - c->nqueries), q + c->nqueries);
    c->nqueries = n;
    return PIXSUM_OK;
}

/* ---- upload ------------------------------------------------------------ */

/* Texture formats per kind and channel count. */
static void texture_format(pixsum_type t, size_t channels, GLint *internal, GLenum *format,
                           GLenum *type)
{
    static const GLenum formats[4] = {GL_RED_INTEGER, GL_RG_INTEGER, GL_RGB_INTEGER,
                                      GL_RGBA_INTEGER};
    static const GLint u8f[4] = {GL_R8UI, GL_RG8UI, GL_RGB8UI, GL_RGBA8UI};
    static const GLint u16f[4] = {GL_R16UI, GL_RG16UI, GL_RGB16UI, GL_RGBA16UI};
    static const GLint i16f[4] = {GL_R16I, GL_RG16I, GL_RGB16I, GL_RGBA16I};
    static const GLint u32f[4] = {GL_R32UI, GL_RG32UI, GL_RGB32UI, GL_RGBA32UI};
    size_t i = channels - 1;
    *format = formats[i];
    switch (t) {
    case PIXSUM_U8: *internal = u8f[i], *type = GL_UNSIGNED_BYTE; break;
    case PIXSUM_U16: *internal = u16f[i], *type = GL_UNSIGNED_SHORT; break;
    case PIXSUM_I16: *internal = i16f[i], *type = GL_SHORT; break;
    default: *internal = u32f[i], *type = GL_UNSIGNED_INT; break; /* f32 bits */
    }
}

/* True when GL can read v's rows in place: a positive stride of whole pixels. */
static bool in_place(const pixsum_view *v)
{
    size_t px = pixsum_type_size(v->type) * v->channels;
    return v->row_stride > 0 && (size_t)v->row_stride % px == 0;
}

/* Uploads the tile [x0, x0+w) x [y0, y0+h) of slice z of view v into the
 * texture bound to the active unit. Rows whose stride is a whole number of
 * pixels are read in place (GL_UNPACK_ROW_LENGTH); others are packed into
 * `stage` (w * h * pixel bytes) first. */
static void upload_tile(const pixsum_view *v, size_t z, size_t x0, size_t y0, size_t w, size_t h,
                        GLint internal, GLenum format, GLenum type, unsigned char *stage)
{
    size_t px = pixsum_type_size(v->type) * v->channels;
    const unsigned char *first = (const unsigned char *)psi_row(v, y0, z) + x0 * px;
    if (in_place(v)) {
        glPixelStorei(GL_UNPACK_ROW_LENGTH, (GLint)((size_t)v->row_stride / px));
        glTexImage2D(GL_TEXTURE_2D, 0, internal, (GLsizei)w, (GLsizei)h, 0, format, type, first);
        glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
        return;
    }
    for (size_t y = 0; y < h; y++)
        memcpy(stage + y * w * px, (const unsigned char *)psi_row(v, y0 + y, z) + x0 * px,
               w * px);
    glTexImage2D(GL_TEXTURE_2D, 0, internal, (GLsizei)w, (GLsizei)h, 0, format, type, stage);
}

/* ---- the passes --------------------------------------------------------- */

typedef struct gl_run {
    const psi_job *job;
    psi_hist_params *p;
    const psi_gl_plan *plan;
    gl_cache *c;
    bool depth;
    size_t npasses;    /* queries per channel per tile */
    uint64_t *acc;     /* channels x npasses summed query results */
    size_t pool;       /* query names a run may use, <= c->nqueries */
    size_t in_flight;  /* names begun and not yet read back */
} gl_run;

/* Reads back every query in flight, adding each result to acc[its pass]. */
static int queries_collect(gl_run *r, uint64_t *acc)
{
    gl_cache *c = r->c;
    for (size_t i = 0; i < r->in_flight; i++) {
        GLuint64 n = 0;
        glGetQueryObjectui64v(c->queries[i], GL_QUERY_RESULT, &n);
        acc[c->query_pass[i]] += (uint64_t)n;
    }
    r->in_flight = 0;
    GLenum err = glGetError();
    if (err != GL_NO_ERROR)
        return psi_fail(PIXSUM_ERR_GL, "%s: OpenGL error %s in the %s passes",
                        r->depth ? "gl.depth" : "gl.perbin", psi_gl_error_name(err),
                        r->depth ? "depth/plane" : "per-bin");
    return PIXSUM_OK;
}

/* Begins the occlusion query that counts pass `pass` into acc[pass]; reads
 * the pool back first when every name is in flight. */
static int query_begin(gl_run *r, uint64_t *acc, size_t pass)
{
    if (r->in_flight == r->pool) {
        int st = queries_collect(r, acc);
        if (st != PIXSUM_OK)
            return st;
    }
    r->c->query_pass[r->in_flight] = pass;
    glBeginQuery(GL_SAMPLES_PASSED, r->c->queries[r->in_flight++]);
    return PIXSUM_OK;
}

static void set_keys(GLuint prog, const psi_gl_plan *plan)
{
    glUniform1ui(glGetUniformLocation(prog, "k_min"), plan->kmin);
    glUniform1ui(glGetUniformLocation(prog, "k_max"), plan->kmax);
}

/* gl.perbin pass j: the bins first, then below, above and (f32) NaN; sets the
 * key range [a, b) or *nan. Returns false for a pass no key can fall in (not
 * drawn, its count stays 0). */
static bool perbin_pass(const psi_gl_plan *plan, size_t j, uint64_t *a, uint64_t *b, int *nan)
{
    *nan = 0;
    if (j < plan->bins)
        *a = plan->edges[j], *b = plan->edges[j + 1];
    else if (j == plan->bins)
        *a = plan->kmin, *b = plan->edges[0];
    else if (j == plan->bins + 1)
        *a = plan->edges[plan->bins], *b = (uint64_t)plan->kmax + 1;
    else
        *a = *b = 0, *nan = 1;
    return *nan || *a < *b;
}

/* Counts one channel of the uploaded tile (w x h) into r->acc[ch]. */
static int count_tile_channel(gl_run *r, size_t ch, int w, int h, bool use_mask)
{
    gl_cache *c = r->c;
    const psi_gl_plan *plan = r->plan;
    uint64_t *acc = r->acc + ch * r->npasses;
    int st = PIXSUM_OK;
    GLuint prog = r->depth ? c->depth_prog[plan->kind] : c->perbin_prog[plan->kind];
    glUseProgram(prog);
    glUniform1i(glGetUniformLocation(prog, "use_mask"), use_mask);
    glUniform1i(glGetUniformLocation(prog, "chan"), (GLint)ch);
    set_keys(prog, plan);
    glViewport(0, 0, w, h);
    glScissor(0, 0, w, h);
    if (r->depth) {
        glUniform1ui(glGetUniformLocation(prog, "k_lo"), (GLuint)plan->edges[0]);
        glUniform1ui(glGetUniformLocation(prog, "k_hi"),
                     (GLuint)(plan->edges[plan->bins] > plan->kmax ? (uint64_t)plan->kmax + 1
                                                                  : plan->edges[plan->bins]));
        GLint plane_loc = glGetUniformLocation(c->plane_prog, "plane");
        for (int sg = 0; sg < plan->nseg && st == PIXSUM_OK; sg++) {
            const psi_gl_segment *seg = &plan->seg[sg];
            /* 1. the image as depths (masked pixels keep the cleared 1.0) */
            glUseProgram(prog);
            glUniform1ui(glGetUniformLocation(prog, "k_a"), seg->k_a);
            glUniform1ui(glGetUniformLocation(prog, "k_b"), seg->k_b);
            glUniform1f(glGetUniformLocation(prog, "L"), seg->L);
            glUniform1f(glGetUniformLocation(prog, "S"), seg->S);
            glClearDepth(1.0);
            glClear(GL_DEPTH_BUFFER_BIT);
            glEnable(GL_DEPTH_TEST);
            glDepthFunc(GL_ALWAYS);
            glDepthMask(GL_TRUE);
            glDrawArrays(GL_TRIANGLES, 0, 3);
            /* 2. planes from back to front, each counting the depths below it */
            glUseProgram(c->plane_prog);
            glDepthFunc(GL_GREATER);
            glDepthMask(GL_FALSE);
            for (size_t j = seg->first_pass; j < seg->first_pass + seg->npasses; j++) {
                if ((st = query_begin(r, acc, j)) != PIXSUM_OK)
                    break;
                glUniform1f(plane_loc, plan->pass_depth[j]);
                glDrawArrays(GL_TRIANGLES, 0, 3);
                glEndQuery(GL_SAMPLES_PASSED);
            }
            glDepthMask(GL_TRUE);
            glDisable(GL_DEPTH_TEST);
        }
    } else {
        GLint la = glGetUniformLocation(prog, "a"), lb = glGetUniformLocation(prog, "b"),
              ln = glGetUniformLocation(prog, "want_nan");
        glDisable(GL_DEPTH_TEST);
        for (size_t j = 0; j < r->npasses; j++) {
            uint64_t a, b;
            int nan;
            if (!perbin_pass(plan, j, &a, &b, &nan))
                continue;
            if ((st = query_begin(r, acc, j)) != PIXSUM_OK)
                break;
            glUniform1ui(la, (GLuint)a);
            glUniform1ui(lb, (GLuint)b); /* <= kmax + 1 <= 0xFF800001 */
            glUniform1i(ln, nan);
            glDrawArrays(GL_TRIANGLES, 0, 3);
            glEndQuery(GL_SAMPLES_PASSED);
        }
    }
    glUseProgram(0);
    if (st != PIXSUM_OK)
        return st;
    return queries_collect(r, acc);
}

/* Tile edge: the GL limits, 2048, the query counter width and PIXSUM_GL_TILE. */
static size_t tile_edge(const psi_gl_limits *l)
{
    long t = GL_TILE_MAX;
    long lim[4] = {l->max_texture_size, l->max_renderbuffer_size, l->max_viewport[0],
                   l->max_viewport[1]};
    for (int i = 0; i < 4; i++)
        if (lim[i] > 0 && lim[i] < t)
            t = lim[i];
    /* one query counts at most t*t samples: keep that below 2^bits */
    while (l->query_counter_bits < 63 && t > 1 &&
           (unsigned long long)t * (unsigned long long)t >= (1ull << l->query_counter_bits))
        t /= 2;
    return (size_t)env_cap("PIXSUM_GL_TILE", t);
}

static int build_programs(gl_cache *c, psi_gl_kind kind, bool depth)
{
    int st = PIXSUM_OK;
    if (depth && !c->depth_prog[kind]) {
        const char *parts[] = {common_src, fetch_src[kind], depth_src};
        if (!(c->depth_prog[kind] = build_program(c, parts, 3, &st)))
            return st;
    }
    if (!depth && !c->perbin_prog[kind]) {
        const char *parts[] = {common_src, fetch_src[kind], perbin_src};
        if (!(c->perbin_prog[kind] = build_program(c, parts, 3, &st)))
            return st;
    }
    if (depth && !c->plane_prog) {
        const char *parts[] = {plane_src};
        if (!(c->plane_prog = build_program(c, parts, 1, &st)))
            return st;
    }
    return PIXSUM_OK;
}

/* Runs every tile of every slice (context current). */
static int run_tiles(gl_run *r, const psi_gl_limits *lim)
{
    const pixsum_view *in = &r->job->in;
    const pixsum_view *mask = r->p->mask.data ? &r->p->mask : NULL;
    gl_cache *c = r->c;
    size_t edge = tile_edge(lim);
    size_t tw = in->width < edge ? in->width : edge, th = in->height < edge ? in->height : edge;
    int st = ensure_fbo(c, (int)tw, (int)th);
    if (st != PIXSUM_OK)
        return st;
    size_t px = pixsum_type_size(in->type) * in->channels;
    unsigned char *stage = NULL; /* only for rows GL cannot read in place */
    if (!in_place(in) || (mask && !in_place(mask))) {
        stage = malloc(tw * th * px);
        if (!stage)
            return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate a %zux%zu staging tile", tw,
                            th);
    }
    GLint internal;
    GLenum format, type;
    texture_format(in->type, in->channels, &internal, &format, &type);
    glBindVertexArray(c->vao);
    glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_FALSE);
    glEnable(GL_SCISSOR_TEST);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    for (size_t z = 0; z < in->depth && st == PIXSUM_OK; z++)
        for (size_t y0 = 0; y0 < in->height && st == PIXSUM_OK; y0 += th)
            for (size_t x0 = 0; x0 < in->width && st == PIXSUM_OK; x0 += tw) {
                size_t w = in->width - x0 < tw ? in->width - x0 : tw;
                size_t h = in->height - y0 < th ? in->height - y0 : th;
                glActiveTexture(GL_TEXTURE0);
                glBindTexture(GL_TEXTURE_2D, c->tex_img);
                upload_tile(in, z, x0, y0, w, h, internal, format, type, stage);
                glActiveTexture(GL_TEXTURE1);
                glBindTexture(GL_TEXTURE_2D, c->tex_mask);
                if (mask)
                    upload_tile(mask, z, x0, y0, w, h, GL_R8UI, GL_RED_INTEGER,
                                GL_UNSIGNED_BYTE, stage);
                glActiveTexture(GL_TEXTURE0);
                GLenum err = glGetError();
                if (err != GL_NO_ERROR) {
                    st = psi_fail(PIXSUM_ERR_GL, "OpenGL error %s uploading a %zux%zu tile",
                                  psi_gl_error_name(err), w, h);
                    break;
                }
                for (size_t ch = 0; ch < in->channels && st == PIXSUM_OK; ch++)
                    st = count_tile_channel(r, ch, (int)w, (int)h, mask != NULL);
            }
    glDisable(GL_SCISSOR_TEST);
    glBindVertexArray(0);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
    glBindTexture(GL_TEXTURE_2D, 0);
    free(stage);
    return st;
}

/* Turns the summed query results into the histogram (p's outputs). */
static void finish(const gl_run *r)
{
    psi_hist_params *p = r->p;
    const psi_gl_plan *plan = r->plan;
    size_t bins = plan->bins;
    for (size_t ch = 0; ch < r->job->in.channels; ch++) {
        const uint64_t *acc = r->acc + ch * r->npasses;
        uint64_t *h = p->counts + ch * bins;
        if (!r->depth) {
            memcpy(h, acc, bins * sizeof *h);
            p->below[ch] += acc[bins];
            p->above[ch] += acc[bins + 1];
            if (plan->kind == PSI_GL_KIND_F32)
                p->nan[ch] += acc[bins + 2];
            continue;
        }
        uint64_t c_in = acc[plan->pass_inrange], c_below = acc[plan->pass_below],
                 c_above = acc[plan->pass_above];
        if (plan->pass_nan != SIZE_MAX)
            p->nan[ch] += acc[plan->pass_nan] - c_above;
        p->above[ch] += c_above - c_below;
        p->below[ch] += c_below - c_in;
        /* in-range samples of each segment and how many lie in the ones before */
        uint64_t c_part = plan->pass_part != SIZE_MAX ? acc[plan->pass_part] : c_in;
        uint64_t base[2] = {0, c_part}, count[2] = {c_part, c_in - c_part};
        /* cumulative H_{k-1} = in-range samples below edge k, from the plane of
         * edge k (S < 0: it counts those at or above the edge); H_{bins-1} = c_in */
        uint64_t upper = c_in;
        for (size_t k = bins - 1; k >= 1; k--) {
            long pass = plan->edge_pass[k];
            uint64_t cum;
            if (pass == PSI_GL_EDGE_NONE) {
                cum = 0;
            } else if (pass == PSI_GL_EDGE_ALL) {
                cum = c_in;
            } else if (pass == PSI_GL_EDGE_SPLIT) {
                cum = c_part;
            } else {
                int sg = plan->nseg > 1 && (size_t)pass >= plan->seg[1].first_pass;
                uint64_t got = acc[pass];
                cum = base[sg] + (plan->seg[sg].S < 0.0f ? count[sg] - got : got);
            }
            h[k] = upper - cum;
            upper = cum;
        }
        h[0] = upper;
    }
}

static int gl_hist_run(const psi_job *job, bool depth)
{
    psi_hist_params *p = (psi_hist_params *)job->extra;
    psi_gl_plan plan;
    int st = psi_gl_plan_make(p, job->in.type, depth, &plan);
    if (st != PIXSUM_OK)
        return st;
    gl_run r;
    memset(&r, 0, sizeof r);
    r.job = job;
    r.p = p;
    r.plan = &plan;
    r.depth = depth;
    size_t extra = plan.kind == PSI_GL_KIND_F32 ? 3 : 2; /* below, above (, NaN) */
    r.npasses = depth ? plan.npasses : plan.bins + extra;
    r.acc = calloc(job->in.channels * r.npasses, sizeof *r.acc);
    if (!r.acc) {
        psi_gl_plan_free(&plan);
        return psi_fail(PIXSUM_ERR_NO_MEMORY, "cannot allocate %zu query results", r.npasses);
    }
    const psi_gl_limits *lim;
    void **slot;
    st = psi_gl_acquire(&lim, &slot);
    if (st == PIXSUM_OK) {
        while (glGetError() != GL_NO_ERROR) { /* errors left by someone else */
        }
        st = cache_get(slot, &r.c);
        if (st == PIXSUM_OK)
            st = build_programs(r.c, plan.kind, depth);
        r.pool = query_pool();
        if (r.pool > r.npasses)
            r.pool = r.npasses;
        if (st == PIXSUM_OK)
            st = ensure_queries(r.c, r.pool);
        if (st == PIXSUM_OK)
            st = run_tiles(&r, lim);
        psi_gl_release();
    }
    if (st == PIXSUM_OK)
        finish(&r);
    free(r.acc);
    psi_gl_plan_free(&plan);
    return st;
}

static int run_depth(const psi_job *job)
{
    return gl_hist_run(job, true);
}

static int run_perbin(const psi_job *job)
{
    return gl_hist_run(job, false);
}

/* What both methods take: u8 u16 i16 f32, up to PSI_GL_MAX_BINS bins. */
static bool supports_common(const psi_job *job, bool depth)
{
    const psi_hist_params *p = job->extra;
    if (!psi_gl_type_supported(job->in.type)) {
        psi_fail(PIXSUM_ERR_UNSUPPORTED, "the GL methods read u8, u16, i16 and f32 images");
        return false;
    }
    if (p->b.bins > PSI_GL_MAX_BINS) {
        psi_fail(PIXSUM_ERR_UNSUPPORTED,
                 "the GL methods take at most %zu bins (one pass per bin), %zu asked",
                 PSI_GL_MAX_BINS, (size_t)p->b.bins);
        return false;
    }
    if (depth && job->in.type == PIXSUM_F32) { /* the depth-precision check */
        psi_gl_plan plan;
        if (psi_gl_plan_make(p, job->in.type, true, &plan) != PIXSUM_OK)
            return false; /* detail set by the plan */
        psi_gl_plan_free(&plan);
    }
    return true;
}

static bool supports_depth(const psi_job *job)
{
    return supports_common(job, true);
}

static bool supports_perbin(const psi_job *job)
{
    return supports_common(job, false);
}

const psi_method psi_methods_gl[] = {
    {"gl.depth", PIXSUM_BACKEND_GL, PIXSUM_OP_HISTOGRAM,
     "OpenGL: values as depths, one plane per bin with occlusion queries giving the "
     "cumulative histogram (paper 002)",
     0, psi_gl_available, supports_depth, run_depth},
    {"gl.perbin", PIXSUM_BACKEND_GL, PIXSUM_OP_HISTOGRAM,
     "OpenGL: one pass per bin discarding other samples, counted by an occlusion query "
     "(Green 2005, compared in paper 002)",
     0, psi_gl_available, supports_perbin, run_perbin},
    {NULL, 0, 0, NULL, 0, NULL, NULL, NULL},
};
