/* notify_store.c: the notifications and sla_misses tables
 * (notify_store.h).  Statements are prepared once on the store's
 * connection; optional filters are bound parameters ("?1 IS NULL OR ...")
 * so every list is one statement. */
#include "store/notify_store.h"
#include "store/sql.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define N_COLS                                                                                     \
	"id, dag_id, run_id, task_id, map_index, try_number, event, target_kind, target, state,"   \
	" attempts, max_attempts, last_error, created_at, updated_at, next_attempt_at"
#define N_WHERE                                                                                    \
	" WHERE (?1 IS NULL OR dag_id = ?1) AND (?2 IS NULL OR run_id = ?2)"                       \
	" AND (?3 IS NULL OR state = ?3)"
#define S_COLS                                                                                     \
	"dag_id, run_id, task_id, map_index, due_at, recorded_at, state, logical_date, "           \
	"description,"                                                                             \
	" notified, email_sent"
#define S_WHERE                                                                                    \
	" WHERE (?1 IS NULL OR dag_id = ?1) AND (?2 IS NULL OR run_id = ?2)"                       \
	" AND (?3 IS NULL OR (task_id = ?3 AND map_index = ?4))"

enum ns_stmt {
	NS_ADD,
	NS_UPDATE,
	NS_LIST,
	NS_COUNT,
	NS_FAIL_PENDING,
	NS_SLA_ADD,
	NS_SLA_NOTIFIED,
	NS_SLA_LIST,
	NS_SLA_COUNT,
	NS_SLA_ONE,
	NS_SLA_RUN_HAS,
	NS_N,
};

static const char *const ns_sql[NS_N] = {
    [NS_ADD] = "INSERT INTO notifications (dag_id, run_id, task_id, map_index, try_number, event,"
               " target_kind, target, state, attempts, max_attempts, last_error, created_at,"
               " updated_at, next_attempt_at) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,"
               "?13,?14)",
    [NS_UPDATE] = "UPDATE notifications SET state = ?2, attempts = ?3, last_error = ?4,"
                  " next_attempt_at = ?5, updated_at = ?6 WHERE id = ?1",
    [NS_LIST] =
        "SELECT " N_COLS " FROM notifications" N_WHERE " ORDER BY id DESC LIMIT ?4 OFFSET ?5",
    [NS_COUNT] = "SELECT count(*) FROM notifications" N_WHERE,
    [NS_FAIL_PENDING] = "UPDATE notifications SET state = 'failed', last_error = ?1,"
                        " next_attempt_at = NULL, updated_at = ?2 WHERE state = 'pending'",
    [NS_SLA_ADD] = "INSERT OR IGNORE INTO sla_misses (" S_COLS ")"
                   " VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)",
    [NS_SLA_NOTIFIED] = "UPDATE sla_misses SET notified = 1, email_sent = ?5 WHERE dag_id = ?1"
                        " AND run_id = ?2 AND task_id = ?3 AND map_index = ?4",
    [NS_SLA_LIST] = "SELECT " S_COLS " FROM sla_misses" S_WHERE
                    " ORDER BY recorded_at DESC, task_id LIMIT ?5 OFFSET ?6",
    [NS_SLA_COUNT] = "SELECT count(*) FROM sla_misses" S_WHERE,
    /* one TI's (its key whole): a look-up by the primary key, where S_WHERE's
     * "?1 IS NULL OR" terms scan the table and sort (a TI listing asks this
     * once per TI) */
    [NS_SLA_ONE] = "SELECT " S_COLS " FROM sla_misses WHERE dag_id = ?1 AND run_id = ?2"
                   " AND task_id = ?3 AND map_index = ?4 LIMIT ?5 OFFSET ?6",
    /* whether a run has any (the primary key's first two columns) */
    [NS_SLA_RUN_HAS] = "SELECT 1 FROM sla_misses WHERE dag_id = ?1 AND run_id = ?2 LIMIT 1",
};

static const char *const state_names[] = {"pending", "sent", "failed"};

