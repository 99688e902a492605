/* airflow_lists.c: the list routes and their filters (airflow_lists.h). */
#include "api/airflow/airflow_lists.h"

#include <stdio.h>
#include <string.h>

#include "api/airflow/airflow_request.h"
#include "api/dag_admin_api.h"
#include "api/dag_answers.h"
#include "api/reply.h"
#include "sched/dag_states.h"

/* Values of one repeatable filter a request may give. */
#define LIST_MAX 64

struct str_values {
	const char *v[LIST_MAX];
	size_t n;
};

static struct dag_str_list as_list(const struct str_values *s)
{
	return (struct dag_str_list){s->v, s->n};
}

/* ---- fields: the keys each item of the answer keeps ---- */

/* What a DAG and a DAGRun carry (api/dag_views.c); `fields` may name these. */
static const char *const dag_fields[] = {
    "dag_id",
    "description",
    "is_paused",
    "is_active",
    "is_subdag",
    "fileloc",
    "tags",
    "schedule_interval",
    "next_dagrun",
    "owners",
    "max_active_runs",
    "max_active_tasks",
    "has_import_errors",
    "last_parsed_time",
    "timetable_description",
    "next_dagrun_data_interval_start",
    "next_dagrun_data_interval_end",
    "next_dagrun_create_after",
    "params",
    "import_error",
    NULL,
};

static const char *const run_fields[] = {
    "dag_id",
    "dag_run_id",
    "logical_date",
    "execution_date",
    "start_date",
    "end_date",
    "data_interval_start",
    "data_interval_end",
    "state",
    "run_type",
    "conf",
    "external_trigger",
    "queued_at",
    "last_scheduling_decision",
    "note",
    "reason",
    NULL,
};

struct field_pick {
	char buf[1024];
	const char *v[LIST_MAX];
	size_t n;
};

static bool in_list(const char *s, const char *const *a, size_t n)
{
	for (size_t i = 0; n == (size_t)-1 ? a[i] != NULL : i < n; i++)
		if (!strcmp(s, a[i]))
			return true;
	return false;
}

/* ?fields=a,b or ?fields=a&fields=b; each must be one of `known`. */
static bool fields_query(struct http_request *req, const char *const *known, const char *what,
                         struct field_pick *p)
{
	struct str_values raw;
	size_t used = 0;

	p->n = 0;
	if (!airflow_query_list(req, "fields", raw.v, LIST_MAX, &raw.n))
		return false;
	for (size_t i = 0; i < raw.n; i++) {
		size_t len = strlen(raw.v[i]);
		char *save = NULL;
		if (used + len + 1 > sizeof p->buf) {
			reply_problem(req, 400, "fields: too long");
			return false;
		}
		char *copy = memcpy(p->buf + used, raw.v[i], len + 1);
		used += len + 1;
		for (char *f = strtok_r(copy, ",", &save); f; f = strtok_r(NULL, ",", &save)) {
			if (!in_list(f, known, (size_t)-1)) {
				reply_problemf(req, 400, "fields: %s has no field \"%.60s\"", what,
				               f);
				return false;
			}
			if (p->n == LIST_MAX) {
				reply_problemf(req, 400, "fields: at most %d", LIST_MAX);
				return false;
			}
			p->v[p->n++] = f;
		}
	}
	return true;
}

/* Keeps only the picked keys of each item of result[items] (all when none
 * were picked), then answers. */
static void reply_picked(struct http_request *req, json_t *result, const struct weir_error *err,
                         const char *items, const struct field_pick *p)
{
	json_t *a = json_object_get(result, items), *item;
	size_t i;

	if (p->n)
		json_array_foreach(a, i, item)
		{
			const char *key;
			json_t *v;
			void *tmp;
			json_object_foreach_safe(item, tmp, key, v)
			{
				if (!in_list(key, p->v, p->n))
					json_object_del(item, key);
			}
		}
	reply_problem_result(req, result, err);
}

/* ---- shared pieces of the queries ---- */

#define DATE_PARAMS(name) name "_gte", name "_lte"

