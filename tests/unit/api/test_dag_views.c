/* test_dag_views.c: the Airflow-shaped JSON of DAGs, runs, task instances,
 * tasks, tries and the web UI's views, rendered from rows and specs built
 * here (api/dag_views.h, api/dag_ui_views.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/dag_ui_views.h"
#include "api/dag_views.h"
#include "lib/clock.h"
#include "lib/json_util.h"
#include "model/cron.h"

static const char dag_text[] = "dag_id: d\n"
                               "description: a test\n"
                               "schedule: \"0 6 * * *\"\n"
                               "start_date: 2024-01-01\n"
                               "tags: [nightly, ml]\n"
                               "params: {n: 3, name: x}\n"
                               "tasks:\n"
                               "  - task_id: zeta\n"
                               "    command: echo z\n"
                               "  - task_id: alpha\n"
                               "    depends_on: [zeta]\n"
                               "    retries: 2\n"
                               "    command: echo a\n"
                               "  - task_id: mid\n"
                               "    depends_on: [zeta]\n"
                               "    command: echo m\n";

static struct dag_spec *parse(const char *text)
{
	struct weir_error err = {0};
	struct dag_spec *s = dag_spec_parse_string(text, strlen(text), "d.yaml", NULL, &err);

	if (!s)
		fail_msg("%s", err.msg);
	return s;
}

static const char *str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static struct dag_run_row run_row(const char *run_id, const char *state, int64_t logical)
{
	struct dag_run_row r = {0};

	r.dag_id = "d";
	r.run_id = (char *)run_id;
	assert_int_equal(dag_run_state_from_name(state, &r.state), 0);
	snprintf(r.run_type, sizeof r.run_type, "%s", "manual");
	r.logical_date = logical;
	r.conf = "{\"k\": 1}";
	r.reason = "";
	return r;
}

static struct dag_ti_row ti_row(const char *run_id, const char *task_id, const char *state)
{
	struct dag_ti_row t = {0};

	t.dag_id = "d";
	t.run_id = (char *)run_id;
	t.task_id = (char *)task_id;
	t.map_index = -1;
	assert_int_equal(dag_ti_state_from_name(state, &t.state), 0);
	t.pool = "default_pool";
	t.pool_slots = 1;
	t.rendered_command = "";
	t.outputs = "";
	t.reason = "";
	return t;
}

static void test_times(void **state)
{
	char buf[48];
	json_t *j;

	(void)state;
	assert_string_equal(
	    clock_format_airflow(schedule_make_time(2024, 1, 31, 6, 0, 0), buf, sizeof buf),
	    "2024-01-31T06:00:00+00:00");
	assert_string_equal(
	    clock_format_airflow(schedule_make_time(2024, 1, 31, 6, 0, 0) + 250, buf, sizeof buf),
	    "2024-01-31T06:00:00.250000+00:00");
	j = json_util_time_airflow(0);
	assert_true(json_is_null(j));
	json_decref(j);
	j = json_util_time_airflow(1);
	assert_string_equal(json_string_value(j), "1970-01-01T00:00:00.001000+00:00");
	json_decref(j);
}

static void test_dag(void **state)
{
	struct dag_spec *s = parse(dag_text);
	struct dag_row row = {.dag_id = "d",
	                      .file = "/dags/d.yaml",
	                      .active = true,
	                      .import_error = "",
	                      .spec_json = "{}"};
	int64_t next = schedule_make_time(2024, 2, 1, 6, 0, 0);
	json_t *o;

	(void)state;
	o = dag_view_dag(&row, s, next);
	assert_non_null(o);
	assert_string_equal(str(o, "dag_id"), "d");
	assert_string_equal(str(o, "description"), "a test");
	assert_string_equal(str(o, "fileloc"), "/dags/d.yaml");
	assert_true(json_is_false(json_object_get(o, "is_paused")));
	assert_int_equal(json_array_size(json_object_get(o, "tags")), 2);
	assert_string_equal(str(json_array_get(json_object_get(o, "tags"), 1), "name"), "ml");
	assert_string_equal(str(json_object_get(o, "schedule_interval"), "value"), "0 6 * * *");
	assert_string_equal(str(o, "timetable_description"), "0 6 * * *");
	assert_string_equal(str(o, "next_dagrun"), "2024-02-01T06:00:00+00:00");
	/* the logical date starts its interval; the run is created when it ends */
	assert_string_equal(str(o, "next_dagrun_data_interval_start"), "2024-02-01T06:00:00+00:00");
	assert_string_equal(str(o, "next_dagrun_data_interval_end"), "2024-02-02T06:00:00+00:00");
	assert_string_equal(str(o, "next_dagrun_create_after"), "2024-02-02T06:00:00+00:00");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "params"), "n")), 3);
	assert_true(json_is_false(json_object_get(o, "has_import_errors")));
	assert_null(json_object_get(o, "import_error"));
	json_decref(o);

	/* no parse, no next run, a broken file that still has a good version */
	row.paused = true;
	row.import_error = "d.yaml:3: tasks: expected a list";
	o = dag_view_dag(&row, NULL, CRON_NEVER);
	assert_true(json_is_null(json_object_get(o, "schedule_interval")));
	assert_true(json_is_null(json_object_get(o, "next_dagrun")));
	assert_true(json_is_null(json_object_get(o, "next_dagrun_create_after")));
	assert_true(json_is_null(json_object_get(o, "description")));
	assert_string_equal(str(o, "timetable_description"), "Never, external triggers only");
	assert_true(json_is_true(json_object_get(o, "has_import_errors")));
	assert_string_equal(str(o, "import_error"), row.import_error);
	assert_null(json_object_get(o, "params"));
	json_decref(o);

	o = dag_view_details(&row, s, CRON_NEVER);
	assert_string_equal(str(json_object_get(json_object_get(o, "params"), "name"), "__class"),
	                    "airflow.models.param.Param");
	assert_string_equal(
	    str(json_object_get(json_object_get(json_object_get(o, "params"), "n"), "schema"),
	        "type"),
	    "integer");
	assert_int_equal(json_integer_value(json_object_get(o, "task_count")), 3);
	assert_string_equal(str(o, "start_date"), "2024-01-01T00:00:00+00:00");
	assert_true(json_is_null(json_object_get(o, "end_date")));
	json_decref(o);
	dag_spec_destroy(s);
}

