/* test_data_text.c: the pure pieces of the data layer: the statement
 * splitter, `:name` placeholders in each dialect, ClickHouse's escaping,
 * RESP commands and replies, CSV fields and row templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "data/file.h"
#include "data/resp.h"
#include "data/sqltext.h"
#include "data/transfer.h"

static void test_split_skips_quotes_comments_and_dollars(void **state)
{
	(void)state;
	struct strvec v = STRVEC_INIT;
	struct weir_error err = {0};
	assert_int_equal(sqltext_split("SELECT 'a;b'; -- c;d\n SELECT \"x;\" ;/* ; */ ;"
				       "CREATE FUNCTION f() RETURNS int AS $body$ BEGIN; END; $body$;"
				       " SELECT $1",
				       SQL_POSTGRES, &v, &err), 0);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.v[0], "SELECT 'a;b'");
	assert_string_equal(v.v[1], "-- c;d\n SELECT \"x;\"");
	assert_string_equal(v.v[2], "CREATE FUNCTION f() RETURNS int AS $body$ BEGIN; END; $body$");
	assert_string_equal(v.v[3], "SELECT $1");
	strvec_release(&v);
	/* MySQL: backslash escapes and # comments */
	assert_int_equal(sqltext_split("SELECT 'it\\'s;'; # x;y\nSELECT `a;b`", SQL_MYSQL, &v, &err), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.v[0], "SELECT 'it\\'s;'");
	strvec_release(&v);
	assert_int_equal(sqltext_split("SELECT 'open", SQL_POSTGRES, &v, &err), -1);
	assert_non_null(strstr(err.msg, "unclosed"));
	strvec_release(&v);
}

static void test_bind_each_dialect(void **state)
{
	(void)state;
	char *names[] = {"day", "min"}, *values[] = {"2024-03-01", NULL};
	struct data_params p = {2, names, values};
	struct strbuf out = STRBUF_INIT;
	struct weir_error err = {0};
	size_t *order, n;
	const char *sql = "SELECT x::int, ':day', \"a:day\" FROM t -- :min\n"
			  "WHERE d = :day AND n > :min AND e = :day";

	assert_int_equal(sqltext_bind(sql, SQL_POSTGRES, &p, &out, &order, &n, &err), 0);
	assert_string_equal(out.buf, "SELECT x::int, ':day', \"a:day\" FROM t -- :min\n"
				     "WHERE d = $1 AND n > $2 AND e = $1");
	assert_int_equal(n, 2);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	free(order);
	strbuf_reset(&out);
	assert_int_equal(sqltext_bind(sql, SQL_SQLITE, &p, &out, &order, &n, &err), 0);
	assert_int_equal(n, 3);
	assert_non_null(strstr(out.buf, "d = ? AND n > ? AND e = ?"));
	free(order);
	strbuf_reset(&out);
	/* MySQL: `?` per occurrence; a \' inside a string and # comments are not code */
	assert_int_equal(sqltext_bind("SELECT 'a\\':day' # :min\n, :min, :day", SQL_MYSQL, &p,
				      &out, &order, &n, &err), 0);
	assert_string_equal(out.buf, "SELECT 'a\\':day' # :min\n, ?, ?");
	assert_int_equal(n, 2);
	assert_int_equal(order[0], 1);
	assert_int_equal(order[1], 0);
	free(order);
	strbuf_reset(&out);
	assert_int_equal(sqltext_bind("SELECT :day, :min", SQL_CLICKHOUSE, &p, &out,
				      &order, &n, &err), 0);
	assert_string_equal(out.buf, "SELECT '2024-03-01', NULL");
	free(order);
	strbuf_reset(&out);
	assert_int_equal(sqltext_bind("SELECT :nope", SQL_POSTGRES, &p, &out, &order,
				      &n, &err), -1);
	assert_non_null(strstr(err.msg, ":nope"));
	strbuf_release(&out);
}

static void test_clickhouse_quoting(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	sqltext_quote_clickhouse(&out, "'; DROP TABLE x; --\\\n\t");
	assert_string_equal(out.buf, "'\\'; DROP TABLE x; --\\\\\\n\\t'");
	strbuf_reset(&out);
	sqltext_quote_ident(&out, "we`ird", SQL_MYSQL);
	assert_string_equal(out.buf, "`we``ird`");
	strbuf_reset(&out);
	sqltext_quote_ident(&out, "a\"b", SQL_POSTGRES);
	assert_string_equal(out.buf, "\"a\"\"b\"");
	strbuf_release(&out);
	assert_true(sqltext_returns_rows("  -- x\n (WITH a AS (SELECT 1) SELECT * FROM a)"));
	assert_false(sqltext_returns_rows("INSERT INTO t SELECT 1"));
}

static void test_resp(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	const char *argv[] = {"HSET", "k", "f", "v\r\n"};
	struct resp_reply r;
	resp_command(&out, 4, argv, NULL);
	assert_string_equal(out.buf, "*4\r\n$4\r\nHSET\r\n$1\r\nk\r\n$1\r\nf\r\n$3\r\nv\r\n\r\n");
	strbuf_release(&out);
	assert_int_equal(resp_parse(":12\r\n+OK", 9, &r), 5);
	assert_int_equal(r.integer, 12);
	assert_int_equal(resp_parse("+OK", 3, &r), 0); /* not all there yet */
	assert_int_equal(resp_parse("-WRONGTYPE no\r\n", 15, &r), 15);
	assert_int_equal(r.kind, '-');
	assert_int_equal(resp_parse("$3\r\na\r\n\r\n", 9, &r), 9);
	assert_memory_equal(r.str, "a\r\n", 3);
	assert_int_equal(resp_parse("*2\r\n$1\r\n0\r\n*1\r\n:1\r\n", 19, &r), 19);
	assert_int_equal(resp_parse("*2\r\n$1\r\n0\r\n*1\r\n", 15, &r), 0);
	assert_int_equal(resp_parse("?x\r\n", 4, &r), -1);
}

static void test_csv_field_and_row_template(void **state)
{
	(void)state;
	struct strbuf out = STRBUF_INIT;
	char *names[] = {"id", "a"};
	enum data_type types[] = {DATA_INT, DATA_TEXT};
	struct data_columns cols = {2, names, types};
	const char *v[] = {"7", "x"};
	size_t len[] = {1, 1};
	struct data_row row = {2, v, len};
	struct weir_error err = {0};
	struct row_template *t;

	csv_field(&out, "plain", 5);
	strbuf_addch(&out, ',');
	csv_field(&out, "a, \"q\"\n", 7);
	assert_string_equal(out.buf, "plain,\"a, \"\"q\"\"\n\"");
	strbuf_reset(&out);
	t = row_template_parse("user:{id}:{{x}}", &cols, &err);
	assert_non_null(t);
	row_template_render(t, &row, &out);
	assert_string_equal(out.buf, "user:7:{x}");
	row_template_destroy(t);
	assert_null(row_template_parse("user:{nope}", &cols, &err));
	assert_non_null(strstr(err.msg, "{nope} is not a column"));
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_split_skips_quotes_comments_and_dollars),
	    cmocka_unit_test(test_bind_each_dialect),
	    cmocka_unit_test(test_clickhouse_quoting),
	    cmocka_unit_test(test_resp),
	    cmocka_unit_test(test_csv_field_and_row_template),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
