/* executor.c: what every backend shares. */
#include "exec/executor.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

char **executor_launcher_env(const char *env_server, const char *env_token)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 4, sizeof *env);
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!strncmp(environ[i], "WEIR_SERVER=", 12) ||
		    !strncmp(environ[i], "WEIR_TOKEN=", 11))
			continue;
		env[k++] = environ[i];
	}
	env[k++] = (char *)env_server;
	env[k++] = (char *)env_token;
	/* the task's log is the user's output: the launcher's own info lines
	 * stay out of it unless the server was asked for them */
	if (!getenv("WEIR_LOG"))
		env[k++] = "WEIR_LOG=warn";
	env[k] = NULL;
	return env;
}

int executor_placement_merge(const struct executor_placement *base,
                             const struct executor_placement *over,
                             struct executor_placement *out)
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