static void date_query(struct http_request *req, const char *name, struct dag_date_range *r)
{
	char k[48];

	snprintf(k, sizeof k, "%s_gte", name);
	r->gte = http_request_query(req, k);
	snprintf(k, sizeof k, "%s_lte", name);
	r->lte = http_request_query(req, k);
	if (r->gte && !*r->gte)
		r->gte = NULL;
	if (r->lte && !*r->lte)
		r->lte = NULL;
}

/* The four date ranges runs and task instances are filtered by. */
static void date_queries(struct http_request *req, struct dag_date_range *execution,
                         struct dag_date_range *start, struct dag_date_range *end,
                         struct dag_date_range *updated)
{
	date_query(req, "execution_date", execution);
	date_query(req, "start_date", start);
	date_query(req, "end_date", end);
	date_query(req, "updated_at", updated);
}

/* executor: Airflow's, which weir has no meaning for. */
static void refuse_executor(struct http_request *req)
{
	reply_problem(req, 400,
	              "executor: not a filter weir has (a task's queue says where it runs: "
	              "filter by queue)");
}

/* Every value is a run state (runs) or a task instance state. */
static bool states_ok(struct http_request *req, const char *key, const struct str_values *s,
                      bool runs)
{
	for (size_t i = 0; i < s->n; i++) {
		enum dag_run_state rs;
		enum dag_ti_state ts;
		if (runs ? dag_run_state_from_name(s->v[i], &rs) == 0
		         : dag_ti_state_from_name(s->v[i], &ts) == 0)
			continue;
		if (runs)
			reply_problemf(req, 400,
			               "%s \"%.40s\": expected queued, running, success or failed",
			               key, s->v[i]);
		else
			reply_problemf(req, 400,
			               "%s \"%.40s\": expected none, scheduled, queued, running, "
			               "success, failed, up_for_retry, upstream_failed, skipped or "
			               "removed",
			               key, s->v[i]);
		return false;
	}
	return true;
}

/* What the DAG manager can sort runs by (Airflow's names; '-' descending). */
static const char *const run_order_fields[] = {
    "id",           "dag_run_id", "run_id",   "dag_id", "state", "execution_date",
    "logical_date", "start_date", "end_date", NULL,
};

static bool run_order_ok(struct http_request *req, const char *order_by)
{
	if (!order_by ||
	    in_list(order_by[0] == '-' ? order_by + 1 : order_by, run_order_fields, (size_t)-1))
		return true;
	reply_problemf(req, 400,
	               "order_by \"%.60s\": expected execution_date, logical_date, start_date, "
	               "end_date, state, dag_run_id, run_id, dag_id or id, with '-' in front "
	               "for descending",
	               order_by);
	return false;
}

static bool ids_ok(struct http_request *req, const char *key, const struct str_values *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (!airflow_check_id(req, key, s->v[i]))
			return false;
	return true;
}

/* ---- GET /dags ---- */

void airflow_list_dags(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"limit",  "offset",         "order_by",
	                                      "tags",   "only_active",    "paused",
	                                      "fields", "dag_id_pattern", NULL};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct dag_list_query q = {.paused = -1, .reader = &rd};
	struct weir_error err = {0};
	struct str_values tags;
	struct field_pick pick;
	const char *order, *pattern;
	bool has_paused, paused;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !airflow_query_bool(req, "only_active", true, &q.only_active) ||
	    !airflow_query_list(req, "tags", tags.v, LIST_MAX, &tags.n) ||
	    !fields_query(req, dag_fields, "a DAG", &pick))
		return;
	has_paused = http_request_query(req, "paused") && *http_request_query(req, "paused");
	if (!airflow_query_bool(req, "paused", false, &paused))
		return;
	if (has_paused)
		q.paused = paused;
	order = http_request_query(req, "order_by");
	if (order && *order && strcmp(order, "dag_id") && strcmp(order, "-dag_id")) {
		reply_problemf(req, 400,
		               "order_by \"%.60s\": DAGs are ordered by dag_id only (dag_id or "
		               "-dag_id)",
		               order);
		return;
	}
	q.desc = order && !strcmp(order, "-dag_id");
	pattern = http_request_query(req, "dag_id_pattern");
	q.dag_id_pattern = pattern && *pattern ? pattern : NULL;
	q.tags = as_list(&tags);
	reply_picked(req, dag_answer_list_dags(ops, ctx, &q, &err), &err, "dags", &pick);
}

