/* test_secrets_store.c: sealing (store/seal.h) and the connections and
 * variables tables against a real SQLite file: round trips, codes, and the
 * file's bytes never holding a secret in clear. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fs.h"
#include "lib/str.h"
#include "store/seal.h"
#include "store/secrets_store.h"
#include "store/store.h"
#include "model/variable.h"
#include "store_tmp.h"

static const uint8_t key_a[SEAL_KEY_SIZE] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
static const uint8_t key_b[SEAL_KEY_SIZE] = {9, 8, 7};

static void test_seal_round_trip(void **state)
{
	(void)state;
	struct weir_error err = {0};
	uint8_t *s1, *s2;
	size_t n1, n2, pl;
	char *plain;

	assert_int_equal(seal_value(key_a, "connection x password", "hunter2", 7, &s1, &n1, &err), 0);
	assert_int_equal(n1, 7 + SEAL_OVERHEAD);
	assert_null(memmem(s1, n1, "hunter2", 7));
	/* a fresh nonce each time: the same value seals differently */
	assert_int_equal(seal_value(key_a, "connection x password", "hunter2", 7, &s2, &n2, &err), 0);
	assert_memory_not_equal(s1, s2, n1);
	assert_int_equal(seal_open(key_a, "connection x password", s1, n1, &plain, &pl, &err), 0);
	assert_string_equal(plain, "hunter2");
	assert_int_equal(pl, 7);
	free(plain);
	/* another key, other associated data, a changed byte: none opens */
	assert_int_equal(seal_open(key_b, "connection x password", s1, n1, &plain, NULL, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_null(plain);
	assert_int_equal(seal_open(key_a, "connection y password", s1, n1, &plain, NULL, &err), -1);
	s1[n1 - 1] ^= 1;
	assert_int_equal(seal_open(key_a, "connection x password", s1, n1, &plain, NULL, &err), -1);
	assert_int_equal(seal_open(key_a, NULL, s1, 3, &plain, NULL, &err), -1);
	free(s1);
	free(s2);
	/* empty values seal too */
	assert_int_equal(seal_value(key_a, NULL, "", 0, &s1, &n1, &err), 0);
	assert_int_equal(seal_open(key_a, NULL, s1, n1, &plain, NULL, &err), 0);
	assert_string_equal(plain, "");
	free(plain);
	free(s1);
}

static void test_seal_key_hex(void **state)
{
	(void)state;
	uint8_t k[SEAL_KEY_SIZE];
	char hex[80];

	for (int i = 0; i < SEAL_KEY_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", i * 7);
	hex[2 * SEAL_KEY_SIZE] = '\n';
	hex[2 * SEAL_KEY_SIZE + 1] = '\0';
	assert_int_equal(seal_key_from_hex(hex, k, NULL), 0);
	assert_int_equal(k[3], 21);
	assert_int_equal(seal_key_from_hex("abcd", k, NULL), -1);
	hex[10] = 'z';
	assert_int_equal(seal_key_from_hex(hex, k, NULL), -1);
}

struct fixture {
	char dir[256];
	char path[300];
	struct store *s;
	struct secrets_store *ss;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof *f);
	struct weir_error err = {0};
	if (store_tmp_make(f->dir, sizeof f->dir, f->path, sizeof f->path, "weir-secrets") < 0)
		return -1;
	f->s = store_open(f->path, &err);
	if (!f->s)
		fail_msg("store_open: %s", err.msg);
	f->ss = secrets_store_create(f->s, key_a, &err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	secrets_store_destroy(f->ss);
	store_close(f->s);
	store_tmp_remove(f->dir, f->path);
	free(f);
	return 0;
}

/* Whether `needle` stands anywhere in the database's files (main and WAL). */
static bool file_has(const struct fixture *f, const char *needle)
{
	const char *suffix[] = {"", "-wal"};
	bool found = false;

	for (int i = 0; i < 2 && !found; i++) {
		char p[320];
		size_t len = 0;
		snprintf(p, sizeof p, "%s%s", f->path, suffix[i]);
		char *bytes = fs_exists(p) ? fs_read_file(p, &len, NULL) : NULL;
		found = bytes && memmem(bytes, len, needle, strlen(needle)) != NULL;
		free(bytes);
	}
	return found;
}

static void test_connections(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct connection c = {0}, got, *rows;
	size_t n;

	assert_int_equal(connection_from_uri("warehouse",
					     "postgresql://etl:Pa55-word-xyz@db.example:5433/dw"
					     "?sslmode=disable&token=tok-SECRET-42",
					     &c, &err),
			 0);
	str_set(&c.description, "the warehouse");
	assert_int_equal(secrets_store_conn_add(f->ss, &c, &err), 0);
	assert_int_equal(secrets_store_conn_add(f->ss, &c, &err), -1);
	assert_int_equal(err.kind, WEIR_E_CONFLICT);

	assert_int_equal(secrets_store_conn_get(f->ss, "warehouse", &got, &err), 0);
	assert_string_equal(got.type, "postgres");
	assert_int_equal(got.kind, CONN_POSTGRES);
	assert_string_equal(got.host, "db.example");
	assert_int_equal(got.port, 5433);
	assert_string_equal(got.login, "etl");
	assert_string_equal(got.password, "Pa55-word-xyz");
	assert_string_equal(got.schema, "dw");
	assert_string_equal(got.description, "the warehouse");
	assert_string_equal(json_string_value(json_object_get(got.extra, "sslmode")), "disable");
	connection_release(&got);

	/* neither the password nor the extra's values are in the file in clear */
	assert_true(file_has(f, "db.example"));
	assert_false(file_has(f, "Pa55-word-xyz"));
	assert_false(file_has(f, "tok-SECRET-42"));

	free(c.host);
	c.host = strdup("db2");
	free(c.password);
	c.password = NULL;
	assert_int_equal(secrets_store_conn_update(f->ss, &c, &err), 0);
	assert_int_equal(secrets_store_conn_get(f->ss, "warehouse", &got, &err), 0);
	assert_string_equal(got.host, "db2");
	assert_null(got.password);
	connection_release(&got);

	free(c.id);
	c.id = strdup("absent");
	assert_int_equal(secrets_store_conn_update(f->ss, &c, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(secrets_store_conn_add(f->ss, &c, &err), 0);
	assert_int_equal(secrets_store_conn_list(f->ss, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].id, "absent");
	assert_string_equal(rows[1].id, "warehouse");
	connections_free(rows, n);

	assert_int_equal(secrets_store_conn_delete(f->ss, "absent", &err), 0);
	assert_int_equal(secrets_store_conn_delete(f->ss, "absent", &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(secrets_store_conn_get(f->ss, "absent", &got, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	connection_release(&c);
}

static void test_variables(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct variable v = {.key = "api_key", .value = "val-S3CRET-77", .description = "d"};
	struct variable got, *rows;
	size_t n;

	assert_int_equal(secrets_store_var_set(f->ss, &v, &err), 0);
	v.value = "val-S3CRET-78";
	v.description = NULL;
	assert_int_equal(secrets_store_var_set(f->ss, &v, &err), 0); /* replaces */
	assert_int_equal(secrets_store_var_get(f->ss, "api_key", &got, &err), 0);
	assert_string_equal(got.value, "val-S3CRET-78");
	assert_null(got.description);
	variable_release(&got);
	assert_false(file_has(f, "val-S3CRET-7"));

	v.key = "cfg";
	v.value = "{\"a\": {\"b\": 1}}";
	assert_int_equal(secrets_store_var_set(f->ss, &v, &err), 0);
	assert_int_equal(secrets_store_var_list(f->ss, &rows, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_string_equal(rows[0].key, "api_key");
	assert_string_equal(rows[1].value, "{\"a\": {\"b\": 1}}");
	variables_free(rows, n);
	assert_int_equal(secrets_store_var_delete(f->ss, "cfg", &err), 0);
	assert_int_equal(secrets_store_var_delete(f->ss, "cfg", &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(secrets_store_var_get(f->ss, "cfg", &got, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);

	assert_int_equal(variable_check_key("a.b-c_1", NULL), 0);
	assert_int_equal(variable_check_key("a b", NULL), -1);
	assert_int_equal(variable_check_key("", NULL), -1);
	char *e = variable_env_name("my.key-x");
	assert_string_equal(e, "WEIR_VAR_MY_KEY_X");
	free(e);
}

/* A store opened with another key reads the plain columns but refuses the
 * sealed ones with a message that says why. */
static void test_wrong_key(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct connection c = {0}, got;
	struct secrets_store *other;

	assert_int_equal(connection_from_uri("k", "redis://:pw-123456@h:6379/0", &c, &err), 0);
	assert_int_equal(secrets_store_conn_add(f->ss, &c, &err), 0);
	other = secrets_store_create(f->s, key_b, &err);
	assert_int_equal(secrets_store_conn_get(other, "k", &got, &err), -1);
	assert_int_equal(err.kind, WEIR_E_INVALID);
	assert_non_null(strstr(err.msg, "key"));
	assert_null(strstr(err.msg, "pw-123456"));
	secrets_store_destroy(other);
	connection_release(&c);
}

/* Secret-looking keys (Airflow's names and the configuration's), a value's
 * masked forms, and JSON masked at any depth. */
static void test_secret_names_and_masks(void **state)
{
	(void)state;
	struct strvec m = STRVEC_INIT;
	char *j;

	assert_true(variable_is_secret("api_key"));
	assert_true(variable_is_secret("DB_PASSWORD"));
	assert_true(variable_is_secret("my_secret_token"));
	assert_false(variable_is_secret("plain"));
	assert_false(variable_is_secret("customer_pin"));
	assert_int_equal(connection_secret_names_add(" pin ,, iban", NULL), 0);
	assert_true(variable_is_secret("customer_PIN"));
	assert_true(variable_is_secret("my_iban_2"));
	connection_secret_names_reset();
	assert_false(variable_is_secret("customer_pin"));

	assert_int_equal(variable_mask_add(&m, "it's"), 0);
	assert_int_equal(variable_mask_add(&m, "it's"), 0); /* once */
	assert_int_equal(variable_mask_add(&m, ""), 0);     /* never empty */
	assert_int_equal(m.n, 2);
	assert_string_equal(m.v[0], "it's");
	assert_string_equal(m.v[1], "it'\\''s"); /* as a shell template quotes it */
	j = variable_mask_json("{\"a\":[\"x it's y\",{\"b\":\"it'\\\\''s\"}],\"n\":1}", &m);
	assert_string_equal(j, "{\"a\":[\"x *** y\",{\"b\":\"***\"}],\"n\":1}");
	free(j);
	assert_null(variable_mask_json("{nope", &m));
	strvec_release(&m);
}

/* A job's spec with secrets sealed beside its row, and what a version
 * before 13 wrote in clear masked: a finished job's spec, an active one's
 * (sealed first), a TI's rendered command. */
static void test_specs_sealed_and_scrubbed(void **state)
{
	struct fixture *f = *state;
	struct weir_error err = {0};
	struct strvec m = STRVEC_INIT;
	int64_t ended = 0, active = 0;
	char *text;
	struct job_row r = {.name = (char *)"j",
			    .spec_json = (char *)"{\"roles\":{\"task\":{\"command\":\"echo "
						 "'sp-CLEAR-5150'\"}}}",
			    .framework = (char *)"none",
			    .reason = (char *)"",
			    .attempt = 1,
			    .exit_code = -1,
			    .state = JOB_SUCCEEDED};

	assert_int_equal(secrets_store_spec_get(f->ss, 1, &text, &err), -1);
	assert_int_equal(err.kind, WEIR_E_NOT_FOUND);
	assert_int_equal(store_job_insert(f->s, &r, &ended, &err), 0);
	r.state = JOB_RUNNING;
	assert_int_equal(store_job_insert(f->s, &r, &active, &err), 0);
	assert_true(file_has(f, "sp-CLEAR-5150"));

	assert_int_equal(variable_mask_add(&m, "sp-CLEAR-5150"), 0);
	assert_int_equal(secrets_store_scrub(f->ss, &m, &err), 0);
	assert_false(file_has(f, "sp-CLEAR-5150"));
	/* the active job's spec kept, sealed; the ended one's not */
	assert_int_equal(secrets_store_spec_get(f->ss, active, &text, &err), 0);
	assert_non_null(strstr(text, "sp-CLEAR-5150"));
	free(text);
	assert_int_equal(secrets_store_spec_get(f->ss, ended, &text, &err), -1);
	assert_int_equal(secrets_store_spec_put(f->ss, ended, "{\"x\":\"sp-2\"}", &err), 0);
	assert_int_equal(secrets_store_spec_get(f->ss, ended, &text, &err), 0);
	assert_string_equal(text, "{\"x\":\"sp-2\"}");
	free(text);
	strvec_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_seal_round_trip),
	    cmocka_unit_test(test_seal_key_hex),
	    cmocka_unit_test_setup_teardown(test_connections, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_variables, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_wrong_key, setup, teardown),
	    cmocka_unit_test(test_secret_names_and_masks),
	    cmocka_unit_test_setup_teardown(test_specs_sealed_and_scrubbed, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
