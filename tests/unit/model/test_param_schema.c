/* Tests of param schemas: each keyword passing and failing with its
 * message, which mappings are schemas, the schema's own check, and a DAG
 * file's params read, checked at load and against a run's conf. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/dag_spec.h"
#include "model/param_schema.h"

static json_t *js(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);
	if (!v)
		fail_msg("bad JSON in test: %s: %s", text, je.text);
	return v;
}

/* check(schema, value) passes */
static void ok(const char *schema, const char *value)
{
	json_t *s = js(schema), *v = js(value);
	struct weir_error err = {0};
	if (param_schema_check(s, v, &err) != 0)
		fail_msg("%s against %s: %s", value, schema, err.msg);
	json_decref(s);
	json_decref(v);
}

/* check(schema, value) fails with exactly `msg` */
static void bad(const char *schema, const char *value, const char *msg)
{
	json_t *s = js(schema), *v = value ? js(value) : NULL;
	struct weir_error err = {0};
	if (param_schema_check(s, v, &err) != -1)
		fail_msg("%s against %s passed", value, schema);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_string_equal(err.msg, msg);
	json_decref(s);
	json_decref(v);
}

static void test_type(void **state)
{
	(void)state;
	ok("{\"type\": \"string\"}", "\"x\"");
	bad("{\"type\": \"string\"}", "3", "expected a string, got 3");
	ok("{\"type\": \"integer\"}", "3");
	ok("{\"type\": \"integer\"}", "3.0");
	bad("{\"type\": \"integer\"}", "3.5", "expected an integer, got 3.5");
	bad("{\"type\": \"integer\"}", "\"3\"", "expected an integer, got \"3\"");
	ok("{\"type\": \"number\"}", "3.5");
	ok("{\"type\": \"number\"}", "3");
	bad("{\"type\": \"number\"}", "true", "expected a number, got true");
	ok("{\"type\": \"boolean\"}", "false");
	bad("{\"type\": \"boolean\"}", "0", "expected a boolean, got 0");
	ok("{\"type\": \"array\"}", "[1]");
	bad("{\"type\": \"array\"}", "{}", "expected an array, got {}");
	ok("{\"type\": \"object\"}", "{\"a\": 1}");
	bad("{\"type\": \"object\"}", "[]", "expected an object, got []");
	ok("{\"type\": \"null\"}", "null");
	bad("{\"type\": \"null\"}", "\"\"", "expected a null, got \"\"");
	ok("{\"type\": [\"string\", \"null\"]}", "null");
	ok("{\"type\": [\"string\", \"null\"]}", "\"a\"");
	bad("{\"type\": [\"string\", \"integer\", \"null\"]}", "[]",
	    "expected string, integer or null, got []");
}

static void test_enum(void **state)
{
	(void)state;
	ok("{\"enum\": [\"als\", \"bpr\", 3]}", "\"bpr\"");
	ok("{\"enum\": [\"als\", \"bpr\", 3]}", "3");
	bad("{\"enum\": [\"als\", \"bpr\"]}", "\"svd\"", "expected one of \"als\", \"bpr\", got \"svd\"");
	bad("{\"enum\": [\"als\"]}", "null", "expected one of \"als\", got null");
}

static void test_bounds(void **state)
{
	(void)state;
	ok("{\"minimum\": 1, \"maximum\": 10}", "1");
	ok("{\"minimum\": 1, \"maximum\": 10}", "10");
	bad("{\"minimum\": 1}", "0", "expected a number >= 1, got 0");
	bad("{\"maximum\": 10}", "10.5", "expected a number <= 10, got 10.5");
	ok("{\"exclusiveMinimum\": 0}", "0.001");
	bad("{\"exclusiveMinimum\": 0}", "0", "expected a number > 0, got 0");
	bad("{\"exclusiveMaximum\": 1.5}", "1.5", "expected a number < 1.5, got 1.5");
	/* numbers only: other types pass (type rules them out) */
	ok("{\"minimum\": 1}", "\"0\"");
	bad("{\"type\": \"integer\", \"minimum\": 1}", "\"5\"", "expected an integer, got \"5\"");
}

