/* datasets.c: datasets in the DAG manager (dm_internal.h): a task's
 * success records an event for each of its outlets (the extra its output's
 * weir_outlet_events gives it, else {}) and each event its output's
 * weir_alias_events adds (Airflow's DatasetAlias: the event is linked to
 * the alias, which links the alias to the dataset), an outside system's
 * announcement does the same, each event is queued for the DAGs scheduled
 * on its URI or on an alias linked to it, and the dataset pass starts the
 * DAGs whose every URI is queued, or whose condition the queued URIs make
 * true (sched/dataset_due.h decides), each run consuming the events that
 * made it: they are its conf's triggering_dataset_events and its
 * upstreamDatasetEvents.  A task with inlets gets their latest events in a
 * file at each try's start (Airflow's inlet_events).
 *
 * Owns dm->datasets: the dataset store handle and the dirty flag of the pass
 * (dm->datasets.dirty: an event was queued, or a rescan happened, since
 * the last pass).  Runs inside the manager's turns.
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/json_util.h"
#include "lib/log.h"
#include "model/dataset.h"
#include "sched/dataset_due.h"
#include "store/dataset_store.h"

/* ---- the datasets the DAG files name ---- */

/* Every URI the parsed DAGs name (outlets and schedules) is a dataset. */
static void register_uris(struct dag_manager *dm)
{
	int64_t now = clock_now_ms();
	struct weir_error err = {0};

	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		if (!e->present || !s)
			continue;
		for (size_t i = 0; i < s->dataset_schedule.n; i++)
			if (dataset_store_ensure(dm->datasets.store, s->dataset_schedule.v[i], now,
			                         NULL, &err) < 0)
				log_error("dataset %s: %s", s->dataset_schedule.v[i], err.msg);
		for (size_t t = 0; t < s->n_tasks; t++) {
			const struct strvec *lists[] = {&s->tasks[t].outlets, &s->tasks[t].inlets};
			for (size_t l = 0; l < 2; l++)
				for (size_t i = 0; i < lists[l]->n; i++)
					if (dataset_store_ensure(dm->datasets.store, lists[l]->v[i],
					                         now, NULL, &err) < 0)
						log_error("dataset %s: %s", lists[l]->v[i],
						          err.msg);
		}
	}
}

void dm_datasets_scanned(struct dag_manager *dm, bool changed)
{
	if (changed || !dm->datasets.known) {
		register_uris(dm);
		dm->datasets.known = true;
	}
	/* a DAG unpaused since, or a queue left by a server that stopped */
	dm->datasets.dirty = true;
}

/* The DAG of `s` as the decisions read it (paused: false), with `links`. */
static struct dataset_dag dataset_dag_of(const struct dag_spec *s,
                                         const struct dataset_alias_link *links, size_t n_links)
{
	return (struct dataset_dag){s->dag_id,
	                            (const char *const *)s->dataset_schedule.v,
	                            s->dataset_schedule.n,
	                            false,
	                            s->dataset_condition,
	                            links,
	                            n_links};
}

bool dm_dataset_consumes(const struct dag_spec *s, const char *uri,
                         const struct dataset_alias_link *links, size_t n_links)
{
	struct dataset_dag d = dataset_dag_of(s, links, n_links);

	return dataset_event_queues(&d, uri);
}

int dm_dataset_alias_links(struct dag_manager *dm, const char *uri,
                           struct dataset_alias_link_row **rows, struct dataset_alias_link **out,
                           size_t *n, struct weir_error *err)
{
	*out = NULL;
	if (dataset_store_alias_links(dm->datasets.store, uri, rows, n, err) < 0)
		return -1;
	if (*n == 0)
		return 0;
	*out = calloc(*n, sizeof **out);
	if (!*out)
		return weir_error_oom(err);
	for (size_t i = 0; i < *n; i++)
		(*out)[i] = (struct dataset_alias_link){(*rows)[i].alias, (*rows)[i].uri};
	return 0;
}

/* ---- events ---- */

/* An event of `uri`, added through `alias` (NULL: none), recorded and
 * queued for the DAGs on the URI or on an alias linked to it. */
static int record_event(struct dag_manager *dm, const char *uri, const char *alias,
                        struct dataset_event_row *ev, struct weir_error *err)
{
	int64_t now = clock_now_ms();
	struct dataset_alias_link_row *rows = NULL;
	struct dataset_alias_link *links = NULL;
	size_t n_links = 0;
	int rc = -1;

