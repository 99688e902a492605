/* cli_secrets.c: `weir connections add|list|get|delete` and `weir variables
 * set|get|list|delete|import|export` (cli_secrets.h).
 *
 * Flags are Airflow's (--conn-uri, --conn-type, --conn-host, ...; -o json;
 * --json, --default, --description, --action-on-existing-key).  A URI is
 * read here (model/connection.h) so that a bad one is refused before any
 * call, with the part that is wrong named; what is sent is Airflow's
 * Connection JSON.  Nothing printed ever holds a password: the server never
 * returns one, and a URI echoed back is written without it.
 */
#include "cli/cli_secrets.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_dags.h"
#include "lib/fs.h"
#include "lib/http_client.h"
#include "model/connection.h"

#define CALL_TIMEOUT_MS 30000

void cli_connections_usage(FILE *out)
{
	fputs("usage: weir connections add ID (--conn-uri URI | --conn-json JSON |\n"
	      "                          --conn-type TYPE [--conn-host H] [--conn-port P]\n"
	      "                          [--conn-login L] [--conn-password P] [--conn-schema S]\n"
	      "                          [--conn-extra JSON]) [--conn-description D]\n"
	      "       weir connections list [-o table|json]\n"
	      "       weir connections get ID [-o table|json]\n"
	      "       weir connections delete ID\n"
	      "       weir connections test ID\n"
	      "       weir connections test [ID] (--conn-uri URI | --conn-json JSON |\n"
	      "                                   --conn-type TYPE [--conn-host H] ...)\n"
	      "\n"
	      "  add     stores a connection in the server (its password sealed at rest);\n"
	      "          the URI is Airflow's TYPE://LOGIN:PASSWORD@HOST:PORT/SCHEMA?K=V\n"
	      "  list    every connection the server knows, with where it comes from\n"
	      "          (config, store, environment); never a password\n"
	      "  get     one connection's fields (never its password)\n"
	      "  delete  removes a stored connection\n"
	      "  test    whether the server reaches the connection and logs in (the one of\n"
	      "          that id, or the one the --conn-* flags give, stored or not); prints\n"
	      "          what happened\n"
	      "\n"
	      "exit status: 0 done, 1 the server refused (404: no such connection, 409: it\n"
	      "exists) or the test failed, 2 bad input, 3 the server is unreachable.  See\n"
	      "docs/connections.md.\n",
	      out);
}

void cli_variables_usage(FILE *out)
{
	fputs("usage: weir variables set KEY VALUE [--json] [--description D]\n"
	      "       weir variables get KEY [--json] [--default VALUE]\n"
	      "       weir variables list [-o table|json]\n"
	      "       weir variables delete KEY\n"
	      "       weir variables import FILE [--action-on-existing-key overwrite|skip|fail]\n"
	      "       weir variables export FILE\n"
	      "\n"
	      "  set     stores a variable (--json: VALUE must be JSON)\n"
	      "  get     prints its value (--json: pretty-printed JSON; --default: printed\n"
	      "          when the variable is not set)\n"
	      "  list    every variable's key, with where it comes from\n"
	      "  import  a JSON object of KEY: value (a value that is not a string is kept as\n"
	      "          its JSON text)\n"
	      "  export  every variable as such a JSON object (JSON values as JSON)\n"
	      "\n"
	      "exit status: 0 done, 1 the server refused (404: not set), 2 bad input, 3 the\n"
	      "server is unreachable.  See docs/connections.md.\n",
	      out);
}

/* ---- shared ---- */

/* One call; *out (may be NULL) gets the JSON answer on 2xx. */
static int call(struct cli_ctx *ctx, const char *method, const char *path, json_t *body,
                json_t **out, long *status)
{
	char *text = body ? json_dumps(body, JSON_COMPACT) : NULL;
	struct cli_reply r;
	int rc = CLI_EXIT_OK;

	if (out)
		*out = NULL;
	cli_call(ctx, method, path, text, CALL_TIMEOUT_MS, &r);
	free(text);
	if (status)
		*status = r.status;
	if (!cli_reply_ok(&r)) {
		rc = status && r.status == 404 ? CLI_EXIT_FAILED : cli_dag_report(ctx, &r);
	} else if (out) {
		*out = json_incref(r.json);
	}
	cli_reply_release(&r);
	return rc;
}

