/* dataset_ops.c: the dataset routes' ops (dag_manager.h) in
 * Airflow's shapes: Dataset (with the DAGs that consume it and the tasks
 * that produce it, from the DAG files as parsed now), DatasetEvent (with
 * the runs it started), QueuedEvent and their collections.  An event
 * announced over REST is recorded in a turn of the manager, so the run it
 * completes is created, and its first tasks started, before the answer.
 */
#include "server/dag_manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_views.h"
#include "lib/json_util.h"
#include "model/dataset.h"
#include "server/dag_manager/dm_internal.h"
#include "server/dag_manager/ops.h"
#include "store/dataset_store.h"

static bool lists(const struct strvec *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], s))
			return true;
	return false;
}

/* The DAGs of the folder as parsed now (one entry per DAG id). */
#define EACH_SPEC(dm, e, s)                                                                        \
	for (struct dag_entry *e = (dm)->folder.entries; e; e = e->next)                           \
		for (const struct dag_spec *s = e->present ? e->spec : NULL;                       \
		     s && dm_entry_by_id((dm), s->dag_id) == e; s = NULL)

static json_t *dataset_json(struct dag_manager *dm, const struct dataset_row *d)
{
	json_t *consuming = json_array(), *producing = json_array();
	json_t *extra = json_loads(d->extra && *d->extra ? d->extra : "{}", 0, NULL);
	struct dataset_alias_link_row *link_rows = NULL;
	struct dataset_alias_link *links = NULL;
	size_t n_links = 0;

	/* a DAG on an alias linked to the URI consumes it too (none when unread) */
	if (dm_dataset_alias_links(dm, d->uri, &link_rows, &links, &n_links, NULL) < 0)
		n_links = 0;
	EACH_SPEC(dm, e, s)
	{
		if (dm_dataset_consumes(s, d->uri, links, n_links))
			json_array_append_new(
			    consuming,
			    json_pack("{s:s, s:o, s:o}", "dag_id", s->dag_id, "created_at",
			              json_util_time_airflow(d->created_at), "updated_at",
			              json_util_time_airflow(d->updated_at)));
		for (size_t t = 0; t < s->n_tasks; t++)
			if (lists(&s->tasks[t].outlets, d->uri))
				json_array_append_new(
				    producing,
				    json_pack("{s:s, s:s, s:o, s:o}", "dag_id", s->dag_id,
				              "task_id", s->tasks[t].task_id, "created_at",
				              json_util_time_airflow(d->created_at), "updated_at",
				              json_util_time_airflow(d->updated_at)));
	}
	free(links);
	dataset_alias_link_rows_free(link_rows, n_links);
	return json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)d->id, "uri",
	                 d->uri, "extra", extra ? extra : json_object(), "created_at",
	                 json_util_time_airflow(d->created_at), "updated_at",
	                 json_util_time_airflow(d->updated_at), "consuming_dags", consuming,
	                 "producing_tasks", producing);
}

static json_t *op_list(void *ctx, const struct dataset_list_params *q, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dataset_query dq = {.uri_pattern = q->uri_pattern,
	                           .order_by = q->order_by,
	                           .limit = q->limit,
	                           .offset = q->offset};
	struct dataset_row *rows = NULL;
	json_t *uris = NULL, *items, *out;
	char *uris_text = NULL;
	size_t n = 0;
	int64_t total = 0;

	if (q->dag_ids) { /* the datasets these DAGs consume or produce */
		char *ids = strdup(q->dag_ids), *save = NULL;
		uris = json_array();
		for (char *id = ids ? strtok_r(ids, ",", &save) : NULL; id && uris;
		     id = strtok_r(NULL, ",", &save)) {
			const struct dag_spec *s = dm_spec_of(dm, id, NULL);
			for (size_t i = 0; s && i < s->dataset_schedule.n; i++)
				json_array_append_new(uris, json_string(s->dataset_schedule.v[i]));
			for (size_t t = 0; s && t < s->n_tasks; t++)
				for (size_t i = 0; i < s->tasks[t].outlets.n; i++)
					json_array_append_new(
					    uris, json_string(s->tasks[t].outlets.v[i]));
		}
		free(ids);
		uris_text = uris ? json_dumps(uris, JSON_COMPACT) : NULL;
		json_decref(uris);
		if (!uris_text)
			return weir_error_oom_null(err);
		dq.uris_json = uris_text;
	}
	if (dataset_store_list(dm->datasets.store, &dq, &rows, &n, &total, err) < 0) {
		free(uris_text);
		return NULL;
	}
	items = json_array();
	for (size_t i = 0; items && i < n; i++)
		json_array_append_new(items, dataset_json(dm, &rows[i]));
	dataset_rows_free(rows, n);
	free(uris_text);
	out = items ? dag_view_collection("datasets", items, (size_t)total) : NULL;
	return out ? out : weir_error_oom_null(err);
}

