/* route_table.c: the rows of every route (route_table.h) and the match.
 *
 * The rows are split into segments once, at the first match (the server's
 * loop thread); a match then compares segments without allocating.
 * Beside the rows: the entries that read their paths whole (their claims),
 * and the route group of each first segment under /api/v1, which answers
 * (in its own voice: a 400 for a bad id, a 404) a path none of its rows
 * match.
 */
#include "api/route_table.h"

#include "api/airflow/airflow.h"
#include "api/airflow/airflow_admin.h"
#include "api/airflow/airflow_misc.h"
#include "api/airflow/airflow_notes.h"
#include "api/airflow/conn_routes.h"
#include "api/airflow/dataset_routes.h"
#include "api/airflow/event_log_routes.h"
#include "api/airflow/notify_routes.h"
#include "api/calls_routes.h"
#include "api/db_clean_routes.h"
#include "api/jobs_routes.h"
#include "api/launch_routes.h"
#include "api/ui/ui_routes.h"
#include "api/users_routes.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SEG_MAX 12
#define AF "/api/v1"
#define TI AF "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"

/* A row: the template, the operation of each method (NULL: none, a 405;
 * HEAD is GET's where the entry says so), and the event of each
 * state-changing method (NULL: none named, the event log makes one; "": the
 * method changes nothing there and is not recorded; GET and HEAD never
 * are). */
struct route_row {
	const char *tpl;
	const struct route_entry *entry; /* who answers it (api/routes.h) */
	struct {
		route_op_fn get, post, patch, put, del;
	} op;
	const char *post, *patch, *put, *del;
	/* the least role of each method (model/role.h): what the request's
	 * credentials must carry (sched/access.h); ROLE_NONE for a method the
	 * row does not serve and for every method of an entry that takes no
	 * API credentials (ROUTE_OPEN) */
	struct {
		enum weir_role get, post, patch, put, del;
	} role;
};

/* the operations of a row: GET, POST, PATCH, PUT, DELETE */
/* clang-format off */
#define OPS(g, po, pa, pu, de) {g, po, pa, pu, de}
/* clang-format on */
#define GET(g) OPS(g, NULL, NULL, NULL, NULL)
#define NONE OPS(NULL, NULL, NULL, NULL, NULL) /* the row "other" */
/* the least role of each method: GET, POST, PATCH, PUT, DELETE */
/* clang-format off */
#define ROLES(g, po, pa, pu, de) {ROLE_##g, ROLE_##po, ROLE_##pa, ROLE_##pu, ROLE_##de}
/* clang-format on */

