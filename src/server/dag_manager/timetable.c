/* timetable.c: DAGs on a custom Airflow Timetable (dm_internal.h).  The
 * server calls no Python: the DAG processor calls the timetable's
 * next_dagrun_info when it parses the file, from the latest scheduled run
 * the server gives it (dm_timetable_last_runs(), sent with the parse), and
 * the spec carries the next runs it listed (`schedule: {runs: [...], after,
 * more}`, model/cron.h's CRON_RUNS).  The schedule pass makes those runs;
 * this file decides whether the list still continues the DAG's latest
 * scheduled run, and asks for the file to be parsed again when it is used
 * up (the timetable has more) or stale (it was made after another run: a
 * server restarted, a run deleted).  Docs: docs/internals/airflow.md,
 * "Custom timetables".
 */
#include "server/dag_manager/dm_internal.h"

#include <stdio.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/log.h"
#include "model/cron.h"
#include "store/dag_store.h"

int dm_last_scheduled_interval(struct dag_manager *dm, struct dag_entry *e, int64_t *logical,
                               struct schedule_interval *iv)
{
	struct dag_run_row row = {0};
	char ts[48], id[80];

	*logical = dm_last_scheduled(dm, e);
	if (*logical == CRON_NEVER)
		return -1;
	iv->start_ms = iv->end_ms = *logical; /* deleted: its logical date */
	snprintf(id, sizeof id, "scheduled__%s", clock_format_airflow(*logical, ts, sizeof ts));
	if (dag_store_run_get(dm->ds, e->spec->dag_id, id, &row, NULL) == 0) {
		iv->start_ms = row.data_interval_start;
		iv->end_ms = row.data_interval_end;
		dag_run_row_release(&row);
	}
	return 0;
}

json_t *dm_timetable_last_runs(struct dag_manager *dm, struct dag_entry *file)
{
	json_t *out = NULL;

	for (struct dag_entry *d = dm->folder.entries; d; d = d->next) {
		struct schedule_interval iv;
		int64_t logical;
		if (d->owner != file || !d->spec || d->spec->schedule.kind == CRON_NONE ||
		    dm_last_scheduled_interval(dm, d, &logical, &iv) < 0)
			continue;
		if (!out && !(out = json_object()))
			return NULL;
		json_object_set_new(out, d->spec->dag_id,
		                    json_pack("{s:I, s:I, s:I}", "logical", (json_int_t)logical,
		                              "start", (json_int_t)iv.start_ms, "end",
		                              (json_int_t)iv.end_ms));
	}
	return out;
}

/* Asks for e's file to be parsed again, once for each latest run. */
static void ask_parse(struct dag_manager *dm, struct dag_entry *e, int64_t last, const char *why)
{
	struct dag_entry *file = e->owner;

	if (!file || file->parse || file->py_wanted || (e->runs_asked && e->runs_asked_ms == last))
		return;
	e->runs_asked = true;
	e->runs_asked_ms = last;
	log_info("DAG %s: its timetable's list of runs is %s: %s is parsed again", e->spec->dag_id,
	         why, file->file);
	dm_py_want(dm, file);
}

bool dm_timetable_list_current(struct dag_manager *dm, struct dag_entry *e)
{
	const struct dag_spec *s = e->spec;
	const struct cron *c = &s->schedule;
	int64_t last = dm_last_scheduled(dm, e);
	size_t next = 0;
	bool current = last == s->runs_after_ms;

	for (size_t i = 0; !current && i < c->n_runs; i++)
		if (c->runs[i].start_ms == last) {
			current = true;
			next = i + 1;
		}
	if (!e->owner) /* a YAML file's list: nobody to ask */
		return true;
	if (!current)
		ask_parse(dm, e, last, "stale");
	else if (next == c->n_runs && s->runs_more)
		ask_parse(dm, e, last, "used up");
	return current;
}
