/* notifier_ops.c: the notification and SLA-miss rows as the API shows them
 * (weir's own routes, api/notify_routes.h), and a TI's `sla_miss`. */
#include "server/notifier.h"
#include "server/notifier_internal.h"

#include <stdlib.h>
#include <string.h>

#include "api/notify_api.h"
#include "lib/clock.h"

static json_t *date_or_null(int64_t ms)
{
	char buf[40];

	if (ms <= 0)
		return json_null();
	clock_format_airflow(ms, buf, sizeof buf);
	return json_string(buf);
}

json_t *notifier_row_json(const struct notify_row *r)
{
	return json_pack(
	    "{s:I, s:s, s:s, s:s?, s:i, s:i, s:s, s:s, s:s, s:s, s:i, s:i, s:s, s:o, s:o,"
	    " s:o}",
	    "id", (json_int_t)r->id, "dag_id", r->dag_id, "dag_run_id", r->run_id, "task_id",
	    r->task_id[0] ? r->task_id : NULL, "map_index", r->map_index, "try_number",
	    r->try_number, "event", r->event, "target_kind", r->target_kind, "target", r->target,
	    "state", notify_state_name(r->state), "attempts", r->attempts, "max_attempts",
	    r->max_attempts, "last_error", r->last_error, "created_at", date_or_null(r->created_at),
	    "updated_at", date_or_null(r->updated_at), "next_attempt_at",
	    date_or_null(r->next_attempt_at));
}

/* Airflow's SLAMiss (task_id, dag_id, execution_date, email_sent, timestamp,
 * description, notification_sent), with weir's fields beside them. */
json_t *notifier_sla_json(const struct sla_miss_row *r)
{
	return json_pack(
	    "{s:s, s:s, s:o, s:b, s:o, s:s, s:b, s:s, s:i, s:o, s:o, s:s, s:b}", "task_id",
	    r->task_id, "dag_id", r->dag_id, "execution_date", date_or_null(r->logical_date),
	    "email_sent", r->email_sent, "timestamp", date_or_null(r->recorded_at), "description",
	    r->description, "notification_sent", r->notified, "dag_run_id", r->run_id, "map_index",
	    r->map_index, "due_at", date_or_null(r->due_at), "recorded_at",
	    date_or_null(r->recorded_at), "state_when_missed", r->state, "notified", r->notified);
}

json_t *notifier_ti_sla_miss(struct notifier *n, const char *dag_id, const char *run_id,
                             const char *task_id, int map_index)
{
	struct sla_query q = {.dag_id = dag_id,
	                      .run_id = run_id,
	                      .task_id = task_id,
	                      .map_index = map_index,
	                      .limit = 1};
	struct sla_miss_row *rows = NULL;
	size_t k = 0;
	json_t *o;

	if (!n || sla_store_list(n->ns, &q, &rows, &k, NULL, NULL) < 0 || k == 0)
		return json_null();
	o = notifier_sla_json(&rows[0]);
	sla_miss_rows_free(rows, k);
	return o;
}

bool notifier_run_has_sla_miss(struct notifier *n, const char *dag_id, const char *run_id)
{
	bool has = false;

	if (!n)
		return false;
	return sla_store_run_has(n->ns, dag_id, run_id, &has, NULL) < 0 || has;
}

static json_t *collection(const char *key, json_t *items, int64_t total, struct weir_error *err)
{
	json_t *o =
	    items ? json_pack("{s:o, s:I}", key, items, "total_entries", (json_int_t)total) : NULL;

	if (!o)
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
	return o;
}

static json_t *op_list_notifications(void *ctx, const struct notify_api_query *q,
                                     struct weir_error *err)
{
	struct notifier *n = ctx;
	struct notify_query nq = {.dag_id = q->dag_id,
	                          .run_id = q->run_id,
	                          .state = -1,
	                          .limit = q->limit,
	                          .offset = q->offset};
	struct notify_row *rows = NULL;
	size_t k = 0;
	int64_t total = 0;
	enum notify_state st;
	json_t *items;

	if (q->state) {
		if (notify_state_from_name(q->state, &st) < 0) {
			weir_error_set(err, WEIR_E_INVALID,
			               "state \"%.40s\": expected pending, sent or failed",
			               q->state);
			return NULL;
		}
		nq.state = (int)st;
	}
	if (notify_store_list(n->ns, &nq, &rows, &k, &total, err) < 0)
		return NULL;
	items = json_array();
	for (size_t i = 0; items && i < k; i++)
		json_array_append_new(items, notifier_row_json(&rows[i]));
	notify_rows_free(rows, k);
	return collection("notifications", items, total, err);
}

static json_t *op_list_sla_misses(void *ctx, const struct notify_api_query *q,
                                  struct weir_error *err)
{
	struct notifier *n = ctx;
	struct sla_query sq = {
	    .dag_id = q->dag_id, .run_id = q->run_id, .limit = q->limit, .offset = q->offset};
	struct sla_miss_row *rows = NULL;
	size_t k = 0;
	int64_t total = 0;
	json_t *items;

	if (sla_store_list(n->ns, &sq, &rows, &k, &total, err) < 0)
		return NULL;
	items = json_array();
	for (size_t i = 0; items && i < k; i++)
		json_array_append_new(items, notifier_sla_json(&rows[i]));
	sla_miss_rows_free(rows, k);
	return collection("sla_misses", items, total, err);
}

static const struct notify_api_ops ops = {
    .list_notifications = op_list_notifications,
    .list_sla_misses = op_list_sla_misses,
};

const struct notify_api_ops *notifier_api_ops(void)
{
	return &ops;
}
