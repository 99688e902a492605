/* Tests of sql_collect (store/sql.h): rows read into a growing array (past
 * its first room), none, and each failure (the reader's out of memory, a
 * name this weir does not know, the database's error) releasing every row
 * read and naming the store and what was done. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sql.h"

struct item {
	int64_t id;
	char *name;
};

static int released; /* rows release_item freed a name of */
static int fail_at;  /* the id whose read fails (0: none) */
static int fail_rc;

static int read_item(sqlite3_stmt *st, void *row)
{
	struct item *it = row;
	it->id = sqlite3_column_int64(st, 0);
	it->name = sql_col_text(st, 1);
	return it->id == fail_at ? fail_rc : 0;
}

static void release_item(void *row)
{
	struct item *it = row;
	released += it->name != NULL;
	free(it->name);
	it->name = NULL;
}

static const struct sql_rows items = {sizeof(struct item), read_item, release_item};

static sqlite3 *db_with(int n)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
	                              "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT);"
	                              "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c"
	                              " WHERE i < 1000) INSERT INTO t SELECT i, 'n' || i FROM c;",
	                              NULL, NULL, NULL),
	                 SQLITE_OK);
	char sql[64];
	snprintf(sql, sizeof sql, "DELETE FROM t WHERE id > %d", n);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	return db;
}

static void test_rows_read(void **state)
{
	(void)state;
	sqlite3 *db = db_with(100); /* past the first room of 16 */
	sqlite3_stmt *st = sql_prepare(db, "SELECT id, name FROM t ORDER BY id", "x", NULL);
	struct item *rows = NULL;
	size_t n = 99;
	struct weir_error err = {0};

	fail_at = 0;
	assert_int_equal(sql_collect(st, &items, "/p", "listing", &rows, &n, &err), 0);
	assert_int_equal(n, 100);
	for (size_t i = 0; i < n; i++) {
		char want[32];
		snprintf(want, sizeof want, "n%zu", i + 1);
		assert_int_equal(rows[i].id, (int64_t)i + 1);
		assert_string_equal(rows[i].name, want);
		release_item(&rows[i]);
	}
	free(rows);
	/* reset: the kept statement runs again */
	assert_int_equal(sql_collect(st, &items, NULL, "listing", &rows, &n, &err), 0);
	assert_int_equal(n, 100);
	for (size_t i = 0; i < n; i++)
		release_item(&rows[i]);
	free(rows);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_no_rows(void **state)
{
	(void)state;
	sqlite3 *db = db_with(0);
	sqlite3_stmt *st = sql_prepare(db, "SELECT id, name FROM t", "x", NULL);
	struct item *rows = (struct item *)&rows;
	size_t n = 7;

	assert_int_equal(sql_collect(st, &items, NULL, "listing", &rows, &n, NULL), 0);
	assert_null(rows);
	assert_int_equal(n, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
}

/* The read of id 40 fails with `rc`: every row read before it and the
 * failed one are released, nothing comes back, err says `says`. */
static void expect_failure(int rc, const char *says)
{
	sqlite3 *db = db_with(100);
	sqlite3_stmt *st = sql_prepare(db, "SELECT id, name FROM t ORDER BY id", "x", NULL);
	struct item *rows = (struct item *)&rows;
	size_t n = 7;
	struct weir_error err = {0};

	fail_at = 40;
	fail_rc = rc;
	released = 0;
	assert_int_equal(sql_collect(st, &items, "/p", "listing things", &rows, &n, &err), -1);
	assert_null(rows);
	assert_int_equal(n, 0);
	assert_int_equal(released, 40);
	assert_int_equal(err.kind, WEIR_E_INTERNAL);
	assert_non_null(strstr(err.msg, "store /p: listing things: "));
	assert_non_null(strstr(err.msg, says));
	fail_at = 0;
	sqlite3_finalize(st);
	sqlite3_close(db);
}

static void test_reader_out_of_memory(void **state)
{
	(void)state;
	expect_failure(-1, "out of memory");
}

static void test_unknown_name(void **state)
{
	(void)state;
	expect_failure(-2, "does not know");
}

static void test_database_error(void **state)
{
	(void)state;
	sqlite3 *db = db_with(100);
	/* abs() of the smallest integer overflows at the 50th row */
	sqlite3_stmt *st = sql_prepare(
	    db, "SELECT id, CASE WHEN id = 50 THEN abs(-9223372036854775807 - 1) ELSE name END"
	        " FROM t ORDER BY id",
	    "x", NULL);
	struct item *rows = NULL;
	size_t n = 0;
	struct weir_error err = {0};

	released = 0;
	assert_int_equal(sql_collect(st, &items, NULL, "listing", &rows, &n, &err), -1);
	assert_null(rows);
	assert_int_equal(released, 49);
	assert_non_null(strstr(err.msg, "store: listing: integer overflow"));
	sqlite3_finalize(st);
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rows_read),
	    cmocka_unit_test(test_no_rows),
	    cmocka_unit_test(test_reader_out_of_memory),
	    cmocka_unit_test(test_unknown_name),
	    cmocka_unit_test(test_database_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