static void test_run(void **state)
{
	struct dag_run_row r = run_row("manual__1", "running", 0);
	json_t *o;

	(void)state;
	r.start_date = schedule_make_time(2024, 1, 1, 0, 0, 5);
	o = dag_view_run(&r);
	assert_string_equal(str(o, "dag_run_id"), "manual__1");
	/* logical date 0 is a real date: shown one millisecond in, never null */
	assert_string_equal(str(o, "logical_date"), "1970-01-01T00:00:00.001000+00:00");
	assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "conf"), "k")), 1);
	assert_true(json_is_true(json_object_get(o, "external_trigger")));
	assert_true(json_is_null(json_object_get(o, "end_date")));
	assert_string_equal(str(o, "last_scheduling_decision"), "2024-01-01T00:00:05+00:00");
	json_decref(o);

	snprintf(r.run_type, sizeof r.run_type, "scheduled");
	r.conf = "";
	o = dag_view_run(&r);
	assert_true(json_is_false(json_object_get(o, "external_trigger")));
	assert_int_equal(json_object_size(json_object_get(o, "conf")), 0);
	json_decref(o);
}

static void test_ti(void **state)
{
	struct dag_run_row run = run_row("r", "running", schedule_make_time(2024, 1, 1, 0, 0, 0));
	struct dag_ti_row t = ti_row("r", "alpha", "queued");
	struct dag_job_view waiting = {.known = true, .reason = "pending in slurm: Resources"};
	struct dag_job_view running = {.known = true, .running = true, .started_at = 5000};
	json_t *o;

	(void)state;
	t.job_id = 7;
	t.try_number = 1;
	t.max_tries = 3;
	t.end_date = 9000; /* a leftover of the try before */
	o = dag_view_ti(&t, &run, &waiting);
	assert_string_equal(str(o, "state"), "queued");
	assert_string_equal(str(o, "reason"), "pending in slurm: Resources");
	assert_string_equal(str(o, "hostname"), "localhost");
	assert_int_equal(json_integer_value(json_object_get(o, "max_tries")), 2);
	assert_int_equal(json_integer_value(json_object_get(o, "job_id")), 7);
	assert_string_equal(str(o, "logical_date"), "2024-01-01T00:00:00+00:00");
	json_decref(o);

	o = dag_view_ti(&t, &run, &running);
	assert_string_equal(str(o, "state"), "running");
	assert_string_equal(str(o, "start_date"), "1970-01-01T00:00:05+00:00");
	assert_true(json_is_null(json_object_get(o, "end_date")));
	assert_true(json_is_null(json_object_get(o, "duration")));
	assert_string_equal(str(o, "reason"), "");
	json_decref(o);

	/* no job: state "none" shows as null, no host */
	t = ti_row("r", "zeta", "none");
	t.outputs = "{\"k\": \"v\"}";
	o = dag_view_ti(&t, NULL, NULL);
	assert_true(json_is_null(json_object_get(o, "state")));
	assert_string_equal(str(o, "hostname"), "");
	assert_true(json_is_null(json_object_get(o, "job_id")));
	assert_true(json_is_null(json_object_get(o, "logical_date")));
	assert_string_equal(str(json_object_get(o, "outputs"), "k"), "v");
	assert_true(json_is_null(json_object_get(o, "rendered_map_index")));
	json_decref(o);
	/* a mapped instance's rendered map_index_template, from its output */
	t.outputs = "{\"weir_rendered_map_index\": \"file a.csv\"}";
	o = dag_view_ti(&t, NULL, NULL);
	assert_string_equal(str(o, "rendered_map_index"), "file a.csv");
	json_decref(o);

	t = ti_row("r", "zeta", "success");
	t.start_date = 1000;
	t.end_date = 3500;
	o = dag_view_ti(&t, &run, NULL);
	assert_true(json_real_value(json_object_get(o, "duration")) == 2.5);
	json_decref(o);
	o = dag_view_ti_ref(&t, &run);
	assert_int_equal(json_object_size(o), 5);
	assert_string_equal(str(o, "execution_date"), "2024-01-01T00:00:00+00:00");
	json_decref(o);
}

