/* notifier.c: deliveries (notifier.h): a row per event and target, an
 * attempt on the thread pool or as a child process, its outcome recorded
 * on the loop, the next attempt's timer armed as sched/notify_due.h says.
 *
 * Owns: the deliveries in progress (a list; each with its timer, and its
 * process while a command runs).  A delivery keeps copies of what it sends
 * (the target's fields, the rendered body), so a DAG file changed
 * meanwhile does not move under it.  The worker side (the HTTP POST, the
 * SMTP exchange, the command's spawn) is notifier_send.c.
 */
#include "server/notifier.h"
#include "server/notifier_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/clock.h"
#include "lib/http_client.h"
#include "lib/log.h"
#include "lib/str.h"
#include "sched/notify_due.h"
#include "server/observe_series.h"

struct notifier *notifier_create(uv_loop_t *loop, struct store *store, struct secrets *secrets,
                                 struct weir_error *err)
{
	struct notifier *n = calloc(1, sizeof *n);

	if (!n) {
		weir_error_set(err, WEIR_E_INTERNAL, "%s", "out of memory");
		return NULL;
	}
	n->loop = loop;
	n->secrets = secrets;
	n->ns = notify_store_create(store, err);
	if (!n->ns) {
		free(n);
		return NULL;
	}
	return n;
}

int notifier_set_base_url(struct notifier *n, const char *url)
{
	char *copy = strdup(url ? url : "");

	if (!copy)
		return -1;
	free(n->base_url);
	n->base_url = copy;
	return 0;
}

struct notify_store *notifier_store(struct notifier *n)
{
	return n ? n->ns : NULL;
}

int notifier_recover(struct notifier *n, struct weir_error *err)
{
	return notify_store_fail_pending(n->ns, "the server stopped before delivering it",
	                                 clock_now_ms(), err);
}

static void notifier_free_if_done(struct notifier *n)
{
	if (!n->stopping || n->deliveries || n->in_pool || n->closing)
		return;
	free(n->base_url);
	free(n);
}

/* ---- a delivery's life ---- */

static void delivery_free(struct delivery *d)
{
	free(d->target);
	free(d->url);
	json_decref(d->headers);
	free(d->conn);
	strvec_release(&d->to);
	free(d->subject);
	free(d->mail_subject);
	free(d->command);
	free(d->body);
	free(d->text);
	strvec_release(&d->env);
	delivery_attempt_release(d);
	free(d);
}

static void on_timer_closed(uv_handle_t *h)
{
	struct delivery *d = h->data;
	struct notifier *n = d->n;

	n->closing--;
	delivery_free(d);
	notifier_free_if_done(n);
}

/* Off the list, its timer closed, then freed. */
static void delivery_end(struct delivery *d)
{
	struct notifier *n = d->n;

	*d->prev = d->next;
	if (d->next)
		d->next->prev = d->prev;
	d->next = NULL;
	d->prev = &d->next;
	n->closing++;
	uv_timer_stop(&d->timer);
	uv_close((uv_handle_t *)&d->timer, on_timer_closed);
}

static void record(struct delivery *d, enum notify_state state, const char *error, int64_t next)
{
	struct weir_error err = {0};

	if (notify_store_update(d->n->ns, d->row_id, state, d->attempt, error ? error : "", next,
	                        clock_now_ms(), &err) < 0)
		log_error("notification %lld: %s", (long long)d->row_id, err.msg);
}

static void on_retry_timer(uv_timer_t *t);