/* ---- GET /importErrors ---- */

void airflow_list_import_errors(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"limit", "offset", "order_by", NULL};
	struct weir_error err = {0};
	const char *order = http_request_query(req, "order_by");
	int limit, offset;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &limit, &offset))
		return;
	if (order && *order && strcmp(order, "import_error_id")) {
		reply_problemf(req, 400,
		               "order_by \"%.60s\": import errors are listed by import_error_id "
		               "only",
		               order);
		return;
	}
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);

	reply_problem_result(req, dag_answer_import_errors(ops, ctx, &rd, limit, offset, &err),
	                     &err);
}

/* ---- runs ---- */

void airflow_list_runs(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                       const char *dag_id)
{
	static const char *const allowed[] = {"limit",
	                                      "offset",
	                                      DATE_PARAMS("execution_date"),
	                                      DATE_PARAMS("start_date"),
	                                      DATE_PARAMS("end_date"),
	                                      DATE_PARAMS("updated_at"),
	                                      "state",
	                                      "order_by",
	                                      "fields",
	                                      NULL};
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct dag_run_list_query q = {.reader = &rd};
	struct str_values states;
	struct field_pick pick;

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !airflow_query_list(req, "state", states.v, LIST_MAX, &states.n) ||
	    !states_ok(req, "state", &states, true) ||
	    !fields_query(req, run_fields, "a DAG run", &pick))
		return;
	q.order_by = http_request_query(req, "order_by");
	if (q.order_by && !*q.order_by)
		q.order_by = NULL;
	if (!run_order_ok(req, q.order_by))
		return;
	q.states = as_list(&states);
	date_queries(req, &q.execution_date, &q.start_date, &q.end_date, &q.updated_at);
	reply_picked(req, dag_answer_list_runs(ops, ctx, dag_id, &q, &err), &err, "dag_runs",
	             &pick);
}

/* ---- batch bodies ---- */

/* A list of strings in the body (absent or null: none). */
static bool body_list(struct http_request *req, json_t *body, const char *key,
                      struct str_values *out)
{
	json_t *a = json_object_get(body, key), *v;
	size_t i;

	out->n = 0;
	if (!a || json_is_null(a))
		return true;
	if (!json_is_array(a) || json_array_size(a) > LIST_MAX) {
		reply_problemf(req, 400, "%s: expected a list of at most %d strings", key,
		               LIST_MAX);
		return false;
	}
	json_array_foreach(a, i, v)
	{
		if (!json_is_string(v)) {
			reply_problemf(req, 400, "%s[%zu]: expected a string", key, i);
			return false;
		}
		out->v[out->n++] = json_string_value(v);
	}
	return true;
}

static bool body_string(struct http_request *req, json_t *body, const char *key, const char **out)
{
	json_t *v = json_object_get(body, key);

	*out = NULL;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_string(v)) {
		reply_problemf(req, 400, "%s: expected a string", key);
		return false;
	}
	*out = json_string_value(v);
	return true;
}

static bool body_dates(struct http_request *req, json_t *body, const char *name,
                       struct dag_date_range *r)
{
	char gte[48], lte[48];

	snprintf(gte, sizeof gte, "%s_gte", name);
	snprintf(lte, sizeof lte, "%s_lte", name);
	return body_string(req, body, gte, &r->gte) && body_string(req, body, lte, &r->lte);
}

