/* test_config.c: `weir server` flags, weir.yaml, and the text parsers of
 * resource detection (cpu.max, meminfo, memory limits), plus the token file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "server/config.h"
#include "server/resources.h"
#include "server/token.h"

static void test_listen(void **state)
{
	char *host = NULL;
	int port = 0;
	struct weir_error err = {0};

	(void)state;
	assert_int_equal(server_config_parse_listen("0.0.0.0:9000", &host, &port, &err), 0);
	assert_string_equal(host, "0.0.0.0");
	assert_int_equal(port, 9000);
	assert_int_equal(server_config_parse_listen(":8300", &host, &port, &err), 0);
	assert_string_equal(host, "127.0.0.1");
	assert_int_equal(port, 8300);
	assert_int_equal(server_config_parse_listen("[::1]:8301", &host, &port, &err), 0);
	assert_string_equal(host, "::1");
	assert_int_equal(port, 8301);
	assert_int_equal(server_config_parse_listen("8302", &host, &port, &err), 0);
	assert_int_equal(port, 8302);
	assert_int_equal(server_config_parse_listen("host:99999", &host, &port, &err), -1);
	assert_non_null(strstr(err.msg, "HOST:PORT"));
	assert_int_equal(server_config_parse_listen("host:", &host, &port, &err), -1);
	assert_int_equal(server_config_parse_listen("", &host, &port, &err), -1);
	free(host);
}

static void test_args(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	char *ok[] = {"server", "--listen", "127.0.0.1:0", "--home=/tmp/x", "--config", "c.yaml"};
	char *bad[] = {"server", "--bogus"};
	char *missing[] = {"server", "--home"};

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 6, ok, &err), 0);
	assert_string_equal(cfg.listen_host, "127.0.0.1");
	assert_int_equal(cfg.listen_port, 0);
	assert_true(cfg.listen_from_cli);
	assert_string_equal(cfg.home, "/tmp/x");
	assert_string_equal(cfg.config_path, "c.yaml");
	assert_int_equal(server_config_parse_args(&cfg, 2, bad, &err), -1);
	assert_non_null(strstr(err.msg, "--bogus"));
	assert_int_equal(server_config_parse_args(&cfg, 2, missing, &err), -1);
	assert_non_null(strstr(err.msg, "--home"));
	server_config_release(&cfg);
}

static void test_yaml(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "# weir.yaml\n"
	                   "listen: 0.0.0.0:9100\n"
	                   "resources:\n"
	                   "  vcores: 8\n"
	                   "  memory: 16g\n"
	                   "  gpus: 3\n"
	                   "kill_grace_seconds: 2\n"
	                   "dagbag_import_timeout: 2.5\n"
	                   "dags_are_paused_at_creation: true\n";
	const char *ids = "resources:\n  gpus: [\"a\", \"b\"]\n  memory: 2048\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "weir.yaml", &err), 0);
	assert_string_equal(cfg.listen_host, "0.0.0.0");
	assert_int_equal(cfg.listen_port, 9100);
	assert_int_equal(cfg.vcores, 8);
	assert_int_equal(cfg.memory_mb, 16 * 1024);
	assert_true(cfg.gpus_set);
	assert_int_equal(cfg.n_gpus, 3);
	assert_string_equal(cfg.gpu_ids[2], "2");
	assert_int_equal(cfg.kill_grace_s, 2);
	assert_true(cfg.dagbag_import_timeout == 2.5);
	assert_true(cfg.dags_paused_at_creation);

	assert_int_equal(server_config_apply_yaml(&cfg, ids, strlen(ids), "w.yaml", &err), 0);
	assert_int_equal(cfg.n_gpus, 2);
	assert_string_equal(cfg.gpu_ids[0], "a");
	assert_int_equal(cfg.memory_mb, 2048);

	/* an empty file is no settings */
	assert_int_equal(server_config_apply_yaml(&cfg, "\n# nothing\n", 11, "e.yaml", &err), 0);
	server_config_release(&cfg);
}

static void test_yaml_cli_listen_wins(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	char *argv[] = {"server", "--listen", "127.0.0.1:7000"};
	const char *text = "listen: 0.0.0.0:9100\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 3, argv, &err), 0);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w", &err), 0);
	assert_string_equal(cfg.listen_host, "127.0.0.1");
	assert_int_equal(cfg.listen_port, 7000);
	server_config_release(&cfg);
}

