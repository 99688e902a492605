/* executor.c: what every backend shares. */
#include "exec/executor.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/env_scrub.h"
#include "lib/proc.h"
#include "lib/run_as.h"

extern char **environ;

char *executor_find_launcher(bool *lean)
{
	char path[4096];

	*lean = false;
	if (proc_self_sibling("weir-launch", path, sizeof path) == 0 && access(path, X_OK) == 0) {
		*lean = true;
		return strdup(path);
	}
	return proc_self_path(path, sizeof path) == 0 ? strdup(path) : NULL;
}

char **executor_launcher_env(const char *env_server, const char *env_secret, const char *env_mask,
                             const char *env_task_user)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	/* ours, then at most: server, secret, mask, task user, WEIR_LOG and
	 * the NULL */
	env = calloc(n + 6, sizeof *env);
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		/* the server's token, connections and secrets stay here, and the
		 * user tasks run as is the server's to say */
		if (!strncmp(environ[i], "WEIR_SERVER=", 12) || env_scrub_drops(environ[i]) ||
		    !strncmp(environ[i], RUN_AS_ENV "=", sizeof RUN_AS_ENV))
			continue;
		env[k++] = environ[i];
	}
	env[k++] = (char *)env_server;
	if (env_secret)
		env[k++] = (char *)env_secret;
	if (env_mask)
		env[k++] = (char *)env_mask;
	if (env_task_user)
		env[k++] = (char *)env_task_user;
	/* the task's log is the user's output: the launcher's own info lines
	 * stay out of it unless the server was asked for them */
	if (!getenv("WEIR_LOG"))
		env[k++] = "WEIR_LOG=warn";
	env[k] = NULL;
	return env;
}

int executor_placement_merge(const struct executor_placement *base,
                             const struct executor_placement *over, struct executor_placement *out)
{
	static const struct executor_placement none = {0};
	const char **opts;
	size_t n = 0;

	if (!base)
		base = &none;
	if (!over)
		over = &none;
	opts = calloc(base->n_options + over->n_options + 1, sizeof *opts);
	if (!opts)
		return -1;
	for (size_t i = 0; i < base->n_options; i++)
		opts[n++] = base->options[i];
	for (size_t i = 0; i < over->n_options; i++)
		opts[n++] = over->options[i];
	out->partition = over->partition ? over->partition : base->partition;
	out->account = over->account ? over->account : base->account;
	out->qos = over->qos ? over->qos : base->qos;
	out->time = over->time ? over->time : base->time;
	out->options = opts;
	out->n_options = n;
	return 0;
}

int executor_spawn_detached(uv_loop_t *loop, uv_process_t *p, const char *file, char **args,
                            char **env, int in_fd, int out_fd, uv_exit_cb on_exit)
{
	uv_process_options_t opt;
	uv_stdio_container_t stdio[3];

	memset(&opt, 0, sizeof opt);
	stdio[0].flags = UV_INHERIT_FD;
	stdio[0].data.fd = in_fd;
	stdio[1].flags = UV_INHERIT_FD;
	stdio[1].data.fd = out_fd;
	stdio[2].flags = UV_INHERIT_FD;
	stdio[2].data.fd = out_fd;
	opt.file = file;
	opt.args = args;
	opt.env = env;
	opt.stdio = stdio;
	opt.stdio_count = 3;
	opt.flags = UV_PROCESS_DETACHED;
	opt.exit_cb = on_exit;
	return uv_spawn(loop, p, &opt);
}

int executor_pick_port(struct executor *ex, struct weir_error *err)
{
	if (!ex || !ex->ops->pick_port)
		return weir_error_set(err, WEIR_E_UNAVAILABLE, "the %s backend picks no ports",
		                      ex ? ex->ops->name : "(no)");
	return ex->ops->pick_port(ex, err);
}