	if (dataset_store_ensure(dm->datasets.store, uri, now, &ev->dataset_id, err) < 0)
		return -1;
	ev->timestamp = now;
	if (dataset_store_event_add(dm->datasets.store, ev, &ev->id, err) < 0)
		return -1;
	/* linked before the DAGs are queued: the alias's first event runs them */
	if (alias && dataset_store_alias_event_add(dm->datasets.store, alias, ev->id, err) < 0)
		return -1;
	if (dm_dataset_alias_links(dm, uri, &rows, &links, &n_links, err) < 0)
		goto out;
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		if (!e->present || !e->spec || dm_entry_by_id(dm, e->spec->dag_id) != e ||
		    !dm_dataset_consumes(e->spec, uri, links, n_links))
			continue;
		if (dataset_store_queue_add(dm->datasets.store, ev->dataset_id, e->spec->dag_id,
		                            now, err) < 0)
			goto out;
		dm->datasets.dirty = true;
		dm->turn.pass_again = true;
	}
	rc = 0;
out:
	free(links);
	dataset_alias_link_rows_free(rows, n_links);
	if (rc < 0)
		return -1;
	log_info("dataset %s: updated%s%s%s%s", uri, ev->has_source ? " by DAG " : "",
	         ev->has_source ? ev->source_dag_id : "", ev->has_source ? " task " : "",
	         ev->has_source ? ev->source_task_id : "");
	return 0;
}

int dm_dataset_event(struct dag_manager *dm, const char *uri, struct dataset_event_row *ev,
                     struct weir_error *err)
{
	return record_event(dm, uri, NULL, ev, err);
}

/* The extra the try gave outlet `uri` in its output's weir_outlet_events
 * ({URI: {...}}: a Python task's outlet_events[dataset].extra), as JSON
 * text to free; NULL when none. */
static char *outlet_extra(const json_t *outputs, const char *uri)
{
	json_t *x = json_object_get(json_object_get(outputs, "weir_outlet_events"), uri);

	return json_is_object(x) ? json_dumps(x, JSON_COMPACT) : NULL;
}

/* An event of `uri` by the TI of row `r`, through `alias` (NULL: none), its
 * extra `extra` (JSON text; NULL: {}); a failure is logged. */
static void ti_event(struct dag_manager *dm, const struct dag_ti_row *r, const char *uri,
                     const char *alias, char *extra)
{
	struct weir_error err = {0};
	struct dataset_event_row ev = {
	    .extra = extra ? extra : "{}",
	    .source_dag_id = r->dag_id,
	    .source_task_id = r->task_id,
	    .source_run_id = r->run_id,
	    .source_map_index = r->map_index,
	    .has_source = true,
	};

	if (record_event(dm, uri, alias, &ev, &err) < 0)
		log_error("DAG %s run %s task %s: dataset %s: %s", r->dag_id, r->run_id, r->task_id,
		          uri, err.msg);
}

/* The events a try added through a DatasetAlias (its output's
 * weir_alias_events: [{uri, extra, alias}], at most ALIAS_EVENTS_MAX):
 * URIs the task learnt while it ran, checked as any URI is. */
#define ALIAS_EVENTS_MAX 1000
static void alias_events(struct dag_manager *dm, const struct dag_ti_row *r, json_t *outputs)
{
	json_t *list = json_object_get(outputs, "weir_alias_events"), *a;
	size_t i;

	json_array_foreach(list, i, a)
	{
		const char *uri = json_string_value(json_object_get(a, "uri"));
		const char *alias = json_string_value(json_object_get(a, "alias"));
		json_t *x = json_object_get(a, "extra");
		struct weir_error err = {0};
		if (i == ALIAS_EVENTS_MAX) {
			log_warn("DAG %s run %s task %s: more than %d dataset events through "
			         "an alias: the rest are dropped",
			         r->dag_id, r->run_id, r->task_id, ALIAS_EVENTS_MAX);
			break;
		}
		if (!uri || dataset_uri_check(uri, &err) < 0) {
			log_error("DAG %s run %s task %s: an event through an alias: %s", r->dag_id,
			          r->run_id, r->task_id, uri ? err.msg : "expected a dataset URI");
			continue;
		}
		char *extra = json_is_object(x) ? json_dumps(x, JSON_COMPACT) : NULL;
		ti_event(dm, r, uri, alias && *alias ? alias : NULL, extra);
		free(extra);
	}
}

void dm_datasets_on_success(struct dag_manager *dm, const struct run_ctx *rc, size_t ti)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	bool read = r->outputs && *r->outputs &&
	            (t->outlets.n || strstr(r->outputs, "\"weir_alias_events\""));
	json_t *outputs = read ? json_loads(r->outputs, 0, NULL) : NULL;

	for (size_t i = 0; i < t->outlets.n; i++) {
		char *extra = outlet_extra(outputs, t->outlets.v[i]);
		ti_event(dm, r, t->outlets.v[i], NULL, extra);
		free(extra);
	}
	alias_events(dm, r, outputs);
	json_decref(outputs);
}

