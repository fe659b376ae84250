/*
 * test_core.c - the foundation's small pieces: version, pixel types and names,
 * views (packed and explicit strides, ROIs in 2-D and 3-D, bottom-up), the view
 * check, the method registry (ids, names, lookups, the serial methods), the
 * output-shape rule, and the type rules: pixsum_integral_check() agrees with an
 * exact 128-bit evaluation of the worst case, and pixsum_integral_type() picks
 * the narrowest documented type that cannot overflow.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "pixsum.h"
#include "testutil.h"

static void test_version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PIXSUM_VERSION_MAJOR, PIXSUM_VERSION_MINOR,
             PIXSUM_VERSION_PATCH);
    assert_string_equal(pixsum_version(), want);
    assert_int_equal(pixsum_version_number(), PIXSUM_VERSION_NUMBER);
}

static void test_types(void **state)
{
    (void)state;
    const struct {
        pixsum_type t;
        const char *name;
        size_t size;
    } all[] = {{PIXSUM_U8, "u8", 1},   {PIXSUM_U16, "u16", 2}, {PIXSUM_I16, "i16", 2},
               {PIXSUM_I32, "i32", 4}, {PIXSUM_U32, "u32", 4}, {PIXSUM_F32, "f32", 4},
               {PIXSUM_F64, "f64", 8}, {PIXSUM_U64, "u64", 8}, {PIXSUM_I64, "i64", 8}};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        assert_int_equal(pixsum_type_size(all[i].t), all[i].size);
        assert_string_equal(pixsum_type_name(all[i].t), all[i].name);
        assert_int_equal(pixsum_type_from_name(all[i].name), all[i].t);
    }
    assert_int_equal(pixsum_type_size(PIXSUM_TYPE_NONE), 0);
    assert_int_equal(pixsum_type_size((pixsum_type)PIXSUM_TYPE_COUNT), 0);
    assert_int_equal(pixsum_type_size((pixsum_type)-1), 0);
    assert_string_equal(pixsum_type_name(PIXSUM_TYPE_NONE), "none");
    assert_string_equal(pixsum_type_name((pixsum_type)77), "none");
    assert_int_equal(pixsum_type_from_name("U8"), PIXSUM_TYPE_NONE);
    assert_int_equal(pixsum_type_from_name(""), PIXSUM_TYPE_NONE);
    assert_int_equal(pixsum_type_from_name("none"), PIXSUM_TYPE_NONE);
    assert_int_equal(pixsum_type_from_name("u8 "), PIXSUM_TYPE_NONE);
}

static void test_views(void **state)
{
    (void)state;
    uint16_t buf[10 * 6 * 3];
    pixsum_view v = pixsum_view_2d(buf, PIXSUM_U16, 4, 6, 2, 0);
    assert_ptr_equal(v.data, buf);
    assert_int_equal(v.row_stride, 4 * 2 * 2);
    assert_int_equal(v.depth, 1);
    assert_int_equal(pixsum_view_check(&v), PIXSUM_OK);
    v = pixsum_view_2d(buf, PIXSUM_U16, 4, 6, 2, 20);
    assert_int_equal(v.row_stride, 20);
    pixsum_view v3 = pixsum_view_3d(buf, PIXSUM_U16, 3, 4, 5, 1, 0, 0);
    assert_int_equal(v3.row_stride, 6);
    assert_int_equal(v3.slice_stride, 24);
    v3 = pixsum_view_3d(buf, PIXSUM_U16, 3, 4, 5, 1, 8, 40);
    assert_int_equal(v3.row_stride, 8);
    assert_int_equal(v3.slice_stride, 40);
    assert_int_equal(pixsum_view_check(&v3), PIXSUM_OK);
    v3.slice_stride = 0 - v3.slice_stride; /* slices in reverse order */
    v3.data = (char *)buf + 4 * 40;
    assert_int_equal(pixsum_view_check(&v3), PIXSUM_OK);

    /* ROI addresses follow the documented layout, also for bottom-up views,
     * ROIs of ROIs and 3-D views. */
    tu_rng *r = tu_global_rng();
    for (int i = 0; i < 200; i++) {
        tu_layout l = tu_random_layout(r);
        size_t w = tu_dim(r, 20), h = tu_dim(r, 20), d = i % 2 ? tu_between(r, 2, 4) : 1;
        size_t ch = tu_between(r, 1, 4);
        tu_image img;
        assert_int_equal(tu_image_alloc(&img, PIXSUM_F32, w, h, d, ch, &l), 0);
        assert_int_equal(pixsum_view_check(&img.view), PIXSUM_OK);
        size_t x = tu_between(r, 0, w - 1), y = tu_between(r, 0, h - 1), z = tu_between(r, 0, d - 1);
        size_t rw = tu_between(r, 1, w - x), rh = tu_between(r, 1, h - y), rd = tu_between(r, 1, d - z);
        pixsum_view roi;
        assert_int_equal(pixsum_view_roi3d(&img.view, x, y, z, rw, rh, rd, &roi), PIXSUM_OK);
        assert_int_equal(roi.width, rw);
        assert_int_equal(roi.height, rh);
        assert_int_equal(roi.depth, rd);
        assert_int_equal(roi.channels, ch);
        assert_int_equal(roi.row_stride, img.view.row_stride);
        assert_int_equal(pixsum_view_check(&roi), PIXSUM_OK);
        for (size_t k = 0; k < rd; k++)
            for (size_t j = 0; j < rh; j++)
                for (size_t q = 0; q < rw; q++)
                    assert_ptr_equal(tu_elem(&roi, q, j, k, ch - 1),
                                     tu_elem(&img.view, x + q, y + j, z + k, ch - 1));
        if (d == 1) {
            pixsum_view roi2, inner;
            assert_int_equal(pixsum_view_roi(&img.view, x, y, rw, rh, &roi2), PIXSUM_OK);
            /* field by field: the struct has padding bytes */
            assert_ptr_equal(roi.data, roi2.data);
            assert_int_equal(roi.type, roi2.type);
            assert_true(roi.width == roi2.width && roi.height == roi2.height &&
                        roi.depth == roi2.depth && roi.channels == roi2.channels &&
                        roi.row_stride == roi2.row_stride &&
                        roi.slice_stride == roi2.slice_stride);
            assert_int_equal(pixsum_view_roi(&roi2, rw - 1, rh - 1, 1, 1, &inner), PIXSUM_OK);
            assert_ptr_equal(inner.data, tu_elem(&img.view, x + rw - 1, y + rh - 1, 0, 0));
        }
        tu_image_free(&img);
    }
}