/* The same TI as the DAG ops hand it over (struct dag_ti_view, its row
 * borrowed from t): a listing counts it (dag_view_ti_showable) exactly when
 * it has a view, and its tree and text, alone and in a page, are `want`'s
 * (NULL: none). */
static void same_ti_view(const struct dag_ti_row *t, const struct dag_run_row *run,
                         const struct dag_job_view *job, json_t *sla, const char *want)
{
	struct dag_ti_view v = {.row = *t, .logical_date = run ? run->logical_date : 0};
	struct dag_ti_list page = {.v = &v, .n = 1, .total = 7};
	struct strbuf sb = STRBUF_INIT;
	json_t *o;
	char *text;

	if (job)
		v.job = *job;
	v.sla_miss = sla;
	assert_int_equal(dag_view_ti_showable(&v), want != NULL);
	o = dag_view_ti_of(&v);
	text = o ? json_dumps(o, JSON_COMPACT) : NULL;
	if (!want) {
		assert_null(o);
		assert_int_equal(dag_view_ti_of_write(&sb, &v), -1);
	} else {
		assert_string_equal(text, want);
		assert_int_equal(dag_view_ti_of_write(&sb, &v), 0);
		assert_string_equal(sb.buf, want);
	}
	free(text);
	json_decref(o);
	/* a page of it: the TI left out when it has no view, total as given */
	strbuf_release(&sb);
	assert_int_equal(dag_view_tis_write(&sb, &page), 0);
	o = json_pack("{s:[], s:i}", "task_instances", "total_entries", 7);
	if (want)
		json_array_append_new(json_object_get(o, "task_instances"),
		                      json_loads(want, 0, NULL));
	text = json_dumps(o, JSON_COMPACT);
	assert_string_equal(sb.buf, text);
	free(text);
	json_decref(o);
	strbuf_release(&sb);
}

