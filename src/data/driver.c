/* driver.c: opening a connection by its kind, the calls every driver
 * shares, and connections from the task's environment (driver.h). */
#include "data/driver.h"

#include <stdlib.h>
#include <string.h>

struct data_conn *data_open(const struct connection *c, struct weir_error *err)
{
	return data_open_timed(c, 0, err);
}

struct data_conn *data_open_timed(const struct connection *c, long timeout_ms,
                                  struct weir_error *err)
{
	struct data_conn *dc = NULL;

	switch (c->kind) {
	case CONN_POSTGRES:
		dc = data_pg_open(c, timeout_ms, err);
		break;
	case CONN_MYSQL:
		dc = data_mysql_open(c, timeout_ms, err);
		break;
	case CONN_CLICKHOUSE:
		dc = data_clickhouse_open(c, timeout_ms, err);
		break;
	case CONN_SQLITE:
		dc = data_sqlite_open(c, err);
		break;
	default:
		weir_error_set(err, WEIR_E_INVALID,
		               "connection %s is of type %s; sql runs on postgres, mysql, "
		               "clickhouse or sqlite",
		               c->id ? c->id : "?", c->type ? c->type : "?");
		return NULL;
	}
	if (dc) {
		dc->kind = c->kind;
		dc->id = strdup(c->id ? c->id : "");
		if (!dc->batch)
			dc->batch = 10000;
	}
	return dc;
}

void data_close(struct data_conn *c)
{
	char *id;

	if (!c)
		return;
	if (c->in_tx)
		data_rollback(c);
	id = c->id;
	c->ops->close(c);
	free(id);
}

int data_run(struct data_conn *c, const char *sql, const struct data_params *p,
             const struct data_rows_cb *cb, int64_t *count, struct weir_error *err)
{
	static const struct data_params none = {0};
	int64_t n = -1;

	return c->ops->run(c, sql, p ? p : &none, cb, count ? count : &n, err);
}

int data_exec(struct data_conn *c, const char *sql, struct weir_error *err)
{
	return data_run(c, sql, NULL, NULL, NULL, err);
}

int data_begin(struct data_conn *c, struct weir_error *err)
{
	if (c->kind == CONN_CLICKHOUSE)
		return 0;
	if (data_exec(c, c->kind == CONN_MYSQL ? "START TRANSACTION" : "BEGIN", err) < 0)
		return -1;
	c->in_tx = true;
	return 0;
}

int data_commit(struct data_conn *c, struct weir_error *err)
{
	if (!c->in_tx)
		return 0;
	c->in_tx = false;
	return data_exec(c, "COMMIT", err);
}

void data_rollback(struct data_conn *c)
{
	struct weir_error ignored = {0};

	if (!c->in_tx)
		return;
	c->in_tx = false;
	data_exec(c, "ROLLBACK", &ignored);
}

int data_conn_from_env(const char *id, struct connection *out, struct weir_error *err)
{
	char *name = connection_env_name(id);
	const char *uri;
	int rc;

	if (!name)
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	uri = getenv(name);
	if (!uri || !*uri) {
		weir_error_set(err, WEIR_E_INVALID,
		               "connection %s: %s is not set (list the connection in the "
		               "task's connections, or define it)",
		               id, name);
		free(name);
		return -1;
	}
	rc = connection_from_uri(id, uri, out, err);
	if (rc < 0)
		weir_error_prefix(err, "%s", name);
	free(name);
	return rc;
}

int data_columns_add(struct data_columns *cols, const char *name, enum data_type t)
{
	char **n = realloc(cols->names, (cols->n + 1) * sizeof *n);
	enum data_type *ty;

	if (!n)
		return -1;
	cols->names = n;
	ty = realloc(cols->types, (cols->n + 1) * sizeof *ty);
	if (!ty)
		return -1;
	cols->types = ty;
	if (!(n[cols->n] = strdup(name)))
		return -1;
	ty[cols->n++] = t;
	return 0;
}

void data_columns_release(struct data_columns *cols)
{
	for (size_t i = 0; i < cols->n; i++)
		free(cols->names[i]);
	free(cols->names);
	free(cols->types);
	memset(cols, 0, sizeof *cols);
}