static void test_registry(void **state)
{
    (void)state;
    size_t n = 0;
    const pixsum_method_info *m = pixsum_methods(&n);
    assert_non_null(m);
    assert_ptr_equal(pixsum_methods(NULL), m); /* static, never changes */
    assert_true(n >= 3);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(m[i].id, (int)i + 1);
        assert_non_null(m[i].name);
        assert_true(m[i].name[0] != '\0');
        assert_non_null(m[i].description);
        assert_true(m[i].description[0] != '\0');
        assert_true(m[i].backend >= PIXSUM_BACKEND_CPU && m[i].backend <= PIXSUM_BACKEND_MPI);
        assert_true(m[i].ops != 0 && (m[i].ops & ~0x7Fu) == 0); /* PIXSUM_OP_* bits */
        assert_true(m[i].available == 0 || m[i].available == 1);
        assert_string_not_equal(m[i].name, "auto");
        for (size_t k = 0; k < i; k++)
            if (strcmp(m[k].name, m[i].name) == 0)
                fail_msg("method name %s registered twice", m[i].name);
        assert_int_equal(pixsum_method_find(m[i].name), m[i].id);
        assert_ptr_equal(pixsum_method_get(m[i].id), &m[i]);
    }
    assert_null(pixsum_method_get(0));
    assert_null(pixsum_method_get(-1));
    assert_null(pixsum_method_get((int)n + 1));
    assert_int_equal(pixsum_method_find("auto"), 0);
    assert_int_equal(pixsum_method_find("serial"), -1);
    assert_int_equal(pixsum_method_find("serial.2wh "), -1);
    const unsigned serial_ops =
        PIXSUM_OP_INTEGRAL | PIXSUM_OP_INTEGRAL_SQ | PIXSUM_OP_INTEGRAL_3D;
    const char *serial[] = {"serial.2wh", "serial.3wh", "serial.dual"};
    for (int i = 0; i < 3; i++) {
        int id = pixsum_method_find(serial[i]);
        assert_true(id > 0);
        const pixsum_method_info *info = pixsum_method_get(id);
        assert_int_equal(info->backend, PIXSUM_BACKEND_CPU);
        assert_true((info->ops & serial_ops) == serial_ops);
        assert_int_equal(info->available, 1);
        assert_int_equal(pixsum_method_supports(id, PIXSUM_OP_INTEGRAL, PIXSUM_U8, PIXSUM_U32), 1);
        assert_int_equal(pixsum_method_supports(id, PIXSUM_OP_INTEGRAL, PIXSUM_U8, PIXSUM_TYPE_NONE),
                         1);
        assert_int_equal(pixsum_method_supports(id, PIXSUM_OP_INTEGRAL, PIXSUM_F64, PIXSUM_F32), 0);
        assert_int_equal(pixsum_method_supports(id, PIXSUM_OP_HISTOGRAM, PIXSUM_U8, PIXSUM_U32), 0);
    }
    assert_true(pixsum_method_get(pixsum_method_find("serial.2wh"))->ops & PIXSUM_OP_TILTED);
    assert_int_equal(pixsum_method_supports(-1, PIXSUM_OP_INTEGRAL, PIXSUM_U8, PIXSUM_U32), 0);
    assert_int_equal(pixsum_method_supports(9999, PIXSUM_OP_INTEGRAL, PIXSUM_U8, PIXSUM_U32), 0);
    for (size_t i = 0; i < n; i++)
        print_message("method %d %-14s backend %d ops 0x%02x available %d\n", m[i].id, m[i].name,
                      (int)m[i].backend, m[i].ops, m[i].available);
}

