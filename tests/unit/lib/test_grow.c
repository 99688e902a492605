/* Tests of lib/grow: ALLOC_GROW's growth, the contents kept, a count whose
 * bytes overflow refused, and the old array kept when it fails. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "lib/grow.h"

/* Under the address sanitizer a realloc that cannot be met returns NULL,
 * as libc's does, instead of stopping the test. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1";
}

static void test_grows_and_keeps(void **state)
{
	(void)state;
	int *v = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 1000; i++) {
		assert_int_equal(ALLOC_GROW(v, n + 1, cap), 0);
		assert_true(cap >= n + 1);
		v[n++] = i;
	}
	for (int i = 0; i < 1000; i++)
		assert_int_equal(v[i], i);
	/* room already there: nothing moves */
	int *before = v;
	size_t cap_before = cap;
	assert_int_equal(ALLOC_GROW(v, cap, cap), 0);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, cap_before);
	free(v);
}

static void test_growth_policy(void **state)
{
	(void)state;
	assert_int_equal(grow_nr(0, 1), 16);
	assert_int_equal(grow_nr(16, 17), 32);
	assert_int_equal(grow_nr(16, 100), 100); /* more asked than doubling gives */
	assert_int_equal(grow_nr(SIZE_MAX / 2 + 1, SIZE_MAX), SIZE_MAX);

	/* one jump straight to what is asked */
	char *b = NULL;
	size_t cap = 0;
	assert_int_equal(ALLOC_GROW(b, 5000, cap), 0);
	assert_int_equal(cap, 5000);
	free(b);
}

static void test_overflow_refused(void **state)
{
	(void)state;
	int64_t *v = NULL;
	size_t cap = 0;

	assert_int_equal(ALLOC_GROW(v, 4, cap), 0);
	v[3] = 42;
	int64_t *before = v;
	size_t cap_before = cap;
	/* SIZE_MAX / 4 elements of 8 bytes: more bytes than a size_t holds */
	assert_int_equal(ALLOC_GROW(v, SIZE_MAX / 4, cap), -1);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, cap_before);
	assert_int_equal(v[3], 42);
	free(v);
}

static void test_failure_keeps_old(void **state)
{
	(void)state;
	char *v = NULL;
	size_t cap = 0;

	assert_int_equal(ALLOC_GROW(v, 3, cap), 0);
	v[0] = 'a';
	v[1] = 'b';
	v[2] = 'c';
	char *before = v;
	size_t cap_before = cap;
	/* fits a size_t but no allocator gives it: realloc fails */
	assert_int_equal(ALLOC_GROW(v, SIZE_MAX - 16, cap), -1);
	assert_ptr_equal(v, before);
	assert_int_equal(cap, cap_before);
	assert_int_equal(v[0], 'a');
	assert_int_equal(v[2], 'c');
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_grows_and_keeps),
	    cmocka_unit_test(test_growth_policy),
	    cmocka_unit_test(test_overflow_refused),
	    cmocka_unit_test(test_failure_keeps_old),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