struct notify_store {
	sqlite3 *db;
	sqlite3_stmt *st[NS_N];
};

const char *notify_state_name(enum notify_state s)
{
	return (unsigned)s < 3 ? state_names[s] : "failed";
}

int notify_state_from_name(const char *name, enum notify_state *out)
{
	for (int i = 0; i < 3; i++)
		if (name && !strcmp(name, state_names[i])) {
			*out = (enum notify_state)i;
			return 0;
		}
	return -1;
}

struct notify_store *notify_store_create(struct store *s, struct weir_error *err)
{
	struct notify_store *ns = calloc(1, sizeof *ns);

	if (!ns) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "store: out of memory");
		return NULL;
	}
	ns->db = store_db(s);
	return ns;
}

void notify_store_destroy(struct notify_store *ns)
{
	if (!ns)
		return;
	for (int i = 0; i < NS_N; i++)
		sqlite3_finalize(ns->st[i]);
	free(ns);
}

static sqlite3_stmt *stmt(struct notify_store *ns, enum ns_stmt id, struct weir_error *err)
{
	if (!ns->st[id] && sqlite3_prepare_v3(ns->db, ns_sql[id], -1, SQLITE_PREPARE_PERSISTENT,
	                                      &ns->st[id], NULL) != SQLITE_OK) {
		sql_error(ns->db, "preparing a statement", err);
		return NULL;
	}
	sqlite3_reset(ns->st[id]);
	sqlite3_clear_bindings(ns->st[id]);
	return ns->st[id];
}

int notify_store_add(struct notify_store *ns, const struct notify_row *r, int64_t *id,
                     struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_ADD, err);

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, r->dag_id, r->run_id, r->task_id, r->map_index);
	sqlite3_bind_int(st, 5, r->try_number);
	sql_bind_text(st, 6, r->event);
	sql_bind_text(st, 7, r->target_kind);
	sql_bind_text(st, 8, r->target);
	sql_bind_text(st, 9, notify_state_name(r->state));
	sqlite3_bind_int(st, 10, r->attempts);
	sqlite3_bind_int(st, 11, r->max_attempts);
	sql_bind_text(st, 12, r->last_error);
	sqlite3_bind_int64(st, 13, r->created_at);
	sql_bind_pos_or_null(st, 14, r->next_attempt_at);
	if (sql_run_kept(ns->db, st, "adding a notification", NULL, err) < 0)
		return -1;
	*id = sqlite3_last_insert_rowid(ns->db);
	return 0;
}

int notify_store_update(struct notify_store *ns, int64_t id, enum notify_state state, int attempts,
                        const char *last_error, int64_t next_attempt_at, int64_t now,
                        struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_UPDATE, err);

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	sql_bind_text(st, 2, notify_state_name(state));
	sqlite3_bind_int(st, 3, attempts);
	sql_bind_text(st, 4, last_error);
	sql_bind_pos_or_null(st, 5, next_attempt_at);
	sqlite3_bind_int64(st, 6, now);
	return sql_run_kept(ns->db, st, "updating a notification", NULL, err);
}

int notify_store_fail_pending(struct notify_store *ns, const char *why, int64_t now,
                              struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_FAIL_PENDING, err);

	if (!st)
		return -1;
	sql_bind_text(st, 1, why);
	sqlite3_bind_int64(st, 2, now);
	return sql_run_kept(ns->db, st, "failing pending notifications", NULL, err);
}

static int count(struct notify_store *ns, sqlite3_stmt *st, int64_t *total, struct weir_error *err)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		*total = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return rc == SQLITE_ROW ? 0 : sql_error(ns->db, "counting", err);
}

static void bind_nfilter(sqlite3_stmt *st, const struct notify_query *q)
{
	sql_bind_text_or_null(st, 1, q->dag_id);
	sql_bind_text_or_null(st, 2, q->run_id);
	sql_bind_text_or_null(st, 3, q->state >= 0 ? notify_state_name(q->state) : NULL);
}