static json_t *op_get(void *ctx, const char *uri, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dataset_row r = {0};
	json_t *o;

	if (dataset_store_get(dm->datasets.store, uri, &r, err) < 0) {
		if (err->kind == WEIR_E_NOT_FOUND)
			weir_error_set(err, WEIR_E_NOT_FOUND, "no dataset with uri %.300s", uri);
		return NULL;
	}
	o = dataset_json(dm, &r);
	dataset_row_release(&r);
	return o ? o : weir_error_oom_null(err);
}

/* A DatasetEvent with the runs it started (BasicDAGRun). */
static json_t *event_json(struct dag_manager *dm, const struct dataset_event_row *e)
{
	struct dataset_run_ref *runs = NULL;
	size_t n = 0;
	json_t *o = dm_dataset_event_json(e), *list = json_array();

	if (o && list && dataset_store_event_runs(dm->datasets.store, e->id, &runs, &n, NULL) == 0)
		for (size_t i = 0; i < n; i++)
			json_array_append_new(
			    list,
			    json_pack("{s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:s}", "run_id",
			              runs[i].run_id, "dag_id", runs[i].dag_id, "logical_date",
			              json_util_time_airflow(runs[i].logical_date), "start_date",
			              json_util_time_airflow(runs[i].start_date), "end_date",
			              json_util_time_airflow(runs[i].end_date),
			              "data_interval_start",
			              json_util_time_airflow(runs[i].data_interval_start),
			              "data_interval_end",
			              json_util_time_airflow(runs[i].data_interval_end), "state",
			              dag_run_state_name(runs[i].state)));
	dataset_run_refs_free(runs, n);
	if (o)
		json_object_set_new(o, "created_dagruns", list ? list : json_array());
	else
		json_decref(list);
	return o;
}

static json_t *events_json(struct dag_manager *dm, const struct dataset_event_query *q,
                           struct weir_error *err)
{
	struct dataset_event_row *rows = NULL;
	size_t n = 0;
	int64_t total = 0;
	json_t *items, *out;

	if (dataset_store_events(dm->datasets.store, q, &rows, &n, &total, err) < 0)
		return NULL;
	items = json_array();
	for (size_t i = 0; items && i < n; i++)
		json_array_append_new(items, event_json(dm, &rows[i]));
	dataset_event_rows_free(rows, n);
	out = items ? dag_view_collection("dataset_events", items, (size_t)total) : NULL;
	return out ? out : weir_error_oom_null(err);
}

static json_t *op_events(void *ctx, const struct dataset_event_params *p, struct weir_error *err)
{
	struct dataset_event_query q = {.dataset_id = p->dataset_id,
	                                .source_dag_id = p->source_dag_id,
	                                .source_task_id = p->source_task_id,
	                                .source_run_id = p->source_run_id,
	                                .has_map_index = p->has_map_index,
	                                .source_map_index = p->source_map_index,
	                                .order_by = p->order_by,
	                                .limit = p->limit,
	                                .offset = p->offset};

	return events_json(ctx, &q, err);
}

static json_t *op_create_event(void *ctx, json_t *body, struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	json_t *u = json_object_get(body, "dataset_uri"), *x = json_object_get(body, "extra");
	struct dataset_row d = {0};
	struct dataset_event_row ev = {0};
	char *extra = NULL;
	json_t *out = NULL;
	int rc;

	if (!json_is_string(u)) {
		weir_error_set(err, WEIR_E_INVALID, "dataset_uri: %s",
		               u ? "expected a string" : "is required");
		return NULL;
	}
	if (x && !json_is_null(x) && !json_is_object(x)) {
		weir_error_set(err, WEIR_E_INVALID, "extra: expected a JSON object");
		return NULL;
	}
	if (dataset_store_get(dm->datasets.store, json_string_value(u), &d, err) < 0) {
		if (err->kind == WEIR_E_NOT_FOUND)
			weir_error_set(
			    err, WEIR_E_NOT_FOUND,
			    "no dataset with uri %.300s: a DAG file must name it (outlets or "
			    "schedule)",
			    json_string_value(u));
		return NULL;
	}
	dataset_row_release(&d);
	extra = json_is_object(x) ? json_dumps(x, JSON_COMPACT) : strdup("{}");
	if (!extra)
		return weir_error_oom_null(err);
	ev.extra = extra;
	dm_touch(dm);
	rc = dm_dataset_event(dm, json_string_value(u), &ev, err);
	if (rc == 0) {
		dm_work_pass(dm); /* the runs it triggers, in the answer */
		struct dataset_event_row *rows = NULL;
		size_t n = 0;
		int64_t total = 0;
		struct dataset_event_query q = {
		    .dataset_id = ev.dataset_id, .order_by = "-id", .limit = 1};
		if (dataset_store_events(dm->datasets.store, &q, &rows, &n, &total, err) == 0 &&
		    n == 1)
			out = event_json(dm, &rows[0]);
		dataset_event_rows_free(rows, n);
		if (!out && !err->msg[0])
			weir_error_oom_null(err);
	}
	free(extra);
	return out;
}

