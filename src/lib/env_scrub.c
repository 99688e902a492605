/* env_scrub.c: the environment a task's side must not inherit (env_scrub.h). */
#include "lib/env_scrub.h"

#include <string.h>
#include <strings.h>

static const char *const prefixes[] = {"WEIR_CONN_", "WEIR_VAR_", "AIRFLOW_CONN_", "AIRFLOW_VAR_"};
static const char *const words[] = {"PASSWORD",   "PASSWD",     "PASSPHRASE", "SECRET",
                                    "TOKEN",      "CREDENTIAL", "API_KEY",    "APIKEY",
                                    "ACCESS_KEY", "PRIVATE_KEY"};

/* Whether name[0..len) holds `word`, any case. */
static bool holds(const char *name, size_t len, const char *word)
{
	size_t wl = strlen(word);

	for (size_t i = 0; i + wl <= len; i++)
		if (!strncasecmp(name + i, word, wl))
			return true;
	return false;
}

bool env_scrub_drops(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq ? (size_t)(eq - entry) : strlen(entry);

	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
		size_t pl = strlen(prefixes[i]);
		if (len > pl && !strncmp(entry, prefixes[i], pl))
			return true;
	}
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (holds(entry, len, words[i]))
			return true;
	return false;
}

size_t env_scrub_count(char *const *env)
{
	size_t n = 0;

	for (size_t i = 0; env && env[i]; i++)
		n += env_scrub_drops(env[i]);
	return n;
}