/* The TI written as text is the text of its tree, sla_miss set as the
 * DAG manager sets it; *none: neither has a view. */
static void same_ti_text(const struct dag_ti_row *t, const struct dag_run_row *run,
                         const struct dag_job_view *job, json_t *sla)
{
	struct strbuf sb = STRBUF_INIT;
	json_t *o = dag_view_ti(t, run, job);
	int rc;

	strbuf_addstr(&sb, "[");
	rc = dag_view_ti_write(&sb, t, run, job, sla);
	if (!o) {
		assert_int_equal(rc, -1);
		assert_string_equal(sb.buf, "[");
		same_ti_view(t, run, job, sla, NULL);
	} else {
		char *want;
		json_object_set(o, "sla_miss", sla ? sla : json_null());
		want = json_dumps(o, JSON_COMPACT);
		assert_int_equal(rc, 0);
		assert_string_equal(sb.buf + 1, want);
		same_ti_view(t, run, job, sla, want);
		free(want);
	}
	json_decref(o);
	strbuf_release(&sb);
}

static void test_ti_text(void **state)
{
	struct dag_run_row run = run_row("r", "running", schedule_make_time(2024, 1, 1, 0, 0, 0));
	struct dag_job_view waiting = {.known = true, .reason = "pending in slurm: Resources"};
	struct dag_job_view running = {.known = true, .running = true, .started_at = 5000};
	struct dag_job_view gone = {0};
	const struct dag_job_view *jobs[] = {NULL, &gone, &waiting, &running};
	static const char *const states[] = {"none",    "scheduled", "queued",       "running",
	                                     "success", "failed",    "up_for_retry", "skipped"};
	static const char *const texts[] = {"", "echo \"a\\b\"\n\t\x01", "caf\xc3\xa9 \xe2\x82\xac",
	                                    "bad \xff utf-8"};
	static const int64_t ends[] = {0, 3500, 1001, 1000 + 1234567, 1000 + 100000000000LL};
	json_t *sla = json_pack("{s:s, s:i}", "task_id", "alpha", "n", 1);

	(void)state;
	for (size_t s = 0; s < sizeof states / sizeof *states; s++)
		for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++)
			for (size_t k = 0; k < sizeof texts / sizeof *texts; k++)
				for (size_t e = 0; e < sizeof ends / sizeof *ends; e++) {
					struct dag_ti_row t = ti_row("r", "alpha", states[s]);
					t.job_id = j ? 7 : 0;
					t.try_number = (int)k;
					t.max_tries = (int)e;
					t.start_date = e % 2 ? 1000 : 0;
					t.end_date = ends[e];
					t.queued_at = e ? 900 : 0;
					t.rendered_command = (char *)texts[k];
					t.reason = (char *)texts[(k + 1) % 4];
					t.outputs = e == 2 ? "{\"k\": [1, 2.5, \"v\"], \"z\": null}"
					            : e == 3 ? "not json"
					            : e == 1 ? "{\"weir_rendered_map_index\": \"x=1\"}"
					                     : "";
					same_ti_text(&t, e == 4 ? NULL : &run, jobs[j],
					             e == 1 ? sla : NULL);
				}
	/* a text missing spoils the TI in both */
	struct dag_ti_row t = ti_row("r", "alpha", "success");
	t.pool = NULL;
	same_ti_text(&t, &run, NULL, NULL);
	t = ti_row("r", "bad\xc3", "success");
	same_ti_text(&t, &run, NULL, NULL);
	json_decref(sla);
}