static void test_integral_shape(void **state)
{
    (void)state;
    uint8_t px[1];
    pixsum_view v2 = pixsum_view_2d(px, PIXSUM_U8, 7, 3, 1, 0);
    pixsum_view v3 = pixsum_view_3d(px, PIXSUM_U8, 7, 3, 4, 1, 0, 0);
    size_t w, h, d;
    pixsum_integral_shape(NULL, &v2, &w, &h, &d);
    assert_true(w == 7 && h == 3 && d == 1);
    pixsum_integral_shape(NULL, &v3, &w, &h, &d);
    assert_true(w == 7 && h == 3 && d == 4);
    pixsum_ctx *ctx = pixsum_ctx_new();
    assert_int_equal(pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1), PIXSUM_OK);
    pixsum_integral_shape(ctx, &v2, &w, &h, &d);
    assert_true(w == 8 && h == 4 && d == 1);
    pixsum_integral_shape(ctx, &v3, &w, &h, &d);
    assert_true(w == 8 && h == 4 && d == 5);
    pixsum_integral_shape(ctx, &v3, NULL, &h, NULL); /* NULL outputs allowed */
    assert_int_equal(h, 4);
    pixsum_ctx_free(ctx);
}

/* ---- type rules ---------------------------------------------------------- */

static const pixsum_type inputs[] = {PIXSUM_U8,  PIXSUM_U16, PIXSUM_I16, PIXSUM_I32,
                                     PIXSUM_U32, PIXSUM_F32, PIXSUM_F64};

static tu_u128 max_mag(pixsum_type t)
{
    switch (t) {
    case PIXSUM_U8: return 255;
    case PIXSUM_U16: return 65535;
    case PIXSUM_I16: return 32768;
    case PIXSUM_I32: return (tu_u128)1 << 31;
    case PIXSUM_U32: return UINT32_MAX;
    default: return 0;
    }
}