/* page_limit and page_offset, read as limit and offset are. */
static bool body_page(struct http_request *req, json_t *body, int *limit, int *offset)
{
	json_t *l = json_object_get(body, "page_limit"), *o = json_object_get(body, "page_offset");

	*limit = AIRFLOW_PAGE_DEFAULT;
	*offset = 0;
	if (l && !json_is_null(l)) {
		if (!json_is_integer(l) || json_integer_value(l) < 0) {
			reply_problem(req, 400, "page_limit: expected a whole number >= 0");
			return false;
		}
		if (json_integer_value(l) > 0)
			*limit = json_integer_value(l) > AIRFLOW_PAGE_MAX
			             ? AIRFLOW_PAGE_MAX
			             : (int)json_integer_value(l);
	}
	if (o && !json_is_null(o)) {
		if (!json_is_integer(o) || json_integer_value(o) < 0 ||
		    json_integer_value(o) > 1000000000L) {
			reply_problem(req, 400, "page_offset: expected a whole number >= 0");
			return false;
		}
		*offset = (int)json_integer_value(o);
	}
	return true;
}

void airflow_list_runs_batch(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"order_by",
	                                      "page_offset",
	                                      "page_limit",
	                                      "dag_ids",
	                                      "states",
	                                      DATE_PARAMS("execution_date"),
	                                      DATE_PARAMS("start_date"),
	                                      DATE_PARAMS("end_date"),
	                                      NULL};
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct dag_run_list_query q = {.reader = &rd};
	struct str_values states, dag_ids;
	json_t *body = airflow_read_body(req, allowed);

	if (!body)
		return;
	if (body_page(req, body, &q.limit, &q.offset) &&
	    body_string(req, body, "order_by", &q.order_by) && run_order_ok(req, q.order_by) &&
	    body_list(req, body, "states", &states) && states_ok(req, "states", &states, true) &&
	    body_list(req, body, "dag_ids", &dag_ids) && ids_ok(req, "dag_ids", &dag_ids) &&
	    body_dates(req, body, "execution_date", &q.execution_date) &&
	    body_dates(req, body, "start_date", &q.start_date) &&
	    body_dates(req, body, "end_date", &q.end_date)) {
		q.states = as_list(&states);
		q.dag_ids = as_list(&dag_ids);
		reply_problem_result(req, dag_answer_list_runs(ops, ctx, "~", &q, &err), &err);
	}
	json_decref(body);
}

/* ---- task instances ---- */

/* The list of a run's TIs, or with task_id the instances of a mapped task
 * (listMapped, which takes order_by too: map_index, the order it has). */
/* A TI listing's answer: the text the ops write (no tree a TI). */
static void list_tis_answer(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                            const char *dag_id, const char *run_id,
                            const struct dag_ti_list_query *q)
{
	struct weir_error err = {0};
	size_t len = 0;
	char *text = dag_answer_list_tis_text(ops, ctx, dag_id, run_id, q, &len, &err);
	if (!text)
		reply_problem_error(req, &err);
	else
		reply_text(req, 200, "application/json", text, len);
}

static void list_tis_of(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                        const char *dag_id, const char *run_id, const char *task_id)
{
	static const char *const allowed[] = {"limit",
	                                      "order_by",
	                                      "offset",
	                                      DATE_PARAMS("execution_date"),
	                                      DATE_PARAMS("start_date"),
	                                      DATE_PARAMS("end_date"),
	                                      DATE_PARAMS("updated_at"),
	                                      DATE_PARAMS("duration"),
	                                      "state",
	                                      "pool",
	                                      "queue",
	                                      "executor",
	                                      NULL};
	struct weir_error err = {0};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct dag_ti_list_query q = {.reader = &rd};
	struct str_values states, pools, queues;
	const char *executor = http_request_query(req, "executor");

	if (!airflow_query_known(req, allowed) || !airflow_page_query(req, &q.limit, &q.offset) ||
	    !airflow_query_list(req, "state", states.v, LIST_MAX, &states.n) ||
	    !states_ok(req, "state", &states, false) ||
	    !airflow_query_list(req, "pool", pools.v, LIST_MAX, &pools.n) ||
	    !airflow_query_list(req, "queue", queues.v, LIST_MAX, &queues.n) ||
	    !airflow_query_number(req, "duration_gte", &q.has_duration_gte, &q.duration_gte) ||
	    !airflow_query_number(req, "duration_lte", &q.has_duration_lte, &q.duration_lte))
		return;
	if (executor && *executor) {
		refuse_executor(req);
		return;
	}
	q.states = as_list(&states);
	q.pools = as_list(&pools);
	q.queues = as_list(&queues);
	date_queries(req, &q.execution_date, &q.start_date, &q.end_date, &q.updated_at);
	if (!task_id)
		list_tis_answer(ops, ctx, req, dag_id, run_id, &q);
	else
		reply_problem_result(
		    req, ops->admin->list_mapped(ctx, dag_id, run_id, task_id, &q, &err), &err);
}