static const struct route_row rows[] = {
    [ROUTE_TABLE_OTHER] = {"other", NULL, NONE, NULL, NULL, NULL, NULL,
                           ROLES(NONE, NONE, NONE, NONE, NONE)},
    /* the UI's files and its login */
    {"/", &route_ui_files, GET(route_ui_file_get), NULL, NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {"/ui/{path*}", &route_ui_files, GET(route_ui_file_get), NULL, NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {"/ui/login", &route_ui_login, OPS(NULL, route_ui_login_post, NULL, NULL, NULL), "ui.login",
     NULL, NULL, NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {"/ui/session", &route_ui_login, GET(route_ui_session_get), NULL, NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {"/ui/logout", &route_ui_login, OPS(NULL, route_ui_logout_post, NULL, NULL, NULL), "ui.logout",
     NULL, NULL, NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {"/metrics", &route_metrics, GET(route_metrics_get), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    /* weir's own */
    {AF "/health", &route_health, GET(route_health_get), NULL, NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/jobs", &route_jobs, OPS(jobs_list, jobs_submit, NULL, NULL, NULL), "api.post_job", NULL,
     NULL, NULL, ROLES(VIEWER, USER, NONE, NONE, NONE)},
    {AF "/jobs/{job_id}", &route_jobs, OPS(jobs_get, NULL, NULL, NULL, jobs_kill), NULL, NULL, NULL,
     "api.delete_job", ROLES(VIEWER, NONE, NONE, NONE, USER)},
    {AF "/jobs/{job_id}/tasks", &route_jobs, GET(jobs_tasks), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/jobs/{job_id}/events", &route_jobs, GET(jobs_events), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    /* a warm worker's calls, reported in batches by the program that sent
     * them: not in the event log (a batch every tenth of a second) */
    {AF "/jobs/{job_id}/calls", &route_jobs, OPS(jobs_calls_get, jobs_calls_post, NULL, NULL, NULL),
     "", NULL, NULL, NULL, ROLES(VIEWER, USER, NONE, NONE, NONE)},
    {AF "/jobs/{job_id}/tasks/{role}/{index}/logs", &route_jobs, GET(jobs_task_log), NULL, NULL,
     NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    /* the launchers' protocol: machines reporting, not people acting */
    {AF "/launch/register", &route_launch, OPS(NULL, launch_register, NULL, NULL, NULL), "", NULL,
     NULL, NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/launch/cluster", &route_launch, GET(launch_cluster), "", NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/launch/started", &route_launch, OPS(NULL, launch_started, NULL, NULL, NULL), "", NULL,
     NULL, NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/launch/exited", &route_launch, OPS(NULL, launch_exited, NULL, NULL, NULL), "", NULL, NULL,
     NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/launch/dagRuns", &route_launch, OPS(NULL, launch_dag_runs, NULL, NULL, NULL), "", NULL,
     NULL, NULL, ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/launch/log", &route_launch, OPS(NULL, launch_log, NULL, NULL, NULL), "", NULL, NULL, NULL,
     ROLES(NONE, NONE, NONE, NONE, NONE)},
    {AF "/weir/dbClean", &route_db_clean, OPS(db_clean_get, db_clean_post, NULL, NULL, NULL),
     "weir.db_clean", NULL, NULL, NULL, ROLES(ADMIN, ADMIN, NONE, NONE, NONE)},
    /* users and tokens (weir users, weir tokens): Admin's */
    {AF "/weir/users", &route_users, OPS(route_users_list, route_users_create, NULL, NULL, NULL),
     "weir.user_create", NULL, NULL, NULL, ROLES(ADMIN, ADMIN, NONE, NONE, NONE)},
    {AF "/weir/users/{username}", &route_users,
     OPS(NULL, NULL, route_users_patch, NULL, route_users_delete), NULL, "weir.user_change", NULL,
     "weir.user_delete", ROLES(NONE, NONE, ADMIN, NONE, ADMIN)},
    {AF "/weir/tokens", &route_users, OPS(route_tokens_list, route_tokens_create, NULL, NULL, NULL),
     "weir.token_create", NULL, NULL, NULL, ROLES(ADMIN, ADMIN, NONE, NONE, NONE)},
    {AF "/weir/tokens/{token_name}", &route_users, OPS(NULL, NULL, NULL, NULL, route_tokens_revoke),
     NULL, NULL, NULL, "weir.token_revoke", ROLES(NONE, NONE, NONE, NONE, ADMIN)},
    {AF "/ui/me", &route_ui_me, GET(route_ui_me_get), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/ui/dags", &route_ui_data, GET(ui_data_dags), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/ui/dags/{dag_id}/grid", &route_ui_data, GET(ui_data_grid), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/ui/dags/{dag_id}/stats", &route_ui_data, GET(ui_data_stats), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/notifications", &route_notify, GET(notify_list), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/slaMisses", &route_notify, GET(notify_sla_misses), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/notifications", &route_notify, GET(notify_list), NULL,
     NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/slaMisses", &route_notify, GET(notify_sla_misses),
     NULL, NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    /* Airflow's stable REST API v1 */
    {AF "/connections", &route_connections,
     OPS(airflow_get_connections, airflow_post_connection, NULL, NULL, NULL), "api.post_connection",
     NULL, NULL, NULL, ROLES(OP, OP, NONE, NONE, NONE)},
    /* a connection named "test" is still read, changed and deleted here */
    {AF "/connections/test", &route_connections,
     OPS(airflow_get_connection, airflow_test_connection, airflow_patch_connection, NULL,
         airflow_delete_connection),
     "api.test_connection", NULL, NULL, NULL, ROLES(OP, OP, OP, NONE, OP)},
    {AF "/connections/{connection_id}", &route_connections,
     OPS(airflow_get_connection, NULL, airflow_patch_connection, NULL, airflow_delete_connection),
     NULL, "api.patch_connection", NULL, "api.delete_connection", ROLES(OP, NONE, OP, NONE, OP)},
    {AF "/variables", &route_connections,
     OPS(airflow_get_variables, airflow_post_variables, NULL, NULL, NULL), "api.post_variables",
     NULL, NULL, NULL, ROLES(OP, OP, NONE, NONE, NONE)},
    {AF "/variables/{variable_key}", &route_connections,
     OPS(airflow_get_variable, NULL, airflow_patch_variable, NULL, airflow_delete_variable), NULL,
     "api.patch_variable", NULL, "api.delete_variable", ROLES(OP, NONE, OP, NONE, OP)},
    {AF "/pools", &route_airflow_misc, OPS(airflow_get_pools, airflow_post_pool, NULL, NULL, NULL),
     "api.post_pool", NULL, NULL, NULL, ROLES(OP, OP, NONE, NONE, NONE)},
    {AF "/pools/{pool_name}", &route_airflow_misc,
     OPS(airflow_get_pool, NULL, airflow_patch_pool, NULL, airflow_delete_pool), NULL,
     "api.patch_pool", NULL, "api.delete_pool", ROLES(OP, NONE, OP, NONE, OP)},
    {AF "/dags", &route_airflow, OPS(airflow_get_dags, NULL, airflow_patch_dags, NULL, NULL), NULL,
     "api.patch_dags", NULL, NULL, ROLES(VIEWER, NONE, USER, NONE, NONE)},
    {AF "/dags/{dag_id}", &route_airflow,
     OPS(airflow_get_dag, NULL, airflow_patch_dag, NULL, airflow_delete_dag), NULL, "api.patch_dag",
     NULL, "api.delete_dag", ROLES(VIEWER, NONE, USER, NONE, USER)},
    {AF "/dags/{dag_id}/details", &route_airflow, GET(airflow_get_dag_details), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/tasks", &route_airflow, GET(airflow_get_tasks), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/tasks/{task_id}", &route_airflow, GET(airflow_get_task), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/clearTaskInstances", &route_airflow,
     OPS(NULL, airflow_post_clear_task_instances, NULL, NULL, NULL),
     "api.post_clear_task_instances", NULL, NULL, NULL, ROLES(NONE, USER, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/updateTaskInstancesState", &route_airflow,
     OPS(NULL, airflow_post_set_task_instances_state, NULL, NULL, NULL),
     "api.post_set_task_instances_state", NULL, NULL, NULL, ROLES(NONE, USER, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns", &route_airflow,
     OPS(airflow_get_dag_runs, airflow_post_dag_run, NULL, NULL, NULL), "api.post_dag_run", NULL,
     NULL, NULL, ROLES(VIEWER, USER, NONE, NONE, NONE)},
    {AF "/dags/~/dagRuns/list", &route_airflow,
     OPS(NULL, airflow_get_dag_runs_batch, NULL, NULL, NULL), "", NULL, NULL, NULL,
     ROLES(NONE, VIEWER, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", &route_airflow,
     OPS(airflow_get_dag_run, NULL, airflow_update_dag_run_state, NULL, airflow_delete_dag_run),
     NULL, "api.update_dag_run_state", NULL, "api.delete_dag_run",
     ROLES(VIEWER, NONE, USER, NONE, USER)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/clear", &route_airflow,
     OPS(NULL, airflow_clear_dag_run, NULL, NULL, NULL), "api.clear_dag_run", NULL, NULL, NULL,
     ROLES(NONE, USER, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", &route_airflow,
     OPS(NULL, NULL, airflow_set_dag_run_note, NULL, NULL), NULL, "api.set_dag_run_note", NULL,
     NULL, ROLES(NONE, NONE, USER, NONE, NONE)},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamDatasetEvents", &route_datasets,
     GET(airflow_get_upstream_dataset_events), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/{dag_id}/datasets/queuedEvent", &route_datasets,
     OPS(airflow_get_dag_dataset_queued_events, NULL, NULL, NULL,
         airflow_delete_dag_dataset_queued_events),
     NULL, NULL, NULL, "api.delete_dag_dataset_queued_events", ROLES(VIEWER, NONE, NONE, NONE, OP)},
    {AF "/dags/{dag_id}/datasets/queuedEvent/{uri*}", &route_datasets,
     OPS(airflow_get_dag_dataset_queued_event, NULL, NULL, NULL,
         airflow_delete_dag_dataset_queued_event),
     NULL, NULL, NULL, "api.delete_dag_dataset_queued_event", ROLES(VIEWER, NONE, NONE, NONE, OP)},
    {TI, &route_airflow, GET(airflow_get_task_instances), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dags/~/dagRuns/~/taskInstances/list", &route_airflow,
     OPS(NULL, airflow_get_task_instances_batch, NULL, NULL, NULL), "", NULL, NULL, NULL,
     ROLES(NONE, VIEWER, NONE, NONE, NONE)},
    {TI "/{task_id}", &route_airflow,
     OPS(airflow_get_task_instance, NULL, airflow_patch_task_instance, NULL, NULL), NULL,
     "api.patch_task_instance", NULL, NULL, ROLES(VIEWER, NONE, USER, NONE, NONE)},
    {TI "/{task_id}/{map_index}", &route_airflow,
     OPS(airflow_get_mapped_task_instance, NULL, airflow_patch_mapped_task_instance, NULL, NULL),
     NULL, "api.patch_mapped_task_instance", NULL, NULL, ROLES(VIEWER, NONE, USER, NONE, NONE)},
    {TI "/{task_id}/listMapped", &route_airflow, GET(airflow_get_mapped_task_instances), NULL, NULL,
     NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/setNote", &route_airflow,
     OPS(NULL, NULL, airflow_set_task_instance_note, NULL, NULL), NULL,
     "api.set_task_instance_note", NULL, NULL, ROLES(NONE, NONE, USER, NONE, NONE)},
    {TI "/{task_id}/{map_index}/setNote", &route_airflow,
     OPS(NULL, NULL, airflow_set_mapped_task_instance_note, NULL, NULL), NULL,
     "api.set_mapped_task_instance_note", NULL, NULL, ROLES(NONE, NONE, USER, NONE, NONE)},
    {TI "/{task_id}/dependencies", &route_airflow, GET(airflow_get_task_instance_dependencies),
     NULL, NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/{map_index}/dependencies", &route_airflow,
     GET(airflow_get_mapped_task_instance_dependencies), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/tries", &route_airflow, GET(airflow_get_task_instance_tries), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/tries/{task_try_number}", &route_airflow,
     GET(airflow_get_task_instance_try_details), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/{map_index}/tries", &route_airflow, GET(airflow_get_mapped_task_instance_tries),
     NULL, NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/{map_index}/tries/{task_try_number}", &route_airflow,
     GET(airflow_get_mapped_task_instance_try_details), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/links", &route_airflow, GET(airflow_get_extra_links), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/logs/{task_try_number}", &route_airflow, GET(airflow_get_log), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/xcomEntries", &route_airflow, GET(airflow_get_xcom_entries), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {TI "/{task_id}/xcomEntries/{xcom_key}", &route_airflow, GET(airflow_get_xcom_entry), NULL,
     NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dagStats", &route_airflow_misc, GET(airflow_get_dag_stats), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dagWarnings", &route_airflow_misc, GET(airflow_get_dag_warnings), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/dagSources/{file_token}", &route_airflow_misc, GET(airflow_get_dag_source), NULL, NULL,
     NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/parseDagFile/{file_token}", &route_airflow_misc,
     OPS(NULL, NULL, NULL, airflow_reparse_dag_file, NULL), NULL, NULL, "api.reparse_dag_file",
     NULL, ROLES(NONE, NONE, NONE, USER, NONE)},
    {AF "/datasets", &route_datasets, GET(airflow_get_datasets), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/datasets/{uri*}", &route_datasets, GET(airflow_get_dataset), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)}, /* a URI holds slashes */
    {AF "/datasets/events", &route_datasets,
     OPS(airflow_get_dataset_events, airflow_create_dataset_event, NULL, NULL, NULL),
     "api.create_dataset_event", NULL, NULL, NULL, ROLES(VIEWER, OP, NONE, NONE, NONE)},
    {AF "/datasets/queuedEvent/{uri*}", &route_datasets,
     OPS(airflow_get_dataset_queued_events, NULL, NULL, NULL, airflow_delete_dataset_queued_events),
     NULL, NULL, NULL, "api.delete_dataset_queued_events", ROLES(VIEWER, NONE, NONE, NONE, OP)},
    {AF "/eventLogs", &route_event_log, GET(airflow_get_event_logs), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/eventLogs/{event_log_id}", &route_event_log, GET(airflow_get_event_log), NULL, NULL, NULL,
     NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/importErrors", &route_airflow, GET(airflow_get_import_errors), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/importErrors/{import_error_id}", &route_airflow, GET(airflow_get_import_error), NULL,
     NULL, NULL, NULL, ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/providers", &route_airflow_misc, GET(airflow_get_providers), NULL, NULL, NULL, NULL,
     ROLES(OP, NONE, NONE, NONE, NONE)},
    {AF "/plugins", &route_airflow_misc, GET(airflow_get_plugins), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
    {AF "/config", &route_airflow_misc, GET(airflow_get_config), NULL, NULL, NULL, NULL,
     ROLES(OP, NONE, NONE, NONE, NONE)},
    {AF "/config/section/{section}/option/{option}", &route_airflow_misc, GET(airflow_get_value),
     NULL, NULL, NULL, NULL, ROLES(OP, NONE, NONE, NONE, NONE)},
    {AF "/version", &route_airflow_misc, GET(airflow_get_version), NULL, NULL, NULL, NULL,
     ROLES(VIEWER, NONE, NONE, NONE, NONE)},
};

#define N_ROWS (sizeof rows / sizeof rows[0])
_Static_assert(N_ROWS <= ROUTE_TABLE_MAX, "raise ROUTE_TABLE_MAX");

struct split_row {
	char buf[256];
	const char *seg[SEG_MAX];
	int n;
	int fixed; /* segments that are not {names} */
	bool rest; /* the last segment is {name*} */
};

static struct split_row split[N_ROWS];
static bool split_done;

static int split_path(char *buf, const char **seg)
{
	int n = 0;

	for (char *p = buf; *p;) {
		while (*p == '/')
			*p++ = '\0';
		if (!*p)
			break;
		if (n == SEG_MAX)
			return -1;
		seg[n++] = p;
		while (*p && *p != '/')
			p++;
	}
	return n;
}

static void split_rows(void)
{
	for (size_t i = 1; i < N_ROWS; i++) {
		struct split_row *r = &split[i];
		snprintf(r->buf, sizeof r->buf, "%s", rows[i].tpl);
		r->n = split_path(r->buf, r->seg);
		for (int k = 0; k < r->n; k++) {
			if (r->seg[k][0] != '{')
				r->fixed++;
			else if (k == r->n - 1 && strstr(r->seg[k], "*}"))
				r->rest = true;
		}
	}
	split_done = true;
}

/* Whether a {name} takes only digits. */
static bool numeric_name(const char *name)
{
	static const char *const nums[] = {"{map_index}", "{task_try_number}",
	                                   "{job_id}",    "{event_log_id}",
	                                   "{index}",     "{import_error_id}"};

	for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
		if (!strcmp(name, nums[i]))
			return true;
	return false;
}

static bool digits(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

static bool row_matches(const struct split_row *r, const char *const *seg, int n)
{
	if (r->rest ? n < r->n : n != r->n)
		return false;
	for (int k = 0; k < r->n; k++) {
		const char *t = r->seg[k];
		if (t[0] != '{') {
			if (strcmp(t, seg[k]))
				return false;
		} else if (numeric_name(t) && !digits(seg[k])) {
			return false;
		}
	}
	return true;
}

void route_table_match(const char *path, struct route_match *m)
{
	const char *seg[SEG_MAX];
	int n, best = ROUTE_TABLE_OTHER, best_fixed = -1;

	m->route = ROUTE_TABLE_OTHER;
	m->n = 0;
	if (!split_done)
		split_rows();
	if (!path || strlen(path) >= sizeof m->buf)
		return;
	snprintf(m->buf, sizeof m->buf, "%s", path);
	n = split_path(m->buf, seg);
	if (n < 0)
		return;
	if (n == 0) {
		m->route = 1; /* "/" */
		return;
	}
	for (size_t i = 2; i < N_ROWS; i++) {
		const struct split_row *r = &split[i];
		if (r->fixed > best_fixed && row_matches(r, seg, n)) {
			best = (int)i;
			best_fixed = r->fixed;
		}
	}
	m->route = best;
	if (best == ROUTE_TABLE_OTHER)
		return;
	for (int k = 0; k < split[best].n && m->n < ROUTE_PARAMS_MAX; k++) {
		const char *t = split[best].seg[k];
		if (t[0] != '{' || split[best].rest)
			continue;
		m->name[m->n] = t;
		m->value[m->n] = seg[k];
		m->n++;
	}
}

int route_table_find(const char *tpl)
{
	for (size_t i = 1; tpl && i < N_ROWS; i++)
		if (!strcmp(rows[i].tpl, tpl))
			return (int)i;
	return ROUTE_TABLE_OTHER;
}

size_t route_table_count(void)
{
	return N_ROWS;
}

const char *route_table_template(int route)
{
	if (route < 0 || (size_t)route >= N_ROWS)
		return rows[ROUTE_TABLE_OTHER].tpl;
	return rows[route].tpl;
}

const char *route_table_event(int route, const char *method)
{
	const struct route_row *r;

	if (route <= ROUTE_TABLE_OTHER || (size_t)route >= N_ROWS || !method)
		return NULL;
	r = &rows[route];
	if (!strcasecmp(method, "POST"))
		return r->post;
	if (!strcasecmp(method, "PATCH"))
		return r->patch;
	if (!strcasecmp(method, "PUT"))
		return r->put;
	if (!strcasecmp(method, "DELETE"))
		return r->del;
	return NULL;
}

/* The entries that read raw paths, tried in this order where a path's row
 * does not hold: the UI's login first, as its paths are under the UI's
 * files' /ui/. */
static const struct route_entry *const claimants[] = {&route_ui_login, &route_ui_files,
                                                      &route_metrics, &route_datasets};

/* The group of each first segment under /api/v1: who answers a path there
 * that no row matches, and whether errors there are problems.  A NULL entry
 * answers such a path with weir's plain 404 (every path the group answers
 * is a row, or a claim), though its 401 and its too-deep 404 are problems. */
static const struct route_group {
	const char *first;
	const struct route_entry *entry;
	bool problems;
} groups[] = {
    {"jobs", &route_jobs, false},
    {"launch", &route_launch, false},
    {"weir", NULL, false},
    {"dags", &route_airflow, true},
    {"importErrors", &route_airflow, true},
    {"pools", &route_airflow_misc, true},
    {"dagStats", &route_airflow_misc, true},
    {"dagSources", &route_airflow_misc, true},
    {"parseDagFile", &route_airflow_misc, true},
    {"version", &route_airflow_misc, true},
    {"config", &route_airflow_misc, true},
    {"dagWarnings", &route_airflow_misc, true},
    {"plugins", &route_airflow_misc, true},
    {"providers", &route_airflow_misc, true},
    {"connections", &route_connections, true},
    {"variables", &route_connections, true},
    {"eventLogs", &route_event_log, true},
    {"ui", &route_ui_data, true},
    {"notifications", NULL, true},
    {"slaMisses", NULL, true},
    {"datasets", NULL, true}, /* its paths are claimed (routes.c) */
};

route_op_fn route_table_op(int route, const char *method)
{
	const struct route_row *r;

	if (route <= ROUTE_TABLE_OTHER || (size_t)route >= N_ROWS || !method)
		return NULL;
	r = &rows[route];
	if (!strcmp(method, "GET"))
		return r->op.get;
	if (!strcmp(method, "POST"))
		return r->op.post;
	if (!strcmp(method, "PATCH"))
		return r->op.patch;
	if (!strcmp(method, "PUT"))
		return r->op.put;
	if (!strcmp(method, "DELETE"))
		return r->op.del;
	return NULL;
}

enum weir_role route_table_role(int route, const char *method)
{
	const struct route_row *r;

	if (route <= ROUTE_TABLE_OTHER || (size_t)route >= N_ROWS || !method)
		return ROLE_NONE;
	r = &rows[route];
	if (!strcmp(method, "GET") || !strcmp(method, "HEAD"))
		return r->role.get;
	if (!strcmp(method, "POST"))
		return r->role.post;
	if (!strcmp(method, "PATCH"))
		return r->role.patch;
	if (!strcmp(method, "PUT"))
		return r->role.put;
	if (!strcmp(method, "DELETE"))
		return r->role.del;
	return ROLE_NONE;
}

bool route_table_served(int route)
{
	const struct route_row *r;

	if (route <= ROUTE_TABLE_OTHER || (size_t)route >= N_ROWS)
		return false;
	r = &rows[route];
	return r->op.get || r->op.post || r->op.patch || r->op.put || r->op.del;
}

const struct route_entry *route_table_row_entry(int route)
{
	if (route <= ROUTE_TABLE_OTHER || (size_t)route >= N_ROWS)
		return NULL;
	return rows[route].entry;
}

const struct route_entry *route_table_group(const char *first, bool *problems)
{
	for (size_t i = 0; first && i < sizeof groups / sizeof groups[0]; i++) {
		if (!strcmp(first, groups[i].first)) {
			if (problems)
				*problems = groups[i].problems;
			return groups[i].entry;
		}
	}
	if (problems)
		*problems = false;
	return NULL;
}

const struct route_entry *route_table_entry(const struct route_match *m, const char *path)
{
	const struct route_entry *e = route_table_row_entry(m->route);
	bool api = !strncmp(path, "/api/v1/", 8);
	char first[64];
	size_t len;

	if (e && (e->claims ? e->claims(path) : api))
		return e;
	for (size_t i = 0; i < sizeof claimants / sizeof claimants[0]; i++)
		if (claimants[i]->claims(path))
			return claimants[i];
	if (!api)
		return NULL;
	path += 8;
	path += strspn(path, "/");
	len = strcspn(path, "/");
	if (len >= sizeof first)
		return NULL;
	memcpy(first, path, len);
	first[len] = '\0';
	return route_table_group(first, NULL);
}