static tu_u128 limit_of(pixsum_type out)
{
    switch (out) {
    case PIXSUM_U32: return UINT32_MAX;
    case PIXSUM_U64: return UINT64_MAX;
    case PIXSUM_I64: return INT64_MAX;
    default: return 0;
    }
}

/* Does the worst case of count pixels fit? (exact, 128-bit) */
static int fits(pixsum_type in, pixsum_type out, uint64_t count, int squared)
{
    tu_u128 m = max_mag(in);
    if (squared)
        m *= m;
    return (tu_u128)count * m <= limit_of(out);
}

/* Counts around every boundary: floor(limit / m^k) and its neighbours, for
 * every input type and table type, plus powers of two and extremes. */
static size_t boundary_counts(uint64_t *c, size_t max)
{
    size_t n = 0;
    const pixsum_type outs[] = {PIXSUM_U32, PIXSUM_U64, PIXSUM_I64};
    for (size_t i = 0; i < 5; i++)
        for (size_t o = 0; o < 3; o++)
            for (int sq = 0; sq < 2; sq++) {
                tu_u128 m = max_mag(inputs[i]);
                if (sq)
                    m *= m;
                tu_u128 b = limit_of(outs[o]) / m;
                if (b > UINT64_MAX - 2)
                    continue;
                for (int k = -2; k <= 2; k++)
                    if (n < max && (tu_i128)b + k >= 1)
                        c[n++] = (uint64_t)((tu_i128)b + k);
            }
    for (int s = 0; s < 64 && n < max; s++)
        c[n++] = UINT64_C(1) << s;
    const uint64_t extremes[] = {1, 2, 3, UINT64_MAX, UINT64_MAX - 1, UINT32_MAX, 16843009,
                                 16843010, 4104u * 4104u, 4105u * 4105u};
    for (size_t i = 0; i < sizeof extremes / sizeof extremes[0] && n < max; i++)
        c[n++] = extremes[i];
    return n;
}

static void test_integral_check_is_exact(void **state)
{
    (void)state;
    uint64_t counts[400];
    size_t nc = boundary_counts(counts, 400);
    pixsum_type pin[32], pout[32];
    size_t checked = 0;
    for (int sq = 0; sq < 2; sq++) {
        size_t np = tu_supported_pairs(sq, pin, pout, 32);
        for (size_t p = 0; p < np; p++)
            for (size_t k = 0; k < nc; k++) {
                int st = pixsum_integral_check(pin[p], pout[p], (size_t)counts[k], sq);
                int is_int = pout[p] == PIXSUM_U32 || pout[p] == PIXSUM_U64 || pout[p] == PIXSUM_I64;
                int in_float = pin[p] == PIXSUM_F32 || pin[p] == PIXSUM_F64;
                int want_ok = !is_int || in_float || fits(pin[p], pout[p], counts[k], sq);
                if ((st == PIXSUM_OK) != want_ok)
                    fail_msg("check(%s -> %s, count %llu, squared %d) = %d, worst case %s",
                             pixsum_type_name(pin[p]), pixsum_type_name(pout[p]),
                             (unsigned long long)counts[k], sq, st, want_ok ? "fits" : "overflows");
                if (st != PIXSUM_OK) {
                    assert_int_equal(st, PIXSUM_ERR_OVERFLOW);
                    const char *d = pixsum_last_error();
                    assert_non_null(strstr(d, pixsum_type_name(pout[p])));
                    assert_non_null(strstr(d, "2^"));
                } else {
                    assert_string_equal(pixsum_last_error(), "");
                }
                checked++;
            }
    }
    print_message("%zu (pair, count) worst cases checked\n", checked);
    /* The classic boundaries, spelled out. */
    assert_int_equal(pixsum_integral_check(PIXSUM_U8, PIXSUM_U32, 16843009, 0), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_U8, PIXSUM_U32, 16843010, 0), PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_integral_check(PIXSUM_U16, PIXSUM_U32, 65537, 0), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_U16, PIXSUM_U32, 65538, 0), PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_integral_check(PIXSUM_U8, PIXSUM_U32, 66051, 1), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_U8, PIXSUM_U32, 66052, 1), PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_integral_check(PIXSUM_I32, PIXSUM_I64, UINT32_MAX, 0), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_I32, PIXSUM_I64, (size_t)1 << 32, 0),
                     PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_integral_check(PIXSUM_U32, PIXSUM_I64, (size_t)1 << 31, 0), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_U32, PIXSUM_I64, ((size_t)1 << 31) + 1, 0),
                     PIXSUM_ERR_OVERFLOW);
    assert_int_equal(pixsum_integral_check(PIXSUM_I16, PIXSUM_I64, ((size_t)1 << 48) - 1, 0),
                     PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_I16, PIXSUM_I64, (size_t)1 << 48, 0),
                     PIXSUM_ERR_OVERFLOW);
    /* Float tables are never refused (they round instead). */
    assert_int_equal(pixsum_integral_check(PIXSUM_U32, PIXSUM_F64, SIZE_MAX, 1), PIXSUM_OK);
    assert_int_equal(pixsum_integral_check(PIXSUM_U16, PIXSUM_F32, SIZE_MAX, 1), PIXSUM_OK);
}