static void test_strings(void **state)
{
	(void)state;
	ok("{\"minLength\": 2, \"maxLength\": 3}", "\"ab\"");
	ok("{\"maxLength\": 3}", "\"\xc3\xa9t\xc3\xa9\""); /* 3 characters, 5 bytes */
	bad("{\"minLength\": 2}", "\"a\"", "expected a string of at least 2 characters, got \"a\"");
	bad("{\"maxLength\": 3}", "\"abcd\"", "expected a string of at most 3 characters, got \"abcd\"");
	ok("{\"pattern\": \"^[a-z]+_[0-9]{2}$\"}", "\"events_01\"");
	bad("{\"pattern\": \"^[a-z]+_[0-9]{2}$\"}", "\"events_1\"",
	    "expected a string matching ^[a-z]+_[0-9]{2}$, got \"events_1\"");
	ok("{\"pattern\": \"ev\"}", "\"my events\""); /* found anywhere */
	ok("{\"pattern\": \"^x\"}", "5");             /* strings only */
	ok("{\"format\": \"date\"}", "\"2024-02-29\"");
	bad("{\"format\": \"date\"}", "\"2023-02-29\"", "expected a date (YYYY-MM-DD), got \"2023-02-29\"");
	bad("{\"format\": \"date\"}", "\"2024-1-05\"", "expected a date (YYYY-MM-DD), got \"2024-1-05\"");
	bad("{\"format\": \"date\"}", "\"2024-01-05x\"", "expected a date (YYYY-MM-DD), got \"2024-01-05x\"");
	ok("{\"format\": \"date-time\"}", "\"2024-01-05T06:00:00Z\"");
	ok("{\"format\": \"date-time\"}", "\"2024-01-05T06:00:00.250+02:00\"");
	bad("{\"format\": \"date-time\"}", "\"2024-01-05 06:00:00\"",
	    "expected a date-time (RFC 3339, YYYY-MM-DDTHH:MM:SSZ), got \"2024-01-05 06:00:00\"");
	bad("{\"format\": \"date-time\"}", "\"2024-01-05T24:00:00Z\"",
	    "expected a date-time (RFC 3339, YYYY-MM-DDTHH:MM:SSZ), got \"2024-01-05T24:00:00Z\"");
}

static void test_required(void **state)
{
	(void)state;
	bad("{\"required\": true}", "null", "expected a value (the param is required), got null");
	bad("{\"type\": \"null\"}", NULL, "expected a value (the param is required), got nothing");
	ok("{\"required\": false, \"type\": [\"integer\", \"null\"]}", "null");
	ok("{\"required\": true}", "0");
}

/* Airflow's trigger form writes these (example_params_ui_tutorial): const,
 * items, properties, a required list, format time. */
static void test_form_keywords(void **state)
{
	(void)state;
	ok("{\"const\": \"always\"}", "\"always\"");
	bad("{\"const\": \"always\"}", "\"never\"", "expected \"always\" (const), got \"never\"");
	ok("{\"type\": \"array\", \"items\": {\"type\": \"number\"}}", "[1, 2.5]");
	bad("{\"type\": \"array\", \"items\": {\"type\": \"number\"}}", "[1, \"x\"]",
	    "item 1: expected a number, got \"x\"");
	const char *people = "{\"type\": \"array\", \"items\": {\"type\": \"object\", "
	                     "\"properties\": {\"name\": {\"type\": \"string\"}}, "
	                     "\"required\": [\"name\"]}}";
	ok(people, "[{\"name\": \"ann\", \"age\": 3}]");
	bad(people, "[{\"age\": 3}]", "item 0: expected an object with name, got {\"age\":3}");
	bad(people, "[{\"name\": 7}]", "item 0: name: expected a string, got 7");
	ok("{\"type\": \"string\", \"format\": \"time\"}", "\"12:13:14\"");
	ok("{\"type\": \"string\", \"format\": \"time\"}", "\"12:13:14.5+02:00\"");
	bad("{\"type\": \"string\", \"format\": \"time\"}", "\"25:00:00\"",
	    "expected a time (HH:MM:SS), got \"25:00:00\"");
}

/* The second audit's keywords: the array's and number's of JSON Schema that Airflow's Params
 * take (jsonschema checks them), email, and a format jsonschema does not know (the trigger
 * form's "multiline") kept and not checked. */
