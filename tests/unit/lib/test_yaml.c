/* Tests of lib/yaml: scalar typing, structure, line map, and every refusal
 * (syntax, duplicate keys, aliases, several documents, empty input, depth). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/yaml.h"

static json_t *parse(const char *text, struct yaml_lines **lines, struct weir_error *err)
{
	return yaml_parse(text, strlen(text), "t.yaml", lines, err);
}

static void expect_error(const char *text, const char *needle)
{
	struct weir_error err = {0};
	struct yaml_lines *lines = (struct yaml_lines *)1;
	json_t *j = parse(text, &lines, &err);
	if (j)
		fail_msg("parsed, expected an error containing \"%s\"", needle);
	assert_null(lines);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" lacks \"%s\"", err.msg, needle);
}

static void test_scalars(void **state)
{
	(void)state;
	struct weir_error err = {0};
	json_t *j = parse("a: 12\nb: -3\nc: 1.5\nd: true\ne: False\nf: ~\ng: null\nh: \"12\"\n"
			  "i: '1.5'\nj: 4g\nk: 0x1f\nl: 0o17\nm: 1e3\nn: hello world\no: \"\"\n"
			  "p: 99999999999999999999\nq: .inf\nr: !!str 7\n",
			  NULL, &err);
	assert_non_null(j);
	assert_int_equal(json_integer_value(json_object_get(j, "a")), 12);
	assert_int_equal(json_integer_value(json_object_get(j, "b")), -3);
	assert_true(json_is_real(json_object_get(j, "c")));
	assert_true(json_is_true(json_object_get(j, "d")));
	assert_true(json_is_false(json_object_get(j, "e")));
	assert_true(json_is_null(json_object_get(j, "f")));
	assert_true(json_is_null(json_object_get(j, "g")));
	assert_string_equal(json_string_value(json_object_get(j, "h")), "12");
	assert_string_equal(json_string_value(json_object_get(j, "i")), "1.5");
	assert_string_equal(json_string_value(json_object_get(j, "j")), "4g");
	assert_int_equal(json_integer_value(json_object_get(j, "k")), 31);
	assert_int_equal(json_integer_value(json_object_get(j, "l")), 15);
	assert_true(json_is_real(json_object_get(j, "m")));
	assert_string_equal(json_string_value(json_object_get(j, "n")), "hello world");
	assert_string_equal(json_string_value(json_object_get(j, "o")), "");
	assert_true(json_is_real(json_object_get(j, "p")));
	assert_string_equal(json_string_value(json_object_get(j, "q")), ".inf");
	assert_string_equal(json_string_value(json_object_get(j, "r")), "7");
	json_decref(j);
}

static void test_structure_and_order(void **state)
{
	(void)state;
	struct weir_error err = {0};
	json_t *j = parse("z: 1\ny:\n  - a\n  - {b: [1, 2]}\nx: {}\n", NULL, &err);
	assert_non_null(j);
	const char *keys[3];
	int n = 0;
	const char *k;
	json_t *v;
	json_object_foreach (j, k, v)
		keys[n++] = k;
	assert_int_equal(n, 3);
	assert_string_equal(keys[0], "z");
	assert_string_equal(keys[1], "y");
	assert_string_equal(keys[2], "x");
	json_t *y = json_object_get(j, "y");
	assert_int_equal(json_array_size(y), 2);
	assert_int_equal(json_array_size(json_object_get(json_array_get(y, 1), "b")), 2);
	json_decref(j);
}

static void test_json_is_yaml(void **state)
{
	(void)state;
	struct weir_error err = {0};
	json_t *j = parse("{\"name\": \"x\", \"roles\": {\"w\": {\"instances\": 2}}, \"l\": [true]}",
			  NULL, &err);
	assert_non_null(j);
	assert_int_equal(
		json_integer_value(json_object_get(
			json_object_get(json_object_get(j, "roles"), "w"), "instances")),
		2);
	json_decref(j);
}

static void test_lines(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct yaml_lines *lines = NULL;
	json_t *j = parse("name: a\n"         /* 1 */
			  "roles:\n"          /* 2 */
			  "  worker:\n"       /* 3 */
			  "    instances: 2\n" /* 4 */
			  "    memory: 4g\n"  /* 5 */
			  "tasks:\n"          /* 6 */
			  "  - a\n"           /* 7 */
			  "  - depends_on:\n" /* 8 */
			  "      - x\n",      /* 9 */
			  &lines, &err);
	assert_non_null(j);
	assert_int_equal(yaml_lines_find(lines, "name"), 1);
	assert_int_equal(yaml_lines_find(lines, "roles"), 2);
	assert_int_equal(yaml_lines_find(lines, "roles.worker"), 3);
	assert_int_equal(yaml_lines_find(lines, "roles.worker.memory"), 5);
	assert_int_equal(yaml_lines_find(lines, "tasks[0]"), 7);
	assert_int_equal(yaml_lines_find(lines, "tasks[1].depends_on[0]"), 9);
	/* absent: nearest present ancestor */
	assert_int_equal(yaml_lines_find(lines, "roles.worker.gpus"), 3);
	assert_int_equal(yaml_lines_find(lines, "tasks[1].depends_on[5]"), 8);
	assert_int_equal(yaml_lines_find(lines, "nothing"), 1);
	assert_int_equal(yaml_lines_find(NULL, "name"), 0);
	yaml_lines_destroy(lines);
	yaml_lines_destroy(NULL);
	json_decref(j);
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("a: 1\nb: [1, 2\n", "t.yaml:");
	expect_error("a: 1\na: 2\n", "t.yaml:2: duplicate key \"a\"");
	expect_error("x:\n  k: 1\n  k: 2\n", "t.yaml:3: duplicate key");
	expect_error("a: &x 1\nb: *x\n", "anchors and aliases are not supported");
	expect_error("a: 1\n---\nb: 2\n", "more than one document");
	expect_error("", "t.yaml:1: empty document");
	expect_error("# only a comment\n", "empty document");
	expect_error("? [a, b]\n: 1\n", "a mapping key must be a plain scalar");
	expect_error("a: \"unterminated\n", "t.yaml:");
	expect_error("\tkey: value\n", "t.yaml:1:");
}

static void test_depth_limit(void **state)
{
	(void)state;
	char buf[1024];
	size_t n = 0;
	for (int i = 0; i < 200; i++)
		buf[n++] = '[';
	for (int i = 0; i < 200; i++)
		buf[n++] = ']';
	buf[n] = '\0';
	expect_error(buf, "nesting deeper than");
	/* 30 levels are fine */
	n = 0;
	for (int i = 0; i < 30; i++)
		buf[n++] = '[';
	for (int i = 0; i < 30; i++)
		buf[n++] = ']';
	buf[n] = '\0';
	struct weir_error err = {0};
	json_t *j = parse(buf, NULL, &err);
	assert_non_null(j);
	json_decref(j);
}

static void test_origin_default(void **state)
{
	(void)state;
	struct weir_error err = {0};
	assert_null(yaml_parse("a: [", 4, NULL, NULL, &err));
	assert_non_null(strstr(err.msg, "<input>:"));
	/* a NULL err must not crash */
	assert_null(yaml_parse("a: [", 4, NULL, NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scalars),     cmocka_unit_test(test_structure_and_order),
		cmocka_unit_test(test_json_is_yaml), cmocka_unit_test(test_lines),
		cmocka_unit_test(test_errors),      cmocka_unit_test(test_depth_limit),
		cmocka_unit_test(test_origin_default),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