static void test_integral_type_rule(void **state)
{
    (void)state;
    uint64_t counts[400];
    size_t nc = boundary_counts(counts, 400);
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++)
        for (int sq = 0; sq < 2; sq++)
            for (size_t k = 0; k < nc; k++) {
                pixsum_type in = inputs[i];
                uint64_t count = counts[k];
                pixsum_type t = pixsum_integral_type(in, (size_t)count, sq);
                pixsum_type want;
                if (in == PIXSUM_F32 || in == PIXSUM_F64)
                    want = PIXSUM_F64;
                else if (sq)
                    want = fits(in, PIXSUM_U64, count, 1) ? PIXSUM_U64 : PIXSUM_F64;
                else if (in == PIXSUM_I16 || in == PIXSUM_I32)
                    want = fits(in, PIXSUM_I64, count, 0) ? PIXSUM_I64 : PIXSUM_F64;
                else if (in != PIXSUM_U32 && fits(in, PIXSUM_U32, count, 0))
                    want = PIXSUM_U32;
                else
                    want = fits(in, PIXSUM_U64, count, 0) ? PIXSUM_U64 : PIXSUM_F64;
                if (t != want)
                    fail_msg("integral_type(%s, %llu, squared %d) = %s, the documented rule says %s",
                             pixsum_type_name(in), (unsigned long long)count, sq,
                             pixsum_type_name(t), pixsum_type_name(want));
                /* never a type that can overflow, and always a supported pair */
                if (pixsum_integral_check(in, t, (size_t)count, sq) != PIXSUM_OK)
                    fail_msg("integral_type(%s, %llu, squared %d) = %s can overflow: %s",
                             pixsum_type_name(in), (unsigned long long)count, sq,
                             pixsum_type_name(t), pixsum_last_error());
            }
    assert_int_equal(pixsum_integral_type(PIXSUM_U8, 16843009, 0), PIXSUM_U32);
    assert_int_equal(pixsum_integral_type(PIXSUM_U8, 16843010, 0), PIXSUM_U64);
    assert_int_equal(pixsum_integral_type(PIXSUM_TYPE_NONE, 5, 0), PIXSUM_TYPE_NONE);
    assert_int_equal(pixsum_integral_type(PIXSUM_U64, 5, 0), PIXSUM_TYPE_NONE);
    assert_int_equal(pixsum_integral_type((pixsum_type)99, 5, 1), PIXSUM_TYPE_NONE);
}

int main(void)
{
    tu_init("test_core");
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_types),
        cmocka_unit_test(test_views),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_integral_shape),
        cmocka_unit_test(test_integral_check_is_exact),
        cmocka_unit_test(test_integral_type_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
