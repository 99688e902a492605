/* cli_common.c: the client commands' connection to the server, flag
 * splitting, and formatting for people (see cli_common.h). */
#include "cli/cli_common.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/clock.h"
#include "lib/fs.h"
#include "lib/str.h"
#include "lib/tls.h"
#include "model/states.h"

static char *home_default(void)
{
	const char *h = getenv("HOME");
	if (!h || !*h)
		h = ".";
	return fs_join(h, ".weir");
}

/* The token file holds one line; editors and `echo` add a newline. */
static char *read_token(const char *home)
{
	char *path = fs_join(home, "token");
	char *text = NULL;
	size_t len = 0;

	if (!path)
		return NULL;
	text = fs_read_file(path, &len, NULL);
	free(path);
	if (!text)
		return NULL;
	while (len > 0 && isspace((unsigned char)text[len - 1]))
		text[--len] = '\0';
	if (len == 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* $WEIR_CA_FILE, absolute (a relative one against the current folder);
 * NULL when unset. */
static char *ca_file_from_env(void)
{
	const char *f = getenv("WEIR_CA_FILE");
	char cwd[4096];

	if (!f || !*f)
		return NULL;
	if (f[0] == '/' || !getcwd(cwd, sizeof cwd))
		return strdup(f);
	return fs_join(cwd, f);
}

struct http_client *cli_ctx_http(const struct cli_ctx *ctx)
{
	struct http_client *c = http_client_create(ctx->server_url, ctx->token);

	if (c && http_client_set_tls(c, &tls_http_ops, ctx->ca_file) < 0) {
		http_client_destroy(c);
		return NULL;
	}
	return c;
}

int cli_ctx_init(struct cli_ctx *ctx, const struct cli_globals *g, struct weir_error *err)
{
	const char *server = g->server;
	const char *home = g->home;
	const char *token = getenv("WEIR_TOKEN");

	memset(ctx, 0, sizeof *ctx);
	if (!server || !*server)
		server = getenv("WEIR_SERVER");
	if (!server || !*server)
		server = CLI_DEFAULT_SERVER;
	if (!home || !*home)
		home = getenv("WEIR_HOME");
	/* A bare host:port is what people type after seeing the listen address. */
	if (!strstr(server, "://")) {
		size_t n = strlen(server) + 8;
		ctx->server_url = malloc(n);
		if (ctx->server_url)
			snprintf(ctx->server_url, n, "http://%s", server);
	} else {
		ctx->server_url = strdup(server);
	}
	ctx->home = home && *home ? strdup(home) : home_default();
	if (!ctx->server_url || !ctx->home)
		goto oom;
	if (token && *token)
		ctx->token = strdup(token);
	else
		ctx->token = read_token(ctx->home);
	if (getenv("WEIR_CA_FILE") && *getenv("WEIR_CA_FILE") &&
	    !(ctx->ca_file = ca_file_from_env()))
		goto oom;
	ctx->http = cli_ctx_http(ctx);
	if (!ctx->http)
		goto oom;
	return 0;
oom:
	cli_ctx_release(ctx);
	return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
}

void cli_ctx_release(struct cli_ctx *ctx)
{
	if (!ctx)
		return;
	http_client_destroy(ctx->http);
	free(ctx->server_url);
	free(ctx->home);
	free(ctx->token);
	free(ctx->ca_file);
	memset(ctx, 0, sizeof *ctx);
}

int cli_flag_value(int argc, char **argv, int *i, const char *name, const char **value,
                   struct weir_error *err)
{
	const char *arg = argv[*i];
	size_t n = strlen(name);

	if (strncmp(arg, name, n) != 0)
		return 0;
	if (arg[n] == '=') {
		*value = arg + n + 1;
		return 1;
	}
	if (arg[n] != '\0')
		return 0;
	if (*i + 1 >= argc)
		return weir_error_set(err, WEIR_E_INVALID, "%s needs a value", name);
	*value = argv[++*i];
	return 1;
}

int cli_flag_global(int argc, char **argv, int *i, struct cli_globals *g, struct weir_error *err)
{
	int r = cli_flag_value(argc, argv, i, "--server", &g->server, err);
	if (r != 0)
		return r;
	return cli_flag_value(argc, argv, i, "--home", &g->home, err);
}

bool cli_flag_is(const char *arg, const char *name, const char *alias)
{
	return !strcmp(arg, name) || (alias && !strcmp(arg, alias));
}

bool cli_flag_is_help(const char *arg)
{
	return cli_flag_is(arg, "--help", "-h");
}

int cli_parse_args(int argc, char **argv, const struct cli_opt *opts, size_t n_opts,
                   const char **pos, size_t max_pos, size_t *n_pos, struct cli_globals *g,
                   void (*usage)(FILE *))
{
	struct weir_error err = {0};

	*n_pos = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		int rc;
		size_t k;

		if (cli_flag_is_help(a)) {
			usage(stdout);
			return 1;
		}
		if (a[0] != '-' || !a[1]) {
			if (*n_pos == max_pos) {
				cli_error("unexpected argument \"%s\"", a);
				goto bad;
			}
			pos[(*n_pos)++] = a;
			continue;
		}
		rc = cli_flag_global(argc, argv, &i, g, &err);
		if (rc < 0)
			goto bad_err;
		if (rc > 0)
			continue;
		for (k = 0; k < n_opts; k++) {
			if (opts[k].on) {
				if (!strcmp(a, opts[k].name)) {
					*opts[k].on = true;
					break;
				}
				continue;
			}
			rc = cli_flag_value(argc, argv, &i, opts[k].name, opts[k].value, &err);
			if (rc < 0)
				goto bad_err;
			if (rc > 0) {
				if (opts[k].list)
					json_array_append_new(opts[k].list,
					                      json_string(*opts[k].value));
				break;
			}
		}
		if (k == n_opts) {
			cli_error("unknown flag %s", a);
			goto bad;
		}
	}
	return 0;
bad_err:
	cli_error("%s", err.msg);
bad:
	usage(stderr);
	return -1;
}

int cli_parse_int(const char *text, const char *what, long long min, long long max, long long *out,
                  struct weir_error *err)
{
	int64_t v;

	if (str_to_int64(text, min, max, &v) < 0)
		return weir_error_set(err, WEIR_E_INVALID,
		                      "%s: expected a whole number from %lld to %lld, got \"%s\"",
		                      what, min, max, text);
	*out = v;
	return 0;
}

int cli_call(struct cli_ctx *ctx, const char *method, const char *path, const char *body,
             long timeout_ms, struct cli_reply *r)
{
	struct http_response resp;

	memset(r, 0, sizeof *r);
	if (http_client_request(ctx->http, method, path, body, timeout_ms, &resp, &r->err) < 0) {
		http_response_release(&resp);
		return -1;
	}
	r->status = resp.status;
	r->body = resp.body;
	r->len = resp.len;
	resp.body = NULL;
	if (r->len > 0)
		r->json = json_loadb(r->body, r->len, 0, NULL);
	return 0;
}

void cli_reply_release(struct cli_reply *r)
{
	if (!r)
		return;
	free(r->body);
	json_decref(r->json);
	r->body = NULL;
	r->json = NULL;
	r->len = 0;
}

bool cli_reply_ok(const struct cli_reply *r)
{
	return r->status >= 200 && r->status < 300;
}

void cli_error(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("weir: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The server's {"error": "..."} message, else its body, else the status. */
static const char *reply_message(const struct cli_reply *r)
{
	const char *e = r->json ? json_string_value(json_object_get(r->json, "error")) : NULL;
	if (e && *e)
		return e;
	if (r->body && *r->body)
		return r->body;
	return "(no message)";
}

const char *cli_reply_why(const struct cli_ctx *ctx, const struct cli_reply *r)
{
	/* The client's message starts with the URL, which callers say already. */
	const char *why = r->err.msg[0] ? r->err.msg : "no answer";
	const char *at = strstr(why, ctx->server_url);
	const char *colon = at ? strstr(at, ": ") : NULL;
	return colon && colon[2] ? colon + 2 : why;
}

int cli_report(const struct cli_ctx *ctx, const struct cli_reply *r)
{
	const char *m;
	size_t n;

	if (r->status == 0 && strstr(cli_reply_why(ctx, r), "certificate")) {
		/* GnuTLS's words for a name the certificate does not carry */
		bool name = strstr(cli_reply_why(ctx, r), "name in the certificate") != NULL;
		cli_error("the weir server at %s: %s; %s (docs/security.md, \"TLS\")",
		          ctx->server_url, cli_reply_why(ctx, r),
		          name ? "reach it by a name or address its certificate carries"
		               : "set WEIR_CA_FILE to the file of the CA that signed its "
		                 "certificate");
		return CLI_EXIT_UNREACHABLE;
	}
	if (r->status == 0) {
		cli_error("cannot reach the weir server at %s: %s; is `weir server` running%s?",
		          ctx->server_url, cli_reply_why(ctx, r),
		          strncmp(ctx->server_url, "http://", 7)
		              ? ""
		              : " (a server with tls: is reached at https://)");
		return CLI_EXIT_UNREACHABLE;
	}
	m = reply_message(r);
	n = strlen(m);
	while (n > 0 && (m[n - 1] == '\n' || m[n - 1] == '\r'))
		n--;
	if (r->status == 401) {
		cli_error("the server at %s refused the token (401): %.*s; set WEIR_TOKEN, or "
		          "--home/WEIR_HOME to the server's home (token file %s/token)",
		          ctx->server_url, (int)n, m, ctx->home);
		return CLI_EXIT_FAILED;
	}
	cli_error("%.*s", (int)n, m);
	if (r->status == 400 || r->status == 422)
		return CLI_EXIT_USAGE;
	return CLI_EXIT_FAILED;
}

int cli_get_json(struct cli_ctx *ctx, const char *path, json_t **out)
{
	struct cli_reply r;
	int rc = CLI_EXIT_OK;

	*out = NULL;
	cli_call(ctx, "GET", path, NULL, 30000, &r);
	if (!cli_reply_ok(&r)) {
		rc = cli_report(ctx, &r);
	} else if (!r.json) {
		cli_error("GET %s: the server's answer is not JSON", path);
		rc = CLI_EXIT_FAILED;
	} else {
		*out = json_incref(r.json);
	}
	cli_reply_release(&r);
	return rc;
}

const char *cli_json_str(json_t *obj, const char *key, const char *dflt)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : dflt;
}

long long cli_json_int(json_t *obj, const char *key, long long dflt)
{
	json_t *v = json_object_get(obj, key);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return dflt;
}

int64_t cli_json_time(json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	int64_t ms;

	if (!s || !*s || clock_parse_iso(s, &ms) < 0)
		return -1;
	return ms;
}

bool cli_job_state_is_final(const char *state)
{
	enum job_state s;
	return job_state_from_name(state, &s) == 0 && job_state_is_final(s);
}

bool cli_task_state_is_final(const char *state)
{
	enum task_state s;
	return task_state_from_name(state, &s) == 0 && task_state_is_final(s);
}

bool cli_job_tasks_final(json_t *job)
{
	json_t *task;
	size_t i;

	json_array_foreach(
	    json_object_get(job, "tasks"), i,
	    task) if (!cli_task_state_is_final(cli_json_str(task, "state", ""))) return false;
	return true;
}

char *cli_format_duration(int64_t ms, char *buf, size_t size)
{
	if (ms < 0)
		snprintf(buf, size, "-");
	else if (ms < 1000)
		snprintf(buf, size, "%dms", (int)ms);
	else if (ms < 60000)
		/* tenths, truncated: 59.99s must not print as "60.0s" */
		snprintf(buf, size, "%d.%ds", (int)(ms / 1000), (int)(ms % 1000 / 100));
	else if (ms < 3600000LL)
		snprintf(buf, size, "%dm%02ds", (int)(ms / 60000), (int)(ms % 60000 / 1000));
	else if (ms < 86400000LL)
		snprintf(buf, size, "%dh%02dm", (int)(ms / 3600000), (int)(ms % 3600000 / 60000));
	else
		snprintf(buf, size, "%lldd%02dh", (long long)(ms / 86400000LL),
		         (int)(ms % 86400000LL / 3600000));
	return buf;
}

char *cli_format_bytes(int64_t bytes, char *buf, size_t size)
{
	static const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	double v;
	int u = -1;

	if (bytes < 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	if (bytes < 1024) {
		snprintf(buf, size, "%d B", (int)bytes);
		return buf;
	}
	v = (double)bytes;
	/* 1023.95 KiB would print as "1024 KiB": move up a unit first. */
	while (u < 5 && v >= 1023.5) {
		v /= 1024.0;
		u++;
	}
	if (v < 9.95)
		snprintf(buf, size, "%.1f %s", v, units[u]);
	else
		snprintf(buf, size, "%.0f %s", v, units[u]);
	return buf;
}

static char *format_local(int64_t epoch_ms, const char *fmt, char *buf, size_t size)
{
	time_t secs;
	struct tm tm;

	if (epoch_ms < 0) {
		snprintf(buf, size, "-");
		return buf;
	}
	secs = (time_t)(epoch_ms / 1000);
	if (!localtime_r(&secs, &tm) || strftime(buf, size, fmt, &tm) == 0)
		snprintf(buf, size, "-");
	return buf;
}

char *cli_format_clock(int64_t epoch_ms, char *buf, size_t size)
{
	return format_local(epoch_ms, "%H:%M:%S", buf, size);
}

char *cli_format_datetime(int64_t epoch_ms, char *buf, size_t size)
{
	return format_local(epoch_ms, "%Y-%m-%d %H:%M:%S", buf, size);
}

int64_t cli_object_duration_ms(json_t *obj, int64_t now_ms)
{
	int64_t start = cli_json_time(obj, "started_at");
	int64_t end = cli_json_time(obj, "ended_at");

	if (start < 0)
		return -1;
	if (end < 0)
		end = now_ms;
	return end >= start ? end - start : 0;
}

char *cli_task_name(json_t *task, char *buf, size_t size)
{
	snprintf(buf, size, "%s:%lld", cli_json_str(task, "role", "?"),
	         cli_json_int(task, "index", -1));
	return buf;
}

char *cli_task_exit_text(json_t *task, char *buf, size_t size)
{
	long long ec = cli_json_int(task, "exit_code", -1);
	long long sig = cli_json_int(task, "signal", 0);

	if (ec >= 0)
		snprintf(buf, size, "%lld", ec);
	else if (sig > 0)
		snprintf(buf, size, "signal %lld", sig);
	else
		snprintf(buf, size, "-");
	return buf;
}

int cli_table_init(struct cli_table *t, size_t n_cols, const char *const *header)
{
	memset(t, 0, sizeof *t);
	t->n_cols = n_cols;
	return cli_table_add(t, header);
}

int cli_table_add(struct cli_table *t, const char *const *row)
{
	if (t->n_rows == t->cap_rows) {
		size_t cap = t->cap_rows ? t->cap_rows * 2 : 8;
		char **cells = realloc(t->cells, cap * t->n_cols * sizeof *cells);
		if (!cells)
			return -1;
		t->cells = cells;
		t->cap_rows = cap;
	}
	char **dst = t->cells + t->n_rows * t->n_cols;
	for (size_t c = 0; c < t->n_cols; c++) {
		dst[c] = strdup(row[c] ? row[c] : "-");
		if (!dst[c]) {
			while (c-- > 0)
				free(dst[c]);
			return -1;
		}
	}
	t->n_rows++;
	return 0;
}

void cli_table_print(const struct cli_table *t, FILE *out)
{
	size_t width[32] = {0};
	size_t cols = t->n_cols < 32 ? t->n_cols : 32;

	for (size_t r = 0; r < t->n_rows; r++)
		for (size_t c = 0; c < cols; c++) {
			size_t w = strlen(t->cells[r * t->n_cols + c]);
			if (w > width[c])
				width[c] = w;
		}
	for (size_t r = 0; r < t->n_rows; r++) {
		size_t pending = 0; /* blanks owed before the next non-empty cell */
		for (size_t c = 0; c < cols; c++) {
			const char *cell = t->cells[r * t->n_cols + c];
			size_t w = strlen(cell);
			if (w > 0) {
				fprintf(out, "%*s%s", (int)pending, "", cell);
				pending = 0;
			}
			pending += width[c] - w + 2;
		}
		fputc('\n', out);
	}
}

void cli_table_release(struct cli_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}