static void expect_yaml_error(const char *text, const char *needle)
{
	struct server_config cfg;
	struct weir_error err = {0};

	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "weir.yaml", &err), -1);
	if (!strstr(err.msg, needle))
		fail_msg("error \"%s\" does not mention \"%s\"", err.msg, needle);
	assert_non_null(strstr(err.msg, "weir.yaml"));
	server_config_release(&cfg);
}

static void test_yaml_errors(void **state)
{
	(void)state;
	expect_yaml_error("lisen: 1\n", "lisen");
	expect_yaml_error("resources:\n  cpus: 3\n", "resources.cpus");
	expect_yaml_error("resources:\n  vcores: 0\n", "vcores");
	expect_yaml_error("resources:\n  memory: lots\n", "memory");
	expect_yaml_error("resources:\n  gpus: [\"0\", \"0\"]\n", "twice");
	expect_yaml_error("resources:\n  gpus: \"x\"\n", "gpus");
	expect_yaml_error("kill_grace_seconds: -1\n", "kill_grace_seconds");
	expect_yaml_error("dagbag_import_timeout: 0\n", "dagbag_import_timeout: expected seconds");
	expect_yaml_error("dagbag_import_timeout: soon\n", "dagbag_import_timeout");
	expect_yaml_error("dags_are_paused_at_creation: 1\n",
	                  "dags_are_paused_at_creation: expected true or false");
	expect_yaml_error("- a\n- b\n", "mapping");
}

/* `users:` entries' optional role: Admin when not given (as before roles),
 * any of Airflow's four by name, anything else named as wrong. */
static void test_user_roles(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *yaml = "users:\n"
	                   "  - {name: a, password_hash: x}\n"
	                   "  - {name: b, password_hash: x, role: Viewer}\n"
	                   "  - {name: c, password_hash: x, role: op}\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, yaml, strlen(yaml), "w.yaml", &err), 0);
	assert_int_equal(cfg.n_users, 3);
	assert_int_equal(cfg.users[0].role, ROLE_ADMIN);
	assert_int_equal(cfg.users[1].role, ROLE_VIEWER);
	assert_int_equal(cfg.users[2].role, ROLE_OP);
	server_config_release(&cfg);
	expect_yaml_error("users:\n  - {name: d, password_hash: x, role: Superuser}\n",
	                  "users[0] (d).role: expected Viewer, User, Op or Admin");
	expect_yaml_error("users:\n  - {name: d, password_hash: x, role: [Op]}\n",
	                  "users[0] (d).role");
	expect_yaml_error("users:\n  - {name: d, password_hash: x, rights: Op}\n", "users[0]");
}

static void test_resource_parsers(void **state)
{
	(void)state;
	assert_int_equal(resources_parse_cpu_max("max 100000\n"), 0);
	assert_int_equal(resources_parse_cpu_max("200000 100000\n"), 2);
	assert_int_equal(resources_parse_cpu_max("150000 100000\n"), 2);
	assert_int_equal(resources_parse_cpu_max("garbage"), 0);
	assert_int_equal(resources_parse_meminfo("MemTotal:       16384000 kB\nMemFree: 1 kB\n"),
	                 16000);
	assert_int_equal(resources_parse_meminfo("nothing"), 0);
	assert_int_equal(resources_parse_memory_limit("max\n"), 0);
	assert_int_equal(resources_parse_memory_limit("1073741824\n"), 1024);
	assert_int_equal(resources_parse_memory_limit("9223372036854771712\n"), 0);
}

static void test_detect(void **state)
{
	char **ids = NULL;
	size_t n = 0;

	(void)state;
	assert_true(resources_detect_vcores() >= 1);
	assert_true(resources_detect_memory_mb() > 0);
	assert_int_equal(resources_detect_gpus(&ids, &n), 0);
	for (size_t i = 0; i < n; i++)
		assert_non_null(ids[i]);
	resources_free_ids(ids, n);
}

