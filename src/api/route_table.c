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

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define SEG_MAX 12
#define AF "/api/v1"
#define TI AF "/dags/{dag_id}/dagRuns/{dag_run_id}/taskInstances"

/* A row: the template and the event of each state-changing method (NULL:
 * none named, the event log makes one; "": the method changes nothing
 * there and is not recorded; GET and HEAD never are). */
struct route_row {
	const char *tpl;
	const struct route_entry *entry; /* who answers it (api/routes.h) */
	const char *post, *patch, *put, *del;
};

static const struct route_row rows[] = {
    [ROUTE_TABLE_OTHER] = {"other", NULL, NULL, NULL, NULL, NULL},
    /* the UI's files and its login */
    {"/", &route_ui_files, NULL, NULL, NULL, NULL},
    {"/ui/{path*}", &route_ui_files, NULL, NULL, NULL, NULL},
    {"/ui/login", &route_ui_login, "ui.login", NULL, NULL, NULL},
    {"/ui/session", &route_ui_login, NULL, NULL, NULL, NULL},
    {"/ui/logout", &route_ui_login, "ui.logout", NULL, NULL, NULL},
    {"/metrics", &route_metrics, NULL, NULL, NULL, NULL},
    /* weir's own */
    {AF "/health", &route_health, NULL, NULL, NULL, NULL},
    {AF "/jobs", &route_jobs, "api.post_job", NULL, NULL, NULL},
    {AF "/jobs/{job_id}", &route_jobs, NULL, NULL, NULL, "api.delete_job"},
    {AF "/jobs/{job_id}/tasks", &route_jobs, NULL, NULL, NULL, NULL},
    {AF "/jobs/{job_id}/events", &route_jobs, NULL, NULL, NULL, NULL},
    {AF "/jobs/{job_id}/tasks/{role}/{index}/logs", &route_jobs, NULL, NULL, NULL, NULL},
    /* the launchers' protocol: machines reporting, not people acting */
    {AF "/launch/register", &route_launch, "", NULL, NULL, NULL},
    {AF "/launch/cluster", &route_launch, "", NULL, NULL, NULL},
    {AF "/launch/started", &route_launch, "", NULL, NULL, NULL},
    {AF "/launch/exited", &route_launch, "", NULL, NULL, NULL},
    {AF "/launch/log", &route_launch, "", NULL, NULL, NULL},
    {AF "/ui/dags", &route_ui_data, NULL, NULL, NULL, NULL},
    {AF "/ui/dags/{dag_id}/grid", &route_ui_data, NULL, NULL, NULL, NULL},
    {AF "/ui/dags/{dag_id}/stats", &route_ui_data, NULL, NULL, NULL, NULL},
    {AF "/notifications", &route_notify, NULL, NULL, NULL, NULL},
    {AF "/slaMisses", &route_notify, NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/notifications", &route_notify, NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/slaMisses", &route_notify, NULL, NULL, NULL, NULL},
    /* Airflow's stable REST API v1 */
    {AF "/connections", &route_connections, "api.post_connection", NULL, NULL, NULL},
    {AF "/connections/test", &route_connections, "api.test_connection", NULL, NULL, NULL},
    {AF "/connections/{connection_id}", &route_connections, NULL, "api.patch_connection", NULL,
     "api.delete_connection"},
    {AF "/variables", &route_connections, "api.post_variables", NULL, NULL, NULL},
    {AF "/variables/{variable_key}", &route_connections, NULL, "api.patch_variable", NULL,
     "api.delete_variable"},
    {AF "/pools", &route_airflow_misc, "api.post_pool", NULL, NULL, NULL},
    {AF "/pools/{pool_name}", &route_airflow_misc, NULL, "api.patch_pool", NULL, "api.delete_pool"},
    {AF "/dags", &route_airflow, NULL, "api.patch_dags", NULL, NULL},
    {AF "/dags/{dag_id}", &route_airflow, NULL, "api.patch_dag", NULL, "api.delete_dag"},
    {AF "/dags/{dag_id}/details", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/tasks", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/tasks/{task_id}", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/clearTaskInstances", &route_airflow, "api.post_clear_task_instances", NULL,
     NULL, NULL},
    {AF "/dags/{dag_id}/updateTaskInstancesState", &route_airflow,
     "api.post_set_task_instances_state", NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns", &route_airflow, "api.post_dag_run", NULL, NULL, NULL},
    {AF "/dags/~/dagRuns/list", &route_airflow, "", NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", &route_airflow, NULL, "api.update_dag_run_state",
     NULL, "api.delete_dag_run"},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/clear", &route_airflow, "api.clear_dag_run", NULL,
     NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", &route_airflow, NULL, "api.set_dag_run_note",
     NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamDatasetEvents", &route_datasets, NULL, NULL,
     NULL, NULL},
    {AF "/dags/{dag_id}/datasets/queuedEvent", &route_datasets, NULL, NULL, NULL,
     "api.delete_dag_dataset_queued_events"},
    {AF "/dags/{dag_id}/datasets/queuedEvent/{uri*}", &route_datasets, NULL, NULL, NULL,
     "api.delete_dag_dataset_queued_event"},
    {TI, &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/dags/~/dagRuns/~/taskInstances/list", &route_airflow, "", NULL, NULL, NULL},
    {TI "/{task_id}", &route_airflow, NULL, "api.patch_task_instance", NULL, NULL},
    {TI "/{task_id}/{map_index}", &route_airflow, NULL, "api.patch_mapped_task_instance", NULL,
     NULL},
    {TI "/{task_id}/listMapped", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/setNote", &route_airflow, NULL, "api.set_task_instance_note", NULL, NULL},
    {TI "/{task_id}/{map_index}/setNote", &route_airflow, NULL, "api.set_mapped_task_instance_note",
     NULL, NULL},
    {TI "/{task_id}/dependencies", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/dependencies", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/tries", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/tries/{task_try_number}", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/tries", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/tries/{task_try_number}", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/links", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/logs/{task_try_number}", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/xcomEntries", &route_airflow, NULL, NULL, NULL, NULL},
    {TI "/{task_id}/xcomEntries/{xcom_key}", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/dagStats", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/dagWarnings", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/dagSources/{file_token}", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/parseDagFile/{file_token}", &route_airflow_misc, NULL, NULL, "api.reparse_dag_file",
     NULL},
    {AF "/datasets", &route_datasets, NULL, NULL, NULL, NULL},
    {AF "/datasets/{uri*}", &route_datasets, NULL, NULL, NULL, NULL}, /* a URI holds slashes */
    {AF "/datasets/events", &route_datasets, "api.create_dataset_event", NULL, NULL, NULL},
    {AF "/datasets/queuedEvent/{uri*}", &route_datasets, NULL, NULL, NULL,
     "api.delete_dataset_queued_events"},
    {AF "/eventLogs", &route_event_log, NULL, NULL, NULL, NULL},
    {AF "/eventLogs/{event_log_id}", &route_event_log, NULL, NULL, NULL, NULL},
    {AF "/importErrors", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/importErrors/{import_error_id}", &route_airflow, NULL, NULL, NULL, NULL},
    {AF "/providers", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/plugins", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/config", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/config/section/{section}/option/{option}", &route_airflow_misc, NULL, NULL, NULL, NULL},
    {AF "/version", &route_airflow_misc, NULL, NULL, NULL, NULL},
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

const char *route_match_param(const struct route_match *m, const char *name)
{
	size_t len = strlen(name);

	for (int i = 0; i < m->n; i++) {
		const char *t = m->name[i];
		if (!strncmp(t + 1, name, len) && t[len + 1] == '}' && !t[len + 2])
			return m->value[i];
	}
	return NULL;
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