/* A run written as text is the text of its tree (none when it has none). */
static void test_run_text(void **state)
{
	static const char *const confs[] = {
	    "", "{}", "{\"k\": [1, 2.5, \"v\\n\"], \"z\": null}", "[1, 2]", "not json", NULL};
	static const char *const ids[] = {"manual__1", "dataset_triggered__x", "caf\xc3\xa9",
	                                  "bad\xff"};
	static const char *const types[] = {"manual", "scheduled", "backfill"};
	static const char *const states[] = {"queued", "running", "success", "failed"};

	(void)state;
	for (size_t c = 0; c < sizeof confs / sizeof *confs; c++)
		for (size_t i = 0; i < sizeof ids / sizeof *ids; i++)
			for (size_t t = 0; t < sizeof types / sizeof *types; t++) {
				struct dag_run_row r = run_row(ids[i], states[(c + i + t) % 4],
				                               t == 2 ? 0 : 1700000000123);
				struct strbuf sb = STRBUF_INIT;
				json_t *o;
				int rc;
				snprintf(r.run_type, sizeof r.run_type, "%s", types[t]);
				r.conf = (char *)confs[c];
				r.start_date = c ? 1700000001000 : 0;
				r.end_date = c > 2 ? 1700000002500 : 0;
				r.queued_at = i ? 1700000000500 : 0;
				r.data_interval_start = t ? 1700000000000 : 0;
				r.data_interval_end = t ? 1700000000999 : 0;
				r.reason = i == 3 ? "why \"not\"" : "";
				o = dag_view_run(&r);
				strbuf_addch(&sb, '[');
				rc = dag_view_run_write(&sb, &r);
				if (!o) {
					assert_int_equal(rc, -1);
					assert_string_equal(sb.buf, "[");
				} else {
					char *want = json_dumps(o, JSON_COMPACT);
					assert_int_equal(rc, 0);
					assert_string_equal(sb.buf + 1, want);
					free(want);
				}
				json_decref(o);
				strbuf_release(&sb);
			}
}

static void test_real_text(void **state)
{
	static const double v[] = {
	    0,    1,        2.5,   0.1,   0.012, 1234567.891,         1e21,
	    1e-7, 123e-300, -3.25, 1e300, 100,   0.30000000000000004, 5e-324};
	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
		struct strbuf sb = STRBUF_INIT;
		json_t *r = json_real(v[i]);
		char *want = json_dumps(r, JSON_ENCODE_ANY);
		assert_int_equal(json_util_write_real(&sb, v[i]), 0);
		assert_string_equal(sb.buf, want);
		free(want);
		json_decref(r);
		strbuf_release(&sb);
	}
}

static void test_tasks(void **state)
{
	struct dag_spec *s = parse(dag_text);
	json_t *o = dag_view_tasks(s), *tasks = json_object_get(o, "tasks"), *zeta;

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(o, "total_entries")), 3);
	/* by task_id, not the file's order */
	assert_string_equal(str(json_array_get(tasks, 0), "task_id"), "alpha");
	assert_string_equal(str(json_array_get(tasks, 1), "task_id"), "mid");
	zeta = json_array_get(tasks, 2);
	assert_string_equal(str(zeta, "task_id"), "zeta");
	/* downstream in file order of the downstream task */
	assert_int_equal(json_array_size(json_object_get(zeta, "downstream_task_ids")), 2);
	assert_string_equal(
	    json_string_value(json_array_get(json_object_get(zeta, "downstream_task_ids"), 0)),
	    "alpha");
	assert_string_equal(json_string_value(json_array_get(
	                        json_object_get(json_array_get(tasks, 0), "upstream_task_ids"), 0)),
	                    "zeta");
	assert_int_equal(json_integer_value(json_object_get(json_array_get(tasks, 0), "retries")),
	                 2);
	assert_string_equal(str(json_object_get(zeta, "class_ref"), "class_name"), "WeirCommand");
	json_decref(o);
	dag_spec_destroy(s);
}