static void test_more_keywords(void **state)
{
	(void)state;
	ok("{\"minItems\": 1, \"maxItems\": 2}", "[1, 2]");
	bad("{\"minItems\": 1}", "[]", "expected a list of at least 1 items, got []");
	bad("{\"maxItems\": 2}", "[1, 2, 3]", "expected a list of at most 2 items, got [1,2,3]");
	ok("{\"uniqueItems\": true}", "[1, \"1\", [1]]");
	bad("{\"uniqueItems\": true}", "[{\"a\": 1}, 2, {\"a\": 1}]",
	    "expected a list of unique items (items 0 and 2 are equal), got [{\"a\":1},2,{\"a\":1}]");
	ok("{\"uniqueItems\": false}", "[1, 1]");
	ok("{\"multipleOf\": 5}", "15");
	ok("{\"multipleOf\": 0.1}", "0.3");
	bad("{\"multipleOf\": 5}", "12", "expected a multiple of 5, got 12");
	ok("{\"format\": \"email\"}", "\"ann@example.org\"");
	bad("{\"format\": \"email\"}", "\"ann\"", "expected an email address (with an @), got \"ann\"");
	ok("{\"type\": \"string\", \"format\": \"multiline\"}", "\"two\\nlines\"");
	json_t *v = js("{\"minItems\": 1}");
	assert_true(param_schema_is(v));
	json_decref(v);
}

static void test_is_schema(void **state)
{
	(void)state;
	json_t *v;
	const char *yes[] = {"{\"type\": \"string\"}", "{\"default\": {\"a\": 1}}",
	                     "{\"description\": \"d\", \"enum\": [1]}"};
	const char *no[] = {"{}", "{\"type\": \"car\", \"wheels\": 4}", "[1]", "3", "\"type\""};
	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		v = js(yes[i]);
		assert_true(param_schema_is(v));
		json_decref(v);
	}
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
		v = js(no[i]);
		assert_false(param_schema_is(v));
		json_decref(v);
	}
}

static void schema_bad(const char *schema, const char *msg)
{
	json_t *s = js(schema);
	struct weir_error err = {0};
	if (param_schema_valid(s, &err) != -1)
		fail_msg("%s was taken", schema);
	assert_string_equal(err.msg, msg);
	json_decref(s);
}

static void test_schema_valid(void **state)
{
	(void)state;
	struct weir_error err = {0};
	json_t *s = js("{\"type\": [\"integer\", \"null\"], \"default\": 5, \"minimum\": 1, "
	               "\"maximum\": 9, \"enum\": [5, 6], \"pattern\": \"x\", \"format\": \"date\", "
	               "\"minLength\": 0, \"maxLength\": 4, \"required\": true, "
	               "\"description\": \"d\", \"title\": \"T\", \"exclusiveMinimum\": 0.5, "
	               "\"exclusiveMaximum\": 10}");
	assert_int_equal(param_schema_valid(s, &err), 0);
	json_decref(s);

	schema_bad("{\"type\": \"int\"}",
	           "type: expected string, integer, number, boolean, array, object, null or a list "
	           "of them, got \"int\"");
	schema_bad("{\"type\": []}",
	           "type: expected string, integer, number, boolean, array, object, null or a list "
	           "of them, got []");
	schema_bad("{\"enum\": []}", "enum: expected a non-empty list, got []");
	schema_bad("{\"minimum\": \"1\"}", "minimum: expected a number, got \"1\"");
	schema_bad("{\"exclusiveMaximum\": true}", "exclusiveMaximum: expected a number, got true");
	schema_bad("{\"maxLength\": -1}", "maxLength: expected a whole number >= 0, got -1");
	schema_bad("{\"pattern\": \"([a-z\"}",
	           "pattern: expected a regular expression that compiles (POSIX extended), got \"([a-z\"");
	schema_bad("{\"format\": 3}",
	           "format: expected a string (date, date-time, time, email, ...), got 3");
	schema_bad("{\"minItems\": 1.5}", "minItems: expected a whole number >= 0, got 1.5");
	schema_bad("{\"multipleOf\": 0}", "multipleOf: expected a number > 0, got 0");
	schema_bad("{\"uniqueItems\": 1}", "uniqueItems: expected true or false, got 1");
	schema_bad("{\"required\": \"yes\"}",
	           "required: expected true or false, or a list of property names, got \"yes\"");
	schema_bad("{\"items\": 3}", "items: expected a schema (a mapping), got 3");
	schema_bad("{\"items\": {\"type\": \"int\"}}",
	           "items: type: expected string, integer, number, boolean, array, object, null or "
	           "a list of them, got \"int\"");
	schema_bad("{\"properties\": {\"a\": {\"minimum\": \"x\"}}}",
	           "properties.a: minimum: expected a number, got \"x\"");
	schema_bad("{\"title\": 3}", "title: expected a string, got 3");
	schema_bad("{\"type\": \"integer\", \"maximum\": 9, \"default\": 12}",
	           "default: expected a number <= 9, got 12");
}