/* "/api/v1/WHAT/ID" with the id percent-encoded; NULL when out of memory. */
static char *item_path(const char *what, const char *id)
{
	char *esc = http_url_escape(id), *p = NULL;

	if (esc && asprintf(&p, "/api/v1/%s/%s", what, esc) < 0)
		p = NULL;
	free(esc);
	return p;
}

/* Splits argv[2..] into positionals (at most max), the value flags of
 * names[] (into vals[]) and the switches of bools[] (into on[]); the global
 * flags into g.  0, 1 (--help) or -1 (printed): cli_parse_args(). */
static int parse(int argc, char **argv, const char *const *names, const char **vals,
                 const char *const *bools, bool *on, const char **pos, size_t max, size_t *n_pos,
                 struct cli_globals *g, void (*usage)(FILE *))
{
	struct cli_opt opts[16];
	size_t n = 0;

	for (size_t k = 0; names && names[k] && n < 16; k++)
		opts[n++] = (struct cli_opt){names[k], &vals[k], NULL, NULL};
	for (size_t k = 0; bools && bools[k] && n < 16; k++)
		opts[n++] = (struct cli_opt){bools[k], NULL, &on[k], NULL};
	return cli_parse_args(argc - 1, argv + 1, opts, n, pos, max, n_pos, g, usage);
}

/* -o table|json */
static int output_json(const char *o, bool *json)
{
	*json = o && !strcmp(o, "json");
	if (o && strcmp(o, "json") && strcmp(o, "table")) {
		cli_error("-o \"%s\": expected table or json", o);
		return -1;
	}
	return 0;
}

static void print_json(json_t *j)
{
	char *t = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (t)
		printf("%s\n", t);
	free(t);
}

/* A JSON field as table text: strings as they are, null as "", numbers. */
static void cell(json_t *o, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		snprintf(buf, size, "%s", json_string_value(v));
	else if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else
		buf[0] = '\0';
}

static int print_table(json_t *items, const char *const *cols, size_t n_cols)
{
	struct cli_table t;
	size_t i;
	json_t *it;

	if (cli_table_init(&t, n_cols, cols) < 0)
		return CLI_EXIT_FAILED;
	json_array_foreach(items, i, it)
	{
		char cells[8][256];
		const char *row[8];
		for (size_t c = 0; c < n_cols && c < 8; c++) {
			cell(it, cols[c], cells[c], sizeof cells[c]);
			row[c] = cells[c];
		}
		cli_table_add(&t, row);
	}
	cli_table_print(&t, stdout);
	cli_table_release(&t);
	return CLI_EXIT_OK;
}

/* Every item of a collection route, page after page. */
static int list_all(struct cli_ctx *ctx, const char *what, json_t **items)
{
	*items = json_array();
	for (int offset = 0;;) {
		char path[128];
		json_t *page = NULL, *arr;
		int rc;
		snprintf(path, sizeof path, "/api/v1/%s?limit=1000&offset=%d", what, offset);
		rc = call(ctx, "GET", path, NULL, &page, NULL);
		if (rc != CLI_EXIT_OK) {
			json_decref(*items);
			*items = NULL;
			return rc;
		}
		arr = json_object_get(page, what);
		json_array_extend(*items, arr);
		offset += (int)json_array_size(arr);
		rc = json_array_size(arr) == 0 ||
		     offset >= json_integer_value(json_object_get(page, "total_entries"));
		json_decref(page);
		if (rc)
			return CLI_EXIT_OK;
	}
}

/* ---- connections ---- */

