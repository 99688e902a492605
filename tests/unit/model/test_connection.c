/* test_connection.c: Airflow's connection URI form read and written back,
 * its aliases and escapes, ids, env names, and what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "model/connection.h"

static void test_postgres_uri(void **state)
{
	(void)state;
	struct connection c;
	struct weir_error err = {0};
	assert_int_equal(connection_from_uri("pg", "postgresql://u%40x:p%3Aw%2F@db.example:5433/shop?sslmode=disable",
					     &c, &err), 0);
	assert_string_equal(c.type, "postgres");
	assert_int_equal(c.kind, CONN_POSTGRES);
	assert_string_equal(c.login, "u@x");
	assert_string_equal(c.password, "p:w/");
	assert_string_equal(c.host, "db.example");
	assert_int_equal(c.port, 5433);
	assert_string_equal(c.schema, "shop");
	assert_string_equal(json_string_value(json_object_get(c.extra, "sslmode")), "disable");

	char *uri = connection_to_uri(&c, true);
	assert_string_equal(uri, "postgresql://u%40x:p%3Aw%2F@db.example:5433/shop?sslmode=disable");
	free(uri);
	uri = connection_to_uri(&c, false);
	assert_null(strstr(uri, "p%3Aw"));
	assert_string_equal(uri, "postgresql://u%40x@db.example:5433/shop?sslmode=disable");
	free(uri);

	struct connection d;
	assert_int_equal(connection_copy(&d, &c), 0);
	connection_release(&c);
	assert_string_equal(d.password, "p:w/");
	connection_release(&d);
}

static void test_aliases_and_extra(void **state)
{
	(void)state;
	struct connection c;
	assert_int_equal(connection_from_uri("m", "mariadb://root@127.0.0.1:3306/db", &c, NULL), 0);
	assert_string_equal(c.type, "mysql");
	assert_int_equal(c.kind, CONN_MYSQL);
	assert_null(c.password);
	connection_release(&c);

	assert_int_equal(connection_from_uri("x", "google-cloud-platform://?__extra__=%7B%22a%22%3A%5B1%2C2%5D%7D",
					     &c, NULL), 0);
	assert_string_equal(c.type, "google_cloud_platform");
	assert_int_equal(c.kind, CONN_OTHER);
	assert_null(c.host);
	assert_int_equal(json_array_size(json_object_get(c.extra, "a")), 2);
	char *uri = connection_to_uri(&c, true);
	assert_string_equal(uri, "google-cloud-platform://?__extra__=%7B%22a%22%3A%5B1%2C2%5D%7D");
	free(uri);
	connection_release(&c);

	assert_int_equal(connection_from_uri("r", "redis://:secret@[::1]:6380/2", &c, NULL), 0);
	assert_string_equal(c.host, "[::1]");
	assert_int_equal(c.port, 6380);
	assert_string_equal(c.password, "secret");
	assert_null(c.login);
	assert_string_equal(c.schema, "2");
	uri = connection_to_uri(&c, true);
	assert_string_equal(uri, "redis://:secret@[::1]:6380/2");
	free(uri);
	connection_release(&c);
}

static void test_paths(void **state)
{
	(void)state;
	struct connection c;
	assert_int_equal(connection_from_uri("lite", "sqlite:///data/x.db", &c, NULL), 0);
	char *p = connection_path(&c);
	assert_string_equal(p, "/data/x.db");
	free(p);
	connection_release(&c);
	assert_int_equal(connection_from_uri("lite", "sqlite://%2Ftmp%2Fa.db", &c, NULL), 0);
	p = connection_path(&c);
	assert_string_equal(p, "/tmp/a.db");
	free(p);
	char *uri = connection_to_uri(&c, true);
	assert_string_equal(uri, "sqlite://%2Ftmp%2Fa.db");
	free(uri);
	connection_release(&c);
}

static void test_refused(void **state)
{
	(void)state;
	struct connection c;
	struct weir_error err = {0};
	const char *bad[] = {
		"no-scheme",
		"://host",
		"postgres://h:0/db",
		"postgres://h:99999/db",
		"postgres://h:5x/db",
		"postgres://u:pw%zz@h/db",
		"postgres://h/db%00",
		"redis://[::1/0",
		"x://h?__extra__=%5B1%5D",
		"x://h?=v",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		assert_int_equal(connection_from_uri("id", bad[i], &c, &err), -1);
		assert_int_equal(err.kind, WEIR_E_INVALID);
		assert_non_null(strstr(err.msg, "connection id"));
		assert_null(c.id);
	}
	/* the message never quotes the password */
	assert_int_equal(connection_from_uri("id", "postgres://u:s3cr3t@h:70000/db", &c, &err), -1);
	assert_null(strstr(err.msg, "s3cr3t"));
	assert_int_equal(connection_check_id("ok_id-1.x", NULL), 0);
	assert_int_equal(connection_check_id("", NULL), -1);
	assert_int_equal(connection_check_id("a b", NULL), -1);
	assert_int_equal(connection_check_id("a/b", NULL), -1);
}