/* ---- a DAG's params ---- */

static const char *dag_head = "dag_id: p\ntasks:\n  - {task_id: a, command: \"echo {{ params.n }}\"}\n";

static struct dag_spec *dag_with(const char *params, struct weir_error *err)
{
	char text[1024];
	snprintf(text, sizeof text, "%sparams:\n%s", dag_head, params);
	return dag_spec_parse_string(text, strlen(text), "d.yaml", "/dags", err);
}

static void run_bad(const struct dag_spec *d, const char *conf, const char *msg)
{
	struct weir_error err = {0};
	json_t *c = js(conf), *p = dag_spec_run_params(d, c, &err);
	assert_non_null(p);
	if (dag_spec_check_run_params(d, p, &err) != -1)
		fail_msg("conf %s passed", conf);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_string_equal(err.msg, msg);
	json_decref(p);
	json_decref(c);
}

static void run_ok(const struct dag_spec *d, const char *conf)
{
	struct weir_error err = {0};
	json_t *c = js(conf), *p = dag_spec_run_params(d, c, &err);
	assert_non_null(p);
	if (dag_spec_check_run_params(d, p, &err) != 0)
		fail_msg("conf %s: %s", conf, err.msg);
	json_decref(p);
	json_decref(c);
}

static void test_dag_params(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct dag_spec *d = dag_with("  n: {type: integer, default: 3, minimum: 1, maximum: 5, "
	                              "description: how many}\n"
	                              "  model: {enum: [als, bpr]}\n"
	                              "  table: events\n"
	                              "  conf: {default: {type: x}}\n",
	                              &err);
	if (!d)
		fail_msg("%s", err.msg);
	/* the defaults stay plain values */
	assert_int_equal(json_integer_value(json_object_get(d->params, "n")), 3);
	assert_true(json_is_null(json_object_get(d->params, "model")));
	assert_string_equal(json_string_value(json_object_get(d->params, "table")), "events");
	assert_string_equal(json_string_value(json_object_get(
		json_object_get(d->params, "conf"), "type")), "x");
	assert_int_equal(json_object_size(d->param_schemas), 3);
	assert_null(json_object_get(d->param_schemas, "table"));

	run_ok(d, "{\"model\": \"als\"}");
	run_ok(d, "{\"model\": \"bpr\", \"n\": 5, \"table\": 7}");
	/* model has no default: a run must give it */
	run_bad(d, "{}", "params.model: expected a value (the param is required), got nothing");
	run_bad(d, "{\"model\": null}",
	        "params.model: expected a value (the param is required), got nothing");
	run_bad(d, "{\"model\": \"als\", \"n\": 9}", "params.n: expected a number <= 5, got 9");
	run_bad(d, "{\"model\": \"als\", \"n\": \"2\"}", "params.n: expected an integer, got \"2\"");
	run_bad(d, "{\"model\": \"svd\"}", "params.model: expected one of \"als\", \"bpr\", got \"svd\"");

	/* the JSON reads back the same schemas */
	json_t *j = dag_spec_to_json(d);
	struct dag_spec *back = dag_spec_from_json(j, "d.json", "/dags", &err);
	if (!back)
		fail_msg("%s", err.msg);
	assert_true(json_equal(back->param_schemas, d->param_schemas));
	assert_true(json_equal(back->params, d->params));
	dag_spec_destroy(back);
	json_decref(j);
	dag_spec_destroy(d);

	/* a default that breaks its schema is an import error naming the param */
	assert_null(dag_with("  n: {type: integer, default: 0, minimum: 1}\n", &err));
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "params.n: default: expected a number >= 1, got 0"));
	assert_null(dag_with("  n: {type: intger, default: 0}\n", &err));
	assert_non_null(strstr(err.msg, "params.n: type: expected string, integer"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_type),         cmocka_unit_test(test_enum),
		cmocka_unit_test(test_bounds),       cmocka_unit_test(test_strings),
		cmocka_unit_test(test_required),     cmocka_unit_test(test_is_schema),
		cmocka_unit_test(test_schema_valid), cmocka_unit_test(test_dag_params),
		cmocka_unit_test(test_form_keywords), cmocka_unit_test(test_more_keywords),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