/* The body of `connections add` from its flags; NULL after printing why. */
static json_t *conn_body(const char *id, const char **v)
{
	/* v: uri, json, type, host, port, login, password, schema, extra, description */
	struct weir_error err = {0};
	json_t *b;

	if (!!v[0] + !!v[1] + !!v[2] != 1) {
		cli_error("connections: expected one of --conn-uri, --conn-json and --conn-type");
		return NULL;
	}
	if ((v[0] || v[1]) && (v[3] || v[4] || v[5] || v[6] || v[7] || v[8])) {
		cli_error("connections: --conn-host, --conn-port, ... go with --conn-type, not "
		          "with --conn-uri or --conn-json");
		return NULL;
	}
	if (v[0]) {
		struct connection c;
		if (connection_from_uri(id, v[0], &c, &err) < 0) {
			cli_error("--conn-uri: %s", err.msg);
			return NULL;
		}
		char *extra = c.extra ? json_dumps(c.extra, JSON_COMPACT) : NULL;
		b = json_pack("{s:s, s:s}", "connection_id", id, "conn_type", c.type);
		const char *keys[] = {"host", "login", "password", "schema"};
		const char *vals[] = {c.host, c.login, c.password, c.schema};
		for (size_t i = 0; b && i < 4; i++)
			if (vals[i])
				json_object_set_new(b, keys[i], json_string(vals[i]));
		if (b && c.port)
			json_object_set_new(b, "port", json_integer(c.port));
		if (b && extra)
			json_object_set_new(b, "extra", json_string(extra));
		free(extra);
		connection_release(&c);
	} else if (v[1]) {
		json_error_t je;
		b = json_loads(v[1], 0, &je);
		if (!json_is_object(b)) {
			cli_error("--conn-json: expected a JSON object of conn_type, host, ...: %s",
			          b ? "not an object" : je.text);
			json_decref(b);
			return NULL;
		}
		json_object_set_new(b, "connection_id", json_string(id));
	} else {
		long long port = 0;
		if (v[4] && cli_parse_int(v[4], "--conn-port", 0, 65535, &port, &err) < 0) {
			cli_error("%s", err.msg);
			return NULL;
		}
		b = json_pack("{s:s, s:s}", "connection_id", id, "conn_type", v[2]);
		const char *keys[] = {"host", "login", "password", "schema", "extra"};
		const char *vals[] = {v[3], v[5], v[6], v[7], v[8]};
		for (size_t i = 0; b && i < 5; i++)
			if (vals[i])
				json_object_set_new(b, keys[i], json_string(vals[i]));
		if (b && v[4])
			json_object_set_new(b, "port", json_integer(port));
	}
	if (b && v[9])
		json_object_set_new(b, "description", json_string(v[9]));
	return b;
}

static int conn_add(struct cli_ctx *ctx, const char *id, const char **v)
{
	json_t *body = conn_body(id, v), *r = NULL;
	int rc;

	if (!body)
		return CLI_EXIT_USAGE;
	rc = call(ctx, "POST", "/api/v1/connections", body, &r, NULL);
	json_decref(body);
	if (rc == CLI_EXIT_OK)
		printf("added connection %s (%s)\n", id, cli_json_str(r, "conn_type", "?"));
	json_decref(r);
	return rc;
}

static const char *const conn_cols[] = {"connection_id", "conn_type", "host",  "port",
                                        "login",         "schema",    "source"};

static int conn_list(struct cli_ctx *ctx, bool json)
{
	json_t *items;
	int rc = list_all(ctx, "connections", &items);

	if (rc != CLI_EXIT_OK)
		return rc;
	if (json)
		print_json(items);
	else
		rc = print_table(items, conn_cols, 7);
	json_decref(items);
	return rc;
}

static int conn_get(struct cli_ctx *ctx, const char *id, bool json)
{
	char *path = item_path("connections", id);
	json_t *r = NULL;
	long st = 0;
	int rc = path ? call(ctx, "GET", path, NULL, &r, &st) : CLI_EXIT_FAILED;

	free(path);
	if (rc == CLI_EXIT_OK && json) {
		print_json(r);
	} else if (rc == CLI_EXIT_OK) {
		const char *const cols[] = {"connection_id", "conn_type", "description",
		                            "host",          "port",      "login",
		                            "schema",        "extra",     "source"};
		for (size_t i = 0; i < 9; i++) {
			char buf[1024];
			cell(r, cols[i], buf, sizeof buf);
			printf("%-14s %s\n", cols[i], buf);
		}
	} else if (st == 404) {
		cli_error("connection \"%s\" is not defined", id);
	}
	json_decref(r);
	return rc;
}

/* `connections test`: by id (nothing but the id in the body), or the
 * connection the --conn-* flags give.  Exit 0 when it answered, 1 not. */