static void test_env_name(void **state)
{
	(void)state;
	char *n = connection_env_name("warehouse.pg-main");
	assert_string_equal(n, "WEIR_CONN_WAREHOUSE_PG_MAIN");
	free(n);
}

static void test_json_fields(void **state)
{
	(void)state;
	struct weir_error err = {0};
	struct connection c;
	json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s}", "conn_type", "postgresql", "host",
			      "h", "login", "u", "port", 5432, "password", "pw", "extra",
			      "{\"sslmode\": \"disable\", \"private_key\": \"K\"}");

	assert_int_equal(connection_from_json("db", j, &c, &err), 0);
	assert_string_equal(c.type, "postgres");
	assert_int_equal(c.kind, CONN_POSTGRES);
	assert_int_equal(c.port, 5432);
	assert_string_equal(json_string_value(json_object_get(c.extra, "sslmode")), "disable");
	char *x = connection_extra_masked(&c);
	assert_string_equal(x, "{\"private_key\":\"***\",\"sslmode\":\"disable\"}");
	free(x);
	/* null clears; a field at a time */
	json_t *p = json_pack("{s:n, s:n}", "host", "port");
	assert_int_equal(connection_apply_json(&c, p, &err), 0);
	assert_null(c.host);
	assert_int_equal(c.port, 0);
	json_decref(p);
	const char *bad[] = {"{\"port\": -1}", "{\"port\": \"1\"}", "{\"extra\": \"[1]\"}",
			     "{\"conn_type\": \"\"}", "{\"nope\": 1}", "{\"host\": 1}"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		json_t *b = json_loads(bad[i], 0, NULL);
		assert_int_equal(connection_apply_json(&c, b, &err), -1);
		assert_int_equal(err.kind, WEIR_E_INVALID);
		json_decref(b);
	}
	connection_release(&c);
	json_object_del(j, "conn_type");
	assert_int_equal(connection_from_json("db", j, &c, &err), -1);
	assert_non_null(strstr(err.msg, "conn_type"));
	assert_null(strstr(err.msg, "pw"));
	json_decref(j);
}

static void test_lists_and_names(void **state)
{
	(void)state;
	struct strvec ids = STRVEC_INIT;
	json_t *l = json_pack("[s,s,s]", "my-db", "MY_DB", "cache");
	char id[64];

	assert_int_equal(connection_list_read(&ids, l, NULL), 0);
	assert_int_equal(ids.n, 2); /* my-db and MY_DB are one WEIR_CONN_MY_DB */
	assert_int_equal(connection_list_add(&ids, "a b", NULL), -1);
	json_decref(l);
	l = json_pack("[s,i]", "x", 1);
	assert_int_equal(connection_list_read(&ids, l, NULL), -1);
	json_decref(l);
	strvec_release(&ids);
	connection_id_of_env("MY_DB", id, sizeof id);
	assert_string_equal(id, "my_db");
	assert_true(connection_secret_name("DB_Password"));
	assert_true(connection_secret_name("api_key"));
	assert_false(connection_secret_name("sslmode"));
}

static void check_http_url(const char *type, const char *host, int port, const char *schema,
			   const char *want)
{
	struct connection c = {.id = "h", .type = (char *)type, .host = (char *)host,
			       .port = port, .schema = (char *)schema};
	struct strbuf url = STRBUF_INIT;
	struct weir_error err = {0};

	assert_int_equal(connection_http_url(&c, &url, &err), 0);
	assert_string_equal(url.buf, want);
	strbuf_release(&url);
}

static void test_http_url(void **state)
{
	(void)state;
	check_http_url("http", "127.0.0.1", 8080, NULL, "http://127.0.0.1:8080");
	check_http_url("http", "https://hooks.slack.com/services", 0, NULL,
		       "https://hooks.slack.com/services");
	check_http_url("https", "localhost", 8443, NULL, "https://localhost:8443");
	check_http_url("http", "example.com/base", 0, "https", "https://example.com/base");
	check_http_url("http", "http://example.com:81/x", 9000, NULL, "http://example.com:81/x");

	struct connection none = {.id = "h", .type = "http", .host = "https://"};
	struct strbuf url = STRBUF_INIT;
	struct weir_error err = {0};
	assert_int_equal(connection_http_url(&none, &url, &err), -1);
	assert_non_null(strstr(err.msg, "no host"));
	strbuf_release(&url);

	struct connection x = {.id = "h", .type = "http"};
	assert_null(connection_ca_file(&x));
	x.extra = json_pack("{s:s}", "ca_file", "/etc/ca.pem");
	assert_string_equal(connection_ca_file(&x), "/etc/ca.pem");
	json_decref(x.extra);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_postgres_uri),
		cmocka_unit_test(test_aliases_and_extra),
		cmocka_unit_test(test_paths),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_env_name),
		cmocka_unit_test(test_json_fields),
		cmocka_unit_test(test_lists_and_names),
		cmocka_unit_test(test_http_url),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
