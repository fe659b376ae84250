/*
 * box_filter.c - the public box filter entry points (pixsum.h section 9):
 * border names, the output shape and default type, and the one place where a
 * box filter request is validated (views, window, border value, type pair,
 * overflow, aliasing) and resolved into the plan a method runs
 * (src/cpu/box_stream.h), before the registry picks the method. The CUDA
 * entry pixsum_cuda_box_filter() validates through the same function
 * (psi_box_filter_prepare(), src/box_filter.h). A view of depth N is a
 * batch of N independent images: slice 0 validates the request for all of
 * them (psi_box_filter_prepare_batch(), src/box_batch.h, which the CUDA entry
 * shares), and the images are shared out over the context's threads by
 * psi_batch_run() (src/batch.c), each filtered exactly as a single image.
 */
#include "box_batch.h"

#include <math.h>
#include <string.h>

/* Largest window side: the row buffers hold W + kw - 1 columns. */
#define BOX_MAX_SIDE ((size_t)1 << 20)

typedef unsigned __int128 u128;

static const char *const border_names[PIXSUM_BORDER_COUNT] = {
    "reflect101", "reflect", "replicate", "constant", "shrink", "valid"};

const char *pixsum_border_name(pixsum_border border)
{
    return (unsigned)border < PIXSUM_BORDER_COUNT ? border_names[border] : NULL;
}

int pixsum_border_from_name(const char *name, pixsum_border *border)
{
    psi_clear_error();
    if (!name || !border)
        return psi_fail(PIXSUM_ERR_NULL, "border name or result is NULL");
    static const struct {
        const char *name;
        pixsum_border b;
    } aliases[] = {{"reflect_101", PIXSUM_BORDER_REFLECT101},
                   {"default", PIXSUM_BORDER_REFLECT101},
                   {"edge", PIXSUM_BORDER_REPLICATE},
                   {"clamp", PIXSUM_BORDER_REPLICATE}};
    for (int i = 0; i < PIXSUM_BORDER_COUNT; i++)
        if (strcmp(name, border_names[i]) == 0) {
            *border = (pixsum_border)i;
            return PIXSUM_OK;
        }
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (strcmp(name, aliases[i].name) == 0) {
            *border = aliases[i].b;
            return PIXSUM_OK;
        }
    return psi_fail(PIXSUM_ERR_INVALID_ARG,
                    "unknown border '%s' (reflect101, reflect, replicate, constant, shrink, "
                    "valid)", name);
}

static int check_spec(const pixsum_box_filter_spec *spec)
{
    if (!spec)
        return psi_fail(PIXSUM_ERR_NULL, "spec is NULL");
    if (spec->kw == 0 || spec->kh == 0)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "window %zux%zu: sides must be >= 1", spec->kw,
                        spec->kh);
    if (spec->kw > BOX_MAX_SIDE || spec->kh > BOX_MAX_SIDE)
        return psi_fail(PIXSUM_ERR_TOO_LARGE, "window %zux%zu: sides are at most %zu",
                        spec->kw, spec->kh, BOX_MAX_SIDE);
    if ((unsigned)spec->stat > PIXSUM_BOX_STD)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown box statistic %d", (int)spec->stat);
    if ((unsigned)spec->border >= PIXSUM_BORDER_COUNT)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "unknown border %d", (int)spec->border);
    return PIXSUM_OK;
}

int pixsum_box_filter_shape(const pixsum_box_filter_spec *spec, size_t width, size_t height,
                            size_t *out_width, size_t *out_height)
{
    psi_clear_error();
    int st = check_spec(spec);
    if (st != PIXSUM_OK)
        return st;
    if (!out_width || !out_height)
        return psi_fail(PIXSUM_ERR_NULL, "out_width or out_height is NULL");
    if (spec->border != PIXSUM_BORDER_VALID) {
        *out_width = width;
        *out_height = height;
        return PIXSUM_OK;
    }
    if (spec->kw > width || spec->kh > height)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE,
                        "a %zux%zu window does not fit a %zux%zu image (border valid)",
                        spec->kw, spec->kh, width, height);
    *out_width = width - spec->kw + 1;
    *out_height = height - spec->kh + 1;
    return PIXSUM_OK;
}