static int read_nrow(sqlite3_stmt *st, struct notify_row *r)
{
	char *state;
	memset(r, 0, sizeof *r);
	r->id = sql_col_i64(st, 0);
	r->dag_id = sql_col_text(st, 1);
	r->run_id = sql_col_text(st, 2);
	r->task_id = sql_col_text(st, 3);
	r->map_index = (int)sql_col_i64(st, 4);
	r->try_number = (int)sql_col_i64(st, 5);
	r->event = sql_col_text(st, 6);
	r->target_kind = sql_col_text(st, 7);
	r->target = sql_col_text(st, 8);
	state = sql_col_text(st, 9);
	if (notify_state_from_name(state, &r->state) < 0)
		r->state = NOTIFY_FAILED;
	free(state);
	r->attempts = (int)sql_col_i64(st, 10);
	r->max_attempts = (int)sql_col_i64(st, 11);
	r->last_error = sql_col_text(st, 12);
	r->created_at = sql_col_i64(st, 13);
	r->updated_at = sql_col_i64(st, 14);
	r->next_attempt_at = sql_col_i64(st, 15);
	return r->dag_id && r->run_id && r->task_id && r->event && r->target_kind && r->target &&
	               r->last_error
	           ? 0
	           : -1;
}

/* Frees what one notify_row holds (also one zeroed or already released). */
static void release_notify_row(void *row)
{
	struct notify_row *r = row;

	free(r->dag_id);
	free(r->run_id);
	free(r->task_id);
	free(r->event);
	free(r->target_kind);
	free(r->target);
	free(r->last_error);
	memset(r, 0, sizeof *r);
}

void notify_rows_free(struct notify_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_notify_row(&rows[i]);
	free(rows);
}

static int read_nrow_v(sqlite3_stmt *st, void *r)
{
	return read_nrow(st, r);
}

/* What a list reads: its two statements, how its filter binds, where
 * limit and offset go, and its rows. */
struct list_kind {
	enum ns_stmt count, list;
	void (*bind)(sqlite3_stmt *, const void *q);
	int page_at; /* the limit's parameter; the offset's follows */
	struct sql_rows rows;
};

static int list_rows(struct notify_store *ns, const struct list_kind *k, const void *q, int limit,
                     int offset, void **rows, size_t *n, int64_t *total, struct weir_error *err)
{
	sqlite3_stmt *st;

	*rows = NULL;
	*n = 0;
	if (total) {
		if (!(st = stmt(ns, k->count, err)))
			return -1;
		k->bind(st, q);
		if (count(ns, st, total, err) < 0)
			return -1;
	}
	if (!(st = stmt(ns, k->list, err)))
		return -1;
	k->bind(st, q);
	sqlite3_bind_int(st, k->page_at, limit > 0 ? limit : 100);
	sqlite3_bind_int(st, k->page_at + 1, offset > 0 ? offset : 0);
	return sql_collect(st, &k->rows, NULL, "listing", rows, n, err);
}

static void bind_nfilter_v(sqlite3_stmt *st, const void *q)
{
	bind_nfilter(st, q);
}

int notify_store_list(struct notify_store *ns, const struct notify_query *q,
                      struct notify_row **rows, size_t *n, int64_t *total, struct weir_error *err)
{
	static const struct list_kind k = {
	    NS_COUNT,
	    NS_LIST,
	    bind_nfilter_v,
	    4,
	    {sizeof(struct notify_row), read_nrow_v, release_notify_row}};

	return list_rows(ns, &k, q, q->limit, q->offset, (void **)rows, n, total, err);
}

/* ---- SLA misses ---- */

