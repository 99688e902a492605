/* test_mask.c: the streaming masker: whole and split secrets, overlaps,
 * every way of cutting the input giving the same output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/mask.h"

struct out {
	char buf[4096];
	size_t len;
};

static void collect(void *arg, const char *data, size_t n)
{
	struct out *o = arg;
	assert_true(o->len + n < sizeof o->buf);
	memcpy(o->buf + o->len, data, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

/* Feeds `text` in chunks of `chunk` bytes (0: whole) and flushes. */
static void run(struct mask *m, const char *text, size_t chunk, struct out *o)
{
	size_t n = strlen(text);

	memset(o, 0, sizeof *o);
	if (!chunk)
		chunk = n ? n : 1;
	for (size_t i = 0; i < n; i += chunk)
		mask_feed(m, text + i, i + chunk > n ? n - i : chunk, collect, o);
	mask_flush(m, collect, o);
}

static void expect_all_cuts(struct mask *m, const char *text, const char *want)
{
	struct out o;
	size_t n = strlen(text);

	for (size_t chunk = 0; chunk <= n + 1; chunk++) {
		run(m, text, chunk, &o);
		if (strcmp(o.buf, want))
			fail_msg("chunk %zu: got \"%s\", want \"%s\"", chunk, o.buf, want);
	}
	char *s = mask_string(m, text);
	assert_string_equal(s, want);
	free(s);
}

static void test_basic(void **state)
{
	(void)state;
	const char *secrets[] = {"hunter2", "postgres://u:hunter2@h/db"};
	struct mask *m = mask_create(secrets, 2);

	assert_true(mask_active(m));
	expect_all_cuts(m, "password=hunter2\n", "password=***\n");
	expect_all_cuts(m, "uri postgres://u:hunter2@h/db end", "uri *** end");
	expect_all_cuts(m, "hunter2hunter2", "******");
	expect_all_cuts(m, "hunterhunter2 hunte", "hunter*** hunte");
	expect_all_cuts(m, "no secret here", "no secret here");
	expect_all_cuts(m, "", "");
	/* the URI's start is held back, then shown when it turns out not to be one */
	expect_all_cuts(m, "postgres://u:other@h/db", "postgres://u:other@h/db");
	mask_destroy(m);
}

static void test_overlaps(void **state)
{
	(void)state;
	const char *secrets[] = {"abcdef", "cd", "", "cd", "xabc"};
	struct mask *m = mask_create(secrets, 5);

	expect_all_cuts(m, "abcd", "ab***");
	expect_all_cuts(m, "abcdefg", "***g");
	expect_all_cuts(m, "xabcdef", "***def");
	expect_all_cuts(m, "abcdxcd", "ab***x***");
	mask_destroy(m);
}

static void test_inactive(void **state)
{
	(void)state;
	const char *none[] = {""};
	struct mask *m = mask_create(none, 1);
	struct out o;

	assert_false(mask_active(m));
	run(m, "plain", 2, &o);
	assert_string_equal(o.buf, "plain");
	mask_destroy(m);
	mask_destroy(NULL);
}

/* Binary bytes and a long stream: the held bytes never exceed the secret. */
static void test_long_stream(void **state)
{
	(void)state;
	const char *secrets[] = {"s3cr3t"};
	struct mask *m = mask_create(secrets, 1);
	struct out o = {0};
	char chunk[64];

	for (int i = 0; i < 40; i++) {
		memset(chunk, 'a' + i % 3, sizeof chunk);
		memcpy(chunk + 61, "s3c", 3);
		mask_feed(m, chunk, sizeof chunk, collect, &o);
		mask_feed(m, "r3t", 3, collect, &o);
		if (o.len > 3000)
			break;
	}
	mask_flush(m, collect, &o);
	assert_null(strstr(o.buf, "s3cr3t"));
	assert_non_null(strstr(o.buf, "***"));
	mask_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_overlaps),
	    cmocka_unit_test(test_inactive),
	    cmocka_unit_test(test_long_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