static bool box_input_type(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: case PIXSUM_U16: case PIXSUM_I16: case PIXSUM_I32: case PIXSUM_U32:
    case PIXSUM_F32: case PIXSUM_F64:
        return true;
    default:
        return false;
    }
}

static bool is_signed_int(pixsum_type t)
{
    return t == PIXSUM_I16 || t == PIXSUM_I32;
}

pixsum_type pixsum_box_filter_type(pixsum_type in, const pixsum_box_filter_spec *spec)
{
    if (!spec || !box_input_type(in) || spec->kw == 0 || spec->kh == 0 ||
        spec->kw > BOX_MAX_SIDE || spec->kh > BOX_MAX_SIDE)
        return PIXSUM_TYPE_NONE;
    switch (spec->stat) {
    case PIXSUM_BOX_SUM: {
        if (!psi_type_is_int(in))
            return PIXSUM_F64;
        u128 worst = (u128)spec->kw * spec->kh * psi_type_max_magnitude(in);
        if (is_signed_int(in))
            return worst <= INT32_MAX ? PIXSUM_I32 : worst <= INT64_MAX ? PIXSUM_I64
                                                                         : PIXSUM_TYPE_NONE;
        return worst <= UINT32_MAX ? PIXSUM_U32 : worst <= UINT64_MAX ? PIXSUM_U64
                                                                       : PIXSUM_TYPE_NONE;
    }
    case PIXSUM_BOX_MEAN:
        return in == PIXSUM_U8 || in == PIXSUM_U16 || in == PIXSUM_F32 ? in : PIXSUM_F64;
    case PIXSUM_BOX_VAR:
    case PIXSUM_BOX_STD:
        return in == PIXSUM_F32 ? PIXSUM_F32 : PIXSUM_F64;
    default:
        return PIXSUM_TYPE_NONE;
    }
}

/* Checks the output type against the statistic and the worst window sum. */
static int check_out_type(pixsum_type in, pixsum_type out, pixsum_box_stat stat, u128 worst)
{
    bool fout = out == PIXSUM_F32 || out == PIXSUM_F64;
    const char *sn = pixsum_type_name(in), *on = pixsum_type_name(out);
    switch (stat) {
    case PIXSUM_BOX_SUM:
        if (fout)
            return PIXSUM_OK;
        if (!psi_type_is_int(in) ||
            (out != PIXSUM_U32 && out != PIXSUM_I32 && out != PIXSUM_U64 && out != PIXSUM_I64))
            return psi_fail(PIXSUM_ERR_BAD_TYPE, "box sums of %s write u32 u64 (unsigned "
                            "inputs) i32 i64 f32 f64, not %s", sn, on);
        if (is_signed_int(in) && (out == PIXSUM_U32 || out == PIXSUM_U64))
            return psi_fail(PIXSUM_ERR_BAD_TYPE, "box sums of signed %s cannot be %s", sn, on);
        {
            u128 cap = out == PIXSUM_U32 ? UINT32_MAX : out == PIXSUM_I32 ? INT32_MAX
                       : out == PIXSUM_U64 ? UINT64_MAX : INT64_MAX;
            if (worst > cap)
                return psi_fail(PIXSUM_ERR_OVERFLOW, "%s box sums can overflow %s: a window "
                                "sum can reach about %.3g", sn, on, (double)worst);
        }
        return PIXSUM_OK;
    case PIXSUM_BOX_MEAN:
        if (fout || (out == in && (in == PIXSUM_U8 || in == PIXSUM_U16)))
            return PIXSUM_OK;
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "box means of %s write %sf32 or f64, not %s", sn,
                        in == PIXSUM_U8 ? "u8, " : in == PIXSUM_U16 ? "u16, " : "", on);
    default:
        if (fout)
            return PIXSUM_OK;
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "box variances write f32 or f64, not %s", on);
    }
}

