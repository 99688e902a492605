/* notifier_send.c: one attempt of a delivery (notifier_internal.h).
 *
 * On the loop: the connection is resolved and what the worker needs is
 * copied into an attempt_io (the worker touches nothing else).  On the
 * thread pool: a webhook's POST (lib/http_client.h) or a mail
 * (lib/smtp_client.h).  A command is a child process, spawned without a
 * shell when it needs none (lib/shell.h), the event in its
 * environment only: no value of the event is ever put into its text.
 */
#include "server/notifier.h"
#include "server/notifier_internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/http_client.h"
#include "lib/shell.h"
#include "lib/smtp_client.h"
#include "lib/strbuf.h"
#include "lib/tls.h"
#include "model/connection.h"
#include "server/secrets.h"
#include "server/task_user.h"

struct attempt_io {
	struct delivery *d;
	uv_work_t work;
	/* webhook */
	char *base, *path, *header_lines;
	char *ca_file; /* the connection's, webhook or email; NULL: none */
	/* email */
	struct connection c;
	char *from;
	bool starttls, ssl;
	/* command */
	uv_process_t proc;
	bool proc_open;
	bool timed_out;
	int64_t exit_status;
	int term_signal;
	/* the outcome */
	bool ok;
	char error[512];
};

static void io_free(struct attempt_io *io)
{
	if (!io)
		return;
	free(io->base);
	free(io->path);
	if (io->header_lines)
		memset(io->header_lines, 0, strlen(io->header_lines));
	free(io->header_lines);
	free(io->ca_file);
	if (io->c.password)
		memset(io->c.password, 0, strlen(io->c.password));
	connection_release(&io->c);
	free(io->from);
	free(io);
}

void delivery_attempt_release(struct delivery *d)
{
	if (d->io && !d->io->proc_open) {
		io_free(d->io);
		d->io = NULL;
	}
}

static int fail(char *why, size_t size, const char *fmt, const char *arg)
{
	snprintf(why, size, fmt, arg);
	return -1;
}

static int resolve(struct delivery *d, struct connection *c, enum conn_kind want,
                   const char *want_name, char *why, size_t size)
{
	struct weir_error err = {0};

	if (!d->n->secrets)
		return fail(why, size, "connection %s: no connections are configured", d->conn);
	if (secrets_conn_resolve(d->n->secrets, d->conn, c, NULL, &err) < 0)
		return fail(why, size, "%s", err.msg);
	if (c->kind != want) {
		snprintf(why, size, "connection %s is of type %s, expected %s", d->conn,
		         c->type ? c->type : "?", want_name);
		return -1;
	}
	return 0;
}

/* ---- webhooks ---- */

/* Header lines from `obj` ({name: string}), CR and LF refused; the
 * extra's "ca_file" is weir's, not a header. */
static int add_headers(struct strbuf *b, json_t *obj, char *why, size_t size)
{
	const char *name;
	json_t *v;

	json_object_foreach(obj, name, v)
	{
		const char *s = json_string_value(v);
		if (!s || !strcmp(name, "ca_file"))
			continue;
		if (!*name || strpbrk(name, ":\r\n ") || strpbrk(s, "\r\n"))
			return fail(why, size, "header %s: expected a name and a value on one line",
			            name);
		strbuf_addf(b, "%s: %s\r\n", name, s);
	}
	return 0;
}

