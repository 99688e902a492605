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