/* ---- inlets ---- */

/* The latest INLET_EVENTS_MAX events of the dataset `uri`, or added
 * through `alias`, oldest first, into `to` under `key`. */
static int inlet_list(struct dag_manager *dm, const char *uri, const char *alias, json_t *to,
                      const char *key, struct weir_error *err)
{
	struct dataset_row d = {0};
	struct dataset_event_query q = {
	    .alias = alias, .order_by = "-id", .limit = INLET_EVENTS_MAX};
	struct dataset_event_row *ev = NULL;
	size_t n = 0;
	int64_t total = 0;
	json_t *list = json_array();

	if (!list)
		return weir_error_oom(err);
	if (json_object_set_new(to, key, list) < 0)
		return weir_error_oom(err);
	if (uri) {
		if (dataset_store_get(dm->datasets.store, uri, &d, err) < 0)
			return err->kind == WEIR_E_NOT_FOUND ? 0 : -1; /* no event yet */
		q.dataset_id = d.id;
		dataset_row_release(&d);
	}
	if (dataset_store_events(dm->datasets.store, &q, &ev, &n, &total, err) < 0)
		return -1;
	for (size_t i = n; i-- > 0;)
		if (json_array_append_new(list, dm_dataset_event_json(&ev[i])) < 0) {
			dataset_event_rows_free(ev, n);
			return weir_error_oom(err);
		}
	dataset_event_rows_free(ev, n);
	return 0;
}

int dm_write_inlet_events(struct dag_manager *dm, const struct run_ctx *rc, size_t ti,
                          int try_number, char **path, struct weir_error *err)
{
	const struct dag_task *t = &rc->spec->tasks[rc->ti_task[ti]];
	const struct dag_ti_row *r = &rc->rows[rc->ti_row[ti]];
	json_t *by_uri = json_object(), *by_alias = json_object();
	json_t *all = json_pack("{s:O, s:O}", "datasets", by_uri, "aliases", by_alias);
	int rc_ = -1;

	*path = NULL;
	if (!all) {
		weir_error_oom(err);
		goto out;
	}
	for (size_t i = 0; i < t->inlets.n; i++)
		if (inlet_list(dm, t->inlets.v[i], NULL, by_uri, t->inlets.v[i], err) < 0)
			goto out;
	for (size_t i = 0; i < t->inlet_aliases.n; i++)
		if (inlet_list(dm, NULL, t->inlet_aliases.v[i], by_alias, t->inlet_aliases.v[i],
		               err) < 0)
			goto out;
	rc_ = dm_write_try_json(dm, rc, t->task_id, r->map_index, try_number, "inlet_events.json",
	                        all, path, err);
out:
	json_decref(by_uri);
	json_decref(by_alias);
	json_decref(all);
	return rc_;
}

/* ---- the dataset pass ---- */

json_t *dm_dataset_event_json(const struct dataset_event_row *e)
{
	json_t *extra = json_loads(e->extra && *e->extra ? e->extra : "{}", 0, NULL);

	return json_pack(
	    "{s:I, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:o}", "id", (json_int_t)e->id, "dataset_id",
	    (json_int_t)e->dataset_id, "dataset_uri", e->uri, "extra",
	    extra ? extra : json_object(), "source_dag_id",
	    e->has_source ? json_string(e->source_dag_id) : json_null(), "source_task_id",
	    e->has_source ? json_string(e->source_task_id) : json_null(), "source_run_id",
	    e->has_source ? json_string(e->source_run_id) : json_null(), "source_map_index",
	    e->has_source ? json_integer(e->source_map_index) : json_null(), "timestamp",
	    json_util_time_airflow(e->timestamp));
}

/* {"URI": [event, ...]}: what the run's tasks see as
 * params.triggering_dataset_events. */
static json_t *triggering_events(const struct dataset_event_row *ev, size_t n)
{
	json_t *by_uri = json_object();

	for (size_t i = 0; by_uri && i < n; i++) {
		json_t *list = json_object_get(by_uri, ev[i].uri);
		if (!list) {
			list = json_array();
			json_object_set_new(by_uri, ev[i].uri, list);
		}
		json_array_append_new(list, dm_dataset_event_json(&ev[i]));
	}
	return by_uri;
}

