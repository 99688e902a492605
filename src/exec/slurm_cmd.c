/* slurm_cmd.c: running sbatch, squeue and scancel: one `cmd` per command
 * in flight (a process and its two output pipes), its output gathered (up to
 * CMD_OUT_MAX) for its `done` callback. */
#include "exec/slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/log.h"
#include "lib/strbuf.h"

/* what a command may print: squeue -t all lists every job of ours Slurm still keeps
 * (MinJobAge), one line per array element, ~40 bytes each */
#define CMD_OUT_MAX (64 * 1024 * 1024)

static void cmd_closed(uv_handle_t *h)
{
	struct cmd *c = h->data;

	if (--c->open > 0)
		return;
	slurm_batch_free(c->batch);
	strbuf_release(&c->out_text);
	strbuf_release(&c->err_text);
	free(c);
}

static void cmd_finish(struct cmd *c)
{
	struct slurm_executor *sx = c->sx;

	if (--c->pending > 0)
		return;
	if (sx) {
		for (struct cmd **p = &sx->cmds; *p; p = &(*p)->next)
			if (*p == c) {
				*p = c->next;
				break;
			}
		if (c->done)
			c->done(sx, c);
	}
	uv_close((uv_handle_t *)&c->proc, cmd_closed);
	uv_close((uv_handle_t *)&c->out, cmd_closed);
	uv_close((uv_handle_t *)&c->err, cmd_closed);
}

static void cmd_alloc(uv_handle_t *h, size_t want, uv_buf_t *buf)
{
	static char scratch[65536];
	(void)h;
	(void)want;
	buf->base = scratch;
	buf->len = sizeof scratch;
}

static void cmd_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	struct cmd *c = s->data;
	bool is_out = s == (uv_stream_t *)&c->out;
	struct strbuf *dst = is_out ? &c->out_text : &c->err_text;

	if (n < 0) {
		uv_read_stop(s);
		cmd_finish(c);
		return;
	}
	if (n == 0)
		return;
	if (dst->len + (size_t)n > CMD_OUT_MAX || strbuf_add(dst, buf->base, (size_t)n) < 0)
		c->truncated = true;
}

static void cmd_exit(uv_process_t *p, int64_t exit_status, int term_signal)
{
	struct cmd *c = p->data;
	c->exit_status = exit_status;
	c->term_signal = term_signal;
	cmd_finish(c);
}

int slurm_cmd_spawn(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                    int attempt, struct batch *batch, struct weir_error *err)
{
	struct cmd *c = calloc(1, sizeof *c);
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];
	char **env = executor_launcher_env(sx->env_server, NULL, NULL, NULL);
	int r;

	if (!c || !env) {
		free(c);
		free(env);
		return weir_error_set(err, WEIR_E_INTERNAL, "out of memory");
	}
	c->sx = sx;
	strbuf_init(&c->out_text);
	strbuf_init(&c->err_text);
	c->done = done;
	c->job_id = job_id;
	c->attempt = attempt;
	c->batch = batch;
	uv_pipe_init(sx->loop, &c->out, 0);
	uv_pipe_init(sx->loop, &c->err, 0);
	c->out.data = c->err.data = c->proc.data = c;
	memset(&opt, 0, sizeof opt);
	stdio[0].flags = UV_IGNORE;
	stdio[1].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[1].data.stream = (uv_stream_t *)&c->out;
	stdio[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	stdio[2].data.stream = (uv_stream_t *)&c->err;
	opt.file = argv[0];
	opt.args = argv;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.exit_cb = cmd_exit;
	r = uv_spawn(sx->loop, &c->proc, &opt);
	free(env);
	c->open = 3;
	if (r != 0) {
		c->sx = NULL;
		c->batch = NULL; /* still the caller's */
		uv_close((uv_handle_t *)&c->proc, cmd_closed);
		uv_close((uv_handle_t *)&c->out, cmd_closed);
		uv_close((uv_handle_t *)&c->err, cmd_closed);
		return weir_error_set(err, WEIR_E_INTERNAL, "cannot run %s: %s", argv[0],
		                      uv_strerror(r));
	}
	c->pending = 3;
	uv_read_start((uv_stream_t *)&c->out, cmd_alloc, cmd_read);
	uv_read_start((uv_stream_t *)&c->err, cmd_alloc, cmd_read);
	c->next = sx->cmds;
	sx->cmds = c;
	return 0;
}

int slurm_cmd_run(struct slurm_executor *sx, char **argv, cmd_done_fn done, int64_t job_id,
                  int attempt, struct weir_error *err)
{
	return slurm_cmd_spawn(sx, argv, done, job_id, attempt, NULL, err);
}

void slurm_cmd_complaint(const struct cmd *c, char *out, size_t size)
{
	const char *t = c->err_text.len ? c->err_text.buf : c->out_text.buf;
	size_t k = 0;

	for (; *t && k + 1 < size; t++)
		out[k++] = (*t == '\n' || *t == '\r') ? ' ' : *t;
	while (k > 0 && out[k - 1] == ' ')
		k--;
	out[k] = '\0';
	if (k == 0)
		snprintf(out, size, "exited %lld (signal %d)", (long long)c->exit_status,
		         c->term_signal);
}
