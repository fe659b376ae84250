/*
 * test_scratch.c - the per-thread scratch buffers of src/scratch.c: a slot's
 * buffer is kept between calls and handed out zeroed, a busy slot or a
 * request above PSI_SCRATCH_MAX_BYTES gets memory of its own (freed when
 * given back), slots are independent, and threads have their own buffers,
 * freed when they exit (checked for leaks by the sanitizer builds).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <string.h>

#include "internal.h"

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

static void test_kept_and_zeroed(void **state)
{
    (void)state;
    unsigned char *a = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 1000);
    assert_non_null(a);
    assert_true(all_zero(a, 1000));
    memset(a, 0xAB, 1000);
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, a);
    unsigned char *b = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 800);
    assert_ptr_equal(a, b); /* kept */
    assert_true(all_zero(b, 800));
    /* busy: a second request on the slot gets memory of its own */
    unsigned char *c = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 800);
    assert_non_null(c);
    assert_ptr_not_equal(b, c);
    assert_true(all_zero(c, 800));
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, c);
    /* another slot is independent */
    unsigned char *d = psi_scratch_take(PSI_SCRATCH_HIST_TABLES, 800);
    assert_ptr_not_equal(b, d);
    psi_scratch_give(PSI_SCRATCH_HIST_TABLES, d);
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, b);
    /* growing past the kept size, and back */
    unsigned char *e = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 5000);
    assert_non_null(e);
    assert_true(all_zero(e, 5000));
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, e);
    assert_ptr_equal(psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 10), e);
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, e);
}

static void test_large_requests_not_kept(void **state)
{
    (void)state;
    size_t big = PSI_SCRATCH_MAX_BYTES + 1;
    unsigned char *kept = psi_scratch_take(PSI_SCRATCH_HIST_COUNTS, 64);
    psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, kept);
    unsigned char *a = psi_scratch_take(PSI_SCRATCH_HIST_COUNTS, big);
    assert_non_null(a);
    assert_ptr_not_equal(a, kept);
    assert_true(a[0] == 0 && a[big - 1] == 0);
    psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, a); /* freed */
    assert_ptr_equal(psi_scratch_take(PSI_SCRATCH_HIST_COUNTS, 64), kept);
    psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, kept);
    psi_scratch_give(PSI_SCRATCH_HIST_COUNTS, NULL); /* allowed */
}

static void *thread_body(void *arg)
{
    unsigned char **out = arg;
    for (int s = 0; s < PSI_SCRATCH_SLOTS; s++) {
        unsigned char *p = psi_scratch_take((psi_scratch_slot)s, 4096);
        if (!p || !all_zero(p, 4096))
            return NULL;
        memset(p, s + 1, 4096);
        psi_scratch_give((psi_scratch_slot)s, p);
        out[s] = p;
    }
    return out; /* the buffers stay with the thread until it exits */
}

static void test_threads_have_their_own(void **state)
{
    (void)state;
    unsigned char *mine = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 4096);
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, mine);
    unsigned char *theirs[4][PSI_SCRATCH_SLOTS];
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&t[i], NULL, thread_body, theirs[i]), 0);
    for (int i = 0; i < 4; i++) {
        void *r;
        assert_int_equal(pthread_join(t[i], &r), 0);
        assert_non_null(r);
    }
    /* this thread's buffer was not touched by theirs */
    unsigned char *again = psi_scratch_take(PSI_SCRATCH_HIST_WIDE, 4096);
    assert_ptr_equal(again, mine);
    assert_true(all_zero(again, 4096));
    psi_scratch_give(PSI_SCRATCH_HIST_WIDE, again);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kept_and_zeroed),
        cmocka_unit_test(test_large_requests_not_kept),
        cmocka_unit_test(test_threads_have_their_own),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
