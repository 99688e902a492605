/* Tests of lib/hashmap: both key kinds, replace and remove, growth through
 * many keys (checked against a plain array), NULL values, and iteration
 * with removal of the entry just visited. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hashmap.h"

static void test_int_basics(void **state)
{
	(void)state;
	struct hashmap *m = hashmap_create(HASHMAP_KEY_INT);
	int a = 1, b = 2;
	void *old = &a;
	assert_non_null(m);
	assert_int_equal(hashmap_count(m), 0);
	assert_null(hashmap_get_int(m, 5));
	assert_int_equal(hashmap_put_int(m, 5, &a, &old), 0);
	assert_null(old);
	assert_int_equal(hashmap_put_int(m, -5, &b, NULL), 0);
	assert_ptr_equal(hashmap_get_int(m, 5), &a);
	assert_ptr_equal(hashmap_get_int(m, -5), &b);
	assert_int_equal(hashmap_count(m), 2);

	assert_int_equal(hashmap_put_int(m, 5, &b, &old), 0); /* replace */
	assert_ptr_equal(old, &a);
	assert_ptr_equal(hashmap_get_int(m, 5), &b);
	assert_int_equal(hashmap_count(m), 2);

	assert_ptr_equal(hashmap_remove_int(m, 5), &b);
	assert_null(hashmap_remove_int(m, 5));
	assert_null(hashmap_get_int(m, 5));
	assert_int_equal(hashmap_count(m), 1);

	/* NULL is a value, told apart from absence by find */
	void *v = &a;
	assert_int_equal(hashmap_put_int(m, INT64_MIN, NULL, NULL), 0);
	assert_true(hashmap_find_int(m, INT64_MIN, &v));
	assert_null(v);
	assert_false(hashmap_find_int(m, INT64_MAX, NULL));
	hashmap_destroy(m);
	hashmap_destroy(NULL);
}

static void test_str_basics(void **state)
{
	(void)state;
	struct hashmap *m = hashmap_create(HASHMAP_KEY_STR);
	int a = 1, b = 2;
	char key[16] = "alpha";
	assert_int_equal(hashmap_put_str(m, key, &a, NULL), 0);
	memcpy(key, "beta", 5); /* the map keeps its own copy */
	assert_ptr_equal(hashmap_get_str(m, "alpha"), &a);
	assert_null(hashmap_get_str(m, "beta"));
	assert_int_equal(hashmap_put_str(m, "", &b, NULL), 0);
	assert_ptr_equal(hashmap_get_str(m, ""), &b);
	assert_null(hashmap_get_str(m, "alph"));
	assert_ptr_equal(hashmap_remove_str(m, "alpha"), &a);
	assert_int_equal(hashmap_count(m), 1);
	hashmap_destroy(m);
}

#define N 5000

static void test_many_int(void **state)
{
	(void)state;
	struct hashmap *m = hashmap_create(HASHMAP_KEY_INT);
	static int vals[N];
	/* keys spread over high bits too, and a run of neighbours */
	for (int i = 0; i < N; i++) {
		int64_t k = i % 2 ? (int64_t)i << 40 : i;
		vals[i] = i;
		assert_int_equal(hashmap_put_int(m, k, &vals[i], NULL), 0);
	}
	assert_int_equal(hashmap_count(m), N);
	for (int i = 0; i < N; i++) {
		int64_t k = i % 2 ? (int64_t)i << 40 : i;
		int *p = hashmap_get_int(m, k);
		assert_non_null(p);
		assert_int_equal(*p, i);
	}
	/* remove every third, the rest stay */
	for (int i = 0; i < N; i += 3) {
		int64_t k = i % 2 ? (int64_t)i << 40 : i;
		assert_ptr_equal(hashmap_remove_int(m, k), &vals[i]);
	}
	for (int i = 0; i < N; i++) {
		int64_t k = i % 2 ? (int64_t)i << 40 : i;
		if (i % 3 == 0)
			assert_null(hashmap_get_int(m, k));
		else
			assert_ptr_equal(hashmap_get_int(m, k), &vals[i]);
	}
	assert_int_equal(hashmap_count(m), N - (N + 2) / 3);
	hashmap_destroy(m);
}

static void test_many_str_iterate(void **state)
{
	(void)state;
	struct hashmap *m = hashmap_create(HASHMAP_KEY_STR);
	static int seen[N];
	static int vals[N];
	char key[32];
	for (int i = 0; i < N; i++) {
		vals[i] = i;
		snprintf(key, sizeof key, "job-%d", i);
		assert_int_equal(hashmap_put_str(m, key, &vals[i], NULL), 0);
	}
	/* every entry once; remove the odd ones while iterating */
	struct hashmap_iter it;
	size_t visited = 0;
	hashmap_iter_init(&it, m);
	while (hashmap_iter_next(&it)) {
		int i = *(int *)it.value;
		snprintf(key, sizeof key, "job-%d", i);
		assert_string_equal(it.key_str, key);
		seen[i]++;
		visited++;
		if (i % 2)
			hashmap_iter_remove(&it);
	}
	assert_int_equal(visited, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(seen[i], 1);
	assert_int_equal(hashmap_count(m), N / 2);

	/* a second pass sees only the even ones */
	visited = 0;
	hashmap_iter_init(&it, m);
	while (hashmap_iter_next(&it)) {
		assert_int_equal(*(int *)it.value % 2, 0);
		/* removing through the key works as well as through the iterator */
		snprintf(key, sizeof key, "%s", it.key_str);
		assert_non_null(hashmap_remove_str(m, key));
		visited++;
	}
	assert_int_equal(visited, N / 2);
	assert_int_equal(hashmap_count(m), 0);

	hashmap_iter_init(&it, m);
	assert_false(hashmap_iter_next(&it));
	hashmap_destroy(m);
}

static int freed[N];
static size_t n_freed;

static void count_free(void *value)
{
	n_freed++;
	if (value)
		freed[*(int *)value]++;
	free(value);
}

/* destroy_free hands every value held to the function once (NULL ones
 * too), and none that was removed before */
static void test_destroy_free(void **state)
{
	(void)state;
	struct hashmap *m = hashmap_create(HASHMAP_KEY_INT);
	for (int i = 0; i < N; i++) {
		int *v = malloc(sizeof *v);
		assert_non_null(v);
		*v = i;
		assert_int_equal(hashmap_put_int(m, i, v, NULL), 0);
	}
	assert_int_equal(hashmap_put_int(m, N, NULL, NULL), 0);
	free(hashmap_remove_int(m, 7));
	hashmap_destroy_free(m, count_free);
	assert_int_equal(n_freed, N);
	for (int i = 0; i < N; i++)
		assert_int_equal(freed[i], i == 7 ? 0 : 1);
	hashmap_destroy_free(NULL, count_free);
	assert_int_equal(n_freed, N);

	/* a string map's values too, with free itself */
	m = hashmap_create(HASHMAP_KEY_STR);
	assert_int_equal(hashmap_put_str(m, "a", strdup("x"), NULL), 0);
	assert_int_equal(hashmap_put_str(m, "b", strdup("y"), NULL), 0);
	hashmap_destroy_free(m, free);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_basics),
		cmocka_unit_test(test_str_basics),
		cmocka_unit_test(test_many_int),
		cmocka_unit_test(test_many_str_iterate),
		cmocka_unit_test(test_destroy_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
