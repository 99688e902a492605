/* driver.h: the one interface every engine's driver offers (PostgreSQL,
 * MariaDB/MySQL, ClickHouse, SQLite; Redis and files are targets and
 * sources of their own, redis.h and file.h).
 *
 * A driver opens from a struct connection, runs one statement with bound
 * parameters (`:name` in the text, sqltext.h), streaming the rows it
 * returns to a callback one at a time, so memory stays flat whatever the
 * row count; it loads rows into a table in batches (PostgreSQL through
 * COPY FROM STDIN), and wraps work in a transaction.  Errors carry the
 * database's own words ("postgres: ERROR: relation \"x\" does not exist"),
 * never the password.
 *
 * Rows and columns handed to callbacks are borrowed for the call only.
 */
#ifndef WEIR_DATA_DRIVER_H
#define WEIR_DATA_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data/sqltext.h"
#include "lib/error.h"
#include "model/connection.h"

/* A column's type as far as a target needs it to create a table. */
enum data_type {
	DATA_TEXT = 0,
	DATA_INT,
	DATA_FLOAT,
};

struct data_columns {
	size_t n;
	char **names;
	enum data_type *types;
};

/* One row: v[i] NULL is SQL NULL; len[i] its length otherwise. */
struct data_row {
	size_t n;
	const char *const *v;
	const size_t *len;
};

/* What a statement's rows go to; either function may be NULL. */
struct data_rows_cb {
	int (*columns)(void *arg, const struct data_columns *cols, struct weir_error *err);
	int (*row)(void *arg, const struct data_row *row, struct weir_error *err);
	void *arg;
};

struct data_conn;

struct data_ops {
	enum sql_dialect dialect;
	/* One statement.  Rows it returns go to cb (if any); *count gets the
	 * rows returned, or changed when it returns none (-1: unknown). */
	int (*run)(struct data_conn *c, const char *sql, const struct data_params *p,
	           const struct data_rows_cb *cb, int64_t *count, struct weir_error *err);
	/* Loading rows into an existing table: begin, a row at a time (batched
	 * by the driver), end (flushes; the rows are in once it returns, inside
	 * the transaction if one is open). */
	int (*load_begin)(struct data_conn *c, const char *table, const struct data_columns *cols,
	                  struct weir_error *err);
	int (*load_row)(struct data_conn *c, const struct data_row *row, struct weir_error *err);
	int (*load_end)(struct data_conn *c, struct weir_error *err);
	void (*close)(struct data_conn *c);
};

struct data_conn {
	const struct data_ops *ops;
	enum conn_kind kind;
	char *id;     /* the connection's id, for messages */
	size_t batch; /* rows per batch when loading (>= 1) */
	bool in_tx;   /* data_begin() was called and not yet ended */
};

/* Opens the connection c names.  NULL with err (the server's words for a
 * refused login) for a kind weir does not drive as a database.  Connecting
 * gives up after 10 s; statements then run as long as they take. */
struct data_conn *data_open(const struct connection *c, struct weir_error *err);
/* The same with connecting and logging in bounded by timeout_ms (> 0; 0
 * is data_open()), for a test of the connection (PostgreSQL's
 * connect_timeout, MariaDB's connect and read timeouts, ClickHouse's
 * answer to the login's SELECT 1). */
struct data_conn *data_open_timed(const struct connection *c, long timeout_ms,
                                  struct weir_error *err);
void data_close(struct data_conn *c);

int data_run(struct data_conn *c, const char *sql, const struct data_params *p,
             const struct data_rows_cb *cb, int64_t *count, struct weir_error *err);
/* A statement of weir's own, without parameters or rows. */
int data_exec(struct data_conn *c, const char *sql, struct weir_error *err);
/* BEGIN / COMMIT / ROLLBACK (ClickHouse has no transactions: no-ops). */
int data_begin(struct data_conn *c, struct weir_error *err);
int data_commit(struct data_conn *c, struct weir_error *err);
void data_rollback(struct data_conn *c);

/* The connection `id` from the task's environment (WEIR_CONN_<ID>), into
 * *out.  -1 with err naming the variable when it is not set or not a URI. */
int data_conn_from_env(const char *id, struct connection *out, struct weir_error *err);

/* Each engine's opener (pg.c, mysql.c, clickhouse.c, sqlite.c); timeout_ms
 * as data_open_timed()'s (SQLite opens a file: none). */
struct data_conn *data_pg_open(const struct connection *c, long timeout_ms, struct weir_error *err);
struct data_conn *data_mysql_open(const struct connection *c, long timeout_ms,
                                  struct weir_error *err);
struct data_conn *data_clickhouse_open(const struct connection *c, long timeout_ms,
                                       struct weir_error *err);
struct data_conn *data_sqlite_open(const struct connection *c, struct weir_error *err);

/* Columns: helpers for drivers. */
int data_columns_add(struct data_columns *cols, const char *name, enum data_type t);
void data_columns_release(struct data_columns *cols);

#endif