int sla_store_add(struct notify_store *ns, const struct sla_miss_row *r, bool *added,
                  struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_SLA_ADD, err);
	int changes;

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, r->dag_id, r->run_id, r->task_id, r->map_index);
	sqlite3_bind_int64(st, 5, r->due_at);
	sqlite3_bind_int64(st, 6, r->recorded_at);
	sql_bind_text(st, 7, r->state);
	sqlite3_bind_int64(st, 8, r->logical_date);
	sql_bind_text(st, 9, r->description);
	sqlite3_bind_int(st, 10, r->notified);
	sqlite3_bind_int(st, 11, r->email_sent);
	if (sql_run_kept(ns->db, st, "recording an SLA miss", &changes, err) < 0)
		return -1;
	*added = changes > 0;
	return 0;
}

int sla_store_set_notified(struct notify_store *ns, const struct sla_miss_row *key,
                           struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_SLA_NOTIFIED, err);

	if (!st)
		return -1;
	sql_bind_ti_key(st, 1, key->dag_id, key->run_id, key->task_id, key->map_index);
	sqlite3_bind_int(st, 5, key->email_sent);
	return sql_run_kept(ns->db, st, "updating an SLA miss", NULL, err);
}

/* Frees what one sla_miss_row holds (also one zeroed or already released). */
static void release_sla_miss_row(void *row)
{
	struct sla_miss_row *r = row;

	free(r->dag_id);
	free(r->run_id);
	free(r->task_id);
	free(r->state);
	free(r->description);
	memset(r, 0, sizeof *r);
}

void sla_miss_rows_free(struct sla_miss_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++)
		release_sla_miss_row(&rows[i]);
	free(rows);
}

static int read_srow(sqlite3_stmt *st, void *p)
{
	struct sla_miss_row *r = p;
	memset(r, 0, sizeof *r);
	r->dag_id = sql_col_text(st, 0);
	r->run_id = sql_col_text(st, 1);
	r->task_id = sql_col_text(st, 2);
	r->map_index = (int)sql_col_i64(st, 3);
	r->due_at = sql_col_i64(st, 4);
	r->recorded_at = sql_col_i64(st, 5);
	r->state = sql_col_text(st, 6);
	r->logical_date = sql_col_i64(st, 7);
	r->description = sql_col_text(st, 8);
	r->notified = sql_col_i64(st, 9) != 0;
	r->email_sent = sql_col_i64(st, 10) != 0;
	return r->dag_id && r->run_id && r->task_id && r->state && r->description ? 0 : -1;
}

static void bind_sfilter(sqlite3_stmt *st, const struct sla_query *q)
{
	sql_bind_text_or_null(st, 1, q->dag_id);
	sql_bind_text_or_null(st, 2, q->run_id);
	sql_bind_text_or_null(st, 3, q->task_id);
	sqlite3_bind_int(st, 4, q->map_index);
}

static void bind_sfilter_v(sqlite3_stmt *st, const void *q)
{
	bind_sfilter(st, q);
}

int sla_store_list(struct notify_store *ns, const struct sla_query *q, struct sla_miss_row **rows,
                   size_t *n, int64_t *total, struct weir_error *err)
{
	static const struct list_kind k = {
	    NS_SLA_COUNT,
	    NS_SLA_LIST,
	    bind_sfilter_v,
	    5,
	    {sizeof(struct sla_miss_row), read_srow, release_sla_miss_row}};
	static const struct list_kind one = {
	    NS_SLA_COUNT,
	    NS_SLA_ONE,
	    bind_sfilter_v,
	    5,
	    {sizeof(struct sla_miss_row), read_srow, release_sla_miss_row}};
	bool key = q->dag_id && q->run_id && q->task_id;

	return list_rows(ns, key ? &one : &k, q, q->limit, q->offset, (void **)rows, n, total, err);
}

int sla_store_run_has(struct notify_store *ns, const char *dag_id, const char *run_id, bool *has,
                      struct weir_error *err)
{
	sqlite3_stmt *st = stmt(ns, NS_SLA_RUN_HAS, err);
	int rc;

	if (!st)
		return -1;
	sql_bind_text(st, 1, dag_id);
	sql_bind_text(st, 2, run_id);
	rc = sqlite3_step(st);
	*has = rc == SQLITE_ROW;
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return sql_error(ns->db, "reading SLA misses", err);
	return 0;
}
