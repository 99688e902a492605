/* Tests of lib/json_line: json_line_loads gives what json_loads gives, for
 * the shapes it scans itself and for those it leaves to json_loads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "lib/json_line.h"

/* json_line_loads(text) equals json_loads(text) (both NULL, or equal values) */
static void same(const char *text)
{
	json_t *a = json_line_loads(text), *b = json_loads(text, 0, NULL);
	if (!a || !b) {
		if (a || b)
			fail_msg("%s: one reader failed, the other did not", text);
		return;
	}
	if (!json_equal(a, b))
		fail_msg("%s: the readers differ", text);
	json_decref(a);
	json_decref(b);
}

static void test_agent_lines(void **state)
{
	(void)state;
	const char *line = "{\"t\":\"exited\",\"job\":12,\"role\":\"main\",\"index\":0,\"attempt\":1,"
	                   "\"pid\":4242,\"report\":{\"exit_status\":0,\"signal\":null,"
	                   "\"oom\":false,\"ok\":true,\"peak\":-7},\"tasks\":[1,[2,{}],[]]}";
	json_t *v = json_line_loads(line);
	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, "t")), "exited");
	assert_int_equal(json_integer_value(json_object_get(v, "job")), 12);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(v, "report"), "peak")),
	                 -7);
	assert_true(json_is_null(json_object_get(json_object_get(v, "report"), "signal")));
	assert_true(json_is_false(json_object_get(json_object_get(v, "report"), "oom")));
	assert_int_equal(json_array_size(json_object_get(v, "tasks")), 3);
	json_decref(v);
	same(line);
	same("  { \"a\" : 1 , \"b\" : [ ] , \"c\" : { } }\r\n");
	same("{}");
	same("[]");
	same("{\"a\":1,\"a\":2}"); /* the last one wins, as json_loads */
	same("{\"k\":-0}");
	same("{\"k\":999999999999999999}");
}

static void test_left_to_jansson(void **state)
{
	(void)state;
	/* read by json_loads: the same value */
	same("{\"s\":\"a\\\"b\\u00e9\"}");
	same("{\"s\":\"caf\xc3\xa9\"}");
	same("{\"r\":1.5,\"e\":2e3}");
	same("{\"big\":9223372036854775807}");
	json_t *v = json_line_loads("{\"s\":\"a\\nb\"}");
	assert_string_equal(json_string_value(json_object_get(v, "s")), "a\nb");
	json_decref(v);
	/* not JSON, or not an object or array: NULL, as json_loads */
	same("");
	same("1");
	same("\"x\"");
	same("{\"a\":1,}");
	same("{\"a\":01}");
	same("{\"a\":1} x");
	same("{\"a\":tru}");
	same("{\"a\" 1}");
	same("[1,2");
	same("{\"a\":\"b");
	same("{\"big\":99999999999999999999999}");
	assert_null(json_line_loads("{\"a\":-}"));
	assert_null(json_line_loads("{\"a\":\"\x01\"}"));
	/* deeper than the scan goes */
	char deep[200];
	size_t n = 0;
	for (int i = 0; i < 40; i++)
		deep[n++] = '[';
	for (int i = 0; i < 40; i++)
		deep[n++] = ']';
	deep[n] = '\0';
	v = json_line_loads(deep);
	assert_non_null(v);
	json_decref(v);
	same(deep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_agent_lines),
	    cmocka_unit_test(test_left_to_jansson),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
