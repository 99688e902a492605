/* route_table.c: the rows of every route (route_table.h) and the match.
 *
 * The rows are split into segments once, at the first match (the server's
 * loop thread); a match then compares segments without allocating.
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
	const char *post, *patch, *put, *del;
};

static const struct route_row rows[] = {
    [ROUTE_TABLE_OTHER] = {"other", NULL, NULL, NULL, NULL},
    /* the UI's files and its login */
    {"/", NULL, NULL, NULL, NULL},
    {"/ui/{path*}", NULL, NULL, NULL, NULL},
    {"/ui/login", "ui.login", NULL, NULL, NULL},
    {"/ui/session", NULL, NULL, NULL, NULL},
    {"/ui/logout", "ui.logout", NULL, NULL, NULL},
    {"/metrics", NULL, NULL, NULL, NULL},
    /* weir's own */
    {AF "/health", NULL, NULL, NULL, NULL},
    {AF "/jobs", "api.post_job", NULL, NULL, NULL},
    {AF "/jobs/{job_id}", NULL, NULL, NULL, "api.delete_job"},
    {AF "/jobs/{job_id}/tasks", NULL, NULL, NULL, NULL},
    {AF "/jobs/{job_id}/events", NULL, NULL, NULL, NULL},
    {AF "/jobs/{job_id}/tasks/{role}/{index}/logs", NULL, NULL, NULL, NULL},
    /* the launchers' protocol: machines reporting, not people acting */
    {AF "/launch/register", "", NULL, NULL, NULL},
    {AF "/launch/cluster", "", NULL, NULL, NULL},
    {AF "/launch/started", "", NULL, NULL, NULL},
    {AF "/launch/exited", "", NULL, NULL, NULL},
    {AF "/launch/log", "", NULL, NULL, NULL},
    {AF "/ui/dags", NULL, NULL, NULL, NULL},
    {AF "/ui/dags/{dag_id}/grid", NULL, NULL, NULL, NULL},
    {AF "/ui/dags/{dag_id}/stats", NULL, NULL, NULL, NULL},
    {AF "/notifications", NULL, NULL, NULL, NULL},
    {AF "/slaMisses", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/notifications", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/slaMisses", NULL, NULL, NULL, NULL},
    /* Airflow's stable REST API v1 */
    {AF "/connections", "api.post_connection", NULL, NULL, NULL},
    {AF "/connections/test", "api.test_connection", NULL, NULL, NULL},
    {AF "/connections/{connection_id}", NULL, "api.patch_connection", NULL,
     "api.delete_connection"},
    {AF "/variables", "api.post_variables", NULL, NULL, NULL},
    {AF "/variables/{variable_key}", NULL, "api.patch_variable", NULL, "api.delete_variable"},
    {AF "/pools", "api.post_pool", NULL, NULL, NULL},
    {AF "/pools/{pool_name}", NULL, "api.patch_pool", NULL, "api.delete_pool"},
    {AF "/dags", NULL, "api.patch_dags", NULL, NULL},
    {AF "/dags/{dag_id}", NULL, "api.patch_dag", NULL, "api.delete_dag"},
    {AF "/dags/{dag_id}/details", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/tasks", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/tasks/{task_id}", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/clearTaskInstances", "api.post_clear_task_instances", NULL, NULL, NULL},
    {AF "/dags/{dag_id}/updateTaskInstancesState", "api.post_set_task_instances_state", NULL, NULL,
     NULL},
    {AF "/dags/{dag_id}/dagRuns", "api.post_dag_run", NULL, NULL, NULL},
    {AF "/dags/~/dagRuns/list", "", NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}", NULL, "api.update_dag_run_state", NULL,
     "api.delete_dag_run"},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/clear", "api.clear_dag_run", NULL, NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/setNote", NULL, "api.set_dag_run_note", NULL, NULL},
    {AF "/dags/{dag_id}/dagRuns/{dag_run_id}/upstreamDatasetEvents", NULL, NULL, NULL, NULL},
    {AF "/dags/{dag_id}/datasets/queuedEvent", NULL, NULL, NULL,
     "api.delete_dag_dataset_queued_events"},
    {AF "/dags/{dag_id}/datasets/queuedEvent/{uri*}", NULL, NULL, NULL,
     "api.delete_dag_dataset_queued_event"},
    {TI, NULL, NULL, NULL, NULL},
    {AF "/dags/~/dagRuns/~/taskInstances/list", "", NULL, NULL, NULL},
    {TI "/{task_id}", NULL, "api.patch_task_instance", NULL, NULL},
    {TI "/{task_id}/{map_index}", NULL, "api.patch_mapped_task_instance", NULL, NULL},
    {TI "/{task_id}/listMapped", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/setNote", NULL, "api.set_task_instance_note", NULL, NULL},
    {TI "/{task_id}/{map_index}/setNote", NULL, "api.set_mapped_task_instance_note", NULL, NULL},
    {TI "/{task_id}/dependencies", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/dependencies", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/tries", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/tries/{task_try_number}", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/tries", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/{map_index}/tries/{task_try_number}", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/links", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/logs/{task_try_number}", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/xcomEntries", NULL, NULL, NULL, NULL},
    {TI "/{task_id}/xcomEntries/{xcom_key}", NULL, NULL, NULL, NULL},
    {AF "/dagStats", NULL, NULL, NULL, NULL},
    {AF "/dagWarnings", NULL, NULL, NULL, NULL},
    {AF "/dagSources/{file_token}", NULL, NULL, NULL, NULL},
    {AF "/parseDagFile/{file_token}", NULL, NULL, "api.reparse_dag_file", NULL},
    {AF "/datasets", NULL, NULL, NULL, NULL},
    {AF "/datasets/{uri*}", NULL, NULL, NULL, NULL}, /* a URI holds slashes */
    {AF "/datasets/events", "api.create_dataset_event", NULL, NULL, NULL},
    {AF "/datasets/queuedEvent/{uri*}", NULL, NULL, NULL, "api.delete_dataset_queued_events"},
    {AF "/eventLogs", NULL, NULL, NULL, NULL},
    {AF "/eventLogs/{event_log_id}", NULL, NULL, NULL, NULL},
    {AF "/importErrors", NULL, NULL, NULL, NULL},
    {AF "/importErrors/{import_error_id}", NULL, NULL, NULL, NULL},
    {AF "/providers", NULL, NULL, NULL, NULL},
    {AF "/plugins", NULL, NULL, NULL, NULL},
    {AF "/config", NULL, NULL, NULL, NULL},
    {AF "/config/section/{section}/option/{option}", NULL, NULL, NULL, NULL},
    {AF "/version", NULL, NULL, NULL, NULL},
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