static json_t *op_upstream(void *ctx, const char *dag_id, const char *run_id,
                           struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dag_run_row run = {0};
	struct dataset_event_query q = {.limit = 100000};

	if (dm_dag_check_exists(dm, dag_id, err) < 0)
		return NULL;
	if (dm_run_row(dm, dag_id, run_id, &run, err) < 0)
		return NULL;
	q.run_row_id = run.id;
	dag_run_row_release(&run);
	return events_json(dm, &q, err);
}

/* The queue's rows a queued-event route names; 404 when the DAG or the
 * dataset is unknown, or nothing is queued. */
static int queue_rows(struct dag_manager *dm, const char *dag_id, const char *uri,
                      const char *before, int64_t *before_ms, struct dataset_queue_row **rows,
                      size_t *n, struct weir_error *err)
{
	struct dataset_row d = {0};

	*before_ms = 0;
	if (before && dm_parse_date(before, "before", before_ms, err) < 0) {
		err->kind = WEIR_E_INVALID;
		return -1;
	}
	if (dag_id && dm_dag_check_exists(dm, dag_id, err) < 0)
		return -1;
	if (uri && dataset_store_get(dm->datasets.store, uri, &d, err) < 0) {
		if (err->kind == WEIR_E_NOT_FOUND)
			weir_error_set(err, WEIR_E_NOT_FOUND, "no dataset with uri %.300s", uri);
		return -1;
	}
	dataset_row_release(&d);
	if (dataset_store_queue_list(dm->datasets.store, dag_id, uri, *before_ms, rows, n, err) < 0)
		return -1;
	if (*n == 0)
		return weir_error_set(err, WEIR_E_NOT_FOUND, "no queued event%s%s%s%.300s",
		                      dag_id ? " for DAG " : "", dag_id ? dag_id : "",
		                      uri ? " of dataset " : "", uri ? uri : "");
	return 0;
}

static json_t *queued_json(const struct dataset_queue_row *r)
{
	return json_pack("{s:s, s:s, s:o}", "uri", r->uri, "dag_id", r->dag_id, "created_at",
	                 json_util_time_airflow(r->created_at));
}

static json_t *op_queued(void *ctx, const char *dag_id, const char *uri, const char *before,
                         struct weir_error *err)
{
	struct dataset_queue_row *rows = NULL;
	size_t n = 0;
	int64_t b;
	json_t *out = NULL, *items;

	if (queue_rows(ctx, dag_id, uri, before, &b, &rows, &n, err) < 0)
		return NULL;
	if (dag_id && uri) {
		out = queued_json(&rows[0]);
	} else if ((items = json_array())) {
		for (size_t i = 0; i < n; i++)
			json_array_append_new(items, queued_json(&rows[i]));
		/* the spec's QueuedEventCollection lists them under "datasets" */
		out = dag_view_collection("datasets", items, n);
	}
	dataset_queue_rows_free(rows, n);
	return out ? out : weir_error_oom_null(err);
}

static int op_delete_queued(void *ctx, const char *dag_id, const char *uri, const char *before,
                            struct weir_error *err)
{
	struct dag_manager *dm = ctx;
	struct dataset_queue_row *rows = NULL;
	size_t n = 0;
	int64_t b;
	int rc;

	if (queue_rows(dm, dag_id, uri, before, &b, &rows, &n, err) < 0)
		return -1;
	dataset_queue_rows_free(rows, n);
	dm_touch(dm);
	rc = dataset_store_queue_delete(dm->datasets.store, dag_id, uri, b, NULL, err);
	return rc;
}

static const struct dataset_api_ops ops = {
    .list = op_list,
    .get = op_get,
    .events = op_events,
    .create_event = op_create_event,
    .upstream_events = op_upstream,
    .queued = op_queued,
    .delete_queued = op_delete_queued,
};

const struct dataset_api_ops *dag_manager_dataset_ops(void)
{
	return &ops;
}
