/* test_person_token.c: a person's token (api/person_token.h): its shape,
 * two never alike, its hash (SHA-256 in hex, a known vector), the names of
 * users and tokens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <string.h>

#include "api/person_token.h"

static void test_new_tokens(void **state)
{
	char a[PERSON_TOKEN_LEN + 1], b[PERSON_TOKEN_LEN + 1];
	char ha[PERSON_TOKEN_HASH_LEN + 1], hb[PERSON_TOKEN_HASH_LEN + 1], again[65];
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(person_token_new(a, ha, &err), 0);
	assert_int_equal(person_token_new(b, hb, &err), 0);
	assert_int_equal(strlen(a), PERSON_TOKEN_LEN);
	assert_true(!strncmp(a, "weir_", 5));
	assert_true(person_token_shape(a));
	assert_string_not_equal(a, b);
	assert_string_not_equal(ha, hb);
	/* the hash handed back is the token's */
	person_token_hash(a, again);
	assert_string_equal(again, ha);
	assert_null(strstr(ha, a + 5));
}

static void test_shape(void **state)
{
	char t[PERSON_TOKEN_LEN + 2];

	(void)state;
	memset(t, 'a', sizeof t);
	memcpy(t, "weir_", 5);
	t[PERSON_TOKEN_LEN] = '\0';
	assert_true(person_token_shape(t));
	t[10] = 'G'; /* not hex */
	assert_false(person_token_shape(t));
	t[10] = 'A'; /* upper case is not how weir writes it */
	assert_false(person_token_shape(t));
	t[10] = 'a';
	t[PERSON_TOKEN_LEN - 1] = '\0'; /* one short */
	assert_false(person_token_shape(t));
	assert_false(
	    person_token_shape("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
	assert_false(person_token_shape(NULL));
}

static void test_hash(void **state)
{
	char h[PERSON_TOKEN_HASH_LEN + 1];

	(void)state;
	/* SHA-256("abc"), FIPS 180-2's example */
	person_token_hash("abc", h);
	assert_string_equal(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_names(void **state)
{
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(person_name_check("alice", "username", &err), 0);
	assert_int_equal(person_name_check("ops-script_2.v@x", "name", &err), 0);
	assert_int_equal(person_name_check("", "username", &err), -1);
	assert_non_null(strstr(err.msg, "username \"\": expected 1 to 60"));
	assert_int_equal(person_name_check(NULL, "username", &err), -1);
	assert_int_equal(person_name_check("a b", "name", &err), -1);
	assert_int_equal(person_name_check("a/b", "name", &err), -1);
	assert_int_equal(person_name_check("-rf", "name", &err), -1);
	assert_int_equal(
	    person_name_check("0123456789012345678901234567890123456789012345678901234567890",
	                      "name", &err),
	    -1); /* 61 */
	assert_int_equal(err.kind, WEIR_E_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_tokens),
	    cmocka_unit_test(test_shape),
	    cmocka_unit_test(test_hash),
	    cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