static void test_tries(void **state)
{
	struct dag_run_row run = run_row("r", "running", 0);
	struct dag_try_row tries[2] = {
	    {.dag_id = "d",
	     .run_id = "r",
	     .task_id = "alpha",
	     .map_index = -1,
	     .try_number = 1,
	     .job_id = 3,
	     .state = DAG_TI_FAILED,
	     .start_date = 1000,
	     .end_date = 2000,
	     .reason = "exit 1"},
	    {.dag_id = "d",
	     .run_id = "r",
	     .task_id = "alpha",
	     .map_index = -1,
	     .try_number = 2,
	     .job_id = 4,
	     .state = DAG_TI_QUEUED,
	     .start_date = 0,
	     .end_date = 0,
	     .reason = ""},
	};
	struct dag_job_view jobs[2] = {{0}, {.known = true, .running = true, .started_at = 4000}};
	json_t *o = dag_view_tries(tries, 2, jobs, &run), *a = json_object_get(o, "task_instances");

	(void)state;
	assert_int_equal(json_integer_value(json_object_get(o, "total_entries")), 2);
	assert_string_equal(str(json_array_get(a, 0), "state"), "failed");
	assert_true(json_real_value(json_object_get(json_array_get(a, 0), "duration")) == 1.0);
	assert_string_equal(str(json_array_get(a, 0), "reason"), "exit 1");
	assert_string_equal(str(json_array_get(a, 1), "state"), "running");
	assert_string_equal(str(json_array_get(a, 1), "start_date"), "1970-01-01T00:00:04+00:00");
	assert_true(json_is_null(json_object_get(json_array_get(a, 1), "end_date")));
	json_decref(o);
}

static void test_ui_views(void **state)
{
	struct dag_spec *s = parse(dag_text);
	struct dag_row row = {.dag_id = "d",
	                      .file = "/dags/d.yaml",
	                      .active = true,
	                      .import_error = "",
	                      .spec_json = "{}"};
	struct dag_run_row runs[2] = {run_row("r1", "success", 1000),
	                              run_row("r2", "running", 2000)};
	struct dag_import_error_row ie = {.id = 4,
	                                  .file = "/dags/x.yaml",
	                                  .time = 1000,
	                                  .message = "/dags/x.yaml:12: tasks[0]: expected a map"};
	struct dag_import_error_row ie2 = {
	    .id = 5, .file = "/dags/y.yaml", .time = 1000, .message = "cannot read the file"};
	int64_t counts[DAG_VIEW_RUN_STATES] = {1, 2, 3, 4};
	json_t *o;

	(void)state;
	runs[0].start_date = 1000;
	runs[0].end_date = 4000;
	o = dag_view_ui_dag(&row, s, CRON_NEVER, runs, 2);
	assert_int_equal(json_array_size(json_object_get(o, "last_runs")), 2);
	assert_string_equal(str(json_array_get(json_object_get(o, "last_runs"), 1), "dag_run_id"),
	                    "r2");
	assert_int_equal(json_object_size(json_array_get(json_object_get(o, "last_runs"), 0)), 7);
	json_decref(o);

	o = dag_view_ui_import_error(&ie);
	assert_int_equal(json_integer_value(json_object_get(o, "line")), 12);
	json_decref(o);
	o = dag_view_ui_import_error(&ie2);
	assert_true(json_is_null(json_object_get(o, "line")));
	json_decref(o);
	o = dag_view_import_error(&ie);
	assert_string_equal(str(o, "stack_trace"), ie.message);
	json_decref(o);

	o = dag_view_stats("d", runs, 2, counts);
	assert_int_equal(json_integer_value(json_object_get(o, "total_entries")), 10);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(o, "counts"), "failed")), 4);
	assert_true(json_real_value(json_object_get(json_array_get(json_object_get(o, "runs"), 0),
	                                            "duration_seconds")) == 3.0);
	assert_true(json_is_null(
	    json_object_get(json_array_get(json_object_get(o, "runs"), 1), "duration_seconds")));
	json_decref(o);
	dag_spec_destroy(s);
}

