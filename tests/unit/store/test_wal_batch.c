/* test_wal_batch.c: the VFS that writes a commit's WAL frames in one write
 * (store/wal_batch.h), against real SQLite files: what it commits is what a
 * reader on the plain VFS sees after each commit, what a restart finds
 * after the process died without closing, and a database SQLite finds
 * whole. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/wal_batch.h"
#include "store_tmp.h"

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		fail_msg("%s: %s", sql, msg ? msg : sqlite3_errstr(rc));
}

static sqlite3 *open_db(const char *path, const char *vfs)
{
	sqlite3 *db = NULL;

	assert_int_equal(
	    sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, vfs), SQLITE_OK);
	sqlite3_busy_timeout(db, 5000);
	exec_ok(db, "PRAGMA journal_mode = WAL");
	exec_ok(db, "PRAGMA synchronous = NORMAL");
	return db;
}

static int64_t one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	int64_t v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void whole(sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL),
	                 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
}

/* Commit i: a row of a size that moves (a byte to past the buffer's
 * 120 KiB, and 3 MiB every 50th, so a commit spills its pages and writes
 * in pieces),
 * and an update of an earlier row (a page written again). */
static void commit_one(sqlite3 *db, int i, int64_t *bytes)
{
	char sql[256];
	int size = i % 50 == 49 ? 3 * 1024 * 1024 : 1 + (i * 7919) % 200000;

	exec_ok(db, "BEGIN");
	snprintf(sql, sizeof sql, "INSERT INTO t (k, v) VALUES (%d, randomblob(%d))", i, size);
	exec_ok(db, sql);
	if (i > 0) {
		snprintf(sql, sizeof sql, "UPDATE t SET n = n + 1 WHERE k = %d", i / 2);
		exec_ok(db, sql);
	}
	exec_ok(db, "COMMIT");
	*bytes += size;
}

static void test_reader_sees_each_commit(void **state)
{
	char dir[256], path[300];
	const char *vfs = wal_batch_vfs();
	sqlite3 *w, *r;
	int64_t bytes = 0;

	(void)state;
	assert_non_null(vfs);
	assert_int_equal(store_tmp_make(dir, sizeof dir, path, sizeof path, "weir-walb"), 0);
	w = open_db(path, vfs);
	exec_ok(w, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB, n INTEGER DEFAULT 0)");
	r = open_db(path, NULL);
	for (int i = 0; i < 200; i++) {
		commit_one(w, i, &bytes);
		assert_int_equal(one(r, "SELECT count(*) FROM t"), i + 1);
		assert_int_equal(one(r, "SELECT sum(length(v)) FROM t"), bytes);
		assert_int_equal(one(r, "SELECT sum(n) FROM t"), i);
		if (i % 64 == 63)
			exec_ok(w, "PRAGMA wal_checkpoint(RESTART)"); /* the log begins again */
	}
	whole(r);
	sqlite3_close(r);
	sqlite3_close(w);
	r = open_db(path, NULL);
	assert_int_equal(one(r, "SELECT count(*) FROM t"), 200);
	assert_int_equal(one(r, "SELECT sum(length(v)) FROM t"), bytes);
	whole(r);
	sqlite3_close(r);
	store_tmp_remove(dir, path);
}

static void test_commits_survive_a_death(void **state)
{
	char dir[256], path[300];
	const char *vfs = wal_batch_vfs();
	int64_t bytes = 0;
	int status = 0;
	pid_t pid;
	sqlite3 *db;

	(void)state;
	assert_int_equal(store_tmp_make(dir, sizeof dir, path, sizeof path, "weir-walb"), 0);
	db = open_db(path, vfs);
	exec_ok(db, "CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB, n INTEGER DEFAULT 0)");
	exec_ok(db, "PRAGMA wal_autocheckpoint = 0"); /* everything stays in the log */
	sqlite3_close(db);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int64_t b = 0;
		db = open_db(path, vfs);
		exec_ok(db, "PRAGMA wal_autocheckpoint = 0");
		for (int i = 0; i < 120; i++)
			commit_one(db, i, &b);
		_exit(0); /* no close, no checkpoint: only the log holds the commits */
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 0; i < 120; i++)
		bytes += i % 50 == 49 ? 3 * 1024 * 1024 : 1 + (i * 7919) % 200000;
	db = open_db(path, NULL);
	assert_int_equal(one(db, "SELECT count(*) FROM t"), 120);
	assert_int_equal(one(db, "SELECT sum(length(v)) FROM t"), bytes);
	assert_int_equal(one(db, "SELECT sum(n) FROM t"), 119);
	whole(db);
	sqlite3_close(db);
	store_tmp_remove(dir, path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_reader_sees_each_commit),
	    cmocka_unit_test(test_commits_survive_a_death),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