static int conn_test(struct cli_ctx *ctx, const char *id, const char **v)
{
	bool given = v[0] || v[1] || v[2];
	json_t *body = given ? conn_body(id, v) : json_pack("{s:s}", "connection_id", id);
	json_t *r = NULL;
	long st = 0;
	int rc;

	if (!body)
		return CLI_EXIT_USAGE;
	rc = call(ctx, "POST", "/api/v1/connections/test", body, &r, &st);
	json_decref(body);
	if (rc == CLI_EXIT_OK) {
		const char *msg = cli_json_str(r, "message", "");
		if (json_is_true(json_object_get(r, "status"))) {
			printf("%s\n", msg);
		} else {
			cli_error("connection %s: %s", id, msg);
			rc = CLI_EXIT_FAILED;
		}
	} else if (st == 404) {
		cli_error("connection \"%s\" is not defined", id);
	}
	json_decref(r);
	return rc;
}

static int delete_item(struct cli_ctx *ctx, const char *what, const char *noun, const char *id)
{
	char *path = item_path(what, id);
	long st = 0;
	int rc = path ? call(ctx, "DELETE", path, NULL, NULL, &st) : CLI_EXIT_FAILED;

	free(path);
	if (rc == CLI_EXIT_OK)
		printf("deleted %s %s\n", noun, id);
	else if (st == 404)
		cli_error("%s \"%s\" is not in the store", noun, id);
	return rc;
}