void delivery_attempt_done(struct delivery *d, bool ok, const char *why)
{
	struct notifier *n = d->n;
	char error[512];

	/* `why` may live in the attempt, released next */
	snprintf(error, sizeof error, "%s", why ? why : "failed");
	if (n->stopping) {
		delivery_end(d);
		return;
	}
	delivery_attempt_release(d);
	if (ok) {
		observe_series_notification(true);
		record(d, NOTIFY_SENT, "", 0);
		log_info("notification %lld (%s, %s): sent, attempt %d", (long long)d->row_id,
		         d->event, d->target, d->attempt);
		delivery_end(d);
		return;
	}
	int64_t now = clock_now_ms();
	struct notify_retry r = notify_retry_decide(d->attempt, d->retries, d->delay_ms, now);
	log_warn("notification %lld (%s, %s): attempt %d of %d failed: %s", (long long)d->row_id,
	         d->event, d->target, d->attempt, d->retries + 1, error);
	if (!r.again) {
		observe_series_notification(false);
		record(d, NOTIFY_FAILED, error, 0);
		delivery_end(d);
		return;
	}
	record(d, NOTIFY_PENDING, error, r.at_ms);
	uv_timer_start(&d->timer, on_retry_timer, (uint64_t)(r.at_ms > now ? r.at_ms - now : 0), 0);
}

static void attempt(struct delivery *d)
{
	char why[512] = "";

	d->attempt++;
	if (delivery_attempt_start(d, why, sizeof why) < 0)
		delivery_attempt_done(d, false, why);
}

static void on_retry_timer(uv_timer_t *t)
{
	attempt(t->data);
}

/* ---- an event ---- */

static int copy_target(struct delivery *d, const struct notify_target *t)
{
	d->kind = t->kind;
	d->as_task_user = t->as_task_user;
	d->retries = t->retries;
	d->delay_ms = t->retry_delay_s * 1000;
	if ((t->url && !(d->url = strdup(t->url))) || (t->conn && !(d->conn = strdup(t->conn))) ||
	    (t->subject && !(d->subject = strdup(t->subject))) ||
	    (t->command && !(d->command = strdup(t->command))))
		return -1;
	if (t->headers && !(d->headers = json_deep_copy(t->headers)))
		return -1;
	for (size_t i = 0; i < t->to.n; i++)
		if (strvec_push(&d->to, t->to.v[i]) < 0)
			return -1;
	return 0;
}

/* The command's environment: the event's fields, and the few variables a
 * program needs to start (never the server's own environment, which may
 * hold secrets). */
static int command_env(struct delivery *d, const struct notify_payload *p)
{
	const char *path = getenv("PATH");

	if (strvec_pushf(&d->env, "PATH=%s", path ? path : "/usr/bin:/bin") < 0 ||
	    strvec_pushf(&d->env, "WEIR_EVENT=%s", notify_event_name(p->event, p->run_level)) < 0 ||
	    strvec_pushf(&d->env, "WEIR_DAG_ID=%s", p->dag_id) < 0 ||
	    strvec_pushf(&d->env, "WEIR_RUN_ID=%s", p->run_id) < 0 ||
	    strvec_pushf(&d->env, "WEIR_TASK_ID=%s", p->task_id ? p->task_id : "") < 0 ||
	    strvec_pushf(&d->env, "WEIR_MAP_INDEX=%d", p->map_index) < 0 ||
	    strvec_pushf(&d->env, "WEIR_TRY_NUMBER=%d", p->try_number) < 0 ||
	    strvec_pushf(&d->env, "WEIR_STATE=%s", p->state ? p->state : "") < 0 ||
	    strvec_pushf(&d->env, "WEIR_REASON=%s", p->reason ? p->reason : "") < 0 ||
	    strvec_pushf(&d->env, "WEIR_LOG_URL=%s", p->log_url ? p->log_url : "") < 0 ||
	    strvec_pushf(&d->env, "WEIR_NOTIFICATION_TEXT=%s", d->text) < 0 ||
	    strvec_pushf(&d->env, "WEIR_NOTIFICATION=%s", d->body) < 0)
		return -1;
	if (p->logical_date_ms > 0) {
		char date[40];
		clock_format_airflow(p->logical_date_ms, date, sizeof date);
		if (strvec_pushf(&d->env, "WEIR_LOGICAL_DATE=%s", date) < 0)
			return -1;
	}
	return 0;
}