static int prepare_webhook(struct delivery *d, struct attempt_io *io, char *why, size_t size)
{
	struct strbuf url = STRBUF_INIT, hdr = STRBUF_INIT;
	struct connection c = {0};
	json_t *headers = json_object();
	int rc = -1;

	if (!headers)
		goto oom;
	if (d->conn) {
		if (resolve(d, &c, CONN_HTTP, "http", why, size) < 0)
			goto out;
		if (!d->url || d->url[0] == '/') {
			struct weir_error e = {0};
			if (connection_http_url(&c, &url, &e) < 0) {
				fail(why, size, "%s", e.msg);
				goto out;
			}
			while (url.len && url.buf[url.len - 1] == '/' && d->url)
				url.buf[--url.len] = '\0';
		}
		if (json_is_object(c.extra))
			json_object_update(headers, c.extra);
		if (connection_ca_file(&c) && !(io->ca_file = strdup(connection_ca_file(&c))))
			goto oom;
		if (c.login && *c.login) {
			char *raw = NULL, *b64;
			if (asprintf(&raw, "%s:%s", c.login, c.password ? c.password : "") < 0)
				goto oom;
			b64 = smtp_base64(raw, strlen(raw));
			memset(raw, 0, strlen(raw));
			free(raw);
			if (!b64)
				goto oom;
			strbuf_addf(&hdr, "Authorization: Basic %s\r\n", b64);
			memset(b64, 0, strlen(b64));
			free(b64);
		}
	}
	if (d->url)
		strbuf_add(&url, d->url, strlen(d->url));
	if (d->headers)
		json_object_update(headers, d->headers);
	if (json_object_get(headers, "Authorization"))
		strbuf_release(&hdr); /* the headers' own wins */
	if (add_headers(&hdr, headers, why, size) < 0)
		goto out;
	if (url.failed || hdr.failed)
		goto oom;
	size_t scheme = !strncmp(url.buf, "http://", 7)    ? 7
	                : !strncmp(url.buf, "https://", 8) ? 8
	                                                   : 0;
	if (!scheme)
		goto bad_url;
	for (const char *ch = url.buf; *ch; ch++)
		if ((unsigned char)*ch <= ' ' || *ch == 0x7f)
			goto bad_url; /* it goes into the request line and Host: */
	{
		const char *auth = url.buf + scheme;
		size_t al = strcspn(auth, "/?#");
		if (!al)
			goto bad_url;
		io->base = strndup(url.buf, (size_t)(auth + al - url.buf));
		io->path = strdup(auth[al] == '/' ? auth + al : auth[al] ? "/" : "/");
		if (auth[al] && auth[al] != '/') {
			free(io->path);
			if (asprintf(&io->path, "/%s", auth + al) < 0)
				io->path = NULL;
		}
		io->header_lines = strbuf_detach(&hdr, NULL);
		if (!io->base || !io->path || !io->header_lines)
			goto oom;
	}
	rc = 0;
	goto out;
bad_url:
	fail(why, size, "%s",
	     "expected an http:// or https:// URL without spaces or control characters");
	goto out;
oom:
	fail(why, size, "%s", "out of memory");
out:
	json_decref(headers);
	strbuf_release(&url);
	if (hdr.len)
		memset(hdr.buf, 0, hdr.len);
	strbuf_release(&hdr);
	if (c.password)
		memset(c.password, 0, strlen(c.password));
	connection_release(&c);
	return rc;
}

static void run_webhook(struct attempt_io *io)
{
	struct http_client *hc = http_client_create(io->base, NULL);
	struct http_response resp = {0};
	struct weir_error err = {0};

	if (!hc || http_client_set_headers(hc, io->header_lines) < 0 ||
	    http_client_set_tls(hc, &tls_http_ops, io->ca_file) < 0) {
		snprintf(io->error, sizeof io->error, "out of memory");
		http_client_destroy(hc);
		return;
	}
	if (http_client_request(hc, "POST", io->path, io->d->body, NOTIFY_IO_TIMEOUT_MS, &resp,
	                        &err) < 0) {
		/* the client's message names the URL (its path may be a secret):
		 * keep what follows it */
		char *named = NULL;
		const char *why = err.msg;
		size_t bl = strlen(io->base);
		if (asprintf(&named, "POST %s%s: ", io->base, io->path) > 0 &&
		    !strncmp(why, named, strlen(named)))
			why += strlen(named);
		else if (!strncmp(why, io->base, bl) && !strncmp(why + bl, ": ", 2))
			why += bl + 2;
		else if (strstr(why, io->path))
			why = "no answer";
		free(named);
		snprintf(io->error, sizeof io->error, "POST %s: %s", io->d->target, why);
	} else if (resp.status < 200 || resp.status > 299) {
		snprintf(io->error, sizeof io->error, "POST %s: HTTP %ld", io->d->target,
		         resp.status);
	} else {
		io->ok = true;
	}
	http_response_release(&resp);
	http_client_destroy(hc);
}