/* A JSON list of the strings; NULL when out of memory. */
static json_t *strings_json(const struct strvec *v)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < v->n; i++)
		if (json_array_append_new(a, json_string(v->v[i])) < 0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* A run of `e`'s DAG, consuming its pending events and its queue. */
static void start_dataset_run(struct dag_manager *dm, struct dag_entry *e)
{
	const struct dag_spec *s = e->spec;
	struct weir_error err = {0};
	struct dataset_event_row *ev = NULL;
	struct dag_run_row row = {0};
	size_t n = 0;
	int64_t now = clock_now_ms();
	json_t *uris = strings_json(&s->dataset_schedule), *conf = NULL;
	json_t *aliases = strings_json(&s->dataset_aliases);
	char *uris_text = NULL, *aliases_text = NULL, ts[48], id[80];

	uris_text = uris ? json_dumps(uris, JSON_COMPACT) : NULL;
	aliases_text = aliases ? json_dumps(aliases, JSON_COMPACT) : NULL;
	if (!uris_text || !aliases_text ||
	    dataset_store_events_pending(dm->datasets.store, s->dag_id, uris_text, aliases_text,
	                                 &ev, &n, &err) < 0)
		goto fail;
	conf = json_pack("{s:o}", "triggering_dataset_events", triggering_events(ev, n));
	snprintf(id, sizeof id, "dataset_triggered__%s", clock_format_airflow(now, ts, sizeof ts));
	/* the store's run types are manual, scheduled and backfill: a run the
	 * server starts by itself is scheduled; its run id says why */
	if (!conf || dm_create_run(dm, e, id, "scheduled", now, conf, &row, &err) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++)
		if (dataset_store_consume(dm->datasets.store, row.id, ev[i].id, &err) < 0)
			goto fail;
	if (dataset_store_queue_delete(dm->datasets.store, s->dag_id, NULL, 0, NULL, &err) < 0)
		goto fail;
	log_info("DAG %s: run %s on %zu dataset event%s", s->dag_id, id, n, n == 1 ? "" : "s");
	goto out;
fail:
	log_error("DAG %s: dataset-triggered run: %s", s->dag_id,
	          err.msg[0] ? err.msg : "out of memory");
out:
	dag_run_row_release(&row);
	dataset_event_rows_free(ev, n);
	json_decref(uris);
	json_decref(aliases);
	json_decref(conf);
	free(uris_text);
	free(aliases_text);
}

void dm_dataset_pass(struct dag_manager *dm)
{
	struct weir_error err = {0};
	struct dataset_queue_row *q = NULL;
	struct dataset_queued *queued = NULL;
	struct dataset_dag *dags = NULL;
	struct dag_entry **of = NULL;
	struct dataset_alias_link_row *link_rows = NULL;
	struct dataset_alias_link *links = NULL;
	size_t nq = 0, nd = 0, *due = NULL, n_due, n_links = 0;

	if (!dm->datasets.dirty)
		return;
	dm->datasets.dirty = false;
	if (dataset_store_queue_list(dm->datasets.store, NULL, NULL, 0, &q, &nq, &err) < 0) {
		log_error("dataset queue: %s", err.msg);
		return;
	}
	if (nq == 0)
		goto out;
	if (dm_dataset_alias_links(dm, NULL, &link_rows, &links, &n_links, &err) < 0) {
		log_error("dataset aliases: %s", err.msg);
		goto out;
	}
	queued = calloc(nq, sizeof *queued);
	for (size_t i = 0; queued && i < nq; i++)
		queued[i] = (struct dataset_queued){q[i].dag_id, q[i].uri};
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next)
		nd++;
	dags = calloc(nd + 1, sizeof *dags);
	of = calloc(nd + 1, sizeof *of);
	due = calloc(nd + 1, sizeof *due);
	if (!queued || !dags || !of || !due)
		goto out;
	nd = 0;
	for (struct dag_entry *e = dm->folder.entries; e; e = e->next) {
		const struct dag_spec *s = e->spec;
		struct dag_row dr = {0};
		bool waits = false;
		if (!e->present || !s || !dag_on_datasets(s) || dm_entry_by_id(dm, s->dag_id) != e)
			continue;
		for (size_t i = 0; i < nq && !waits; i++)
			waits = !strcmp(q[i].dag_id, s->dag_id);
		if (!waits)
			continue;
		dags[nd] = dataset_dag_of(s, links, n_links);
		dags[nd].paused = true;
		if (dag_store_dag_get(dm->ds, s->dag_id, &dr, NULL) == 0) {
			dags[nd].paused = dr.paused;
			dag_row_release(&dr);
		}
		of[nd++] = e;
	}
	n_due = dataset_due(dags, nd, queued, nq, due);
	for (size_t i = 0; i < n_due; i++)
		start_dataset_run(dm, of[due[i]]);
out:
	free(due);
	free(of);
	free(dags);
	free(queued);
	free(links);
	dataset_alias_link_rows_free(link_rows, n_links);
	dataset_queue_rows_free(q, nq);
}