/* Integer constant border value of integer input type t, or an error. */
static int check_border_value(pixsum_type t, double v, uint64_t *bits)
{
    if (!isfinite(v))
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "the constant border value is not finite");
    *bits = 0;
    if (!psi_type_is_int(t))
        return PIXSUM_OK;
    double lo = is_signed_int(t) ? -(double)psi_type_max_magnitude(t) : 0;
    double hi = is_signed_int(t) ? (double)psi_type_max_magnitude(t) - 1
                                 : (double)psi_type_max_magnitude(t);
    if (v != floor(v) || v < lo || v > hi)
        return psi_fail(PIXSUM_ERR_INVALID_ARG, "the constant border value %g is not a %s "
                        "value", v, pixsum_type_name(t));
    *bits = (uint64_t)(int64_t)v;
    return PIXSUM_OK;
}

int psi_box_input_plan(const pixsum_view *in, const pixsum_box_filter_spec *spec,
                       size_t *ow, size_t *oh, psi_box_plan *plan_out)
{
    if (!in || !spec)
        return psi_fail(PIXSUM_ERR_NULL, "in or spec is NULL");
    int st = check_spec(spec);
    if (st != PIXSUM_OK)
        return st;
    if ((st = pixsum_view_check(in)) != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if (in->depth != 1) /* reached by the local operations, which take one image */
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "one 2-D image (depth 1) is taken here, not %zu "
                        "slices (a batch of images: pixsum_box_filter())",
                        in->depth);
    if (!box_input_type(in->type))
        return psi_fail(PIXSUM_ERR_BAD_TYPE, "box filters take u8 u16 i16 i32 u32 f32 f64 "
                        "images, not %s", pixsum_type_name(in->type));
    if ((st = pixsum_box_filter_shape(spec, in->width, in->height, ow, oh)) != PIXSUM_OK)
        return st;
    psi_box_plan plan;
    memset(&plan, 0, sizeof plan);
    plan.spec = *spec;
    if (spec->border == PIXSUM_BORDER_CONSTANT &&
        (st = check_border_value(in->type, spec->border_value, &plan.cval_int)) != PIXSUM_OK)
        return st;
    plan.ax = spec->kw / 2;
    plan.ay = spec->kh / 2;
    plan.n = spec->kw * spec->kh;
    plan.squares = spec->stat == PIXSUM_BOX_VAR || spec->stat == PIXSUM_BOX_STD;
    plan.is_signed = is_signed_int(in->type);
    u128 worst = 0;
    if (psi_type_is_int(in->type)) {
        uint64_t mag = psi_type_max_magnitude(in->type);
        worst = (u128)plan.n * mag;
        u128 cap32 = plan.is_signed ? INT32_MAX : UINT32_MAX;
        u128 cap64 = plan.is_signed ? INT64_MAX : UINT64_MAX;
        plan.acc = worst <= cap32 ? PSI_BOX_ACC_U32
                   : worst <= cap64 ? PSI_BOX_ACC_U64 : PSI_BOX_ACC_F64;
        if (plan.squares && (u128)plan.n * mag * mag > UINT64_MAX)
            plan.acc = PSI_BOX_ACC_F64; /* sums of squares beyond 64 bits */
    } else {
        plan.acc = PSI_BOX_ACC_F64;
    }
    *plan_out = plan;
    return PIXSUM_OK;
}