/* ---- email ---- */

/* true or "true" (URI extras are strings) */
static bool extra_true(json_t *extra, const char *key)
{
	json_t *v = json_object_get(extra, key);
	return json_is_true(v) || (json_is_string(v) && !strcmp(json_string_value(v), "true"));
}

static int prepare_email(struct delivery *d, struct attempt_io *io, char *why, size_t size)
{
	json_t *from;

	if (resolve(d, &io->c, CONN_SMTP, "smtp", why, size) < 0)
		return -1;
	from = json_object_get(io->c.extra, "from");
	io->starttls = extra_true(io->c.extra, "starttls");
	io->ssl = extra_true(io->c.extra, "ssl");
	if (connection_ca_file(&io->c) && !(io->ca_file = strdup(connection_ca_file(&io->c))))
		return fail(why, size, "%s", "out of memory");
	if (json_is_string(from))
		io->from = strdup(json_string_value(from));
	else if (io->c.login && strchr(io->c.login, '@'))
		io->from = strdup(io->c.login);
	else
		io->from = strdup("weir@localhost");
	return io->from ? 0 : fail(why, size, "%s", "out of memory");
}

static void run_email(struct attempt_io *io)
{
	struct delivery *d = io->d;
	struct strbuf body = STRBUF_INIT;
	struct weir_error err = {0};

	strbuf_addf(&body, "%s\n\n", d->text);
	json_t *o = json_loads(d->body, 0, NULL);
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		if (!strcmp(k, "text"))
			continue;
		if (json_is_string(v))
			strbuf_addf(&body, "%s: %s\n", k, json_string_value(v));
		else if (json_is_integer(v))
			strbuf_addf(&body, "%s: %lld\n", k, (long long)json_integer_value(v));
	}
	json_decref(o);
	struct smtp_mail m = {
	    .host = io->c.host,
	    .port = io->c.port,
	    .login = io->c.login,
	    .password = io->c.password,
	    .starttls = io->starttls,
	    .ssl = io->ssl,
	    .ca_file = io->ca_file,
	    .from = io->from,
	    .to = (const char *const *)d->to.v,
	    .n_to = d->to.n,
	    .subject = d->mail_subject,
	    .body = body.failed ? "" : body.buf,
	    .timeout_ms = NOTIFY_IO_TIMEOUT_MS,
	};
	if (smtp_send(&m, &err) == 0)
		io->ok = true;
	else
		snprintf(io->error, sizeof io->error, "%s", err.msg);
	strbuf_release(&body);
}

/* ---- the thread pool ---- */

static void work_run(uv_work_t *w)
{
	struct attempt_io *io = w->data;

	if (io->d->kind == NOTIFY_WEBHOOK)
		run_webhook(io);
	else
		run_email(io);
}

static void work_after(uv_work_t *w, int status)
{
	struct attempt_io *io = w->data;
	struct delivery *d = io->d;

	(void)status;
	d->running = false;
	d->n->in_pool--;
	delivery_attempt_done(d, io->ok, io->error[0] ? io->error : "failed");
}

/* ---- commands ---- */

static void on_proc_closed(uv_handle_t *h)
{
	struct attempt_io *io = h->data;
	struct delivery *d = io->d;
	char error[160];
	bool ok = !io->timed_out && io->exit_status == 0 && io->term_signal == 0;

	io->proc_open = false;
	d->running = false;
	if (io->timed_out)
		snprintf(error, sizeof error, "%s: killed after %d s", d->target,
		         NOTIFY_COMMAND_TIMEOUT_MS / 1000);
	else if (io->term_signal)
		snprintf(error, sizeof error, "%s: killed by signal %d", d->target,
		         io->term_signal);
	else
		snprintf(error, sizeof error, "%s: exited with status %lld", d->target,
		         (long long)io->exit_status);
	uv_timer_stop(&d->timer);
	delivery_attempt_done(d, ok, error);
}