int cli_connections_main(int argc, char **argv, const struct cli_globals *g0)
{
	static const char *const names[] = {"--conn-uri",
	                                    "--conn-json",
	                                    "--conn-type",
	                                    "--conn-host",
	                                    "--conn-port",
	                                    "--conn-login",
	                                    "--conn-password",
	                                    "--conn-schema",
	                                    "--conn-extra",
	                                    "--conn-description",
	                                    "-o",
	                                    "--output",
	                                    NULL};
	const char *vals[12] = {0};
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *pos[1] = {0};
	size_t n_pos, want;
	bool json;
	const char *sub;
	int rc;

	if (argc < 2 || cli_flag_is_help(argv[1])) {
		cli_connections_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sub = argv[1];
	want = !strcmp(sub, "list") ? 0 : 1;
	if (strcmp(sub, "add") && strcmp(sub, "list") && strcmp(sub, "get") &&
	    strcmp(sub, "delete") && strcmp(sub, "test")) {
		cli_error("no command \"connections %s\"", sub);
		cli_connections_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = parse(argc, argv, names, vals, NULL, NULL, pos, want, &n_pos, &g,
	           cli_connections_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	/* a connection tested from flags alone needs no id of its own */
	if (!strcmp(sub, "test") && n_pos == 0 && (vals[0] || vals[1] || vals[2]))
		pos[n_pos++] = "unsaved";
	if (n_pos < want) {
		cli_error("connections %s needs a connection id", sub);
		return CLI_EXIT_USAGE;
	}
	if (strcmp(sub, "add") && strcmp(sub, "test") &&
	    (vals[0] || vals[1] || vals[2] || vals[3] || vals[4] || vals[5] || vals[6] || vals[7] ||
	     vals[8] || vals[9])) {
		cli_error("connections %s: the --conn-* flags go with add", sub);
		return CLI_EXIT_USAGE;
	}
	if (output_json(vals[10] ? vals[10] : vals[11], &json) < 0)
		return CLI_EXIT_USAGE;
	if (want && connection_check_id(pos[0], &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_USAGE;
	}
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_FAILED;
	}
	if (!strcmp(sub, "add"))
		rc = conn_add(&ctx, pos[0], vals);
	else if (!strcmp(sub, "list"))
		rc = conn_list(&ctx, json);
	else if (!strcmp(sub, "get"))
		rc = conn_get(&ctx, pos[0], json);
	else if (!strcmp(sub, "test"))
		rc = conn_test(&ctx, pos[0], vals);
	else
		rc = delete_item(&ctx, "connections", "connection", pos[0]);
	cli_ctx_release(&ctx);
	return rc;
}

/* ---- variables ---- */

static int var_set(struct cli_ctx *ctx, const char *key, const char *value, bool json,
                   const char *description, long *status)
{
	json_t *body, *r = NULL;
	char *text = NULL;
	int rc;

	if (json) {
		json_error_t je;
		json_t *j = json_loads(value, JSON_DECODE_ANY, &je);
		if (!j) {
			cli_error("--json: VALUE is not JSON: %s", je.text);
			return CLI_EXIT_USAGE;
		}
		text = json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY);
		json_decref(j);
	}
	body = json_pack("{s:s, s:s}", "key", key, "value", text ? text : value);
	if (body && description)
		json_object_set_new(body, "description", json_string(description));
	rc = body ? call(ctx, "POST", "/api/v1/variables", body, &r, status) : CLI_EXIT_FAILED;
	json_decref(body);
	json_decref(r);
	free(text);
	return rc;
}

static int var_get(struct cli_ctx *ctx, const char *key, bool json, const char *dflt)
{
	char *path = item_path("variables", key);
	json_t *r = NULL;
	long st = 0;
	int rc = path ? call(ctx, "GET", path, NULL, &r, &st) : CLI_EXIT_FAILED;
	const char *value;

	free(path);
	if (rc != CLI_EXIT_OK) {
		if (st == 404 && dflt) {
			printf("%s\n", dflt);
			return CLI_EXIT_OK;
		}
		if (st == 404)
			cli_error("variable \"%s\" is not set", key);
		return rc;
	}
	value = cli_json_str(r, "value", "");
	if (json) {
		json_t *j = json_loads(value, JSON_DECODE_ANY, NULL);
		if (!j) {
			cli_error("variable \"%s\" is not JSON (get it without --json)", key);
			rc = CLI_EXIT_FAILED;
		} else {
			print_json(j);
		}
		json_decref(j);
	} else {
		printf("%s\n", value);
	}
	json_decref(r);
	return rc;
}

static int var_list(struct cli_ctx *ctx, bool json)
{
	static const char *const cols[] = {"key", "source", "description"};
	json_t *items;
	int rc = list_all(ctx, "variables", &items);

	if (rc != CLI_EXIT_OK)
		return rc;
	if (json)
		print_json(items);
	else
		rc = print_table(items, cols, 3);
	json_decref(items);
	return rc;
}

/* `import FILE`: {KEY: value}; `action`: overwrite (default), skip or fail. */
static int var_import(struct cli_ctx *ctx, const char *file, const char *action)
{
	json_error_t je;
	json_t *all = json_load_file(file, 0, &je), *v;
	const char *key;
	size_t done = 0, skipped = 0;
	int rc = CLI_EXIT_OK;

	if (action && strcmp(action, "overwrite") && strcmp(action, "skip") &&
	    strcmp(action, "fail")) {
		cli_error("--action-on-existing-key \"%s\": expected overwrite, skip or fail",
		          action);
		json_decref(all);
		return CLI_EXIT_USAGE;
	}
	if (!json_is_object(all)) {
		cli_error("%s: expected a JSON object of KEY: value%s%s", file, all ? "" : ": ",
		          all ? "" : je.text);
		json_decref(all);
		return CLI_EXIT_USAGE;
	}
	json_object_foreach(all, key, v)
	{
		char *text = json_is_string(v) ? strdup(json_string_value(v))
		                               : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (action && strcmp(action, "overwrite")) {
			char *path = item_path("variables", key);
			struct cli_reply cr;
			long st;
			cli_call(ctx, "GET", path ? path : "/", NULL, CALL_TIMEOUT_MS, &cr);
			st = cr.status;
			cli_reply_release(&cr);
			free(path);
			if (st == 200 && !strcmp(action, "skip")) {
				skipped++;
				free(text);
				continue;
			}
			if (st == 200) {
				cli_error("%s: variable \"%s\" exists already "
				          "(--action-on-existing-key fail)",
				          file, key);
				free(text);
				rc = CLI_EXIT_FAILED;
				break;
			}
		}
		rc = text ? var_set(ctx, key, text, false, NULL, NULL) : CLI_EXIT_FAILED;
		free(text);
		if (rc != CLI_EXIT_OK)
			break;
		done++;
	}
	printf("%zu of %zu variables successfully updated%s\n", done, json_object_size(all),
	       skipped ? " (the others exist and were skipped)" : "");
	json_decref(all);
	return rc;
}

/* `export FILE`: every variable, a value that reads as JSON as JSON. */
static int var_export(struct cli_ctx *ctx, const char *file)
{
	struct weir_error err = {0};
	json_t *items, *out = json_object(), *it;
	size_t i, masked = 0;
	char *text;
	int rc = list_all(ctx, "variables", &items);

	if (rc != CLI_EXIT_OK) {
		json_decref(out);
		return rc;
	}
	json_array_foreach(items, i, it)
	{
		const char *value = cli_json_str(it, "value", "");
		json_t *j;
		/* a secret variable's value is never answered (docs/security.md):
		 * "***" in the file would overwrite it at an import */
		if (!strcmp(value, "***")) {
			masked++;
			continue;
		}
		j = json_loads(value, JSON_DECODE_ANY, NULL);
		json_object_set_new(out, cli_json_str(it, "key", "?"), j ? j : json_string(value));
	}
	text = json_dumps(out, JSON_INDENT(4) | JSON_SORT_KEYS);
	if (!text || fs_write_file_atomic(file, text, strlen(text), 0600, &err) < 0) {
		cli_error("%s: %s", file, text ? err.msg : "out of memory");
		rc = CLI_EXIT_FAILED;
	} else {
		printf("%zu variables successfully exported to %s\n", json_object_size(out), file);
		if (masked)
			printf("%zu secret variables left out: the server shows them as ***\n",
			       masked);
	}
	free(text);
	json_decref(items);
	json_decref(out);
	return rc;
}

int cli_variables_main(int argc, char **argv, const struct cli_globals *g0)
{
	static const char *const names[] = {
	    "--description", "--default", "-o", "--output", "--action-on-existing-key", NULL};
	static const char *const bools[] = {"--json", "-j", NULL};
	const char *vals[5] = {0};
	bool on[2] = {false, false}, json_out;
	struct cli_globals g = *g0;
	struct weir_error err = {0};
	struct cli_ctx ctx = {0};
	const char *pos[2] = {0};
	size_t n_pos, want;
	const char *sub;
	int rc;

	if (argc < 2 || cli_flag_is_help(argv[1])) {
		cli_variables_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? CLI_EXIT_USAGE : CLI_EXIT_OK;
	}
	sub = argv[1];
	want = !strcmp(sub, "list") ? 0 : !strcmp(sub, "set") ? 2 : 1;
	if (strcmp(sub, "set") && strcmp(sub, "get") && strcmp(sub, "list") &&
	    strcmp(sub, "delete") && strcmp(sub, "import") && strcmp(sub, "export")) {
		cli_error("no command \"variables %s\"", sub);
		cli_variables_usage(stderr);
		return CLI_EXIT_USAGE;
	}
	rc = parse(argc, argv, names, vals, bools, on, pos, want, &n_pos, &g, cli_variables_usage);
	if (rc != 0)
		return rc > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
	if (n_pos < want) {
		cli_error("variables %s needs %s", sub,
		          want == 2                                          ? "a key and a value"
		          : !strcmp(sub, "import") || !strcmp(sub, "export") ? "a file"
		                                                             : "a key");
		return CLI_EXIT_USAGE;
	}
	if (output_json(vals[2] ? vals[2] : vals[3], &json_out) < 0)
		return CLI_EXIT_USAGE;
	if (cli_ctx_init(&ctx, &g, &err) < 0) {
		cli_error("%s", err.msg);
		return CLI_EXIT_FAILED;
	}
	bool json = on[0] || on[1];
	if (!strcmp(sub, "set")) {
		rc = var_set(&ctx, pos[0], pos[1], json, vals[0], NULL);
		if (rc == CLI_EXIT_OK)
			printf("variable %s set\n", pos[0]);
	} else if (!strcmp(sub, "get")) {
		rc = var_get(&ctx, pos[0], json, vals[1]);
	} else if (!strcmp(sub, "list")) {
		rc = var_list(&ctx, json_out);
	} else if (!strcmp(sub, "delete")) {
		rc = delete_item(&ctx, "variables", "variable", pos[0]);
	} else if (!strcmp(sub, "import")) {
		rc = var_import(&ctx, pos[0], vals[4]);
	} else {
		rc = var_export(&ctx, pos[0]);
	}
	cli_ctx_release(&ctx);
	return rc;
}