int psi_box_filter_prepare(const pixsum_view *in, const pixsum_box_filter_spec *spec,
                           const pixsum_view *out, psi_box_plan *plan_out)
{
    if (!in || !out || !spec)
        return psi_fail(PIXSUM_ERR_NULL, "in, spec or out is NULL");
    int st = check_spec(spec);
    if (st != PIXSUM_OK)
        return st;
    if ((st = pixsum_view_check(in)) != PIXSUM_OK)
        return psi_fail(st, "input: %s", pixsum_last_error());
    if ((st = pixsum_view_check(out)) != PIXSUM_OK)
        return psi_fail(st, "output: %s", pixsum_last_error());
    if (in->depth != 1 || out->depth != 1)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "one image of a box filter is a 2-D view "
                        "(depth 1; a view of depth N is a batch of N images)");
    size_t ow, oh;
    psi_box_plan plan;
    if ((st = psi_box_input_plan(in, spec, &ow, &oh, &plan)) != PIXSUM_OK)
        return st;
    if (out->width != ow || out->height != oh || out->channels != in->channels)
        return psi_fail(PIXSUM_ERR_BAD_SHAPE, "output is %zux%zu with %zu channels; the %s "
                        "box filter of this image needs %zux%zu with %zu", out->width,
                        out->height, out->channels, border_names[spec->border], ow, oh,
                        in->channels);
    u128 worst = psi_type_is_int(in->type)
                     ? (u128)plan.n * psi_type_max_magnitude(in->type) : 0;
    if ((st = check_out_type(in->type, out->type, spec->stat, worst)) != PIXSUM_OK)
        return st;
    if (psi_views_overlap(in, out))
        return psi_fail(PIXSUM_ERR_ALIASING, "the output overlaps the input");
    *plan_out = plan;
    return PIXSUM_OK;
}

bool psi_views_overlap(const pixsum_view *a, const pixsum_view *b)
{
    uintptr_t alo, ahi, blo, bhi;
    psi_view_extent(a, &alo, &ahi);
    psi_view_extent(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* Runs one validated 2-D box filter with the context's method. */
static int filter_one(pixsum_ctx *c, const pixsum_view *in, const pixsum_view *out,
                      const psi_box_plan *plan)
{
    psi_box_plan local_plan = *plan; /* a method may keep state in its job's plan */
    psi_job job;
    memset(&job, 0, sizeof job);
    job.op = PIXSUM_OP_BOX_FILTER;
    job.in = *in;
    job.out = *out;
    job.threads = psi_ctx_threads(c);
    job.ctx = c;
    job.extra = &local_plan;
    const psi_method *m;
    int st = psi_choose_method(&job, &m);
    if (st != PIXSUM_OK)
        return st;
    return m->run(&job);
}

static pixsum_view slice_of(const pixsum_view *v, size_t z)
{
    pixsum_view s;
    pixsum_view_roi3d(v, 0, 0, z, v->width, v->height, 1, &s);
    return s;
}

/* What every image of a box filter batch shares. */
typedef struct box_batch {
    const pixsum_view *in, *out;
    const psi_box_plan *plan;
} box_batch;

static int filter_image(pixsum_ctx *c, size_t z, void *user)
{
    const box_batch *b = user;
    pixsum_view in = slice_of(b->in, z), out = slice_of(b->out, z);
    return filter_one(c, &in, &out, b->plan);
}

int pixsum_box_filter(pixsum_ctx *ctx, const pixsum_view *in,
                      const pixsum_box_filter_spec *spec, const pixsum_view *out)
{
    psi_clear_error();
    /* the one rule for one image or a batch, shared with the CUDA entry */
    psi_box_plan plan;
    int st = psi_box_filter_prepare_batch(in, spec, out, &plan);
    if (st != PIXSUM_OK)
        return st;
    pixsum_ctx local = psi_default_ctx;
    pixsum_ctx *c = ctx ? ctx : &local;
    if (in->depth == 1) {
        st = filter_one(c, in, out, &plan);
    } else {
        box_batch b = {in, out, &plan};
        st = psi_batch_run(c, in->depth, filter_image, &b);
    }
    if (st == PIXSUM_OK)
        psi_clear_error();
    return st;
}