static void test_token(void **state)
{
	char dir[] = "/tmp/weir-token-XXXXXX";
	struct weir_error err = {0};
	char path[64];
	struct stat st;
	char *a, *b;

	(void)state;
	assert_non_null(mkdtemp(dir));
	a = server_token_load_or_create(dir, &err);
	assert_non_null(a);
	assert_true(strlen(a) >= 32);
	assert_true(strspn(a, "0123456789abcdef") == strlen(a));
	snprintf(path, sizeof path, "%s/token", dir);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	b = server_token_load_or_create(dir, &err);
	assert_non_null(b);
	assert_string_equal(a, b);
	free(a);
	free(b);
	unlink(path);
	rmdir(dir);
}

/* connections: and variables: (docs/connections.md): URIs, Airflow's fields,
 * any YAML value as a variable's JSON text; bad entries named. */
static void test_secrets(void **state)
{
	(void)state;
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "connections:\n"
	                   "  pg: postgresql://u:p@h:5432/db\n"
	                   "  api:\n"
	                   "    conn_type: http\n"
	                   "    host: api.x\n"
	                   "    port: 8443\n"
	                   "    extra: {timeout: '5'}\n"
	                   "variables:\n"
	                   "  region: eu-1\n"
	                   "  cfg: {a: [1, 2]}\n"
	                   "  n: 5\n";

	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_int_equal(cfg.n_connections, 2);
	assert_string_equal(cfg.connections[0].id, "pg");
	assert_string_equal(cfg.connections[0].type, "postgres");
	assert_string_equal(cfg.connections[0].password, "p");
	assert_string_equal(cfg.connections[1].host, "api.x");
	assert_int_equal(cfg.connections[1].port, 8443);
	assert_int_equal(cfg.n_variables, 3);
	assert_string_equal(cfg.variables[1].value, "{\"a\":[1,2]}");
	assert_string_equal(cfg.variables[2].value, "5");
	server_config_release(&cfg);

	const char *bad[] = {"connections:\n  x: nonsense\n",      "connections:\n  x: {host: h}\n",
	                     "connections:\n  'a b': redis://h\n", "connections: [1]\n",
	                     "variables:\n  'a b': 1\n",           "variables: [1]\n"};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		server_config_init(&cfg);
		assert_int_equal(
		    server_config_apply_yaml(&cfg, bad[i], strlen(bad[i]), "w.yaml", &err), -1);
		assert_non_null(strstr(err.msg, "w.yaml"));
		assert_true(strstr(err.msg, "connections") || strstr(err.msg, "variables"));
		server_config_release(&cfg);
	}
}

static void test_http(void **state)
{
	(void)state;
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "http:\n  header_timeout_seconds: 3\n  body_timeout_seconds: 20\n"
	                   "  idle_timeout_seconds: 30\n"
	                   "  max_pending_heads: 50\n  secure_cookie: true\n";

	server_config_init(&cfg);
	assert_int_equal(cfg.http_header_timeout_s, 0); /* 0: api/http.h's defaults */
	assert_false(cfg.http_secure_cookie);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_int_equal(cfg.http_header_timeout_s, 3);
	assert_int_equal(cfg.http_body_timeout_s, 20);
	assert_int_equal(cfg.http_idle_timeout_s, 30);
	assert_int_equal(cfg.http_max_pending_heads, 50);
	assert_true(cfg.http_secure_cookie);
	server_config_release(&cfg);
	expect_yaml_error("http:\n  header_timeout_seconds: 0\n", "http.header_timeout_seconds");
	expect_yaml_error("http:\n  idle_timeout_seconds: x\n", "http.idle_timeout_seconds");
	expect_yaml_error("http:\n  max_pending_heads: -1\n", "http.max_pending_heads");
	expect_yaml_error("http:\n  secure_cookie: 1\n", "http.secure_cookie");
	expect_yaml_error("http:\n  timeout: 1\n", "http.timeout: unknown");
	expect_yaml_error("http: 5\n", "http:");
}

/* retention: {older_than, every} (server/db_clean.h): durations, every a
 * day when not given; a bad one named */
static void test_retention(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "retention:\n  older_than: 90d\n";
	const char *both = "retention: {older_than: 12h, every: 30m}\n";

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(cfg.retention_older_than_s, 0);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w", &err), 0);
	assert_int_equal(cfg.retention_older_than_s, 90 * 24 * 3600);
	assert_int_equal(cfg.retention_every_s, 24 * 3600);
	assert_int_equal(server_config_apply_yaml(&cfg, both, strlen(both), "w", &err), 0);
	assert_int_equal(cfg.retention_older_than_s, 12 * 3600);
	assert_int_equal(cfg.retention_every_s, 1800);
	server_config_release(&cfg);
	expect_yaml_error("retention: 90d\n", "retention");
	expect_yaml_error("retention:\n  every: 1d\n", "older_than");
	expect_yaml_error("retention:\n  older_than: soon\n", "retention.older_than");
	expect_yaml_error("retention:\n  older_than: 1d\n  keep: 3\n", "retention.keep");
	expect_yaml_error("retention:\n  older_than: 1d\n  every: 0\n", "retention.every");
}