static void on_proc_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct attempt_io *io = p->data;

	io->exit_status = exit_status;
	io->term_signal = term_signal;
	uv_close((uv_handle_t *)p, on_proc_closed);
}

void notifier_kill_command(struct delivery *d)
{
	if (d->io && d->io->proc_open)
		uv_process_kill(&d->io->proc, SIGKILL);
}

static void on_command_timeout(uv_timer_t *t)
{
	struct delivery *d = t->data;

	if (d->io && d->io->proc_open) {
		d->io->timed_out = true;
		notifier_kill_command(d);
	}
}

static void on_failed_spawn_closed(uv_handle_t *h)
{
	io_free(h->data);
}

static int start_command(struct delivery *d, struct attempt_io *io, char *why, size_t size)
{
	struct strvec argv = STRVEC_INIT;
	uv_process_options_t o = {0};
	uv_stdio_container_t stdio[3] = {
	    {.flags = UV_IGNORE}, {.flags = UV_IGNORE}, {.flags = UV_IGNORE}};
	int rc = shell_words(d->command, &argv);

	if (rc == 1 && (strvec_push(&argv, "/bin/sh") < 0 || strvec_push(&argv, "-c") < 0 ||
	                strvec_push(&argv, d->command) < 0))
		rc = -1;
	else if (rc == 1)
		rc = 0;
	if (rc < 0 || !argv.n) {
		strvec_release(&argv);
		return fail(why, size, "%s", "out of memory");
	}
	o.file = argv.v[0];
	o.args = argv.v;
	o.env = d->env.v;
	o.cwd = "/";
	o.stdio = stdio;
	o.stdio_count = 3;
	o.exit_cb = on_proc_exit;
	o.flags = UV_PROCESS_DETACHED; /* its own session: kill reaches it, not us */
	const struct run_as *ra = d->as_task_user ? task_user_current() : NULL;
	if (ra && ra->set) { /* a DAG file's code (an Airflow callback) runs as tasks do */
		o.uid = ra->uid;
		o.gid = ra->gid;
		o.flags |= UV_PROCESS_SETUID | UV_PROCESS_SETGID;
	}
	io->proc.data = io;
	rc = uv_spawn(d->n->loop, &io->proc, &o);
	strvec_release(&argv);
	if (rc < 0) {
		snprintf(why, size, "%s: cannot start: %s", d->target, uv_strerror(rc));
		/* a handle that failed to spawn is still closed; io goes with it */
		d->io = NULL;
		uv_close((uv_handle_t *)&io->proc, on_failed_spawn_closed);
		return -1;
	}
	io->proc_open = true;
	d->running = true;
	uv_timer_start(&d->timer, on_command_timeout, NOTIFY_COMMAND_TIMEOUT_MS, 0);
	return 0;
}

int delivery_attempt_start(struct delivery *d, char *why, size_t why_size)
{
	struct attempt_io *io = calloc(1, sizeof *io);
	int rc;

	if (!io)
		return fail(why, why_size, "%s", "out of memory");
	io->d = d;
	io->work.data = io;
	d->io = io;
	if (d->kind == NOTIFY_COMMAND)
		return start_command(d, io, why, why_size);
	rc = d->kind == NOTIFY_WEBHOOK ? prepare_webhook(d, io, why, why_size)
	                               : prepare_email(d, io, why, why_size);
	if (rc < 0 || uv_queue_work(d->n->loop, &io->work, work_run, work_after) < 0) {
		if (rc == 0)
			fail(why, why_size, "%s", "cannot queue the delivery");
		io_free(io);
		d->io = NULL;
		return -1;
	}
	d->running = true;
	d->n->in_pool++;
	return 0;
}
