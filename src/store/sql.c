/* sql.c: the store's SQLite error, preparing and running a statement,
 * collecting a SELECT's rows, and binding and reading with the store's
 * sentinels. */
#include "store/sql.h"

#include "lib/grow.h"
#include "lib/log.h"

#include <stdio.h>
#include <sys/statvfs.h>

#include <stdlib.h>
#include <string.h>

int sql_error_in(sqlite3 *db, const char *path, const char *what, enum weir_error_kind kind,
                 struct weir_error *err)
{
	int code = sqlite3_extended_errcode(db) & 0xff;
	const char *file = path ? path : sqlite3_db_filename(db, "main");

	if (!file || !*file)
		file = ":memory:";
	if (code == SQLITE_FULL) {
		sql_space_lost(file);
		return weir_error_set(err, WEIR_E_UNAVAILABLE,
		                      "store %s: %s: the disk is full (%s): nothing was stored; "
		                      "try again once space is freed",
		                      file, what, sqlite3_errmsg(db));
	}
	if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
		kind = WEIR_E_UNAVAILABLE;
	return weir_error_set(err, kind, "store%s%s: %s: %s", path ? " " : "", path ? path : "",
	                      what, sqlite3_errmsg(db));
}

/* sql_error, naming the store's file `path` when not NULL. */
static int db_error_at(sqlite3 *db, const char *path, const char *what, struct weir_error *err)
{
	int code = sqlite3_extended_errcode(db) & 0xff;

	return sql_error_in(db, path, what,
	                    code == SQLITE_CONSTRAINT ? WEIR_E_CONFLICT : WEIR_E_INTERNAL, err);
}

int sql_error(sqlite3 *db, const char *what, struct weir_error *err)
{
	return db_error_at(db, NULL, what, err);
}

/* ---- a full disk ---- */

/* Free bytes a file system must have again before "space returned". */
#define SPACE_BACK_MIN (1u << 20)

static struct {
	bool short_;     /* logged as full, not yet as back */
	uint64_t losses; /* writes that found the disk full */
} space;

void sql_space_lost(const char *path)
{
	space.losses++;
	if (space.short_)
		return;
	space.short_ = true;
	log_error("store %s: the disk is full: changes are refused (503) and nothing more is "
	          "stored until space is freed; reads go on",
	          path);
}

bool sql_space_short(void)
{
	return space.short_;
}

uint64_t sql_space_losses(void)
{
	return space.losses;
}

void sql_space_back(const char *path)
{
	char dir[4096];
	struct statvfs fs;
	const char *slash;

	if (!space.short_)
		return;
	slash = strrchr(path, '/');
	snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	if (statvfs(dir[0] ? dir : "/", &fs) == 0 &&
	    (uint64_t)fs.f_bavail * fs.f_frsize < SPACE_BACK_MIN)
		return;
	space.short_ = false;
	log_info("store %s: space returned: changes are stored again", path);
}

int sql_collect(sqlite3_stmt *st, const struct sql_rows *k, const char *path, const char *what,
                void *rows_out, size_t *n, struct weir_error *err)
{
	char *a = NULL;
	void *result = NULL;
	size_t len = 0, cap = 0;
	int r, rr = 0;

	memcpy(rows_out, &result, sizeof(result));
	*n = 0;
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		if (grow_array(&a, len + 1, &cap, k->size) < 0) {
			rr = -1;
			break;
		}
		char *row = memset(a + len * k->size, 0, k->size);
		if ((rr = k->read(st, row)) < 0) {
			k->release(row);
			break;
		}
		len++;
	}
	if (r == SQLITE_DONE) {
		sqlite3_reset(st);
		result = a;
		memcpy(rows_out, &result, sizeof(result));
		*n = len;
		return 0;
	}
	if (rr == -2)
		weir_error_set(err, WEIR_E_INTERNAL,
		               "store%s%s: %s: a state or cause this weir does not know",
		               path ? " " : "", path ? path : "", what);
	else if (rr < 0)
		weir_error_set(err, WEIR_E_INTERNAL, "store%s%s: %s: out of memory",
		               path ? " " : "", path ? path : "", what);
	else
		db_error_at(sqlite3_db_handle(st), path, what, err); /* before the reset */
	sqlite3_reset(st);
	for (size_t i = 0; i < len; i++)
		k->release(a + i * k->size);
	free(a);
	return -1;
}

sqlite3_stmt *sql_prepare(sqlite3 *db, const char *sql, const char *what, struct weir_error *err)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sql_error(db, what, err);
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* Steps st to its end; the error is read before st is finalized or reset. */
static int run(sqlite3 *db, sqlite3_stmt *st, bool kept, const char *what, int *changes,
               struct weir_error *err)
{
	int rc = sqlite3_step(st);

	if (rc != SQLITE_DONE)
		sql_error(db, what, err);
	if (kept)
		sqlite3_reset(st);
	else
		sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	if (changes)
		*changes = sqlite3_changes(db);
	return 0;
}

int sql_run(sqlite3 *db, sqlite3_stmt *st, const char *what, int *changes, struct weir_error *err)
{
	return run(db, st, false, what, changes, err);
}

int sql_run_kept(sqlite3 *db, sqlite3_stmt *st, const char *what, int *changes,
                 struct weir_error *err)
{
	return run(db, st, true, what, changes, err);
}

void sql_bind_ti_key(sqlite3_stmt *st, int at, const char *dag_id, const char *run_id,
                     const char *task_id, int map_index)
{
	sql_bind_text(st, at, dag_id);
	sql_bind_text(st, at + 1, run_id);
	sql_bind_text(st, at + 2, task_id);
	sqlite3_bind_int(st, at + 3, map_index);
}

bool sql_name_in(const char *name, const char *const *names, size_t n)
{
	for (size_t i = 0; name && i < n; i++) {
		if (strcmp(name, names[i]) == 0)
			return true;
	}
	return false;
}

void sql_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_STATIC);
}

void sql_bind_text_or_null(sqlite3_stmt *st, int i, const char *v)
{
	if (v && *v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
	else
		sqlite3_bind_null(st, i);
}

void sql_bind_pos_or_null(sqlite3_stmt *st, int i, int64_t v)
{
	if (v > 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

char *sql_col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);
	return strdup(t ? (const char *)t : "");
}

int64_t sql_col_i64(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, i);
}