/* tls: {cert, key, ca_file}, --tls-cert/--tls-key: both or neither, the
 * flags over the file, paths made absolute (the file's against the home) */
static void test_tls(void **state)
{
	struct server_config cfg;
	struct weir_error err = {0};
	const char *text = "tls:\n  cert: tls/w.pem\n  key: /etc/w.key\n  ca_file: ca.pem\n";
	char *flags[] = {"server", "--tls-cert", "/a/c.pem", "--tls-key=/a/c.key"};
	char *half[] = {"server", "--tls-key", "k.pem"};
	char *empty[] = {"server", "--tls-cert="};

	(void)state;
	server_config_init(&cfg);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_string_equal(cfg.tls_cert, "tls/w.pem");
	assert_string_equal(cfg.tls_key, "/etc/w.key");
	assert_string_equal(cfg.tls_ca_file, "ca.pem");
	server_config_release(&cfg);

	/* the flags win over the file's cert and key */
	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 4, flags, &err), 0);
	assert_true(cfg.tls_from_cli);
	assert_int_equal(server_config_apply_yaml(&cfg, text, strlen(text), "w.yaml", &err), 0);
	assert_string_equal(cfg.tls_cert, "/a/c.pem");
	assert_string_equal(cfg.tls_key, "/a/c.key");
	assert_string_equal(cfg.tls_ca_file, "ca.pem");
	server_config_release(&cfg);

	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 3, half, &err), -1);
	assert_non_null(strstr(err.msg, "--tls-cert"));
	server_config_release(&cfg);
	server_config_init(&cfg);
	assert_int_equal(server_config_parse_args(&cfg, 2, empty, &err), -1);
	assert_non_null(strstr(err.msg, "--tls-cert: expected a file"));
	server_config_release(&cfg);

	/* loaded: the file's relative paths are the home's */
	{
		char dir[] = "/tmp/weir-test-tls-XXXXXX";
		char path[256];
		FILE *f;

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof path, "%s/w.yaml", dir);
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(text, f);
		fclose(f);
		server_config_init(&cfg);
		cfg.home = strdup(dir);
		cfg.config_path = strdup(path);
		assert_int_equal(server_config_load(&cfg, &err), 0);
		snprintf(path, sizeof path, "%s/tls/w.pem", dir);
		assert_string_equal(cfg.tls_cert, path);
		assert_string_equal(cfg.tls_key, "/etc/w.key");
		snprintf(path, sizeof path, "%s/ca.pem", dir);
		assert_string_equal(cfg.tls_ca_file, path);
		server_config_release(&cfg);
		snprintf(path, sizeof path, "%s/w.yaml", dir);
		unlink(path);
		rmdir(dir);
	}

	expect_yaml_error("tls:\n  cert: c.pem\n", "tls: expected a mapping with cert");
	expect_yaml_error("tls: yes\n", "tls:");
	expect_yaml_error("tls:\n  cert: c.pem\n  key: k.pem\n  password: x\n",
	                  "tls.password: unknown");
	expect_yaml_error("tls:\n  cert: c.pem\n  key: 3\n", "tls.key: expected a file");
	expect_yaml_error("tls:\n  cert: c.pem\n  key: \"\"\n", "tls.key");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_listen),
	    cmocka_unit_test(test_args),
	    cmocka_unit_test(test_yaml),
	    cmocka_unit_test(test_yaml_cli_listen_wins),
	    cmocka_unit_test(test_yaml_errors),
	    cmocka_unit_test(test_user_roles),
	    cmocka_unit_test(test_resource_parsers),
	    cmocka_unit_test(test_detect),
	    cmocka_unit_test(test_token),
	    cmocka_unit_test(test_secrets),
	    cmocka_unit_test(test_http),
	    cmocka_unit_test(test_retention),
	    cmocka_unit_test(test_tls),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