void airflow_list_tis(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                      const char *dag_id, const char *run_id)
{
	if (http_request_query(req, "order_by")) {
		reply_problem(req, 400, "order_by: not taken by this route");
		return;
	}
	list_tis_of(ops, ctx, req, dag_id, run_id, NULL);
}

void airflow_list_mapped(const struct dag_api_ops *ops, void *ctx, struct http_request *req,
                         const char *dag_id, const char *run_id, const char *task_id)
{
	const char *o = http_request_query(req, "order_by");

	if (o && strcmp(o, "map_index")) {
		reply_problem(req, 400, "order_by: expected map_index (the only order)");
		return;
	}
	list_tis_of(ops, ctx, req, dag_id, run_id, task_id);
}

static bool body_number(struct http_request *req, json_t *body, const char *key, bool *has,
                        double *out)
{
	json_t *v = json_object_get(body, key);

	*has = false;
	if (!v || json_is_null(v))
		return true;
	if (!json_is_number(v)) {
		reply_problemf(req, 400, "%s: expected a number", key);
		return false;
	}
	*has = true;
	*out = json_number_value(v);
	return true;
}

void airflow_list_tis_batch(const struct dag_api_ops *ops, void *ctx, struct http_request *req)
{
	static const char *const allowed[] = {"page_offset",
	                                      "page_limit",
	                                      "dag_ids",
	                                      "dag_run_ids",
	                                      "task_ids",
	                                      DATE_PARAMS("execution_date"),
	                                      DATE_PARAMS("start_date"),
	                                      DATE_PARAMS("end_date"),
	                                      DATE_PARAMS("duration"),
	                                      "state",
	                                      "pool",
	                                      "queue",
	                                      "executor",
	                                      NULL};
	struct dag_reader rd = airflow_reader(req, ACCESS_READ);
	struct dag_ti_list_query q = {.reader = &rd};
	struct str_values states, pools, queues, dag_ids, run_ids, task_ids, executors;
	json_t *body = airflow_read_body(req, allowed);

	if (!body)
		return;
	if (!body_page(req, body, &q.limit, &q.offset) || !body_list(req, body, "state", &states) ||
	    !states_ok(req, "state", &states, false) || !body_list(req, body, "pool", &pools) ||
	    !body_list(req, body, "queue", &queues) ||
	    !body_list(req, body, "executor", &executors) ||
	    !body_list(req, body, "dag_ids", &dag_ids) || !ids_ok(req, "dag_ids", &dag_ids) ||
	    !body_list(req, body, "dag_run_ids", &run_ids) ||
	    !ids_ok(req, "dag_run_ids", &run_ids) || !body_list(req, body, "task_ids", &task_ids) ||
	    !ids_ok(req, "task_ids", &task_ids) ||
	    !body_dates(req, body, "execution_date", &q.execution_date) ||
	    !body_dates(req, body, "start_date", &q.start_date) ||
	    !body_dates(req, body, "end_date", &q.end_date) ||
	    !body_number(req, body, "duration_gte", &q.has_duration_gte, &q.duration_gte) ||
	    !body_number(req, body, "duration_lte", &q.has_duration_lte, &q.duration_lte))
		goto out;
	if (executors.n) {
		refuse_executor(req);
		goto out;
	}
	q.states = as_list(&states);
	q.pools = as_list(&pools);
	q.queues = as_list(&queues);
	q.dag_ids = as_list(&dag_ids);
	q.run_ids = as_list(&run_ids);
	q.task_ids = as_list(&task_ids);
	list_tis_answer(ops, ctx, req, "~", "~", &q);
out:
	json_decref(body);
}