static void test_grid(void **state)
{
	struct dag_spec *s = parse(dag_text);
	struct dag_run_row runs[2] = {run_row("r1", "success", 1000),
	                              run_row("r2", "running", 2000)};
	struct dag_ti_row tis[5] = {
	    ti_row("r1", "zeta", "success"), ti_row("r1", "alpha", "success"),
	    ti_row("r2", "zeta", "queued"),  ti_row("r2", "alpha", "failed"),
	    ti_row("r2", "gone", "success"), /* a task that left the file */
	};
	struct dag_job_view jobs[5] = {
	    {0}, {0}, {.known = true, .running = true, .started_at = 7000}};
	json_t *o, *tasks, *zeta, *cell;

	(void)state;
	tis[2].job_id = 9;
	tis[3].end_date = 8000;
	o = dag_view_grid("d", s, runs, 2, tis, 5, jobs);
	assert_non_null(o);
	assert_int_equal(json_array_size(json_object_get(o, "runs")), 2);
	tasks = json_object_get(o, "tasks");
	/* rows upstream first: zeta, then alpha and mid in the file's order */
	assert_int_equal(json_array_size(tasks), 3);
	zeta = json_array_get(tasks, 0);
	assert_string_equal(str(zeta, "task_id"), "zeta");
	assert_string_equal(str(json_array_get(tasks, 1), "task_id"), "alpha");
	assert_string_equal(str(json_array_get(tasks, 2), "task_id"), "mid");
	/* the queued TI whose job runs shows running, started when the job did */
	cell = json_array_get(json_object_get(zeta, "instances"), 1);
	assert_string_equal(str(cell, "dag_run_id"), "r2");
	assert_string_equal(str(cell, "state"), "running");
	assert_string_equal(str(cell, "start_date"), "1970-01-01T00:00:07+00:00");
	assert_true(json_is_null(json_object_get(cell, "end_date")));
	assert_true(json_is_null(json_object_get(cell, "map_index_count")));
	cell = json_array_get(json_object_get(json_array_get(tasks, 1), "instances"), 1);
	assert_string_equal(str(cell, "state"), "failed");
	assert_string_equal(str(cell, "end_date"), "1970-01-01T00:00:08+00:00");
	/* a task without TIs in a run: no state */
	cell = json_array_get(json_object_get(json_array_get(tasks, 2), "instances"), 0);
	assert_true(json_is_null(json_object_get(cell, "state")));
	json_decref(o);

	/* a DAG whose file never parsed has runs but no rows */
	o = dag_view_grid("d", NULL, runs, 2, tis, 5, NULL);
	assert_int_equal(json_array_size(json_object_get(o, "tasks")), 0);
	assert_int_equal(json_array_size(json_object_get(o, "runs")), 2);
	json_decref(o);
	dag_spec_destroy(s);
}

static void test_grid_mapped(void **state)
{
	static const char text[] = "dag_id: m\n"
	                           "tasks:\n"
	                           "  - task_id: each\n"
	                           "    foreach: [a, b, c]\n"
	                           "    command: echo {{ item }}\n";
	struct dag_spec *s = parse(text);
	struct dag_run_row runs[1] = {run_row("r1", "running", 1000)};
	struct dag_ti_row tis[3] = {ti_row("r1", "each", "success"), ti_row("r1", "each", "failed"),
	                            ti_row("r1", "each", "running")};
	json_t *o, *cell;

	(void)state;
	for (int i = 0; i < 3; i++)
		tis[i].map_index = i;
	tis[0].try_number = 1;
	tis[1].try_number = 3;
	o = dag_view_grid("m", s, runs, 1, tis, 3, NULL);
	cell = json_array_get(
	    json_object_get(json_array_get(json_object_get(o, "tasks"), 0), "instances"), 0);
	/* the most significant state of the instances, and how many there are */
	assert_string_equal(str(cell, "state"), "failed");
	assert_int_equal(json_integer_value(json_object_get(cell, "map_index_count")), 3);
	assert_int_equal(json_integer_value(json_object_get(cell, "try_number")), 3);
	assert_int_equal(
	    json_integer_value(json_object_get(json_object_get(cell, "states_count"), "running")),
	    1);
	assert_true(json_is_null(json_object_get(cell, "end_date"))); /* one still runs */
	json_decref(o);
	dag_spec_destroy(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_times),    cmocka_unit_test(test_dag),
	    cmocka_unit_test(test_run),      cmocka_unit_test(test_ti),
	    cmocka_unit_test(test_ti_text),  cmocka_unit_test(test_real_text),
	    cmocka_unit_test(test_run_text), cmocka_unit_test(test_tasks),
	    cmocka_unit_test(test_tries),    cmocka_unit_test(test_ui_views),
	    cmocka_unit_test(test_grid),     cmocka_unit_test(test_grid_mapped),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
