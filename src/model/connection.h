/* connection.h: a connection to a store or service (Airflow's Connection):
 * its fields, its types, and its URI form.
 *
 * A connection has an id, a type ("postgres", "mysql", "clickhouse",
 * "redis", "sqlite", "http", "fs", "smtp", or any other name, kept as
 * written), host, port, login, password, schema and extra (a JSON object).
 * The URI form is Airflow's: `TYPE://LOGIN:PASSWORD@HOST:PORT/SCHEMA?K=V`,
 * every part percent-encoded, extra as query parameters (all string values)
 * or as one `__extra__=<JSON>` parameter.  The schemes "postgresql",
 * "mariadb" and "file" read as the types postgres, mysql and fs, and a '-'
 * in a scheme reads as '_' (Airflow's rule); "https" stays its own type.
 *
 * SQLite and fs name a path: the host when set (Airflow's `sqlite://%2Fx.db`),
 * else "/" followed by the schema, so `sqlite:///data/x.db` is /data/x.db
 * (connection_path()).
 *
 * Ownership: a struct connection owns its strings and its extra;
 * connection_release() frees them.  Errors: -1 with err (WEIR_E_INVALID)
 * naming the part of the URI that is wrong; the message never holds the
 * password.
 */
#ifndef WEIR_MODEL_CONNECTION_H
#define WEIR_MODEL_CONNECTION_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "lib/error.h"
#include "lib/strbuf.h"
#include "lib/strvec.h"

/* The types weir itself drives; any other type is CONN_OTHER (stored and
 * served, given to the tasks that list it, but never driven by weir). */
enum conn_kind {
	CONN_OTHER = 0,
	CONN_POSTGRES,
	CONN_MYSQL,
	CONN_CLICKHOUSE,
	CONN_REDIS,
	CONN_SQLITE,
	CONN_HTTP,
	CONN_FS,
	CONN_SMTP,
};

struct connection {
	char *id;
	char *type; /* as written, after the aliases above ("postgres") */
	enum conn_kind kind;
	char *description; /* may be NULL */
	char *host;        /* may be NULL */
	int port;          /* 0: none given */
	char *login;       /* may be NULL */
	char *password;    /* may be NULL */
	char *schema;      /* may be NULL */
	json_t *extra;     /* an object, or NULL */
};

/* Longest id; ids are [A-Za-z0-9_.-], 1..CONNECTION_ID_MAX characters. */
#define CONNECTION_ID_MAX 250

/* The kind a type name stands for (after aliases; any case).  *canonical
 * (if not NULL) gets the name to store: "postgres" for "postgresql",
 * "mysql" for "mariadb", "fs" for "file", `type` itself otherwise. */
enum conn_kind connection_kind_of(const char *type, const char **canonical);

/* 0 if `id` is a valid connection id, else -1 with err saying why. */
int connection_check_id(const char *id, struct weir_error *err);

/* Parses `uri` into *out (zeroed first) with the given id.  0, or -1 with
 * err; *out holds nothing on failure. */
int connection_from_uri(const char *id, const char *uri, struct connection *out,
                        struct weir_error *err);

/* Sets the fields `obj` holds, in Airflow's Connection JSON: conn_type
 * (a non-empty string), description, host, login, password, schema
 * (strings; null clears), port (0..65535; null clears) and extra (an
 * object, or a string holding one, as Airflow's API sends it; null or ""
 * clears).  "connection_id" is skipped (the caller checks it); any other key
 * is an error naming it.  0, or -1 with err (c may then be half changed:
 * apply to a copy). */
int connection_apply_json(struct connection *c, const json_t *obj, struct weir_error *err);

/* A connection `id` from Airflow's Connection JSON (conn_type required).
 * 0, or -1 with err; *out holds nothing on failure. */
int connection_from_json(const char *id, const json_t *obj, struct connection *out,
                         struct weir_error *err);

/* The URI form of c (newly allocated, NULL when out of memory).  With
 * with_password false the password is left out, even when set. */
char *connection_to_uri(const struct connection *c, bool with_password);

/* A deep copy of src into *dst.  0, or -1 when out of memory. */
int connection_copy(struct connection *dst, const struct connection *src);

/* The path a sqlite or fs connection names (see above); NULL when neither
 * host nor schema is set.  Newly allocated. */
char *connection_path(const struct connection *c);

/* The environment variable that carries connection `id`: "WEIR_CONN_" and
 * the id upper-cased, with '.' and '-' as '_' (Airflow's AIRFLOW_CONN_<ID>).
 * Newly allocated; NULL when out of memory. */
char *connection_env_name(const char *id);

/* The same rule after another prefix ("WEIR_VAR_" for variables). */
char *connection_env_name_with(const char *prefix, const char *id);

/* The id an environment name after its prefix stands for: lower-cased
 * (Airflow's rule: AIRFLOW_CONN_MY_DB is my_db), into out (size bytes).
 * WEIR_CONN_MY_DB names "my_db", and every id that upper-cases to MY_DB
 * (My_Db, my-db, my.db) reads that variable. */
void connection_id_of_env(const char *suffix, char *out, size_t size);

/* Whether a field name (of an extra) is one whose value is a secret:
 * Airflow's sensitive names (password, secret, token, api_key, apikey,
 * access_token, authorization, passphrase, passwd, private_key,
 * keyfile_dict, service_account), any case, anywhere in the name.  Such
 * values are masked like the password. */
bool connection_secret_name(const char *name);
/* Adds names to that list (Airflow's sensitive_var_conn_names: a comma-
 * separated text; blanks around a name are dropped, empty names ignored).
 * Process-wide: the server calls it once at start, before its threads;
 * reset() drops them.  0, or -1 with err (out of memory). */
int connection_secret_names_add(const char *names, struct weir_error *err);
void connection_secret_names_reset(void);

/* The extra as compact JSON text with sorted keys, the values of secret-like
 * fields as "***"; NULL when there is no extra (or out of memory). */
char *connection_extra_masked(const struct connection *c);

/* `text` (a server's or a driver's message about c) with c's password shown
 * as "***" wherever it stands; a new string (a copy when c has no password),
 * NULL when out of memory. */
char *connection_mask_text(const struct connection *c, const char *text);

/* Adds connection `id` to a task's list of the connections it gets
 * (`connections:` of a DAG task or a job spec; a sql:/transfer: task adds
 * the ones it names): checked with connection_check_id(), and left out when
 * an id naming the same WEIR_CONN_<ID> is there already.  0, or -1 with
 * err. */
int connection_list_add(struct strvec *ids, const char *id, struct weir_error *err);
/* The same from a JSON list of ids (a DAG file's or a spec's
 * `connections:`); errors name the item ("[2]: ..."). */
int connection_list_read(struct strvec *ids, const json_t *list, struct weir_error *err);

/* The URL an http connection names, into url: "http://" or "https://",
 * HOST, ":PORT" when port is set and the host has none, then the path the
 * host may carry (Airflow's HTTP connections hold "https://host/base" in
 * host).  https when the host says so, or the type or the schema is
 * "https".  0, or -1 with err (WEIR_E_INVALID: no host; out of memory). */
int connection_http_url(const struct connection *c, struct strbuf *url, struct weir_error *err);

/* The extra's "ca_file" (a PEM file of CAs trusted beside the system's,
 * for a TLS peer under a private CA); NULL when not a string or unset. */
const char *connection_ca_file(const struct connection *c);

void connection_release(struct connection *c);
/* Releases rows[0..n) and frees the array; NULL is a no-op. */
void connections_free(struct connection *rows, size_t n);

#endif