static struct delivery *delivery_new(struct notifier *n, const struct notify_target *t,
                                     const struct notify_payload *p)
{
	struct delivery *d = calloc(1, sizeof *d);
	json_t *body = NULL;

	if (!d)
		return NULL;
	d->n = n;
	d->event = notify_event_name(p->event, p->run_level);
	body = notify_payload_json(p);
	d->body = body ? json_dumps(body, JSON_COMPACT) : NULL;
	json_decref(body);
	d->text = notify_payload_text(p);
	d->target = notify_target_masked(t);
	if (!d->body || !d->text || !d->target || copy_target(d, t) < 0)
		goto fail;
	if (t->kind == NOTIFY_EMAIL) {
		d->mail_subject = notify_render(
		    t->subject ? t->subject : "[weir] {{ dag_id }} {{ task_id }} {{ event }}", p);
		if (!d->mail_subject)
			goto fail;
		/* a reason may span lines; a subject is one */
		for (char *c = d->mail_subject; *c; c++)
			if (*c == '\r' || *c == '\n' || *c == '\t')
				*c = ' ';
	}
	if (t->kind == NOTIFY_COMMAND && command_env(d, p) < 0)
		goto fail;
	return d;
fail:
	delivery_free(d);
	return NULL;
}

void notifier_emit(struct notifier *n, const struct notify_list *targets,
                   const struct notify_payload *p)
{
	if (!n || !targets || n->stopping)
		return;
	for (size_t i = 0; i < targets->n; i++) {
		const struct notify_target *t = &targets->v[i];
		struct delivery *d = delivery_new(n, t, p);
		struct weir_error err = {0};
		int64_t now = clock_now_ms();

		if (!d) {
			log_error("DAG %s run %s: a notification: out of memory", p->dag_id,
			          p->run_id);
			continue;
		}
		struct notify_row row = {
		    .dag_id = (char *)p->dag_id,
		    .run_id = (char *)p->run_id,
		    .task_id = (char *)(p->run_level ? "" : p->task_id),
		    .map_index = p->map_index,
		    .try_number = p->try_number,
		    .event = (char *)d->event,
		    .target_kind = (char *)notify_kind_name(t->kind),
		    .target = d->target,
		    .state = NOTIFY_PENDING,
		    .max_attempts = t->retries + 1,
		    .last_error = (char *)"",
		    .created_at = now,
		};
		if (notify_store_add(n->ns, &row, &d->row_id, &err) < 0) {
			log_error("DAG %s run %s: recording a notification: %s", p->dag_id,
			          p->run_id, err.msg);
			delivery_free(d);
			continue;
		}
		uv_timer_init(n->loop, &d->timer);
		d->timer.data = d;
		d->next = n->deliveries;
		if (d->next)
			d->next->prev = &d->next;
		d->prev = &n->deliveries;
		n->deliveries = d;
		attempt(d);
	}
}

void notifier_stop(struct notifier *n)
{
	if (!n)
		return;
	n->stopping = true;
	/* the store closes after this: nothing of it is used from now on */
	notify_store_destroy(n->ns);
	n->ns = NULL;
	for (struct delivery *d = n->deliveries, *next; d; d = next) {
		next = d->next;
		if (d->running) {
			/* its work or process ends it */
			notifier_kill_command(d);
			continue;
		}
		delivery_end(d);
	}
	notifier_free_if_done(n);
}

char *notifier_log_url(struct notifier *n, const char *dag_id, const char *run_id,
                       const char *task_id, int map_index, int try_number)
{
	char *dag = http_url_escape(dag_id), *run = http_url_escape(run_id);
	char *task = task_id && *task_id ? http_url_escape(task_id) : NULL;
	char *out = NULL;
	int rc;

	if (!n || !n->base_url || !*n->base_url || !dag || !run) {
		rc = -1;
	} else if (task) {
		char mi[32] = "";
		if (map_index >= 0)
			snprintf(mi, sizeof mi, "?map_index=%d", map_index);
		rc = asprintf(&out, "%s/api/v1/dags/%s/dagRuns/%s/taskInstances/%s/logs/%d%s",
		              n->base_url, dag, run, task, try_number > 0 ? try_number : 1, mi);
	} else {
		rc = asprintf(&out, "%s/ui/#/dags/%s?run=%s", n->base_url, dag, run);
	}
	free(dag);
	free(run);
	free(task);
	if (rc < 0)
		out = strdup("");
	return out;
}
